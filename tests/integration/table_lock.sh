#!/bin/sh
# Concurrency on a target table and bounded lock waits.
#
# The table lock: two jobs writing one target table exclude each other,
# across machines (the lock is a row of dwload_lock, locked in the run's
# transaction): the second exits 3 naming the table and the job, host and
# pid holding it; dim, public.dim (main.dim, DB.dim) are one table; a run
# killed outright leaves no lock behind.  On SQLite the database's write
# lock already admits one writer.
#
# Lock waits: every statement of a run waits at most target.lock_timeout
# for a lock another session holds (PostgreSQL lock_timeout, MariaDB
# innodb_lock_wait_timeout and lock_wait_timeout, SQLite's busy timeout),
# and then the run exits 3 naming the table.  A SQLite reader is not
# another writer: in WAL mode it does not stop the run at all, in
# rollback-journal mode the run waits for it (up to the timeout).
#
# The other session is the warehouse's own client, fed through a FIFO; the
# test goes on once that session has printed that it holds its lock.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# wjob NAME CSV TABLE [TARGET-LINES [MORE-LINES]]: an scd2 job keyed on id
wjob() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $2
target:
  connection: "$WH_CONN"
  table: $3
${4:-}
load:
  mode: scd2
  key: [id]
  lmd: lmd
${5:-}
EOF
}

# holder NAME: starts the warehouse's client reading SQL from the FIFO
# $WORK/NAME.fifo (kept open on fd 7), output in $WORK/NAME.out; HOLDER is
# its pid
holder() {
  mkfifo "$WORK/$1.fifo"
  exec 7<>"$WORK/$1.fifo"
  case $WAREHOUSE in
    sqlite) sqlite3 -batch "$WH" <"$WORK/$1.fifo" >"$WORK/$1.out" 2>&1 7>&- & ;;
    postgresql) _wh_psql "$WH" -At <"$WORK/$1.fifo" >"$WORK/$1.out" 2>&1 7>&- & ;;
    mariadb) _wh_mariadb "$WH" -N --unbuffered <"$WORK/$1.fifo" >"$WORK/$1.out" 2>&1 7>&- & ;;
  esac
  HOLDER=$!
}

# poll CMD...: true once CMD succeeds (bounded: 60 s)
poll() {
  wait_until 600 "$@"
}

# says NAME TEXT: true once the holder NAME has printed TEXT
says() {
  poll grep -q "$2" "$WORK/$1.out"
}

# release SQL: ends the holder's session with SQL and waits for it (the
# client quits: a shell's copy of the FIFO may outlive fd 7)
release() {
  echo "$1" >&7
  case $WAREHOUSE in
    sqlite) echo ".quit" >&7 ;;
    postgresql) printf '%s\n' '\q' >&7 ;;
    mariadb) echo "quit" >&7 ;;
  esac
  exec 7>&-
  finish "$HOLDER"
}

F1=$(file w1.csv <<EOF
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
EOF
)
F2=$(file w2.csv <<EOF
id,name,lmd
1,Ann B,2024-02-01 00:00:00
3,Cat,2024-02-01 00:00:00
EOF
)

# ---- a session holding a lock on the table ------------------------------------
J=$(wjob waits "$F1" waits)
run_ok "$J" "waits: first run"
BEFORE=$(tdump waits)
holder lockt
case $WAREHOUSE in
  sqlite) echo "BEGIN IMMEDIATE; SELECT 'held';" >&7 ;;
  postgresql) echo "BEGIN; LOCK TABLE waits IN ACCESS EXCLUSIVE MODE; SELECT 'held';" >&7 ;;
  mariadb) echo "LOCK TABLES waits WRITE; SELECT 'held';" >&7 ;;
esac
if says lockt held; then pass "waits: the other session holds its lock"; else fail "waits: the other session holds its lock" "$(cat "$WORK/lockt.out")"; fi
J=$(wjob waits "$F2" waits "  lock_timeout: 1s")
dw run "$J"
is "$RC" 3 "waits: a run that cannot get its lock within lock_timeout exits 3"
if is_warehouse sqlite; then
  like "$ERR" "job 'waits' is locked: another writer holds the warehouse's write lock" \
    "waits: SQLite: another writer is named as such"
else
  like "$ERR" "table waits: gave up after waiting 1s (target.lock_timeout) for a lock another session holds" \
    "waits: the message names the table and the timeout"
fi
is "$(field status)" failed "waits: the summary says failed"
# (a table lock keeps readers out too)
release "$(if is_warehouse mariadb; then echo 'UNLOCK TABLES;'; else echo 'ROLLBACK;'; fi)"
is "$(tdump waits)" "$BEFORE" "waits: the table is unchanged"
dw run "$J"
is "$RC" 0 "waits: once the lock is released, the run succeeds"
is "$(field inserted)" 2 "waits: it loads its rows"

