#!/bin/sh
# Crash consistency: `dwload run` killed with SIGKILL at many moments of
# large loads never loses or duplicates a row.  After each kill the
# warehouse is exactly what it was before the run or exactly what the run
# would have committed, and the next run to completion leaves the dimension
# and the checkpoint equal to those of an uninterrupted run on the same data.
#
# The data: a 300,000-row initial load, then incremental batches of 5,000
# changes each (new versions, type 1 changes, deletes by an op column) and
# 500 new keys, generated deterministically (a tenth of that under the
# sanitizers).  An scd2 job runs the batches
# once uninterrupted (the reference: a job and table of its own, in the same
# warehouse), and once with kills.  Deletes come from the op column, so
# every timestamp in the dimension is a source lmd and the surrogate keys
# are the table's own: the comparison is exact, with no run clock to mask
# (deletes: absent would stamp the run's clock).  The state rows compare on
# checkpoint and status (last_run_at and seconds are the clock's).
#
# Kill points are observed, not timed (killat.py): as the run starts; once
# its feed is open (it holds the lock by then); at fractions of the feed
# read; and at fractions of the work done once the feed is read, as the
# reference run measured it (reading current versions, staging, the writes,
# the commit): on SQLite the bytes written to the database and its journal,
# on the servers the round trips (the times the run waited).  A kill that finds the batch
# still not committed leaves the next point to the same batch, so a batch
# may be killed several times before its run to completion.
. "$TOP_SRCDIR/tests/integration/lib.sh"

KILLAT="python3 $TOP_SRCDIR/tests/integration/killat.py"
# killat.py watches the run's /proc/PID/fd and io, which a process that is
# not dumpable (dwload's default, dwload(1) ENVIRONMENT) shows only to root.
DWLOAD_ALLOW_CORE=1
export DWLOAD_ALLOW_CORE
# the measure of the work after the feed (killat.py's write or wait points)
if is_warehouse sqlite; then WORK_AS=write WORK_SEEN=written; else WORK_AS=wait WORK_SEEN=waited; fi
N=300000
M=5000
# Under ASan/UBSan (scripts/sanitize) a run is several times slower, and
# what is looked for is a memory error on the same paths, not scale: a
# tenth of the rows.
if [ "${DWLOAD_SANITIZE:-0}" = 1 ]; then
  N=30000
  M=1000
fi
BATCHES="0 1 2 3"

# gen BATCH: the batch's CSV on stdout (batch 0: the initial load)
gen() {
  awk -v batch="$1" -v n=$N -v m=$M '
    BEGIN {
      split("Paris Lyon Oslo Rome Kyiv Lima Pune Kobe", city, " ")
      print "id,name,city,amount,op,lmd"
      if (batch == 0) {
        for (i = 1; i <= n; i++)
          printf "%d,name %d,%s,%d.%02d,,2024-01-01 %02d:%02d:%02d\n", i, i, city[i % 8 + 1], i % 1000, i % 100,
            int(i / 3600) % 24, int(i / 60) % 60, i % 60
        exit
      }
      # m distinct existing keys (7919 is prime to n): a tenth deleted, three
      # tenths a type 1 change (city), the rest a new version (name); then
      # m/10 new keys.
      for (j = 0; j < m; j++) {
        id = (j * 7919 + batch * 104729) % n + 1
        k = (id + batch) % 10
        at = sprintf("2024-02-%02d %02d:%02d:%02d", batch, int(j / 3600) % 24, int(j / 60) % 60, j % 60)
        if (k == 0) printf "%d,,,,D,%s\n", id, at
        else if (k < 4) printf "%d,name %d,%s,%d.%02d,,%s\n", id, id, city[(id + batch) % 8 + 1], id % 1000, id % 100, at
        else printf "%d,name %d v%d,%s,%d.%02d,,%s\n", id, id, batch, city[id % 8 + 1], id % 1000, id % 100, at
      }
      for (j = 1; j <= m / 10; j++)
        printf "%d,new %d,%s,1.00,,2024-02-%02d 12:00:00\n", n + batch * m + j, j, city[j % 8 + 1], batch
    }'
}

# crash_job NAME TABLE: the scd2 job, reading ${FEED}
crash_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: \${FEED}
  types: {id: integer, amount: "numeric(8,2)"}
target:
  connection: "$WH_CONN"
  table: $2
load:
  mode: scd2
  key: [id]
  lmd: lmd
  type1: [city]
  deletes: {column: op, values: [D]}
EOF
}

