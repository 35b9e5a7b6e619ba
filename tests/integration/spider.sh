#!/bin/sh
# MariaDB Spider targets: a head whose dimension is a Spider table
# partitioned by key over two shard servers (tests/servers.sh's
# spider_start).  dwload tells it from a local table (ENGINE SPIDER),
# refuses it while spider_internal_xa is off (a shard failing at the
# commit would keep part of the run), loads it with XA on or with
# target.accept_non_atomic (where a shard failing at the commit is exit 5),
# and names a prepared XA transaction holding the locks its shards wait on
# (XA RECOVER), in a run and in check.
#
# Runs as spider.mariadb.wh only, on the Spider head instead of the plain
# MariaDB server; skipped without the Spider servers (DWL_SPIDER=1, and CI,
# start them), except under CI=true, where that is a failure.
. "$TOP_SRCDIR/tests/integration/spider_lib.sh"

printf 'id,name,lmd\n1,ann,2024-01-01\n2,bob,2024-01-01\n3,cy,2024-01-01\n4,dee,2024-01-01\n' >"$WORK/day1.csv"
printf 'id,name,lmd\n1,ann2,2024-01-02\n2,bob,2024-01-01\n3,cy,2024-01-01\n4,dee2,2024-01-02\n5,eve,2024-01-02\n' \
  >"$WORK/day2.csv"
XA_ON="$WH_CONN;InitStmt=SET SESSION spider_internal_xa = ON"

# ---- a Spider table with XA off (the default): refused --------------------------
spider_table dim
J_OFF=$(spider_job dim_off dim "$WH_CONN")
FEED=$WORK/day1.csv dw run "$J_OFF"
is "$RC" 4 "XA off: the run exits 4"
like "$ERR" "table dim is a SPIDER table, whose rows live on other servers, and this session's spider_internal_xa is off" \
  "XA off: the message names the engine and the setting"
like "$ERR" "a server that fails at the commit would leave part of the run committed" "XA off: and why"
like "$ERR" "target.accept_non_atomic: true" "XA off: the hint names the option"
is "$(per_shard dim)" "0,0,0" "XA off: nothing reached the shards"
FEED=$WORK/day1.csv dw check --connect "$J_OFF"
is "$RC" 4 "XA off: check exits 4"
like "$OUT" "table    FAILED table dim is a SPIDER table" "XA off: check's table step says why"

# ---- XA on, but the checkpoint on the head: refused ---------------------------------
# The XA-off run created dwload_state (and dwload_runs) on the head.
J=$(spider_job dim "dim" "$XA_ON")
FEED=$WORK/day1.csv dw run "$J"
is "$RC" 4 "local state: the run exits 4"
like "$ERR" "table dim is a SPIDER table but the checkpoint's table dwload_state is a table of this server" \
  "local state: the message names the state table"
like "$ERR" "make dwload_state a SPIDER table on one of those servers" "local state: and what to do"
is "$(per_shard dim)" "0,0,0" "local state: nothing reached the shards"
FEED=$WORK/day1.csv dw check --connect "$J"
is "$RC" 4 "local state: check exits 4"
like "$OUT" "table    FAILED table dim is a SPIDER table but the checkpoint's table dwload_state" \
  "local state: check's table step says why"

# The state table behind Spider, as the man page says: dwload's columns
# (the head's copy gives them) on shard 1, a Spider table on the head.
# (in ANSI_QUOTES, the session mode of the test's client: unquoted for the shard's)
STATE_DDL=$(sql "SHOW CREATE TABLE dwload_state" | cut -d'|' -f2- | tr -d '"')
shard 1 -D "$WH_DB" -e "$STATE_DDL" || fail "dwload_state created on shard 1"
OLD_ROWS=$(sql "SELECT job, last_status FROM dwload_state ORDER BY job")
sql "RENAME TABLE dwload_state TO dwload_state_old"
sql "$(printf '%s' "$STATE_DDL" | sed 's/ENGINE=InnoDB/ENGINE=SPIDER/') COMMENT='wrapper \"mysql\", srv \"$S1\", table \"dwload_state\"'"
sql "INSERT INTO dwload_state SELECT * FROM dwload_state_old"
like "$OLD_ROWS" "dim_off" "state moved: the head's table had rows"
is "$(shard 1 -D "$WH_DB" -e "SELECT job, last_status FROM dwload_state ORDER BY job" | tr '\t' '|' | sed 's/|NULL$/|/')" \
  "$OLD_ROWS" "state moved: its rows are on shard 1"

# ---- XA on: scd2, initial and delta, on the memory engine ---------------------------
FEED=$WORK/day1.csv dw run "$J"
is "$RC" 0 "XA on: the initial load exits 0"
like "$ERR" "table dim is a SPIDER table: its servers commit together (spider_internal_xa is on)" \
  "XA on: the log says the servers commit together"
like "$ERR" "dwload_state is a SPIDER table too: the checkpoint commits with the rows" \
  "XA on: the log says the checkpoint commits with the rows"
is "$(shard 1 -D "$WH_DB" -e "SELECT checkpoint FROM dwload_state WHERE job = 'dim'")" "2024-01-01 00:00:00" \
  "XA on: the checkpoint row lives on shard 1"
FEED=$WORK/day2.csv dw run "$J"
is "$RC" 0 "XA on: the delta exits 0"
is "$(counts)" "read=5 skipped=2 inserted=3 expired=2 updated=0 deleted=0 unchanged=0" "XA on: the delta's counts"
H='1|ann|2024-01-01 00:00:00|2024-01-02 00:00:00|0
1|ann2|2024-01-02 00:00:00||1
2|bob|2024-01-01 00:00:00||1
3|cy|2024-01-01 00:00:00||1
4|dee|2024-01-01 00:00:00|2024-01-02 00:00:00|0
4|dee2|2024-01-02 00:00:00||1
5|eve|2024-01-02 00:00:00||1'
is "$(history dim)" "$H" "XA on: the whole history through the head"
is "$(on_shards dim)" "$H" "XA on: the same history on the shards together"
PS=$(per_shard dim)
case $PS in
  0,*|*,0,*|*,*,[1-9]*) fail "XA on: both shards hold rows, each key on one shard" "got: $PS" ;;
  *) pass "XA on: both shards hold rows, each key on one shard ($PS)" ;;
esac
FEED=$WORK/day2.csv dw check --connect "$J"
is "$RC" 0 "XA on: check exits 0"
like "$OUT" "xa       ok     no prepared XA transaction" "XA on: check looked for prepared XA transactions"

# ---- XA off, accepted --------------------------------------------------------------
spider_table dim_acc
J_ACC=$(spider_job dim_acc dim_acc "$WH_CONN" "  accept_non_atomic: true")
FEED=$WORK/day1.csv dw run "$J_ACC"
is "$RC" 0 "accept_non_atomic: the run exits 0 with XA off"
like "$ERR" "warn: table dim_acc is a SPIDER table and spider_internal_xa is off: a server that fails at the commit may leave part of the run committed" \
  "accept_non_atomic: with a warning"
is "$(history dim_acc)" "$(printf '1|ann|2024-01-01 00:00:00||1\n2|bob|2024-01-01 00:00:00||1\n3|cy|2024-01-01 00:00:00||1\n4|dee|2024-01-01 00:00:00||1')" \
  "accept_non_atomic: the rows through the head"
