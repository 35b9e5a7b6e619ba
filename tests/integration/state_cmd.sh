#!/bin/sh
# dwload state --reset, --set and --clear-running: each changes the job's
# state row in one transaction, says before -> after (also as JSON), checks
# its value, and is refused (exit 3) while a run holds the job's lock.  A
# run is held mid-way through a FIFO, as in lock.sh.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# sjob JOB TABLE [LOAD-LINES]: an append job whose CSV is ${FEED}
sjob() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: \${FEED:-$WORK/feed.csv}
target:
  connection: "$WH_CONN"
  table: $2
load:
  mode: append
${3:-  lmd: lmd}
EOF
}

# cp_of JOB: the stored checkpoint, <null> when none, <none> without a row
cp_of() {
  _c=$(sqln "SELECT checkpoint FROM dwload_state WHERE job = '$1'")
  echo "${_c:-<none>}"
}

# jget KEY...: a member of the JSON line in OUT (null as null)
jget() {
  printf '%s' "$OUT" | python3 -c '
import json, sys
v = json.loads(sys.stdin.read())
for k in sys.argv[1:]:
    v = v[k] if v is not None else None
print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)' "$@"
}

{ echo "id,name,lmd"; gen_rows 1 3 "2024-01-01 00:00:00"; gen_rows 4 5 "2024-03-01 10:00:00"; } >"$WORK/feed.csv"
J=$(sjob st_main st_rows)
run_ok "$J" "first run"
is "$(cp_of st_main)" "2024-03-01 10:00:00" "the run stored its checkpoint"

# ---- --reset ----------------------------------------------------------------
dw state --reset "$J"
is "$RC" 0 "--reset: exit 0"
like "$OUT" "checkpoint:  2024-03-01 10:00:00 -> (none)" "--reset says before -> after"
is "$(cp_of st_main)" "<null>" "--reset: the checkpoint is gone"
dw run "$J"
is "$(field skipped) $(field inserted)" "0 5" "after --reset the next run reads every row"
is "$(cp_of st_main)" "2024-03-01 10:00:00" "... and stores the checkpoint from the data"

# ---- --set --------------------------------------------------------------------
dw state --set "2024-02-01T01:00:00+01:00" --json "$J"
is "$RC" 0 "--set: exit 0"
is "$(jget action) $(jget changed)" "set true" "--set --json: the action, changed"
is "$(jget before checkpoint)" "2024-03-01 10:00:00" "--set --json: before"
is "$(jget after checkpoint)" "2024-02-01 00:00:00" "--set --json: after, as UTC in the canonical form"
is "$(cp_of st_main)" "2024-02-01 00:00:00" "--set stored the canonical text"
dw run "$J"
is "$(field skipped) $(field inserted)" "3 2" "the next run reads the rows past the set checkpoint"
is "$(sql 'SELECT count(*) FROM st_rows')" 12 "table: 5 + 5 + 2 rows"

BEFORE=$(tdump dwload_state job)
for bad in "garbage" "2024-13-01" "2024-02-01 25:00:00" ""; do
  dw state --set "$bad" "$J"
  is "$RC" 2 "--set '$bad': exit 2"
  like "$ERR" "is not a timestamp" "--set '$bad': says why"
done
dw state --set "2999-01-01" "$J"
is "$RC" 2 "--set in the future: exit 2"
like "$ERR" "load.future_tolerance" "--set in the future: names load.future_tolerance"
is "$(tdump dwload_state job)" "$BEFORE" "refused --set values changed nothing"
N=$(sjob st_nolmd st_nolmd "  key: id")
dw state --set "2024-01-01" "$N"
is "$RC" 2 "--set for a job without load.lmd: exit 2"
like "$ERR" "has no load.lmd" "... says so"

F=$(job st_fmt <<EOF
version: 1
job: st_fmt
source:
  plugin: csv
  path: $WORK/feed.csv
target:
  connection: "$WH_CONN"
  table: st_fmt
load:
  mode: append
  lmd: lmd
  lmd_format: "%d/%m/%Y"
EOF
)
dw state --set "15/02/2024" "$F"
is "$RC" 0 "--set in load.lmd_format: exit 0"
is "$(cp_of st_fmt)" "2024-02-15" "--set of a job that never ran creates its row, canonical"

# ---- a job that never ran -------------------------------------------------------
U=$(sjob st_new st_new)
dw state --reset "$U"
is "$RC" 0 "--reset of a job that never ran: exit 0"
like "$OUT" "no run yet: nothing to change" "... says there is nothing to change"
is "$(cp_of st_new)" "<none>" "... and creates no row"
dw state --clear-running --json "$U"
is "$(jget changed) $(jget before) $(jget after)" "false null null" "--clear-running --json of a job that never ran"

# ---- --clear-running -----------------------------------------------------------
dw state --clear-running "$J"
like "$OUT" "running:     (none) -> (none) (unchanged)" "--clear-running without a mark: unchanged"
# What a run killed outright leaves: its committed mark, no lock.
sql "UPDATE dwload_state SET running_since = '2024-05-01 03:00:00', running_host = 'etl-9', running_pid = 4242
     WHERE job = 'st_main'" >/dev/null
dw state "$J"
like "$OUT" "pid 4242) is running or was killed" "state shows the stale mark"
dw state --reset "$J"
is "$RC" 0 "a stale mark (no lock) does not stop --reset"
dw state --set "2024-03-01 10:00:00" "$J"
is "$RC" 0 "... nor --set"
dw state --clear-running --json "$J"
is "$RC" 0 "--clear-running: exit 0"
is "$(jget before running_pid) $(jget before running_host) $(jget before running_since)" \
  "4242 etl-9 2024-05-01 03:00:00" "--clear-running --json: the mark before"
is "$(jget after running_since) $(jget after running_pid) $(jget changed)" "null null true" \
  "--clear-running --json: none after"
is "$(sqln "SELECT running_since, running_host, running_pid, checkpoint FROM dwload_state WHERE job = 'st_main'")" \
  "<null>|<null>|<null>|2024-03-01 10:00:00" "the mark is cleared, the checkpoint kept"

# ---- refused while a run holds the lock -------------------------------------------
FIFO="$WORK/feed.fifo"
mkfifo "$FIFO"
exec 3<>"$FIFO"
FEED="$FIFO" "$DWLOAD" run "$J" >"$WORK/run1.out" 2>"$WORK/run1.err" 3>&- &
PID1=$!
{ echo "id,name,lmd"; gen_rows 20 21 "2024-04-01 00:00:00"; } >&3
if wh_wait_held st_main; then
  pass "a run holds the lock while it reads its source"
else
  fail "a run holds the lock while it reads its source" "$(cat "$WORK/run1.err")"
fi
HELD=$(tdump dwload_state job)
for opt in --reset "--set=2024-01-01" --clear-running; do
  dw state $opt "$J"
  is "$RC" 3 "$opt while a run holds the lock: exit 3"
  like "$ERR" "job 'st_main' is locked" "$opt: says the job is locked"
  like "$ERR" "pid $PID1" "$opt: names the running run"
  is "$OUT" "" "$opt: prints no change"
done
is "$(tdump dwload_state job)" "$HELD" "the refused changes wrote nothing"
exec 3>&-
finish "$PID1"
is "$?" 0 "the held run finishes"
is "$(sqln "SELECT checkpoint, running_since FROM dwload_state WHERE job = 'st_main'")" \
  "2024-04-01 00:00:00|<null>" "its checkpoint stands, its lock is released"
is "$(sql "SELECT count(*) FROM st_rows WHERE id IN ('20', '21')")" 2 "its rows are there"

done_testing