# ---- a row lock held on a current version (PostgreSQL, MariaDB) ---------------
if is_warehouse sqlite; then
  skip_tests 4 "SQLite locks the whole database: the section above"
else
  BEFORE=$(tdump waits)
  holder lockr
  echo "BEGIN; SELECT id FROM waits WHERE id = '1' AND is_current = $(is_warehouse postgresql && echo TRUE || echo 1) FOR UPDATE; SELECT 'held';" >&7
  if says lockr held; then pass "rows: the other session holds a row lock"; else fail "rows: the other session holds a row lock" "$(cat "$WORK/lockr.out")"; fi
  F3=$(file w3.csv <<EOF
id,name,lmd
1,Ann C,2024-03-01 00:00:00
EOF
)
  J=$(wjob waits "$F3" waits "  lock_timeout: 1s")
  dw run "$J"
  is "$RC" 3 "rows: the run gives up on the row lock with exit 3"
  like "$ERR" "table waits: gave up after waiting 1s (target.lock_timeout)" "rows: the message names the table"
  is "$(tdump waits)" "$BEFORE" "rows: the table is unchanged"
  release "ROLLBACK;"
fi

# ---- a SQLite reader is not another writer ------------------------------------
if ! is_warehouse sqlite; then
  skip_tests 9 "SQLite readers and journal modes"
else
  J=$(wjob readers "$F1" readers)
  run_ok "$J" "readers: first run"
  is "$(sql 'PRAGMA journal_mode')" delete "readers: the database is in rollback-journal mode"
  holder reader1
  echo "BEGIN; SELECT 'held', count(*) FROM readers;" >&7
  says reader1 held || fail "readers: the reader holds its read transaction" "$(cat "$WORK/reader1.out")"
  J=$(wjob readers "$F2" readers "  lock_timeout: 1s")
  dw run "$J"
  is "$RC" 3 "readers: a reader that outlasts lock_timeout keeps the run from committing: exit 3"
  like "$ERR" "no other writer holds it, but other connections' read transactions" \
    "readers: the message says readers, not another writer"
  unlike "$ERR" "another writer holds" "readers: the reader is not called another writer"
  # A reader that ends within lock_timeout: the run waits for it.
  J=$(wjob readers "$F2" readers "  lock_timeout: 60s")
  "$DWLOAD" run "$J" >"$WORK/reader.run.out" 2>"$WORK/reader.run.err" 7>&- &
  RUN=$!
  poll grep -q "connected to" "$WORK/reader.run.err"
  release "COMMIT;"
  finish "$RUN"
  is "$?" 0 "readers: a run waits for a reader that ends, then succeeds"

  # WAL: readers and the writer do not block each other at all.
  sql 'PRAGMA journal_mode = WAL' >/dev/null
  is "$(sql 'PRAGMA journal_mode')" wal "readers: the database is in WAL mode now"
  holder reader2
  echo "BEGIN; SELECT 'held', count(*) FROM readers;" >&7
  says reader2 held || fail "readers: WAL: the reader holds its read transaction" "$(cat "$WORK/reader2.out")"
  N=$(sql 'SELECT count(*) FROM readers')
  F4=$(file w4.csv <<EOF
id,name,lmd
4,Dan,2024-04-01 00:00:00
EOF
)
  J=$(wjob readers "$F4" readers "  lock_timeout: 1s")
  dw run "$J"
  is "$RC" 0 "readers: WAL: a run succeeds while a reader's transaction is open"
  echo "SELECT 'still', count(*) FROM readers; COMMIT;" >&7
  says reader2 "still|$N" && pass "readers: WAL: the reader still sees its snapshot" ||
    fail "readers: WAL: the reader still sees its snapshot" "$(cat "$WORK/reader2.out")"
  release "SELECT 'after', count(*) FROM readers;"
  like "$(cat "$WORK/reader2.out")" "after|$((N + 1))" "readers: WAL: the run's row is committed"
  sql 'PRAGMA journal_mode = DELETE' >/dev/null
fi

# ---- two jobs writing one table -------------------------------------------------
# held_by JOB: JOB's run holds its locks (state row marked, and the table's
# row of dwload_lock, or on SQLite the write lock, refused to a probe)
held_by() {
  [ "$(sql "SELECT CASE WHEN running_since IS NOT NULL THEN 1 ELSE 0 END FROM dwload_state WHERE job = '$1'" 2>/dev/null)" = 1 ] || return 1
  if is_warehouse sqlite; then
    ! sqlite3 -batch "$WH" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1
  else
    [ "$(sql "SELECT job FROM dwload_lock WHERE job = '$1' FOR UPDATE NOWAIT" 2>/dev/null)" != "$1" ]
  fi
}
case $WAREHOUSE in
  sqlite) QUAL=main.shared_dim ;;
  postgresql) QUAL=public.shared_dim ;;
  mariadb) QUAL=$WH.shared_dim ;;
