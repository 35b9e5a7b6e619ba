#!/bin/sh
# A commit call that fails is not a rollback: the server may have
# committed before the failure reached dwload.  Each run writes its run id
# into its dwload_state row inside its transaction; after a failed commit
# it reads the row again on a new connection and reports what happened:
# committed (exit 0, with a warning), not committed (exit 1, rolled back),
# or unknown when it cannot check (exit 5, with a hint naming the run id).
#
# The failures come from tests/hooks/commitfail.c, an LD_PRELOAD hook on
# SQLEndTran: a commit that happens and then reports failure, one whose
# connection is cut before it (the server rolls back), one after which no
# connection can be made; and, on PostgreSQL and MariaDB, a real session
# killed on the server while dwload waits at its commit.  Also: a
# dwload_state table of an older dwload (no run_id column) gains the
# column.
. "$TOP_SRCDIR/tests/integration/lib.sh"

. "$TOP_SRCDIR/tests/integration/twodays.sh"

# hooked MODE JOB [FEED]: runs the job with the hook in MODE (day2.csv by
# default); sets RC, ERR and LAST as dw does
hooked() {
  FEED=${3:-$WORK/day2.csv} DWL_TEST_COMMIT=$1 LD_PRELOAD=$HOOK "$DWLOAD" run "$2" \
    >"$WORK/stdout" 2>"$WORK/stderr"
  RC=$?
  ERR=$(cat "$WORK/stderr")
  LAST=$(tail -n 1 "$WORK/stdout")
}

# unchanged JOB TABLE BEFORE WHAT: nothing of the run was committed, and
# the next run loads the second day
unchanged() {
  is "$(tdump "$2")" "$3" "$4: the table is as before the run"
  is "$(state checkpoint "$1")" "2024-01-01 00:00:00" "$4: the checkpoint is the first day's"
  is "$(state "CASE WHEN running_since IS NULL AND running_pid IS NULL THEN 1 ELSE 0 END" "$1")" 1 \
    "$4: no running mark left in dwload_state"
  FEED="$WORK/day2.csv" run_ok "$WORK/$1.yaml" "$4: the next run"
  is "$(field inserted)" 30 "$4: the next run inserts the second day's rows"
  is "$(sql "SELECT count(*), count(DISTINCT id) FROM $2")" "80|80" "$4: every row loaded once"
}

# ---- committed, then the call failed ----------------------------------------
day_job cf_after d_after
hooked after "$J"
is "$RC" 0 "after: the run exits 0 (the commit happened)"
like "$ERR" "warn: the commit call failed" "after: a warning says the commit call failed"
like "$ERR" "but the commit happened" "after: ... and that the commit happened"
unlike "$ERR" "rolled back" "after: the run does not claim it rolled back"
is "$(field status)" ok "after: the summary says ok"
RUN_ID=$(field run_id)
like "$ERR" "$RUN_ID" "after: the log names the run id of the summary"
is "$(state run_id cf_after)" "$RUN_ID" "after: dwload_state holds the run's id"
is "$(state checkpoint cf_after)|$(state last_status cf_after)" "2024-01-02 00:00:00|ok" \
  "after: the checkpoint is the second day's"
is "$(sql 'SELECT count(*), count(DISTINCT id) FROM d_after')" "80|80" "after: the second day's rows are there"
is "$(state "CASE WHEN running_since IS NULL AND running_pid IS NULL THEN 1 ELSE 0 END" cf_after)" 1 \
  "after: no running mark left in dwload_state"
FEED=/nonexistent "$DWLOAD" state "$J" >"$WORK/state.out" 2>&1
like "$(cat "$WORK/state.out")" "run id:      $RUN_ID" "after: dwload state shows the run id"

# ---- the connection cut before the commit -------------------------------------
day_job cf_before d_before
BEFORE=$(tdump d_before)
PREV_ID=$(state run_id cf_before)
hooked before "$J"
is "$RC" 1 "before: the run exits 1 (not committed)"
like "$ERR" "not committed: the state row does not hold this run's id" "before: the error says it did not commit"
like "$ERR" "rolled back: nothing was written" "before: the run says it rolled back"
is "$(field status)" failed "before: the summary says failed"
RUN_ID=$(field run_id)
unlike "$RUN_ID" "MISSING" "before: the summary has a run_id"
is "$(state run_id cf_before)" "$PREV_ID" "before: dwload_state holds the previous run's id"
like "$(state last_error cf_before)" "not committed" "before: dwload_state records the failure"
unchanged cf_before d_before "$BEFORE" before

