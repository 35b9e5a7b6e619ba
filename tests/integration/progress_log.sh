#!/bin/sh
# Liveness without a terminal: a run whose stderr is a file (cron,
# Airflow) logs "progress: PHASE, N rows read, ..." every
# --progress-interval seconds.  The source is a FIFO the test feeds in
# steps: while the run is blocked on it, a progress line comes, and after
# the next step a later one with more rows.  No sleeps: the test waits on
# the log.
. "$TOP_SRCDIR/tests/integration/lib.sh"

FIFO="$WORK/feed.fifo"
mkfifo "$FIFO"
J=$(mkjob live "\${FEED}" t_live "  types: {id: integer}" <<'EOF'
load:
  mode: append
  lmd: lmd
EOF
)
# Opened read-write, the FIFO never blocks the test; the run must not
# inherit this end, or it would never see the end of its input.
exec 3<>"$FIFO"
# The go FIFO hands the writer its cue to write the second step: it waits
# in a blocking read, no polling; held open read-write here, the cue never
# blocks the test.
mkfifo "$WORK/go"
exec 4<>"$WORK/go"
FEED="$FIFO" "$DWLOAD" --progress-interval 1 run "$J" >"$WORK/run.out" 2>"$WORK/run.err" 3>&- 4>&- &
PID=$!
# The steps are written from the background: should the run die, a full
# pipe must not block the test (the writer is ended at the end); the
# second step waits for the cue on go, sent once the first line is seen.
{ echo "id,name,lmd"; gen_rows 1 5000 "2024-01-01 00:00:00"; } >"$WORK/step1.csv"
gen_rows 5001 20000 "2024-01-02 00:00:00" >"$WORK/step2.csv"
{
  cat "$WORK/step1.csv"
  read -r _ <"$WORK/go"
  cat "$WORK/step2.csv"
  : >"$WORK/written"
} >&3 &
W=$!

# rows_logged: the row count of the last progress line of the read phase
rows_logged() {
  sed -n 's/.*progress: read, \([0-9]*\) rows read, [0-9]* rows\/s, [0-9]*s elapsed.*/\1/p' "$WORK/run.err" | tail -n 1
}
wait_until 300 grep -q "progress: read, [0-9]* rows read" "$WORK/run.err"
grep -q "info: progress: read, [0-9]* rows read, [0-9]* rows/s, [0-9]*s elapsed" "$WORK/run.err" &&
  pass "blocked on its source, the run logs a progress line" ||
  fail "blocked on its source, the run logs a progress line" "$(cat "$WORK/run.err")"
FIRST=$(rows_logged)
[ "$(awk '{ print $3 }' "/proc/$PID/stat" 2>/dev/null)" != Z ] && [ -e "/proc/$PID" ] &&
  pass "... while it is still reading" || fail "... while it is still reading"
echo go >&4
wait_until 300 eval '[ "$(rows_logged)" -gt "${FIRST:-0}" ]'
is "$([ "$(rows_logged)" -gt "${FIRST:-0}" ] && echo more)" more \
  "after the next rows, a later line counts more rows ($FIRST, then $(rows_logged))"
wait_until 300 test -e "$WORK/written"
kill "$W" 2>/dev/null
wait "$W" 2>/dev/null
exec 3>&- 4>&-
finish "$PID"
is "$?" 0 "the run ends when its source does"
is "$(sql 'SELECT count(*) FROM t_live')" 20000 "every row loaded"

# --progress-interval 0: none; a bad value is a usage error
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n' >"$WORK/one.csv"
FEED="$WORK/one.csv" dw --progress-interval 0 run "$J"
is "$RC" 0 "--progress-interval 0: the run is fine"
unlike "$ERR" "progress:" "--progress-interval 0: no progress line"
dw --progress-interval x run "$J"
is "$RC" 2 "--progress-interval x is a usage error"
like "$ERR" "--progress-interval must be a number of seconds" "... and says so"

done_testing