# dump TABLE: a checksum of the table's rows, every column, in a fixed
# order; "none" when there is no such table or it is empty (MariaDB cannot
# roll back DDL: a first run creates its table on a connection of its own,
# and a kill leaves it there, empty; dwload-job(5), TABLE LAYOUT).  The
# warehouse's own client, raw and fast: compared only within one warehouse.
dump() {
  if [ "$(table_exists "$1")" = 0 ] || [ "$(sql "SELECT count(*) FROM $1")" = 0 ]; then
    echo none
    return 0
  fi
  _q="SELECT * FROM $1 ORDER BY $(every_column "$1")"
  case $WAREHOUSE in
    sqlite) sqlite3 -batch -noheader "$WH" "$_q" ;;
    postgresql) _wh_psql "$WH" -A -t -c "$_q" ;;
    mariadb) _wh_mariadb "$WH" -B -N -e "$_q" ;;
  esac | md5sum | cut -d' ' -f1
}

# state JOB: the job's checkpoint and status
state() {
  sql "SELECT checkpoint, last_status FROM dwload_state WHERE job = '$1'" 2>/dev/null
}

# lock_free JOB: true when nothing holds the job's lock, probed as a second
# writer would (as in lock.sh): SQLite's write lock, or the job's row of
# dwload_state.  (A killed run's running_since stays in the row, as a
# record; the lock is its transaction's, and dies with it.)  A server's
# backend sees its client gone once the statement it is running ends: up
# to ~10 s are allowed for that.
lock_free() {
  _i=0
  while [ $_i -lt 100 ]; do
    if is_warehouse sqlite; then
      sqlite3 -batch "$WH" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1 && return 0
    else
      [ "$(sql "SELECT job FROM dwload_state WHERE job = '$1' FOR UPDATE NOWAIT" 2>/dev/null)" != "$1" ] ||
        return 0
    fi
    sleep 0.1
    _i=$((_i + 1))
  done
  return 1
}

# state_counts JOB: the counts of the job's last successful run
state_counts() {
  sql "SELECT rows_read, skipped, inserted, expired, updated, deleted, unchanged FROM dwload_state WHERE job = '$1'"
}

for b in $BATCHES; do
  gen "$b" >"$WORK/b$b.csv"
done

# ---- the reference: uninterrupted ------------------------------------------
REF=$(crash_job crash_ref dim_ref)
ref_ok=1
for b in $BATCHES; do
  out=$(FEED="$WORK/b$b.csv" $KILLAT never "$WORK/b$b.csv" -- "$DWLOAD" run "$REF" 2>"$WORK/ref.err")
  case $out in
    *"status 0"*) ;;
    *) ref_ok=0; echo "# reference batch $b: $out"; sed 's/^/# /' "$WORK/ref.err" ;;
  esac
  eval "REF_WORK_$b=$(printf '%s\n' "$out" | sed -n "s/^$WORK_SEEN //p")"
  eval "REF_DUMP_$b=$(dump dim_ref)"
  eval "REF_STATE_$b=\"$(state crash_ref)\""
  eval "REF_COUNTS_$b=\"$(state_counts crash_ref)\""
done
is "$ref_ok" 1 "the reference run loads every batch"
is "$(sql 'SELECT count(*) FROM dim_ref WHERE is_current AND NOT is_deleted')" \
   "$(for b in $BATCHES; do tail -n +2 "$WORK/b$b.csv"; done |
      awk -F, '{ if ($5 == "D") delete alive[$1]; else alive[$1] = 1 } END { print length(alive) }')" \
   "reference: the initial keys, plus the new ones, less the deleted ones"
is "$(sql 'SELECT count(*) - count(DISTINCT id) FROM dim_ref WHERE is_current')" 0 \
   "reference: one current version per key"
distinct=$(for b in $BATCHES; do eval "echo \$REF_DUMP_$b"; done | sort -u | wc -l)
is "$distinct" 4 "every batch changes the reference dimension (the comparison is not vacuous)"

# ---- the same batches, killed ----------------------------------------------
# points_for BATCH: its kill points; the last ones at fractions of the work
# the reference's run of the batch did after reading its feed
points_for() {
  eval "_w=\$REF_WORK_$1"
  if [ "$1" = 0 ]; then
    _p="start open read:0.3 read:0.8"
    _f="0.01 0.15 0.3 0.45 0.6 0.75 0.9"
  else
    _p="open read:0.5"
    _f="0.02 0.25 0.5 0.75"
  fi
  for _x in $_f; do
    _p="$_p $WORK_AS:$(awk -v w="${_w:-0}" -v f="$_x" 'BEGIN { printf "%d", w * f }')"
  done
  echo "$_p"
}

