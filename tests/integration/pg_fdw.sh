# PostgreSQL targets whose rows live partly on another server through
# postgres_fdw: a table partitioned by its key, even keys in a local
# partition and odd keys in a foreign partition whose rows are in a second
# database (the "shard", reached through a foreign server on the same
# PostgreSQL), and a target that is itself a foreign table.  scd2 (an
# initial load, a delta with changes and deletes, a second delta) and
# upsert, with both engines: each table equals the same job's table in an
# ordinary local table, row for row, and each row is on the partition of
# its key, read in the shard database itself too.  Pushdown's upsert
# cannot use MERGE there (PostgreSQL refuses MERGE on a foreign table):
# it is applied as DELETE, UPDATE ... FROM and INSERT ... SELECT.  check,
# plan and run warn that the foreign partitions commit apart from the
# warehouse (there is no global commit), and a foreign server that fails
# at the commit, after another committed, makes the run exit 5 saying so.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# The jobs below name their engine.
unset DWL_ENGINE

skip_unless_warehouse postgresql "postgres_fdw foreign partitions: PostgreSQL only"
if [ "$(sql "SELECT count(*) FROM pg_available_extensions WHERE name = 'postgres_fdw'")" != 1 ]; then
  echo "1..0 # SKIP postgres_fdw is not installed with the PostgreSQL server (Debian: postgresql-15 has it)"
  exit 0
fi

SHARD="${WH_DB}_shard"
SHARD2="${WH_DB}_shard2"
for _db in "$SHARD" "$SHARD2"; do
  _wh_psql postgres -c "CREATE DATABASE \"$_db\" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'" \
    >/dev/null || { echo "Bail out! cannot create the shard database $_db"; exit 1; }
done
trap 'for _db in "$SHARD" "$SHARD2"; do
    _wh_psql postgres -c "DROP DATABASE IF EXISTS \"$_db\" WITH (FORCE)" >/dev/null 2>&1; done; _wh_drop_db;
  if [ "$T_FAILED" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "# work files kept in $WORK"; fi' EXIT
sql "CREATE EXTENSION postgres_fdw;
     CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw
       OPTIONS (host '$DWL_PG_HOST', port '$DWL_PG_PORT', dbname '$SHARD');
     CREATE USER MAPPING FOR CURRENT_USER SERVER shard
       OPTIONS (user '$DWL_PG_USER', password '$DWL_PG_PASSWORD')" >/dev/null ||
  { echo "Bail out! cannot set up postgres_fdw"; exit 1; }

# The columns of the tables dwload would create for the jobs below.
SCD_COLS="dim_id BIGINT NOT NULL, id BIGINT, name TEXT, op TEXT, lmd TIMESTAMP(6), valid_from TIMESTAMP(6),
  valid_to TIMESTAMP(6), is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL"
UPS_COLS="id BIGINT, name TEXT, op TEXT, lmd TIMESTAMP(6)"

# sharded TABLE COLUMNS: TABLE partitioned by id % 2: TABLE_l (even keys,
# local) and TABLE_f (odd keys), a foreign table of the table TABLE_f in
# the shard database; a key index on TABLE (PostgreSQL builds it on the
# local partition only: a foreign table has none) and one in the shard.
sharded() {
  sql "CREATE TABLE \"$1_f\" ($2); CREATE INDEX ON \"$1_f\" (id)" "$SHARD" >/dev/null &&
    sql "CREATE TABLE \"$1\" ($2) PARTITION BY LIST ((id % 2));
         CREATE TABLE \"$1_l\" PARTITION OF \"$1\" FOR VALUES IN (0);
         CREATE FOREIGN TABLE \"$1_f\" PARTITION OF \"$1\" FOR VALUES IN (1) SERVER shard;
         CREATE INDEX \"$1_dwl_key\" ON \"$1\" (id)" >/dev/null ||
    echo "Bail out! cannot create the partitioned table $1"
}

# parts NAME TABLE REF: TABLE's rows are REF's, on the partition of their
# key: the even keys' in TABLE_l, the odd keys' in TABLE_f, also as the
# shard database has them; and neither partition is empty
parts() {
  _o=$(every_column "$3")
  _even=$(sqln "SELECT * FROM \"$3\" WHERE id % 2 = 0 ORDER BY $_o")
  _odd=$(sqln "SELECT * FROM \"$3\" WHERE id % 2 = 1 ORDER BY $_o")
  is "$(tdump "$2")" "$(tdump "$3")" "$1: the table equals the local table's"
  is "$(sqln "SELECT * FROM \"$2_l\" ORDER BY $_o")" "$_even" "$1: the even keys' rows in the local partition"
  is "$(sqln "SELECT * FROM \"$2_f\" ORDER BY $_o" "$SHARD")" "$_odd" \
    "$1: the odd keys' rows in the shard database's table"
  is "$(sql "SELECT count(*) > 0 FROM \"$2_l\"")|$(sql "SELECT count(*) > 0 FROM \"$2_f\"" "$SHARD")" "1|1" \
    "$1: rows on both partitions"
}

