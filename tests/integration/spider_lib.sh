# The Spider servers for a test script, and its helpers: sourced by
# spider.sh before anything else (it sources lib.sh itself, after pointing
# the MariaDB warehouse at the Spider head).  Sets S1 and S2, the head's
# SERVERs for the shards, and the shards' copy of the test's database,
# dropped at exit with the SERVERs.
#
# Defines shard, spider_table, feed_job, spider_job, history, on_shards,
# per_shard, com, ran_at_most, list_job, side_by_side and initial (each
# described where it is defined).
if [ "${WAREHOUSE:-sqlite}" = mariadb ]; then
  if [ -z "${DWL_SPIDER_PORT:-}" ]; then
    if [ "${CI:-}" = true ]; then
      echo "Bail out! no Spider servers (DWL_SPIDER_*): tests/servers.sh starts them in CI"
      exit 1
    fi
    echo "1..0 # SKIP no Spider servers (DWL_SPIDER=1 scripts/test, or tests/servers.sh's spider_start)"
    exit 0
  fi
  DWL_MARIADB_HOST=$DWL_SPIDER_HOST
  DWL_MARIADB_PORT=$DWL_SPIDER_PORT
  DWL_MARIADB_USER=$DWL_SPIDER_USER
  DWL_MARIADB_PASSWORD=$DWL_SPIDER_PASSWORD
fi
. "$TOP_SRCDIR/tests/integration/lib.sh"
skip_unless_warehouse mariadb "Spider is a MariaDB engine: spider.mariadb.wh runs this on its head"

# shard N ARGS...: the mariadb client on shard N's copy of the database
shard() {
  eval "_sh_host=\$DWL_SPIDER_SHARD$1_HOST _sh_port=\$DWL_SPIDER_SHARD$1_PORT"
  shift
  MYSQL_PWD=$DWL_SPIDER_PASSWORD mariadb --no-defaults --protocol=tcp -h "$_sh_host" -P "$_sh_port" \
    -u "$DWL_SPIDER_USER" --connect-timeout=10 -N -B "$@"
}

# The shards' databases and the head's SERVERs go with the test.
S1=dwl_s1_$$
S2=dwl_s2_$$
WH_AT_EXIT='shard 1 -e "DROP DATABASE IF EXISTS $WH_DB" >/dev/null 2>&1
shard 2 -e "DROP DATABASE IF EXISTS $WH_DB" >/dev/null 2>&1
sql "DROP SERVER IF EXISTS $S1" >/dev/null 2>&1; sql "DROP SERVER IF EXISTS $S2" >/dev/null 2>&1'
for n in 1 2; do
  # A prepared XA branch makes a run wait this long on a shard, whatever
  # the head's lock timeouts: the shard's own, shortened for the test (new
  # sessions only: each run's Spider connections are new).
  # A prepared XA branch survives a crash only with its redo written at
  # the prepare: innodb_flush_log_at_trx_commit 1 (tests/servers.sh
  # starts the servers with 0, for speed).
  shard $n -e "SET GLOBAL innodb_lock_wait_timeout = 2; SET GLOBAL innodb_flush_log_at_trx_commit = 1;
               CREATE DATABASE $WH_DB" ||
    { echo "Bail out! cannot create the database on shard $n"; exit 1; }
done
sql "CREATE SERVER $S1 FOREIGN DATA WRAPPER mysql OPTIONS (HOST '$DWL_SPIDER_SHARD1_HOST',
       PORT $DWL_SPIDER_SHARD1_PORT, USER '$DWL_SPIDER_USER', PASSWORD '$DWL_SPIDER_PASSWORD', DATABASE '$WH_DB')"
sql "CREATE SERVER $S2 FOREIGN DATA WRAPPER mysql OPTIONS (HOST '$DWL_SPIDER_SHARD2_HOST',
       PORT $DWL_SPIDER_SHARD2_PORT, USER '$DWL_SPIDER_USER', PASSWORD '$DWL_SPIDER_PASSWORD', DATABASE '$WH_DB')"

