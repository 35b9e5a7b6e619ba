#!/bin/sh
# SIGTERM, SIGINT and SIGHUP (a scheduler's timeout, Ctrl-C, a closed
# terminal) during a run: the run rolls back, clears its running mark,
# records the interruption as its last error, logs it, prints its summary
# with status "interrupted" and exits 128+N; a second signal ends it at
# once.  And a summary that cannot be written (stdout on /dev/full, a
# closed pipe) makes the run exit 6 with a line on stderr, not vanish.
#
# The run is blocked where it waits longest: reading a source that
# arrives through a FIFO (after it has logged the checkpoint it read under
# the job's lock), and, on PostgreSQL and MariaDB, in a statement that
# waits for a lock another session holds on the table.  The second signal
# reaches a run held at its commit by tests/hooks/commitfail.c (hold).
# dwload is started with the signals' default disposition (sh starts
# background jobs with SIGINT ignored, and an ignored signal stays so, as
# SIGHUP under nohup, tested too).
. "$TOP_SRCDIR/tests/integration/lib.sh"

. "$TOP_SRCDIR/tests/integration/twodays.sh"


# wait_log FILE TEXT: waits (bounded: 30 s) for TEXT in FILE
wait_log() {
  wait_until 300 grep -qF "$2" "$1"
}

# ended CODE WHAT: the run of PID ends (bounded: 60 s) with exit CODE
ended() {
  finish "$PID" 60
  is "$?" "$1" "$2: exit $1"
}

# interrupted JOB TABLE BEFORE SIG WHAT: the run that SIG ended rolled
# back and said so (its files: $WORK/r.out, $WORK/r.err)
interrupted() {
  ERR=$(cat "$WORK/r.err")
  LAST=$(tail -n 1 "$WORK/r.out")
  like "$ERR" "error: interrupted by $4" "$5: the error says interrupted by $4"
  like "$ERR" "rolled back: nothing was written" "$5: the run says it rolled back"
  is "$(field status)" interrupted "$5: the summary's status is interrupted"
  is "$(field checkpoint)" "2024-01-01 00:00:00" "$5: the summary shows the stored checkpoint"
  like "$(state last_error "$1")" "interrupted by $4" "$5: dwload_state records the interruption"
  is "$(state last_status "$1")" interrupted "$5: dwload_state's last_status is interrupted"
  is "$(sql "select status from dwload_runs where run_id = '$(field run_id)'")" interrupted \
    "$5: dwload_runs records the run as interrupted"
  FEED=/dev/null dw state "$J"
  like "$OUT" "status:      interrupted" "$5: dwload state shows the status interrupted"
  is "$(state "CASE WHEN running_since IS NULL AND running_pid IS NULL THEN 1 ELSE 0 END" "$1")" 1 \
    "$5: the running mark is cleared"
  is "$(tdump "$2")|$(state checkpoint "$1")" "$3|2024-01-01 00:00:00" \
    "$5: the table and the checkpoint are as before the run"
}