# run_each MSG JOB...: runs each job, in order; each exits 0
run_each() {
  _msg=$1
  shift
  for _j in "$@"; do
    run_ok "$_j" "$_msg $(basename "$_j" .yaml)"
  done
}

WARN="has foreign partitions: "
RISK="their servers commit apart from the warehouse"

# ---- scd2, both engines ----------------------------------------------------
sharded d_m "$SCD_COLS"
sharded d_p "$SCD_COLS"
TYPES='  types: {id: integer, lmd: timestamp}'
# ljob NAME FEED TABLE MODE ENGINE [DELETES [LOAD-LINE]]: a job of
# $WORK/FEED into TABLE, with load.deletes DELETES (default: by op)
ljob() {
  mkjob "$1" "$WORK/$2" "$3" "$TYPES" <<EOF
load:
  mode: $4
  engine: $5
  key: id
  lmd: lmd
  deletes: ${6:-"{column: op, values: [D]}"}
${7:-}
EOF
}
ref=$(ljob ref scd.csv d_ref scd2 memory)
jm=$(ljob mem scd.csv d_m scd2 memory "" '  lookup: keys')
jp=$(ljob push scd.csv d_p scd2 pushdown)

file scd.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,,2024-01-01 00:00:00
2,Bob,,2024-01-01 00:00:00
3,Cy,,2024-01-01 00:00:00
4,Di,,2024-01-01 00:00:00
5,Ed,,2024-01-01 00:00:00
6,Flo,,2024-01-01 00:00:00
EOF
cp "$WORK/scd.csv" "$WORK/initial.csv"
dw check --connect "$jp"
is "$RC" 0 "check: a partitioned table with a foreign partition passes"
like "$OUT" "commit   WARN   table d_p ${WARN}d_p_f (server shard, postgres_fdw): $RISK" \
  "check: a commit line names the foreign partition, its server and the risk"
like "$OUT" "there is no global commit" "check: no global commit"
dw check --json --connect "$jp"
is "$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join("%s:%s:%s" % (s["step"], s["ok"], s.get("warning", False)) for s in d["steps"] if s["step"] == "commit"), d["ok"])')" \
  "commit:True:True True" "check --json: the commit step passes with a warning"
dw check --connect "$ref"
like "$OUT" "table    ok     d_ref will be created" "check: a local table's check gets to its last step"
unlike "$OUT" "commit   WARN" "check: no commit warning for a local table"

run_each "scd2 initial load" "$ref" "$jm" "$jp"
like "$ERR" "warn: table d_p ${WARN}d_p_f (server shard, postgres_fdw): $RISK" "run: the warning in the log"
parts "scd2 initial, memory" d_m d_ref
parts "scd2 initial, pushdown" d_p d_ref
is "$(sql "SELECT count(*) FROM d_ref")" 6 "scd2 initial: 6 versions"

# Changes on both partitions (an expire UPDATE and an INSERT each), deletes
# on both, a new key on each, one unchanged.
file scd.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann B,,2024-01-02 00:00:00
2,Bob B,,2024-01-02 00:00:00
3,Cy,D,2024-01-02 00:00:00
4,Di,D,2024-01-02 00:00:00
5,Ed,,2024-01-01 00:00:00
7,Gus,,2024-01-02 00:00:00
8,Hal,,2024-01-02 00:00:00
EOF
dw plan "$jp"
is "$RC" 0 "plan: exit 0"
like "$ERR" "warn: table d_p ${WARN}d_p_f (server shard, postgres_fdw): $RISK" "plan: the warning in the log"
run_each "scd2 delta" "$ref" "$jm" "$jp"
is "$(counts)" "read=7 skipped=1 inserted=4 expired=2 updated=0 deleted=2 unchanged=0" "scd2 delta: the counts"
parts "scd2 delta, memory" d_m d_ref
parts "scd2 delta, pushdown" d_p d_ref
is "$(sql "SELECT id FROM d_p WHERE NOT is_current AND is_deleted ORDER BY id" | paste -sd, -)" "3,4" \
  "scd2 delta: the deleted keys' versions closed on both partitions"