# ---- the outcome cannot be checked ------------------------------------------
day_job cf_unknown d_unknown
hooked unknown "$J"
is "$RC" 5 "unknown: the run exits 5"
is "$(field status)" unknown "unknown: the summary says unknown"
RUN_ID=$(field run_id)
like "$ERR" "error: the commit's outcome is unknown" "unknown: the error says the outcome is unknown"
like "$ERR" "this run's id is $RUN_ID" "unknown: the error names the run id"
like "$ERR" 'hint: `dwload state JOB` shows the run id' "unknown: the hint says how to find out"
unlike "$ERR" "rolled back" "unknown: the run does not claim it rolled back"
# The hook let this commit happen: the run id tells.
FEED=/nonexistent "$DWLOAD" state "$J" >"$WORK/state.out" 2>&1
like "$(cat "$WORK/state.out")" "run id:      $RUN_ID" "unknown: dwload state shows this run's id (it committed)"
is "$(sql 'SELECT count(*) FROM d_unknown')" 80 "unknown: the committed rows are there"

# ---- a state table of an older dwload -----------------------------------------
# Its columns as dwload 580d46c created them, without run_id.
OLD="CREATE TABLE dwload_state (job varchar(128) PRIMARY KEY, checkpoint varchar(1000),
  last_run_at varchar(1000), last_status varchar(1000), last_mode varchar(1000), rows_read bigint,
  skipped bigint, inserted bigint, expired bigint, updated bigint, deleted bigint, unchanged bigint,
  rejected bigint, seconds double precision, running_since varchar(1000), running_host varchar(1000),
  running_pid bigint, last_error varchar(1000))"
if is_warehouse sqlite; then
  sql "$OLD" "$WORK/old.db"
  OLD_CONN="Driver=SQLite3;Database=$WORK/old.db"
else
  sql "DROP TABLE d_after"
  sql "DROP TABLE dwload_state"
  sql "$OLD"
  OLD_CONN=$WH_CONN
fi
sql "INSERT INTO dwload_state (job, checkpoint, last_status) VALUES ('other', '2020-01-01 00:00:00', 'ok')" \
  "$( is_warehouse sqlite && echo "$WORK/old.db" || echo "$WH")"
sed "s|^  connection: .*|  connection: \"$OLD_CONN\"|" "$WORK/cf_after.yaml" >"$WORK/cf_old.yaml"
FEED="$WORK/day1.csv" dw run "$WORK/cf_old.yaml"
is "$RC" 0 "old table: the run exits 0"
ODB=$(is_warehouse sqlite && echo "$WORK/old.db" || echo "$WH")
like "$(wh_columns dwload_state 2>/dev/null; WH=$ODB wh_columns dwload_state)" "run_id" \
  "old table: dwload_state gained the run_id column"
is "$(sql "SELECT run_id FROM dwload_state WHERE job = 'cf_after'" "$ODB")" "$(field run_id)" \
  "old table: the run's id is stored"
is "$(sql "SELECT checkpoint, run_id FROM dwload_state WHERE job = 'other'" "$ODB")" "2020-01-01 00:00:00|" \
  "old table: the other job's row is untouched"
FEED="$WORK/day2.csv" dw run "$WORK/cf_old.yaml"
is "$RC" 0 "old table: the next run exits 0 (the column is added once)"
is "$(sql "SELECT run_id FROM dwload_state WHERE job = 'cf_after'" "$ODB")" "$(field run_id)" \
  "old table: the next run's id is stored"

# ---- a real session killed at the commit ----------------------------------
if is_warehouse sqlite; then
  skip_tests 7 "the server ends a session: PostgreSQL and MariaDB only"
  done_testing
fi

# session: the id of the test database's dwload session in a transaction
session() {
  if is_warehouse postgresql; then
    sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'dwload'
         AND state = 'idle in transaction' LIMIT 1"
  else
    sql "SELECT p.id FROM information_schema.processlist p
           JOIN information_schema.innodb_trx trx ON trx.trx_mysql_thread_id = p.id
         WHERE p.db = database() AND p.id <> connection_id() LIMIT 1"
  fi
}

day_job cf_kill d_kill
BEFORE=$(tdump d_kill)
# The hook says it is at the commit, the session is found (bounded: 30 s).
at_commit cf_kill || true
S=""
found() { S=$(session); [ -n "$S" ]; }
wait_until 300 found || true
if [ -n "$S" ]; then
  pass "kill: the run waits at its commit, its session in a transaction"
  if is_warehouse postgresql; then sql "SELECT pg_terminate_backend($S)" >/dev/null; else sql "KILL $S"; fi
  # Its end is seen on the server before the commit goes on.
  wait_until 100 eval '[ -z "$(session)" ]' || true
else
  fail "kill: the run waits at its commit, its session in a transaction" "$(cat "$WORK/r.err")"
fi
# (read-write: the write never waits, and the line stays for the hook)
exec 4<>"$GO"
echo go >&4
finish "$PID" 60
is "$?" 1 "kill: the run exits 1 (not committed)"
exec 4>&-
ERR=$(cat "$WORK/r.err")
like "$ERR" "not committed: the state row does not hold this run's id" "kill: the error says it did not commit"
unchanged cf_kill d_kill "$BEFORE" kill

done_testing
