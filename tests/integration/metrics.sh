#!/bin/sh
# run --metrics-file (dwload(1), METRICS): the Prometheus textfile of a run,
# parsed by tests/integration/prom_check.py (the text format as
# node_exporter's textfile collector reads it) and checked against the
# run's summary: the counts, success, exit status, duration, end time, last
# success (carried over from the old file by failed runs) and checkpoint
# lag.  Atomic by construction: the file is only ever renamed into place
# from a temporary file beside it (strace shows dwload never opens it for
# writing), a new inode each run, no temporary file left behind, also when
# the rename fails.  A file that cannot be written changes neither the
# run's outcome nor its exit status.
. "$TOP_SRCDIR/tests/integration/lib.sh"

PROMDIR="$WORK/textfile"
mkdir "$PROMDIR" || exit 1
PROM="$PROMDIR/met.prom"

# m SERIES: the value of SERIES ("name{job=met,...}", labels sorted) in
# $PROM as the checker reads it; "invalid: ..." when the file does not pass
m() {
  python3 "$TOP_SRCDIR/tests/integration/prom_check.py" "$PROM" >"$WORK/prom.json" ||
    { echo "invalid: $(cat "$WORK/prom.json")"; return; }
  python3 -c '
import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("absent" if v is None else repr(v))' "$WORK/prom.json" "$1"
}

# near A B: A and B (numbers) differ by at most 0.002 (the summary rounds
# its seconds to milliseconds)
near() {
  python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 0.002 else 1)' "$1" "$2"
}

# counts_match: every dwload_run_rows sample equals the summary's count
counts_match() {
  for k in read skipped inserted expired updated deleted unchanged rejected; do
    [ "$(m "dwload_run_rows{job=met,kind=$k}")" = "$(field "$k").0" ] || { echo "$k"; return; }
  done
  echo all
}

# utc TEXT: a timestamp of the summary, as Unix seconds (UTC)
utc() {
  python3 -c '
import datetime, sys
print(datetime.datetime.fromisoformat(sys.argv[1]).replace(tzinfo=datetime.timezone.utc).timestamp())' "$1"
}

printf 'id,name,lmd\n1,ann,2024-01-01\n2,bob,2024-01-02 10:30:00\n' >"$WORK/day1.csv"
J=$(mkjob met "\${FEED:-$WORK/day1.csv}" d_met <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)

# ---- a committed run ----------------------------------------------------------
t0=$(date +%s)
dw run --metrics-file "$PROM" "$J"
t1=$(date +%s)
is "$RC|$(field status)" "0|ok" "day 1: the run commits"
like "$(m 'dwload_run_success{job=met}')" "1.0" "day 1: the file is valid and dwload_run_success is 1"
is "$(counts_match)" all "day 1: dwload_run_rows are the summary's counts, kind by kind"
is "$(m 'dwload_run_exit_code{job=met}')" 0.0 "day 1: dwload_run_exit_code 0"
near "$(m 'dwload_run_duration_seconds{job=met}')" "$(field seconds)" &&
  pass "day 1: the duration is the summary's seconds" ||
  fail "day 1: the duration is the summary's seconds" "$(m 'dwload_run_duration_seconds{job=met}') vs $(field seconds)"
END1=$(m 'dwload_run_timestamp_seconds{job=met}')
python3 -c "import sys; sys.exit(0 if $t0 <= $END1 <= $t1 + 1 else 1)" &&
  pass "day 1: the end time lies within the run" || fail "day 1: the end time lies within the run" "$t0 $END1 $t1"
is "$(m 'dwload_last_success_timestamp_seconds{job=met}')" "$END1" "day 1: the last success is this run's end"
CP=$(utc "$(field checkpoint)")
is "$(field checkpoint)|$(m 'dwload_checkpoint_timestamp_seconds{job=met}')" "2024-01-02 10:30:00|$CP" \
  "day 1: dwload_checkpoint_timestamp_seconds is the summary's checkpoint"
near "$(m 'dwload_checkpoint_lag_seconds{job=met}')" "$(python3 -c "print($END1 - $CP)")" &&
  pass "day 1: the lag is the end time less the checkpoint" || fail "day 1: the lag is the end time less the checkpoint"
is "$(grep -c '^# HELP dwload_run_rows ' "$PROM")|$(grep -c '^# TYPE dwload_run_rows gauge$' "$PROM")" "1|1" \
  "day 1: one HELP and one TYPE line for dwload_run_rows"
is "$(stat -c %a "$PROM")" 644 "day 1: mode 0644, for a collector running as another user"
is "$(ls "$PROMDIR")" met.prom "day 1: no temporary file left behind"
INODE1=$(stat -c %i "$PROM")