# A deleted key back, a second change of a key, a delete of a new key.
file scd.csv >/dev/null <<'EOF'
id,name,op,lmd
3,Cy again,,2024-01-03 00:00:00
1,Ann C,,2024-01-03 00:00:00
8,Hal,D,2024-01-03 00:00:00
7,Gus,D,2024-01-03 00:00:00
EOF
run_each "scd2 second delta" "$ref" "$jm" "$jp"
parts "scd2 second delta, memory" d_m d_ref
parts "scd2 second delta, pushdown" d_p d_ref
is "$(sql "SELECT count(*) FROM d_ref")" 12 "scd2: 12 versions"
is "$(sql "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dwl%' OR tablename LIKE 'dwload%'" "$SHARD")" 0 \
  "dwload's state and stage tables stay in the warehouse, not on the shard"

# ---- upsert, both engines: pushdown without MERGE ---------------------------
sharded u_m "$UPS_COLS"
sharded u_p "$UPS_COLS"
# (a foreign table has no index of its own: the shard's table has the key's)
sql "CREATE TABLE u_ft ($UPS_COLS); CREATE INDEX ON u_ft (id)" "$SHARD" >/dev/null &&
  sql "CREATE FOREIGN TABLE u_ft ($UPS_COLS) SERVER shard" >/dev/null ||
  echo "Bail out! cannot create the foreign table u_ft"
uref=$(ljob uref ups.csv u_ref upsert memory)
um=$(ljob umem ups.csv u_m upsert memory)
up=$(ljob upush ups.csv u_p upsert pushdown)
uf=$(ljob uft ups.csv u_ft upsert pushdown)
file ups.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,,2024-01-01 00:00:00
2,Bob,,2024-01-01 00:00:00
3,Cy,,2024-01-01 00:00:00
4,Di,,2024-01-01 00:00:00
EOF
run_each "upsert initial load" "$uref" "$um" "$up"
unlike "$ERR" "cannot execute MERGE" "upsert pushdown: no MERGE error"
like "$ERR" "info: table u_p ${WARN}u_p_f (server shard, postgres_fdw); MERGE cannot change a foreign table, so the upsert is applied as DELETE, UPDATE ... FROM and INSERT ... SELECT" \
  "upsert pushdown: the log says why it does not use MERGE"
parts "upsert initial, memory" u_m u_ref
parts "upsert initial, pushdown" u_p u_ref
file ups.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann B,,2024-01-02 00:00:00
2,Bob B,,2024-01-02 00:00:00
3,Cy,D,2024-01-02 00:00:00
4,Di,D,2024-01-02 00:00:00
5,Ed,,2024-01-02 00:00:00
6,Flo,,2024-01-02 00:00:00
EOF
dw plan --sql "$up"
is "$RC" 0 "upsert plan --sql: exit 0"
unlike "$OUT" "MERGE" "upsert plan --sql: no MERGE"
like "$OUT" 'UPDATE "u_p" AS d SET "name" = s."name"' "upsert plan --sql: the UPDATE ... FROM"
like "$OUT" 'DELETE FROM "u_p" AS d USING dwl_pd_u AS s' "upsert plan --sql: the DELETE"
run_each "upsert delta" "$uref" "$um" "$up"
is "$(counts)" "read=6 skipped=0 inserted=2 expired=0 updated=2 deleted=2 unchanged=0" "upsert delta: the counts"
parts "upsert delta, memory" u_m u_ref
parts "upsert delta, pushdown" u_p u_ref

# deletes: absent: the keys a full extract no longer has deleted on both
# partitions (an anti-join from the table), then one of them back from a
# row the checkpoint skips (pushdown's revival: an INSERT ... SELECT).
sharded a_m "$UPS_COLS"
sharded a_p "$UPS_COLS"
aref=$(ljob aref abs.csv a_ref upsert memory absent)
am=$(ljob amem abs.csv a_m upsert memory absent)
ap=$(ljob apush abs.csv a_p upsert pushdown absent)
gen_rows 1 6 "2024-01-01 00:00:00" | sed 's/^\([0-9]*\),\(.*\),/\1,\2,,/' |
  { echo "id,name,op,lmd"; cat; } >"$WORK/abs.csv"
run_each "absent initial load" "$aref" "$am" "$ap"
printf 'id,name,op,lmd\n1,row 1,,2024-01-01 00:00:00\n2,changed,,2024-01-02 00:00:00\n5,row 5,,2024-01-01 00:00:00\n' \
  >"$WORK/abs.csv"
