#!/bin/sh
# The job lock: a second run of a job that is running exits 3 at once, and
# a run killed outright leaves no lock behind.
#
# A run is held mid-way deterministically by feeding its CSV through a FIFO
# the test writes to: the run opens the source, takes the lock, and then
# blocks reading rows until the test writes the rest and closes the FIFO.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# lock_job JOB TABLE: an append job whose CSV is ${FEED}, by default small.csv
lock_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: \${FEED:-$WORK/small.csv}
target:
  connection: "$WH_CONN"
  table: $2
load:
  mode: append
  lmd: lmd
EOF
}

ROWS=20000
{ echo "id,name,lmd"; gen_rows 900001 900003 "2024-06-01 00:00:00"; } >"$WORK/small.csv"

# ---- two runs at once -------------------------------------------------------
FIFO="$WORK/feed.fifo"
mkfifo "$FIFO"
J=$(lock_job nightly_events events)
# Opened read-write, the FIFO never blocks the test; the run must not
# inherit this end, or it would never see the end of its input.
exec 3<>"$FIFO"
FEED="$FIFO" "$DWLOAD" run "$J" >"$WORK/run1.out" 2>"$WORK/run1.err" 3>&- &
PID1=$!
{ echo "id,name,lmd"; gen_rows 1 10 "2024-01-01 00:00:00"; } >&3

if wh_wait_held nightly_events; then
  pass "first run holds the lock while it reads its source"
else
  fail "first run holds the lock while it reads its source" "$(cat "$WORK/run1.err")"
fi
is "$(sql "SELECT running_pid FROM dwload_state WHERE job = 'nightly_events'")" "$PID1" \
  "the state row names the running run's pid"
dw state "$J"
like "$OUT" "pid $PID1" "state shows the run in progress"

T0=$(date +%s)
dw run "$J"
T1=$(date +%s)
is "$RC" 3 "second run of the same job exits 3"
like "$ERR" "nightly_events" "the lock message names the job"
like "$ERR" "since" "the lock message says since when it is held"
like "$ERR" "pid $PID1" "the lock message names the holder's pid"
is "$([ $((T1 - T0)) -le 5 ] && echo prompt || echo "took $((T1 - T0)) s")" prompt \
  "second run gives up promptly"
is "$(field status)" failed "second run's summary says failed"

# Now let the first run read a large rest of its file and finish.
# The writer is awk itself (not a subshell), so that it can be killed if the
# run is gone: it holds a read end too, and would block on a full FIFO.
awk -v a=11 -v b="$ROWS" 'BEGIN { for (i = a; i <= b; i++) printf "%d,row %d,2024-01-01 00:00:00\n", i, i }' >&3 &
WRITER=$!
exec 3>&-
finish "$PID1"
is "$?" 0 "first run exits 0 once its source ends"
kill "$WRITER" 2>/dev/null
wait "$WRITER" 2>/dev/null
is "$(tail -n 1 "$WORK/run1.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inserted"])')" \
  "$ROWS" "first run inserted every row of its source"
is "$(sql 'SELECT count(*) FROM events')" "$ROWS" "table has the first run's rows"
is "$(sql 'SELECT count(*) - count(DISTINCT id) FROM events')" 0 "table has no duplicates"
is "$(sql "SELECT count(*) FROM events WHERE id IN ('900001', '900002', '900003')")" 0 "the locked-out run wrote nothing"
is "$(sql "SELECT last_status, rows_read, CASE WHEN running_since IS NULL THEN 1 ELSE 0 END FROM dwload_state
           WHERE job = 'nightly_events'")" "ok|$ROWS|1" "state row: the first run's counts, lock released"

dw run "$J"
is "$RC" 0 "after the first run ends, the next run succeeds"
is "$(field inserted)" 3 "the next run loads its rows"