# key_index TABLE: 1 when TABLE has dwload's key index (TABLE_dwl_key)
key_index() {
  case $WAREHOUSE in
    postgresql) sql "SELECT count(*) FROM pg_indexes WHERE tablename = '$1' AND indexname = '$1_dwl_key'" ;;
    mariadb) sql "SELECT count(DISTINCT index_name) FROM information_schema.statistics
                  WHERE table_schema = database() AND table_name = '$1' AND index_name = '$1_dwl_key'" ;;
    *) sql "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = '$1_dwl_key'" ;;
  esac
}

# Where DDL commits by itself (MariaDB), the table and its key index are
# one statement, so no kill can fall between them (the kills below land
# there only by chance): the server's general log shows the statements.
if is_warehouse mariadb; then
  sql "SET GLOBAL log_output = 'TABLE'" >/dev/null
  # (the log's rows since now: a server kept between runs has older ones)
  LOG_SINCE=$(sql "SELECT NOW(6)")
  sql "SET GLOBAL general_log = 1" >/dev/null
  printf 'id,name,lmd\n1,a,2024-01-01\n' >"$WORK/atomic.csv"
  dw run "$(mkjob atomic "$WORK/atomic.csv" atomic_dim <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)"
  sql "SET GLOBAL general_log = 0" >/dev/null
  is "$RC $(sql "SELECT count(*) FROM mysql.general_log WHERE event_time >= '$LOG_SINCE'
                AND argument LIKE 'CREATE TABLE \`atomic_dim\`%INDEX \`atomic_dim_dwl_key\`%'")" \
    "0 1" "MariaDB: the table is created with its key index in one statement"
  is "$(sql "SELECT count(*) FROM mysql.general_log WHERE argument LIKE 'CREATE INDEX%atomic_dim%'")" 0 \
    "MariaDB: no CREATE INDEX follows it"
fi

J=$(crash_job crash dim)
pre_dump=none
kills=0 rolled_back=0 committed=0 bad=""
for b in $BATCHES; do
  eval "post_dump=\$REF_DUMP_$b; post_state=\$REF_STATE_$b; post_counts=\$REF_COUNTS_$b"
  done_batch=0
  for p in $(points_for "$b"); do
    [ "$done_batch" = 0 ] || break
    out=$(FEED="$WORK/b$b.csv" $KILLAT "$p" "$WORK/b$b.csv" -- "$DWLOAD" run "$J" 2>>"$WORK/kill.err")
    case $out in
      "killed at"*) kills=$((kills + 1)) ;;
      # The run was quicker this time and ended first: no kill, but it
      # must have committed its batch, checked as for a late kill.
      *"not reached (status 0,"*) ;;
      *) bad="$bad; batch $b $p: $out"; continue ;;
    esac
    # The warehouse after the kill: all of the run or none of it, and no lock.
    if [ "$b" != 0 ] || [ "$p" != start ]; then
      lock_free crash || bad="$bad; batch $b $p: the killed run's lock outlived it"
    fi
    now=$(dump dim)
    st=$(state crash)
    if [ "$now" = "$pre_dump" ] && [ "$st" != "$post_state" ]; then
      rolled_back=$((rolled_back + 1))
    elif [ "$now" = "$post_dump" ] && [ "$st" = "$post_state" ]; then
      case $out in "killed at"*) committed=$((committed + 1)) ;; esac
      done_batch=1
    else
      bad="$bad; batch $b $p ($out): the warehouse is neither before nor after the batch (state: $st)"
    fi
  done
  FEED="$WORK/b$b.csv" dw run "$J"
  is "$RC" 0 "batch $b: the run after the kills succeeds"
  is "$(dump dim)" "$post_dump" "batch $b: the dimension equals the uninterrupted run's"
  is "$(state crash)" "$post_state" "batch $b: the checkpoint equals the uninterrupted run's"
  if [ "$done_batch" = 0 ]; then
    is "$(state_counts crash)" "$post_counts" \
       "batch $b: the rerun did all of the uninterrupted run's work (the killed runs kept nothing)"
  else
    is "$(field skipped)" "$(field read)" "batch $b: committed before its kill, so the rerun skips every row"
  fi
  if [ "$b" = 0 ]; then
    # MariaDB commits DDL by itself: a kill between a CREATE TABLE and a
    # CREATE INDEX once left the table without its key index for good (the
    # next runs found the table, and read it by full scans).
    is "$(key_index dim)" 1 "batch 0: the table the killed runs created has its key index"
  fi
  pre_dump=$post_dump
done

echo "# $kills kills: $rolled_back rolled back, $committed after the commit"
is "${bad:-none}" none "every kill left the warehouse before or after its batch, never between"
is "$([ "$kills" -ge 20 ] && echo yes || echo "only $kills")" yes "at least 20 kill points"
is "$([ "$rolled_back" -ge 10 ] && echo yes || echo "only $rolled_back")" yes \
   "most kills land before the commit (they test the rollback)"

done_testing