run_each "absent: 3, 4 and 6 gone" "$aref" "$am" "$ap"
is "$(counts)" "read=3 skipped=2 inserted=0 expired=0 updated=1 deleted=3 unchanged=0" "absent: the counts"
parts "absent, memory" a_m a_ref
parts "absent, pushdown" a_p a_ref
printf 'id,name,op,lmd\n1,row 1,,2024-01-01 00:00:00\n2,changed,,2024-01-02 00:00:00\n3,row 3,,2024-01-01 00:00:00\n5,row 5,,2024-01-01 00:00:00\n' \
  >"$WORK/abs.csv"
run_each "absent: 3 back" "$aref" "$am" "$ap"
is "$(sql "SELECT id FROM a_p ORDER BY id" | paste -sd, -)" "1,2,3,5" "absent: the keys left, 3 back"
parts "absent, 3 back, memory" a_m a_ref
parts "absent, 3 back, pushdown" a_p a_ref

# ---- a foreign server that fails at the commit --------------------------------
# d_x: keys id % 3 = 0 local, 1 on shard A (the shard database), 2 on
# shard B (a second one).  Both servers commit in parallel
# (parallel_commit: postgres_fdw sends every COMMIT before it reads an
# answer), and shard B refuses its commit: a deferred constraint trigger
# on its table raises at COMMIT for a row named 'refused'.  Shard A's part
# commits, shard B's and the warehouse's (the local partition, the
# checkpoint) roll back.  The run exits 5 and says the checkpoint did not
# commit but the foreign servers' part may have; the next run, once shard
# B accepts, reads the same rows again and ends equal to a local table's.
sql "CREATE SERVER shard_a FOREIGN DATA WRAPPER postgres_fdw
       OPTIONS (host '$DWL_PG_HOST', port '$DWL_PG_PORT', dbname '$SHARD', parallel_commit 'true');
     CREATE SERVER shard_b FOREIGN DATA WRAPPER postgres_fdw
       OPTIONS (host '$DWL_PG_HOST', port '$DWL_PG_PORT', dbname '$SHARD2', parallel_commit 'true');
     CREATE USER MAPPING FOR CURRENT_USER SERVER shard_a
       OPTIONS (user '$DWL_PG_USER', password '$DWL_PG_PASSWORD');
     CREATE USER MAPPING FOR CURRENT_USER SERVER shard_b
       OPTIONS (user '$DWL_PG_USER', password '$DWL_PG_PASSWORD')" >/dev/null ||
  echo "Bail out! cannot set up the servers shard_a and shard_b"
sql "CREATE TABLE d_x_a ($SCD_COLS)" "$SHARD" >/dev/null &&
  sql "CREATE TABLE d_x_b ($SCD_COLS);
       CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
         \$\$BEGIN IF NEW.name = 'refused' THEN RAISE EXCEPTION 'shard B refuses the commit'; END IF;
         RETURN NULL; END\$\$;
       CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON d_x_b DEFERRABLE INITIALLY DEFERRED
         FOR EACH ROW EXECUTE FUNCTION refuse()" "$SHARD2" >/dev/null &&
  sql "CREATE TABLE d_x ($SCD_COLS) PARTITION BY LIST ((id % 3));
       CREATE TABLE d_x_l PARTITION OF d_x FOR VALUES IN (0);
       CREATE FOREIGN TABLE d_x_a PARTITION OF d_x FOR VALUES IN (1) SERVER shard_a;
       CREATE FOREIGN TABLE d_x_b PARTITION OF d_x FOR VALUES IN (2) SERVER shard_b;
       CREATE INDEX d_x_dwl_key ON d_x (id)" >/dev/null ||
  echo "Bail out! cannot create the partitioned table d_x"