# ---- blocked reading its source -------------------------------------------------
for s in TERM:143 INT:130 HUP:129; do
  SIG=${s%%:*}
  CODE=${s#*:}
  lc=$(echo "$SIG" | tr 'A-Z' 'a-z')
  day_job "sig_$lc" "d_$lc"
  BEFORE=$(tdump "d_$lc")
  FIFO="$WORK/$lc.fifo"
  mkfifo "$FIFO"
  exec 3<>"$FIFO"
  : >"$WORK/r.err"  # not the last run's log: wait_log must see this run's
  FEED="$FIFO" $DFLT "$DWLOAD" run "$J" >"$WORK/r.out" 2>"$WORK/r.err" 3>&- &
  PID=$!
  { echo "id,name,lmd"; gen_rows 1 10 "2024-01-01 00:00:00"; } >&3
  # The checkpoint is read under the lock, in the run's transaction; then
  # the run waits for the rest of its source.
  if wait_log "$WORK/r.err" "checkpoint 2024-01-01"; then
    pass "$SIG: the run holds the lock and reads its source"
  else
    fail "$SIG: the run holds the lock and reads its source" "$(cat "$WORK/r.err")"
  fi
  kill -"$SIG" "$PID"
  ended "$CODE" "$SIG while reading"
  interrupted "sig_$lc" "d_$lc" "$BEFORE" "SIG$SIG" "$SIG while reading"
  exec 3>&-
  FEED="$WORK/day2.csv" run_ok "$J" "$SIG: the next run"
  is "$(field inserted)|$(sql "SELECT count(*), count(DISTINCT id) FROM d_$lc")" "30|80|80" \
    "$SIG: the next run loads the second day, every row once"
done

# ---- SIGHUP ignored (nohup): the run goes on ------------------------------------
day_job sig_nohup d_nohup
mkfifo "$WORK/nohup.fifo"
exec 3<>"$WORK/nohup.fifo"
: >"$WORK/r.err"  # not the last run's log: wait_log must see this run's
FEED="$WORK/nohup.fifo" nohup "$DWLOAD" run "$J" >"$WORK/r.out" 2>"$WORK/r.err" 3>&- &
PID=$!
cat "$WORK/day2.csv" >&3
wait_log "$WORK/r.err" "checkpoint 2024-01-01" || fail "nohup: the run reads its source" "$(cat "$WORK/r.err")"
kill -HUP "$PID"
exec 3>&-
finish "$PID" 60
is "$?" 0 "nohup: with SIGHUP ignored, the run ends normally (exit 0)"
is "$(sql 'SELECT count(*) FROM d_nohup')" 80 "nohup: and commits"

# ---- at the commit: the first signal waits for it, a second ends the run -------
# sigpending SIG PID: 1 while SIG is pending for the process, else 0
sigpending() {
  python3 -c '
import signal, sys
bit = 1 << (int(getattr(signal, "SIG" + sys.argv[1])) - 1)
try:
    f = open("/proc/%s/status" % sys.argv[2])
except OSError:
    print(0); sys.exit()
print(int(any(int(l.split()[1], 16) & bit for l in f if l.startswith(("SigPnd:", "ShdPnd:")))))' "$1" "$2"
}
# delivered PID: waits (bounded: 10 s) until no SIGTERM is pending: the
# process has taken it
delivered() {
  _dpid=$1
  wait_until 100 eval '[ "$(sigpending TERM "$_dpid")" = 0 ]'
}
# alive PID: 1 when the process runs (not a zombie), else 0
alive() {
  if [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; then echo 1; else echo 0; fi
}

day_job sig_twice d_twice
BEFORE=$(tdump d_twice)
if at_commit sig_twice; then pass "twice: the run waits at its commit"; else fail "twice: the run waits at its commit" "$(cat "$WORK/r.err")"; fi
kill -TERM "$PID"
delivered "$PID"
is "$(alive "$PID")" 1 "twice: the first SIGTERM does not end a run that is committing"
kill -TERM "$PID"
finish "$PID" 30
is "$?" 143 "twice: the second SIGTERM ends it at once: exit 143"
is "$(cat "$WORK/r.out")" "" "twice: no summary (it ended at once)"
unlike "$(cat "$WORK/r.err")" "rolled back" "twice: no rollback claimed"
is "$(tdump d_twice)|$(state checkpoint sig_twice)" "$BEFORE|2024-01-01 00:00:00" \
  "twice: nothing committed (the transaction died with the process)"

# One signal at the commit: the commit goes on, the run says so.
day_job sig_late d_late
at_commit sig_late || fail "late: the run waits at its commit" "$(cat "$WORK/r.err")"
kill -TERM "$PID"
delivered "$PID"
# (read-write: the write never waits, and the line stays for the hook)
exec 4<>"$GO"
echo go >&4
finish "$PID" 30
is "$?" 0 "late: a SIGTERM during the commit: the commit completes, exit 0"
exec 4>&-
LAST=$(tail -n 1 "$WORK/r.out")
is "$(field status)" ok "late: the summary says ok"
like "$(cat "$WORK/r.err")" "a signal arrived after the commit" "late: the log says the signal came after the commit"
is "$(sql 'SELECT count(*) FROM d_late')|$(state checkpoint sig_late)" "80|2024-01-02 00:00:00" \
  "late: the second day is committed"

# ---- blocked in a statement (a lock another session holds) ----------------------
# The signal cancels the statement in progress (SQLCancel from another
# thread): the run does not wait for the lock to go.
if is_warehouse postgresql mariadb; then
  day_job sig_stmt d_stmt
  BEFORE=$(tdump d_stmt)
  if is_warehouse postgresql; then
    _wh_psql "$WH" -c "BEGIN; LOCK TABLE d_stmt IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120)" \
      >/dev/null 2>&1 &
    LOCKER=$!
    WAITING="SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
               AND application_name = 'dwload' AND wait_event_type = 'Lock'"
    HELD="SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE c.relname = 'd_stmt' AND l.mode = 'AccessExclusiveLock' AND l.granted"
    UNLOCK="SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()"
  else
    _wh_mariadb "$WH" -e "LOCK TABLES d_stmt WRITE; SELECT SLEEP(120)" >/dev/null 2>&1 &
    LOCKER=$!
    WAITING="SELECT count(*) FROM information_schema.processlist WHERE db = database()
               AND state LIKE 'Waiting for table metadata lock%'"
    HELD="SELECT count(*) FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(120)%'"
    UNLOCK="SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(120)%'"
  fi
  # poll Q: waits (bounded: 30 s) until Q counts more than 0
  poll() {
    _pq=$1
    wait_until 300 eval '[ "$(sql "$_pq")" -gt 0 ]'
  }
  poll "$HELD" || fail "statement: the other session holds the table's lock"
  : >"$WORK/r.err"  # not the last run's log: wait_log must see this run's
  FEED="$WORK/day2.csv" $DFLT "$DWLOAD" run "$J" >"$WORK/r.out" 2>"$WORK/r.err" &
  PID=$!
  if poll "$WAITING"; then
    pass "statement: the run waits in a statement for the table's lock"
  else
    fail "statement: the run waits in a statement for the table's lock" "$(cat "$WORK/r.err")"
  fi
  kill -TERM "$PID"
  # The run ends while the lock is still held: it did not wait for it.
  ended 143 "statement"
  is "$(sql "$HELD")" 1 "statement: (the other session still held the lock)"
  if is_warehouse postgresql; then
    sql "$UNLOCK" >/dev/null
  else
    for id in $(sql "$UNLOCK"); do sql "KILL $id"; done
  fi
  wait "$LOCKER" 2>/dev/null
  interrupted sig_stmt d_stmt "$BEFORE" SIGTERM "statement"
else
  skip_tests 11 "a lock held by another session: PostgreSQL and MariaDB"
fi

# ---- the summary cannot be written --------------------------------------------
day_job sig_out d_out
FEED="$WORK/day2.csv" "$DWLOAD" run "$J" >/dev/full 2>"$WORK/r.err"
is "$?" 6 "/dev/full: exit 6"
like "$(cat "$WORK/r.err")" "could not write the run's summary to stdout" "/dev/full: stderr says the summary is lost"
like "$(cat "$WORK/r.err")" "the run committed" "/dev/full: ... and that the run committed"
is "$(sql 'SELECT count(*) FROM d_out')|$(state checkpoint sig_out)" "80|2024-01-02 00:00:00" \
  "/dev/full: the run committed"
# A closed pipe: the reader is gone before dwload writes (python closes
# its end first); dwload must not die of SIGPIPE.
{ echo "id,name,lmd"; gen_rows 1 50 "2024-01-01 00:00:00"; gen_rows 51 90 "2024-01-03 00:00:00"; } >"$WORK/day3.csv"
RC=$(ERRF="$WORK/r.err" FEED="$WORK/day3.csv" python3 -c '
import os, signal, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=open(os.environ["ERRF"], "w"),
                   preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL))
print(p.returncode)' "$DWLOAD" run "$J")
is "$RC" 6 "closed pipe: exit 6, not death by SIGPIPE"
like "$(cat "$WORK/r.err")" "could not write the run's summary to stdout" "closed pipe: stderr says the summary is lost"
# A failed run keeps its exit status; the loss is logged all the same.
printf 'id,name,lmd\n1,x,not a time\n' >"$WORK/bad.csv"
FEED="$WORK/bad.csv" "$DWLOAD" run "$J" >/dev/full 2>"$WORK/r.err"
is "$?" 4 "/dev/full, a failed run: exit 4 (its own: a rejected row)"
like "$(cat "$WORK/r.err")" "it is lost; the run did not commit" "/dev/full, a failed run: the loss is logged"

done_testing