esac
{ echo "id,name,lmd"; gen_rows 1 50 "2024-01-01 00:00:00"; } >"$WORK/shared_0.csv"
{ echo "id,name,lmd"; gen_rows 1 50 "2024-01-03 00:00:00" | sed 's/row/row b/'; } >"$WORK/shared_b.csv"
mkfifo "$WORK/shared.fifo"
# Without a sequence key nothing else stops two writers (the issue's case).
NOSK="dimension:
  surrogate_key: null"
A=$(wjob job_a "$WORK/shared.fifo" shared_dim "" "$NOSK")
B=$(wjob job_b "$WORK/shared_b.csv" shared_dim "" "$NOSK")
C=$(wjob job_c "$WORK/shared_b.csv" "$QUAL" "" "$NOSK")
Z=$(wjob job_b "$WORK/shared_0.csv" shared_dim "" "$NOSK")
run_ok "$Z" "shared: job_b loads the table first"
B=$(wjob job_b "$WORK/shared_b.csv" shared_dim "" "$NOSK")
exec 8<>"$WORK/shared.fifo"
"$DWLOAD" run "$A" >"$WORK/a.out" 2>"$WORK/a.err" 8>&- 7>&- &
PIDA=$!
{ echo "id,name,lmd"; gen_rows 1 30 "2024-01-02 00:00:00"; } >&8
if poll held_by job_a; then pass "shared: job_a holds its locks"; else fail "shared: job_a holds its locks" "$(cat "$WORK/a.err")"; fi
dw run "$B"
is "$RC" 3 "shared: another job writing the same table exits 3"
if is_warehouse sqlite; then
  like "$ERR" "another writer holds the SQLite database's write lock, which admits one writer for all its tables: job 'job_a' is running since" \
    "shared: SQLite: the database's write lock refuses it, and the message names the other job"
else
  like "$ERR" "table shared_dim is locked: job 'job_a' writes it" "shared: the message names the table and the other job"
fi
like "$ERR" "pid $PIDA" "shared: the message names the other run's pid"
like "$ERR" "host $(hostname)" "shared: the message names the other run's host"
dw run "$C"
is "$RC" 3 "shared: $QUAL is the same table as shared_dim"
echo "31,row 31,2024-01-02 00:00:00" >&8
exec 8>&-
finish "$PIDA"
is "$?" 0 "shared: job_a finishes"
dw run "$B"
is "$RC" 0 "shared: once job_a has finished, job_b runs"
is "$(sql "SELECT count(*) FROM (SELECT id FROM shared_dim WHERE is_current = $(is_warehouse postgresql && echo TRUE || echo 1) GROUP BY id HAVING count(*) > 1) x")" 0 \
  "shared: no key has two current versions"
is "$(sql "SELECT count(*) FROM dwload_lock WHERE running_since IS NOT NULL" 2>/dev/null || echo 0)" 0 "shared: no mark is left"

# A run killed outright leaves no table lock behind.
mkfifo "$WORK/kill.fifo"
K=$(wjob job_k "$WORK/kill.fifo" shared_dim "" "$NOSK")
exec 8<>"$WORK/kill.fifo"
"$DWLOAD" run "$K" >"$WORK/k.out" 2>"$WORK/k.err" 8>&- 7>&- &
PIDK=$!
{ echo "id,name,lmd"; gen_rows 1 5 "2024-01-03 00:00:00"; } >&8
if poll held_by job_k; then pass "kill: job_k holds its locks"; else fail "kill: job_k holds its locks" "$(cat "$WORK/k.err")"; fi
kill -9 "$PIDK"
wait "$PIDK"
is "$?" 137 "kill: job_k was killed"
exec 8>&-
dw run "$B"
is "$RC" 0 "kill: another job writes the table after the killed run"

# Another machine's run holds the table: its committed mark names it.
if is_warehouse sqlite; then
  skip_tests 4 "SQLite: the write lock names no job"
else
  holder remote
  printf '%s\n' \
    "UPDATE dwload_lock SET job = 'etl_remote', running_since = '2024-05-01 03:00:00', running_host = 'etl-09.example', running_pid = 777 WHERE target_table = '$(is_warehouse postgresql && echo public || echo "$WH").shared_dim';" \
    "BEGIN;" \
    "UPDATE dwload_lock SET running_pid = running_pid WHERE job = 'etl_remote';" "SELECT 'held';" >&7
  if says remote held; then pass "remote: the other machine's session holds the table"; else fail "remote: the other machine's session holds the table" "$(cat "$WORK/remote.out")"; fi
  BEFORE=$(tdump shared_dim)
  dw run "$B"
  is "$RC" 3 "remote: a run here exits 3"
  like "$ERR" "table shared_dim is locked: job 'etl_remote' writes it, running since 2024-05-01 03:00:00 (host etl-09.example, pid 777)" \
    "remote: the message names the other machine's job, host and pid"
  is "$(tdump shared_dim)" "$BEFORE" "remote: nothing was written"
  release "ROLLBACK;"
fi

done_testing