is "$(on_shards dim_acc)" "$(history dim_acc)" "accept_non_atomic: the same rows on the shards"

# ---- new versions reach the shards in multi-row INSERTs ------------------------------
# Spider runs MariaDB's bulk parameter sets (how dwload inserts into a
# plain MariaDB table) one row at a time, an INSERT per row to a shard;
# a Spider table gets multi-row INSERTs, which reach each shard as a few.
# Com_insert counts a server's INSERT statements, however many rows each
# (the head's: dwload's, the shards': the head's).
spider_table dim_bulk
J_BULK=$(spider_job dim_bulk dim_bulk "$XA_ON")
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 2000; i++) printf "%d,n%d,2024-01-01\n", i, i }' >"$WORK/bulk.csv"
INS0=$(com insert)
HINS0=$(sql "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_INSERT'")
FEED=$WORK/bulk.csv dw run "$J_BULK"
is "$RC" 0 "bulk: a 2000-row initial load exits 0"
INS=$(($(com insert) - INS0))
HINS=$(($(sql "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_INSERT'") - HINS0))
PS=$(per_shard dim_bulk)
is "$(($(echo "$PS" | cut -d, -f1) + $(echo "$PS" | cut -d, -f2)))" 2000 "bulk: the shards hold the 2000 rows"
if [ "$INS" -gt 0 ] && [ "$INS" -lt 200 ]; then
  pass "bulk: the shards ran $INS INSERT statements for 2000 rows"
else
  fail "bulk: the shards ran fewer than 200 INSERT statements for 2000 rows" "got: $INS"
fi
# Each of the head's INSERTs reaches a shard as one (spider_bulk_size at 1
# MiB in dwload's session), not one per 16,000 bytes of it.
if [ "$INS" -le $((2 * HINS)) ]; then
  pass "bulk: the shards ran $INS INSERTs for the head's $HINS, at most one per shard each"
else
  fail "bulk: the shards ran at most one INSERT per shard for each of the head's $HINS" "got: $INS"
fi
is "$(on_shards dim_bulk | sed -n '1p;2000p')" "1|n1|2024-01-01 00:00:00||1
2000|n2000|2024-01-01 00:00:00||1" "bulk: the first and last keys' versions on the shards"

# ---- statistics of an empty table; the expire as key lists --------------------------
# The head plans with the shards' statistics as it last fetched them:
# held here for an hour (spider_sts_interval, spider_crd_interval), they
# are those of dim_stats before its load, an empty table, and a plan made
# with them read the table again for each staged row of an expire joined
# with its stage (87 s for 6,000 rows into 100k).  dwload's sessions fetch
# them for each statement, and the expire goes as key lists, a statement
# the head hands to each shard whole (src/write/staged_lists.c): a few
# UPDATE statements on the shards, not one per expired version (and a
# SELECT before each).  Handler_read_rnd_next counts the rows a server
# reads by full scans: reading the current versions is one scan of the
# 2000 rows (200 keys are not a tenth of the table: no keyed read), and
# each shard may scan its 1000 once more for the expire, where a read per
# staged row would be 200 times that.
STATS_WAS=$(sql "SELECT CONCAT('spider_sts_interval = ', @@GLOBAL.spider_sts_interval,
                                ', spider_crd_interval = ', @@GLOBAL.spider_crd_interval)")