# spider_table T [COLUMNS]: dwload's scd2 layout for T (or COLUMNS), as a
# Spider table on the head partitioned by KEY (id) over the shards, and its
# partitions on them.  The partition key must be in every unique key: the
# primary key is (dim_id, id).
spider_table() {
  _cols=${2:-"dim_id BIGINT NOT NULL, id BIGINT NOT NULL, name VARCHAR(20), lmd DATETIME(6), valid_from DATETIME(6),
         valid_to DATETIME(6), is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL,
         PRIMARY KEY (dim_id, id), KEY ${1}_key (id, is_current)"}
  shard 1 -D "$WH_DB" -e "CREATE TABLE $1 ($_cols) ENGINE=InnoDB"
  shard 2 -D "$WH_DB" -e "CREATE TABLE $1 ($_cols) ENGINE=InnoDB"
  sql "CREATE TABLE $1 ($_cols) ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"$1\"'
         PARTITION BY KEY (id) (PARTITION p1 COMMENT = 'srv \"$S1\"', PARTITION p2 COMMENT = 'srv \"$S2\"')"
}

# feed_job NAME TABLE CONN REST: a csv job on ${FEED}; REST: what follows
# target.table (more target keys, the load mapping, ...)
feed_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: \${FEED}
target:
  connection: "$3"
  table: $2
$4
EOF
}

# spider_job NAME TABLE CONN [TARGET-LINES]: a csv -> scd2 job on ${FEED}
spider_job() {
  feed_job "$1" "$2" "$3" "${4:-}
load:
  mode: scd2
  key: [id]
  lmd: lmd"
}

# history T: every version through the head; on_shards T: the same read
# from both shards; per_shard T: "rows on shard 1, rows on shard 2, keys
# on both"
history() {
  sql "SELECT id, name, valid_from, valid_to, is_current FROM $1 ORDER BY id, valid_from"
}
on_shards() {
  for n in 1 2; do
    shard $n -D "$WH_DB" -e "SELECT id, name, valid_from, valid_to, is_current FROM $1"
  done | sort -t "$(printf '\t')" -k1,1n -k3,3 | tr '\t' '|' | sed 's/|NULL|/||/; s/\.000000//g'
}
per_shard() {
  _a=$(shard 1 -D "$WH_DB" -e "SELECT COUNT(*) FROM $1")
  _b=$(shard 2 -D "$WH_DB" -e "SELECT COUNT(*) FROM $1")
  _both=$( { shard 1 -D "$WH_DB" -e "SELECT DISTINCT id FROM $1"; shard 2 -D "$WH_DB" -e "SELECT DISTINCT id FROM $1"; } |
           sort | uniq -d | wc -l)
  echo "$_a,$_b,$_both"
}
# com STATEMENT: how many of them (Com_insert, Com_update) both shards ran
com() {
  echo $(($(shard 1 -e "SHOW GLOBAL STATUS LIKE 'Com_$1'" | cut -f2) +
          $(shard 2 -e "SHOW GLOBAL STATUS LIKE 'Com_$1'" | cut -f2)))
}
# ran_at_most MAX GOT WHAT STATEMENTS: the shards ran GOT statements, at
# least one and at most MAX
ran_at_most() {
  if [ "$2" -gt 0 ] && [ "$2" -le "$1" ]; then
    pass "$3: the shards ran $2 $4"
  else
    fail "$3: the shards ran at most $1 $4" "got: $2"
  fi
}
# list_job NAME TABLE LOAD: a csv job on ${FEED} into TABLE through the
# head, XA on; LOAD: its load (and dimension) mappings
list_job() {
  feed_job "$1" "$2" "$XA_ON" "$3"
}
# side_by_side WHAT TABLE FEED: FEED into TABLE_local, then (logging at
# debug) into the Spider table TABLE: both exit 0, with the same counts
side_by_side() {
  FEED=$3 dw run "$WORK/${2}_local.yaml"
  is "$RC" 0 "$1: the local table's run exits 0"
  _sbs=$(counts)
  FEED=$3 dw --log-level debug run "$WORK/$2.yaml"
  is "$RC" 0 "$1: the Spider table's run exits 0"
  is "$(counts)" "$_sbs" "$1: the same counts as the local table's"
}
# initial WHAT FEED JOB...: FEED into each JOB, each run exiting 0
initial() {
  _what=$1 _feed=$2
  shift 2
  for _j in "$@"; do
    FEED=$_feed dw run "$_j"
    is "$RC" 0 "$_what: the initial load exits 0 ($(basename "$_j" .yaml))"
  done
}