xref=$(ljob xref x.csv d_xref scd2 memory)
jx=$(ljob xm x.csv d_x scd2 memory)
cp "$WORK/initial.csv" "$WORK/x.csv"
run_each "commit apart: initial load" "$xref" "$jx"
# keys 1 and 4 on shard A, 2 (refused) and 5 on shard B, 3 and 6 local
file x.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann B,,2024-01-02 00:00:00
2,refused,,2024-01-02 00:00:00
3,Cy B,,2024-01-02 00:00:00
4,Di,D,2024-01-02 00:00:00
5,Ed B,,2024-01-02 00:00:00
6,Flo B,,2024-01-02 00:00:00
EOF
# xdump PART DB: the partition's table as its database has it
xdump() {
  sqln "SELECT * FROM $1 ORDER BY $(every_column d_x_l)" "$2"
}
XA_BEFORE=$(xdump d_x_a "$SHARD")
XB_BEFORE=$(xdump d_x_b "$SHARD2")
XL_BEFORE=$(xdump d_x_l "$WH_DB")
CP_BEFORE=$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'xm'")
dw run "$jx"
is "$RC" 5 "commit apart: the failed commit exits 5 (its outcome is not one), not 1 (nothing committed)"
like "$ERR" "shard B refuses the commit" "commit apart: the error is shard B's"
like "$ERR" "the checkpoint was not committed (the state row does not hold this run's id $(field run_id)), but table d_x has foreign partitions: " \
  "commit apart: the error says the checkpoint did not commit"
like "$ERR" "d_x_a (server shard_a, postgres_fdw)" "commit apart: and names the foreign partitions and their servers"
like "$ERR" "what they committed before the failure stays, and the next run reads the same rows again" \
  "commit apart: and what stays"
unlike "$ERR" "nothing was written" "commit apart: no claim that nothing was written"
like "$ERR" "hint: the table's rows commit apart from the checkpoint" "commit apart: the hint"
unlike "$ERR" "a retry is safe either way" "commit apart: not the plain exit 5's hint"
is "$(field status)" unknown "commit apart: the summary's status"
is "$(sql "SELECT status FROM dwload_runs WHERE run_id = '$(field run_id)'")" unknown \
  "commit apart: dwload_runs records the run as unknown"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'xm'")" "$CP_BEFORE" \
  "commit apart: the checkpoint is the last run's"
is "$(sql "SELECT last_status FROM dwload_state WHERE job = 'xm'")" unknown \
  "commit apart: dwload_state's last status is unknown"
like "$(sql "SELECT last_error FROM dwload_state WHERE job = 'xm'")" "the checkpoint was not committed" \
  "commit apart: and its last error says what committed"
is "$(xdump d_x_l "$WH_DB")" "$XL_BEFORE" "commit apart: the local partition rolled back"
is "$(xdump d_x_b "$SHARD2")" "$XB_BEFORE" "commit apart: shard B's part rolled back"
if [ "$(xdump d_x_a "$SHARD")" != "$XA_BEFORE" ]; then
  pass "commit apart: shard A's part committed (what the message warns of)"
else
  fail "commit apart: shard A's part committed (what the message warns of)" "shard A's rows are as before the run"
fi
is "$(sql "SELECT id || ':' || name FROM d_x_a WHERE is_current AND NOT is_deleted ORDER BY id" "$SHARD" |
      paste -sd, -)" "1:Ann B" "commit apart: shard A holds key 1's new version, and key 4 deleted"
# shard B accepts again: the same rows, read again, find shard A's part
sql "DROP TRIGGER refuse ON d_x_b" "$SHARD2" >/dev/null
run_each "commit apart: the next run" "$xref" "$jx"
is "$(counts)" "read=6 skipped=0 inserted=4 expired=4 updated=0 deleted=0 unchanged=2" \
  "commit apart: the next run finds key 1's version unchanged and key 4 already deleted"
is "$(tdump d_x)" "$(tdump d_xref)" "commit apart: the table equals the local table's"

# A target that is itself a foreign table: every row on the shard.
dw check --connect "$uf"
is "$RC" 0 "check: a foreign table as the target passes (its index is the shard's)"
like "$OUT" "commit   WARN   table u_ft is a foreign table: u_ft (server shard, postgres_fdw): $RISK" \
  "check: a foreign table as the target"
file ups.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,,2024-01-01 00:00:00
2,Bob,,2024-01-01 00:00:00
3,Cy,,2024-01-01 00:00:00
EOF
run_ok "$uf" "upsert into a foreign table: initial load"
file ups.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann B,,2024-01-02 00:00:00
2,Bob,D,2024-01-02 00:00:00
4,Di,,2024-01-02 00:00:00
EOF
run_ok "$uf" "upsert into a foreign table: delta"
is "$(counts)" "read=3 skipped=0 inserted=1 expired=0 updated=1 deleted=1 unchanged=0" \
  "upsert into a foreign table: the counts"
is "$(sqln "SELECT * FROM u_ft ORDER BY id" "$SHARD")" \
"1|Ann B|<null>|2024-01-02 00:00:00
3|Cy|<null>|2024-01-01 00:00:00
4|Di|<null>|2024-01-02 00:00:00" "upsert into a foreign table: the shard's rows"

done_testing