WH_AT_EXIT="$WH_AT_EXIT
sql \"SET GLOBAL $STATS_WAS\" >/dev/null 2>&1"
sql "SET GLOBAL spider_sts_interval = 3600, spider_crd_interval = 3600"
spider_table dim_stats
J_STATS=$(spider_job dim_stats dim_stats "$XA_ON")
FEED=$WORK/bulk.csv dw run "$J_STATS"
is "$RC" 0 "stale statistics: the 2000-row initial load exits 0"
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 2000; i += 10) printf "%d,m%d,2024-01-02\n", i, i }' >"$WORK/bulk2.csv"
scan_rows() {
  echo $(($(shard 1 -e "SHOW GLOBAL STATUS LIKE 'Handler_read_rnd_next'" | cut -f2) +
          $(shard 2 -e "SHOW GLOBAL STATUS LIKE 'Handler_read_rnd_next'" | cut -f2)))
}
FEED=$WORK/bulk2.csv dw plan --sql "$J_STATS"
is "$RC" 0 "key lists: plan exits 0"
like "$OUT" "-- dwl_stage_expire: its 200 rows read back in order of \`dwl_stage_row\` and applied 500 a statement, as:
UPDATE \`dim_stats\` USE INDEX () SET \`valid_to\` = CASE WHEN (\`id\` = ? AND \`valid_from\` = ?) THEN ? END" \
  "key lists: plan --sql shows how the expire would go"
SCAN0=$(scan_rows)
UPD0=$(com update)
FEED=$WORK/bulk2.csv dw --log-level debug run "$J_STATS"
is "$RC" 0 "stale statistics: the delta exits 0"
is "$(counts)" "read=200 skipped=0 inserted=200 expired=200 updated=0 deleted=0 unchanged=0" \
  "stale statistics: the delta's counts"
SCANNED=$(($(scan_rows) - SCAN0))
UPD=$(($(com update) - UPD0))
if [ "$SCANNED" -lt 6000 ]; then
  pass "stale statistics: the shards read $SCANNED rows by full scans (the current versions, and each shard's part)"
else
  fail "stale statistics: the shards read fewer than 6000 rows by full scans" "got: $SCANNED"
fi
like "$ERR" "dwl_stage_expire applied by key lists: 200 rows in 1 statements" "key lists: the log says how"
# (the checkpoint's row on shard 1 takes an UPDATE too)
ran_at_most 6 "$UPD" "key lists" "UPDATE statements for 200 expires"
sql "SET GLOBAL $STATS_WAS"

# ---- key lists: a Spider table's history equals a local table's -----------------------
# A Spider table's staged expires (deletions among them), type 1
# overwrites of every version and history repairs go to the shards as key
# lists (src/write/staged_lists.c); a table of the head alone takes them
# as joins.  Random change streams with late rows (tests/late_gen.py),
# run after run into both, must leave the same history, row for row.
KL_SEED=${DWL_DIFF_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# key lists: seed $KL_SEED (DWL_DIFF_SEED=$KL_SEED to repeat)"
python3 "$TOP_SRCDIR/tests/late_gen.py" "$KL_SEED" 40 "$WORK/kl" 7200
spider_table kl "sk CHAR(64) NOT NULL, id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  v TEXT, t TEXT, op TEXT, lmd DATETIME(6), valid_from DATETIME(6), valid_to DATETIME(6),
  is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL, PRIMARY KEY (sk, id), KEY kl_key (id, is_current)"
# the late-row scd2 job of late_diff.sh's second layout
KL_LOAD="load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D]}
  lookback: 2h
  late: repair
  type1: [t]
  type1_scope: all
dimension:
  surrogate_key: sk
  surrogate_strategy: hash"
J_KL=$(list_job kl kl "$KL_LOAD")
J_KLL=$(list_job kl_local kl_local "$KL_LOAD")
_k=1 _bad="" _lists="" _late=0 _expired=0 _deleted=0
while [ "$_k" -le "$(cat "$WORK/kl/runs")" ]; do
  cp "$WORK/kl/run$_k.csv" "$WORK/kl/src.csv"
  FEED=$WORK/kl/src.csv dw run "$J_KLL"
  [ "$RC" = 0 ] || { _bad="local run $_k exited $RC: $(printf '%s' "$ERR" | grep -v ' info: ' | head -n 3)"; break; }
  FEED=$WORK/kl/src.csv dw --log-level debug run "$J_KL"
  [ "$RC" = 0 ] || { _bad="Spider run $_k exited $RC: $(printf '%s' "$ERR" | grep -v ' info: ' | head -n 3)"; break; }
  _lists="$_lists $(printf '%s' "$ERR" | sed -n 's/.* \(dwl_stage_[a-z0-9_]*\) applied by key lists.*/\1/p' | tr '\n' ' ')"
  _late=$((_late + $(field late_repaired)))
  _expired=$((_expired + $(field expired)))
  _deleted=$((_deleted + $(field deleted)))
  _k=$((_k + 1))
done
is "$_bad" "" "key lists: every run succeeds on both tables"
for _s in dwl_stage_expire dwl_stage_type1_all; do
  case " $_lists " in
    *" $_s "*) pass "key lists: $_s went as key lists" ;;
    *) fail "key lists: $_s went as key lists (seed $KL_SEED)" "got: $_lists" ;;
  esac
done
# (a reshape moves valid_from, which its key lists would match on: it
# keeps its join)
case " $_lists " in
  *" dwl_stage_reshape "*) fail "key lists: dwl_stage_reshape keeps its join" "got: $_lists" ;;
  *) pass "key lists: dwl_stage_reshape keeps its join" ;;
esac
if [ "$_late" -gt 0 ] && [ "$_expired" -gt 0 ] && [ "$_deleted" -gt 0 ]; then
  pass "key lists: the runs repaired $_late late rows, expired $_expired versions, deleted $_deleted keys"
else
  fail "key lists: the runs repaired, expired and deleted (seed $KL_SEED)" \
    "late $_late, expired $_expired, deleted $_deleted"
fi
KL_Q="SELECT sk, id, v, t, op, lmd, valid_from, valid_to, is_current, is_deleted FROM %s ORDER BY id, valid_from, is_deleted"
# shellcheck disable=SC2059
KL_LOCAL=$(sql "$(printf "$KL_Q" kl_local)")
# shellcheck disable=SC2059
KL_SPIDER=$(sql "$(printf "$KL_Q" kl)")
if [ -n "$KL_LOCAL" ] && [ "$KL_SPIDER" = "$KL_LOCAL" ]; then
  pass "key lists: the Spider table's $(printf '%s\n' "$KL_SPIDER" | wc -l) versions equal the local table's"
else
  printf '%s\n' "$KL_SPIDER" >"$WORK/kl/spider.txt"
  printf '%s\n' "$KL_LOCAL" >"$WORK/kl/local.txt"
  fail "key lists: the Spider table's history equals the local table's (seed $KL_SEED)" \
    "$(diff "$WORK/kl/spider.txt" "$WORK/kl/local.txt" | head -n 20)"
fi

# ---- key lists: a stage read back in pages ------------------------------------
# The stage is read back 10,000 rows a page (20 statements of 500):
# 10,500 expires take two pages and 21 statements, and every key keeps
# one current version.
spider_table pg
J_PG=$(spider_job pg pg "$XA_ON")
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 10500; i++) printf "%d,n%d,2024-01-01\n", i, i }' >"$WORK/pg1.csv"
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 10500; i++) printf "%d,m%d,2024-01-02\n", i, i }' >"$WORK/pg2.csv"
FEED=$WORK/pg1.csv dw run "$J_PG"
is "$RC" 0 "pages: the 10,500-row initial load exits 0"
FEED=$WORK/pg2.csv dw --log-level debug run "$J_PG"
is "$RC" 0 "pages: the delta exits 0"
is "$(counts)" "read=10500 skipped=0 inserted=10500 expired=10500 updated=0 deleted=0 unchanged=0" "pages: the delta's counts"
like "$ERR" "dwl_stage_expire applied by key lists: 10500 rows in 21 statements" "pages: two pages, 21 statements"
is "$(sql "SELECT COUNT(*), SUM(is_current), SUM(is_current = 0 AND valid_to = '2024-01-02 00:00:00'),
                  COUNT(DISTINCT CASE WHEN is_current = 1 THEN id END) FROM pg")" "21000|10500|10500|10500" \
  "pages: every key's first version expired, its second current"
# A keyed lookup of 1000 keys: two key lists, a SELECT on each shard for
# each (Com_select), where a join with the head's key stage ran one per key.
J_PGK=$(spider_job pg_keys pg "$XA_ON")
echo "  lookup: keys" >>"$J_PGK"
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 10500; i += 10) printf "%d,o%d,2024-01-03\n", i, i }' >"$WORK/pg3.csv"
SEL0=$(com select)
FEED=$WORK/pg3.csv dw --log-level debug run "$J_PGK"
SEL=$(($(com select) - SEL0))
is "$RC|$(counts)" "0|read=1050 skipped=0 inserted=1050 expired=1050 updated=0 deleted=0 unchanged=0" \
  "keyed lookup: the delta of 1050 keys loads"
like "$ERR" "the delta's keys read by key lists: 3 statements" "keyed lookup: its keys read by 3 key lists"
ran_at_most 20 "$SEL" "keyed lookup" "SELECT statements for 1050 keys"

# ---- key lists: a history repair's drops ---------------------------------------
# A stored history with two equal versions in a row (late.sh's redundant
# case, for 300 keys): a late row makes the replay merge them, one
# version reshaped (by its join), the other dropped (by key lists).
RD_COLS="dim_id BIGINT NOT NULL, id BIGINT NOT NULL, v VARCHAR(8), lmd DATETIME(6), valid_from DATETIME(6) NOT NULL, valid_to DATETIME(6),
  is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL, PRIMARY KEY (id, valid_from, is_deleted)"
spider_table rd "$RD_COLS"
sql "CREATE TABLE rd_local ($RD_COLS)"
RD_LOAD="load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookback: 30d"
J_RD=$(list_job rd rd "$RD_LOAD")
J_RDL=$(list_job rd_local rd_local "$RD_LOAD")
awk 'BEGIN { print "id,v,lmd"; for (i = 1; i <= 300; i++) printf "%d,a,2024-01-01\n%d,b,2024-01-10\n", i, i }' >"$WORK/rd1.csv"
awk 'BEGIN { print "id,v,lmd"; for (i = 1; i <= 300; i++) printf "%d,a,2024-01-05\n", i }' >"$WORK/rd2.csv"
for _t in rd_local rd; do
  FEED=$WORK/rd1.csv dw run "$WORK/$_t.yaml"
  is "$RC" 0 "drops: the history loads into $_t"
  sql "UPDATE $_t SET v = 'a' WHERE valid_from = '2024-01-10 00:00:00'"
done
side_by_side drops rd "$WORK/rd2.csv"
like "$ERR" "dwl_stage_drop applied by key lists: 300 rows in 1 statements" "drops: the drops as key lists"
like "$ERR" "the keys with late rows read by key lists: 1 statements" "drops: their histories read by a key list"
RD_Q="SELECT id, v, valid_from, valid_to, is_current, is_deleted FROM %s ORDER BY id, valid_from"
# shellcheck disable=SC2059
RD_LOCAL=$(sql "$(printf "$RD_Q" rd_local)")
# shellcheck disable=SC2059
is "$(sql "$(printf "$RD_Q" rd)")" "$RD_LOCAL" "drops: the Spider table's history equals the local table's"
is "$(printf '%s\n' "$RD_LOCAL" | grep -c '|a|2024-01-01 00:00:00||1|0$')" 300 \
  "drops: each key has one version, a, current since 2024-01-01"

# ---- key lists: upsert's updates and removals ------------------------------------
spider_table up "id BIGINT NOT NULL, name VARCHAR(20), op VARCHAR(4), lmd DATETIME(6), PRIMARY KEY (id)"
UP_LOAD="load:
  mode: upsert
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D]}"
J_UP=$(list_job up up "$UP_LOAD")
J_UPL=$(list_job up_local up_local "$UP_LOAD")
awk 'BEGIN { print "id,name,op,lmd"; for (i = 1; i <= 600; i++) printf "%d,n%d,,2024-01-01\n", i, i }' >"$WORK/up1.csv"
# every third key changes, every seventh that does not is deleted (57), 50 are new
awk 'BEGIN { print "id,name,op,lmd"
             for (i = 1; i <= 650; i++)
               if (i > 600 || i % 3 == 0) printf "%d,m%d,,2024-01-02\n", i, i
               else if (i % 7 == 0) printf "%d,n%d,D,2024-01-02\n", i, i }' >"$WORK/up2.csv"
initial "upsert" "$WORK/up1.csv" "$J_UPL" "$J_UP"
side_by_side upsert up "$WORK/up2.csv"
like "$(counts)" "updated=200 deleted=57" "upsert: 200 updated, 57 deleted"
like "$ERR" "dwl_stage_update applied by key lists: 200 rows in 1 statements" "upsert: the updates as key lists"
like "$ERR" "dwl_stage_remove applied by key lists: 57 rows in 1 statements" "upsert: the removals as key lists"
UP_LOCAL=$(sql "SELECT id, name, op, lmd FROM up_local ORDER BY CAST(id AS UNSIGNED)")
is "$(sql "SELECT id, name, op, lmd FROM up ORDER BY id")" "$UP_LOCAL" "upsert: the Spider table's rows equal the local table's"
is "$(printf '%s\n' "$UP_LOCAL" | wc -l)" 593 "upsert: 593 rows"
# The same with engine: pushdown: its updates and removals from the head's
# temporary table go as key lists too.
spider_table upp "id BIGINT NOT NULL, name VARCHAR(20), op VARCHAR(4), lmd DATETIME(6), PRIMARY KEY (id)"
J_UPP=$(list_job upp upp "$UP_LOAD
  engine: pushdown")
FEED=$WORK/up1.csv dw run "$J_UPP"
is "$RC" 0 "upsert, pushdown: the initial load exits 0"
UPD0=$(com update)
DEL0=$(com delete)
FEED=$WORK/up2.csv dw --log-level debug run "$J_UPP"
UPD=$(($(com update) - UPD0))
DEL=$(($(com delete) - DEL0))
is "$RC" 0 "upsert, pushdown: the delta exits 0"
like "$(counts)" "updated=200 deleted=57" "upsert, pushdown: 200 updated, 57 deleted"
like "$ERR" "changes computed and applied in the warehouse" "upsert, pushdown: the changes computed in the warehouse"
like "$ERR" "the rows of SELECT ... FROM dwl_pd_u s WHERE s.dwl_del = 1 AND s.dwl_ck = 1" "upsert, pushdown: the removals staged for key lists"
like "$ERR" "applied by key lists: 57 rows in 1 statements" "upsert, pushdown: the removals as key lists"
like "$ERR" "applied by key lists: 200 rows in 1 statements" "upsert, pushdown: the updates as key lists"
ran_at_most 6 "$UPD" "upsert, pushdown" "UPDATE statements for 200 updates"
ran_at_most 6 "$DEL" "upsert, pushdown" "DELETE statements for 57 removals"
is "$(sql "SELECT id, name, op, lmd FROM upp ORDER BY id")" "$UP_LOCAL" \
  "upsert, pushdown: the Spider table's rows equal the local table's"

# upsert with deletes: absent, pushdown: the rows of keys a full extract
# no longer has are found by the anti-join on the head and deleted by key
# lists, not by a DELETE joined with the head's stage, which Spider runs
# as a DELETE per row on the shards.
spider_table upa "id BIGINT NOT NULL, name VARCHAR(20), lmd DATETIME(6), PRIMARY KEY (id)"
UPA_LOAD="load:
  mode: upsert
  key: [id]
  lmd: lmd
  deletes: absent"
J_UPAL=$(list_job upa_local upa_local "$UPA_LOAD")
J_UPA=$(list_job upa upa "$UPA_LOAD
  engine: pushdown")
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 600; i++) printf "%d,n%d,2024-01-01\n", i, i }' >"$WORK/upa1.csv"
# every fifth key absent (120); of the others every third changed (160),
# the rest as before, not past the checkpoint (320)
awk 'BEGIN { print "id,name,lmd"
             for (i = 1; i <= 600; i++)
               if (i % 5) printf "%d,%s%d,2024-01-0%d\n", i, i % 3 ? "n" : "m", i, i % 3 ? 1 : 2 }' \
  >"$WORK/upa2.csv"
initial "upsert absent, pushdown" "$WORK/upa1.csv" "$J_UPAL" "$J_UPA"
FEED=$WORK/upa2.csv dw plan --sql "$J_UPA"
is "$RC" 0 "upsert absent, pushdown: plan exits 0"
like "$OUT" "-- the rows of SELECT ... FROM \`upa\` d LEFT JOIN dwl_pd_seen s ON" \
  "upsert absent, pushdown: plan --sql shows the absent keys' rows staged for key lists"
is "$(sql "SELECT COUNT(*) FROM upa")" 600 "upsert absent, pushdown: plan deleted nothing"
DEL0=$(com delete)
SEL0=$(com select)
side_by_side "upsert absent, pushdown" upa "$WORK/upa2.csv"
DEL=$(($(com delete) - DEL0))
SEL=$(($(com select) - SEL0))
like "$(counts)" "skipped=320 inserted=0 expired=0 updated=160 deleted=120" \
  "upsert absent, pushdown: 320 not past the checkpoint, 160 updated, 120 absent"
# The rows not past the checkpoint that may revive a key are found by a
# left join with the Spider table, whose keys go to the shards batched:
# NOT EXISTS ran a SELECT on a shard per row.
ran_at_most 40 "$SEL" "upsert absent, pushdown" "SELECT statements for 320 rows not past the checkpoint"
like "$ERR" "changes computed and applied in the warehouse" "upsert absent, pushdown: the changes computed in the warehouse"
like "$ERR" "applied by key lists: 120 rows in 1 statements" "upsert absent, pushdown: the absent keys' rows deleted by key lists"
ran_at_most 6 "$DEL" "upsert absent, pushdown" "DELETE statements for 120 absent keys"
is "$(sql "SELECT id, name, lmd FROM upa ORDER BY id")" "$(sql "SELECT id, name, lmd FROM upa_local ORDER BY CAST(id AS UNSIGNED)")" \
  "upsert absent, pushdown: the Spider table's rows equal the local table's"
is "$(sql "SELECT COUNT(*), SUM(name LIKE 'm%') FROM upa")" "480|160" "upsert absent, pushdown: 480 rows, 160 changed"

# A key column that may hold NULL (a unique key, no primary key) keeps the
# anti-join DELETE: a key-list match is not NULL-safe.
spider_table upn "id BIGINT, name VARCHAR(20), lmd DATETIME(6), UNIQUE KEY (id)"
J_UPNL=$(list_job upn_local upn_local "$UPA_LOAD")
J_UPN=$(list_job upn upn "$UPA_LOAD
  engine: pushdown")
head -n 61 "$WORK/upa1.csv" >"$WORK/upn1.csv"
head -n 61 "$WORK/upa2.csv" | awk -F, 'NR == 1 || $1 <= 60' >"$WORK/upn2.csv"
initial "upsert absent, nullable key" "$WORK/upn1.csv" "$J_UPNL" "$J_UPN"
side_by_side "upsert absent, nullable key" upn "$WORK/upn2.csv"
like "$(counts)" "deleted=12" "upsert absent, nullable key: 12 absent keys"
unlike "$ERR" "applied by key lists: 12 rows" "upsert absent, nullable key: not by key lists"
is "$(sql "SELECT id, name, lmd FROM upn ORDER BY id")" "$(sql "SELECT id, name, lmd FROM upn_local ORDER BY CAST(id AS UNSIGNED)")" \
  "upsert absent, nullable key: the Spider table's rows equal the local table's"

# The same with a truncate row: the rows stored before it that the delta
# has no row of.
spider_table upt "id BIGINT NOT NULL, op VARCHAR(4), amount BIGINT, lmd DATETIME(6), PRIMARY KEY (id)"
UPT_LOAD="load:
  mode: upsert
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D], truncate_values: [T]}"
J_UPTL=$(list_job upt_local upt_local "$UPT_LOAD")
J_UPT=$(list_job upt upt "$UPT_LOAD
  engine: pushdown")
printf 'id,op,amount,lmd\n1,I,10,2024-01-01\n2,I,20,2024-01-01\n3,I,30,2024-01-01\n' >"$WORK/upt1.csv"
printf 'id,op,amount,lmd\n1,U,11,2024-02-01\n,T,,2024-02-02\n2,I,22,2024-02-03\n4,I,40,2024-02-04\n' >"$WORK/upt2.csv"
initial "upsert truncate, pushdown" "$WORK/upt1.csv" "$J_UPTL" "$J_UPT"
for _j in "$J_UPTL" "$J_UPT"; do
  FEED=$WORK/upt2.csv dw --log-level debug run --max-deletes all "$_j"
  is "$RC" 0 "upsert truncate, pushdown: the truncate applies ($(basename "$_j" .yaml))"
done
like "$ERR" "the rows of SELECT ... FROM \`upt\` d LEFT JOIN dwl_pd_src s ON" \
  "upsert truncate, pushdown: the rows the truncate reaches staged for key lists"
is "$(sql "SELECT id, amount, lmd FROM upt ORDER BY id" | tr '\n' ' ')" \
  "$(sql "SELECT id, amount, lmd FROM upt_local ORDER BY CAST(id AS UNSIGNED)" | tr '\n' ' ')" \
  "upsert truncate, pushdown: the Spider table's rows equal the local table's"
is "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM upt")" "2,4" "upsert truncate, pushdown: keys 2 and 4 are left"

# ---- engine: pushdown on a Spider table: the memory engine's history ----------------
# The same two feeds as dim_stats (memory engine) into dim_pd with
# load.engine: pushdown: its temporary tables on the head, joined with
# the Spider table.
spider_table dim_pd
J_PD=$(spider_job dim_pd dim_pd "$XA_ON")
echo "  engine: pushdown" >>"$J_PD"
FEED=$WORK/bulk.csv dw run "$J_PD"
is "$RC" 0 "pushdown: the 2000-row initial load exits 0"
like "$ERR" "engine: pushdown: load.engine" "pushdown: the run says which engine"
# Its joins with the Spider table batch their keys (join_cache_level,
# dialect.h) and its expires go as key lists: a few statements on the
# shards, where a join ran a SELECT (and an UPDATE) per staged key.
SEL0=$(com select)
UPD0=$(com update)
FEED=$WORK/bulk2.csv dw --log-level debug run "$J_PD"
SEL=$(($(com select) - SEL0))
UPD=$(($(com update) - UPD0))
is "$RC" 0 "pushdown: the delta exits 0"
ran_at_most 40 "$SEL" "pushdown" "SELECT statements for 200 keys"
like "$ERR" "dwl_lists_0: the rows of SELECT ... FROM dwl_pd_x s" "pushdown: the expires staged for key lists"
like "$ERR" "dwl_lists_0 applied by key lists: 200 rows in 1 statements" "pushdown: the expires as key lists"
ran_at_most 6 "$UPD" "pushdown" "UPDATE statements for 200 expires"
like "$ERR" "changes computed and applied in the warehouse" "pushdown: the delta's changes were computed in the warehouse"
is "$(counts)" "read=200 skipped=0 inserted=200 expired=200 updated=0 deleted=0 unchanged=0" "pushdown: the delta's counts"
is "$(history dim_pd | md5sum)" "$(history dim_stats | md5sum)" "pushdown: the memory engine's history, through the head"
is "$(on_shards dim_pd | md5sum)" "$(history dim_stats | md5sum)" "pushdown: and on the shards"
is "$(sql "SELECT COUNT(*) FROM dim_pd")" 2200 "pushdown: 2200 versions"

# Its type 1 overwrites of current versions and the expires of keys absent
# from a full extract go as key lists too: the same feeds into a local
# table with the memory engine and into a Spider table with pushdown.
spider_table pt "dim_id BIGINT NOT NULL, id BIGINT NOT NULL, name VARCHAR(20), t VARCHAR(20), lmd DATETIME(6),
  valid_from DATETIME(6), valid_to DATETIME(6), is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL,
  PRIMARY KEY (dim_id, id), KEY pt_key (id, is_current)"
PT_LOAD="load:
  mode: scd2
  key: [id]
  lmd: lmd
  type1: [t]
  deletes: absent"
J_PTL=$(list_job pt_local pt_local "$PT_LOAD")
J_PT=$(list_job pt pt "$PT_LOAD
  engine: pushdown")
awk 'BEGIN { print "id,name,t,lmd"; for (i = 1; i <= 300; i++) printf "%d,n%d,t%d,2024-01-01\n", i, i, i }' \
  >"$WORK/pt1.csv"
# every fifth key absent (60), every seventh left a new name (type 2: 34),
# every third left a new t (type 1: 68, not counting the 12 with a new
# name); the other 138 as before, not past the checkpoint
awk 'BEGIN { print "id,name,t,lmd"
             for (i = 1; i <= 300; i++) if (i % 5)
               printf "%d,%s%d,%s%d,2024-01-0%d\n", i, i % 7 ? "n" : "m", i, i % 3 ? "t" : "u", i, \
                      i % 7 && i % 3 ? 1 : 2 }' \
  >"$WORK/pt2.csv"
initial "pushdown lists" "$WORK/pt1.csv" "$J_PTL" "$J_PT"
FEED=$WORK/pt2.csv dw plan --sql "$J_PT"
is "$RC" 0 "pushdown lists: plan exits 0"
like "$OUT" "-- the rows of SELECT ... FROM dwl_pd_ab s, applied 500 a statement, as:
UPDATE \`pt\` USE INDEX () SET \`valid_to\` = CASE WHEN (\`id\` = ? AND \`valid_from\` = ?) THEN ? END" \
  "pushdown lists: plan --sql shows how the absent keys' expires would go"
is "$(sql "SELECT COUNT(*), SUM(is_current) FROM pt")" "300|300" "pushdown lists: plan changed nothing"
UPD0=$(com update)
side_by_side "pushdown lists" pt "$WORK/pt2.csv"
UPD=$(($(com update) - UPD0))
like "$(counts)" "skipped=138 inserted=34 expired=34 updated=68 deleted=60" \
  "pushdown lists: 138 not past the checkpoint, 34 changed, 68 overwritten, 60 absent"
like "$ERR" "changes computed and applied in the warehouse" "pushdown lists: the changes computed in the warehouse"
like "$ERR" "dwl_lists_0: the rows of SELECT ... FROM dwl_pd_t1 s" "pushdown lists: the type 1 overwrites staged for key lists"
like "$ERR" "dwl_lists_0 applied by key lists: 68 rows in 1 statements" "pushdown lists: the type 1 overwrites as key lists"
like "$ERR" "dwl_lists_2: the rows of SELECT ... FROM dwl_pd_ab s" "pushdown lists: the absent keys' expires staged for key lists"
like "$ERR" "dwl_lists_2 applied by key lists: 60 rows in 1 statements" "pushdown lists: the absent keys' expires as key lists"
ran_at_most 12 "$UPD" "pushdown lists" "UPDATE statements"
PT_Q="SELECT id, name, t, valid_from, valid_to, is_current, is_deleted FROM %s ORDER BY CAST(id AS UNSIGNED), valid_from"
# shellcheck disable=SC2059
PT_LOCAL=$(sql "$(printf "$PT_Q" pt_local)")
# (absence closes a version at each run's clock, to the second: norm_run)
# shellcheck disable=SC2059
is "$(sql "$(printf "$PT_Q" pt)" | norm_run)" "$(printf '%s\n' "$PT_LOCAL" | norm_run)" \
  "pushdown lists: the Spider table's history equals the local table's"
is "$(printf '%s\n' "$PT_LOCAL" | grep -c '|0|1$')" 60 "pushdown lists: 60 versions closed as deleted"

# Without a current flag, with an open end: the key and valid_from name the
# version to close, as the memory engine's key lists take them; matching
# valid_to = the open end too matched on the column the expire sets, and
# fell back to the join.
spider_table oe "dim_id BIGINT NOT NULL, id BIGINT NOT NULL, name VARCHAR(20), lmd DATETIME(6),
  valid_from DATETIME(6), valid_to DATETIME(6), is_deleted BOOLEAN NOT NULL, PRIMARY KEY (dim_id, id), KEY oe_key (id)"
OE_LOAD="dimension: {current: null, open_end: '9999-12-31 00:00:00'}
load: {mode: scd2, key: [id], lmd: lmd"
J_OEL=$(list_job oe_local oe_local "$OE_LOAD}")
J_OE=$(list_job oe oe "$OE_LOAD, engine: pushdown}")
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 200; i++) printf "%d,n%d,2024-01-01\n", i, i }' >"$WORK/oe1.csv"
awk 'BEGIN { print "id,name,lmd"; for (i = 2; i <= 200; i += 2) printf "%d,m%d,2024-01-02\n", i, i }' >"$WORK/oe2.csv"
initial "open end" "$WORK/oe1.csv" "$J_OEL" "$J_OE"
UPD0=$(com update)
side_by_side "open end" oe "$WORK/oe2.csv"
UPD=$(($(com update) - UPD0))
like "$(counts)" "inserted=100 expired=100" "open end: 100 changed"
like "$ERR" "dwl_lists_0 applied by key lists: 100 rows in 1 statements" "open end: the expires as key lists"
ran_at_most 12 "$UPD" "open end" "UPDATE statements for 100 expires"
OE_Q="SELECT id, name, valid_from, valid_to, is_deleted FROM %s ORDER BY CAST(id AS UNSIGNED), valid_from"
# shellcheck disable=SC2059
is "$(sql "$(printf "$OE_Q" oe)")" "$(sql "$(printf "$OE_Q" oe_local)")" "open end: the Spider table's history equals the local table's"
is "$(sql "SELECT COUNT(*) FROM oe WHERE valid_to = '9999-12-31'")" 200 "open end: 200 versions open"

# ---- a prepared XA transaction left behind holds a key's rows -------------------------
# As a coordinator that crashed after XA PREPARE leaves it: the branch on
# the shard holding the key stays prepared, its row locked.
XID="dwl_orphan_$$"
sql "XA START '$XID'; UPDATE dim SET name = 'held' WHERE id = 1 AND is_current = 1; XA END '$XID'; XA PREPARE '$XID'"
HELD=""
for n in 1 2; do
  if shard $n -e "XA RECOVER" | grep -q "$XID"; then
    eval "HELD=\"\${HELD:+\$HELD, }\$DWL_SPIDER_SHARD${n}_HOST:\$DWL_SPIDER_SHARD${n}_PORT\""
  fi
done
like "$HELD" ":" "the prepared transaction has a branch on a shard"
FEED=$WORK/day2.csv dw check --connect "$J"
is "$RC" 3 "prepared XA: check exits 3"
like "$OUT" "xa       FAILED 1 prepared XA transaction may hold locks its servers would wait on: '$XID' on $HELD" \
  "prepared XA: check names it and the shard holding its branch"
printf 'id,name,lmd\n1,ann3,2024-01-03\n' >"$WORK/day3.csv"
FEED=$WORK/day3.csv dw run "$J"
is "$RC" 3 "prepared XA: a run touching its rows exits 3 (the shard's lock wait)"
like "$ERR" "1 prepared XA transaction may hold the locks its servers wait on: '$XID' on $HELD" \
  "prepared XA: the run's message names it and the shard"
like "$ERR" "hint: a prepared XA transaction (from a crashed run or coordinator) holds locks" \
  "prepared XA: the hint says what holds the locks"
like "$ERR" "end each with XA ROLLBACK or XA COMMIT and its xid on the head, and on each server the message names" \
  "prepared XA: and how to end it"
# Ended on the head, the branch Spider prepared on the shard stays (as
# the hint says): it is ended there too.
sql "XA ROLLBACK '$XID'"
for n in 1 2; do
  if shard $n -e "XA RECOVER" | grep -q "$XID"; then
    shard $n -e "XA ROLLBACK '$XID'"
  fi
done
FEED=$WORK/day3.csv dw run "$J"
is "$RC" 0 "prepared XA ended: the run exits 0"
is "$(sql "SELECT name FROM dim WHERE id = 1 AND is_current = 1")" "ann3" "prepared XA ended: the key's new version"
is "$(on_shards dim)" "$(history dim)" "prepared XA ended: the shards hold the head's history"

# ---- a shard killed at the commit ---------------------------------------------------
# dwload waits at its commit (tests/hooks/commitfail.c's hold), shard 2
# (rows, not the checkpoint) is killed there with SIGKILL, the commit goes
# on, the shard restarts on its datadir.  Data and checkpoint: both
# committed or both not, and dwload's exit says which.
# head_state FIELD: the job's state through the head (so through Spider)
head_state() {
  sql "SELECT $1 FROM dwload_state WHERE job = 'dim'"
}
printf 'id,name,lmd\n1,ann4,2024-01-04\n2,bob4,2024-01-04\n3,cy4,2024-01-04\n4,dee4,2024-01-04\n5,eve4,2024-01-04\n' \
  >"$WORK/day4.csv"
BEFORE=$(history dim)
BEFORE_CP=$(head_state checkpoint)
kill_at_commit "shard killed" "$J" "$WORK/day4.csv"
# Spider found shard 2 gone at the commit: nothing was prepared there,
# and shard 1's branch (rows and checkpoint) was rolled back.
is "$RC" 1 "shard killed: the run exits 1 (not committed)"
like "$ERR" "not committed: the state row does not hold this run's id" "shard killed: the error says it did not commit"
is "$(field status)" failed "shard killed: the summary says failed"
# (dwload_runs is the head's own table: its row of the run went with the
# head's commit, which failed, and the run was recorded again after it)
is "$(sql "SELECT status FROM dwload_runs WHERE run_id = '$(field run_id)'")" "rolled back" \
  "shard killed: dwload_runs records the run as rolled back"
is "$(shard 1 -D "$WH_DB" -e "SELECT checkpoint FROM dwload_state WHERE job = 'dim'")" "$BEFORE_CP" \
  "shard killed: the checkpoint on shard 1 is the last run's"
is "$(history dim)" "$BEFORE" "shard killed: the history through the head is as before"
is "$(on_shards dim)" "$BEFORE" "shard killed: and on the shards"
is "$(shard 1 -e "XA RECOVER" | wc -l)|$(shard 2 -e "XA RECOVER" | wc -l)" "0|0" \
  "shard killed: no prepared XA branch left on either shard"
FEED=$WORK/day4.csv dw run "$J"
is "$RC" 0 "shard killed: the next run exits 0"
is "$(head_state checkpoint)" "2024-01-04 00:00:00" "shard killed: the next run's checkpoint"
is "$(sql "SELECT COUNT(*) FROM dim WHERE is_current = 1 AND name LIKE '%4'")" 5 \
  "shard killed: the next run's versions are current"
is "$(on_shards dim)" "$(history dim)" "shard killed: the shards hold the head's history"

# ---- a shard killed between its XA PREPARE and its XA COMMIT ---------------------------
# BACKUP STAGE BLOCK_COMMIT makes a server's XA PREPARE and XA COMMIT
# wait: held on shard 2, the commit stops at shard 2's prepare (shard 1
# prepared); held on shard 1 too and let go on shard 2, it stops at shard
# 1's XA COMMIT with both prepared: shard 2 is killed there.
# block N: a session on shard N holding BLOCK_COMMIT (fed from a FIFO on
# fd 6+N); unblock N ends it.  (The session gets no FIFO's write end, so
# that it ends once the test closes its own: a session holding one would
# outlive the test.)
block() {
  mkfifo "$WORK/blk$1"
  eval "exec $((6 + $1))<>\"\$WORK/blk$1\""
  ( exec 4>&- 7>&- 8>&- <"$WORK/blk$1" >"$WORK/blk$1.out" 2>&1
    shard "$1" -n ) &
  echo "BACKUP STAGE START; BACKUP STAGE BLOCK_COMMIT; SELECT 'blocked';" >&$((6 + $1))
  wait_until 300 grep -q blocked "$WORK/blk$1.out"
}
unblock() {
  echo "BACKUP STAGE END; SELECT 'unblocked';" >&$((6 + $1))
}
# waiting N WHAT: shard N has a statement WHAT waiting on the backup lock
waiting() {
  [ "$(shard "$1" -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST
                      WHERE INFO LIKE '$2%' AND STATE = 'Waiting for backup lock'")" = 1 ]
}
printf 'id,name,lmd\n1,ann5,2024-01-05\n2,bob5,2024-01-05\n3,cy5,2024-01-05\n4,dee5,2024-01-05\n5,eve5,2024-01-05\n' \
  >"$WORK/day5.csv"
# Each autocommit statement on a Spider table is an XA transaction of its
# own: the hook holds dwload at its commit first, so that the prepare
# waited on is the commit's.
GO=$WORK/go.fifo
rm -f "$GO" "$GO.ready"
mkfifo "$GO"
FEED=$WORK/day5.csv DWL_TEST_COMMIT=hold DWL_TEST_COMMIT_FIFO=$GO LD_PRELOAD=$HOOK "$DWLOAD" run "$J" \
  >"$WORK/r.out" 2>"$WORK/r.err" &
PID=$!
wait_until 300 test -e "$GO.ready" || fail "prepared, killed: the run waits at its commit" "$(cat "$WORK/r.err")"
block 2 && pass "prepared, killed: shard 2 blocks commits" || fail "prepared, killed: shard 2 blocks commits"
exec 4<>"$GO"
echo go >&4
wait_until 300 waiting 2 "xa prepare" && pass "prepared, killed: the commit waits at shard 2's XA PREPARE" ||
  fail "prepared, killed: the commit waits at shard 2's XA PREPARE" "$(cat "$WORK/r.err")"
block 1
unblock 2
wait_until 300 waiting 1 "xa commit" && pass "prepared, killed: then at shard 1's XA COMMIT" ||
  fail "prepared, killed: then at shard 1's XA COMMIT" "$(cat "$WORK/r.err")"
is "$(shard 2 -e "XA RECOVER" | wc -l)" 1 "prepared, killed: shard 2's branch is prepared"
PIDFILE=$(shard 2 -e "SELECT @@pid_file")
SPID=$(cat "$PIDFILE")
tr '\0' '\n' <"/proc/$SPID/cmdline" >"$WORK/shard2.cmd"
kill -9 "$SPID"
wait_until 300 eval '! kill -0 "$SPID"' || fail "prepared, killed: shard 2 is gone" "pid $SPID"
unblock 1
finish "$PID" 60
RC=$?
exec 4>&- 7>&- 8>&-
ERR=$(cat "$WORK/r.err")
LAST=$(tail -n 1 "$WORK/r.out")
# Shard 1 committed the rows it holds and the checkpoint: the run did.
is "$RC" 0 "prepared, killed: the run exits 0 (committed)"
like "$ERR" "but the commit happened: the state row holds this run's id" "prepared, killed: the log says the commit happened"
like "$ERR" "1 XA transaction decided to commit may have branches left prepared on a server that failed at the commit" \
  "prepared, killed: and names the XA transaction"
like "$ERR" ", $DWL_SPIDER_SHARD2_HOST:$DWL_SPIDER_SHARD2_PORT; once the server is back" "prepared, killed: and its servers"
like "$ERR" "XA RECOVER on it lists them: end each with XA COMMIT" "prepared, killed: and what ends it"
is "$(field status)" ok "prepared, killed: the summary says ok"
is "$(sql "SELECT status FROM dwload_runs WHERE run_id = '$(field run_id)'")" committed \
  "prepared, killed: dwload_runs records the run as committed"
is "$(shard 1 -D "$WH_DB" -e "SELECT checkpoint FROM dwload_state WHERE job = 'dim'")" "2024-01-05 00:00:00" \
  "prepared, killed: the checkpoint on shard 1 is the run's"
restart_shard2
# The branch survived the kill: ended as the checkpoint says, with XA
# COMMIT and the xid XA RECOVER spells on the shard.
XID=$(shard 2 -e "XA RECOVER FORMAT='SQL'" | cut -f4)
like "$XID" "'" "prepared, killed: the restarted shard 2 still holds the prepared branch"
like "$ERR" "at the commit: $XID" "prepared, killed: the one dwload named"
shard 2 -e "XA COMMIT $XID"
is "$(shard 2 -e "XA RECOVER" | wc -l)" 0 "prepared, killed: XA COMMIT on shard 2 ended it"
# Spider keeps its record of the decision on the head: deleted once
# every branch is ended (as dwload-job(5) says), or later failed commits
# name it again.
DECIDED="FROM mysql.spider_xa WHERE status = 'COMMIT'"
is "$(sql "SELECT COUNT(*) $DECIDED")" 1 "prepared, killed: the head keeps Spider's record of the decision"
sql "DELETE m FROM mysql.spider_xa_member m JOIN mysql.spider_xa x ON x.format_id = m.format_id
       AND x.gtrid_length = m.gtrid_length AND x.bqual_length = m.bqual_length AND x.data = m.data
     WHERE x.status = 'COMMIT'; DELETE $DECIDED"
is "$(sql "SELECT COUNT(*) FROM dim WHERE is_current = 1 AND name LIKE '%5'")" 5 \
  "prepared, killed: every key's new version is committed, on both shards"
is "$(on_shards dim)" "$(history dim)" "prepared, killed: the shards hold the head's history"
FEED=$WORK/day5.csv dw run "$J"
is "$RC" 0 "prepared, killed: the next run exits 0"
is "$(counts)" "read=5 skipped=5 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" \
  "prepared, killed: the next run finds the batch loaded"

# ---- XA off, accepted: a shard killed at the commit ---------------------------------
# dim_acc's servers commit one after another, and the checkpoint's row
# (on shard 1 by now: dwload_state is a Spider table) with them: whatever
# that row says, a failed commit is exit 5, saying that the servers commit
# apart.  (accept_non_atomic's risk; exit 1 or 0 would claim an outcome.)
FEED=$WORK/day2.csv dw run "$J_ACC"
is "$RC" 0 "XA off, killed: the second load exits 0"
kill_at_commit "XA off, killed" "$J_ACC" "$WORK/day4.csv"
is "$RC" 5 "XA off, killed: the run exits 5 (the shards' outcome is unknown)"
like "$ERR" "but table dim_acc is a SPIDER table whose commit is not atomic (target.accept_non_atomic): its servers commit one after another" \
  "XA off, killed: the error says the servers commit apart"
unlike "$ERR" "nothing was written" "XA off, killed: no claim that nothing was written"
unlike "$ERR" "but the commit happened" "XA off, killed: no claim that the commit happened"
is "$(field status)" unknown "XA off, killed: the summary says unknown"
is "$(sql "SELECT status FROM dwload_runs WHERE run_id = '$(field run_id)'")" unknown \
  "XA off, killed: dwload_runs's row of the run, committed with it, now says unknown"
unlike "$ERR" "is not recorded in dwload_runs" "XA off, killed: the run is recorded"
like "$ERR" "the checkpoint committed (the state row holds this run's id" "XA off, killed: and that the checkpoint committed"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'dim_acc'")" "2024-01-04 00:00:00" \
  "XA off, killed: the checkpoint is the run's"
is "$(sql "SELECT last_status FROM dwload_state WHERE job = 'dim_acc'")" unknown \
  "XA off, killed: dwload_state's last status is unknown"
is "$(sql "SELECT COUNT(*) FROM dim_acc WHERE is_current = 1 AND name LIKE '%4'" | awk '{ print ($1 < 5 ? "lost" : $1) }')" \
  lost "XA off, killed: shard 2's new versions are lost (what the error warns of)"
FEED=$WORK/day4.csv dw run --backfill-from 2024-01-04 --backfill-to 2024-01-05 "$J_ACC"
is "$RC" 0 "XA off, killed: a backfill of the day exits 0"
is "$(sql "SELECT COUNT(*) FROM dim_acc WHERE is_current = 1 AND name LIKE '%4'")" 5 \
  "XA off, killed: after it, every key's new version is current"
is "$(on_shards dim_acc)" "$(history dim_acc)" "XA off, killed: the shards hold the head's history"

# ---- lookup: auto counts a Spider table's rows ----------------------------------
# Spider's row estimate is the shards' statistics as the head last fetched
# them (every spider_sts_interval seconds): stale, it made lookup: auto
# read a whole dimension for a few keys.  dwload counts a Spider table.
# The head keeps what it fetched for the rest of the test, and 3000
# current versions are added on shard 1 behind its back.
spider_table est
J_EST=$(spider_job est est "$XA_ON")
FEED=$WORK/day1.csv dw run "$J_EST"
is "$RC" 0 "estimate: the first load exits 0"
for n in 1 2; do shard $n -D "$WH_DB" -e "ANALYZE TABLE est" >/dev/null; done
STS=$(sql "SELECT @@GLOBAL.spider_sts_interval")
WH_AT_EXIT="$WH_AT_EXIT
sql \"SET GLOBAL spider_sts_interval = $STS\" >/dev/null 2>&1"
sql "SET GLOBAL spider_sts_interval = 2147483647"
est_rows() { sql "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'est'"; }
est_rows >/dev/null
shard 1 -D "$WH_DB" -e "INSERT INTO est SELECT seq + 100, seq + 100, 'x', '2023-01-01', '2023-01-01', NULL, 1, 0
                        FROM seq_1_to_3000"
is "$(sql "SELECT COUNT(*) FROM est")" 3004 "estimate: the table holds 3004 versions"
is "$(est_rows | awk '{ print ($1 < 10 ? "stale" : "fresh: " $1) }')" stale \
  "estimate: the head's estimate is the stale one, under 10 rows"
FEED=$WORK/day2.csv dw run "$J_EST"
is "$RC|$(counts)" "0|read=5 skipped=2 inserted=3 expired=2 updated=0 deleted=0 unchanged=0" \
  "estimate: the delta loads"
like "$ERR" "read 2 current versions (the delta's keys)" \
  "estimate: 3 delta rows against 3004 counted versions read only the delta's keys"
sql "SET GLOBAL spider_sts_interval = $STS"

done_testing