# ---- a run killed with SIGKILL leaves no lock -------------------------------
FIFO2="$WORK/kill.fifo"
mkfifo "$FIFO2"
K=$(lock_job nightly_kill kills)
exec 4<>"$FIFO2"
FEED="$FIFO2" "$DWLOAD" run "$K" >"$WORK/run2.out" 2>"$WORK/run2.err" 4>&- &
PID2=$!
{ echo "id,name,lmd"; gen_rows 1 10 "2024-02-01 00:00:00"; } >&4
if wh_wait_held nightly_kill; then
  pass "run to be killed holds the lock"
else
  fail "run to be killed holds the lock" "$(cat "$WORK/run2.err")"
fi
kill -9 "$PID2"
wait "$PID2"
is "$?" 137 "the run was killed by SIGKILL"
exec 4>&-

if wh_held nightly_kill; then
  fail "the killed run's lock died with it"
else
  pass "the killed run's lock died with it"
fi
{ echo "id,name,lmd"; gen_rows 1 50 "2024-02-01 00:00:00"; } >"$WORK/full.csv"
FEED="$WORK/full.csv" dw run "$K"
is "$RC" 0 "a run after the killed one succeeds"
is "$(field inserted)" 50 "it inserts every row"
is "$(sql 'SELECT count(*) FROM kills')" 50 "the data is loaded once (the killed run's rows are gone)"
is "$(sql 'SELECT count(*) - count(DISTINCT id) FROM kills')" 0 "no duplicates after the killed run"
is "$(sql "SELECT last_status, CASE WHEN running_since IS NULL THEN 1 ELSE 0 END FROM dwload_state WHERE job = 'nightly_kill'")" \
  "ok|1" "state row: ok, no run in progress"

# ---- a run that waits for the lock reads the checkpoint it leaves -------------
# The second run queues behind the first for the lock instead of giving up;
# it must read the checkpoint the first one commits, not the one stored
# before (append would duplicate).  On SQLite its driver is told to wait up
# to 30 s for the write lock; elsewhere dwload itself waits up to a second
# for the state row, and the first run has only to commit once its source
# ends.
FIFO3="$WORK/wait.fifo"
mkfifo "$FIFO3"
W1=$(lock_job nightly_wait waits)
if is_warehouse sqlite; then
  sed "s|$WH_CONN|$WH_CONN;Timeout=30000|" "$W1" >"$WORK/nightly_wait_patient.yaml"
  W2="$WORK/nightly_wait_patient.yaml"
else
  W2=$W1
fi
exec 5<>"$FIFO3"
FEED="$FIFO3" "$DWLOAD" run "$W1" >"$WORK/run3.out" 2>"$WORK/run3.err" 5>&- &
PID3=$!
{ echo "id,name,lmd"; gen_rows 1 100 "2024-03-01 00:00:00"; } >&5
if wh_wait_held nightly_wait; then
  pass "first run holds the lock"
else
  fail "first run holds the lock" "$(cat "$WORK/run3.err")"
fi
# The second feed repeats the first run's rows and adds newer ones.
{ echo "id,name,lmd"; gen_rows 1 100 "2024-03-01 00:00:00"; gen_rows 101 105 "2024-03-02 00:00:00"; } \
  >"$WORK/wait2.csv"
FEED="$WORK/wait2.csv" "$DWLOAD" run "$W2" >"$WORK/run4.out" 2>"$WORK/run4.err" 5>&- &
PID4=$!
# Once it says it connected, it is at the lock (it reads nothing before).
i=0
while [ $i -lt 100 ] && ! grep -q "connected to" "$WORK/run4.err" 2>/dev/null; do
  sleep 0.1
  i=$((i + 1))
done
like "$(cat "$WORK/run4.err")" "connected to" "second run reached the lock"
exec 5>&-
finish "$PID3"
is "$?" 0 "first run finishes"
finish "$PID4"
is "$?" 0 "second run, which waited for the lock, succeeds"
LAST=$(tail -n 1 "$WORK/run4.out")
is "$(field skipped)" 100 "it skips the rows the first run committed while it waited"
is "$(field inserted)" 5 "it inserts only the newer rows"
is "$(sql 'SELECT count(*), count(DISTINCT id) FROM waits')" "105|105" "no row loaded twice"