# ---- the next run replaces the file -------------------------------------------
printf 'id,name,lmd\n1,ann,2024-01-01\n2,bobby,2024-01-03\n3,cy,2024-01-03\n' >"$WORK/day2.csv"
if strace -o /dev/null true 2>/dev/null; then
  # LeakSanitizer cannot run under ptrace and fails the run (scripts/sanitize).
  FEED="$WORK/day2.csv" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -o "$WORK/trace" -e trace=openat,open,creat,rename,renameat,renameat2 \
    "$DWLOAD" run --metrics-file "$PROM" "$J" >"$WORK/stdout" 2>"$WORK/stderr"
  RC=$?
  LAST=$(tail -n 1 "$WORK/stdout")
  is "$(grep -F "\"$PROM\"" "$WORK/trace" | grep -cE 'open(at)?\(.*O_(WRONLY|RDWR|CREAT|TRUNC)')" 0 \
    "day 2 (strace): the metrics file itself is never opened for writing"
  is "$(grep -E "rename(at2?)?\(" "$WORK/trace" | grep -F "\"$PROM\"" | grep -cE "\"$PROM\\.[A-Za-z0-9]{6}\"")" 1 \
    "day 2 (strace): it is renamed into place from a temporary file beside it"
  is "$(grep -E "open(at)?\(.*\"$PROM\\.[A-Za-z0-9]{6}\"" "$WORK/trace" | grep -c 'O_CREAT|O_EXCL')" 1 \
    "day 2 (strace): the temporary file is a new one (O_CREAT|O_EXCL)"
else
  FEED="$WORK/day2.csv" dw run --metrics-file "$PROM" "$J"
  skip_tests 3 "strace cannot trace here"
fi
is "$RC|$(field inserted)|$(field expired)" "0|2|1" "day 2: one new version, one new key"
is "$(counts_match)" all "day 2: the file holds day 2's counts"
unlike "$(stat -c %i "$PROM")" "$INODE1" "day 2: a new file (inode), renamed over the old one"
is "$(ls "$PROMDIR")" met.prom "day 2: no temporary file left behind"
END2=$(m 'dwload_run_timestamp_seconds{job=met}')
is "$(m 'dwload_last_success_timestamp_seconds{job=met}')" "$END2" "day 2: the last success is day 2's end"

# ---- failed runs keep the last success ------------------------------------------
printf 'id,name,lmd\n1,ann,2024-01-05\n4,"dee,2024-01-05\n' >"$WORK/bad.csv"
FEED="$WORK/bad.csv" dw run --metrics-file "$PROM" "$J"
is "$RC|$(field status)" "1|failed" "a bad feed: the run fails (exit 1)"
is "$(m 'dwload_run_success{job=met}')|$(m 'dwload_run_exit_code{job=met}')" "0.0|1.0" \
  "a bad feed: dwload_run_success 0, dwload_run_exit_code 1"
is "$(m 'dwload_last_success_timestamp_seconds{job=met}')" "$END2" "a bad feed: the last success is still day 2's"
END3=$(m 'dwload_run_timestamp_seconds{job=met}')
python3 -c "import sys; sys.exit(0 if $END3 > $END2 else 1)" && pass "a bad feed: its own end time, later" ||
  fail "a bad feed: its own end time, later" "$END3 <= $END2"
is "$(m 'dwload_checkpoint_timestamp_seconds{job=met}')" "$(utc "2024-01-03 00:00:00")" \
  "a bad feed: the checkpoint is the stored one, day 2's"
FEED="$WORK/bad.csv" dw run --metrics-file "$PROM" "$J"
is "$RC|$(m 'dwload_last_success_timestamp_seconds{job=met}')" "1|$END2" \
  "a second failed run: the last success is carried over again"
rm "$PROM"
FEED="$WORK/bad.csv" dw run --metrics-file "$PROM" "$J"
is "$RC|$(m 'dwload_run_success{job=met}')|$(m 'dwload_last_success_timestamp_seconds{job=met}')" "1|0.0|absent" \
  "a failed run without an old file: no last success is made up"

# ---- --empty-exit: the exit status the run had -------------------------------------
FEED="$WORK/day2.csv" dw run --empty-exit 99 --metrics-file "$PROM" "$J"
is "$RC|$(m 'dwload_run_success{job=met}')|$(m 'dwload_run_exit_code{job=met}')" "99|1.0|99.0" \
  "--empty-exit 99: committed, exit code 99 in the file"

# ---- a file that cannot be written ------------------------------------------------
dw run --metrics-file "$WORK/no/such/dir/met.prom" "$J"
is "$RC|$(field status)" "0|ok" "a metrics file in a missing folder: the run still commits, exit 0"
like "$ERR" "could not write the metrics file $WORK/no/such/dir/met.prom: cannot create a temporary file beside it" \
  "a metrics file in a missing folder: a warning names it"
mkdir "$WORK/isdir" "$WORK/isdir/met.prom"
dw run --metrics-file "$WORK/isdir/met.prom" "$J"
is "$RC|$(field status)" "0|ok" "a metrics path that is a folder: the run still commits, exit 0"
like "$ERR" "could not write the metrics file $WORK/isdir/met.prom: Is a directory" \
  "a metrics path that is a folder: the rename's failure is a warning"
is "$(ls "$WORK/isdir")" met.prom "a failed rename leaves no temporary file behind"
FEED="$WORK/bad.csv" dw run --metrics-file "$WORK/isdir/met.prom" "$J"
is "$RC" 1 "a failing run and a failing metrics file: still exit 1"

# ---- only run writes metrics --------------------------------------------------------
dw plan --metrics-file "$WORK/plan.prom" "$J"
is "$RC|$([ -e "$WORK/plan.prom" ] && echo file)" "2|" "plan refuses --metrics-file (exit 2) and writes nothing"

done_testing
