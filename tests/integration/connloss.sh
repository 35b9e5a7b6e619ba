#!/bin/sh
# Connection loss: the server ends a run's session mid-run (PostgreSQL:
# pg_terminate_backend; MariaDB: KILL), from a second connection as an
# operator would.  The run exits 1 with a message saying the connection was
# lost, nothing of it is committed, and the next run loads the data
# correctly.
#
# Two moments: while the run is writing (its session is seen running an
# INSERT into the table), and while it holds the job's lock between
# statements (reading a source that arrives through a FIFO, as in lock.sh),
# so that the loss shows at its next statement.  Both are observed on the
# server, polled with a bound.
. "$TOP_SRCDIR/tests/integration/lib.sh"
skip_unless_warehouse "postgresql mariadb" "the server ends a session: PostgreSQL and MariaDB only"

# loss_job JOB TABLE: an scd2 job reading ${FEED}
loss_job() {
  mkjob "$1" "\${FEED}" "$2" <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
}

# session WHAT: the id of the dwload session of this test's database (its
# backend pid, or its MariaDB connection id) that is doing WHAT: "insert"
# (running an INSERT) or "idle" (in a transaction, between statements);
# empty when there is none.  PostgreSQL knows it by its application_name,
# which dwload sets.
session() {
  if is_warehouse postgresql; then
    case $1 in
      insert) _c="state = 'active' AND query LIKE 'INSERT INTO%'" ;;
      idle) _c="state = 'idle in transaction'" ;;
    esac
    sql "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'dwload'
         AND $_c LIMIT 1"
  else
    case $1 in
      insert) _c="info LIKE 'INSERT INTO%'" ;;
      # (innodb_trx does not always list the run's transaction in time;
      # the caller waits for the run's log to show it holds the lock)
      idle) _c="command = 'Sleep'" ;;
    esac
    sql "SELECT p.id FROM information_schema.processlist p
           LEFT JOIN information_schema.innodb_trx trx ON trx.trx_mysql_thread_id = p.id
         WHERE p.db = database() AND p.id <> connection_id() AND $_c LIMIT 1"
  fi
}

# wait_session WHAT: polls session for at most ~30 s; prints the id
wait_session() {
  _i=0
  while [ $_i -lt 600 ]; do
    _s=$(session "$1" 2>/dev/null)
    if [ -n "$_s" ]; then
      echo "$_s"
      return 0
    fi
    sleep 0.05
    _i=$((_i + 1))
  done
  return 1
}

# end_session ID: the server ends it
end_session() {
  if is_warehouse postgresql; then
    sql "SELECT pg_terminate_backend($1)"
  else
    sql "KILL $1"
  fi
}

# lost_msg STDERR WHAT: the run's error says plainly that the connection
# was lost (the drivers' own words vary with the moment: a FATAL, "server
# closed the connection unexpectedly", "internal SAVEPOINT failed"), and
# the run says it rolled back
lost_msg() {
  printf '%s\n' "$1" | grep " error: " | sed 's/^/# /'
  like "$(printf '%s\n' "$1" | grep " error: ")" "error: lost the connection to the warehouse" \
    "$2: the error says the connection was lost"
  like "$1" "rolled back: nothing was written" "$2: the run says it rolled back"
}

# ---- killed while writing ----------------------------------------------------
ROWS=200000
{ echo "id,name,lmd"; gen_rows 1 100 "2024-01-01 00:00:00"; } >"$WORK/day1.csv"
{ echo "id,name,lmd"; gen_rows 1 100 "2024-01-01 00:00:00"; gen_rows 101 "$ROWS" "2024-01-02 00:00:00"; } \
  >"$WORK/day2.csv"
J=$(loss_job loss_write d_write)
FEED="$WORK/day1.csv" run_ok "$J" "writing: the first day"
BEFORE=$(tdump d_write)
CKPT=$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'loss_write'")

FEED="$WORK/day2.csv" "$DWLOAD" run "$J" >"$WORK/w.out" 2>"$WORK/w.err" &
PID=$!
if S=$(wait_session insert); then
  pass "writing: the run's session is seen inserting"
  end_session "$S" >/dev/null
else
  fail "writing: the run's session is seen inserting" "$(cat "$WORK/w.err")"
fi
finish "$PID" 60
is "$?" 1 "writing: the run exits 1"
ERR=$(cat "$WORK/w.err")
lost_msg "$ERR" "writing"
LAST=$(tail -n 1 "$WORK/w.out")
is "$(field status)" failed "writing: the summary says failed"
is "$(tdump d_write)" "$BEFORE" "writing: the table is as before the run (nothing committed)"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'loss_write'")" "$CKPT" \
  "writing: the checkpoint is the first day's"

FEED="$WORK/day2.csv" run_ok "$J" "writing: the next run"
is "$(field inserted)" $((ROWS - 100)) "writing: the next run inserts the second day's rows"
is "$(sql 'SELECT count(*), count(DISTINCT id) FROM d_write')" "$ROWS|$ROWS" \
  "writing: every row loaded once"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'loss_write'")" "2024-01-02 00:00:00" \
  "writing: the checkpoint is the second day's"

# ---- killed between statements, holding the lock ----------------------------
K=$(loss_job loss_idle d_idle)
FEED="$WORK/day1.csv" run_ok "$K" "idle: the first day"
BEFORE=$(tdump d_idle)
FIFO="$WORK/feed.fifo"
mkfifo "$FIFO"
exec 3<>"$FIFO"
FEED="$FIFO" "$DWLOAD" run "$K" >"$WORK/i.out" 2>"$WORK/i.err" 3>&- &
PID=$!
{ echo "id,name,lmd"; gen_rows 1 10 "2024-01-01 00:00:00"; } >&3
# The run logs the checkpoint it read under the lock, in its transaction;
# then it waits for the rest of its source (bounded: 30 s).
i=0
while [ $i -lt 300 ] && ! grep -q 'checkpoint 2024-01-01' "$WORK/i.err" 2>/dev/null; do
  sleep 0.1
  i=$((i + 1))
done
if S=$(wait_session idle); then
  pass "idle: the run's session is seen in its transaction, between statements"
  end_session "$S" >/dev/null
  # Its end is seen on the server before the run goes on.
  i=0
  while [ $i -lt 100 ] && [ -n "$(session idle 2>/dev/null)" ]; do
    sleep 0.1
    i=$((i + 1))
  done
else
  fail "idle: the run's session is seen in its transaction, between statements" "$(cat "$WORK/i.err")"
fi
# The rest of its source: the run reads it, then finds its connection gone.
gen_rows 101 200 "2024-01-02 00:00:00" >&3
exec 3>&-
finish "$PID" 60
is "$?" 1 "idle: the run exits 1"
ERR=$(cat "$WORK/i.err")
lost_msg "$ERR" "idle"
is "$(tdump d_idle)" "$BEFORE" "idle: the table is as before the run (nothing committed)"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'loss_idle'")" "2024-01-01 00:00:00" \
  "idle: the checkpoint is the first day's"
{ echo "id,name,lmd"; gen_rows 1 100 "2024-01-01 00:00:00"; gen_rows 101 200 "2024-01-02 00:00:00"; } \
  >"$WORK/idle2.csv"
FEED="$WORK/idle2.csv" run_ok "$K" "idle: the next run"
is "$(field inserted)" 100 "idle: the next run inserts the new rows"
is "$(sql 'SELECT count(*), count(DISTINCT id) FROM d_idle')" "200|200" "idle: every row loaded once"

done_testing