# ---- a run on another machine holds the lock --------------------------------
# The lock lives in the warehouse, so it holds across machines: a session
# that is no dwload process here (no pid of this host to look at) takes it
# as a run elsewhere does: it records itself in the job's state row
# (committed), then keeps the row locked in an open transaction (on SQLite:
# the database's write lock).  The session is the warehouse's own client,
# fed through a FIFO so that it stays open until the test ends it.
R=$(lock_job nightly_remote remotes)
{ echo "id,name,lmd"; gen_rows 1 20 "2024-04-01 00:00:00"; } >"$WORK/remote1.csv"
FEED="$WORK/remote1.csv" dw run "$R"
is "$RC" 0 "remote: a first run here"
BEFORE=$(tdump remotes)
FIFO4="$WORK/remote.fifo"
mkfifo "$FIFO4"
exec 6<>"$FIFO4"
BEGIN="BEGIN;"
case $WAREHOUSE in
  sqlite)
    # It waits out wh_wait_held's probes, which take the write lock briefly.
    sqlite3 -batch -cmd ".timeout 10000" "$WH" <"$FIFO4" >"$WORK/remote.out" 2>&1 6>&- &
    BEGIN="BEGIN IMMEDIATE;" ;;
  postgresql) _wh_psql "$WH" <"$FIFO4" >"$WORK/remote.out" 2>&1 6>&- & ;;
  mariadb) _wh_mariadb "$WH" <"$FIFO4" >"$WORK/remote.out" 2>&1 6>&- & ;;
esac
HOLDER=$!
printf '%s\n' \
  "UPDATE dwload_state SET running_since = '2024-05-01 03:00:00', running_host = 'etl-02.example',
     running_pid = 4242 WHERE job = 'nightly_remote';" \
  "$BEGIN" \
  "UPDATE dwload_state SET running_pid = running_pid WHERE job = 'nightly_remote';" >&6
if wh_wait_held nightly_remote; then
  pass "remote: the other machine's session holds the lock"
else
  fail "remote: the other machine's session holds the lock" "$(cat "$WORK/remote.out")"
fi
{ echo "id,name,lmd"; gen_rows 1 20 "2024-04-01 00:00:00"; gen_rows 21 30 "2024-04-02 00:00:00"; } \
  >"$WORK/remote2.csv"
T0=$(date +%s)
FEED="$WORK/remote2.csv" dw run "$R"
T1=$(date +%s)
is "$RC" 3 "remote: a run here exits 3"
like "$ERR" "job 'nightly_remote' is locked" "remote: the message names the job"
like "$ERR" "since 2024-05-01 03:00:00" "remote: the message says since when the other run holds it"
like "$ERR" "host etl-02.example, pid 4242" "remote: the message names the other machine and its pid"
is "$([ $((T1 - T0)) -le 5 ] && echo prompt || echo "took $((T1 - T0)) s")" prompt "remote: it gives up promptly"
is "$(tdump remotes)" "$BEFORE" "remote: the locked-out run wrote nothing"
# The other run ends as a killed one would: its transaction rolls back.
echo "ROLLBACK;" >&6
exec 6>&-
finish "$HOLDER"
FEED="$WORK/remote2.csv" dw run "$R"
is "$RC" 0 "remote: once the other run is gone, a run here succeeds"
is "$(field inserted)" 10 "remote: it loads the rows past the checkpoint"
is "$(sql 'SELECT count(*), count(DISTINCT id) FROM remotes')" "30|30" "remote: every row once"
is "$(sql "SELECT CASE WHEN running_since IS NULL THEN 'idle' ELSE running_host END FROM dwload_state
           WHERE job = 'nightly_remote'")" idle "remote: the state row no longer names the other machine"

done_testing