# ---- a shard killed at the commit (tests/hooks/commitfail.c holds the run there)
HOOK="${TOP_BUILDDIR:-$TOP_SRCDIR}/tests/hooks/.libs/commitfail.so"
[ -f "$HOOK" ] || { echo "Bail out! no commit hook at $HOOK (make check builds it)"; exit 1; }
# In the sanitizer build (scripts/sanitize) ASan wants its runtime first
# in the preload list; the hook only wraps SQLEndTran, which ASan leaves
# alone (as twodays.sh says).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
# restart_shard2 WHAT: starts shard 2 again on its datadir with the
# command line saved in $WORK/shard2.cmd, waits until it answers, sets
# its globals again as above
restart_shard2() {
  # (the test's FIFO descriptors closed: a server holding one would keep
  # a blocked session's input open after the test)
  ( set --
    while IFS= read -r _a; do set -- "$@" "$_a"; done <"$WORK/shard2.cmd"
    exec 4>&- 7>&- 8>&-
    exec setsid "$@" </dev/null >/dev/null 2>&1 ) &
  if wait_until 600 shard 2 -e "SELECT 1" >/dev/null &&
     shard 2 -e "SET GLOBAL innodb_lock_wait_timeout = 2; SET GLOBAL innodb_flush_log_at_trx_commit = 1"; then
    pass "${1:-prepared, killed}: shard 2 restarted on its datadir"
  else
    fail "${1:-prepared, killed}: shard 2 restarted on its datadir" "$(tail -n 5 "$(dirname "$PIDFILE")/error.log")"
  fi
}
# kill_at_commit WHAT JOB FEED: JOB run on FEED held at its commit (the
# hook's hold), shard 2 killed there with SIGKILL, the commit let go on,
# shard 2 started again; RC, ERR and LAST are the run's
kill_at_commit() {
  GO=$WORK/go.fifo
  rm -f "$GO" "$GO.ready"
  mkfifo "$GO"
  FEED=$3 DWL_TEST_COMMIT=hold DWL_TEST_COMMIT_FIFO=$GO LD_PRELOAD=$HOOK "$DWLOAD" run "$2" \
    >"$WORK/r.out" 2>"$WORK/r.err" &
  _kpid=$!
  if wait_until 300 test -e "$GO.ready"; then
    pass "$1: the run waits at its commit"
  else
    fail "$1: the run waits at its commit" "$(cat "$WORK/r.err")"
  fi
  PIDFILE=$(shard 2 -e "SELECT @@pid_file")
  SPID=$(cat "$PIDFILE")
  # Its command line, to start it again as tests/servers.sh did.
  tr '\0' '\n' <"/proc/$SPID/cmdline" >"$WORK/shard2.cmd"
  kill -9 "$SPID"
  wait_until 300 eval '! kill -0 "$SPID"' && pass "$1: shard 2 is gone" || fail "$1: shard 2 is gone" "pid $SPID"
  exec 4<>"$GO"
  echo go >&4
  finish "$_kpid" 60
  RC=$?
  exec 4>&-
  ERR=$(cat "$WORK/r.err")
  LAST=$(tail -n 1 "$WORK/r.out")
  restart_shard2 "$1"
}
