# SCD type 2 through the real binary, the change rules: each numbered
# semantic of the change engine (new keys, chains, collapse, no-op rows and
# reruns, type 1 scopes, duplicates, fingerprints, exact keys, late rows)
# and what plan shows, checked against the exact table left in the
# warehouse (SQLite, PostgreSQL or MariaDB).  The dimension's own columns
# (close rules, open ends, surrogate keys, bookkeeping left out), asof and
# a wide dimension are in scd2_dimension.sh.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# ---- (1) new keys --------------------------------------------------------
csv=$(file new.csv <<'EOF'
id,name,address,lmd
1,Ann,Street 1,2024-01-01 10:00:00
2,Bob,Road 2,2024-01-02 11:00:00
3,Cy,Lane 3,2024-01-03 12:00:00
EOF
)
j=$(mkjob new "$csv" d_new <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "new keys"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "new keys: counts"
is "$(field checkpoint)" "2024-01-03 12:00:00" "new keys: checkpoint is the greatest lmd"
is "$(cols d_new)" "dim_id,id,name,address,lmd,valid_from,valid_to,is_current,is_deleted" \
  "new keys: the table has the source and the default bookkeeping columns"
is "$(sqln 'select dim_id, id, name, address, lmd, valid_from, valid_to, is_current, is_deleted from d_new order by dim_id')" \
"1|1|Ann|Street 1|2024-01-01 10:00:00|2024-01-01 10:00:00|<null>|1|0
2|2|Bob|Road 2|2024-01-02 11:00:00|2024-01-02 11:00:00|<null>|1|0
3|3|Cy|Lane 3|2024-01-03 12:00:00|2024-01-03 12:00:00|<null>|1|0" \
  "new keys: one current version each, valid_from = lmd, open end NULL, not deleted"

# ---- (2) a chain of versions of one key, source order shuffled ------------
csv=$(file chain.csv <<'EOF'
id,city,lmd
K,Paris,2024-03-01 00:00:00
K,Berlin,2024-01-01 00:00:00
K,Rome,2024-02-01 00:00:00
EOF
)
j=$(mkjob chain "$csv" d_chain <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "chain"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "chain: counts"
is "$(sqln 'select dim_id, city, valid_from, valid_to, is_current from d_chain order by valid_from')" \
"1|Berlin|2024-01-01 00:00:00|2024-02-01 00:00:00|0
2|Rome|2024-02-01 00:00:00|2024-03-01 00:00:00|0
3|Paris|2024-03-01 00:00:00|<null>|1" \
  "chain: three versions ordered by lmd, each closed at the next one's start, only the last current"

# ---- (2) collapse of consecutive equal rows; a flip-flop is kept ----------
csv=$(file collapse.csv <<'EOF'
id,city,lmd
A,Oslo,2024-01-01 00:00:00
A,Oslo,2024-01-02 00:00:00
A,Oslo,2024-01-03 00:00:00
A,Bergen,2024-01-04 00:00:00
B,Oslo,2024-01-01 00:00:00
B,Bergen,2024-01-02 00:00:00
B,Oslo,2024-01-03 00:00:00
EOF
)
j=$(mkjob collapse "$csv" d_collapse <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "collapse"
is "$(counts)" "read=7 skipped=0 inserted=5 expired=0 updated=0 deleted=0 unchanged=2" \
  "collapse: the rows that only moved the lmd count as unchanged"
is "$(sqln 'select id, city, lmd, valid_from, valid_to, is_current from d_collapse order by id, valid_from')" \
"A|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-01-04 00:00:00|0
A|Bergen|2024-01-04 00:00:00|2024-01-04 00:00:00|<null>|1
B|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-01-02 00:00:00|0
B|Bergen|2024-01-02 00:00:00|2024-01-02 00:00:00|2024-01-03 00:00:00|0
B|Oslo|2024-01-03 00:00:00|2024-01-03 00:00:00|<null>|1" \
  "collapse: three equal rows make one version; Oslo-Bergen-Oslo stays three versions"

# ---- no-op row, then a rerun of the same file -----------------------------
csv=$(file noop1.csv <<'EOF'
id,name,city,lmd
1,Ann,Oslo,2024-01-01 00:00:00
2,Bob,Rome,2024-01-01 00:00:00
EOF
)
j=$(mkjob noop "$csv" d_noop <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "no-op: first run"
before=$(tdump d_noop dim_id)
file noop1.csv >/dev/null <<'EOF'
id,name,city,lmd
1,Ann,Oslo,2024-01-01 00:00:00
2,Bob,Rome,2024-02-01 00:00:00
EOF
run_ok "$j" "no-op: a row past the checkpoint with the same values"
is "$(counts)" "read=2 skipped=1 inserted=0 expired=0 updated=0 deleted=0 unchanged=1" "no-op: counted unchanged"
is "$(field checkpoint)" "2024-02-01 00:00:00" "no-op: the checkpoint still moves on"
is "$(tdump d_noop dim_id)" "$before" "no-op: the table is byte for byte the same"
run_ok "$j" "rerun of the same file"
is "$(counts)" "read=2 skipped=2 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "rerun: every row skipped"
is "$(tdump d_noop dim_id)" "$before" "rerun: the table is byte for byte the same"

# ---- type 1: scope current and scope all; type 1 + type 2 in one row ------
for scope in current all; do
  file t1_$scope.csv >/dev/null <<'EOF'
id,name,city,lmd
1,Ann,Oslo,2024-01-01 00:00:00
1,Ann,Rome,2024-02-01 00:00:00
2,Bob,Oslo,2024-01-01 00:00:00
EOF
  j=$(mkjob t1_$scope "$WORK/t1_$scope.csv" d_t1_$scope <<EOF
load:
  mode: scd2
  key: [id]
  lmd: lmd
  type1: [name]
  type1_scope: $scope
EOF
  )
  run_ok "$j" "type1 $scope: first run"
  file t1_$scope.csv >/dev/null <<'EOF'
id,name,city,lmd
1,Anna,Rome,2024-03-01 00:00:00
2,Bob,Oslo,2024-01-01 00:00:00
EOF
  run_ok "$j" "type1 $scope: a type 1 change"
  is "$(counts)" "read=2 skipped=1 inserted=0 expired=0 updated=1 deleted=0 unchanged=0" \
    "type1 $scope: updated in place, no new version"
  if [ $scope = current ]; then
    exp="1|1|Ann|Oslo|2024-01-01 00:00:00|2024-02-01 00:00:00|0
1|2|Anna|Rome|2024-02-01 00:00:00|<null>|1
2|3|Bob|Oslo|2024-01-01 00:00:00|<null>|1"
    msg="type1 current: only the current version has the new name"
  else
    exp="1|1|Anna|Oslo|2024-01-01 00:00:00|2024-02-01 00:00:00|0
1|2|Anna|Rome|2024-02-01 00:00:00|<null>|1
2|3|Bob|Oslo|2024-01-01 00:00:00|<null>|1"
    msg="type1 all: every version of the key has the new name"
  fi
  is "$(sqln "select id, dim_id, name, city, valid_from, valid_to, is_current from d_t1_$scope order by id, valid_from")" \
    "$exp" "$msg"
  file t1_$scope.csv >/dev/null <<'EOF'
id,name,city,lmd
1,Anne,Lima,2024-04-01 00:00:00
EOF
  run_ok "$j" "type1 $scope: a type 1 and a type 2 change in one row"
  # scope all also overwrites the older versions' name in place: updated 1.
  if [ $scope = current ]; then n_upd=0; else n_upd=1; fi
  is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=$n_upd deleted=0 unchanged=0" \
    "type1 $scope: type 1 + type 2 change makes one new version"
  if [ $scope = current ]; then
    exp="1|Ann|Oslo|2024-01-01 00:00:00|2024-02-01 00:00:00|0
2|Anna|Rome|2024-02-01 00:00:00|2024-04-01 00:00:00|0
4|Anne|Lima|2024-04-01 00:00:00|<null>|1"
    msg="type1 current: the new version carries the new name, the closed ones keep theirs"
  else
    exp="1|Anne|Oslo|2024-01-01 00:00:00|2024-02-01 00:00:00|0
2|Anne|Rome|2024-02-01 00:00:00|2024-04-01 00:00:00|0
4|Anne|Lima|2024-04-01 00:00:00|<null>|1"
    msg="type1 all: the new name is on every version, old and new"
  fi
  is "$(sqln "select dim_id, name, city, valid_from, valid_to, is_current from d_t1_$scope where id = '1' order by valid_from")" \
    "$exp" "$msg"
done

# ---- (3) same-lmd duplicates: identical count once, different fail --------
csv=$(file dup.csv <<'EOF'
id,city,lmd
1,Oslo,2024-01-01 00:00:00
1,Oslo,2024-01-01 00:00:00
2,Rome,2024-01-01 00:00:00
EOF
)
j=$(mkjob dup "$csv" d_dup <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "identical duplicates"
is "$(counts)" "read=3 skipped=0 inserted=2 expired=0 updated=0 deleted=0 unchanged=1" \
  "identical duplicates: one version, the copy unchanged"
is "$(sqln 'select id, city, valid_from, is_current from d_dup order by id')" \
"1|Oslo|2024-01-01 00:00:00|1
2|Rome|2024-01-01 00:00:00|1" "identical duplicates: one version per key"
before=$(tdump d_dup dim_id)
file dup.csv >/dev/null <<'EOF'
id,city,lmd
2,Lima,2024-02-01 00:00:00
3,Kiev,2024-02-01 00:00:00
1,Oslo,2024-02-01 00:00:00
4,Graz,2024-02-01 00:00:00
1,Bonn,2024-02-01 00:00:00
EOF
dw run "$j"
is "$RC" 1 "conflicting duplicates: exit 1"
like "$ERR" "(id='1')" "conflicting duplicates: the message names the key"
like "$ERR" "dup.csv:4 and dup.csv:6" "conflicting duplicates: the message names both source rows"
is "$(field status)" "failed" "conflicting duplicates: summary status failed"
is "$(tdump d_dup dim_id)" "$before" "conflicting duplicates: nothing written (not even the other keys' changes)"
dw state "$j"
like "$OUT" "checkpoint:  2024-01-01 00:00:00" "conflicting duplicates: the checkpoint did not move"

# ---- (6) fingerprints: ("ab","c") vs ("a","bc"); NULL vs "" -------------
csv=$(file fp.csv <<'EOF'
id,a,b,lmd
1,ab,c,2024-01-01 00:00:00
EOF
)
j=$(mkjob fp "$csv" d_fp <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "fingerprint: first run"
file fp.csv >/dev/null <<'EOF'
id,a,b,lmd
1,a,bc,2024-01-02 00:00:00
EOF
run_ok "$j" "fingerprint: shifted boundary"
is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" \
  "fingerprint: (\"ab\",\"c\") -> (\"a\",\"bc\") is a change"
is "$(sqln 'select a, b, valid_from, valid_to, is_current from d_fp order by valid_from')" \
"ab|c|2024-01-01 00:00:00|2024-01-02 00:00:00|0
a|bc|2024-01-02 00:00:00|<null>|1" "fingerprint: two versions"

csv=$(file nul.csv <<'EOF'
id,x,lmd
1,,2024-01-01 00:00:00
EOF
)
j=$(mkjob nul "$csv" d_nul <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "NULL vs empty: NULL first"
file nul.csv >/dev/null <<'EOF'
id,x,lmd
1,"",2024-01-02 00:00:00
EOF
run_ok "$j" "NULL vs empty: then \"\""
is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" "NULL -> \"\" is a change"
file nul.csv >/dev/null <<'EOF'
id,x,lmd
1,"",2024-01-03 00:00:00
EOF
run_ok "$j" "NULL vs empty: \"\" again"
is "$(counts)" "read=1 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=1" \
  "\"\" -> \"\" (read back from the table) is no change"
file nul.csv >/dev/null <<'EOF'
id,x,lmd
1,,2024-01-04 00:00:00
EOF
run_ok "$j" "NULL vs empty: NULL again"
is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" "\"\" -> NULL is a change"
is "$(sqln 'select x, valid_from, valid_to, is_current from d_nul order by valid_from')" \
"<null>|2024-01-01 00:00:00|2024-01-02 00:00:00|0
|2024-01-02 00:00:00|2024-01-04 00:00:00|0
<null>|2024-01-04 00:00:00|<null>|1" "NULL vs empty: three versions, NULL and '' stored as such"

# ---- keys compare exactly: case and trailing spaces -------------------------
# 'a', 'A' and 'a ' are three keys: a change of one leaves the others'
# versions alone (MariaDB's usual collations compare text ignoring case or
# trailing spaces).  On MariaDB also in a table made while the database's
# default collation is MariaDB's own default, utf8mb4_general_ci.
# keys_exact TABLE JOB MSG
keys_exact() {
  file "$2.csv" >/dev/null <<'EOF'
id,v,lmd
"a",1,2024-01-01 00:00:00
"A",1,2024-01-01 00:00:00
"a ",1,2024-01-01 00:00:00
EOF
  j=$(mkjob "$2" "$WORK/$2.csv" "$1" <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
  )
  run_ok "$j" "$3: first run"
  is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "$3: three keys"
  file "$2.csv" >/dev/null <<'EOF'
id,v,lmd
a,2,2024-02-01 00:00:00
"a ",1,2024-02-01 00:00:00
EOF
  run_ok "$j" "$3: key 'a' changed, 'a ' the same"
  is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" \
    "$3: one version expired and one inserted, the other key unchanged"
  # the keys in brackets, to show trailing spaces
  is "$(sqln "select dim_id, id, v, is_current from $1 order by dim_id" |
        awk -F'|' 'BEGIN { OFS = "|" } { $2 = "[" $2 "]"; print }')" \
"1|[a]|1|0
2|[A]|1|1
3|[a ]|1|1
4|[a]|2|1" "$3: only key 'a' has a new version; 'A' and 'a ' keep theirs, current"
}
keys_exact d_keys keys "exact keys"
if is_warehouse mariadb; then
  coll=$(sql 'select @@collation_database')
  sql 'alter database collate utf8mb4_general_ci'
  keys_exact d_keys_ci keys_ci "exact keys, general_ci database"
  sql "alter database collate $coll"
fi

# ---- plan and plan --sql ---------------------------------------------------
csv=$(file plan.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
2,a,2024-01-01 00:00:00
3,a,2024-01-01 00:00:00
EOF
)
# (the statements are the memory engine's; pushdown.sh checks its own)
j=$(DWL_ENGINE= mkjob plan "$csv" d_plan <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "plan: first run"
file plan.csv >/dev/null <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
2,b,2024-02-01 00:00:00
3,a,2024-02-01 00:00:00
4,O'Neil,2024-02-01 00:00:00
EOF
before=$(wh_dump)
dw plan "$j"
is "$RC" 0 "plan: exit 0"
plan_counts=$(counts)
is "$plan_counts" "read=4 skipped=1 inserted=2 expired=1 updated=0 deleted=0 unchanged=1" "plan: the counts"
is "$(wh_dump)" "$before" "plan: the warehouse (tables and job state) is unchanged"
dw plan --sql "$j"
is "$RC" 0 "plan --sql: exit 0"
# Every warehouse stages the expires (key, valid_from, valid_to, deleted)
# and applies them in one UPDATE.
if is_warehouse sqlite; then
  expire_sql='UPDATE "d_plan" AS d SET "valid_to" = s."dwl_valid_to", "is_deleted" = s."dwl_deleted", "is_current" = 0 FROM dwl_stage_expire AS s WHERE d."id" = s."id" AND d."valid_from" = s."dwl_valid_from" AND d."is_current" = 1;'
  expire_par="  -- ('2', '2024-01-01 00:00:00', '2024-02-01 00:00:00', '0')"
elif is_warehouse postgresql; then
  expire_sql='UPDATE "d_plan" AS d SET "valid_to" = s."dwl_valid_to", "is_deleted" = s."dwl_deleted", "is_current" = FALSE FROM dwl_stage_expire AS s WHERE d."id" = s."id" AND d."valid_from" = s."dwl_valid_from" AND d."is_current" = TRUE;'
  expire_par="  -- ('2', '2024-01-01 00:00:00', '2024-02-01 00:00:00', '0')"
else
  expire_sql='UPDATE "d_plan" AS d JOIN dwl_stage_expire AS s ON d."id" = s."id" AND d."valid_from" = s."dwl_valid_from" AND d."is_current" = 1 SET d."valid_to" = s."dwl_valid_to", d."is_deleted" = s."dwl_deleted", d."is_current" = 0;'
  expire_par="  -- ('2', '2024-01-01 00:00:00', '2024-02-01 00:00:00', '0')"
fi
like "$OUT" "$(sqltext "$expire_sql")" "plan --sql: the expire UPDATE"
like "$OUT" "$expire_par" "plan --sql: its parameters"
like "$OUT" "$(sqltext 'INSERT INTO "d_plan" ("dim_id", "id", "v", "lmd", "valid_from", "valid_to", "is_current", "is_deleted") VALUES (?, ?, ?, ?, ?, ?, ?, ?);')" \
  "plan --sql: the INSERT"
like "$OUT" "  -- ('4', '2', 'b', '2024-02-01 00:00:00', '2024-02-01 00:00:00', NULL, '1', '0')" \
  "plan --sql: the inserted version's parameters, NULL unquoted"
like "$OUT" "  -- ('5', '4', 'O''Neil', '2024-02-01 00:00:00', '2024-02-01 00:00:00', NULL, '1', '0')" \
  "plan --sql: quotes doubled inside parameters"
is "$(wh_dump)" "$before" "plan --sql: nothing written"
run_ok "$j" "plan: then the run"
is "$(counts)" "$plan_counts" "plan: the run reports what the plan did"
is "$(sqln 'select dim_id, id, v, valid_to, is_current from d_plan order by dim_id')" \
"1|1|a|<null>|1
2|2|a|2024-02-01 00:00:00|0
3|3|a|<null>|1
4|2|b|<null>|1
5|4|O'Neil|<null>|1" "plan: the run wrote what the plan showed"

# ---- late rows --------------------------------------------------------------
csv=$(file late.csv <<'EOF'
id,v,lmd
1,a,2024-01-10 00:00:00
EOF
)
j=$(mkjob late "$csv" d_late <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "late: first run"
before=$(tdump d_late dim_id)
# A second job on the same table (a backfill) has no checkpoint yet, so
# its rows are all past it; one of them is older than the current version.
csv=$(file late2.csv <<'EOF'
id,v,lmd
2,n,2024-01-20 00:00:00
1,b,2024-01-05 00:00:00
EOF
)
# (the memory engine's message and count: pushdown takes late: reject
# without a reject file, but fails with its own message, uncounted)
j2=$(mkjob late2 "$csv" d_late <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  late: reject
  engine: memory
EOF
)
dw run "$j2"
is "$RC" 1 "late row, late: reject: exit 1"
like "$ERR" "late2.csv:3: key (id='1') has lmd 2024-01-05 00:00:00, before the key's stored history ends (2024-01-10 00:00:00): a late row, and load.late is reject" \
  "late row, reject: the message names the row, the key and both times"
is "$(field late_rejected)" 1 "late row, reject: counted late_rejected"
is "$(tdump d_late dim_id)" "$before" "late row, reject: nothing written"
# The default, repair: the row becomes the version before the current one
# (the memory engine's: pushdown fails on late rows).
j2=$(mkjob late2 "$csv" d_late <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  engine: memory
EOF
)
run_ok "$j2" "late row, repair"
is "$(field late_repaired)" 1 "late row, repair: counted late_repaired"
is "$(sqln "select id, v, valid_from, valid_to, is_current from d_late order by id, valid_from")" \
"1|b|2024-01-05 00:00:00|2024-01-10 00:00:00|0
1|a|2024-01-10 00:00:00|<null>|1
2|n|2024-01-20 00:00:00|<null>|1" "late row, repair: spliced in before the current version, which stays"
before=$(tdump d_late dim_id)
csv=$(file late3.csv <<'EOF'
id,v,lmd
1,c,2024-01-10 00:00:00
EOF
)
j3=$(mkjob late3 "$csv" d_late <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  engine: memory
EOF
)
dw run "$j3"
is "$RC" 1 "same lmd as the current version, other values: exit 1"
like "$ERR" "the same as a stored version of the key" "same lmd as the current version: said so"
is "$(tdump d_late dim_id)" "$before" "same lmd as the current version: nothing written"

# Several type 1 changes of one current version in one batch, for keys
# one after another: the writer stages the first, replaces it with the
# second (batch_unadd), and goes on with the next key; each key's last
# value must land, and the next key's rows after the replaced one too.
csv=$(file t1many.csv <<'EOF'
id,city,phone,lmd
1,a,p0,2024-01-01 00:00:00
2,b,q0,2024-01-01 00:00:00
3,c,r0,2024-01-01 00:00:00
EOF
)
j=$(mkjob t1many "$csv" d_t1many <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
  type2: [city]
  type1: [phone]
EOF
)
run_ok "$j" "type 1 twice a batch: the first load"
file t1many.csv >/dev/null <<'EOF'
id,city,phone,lmd
1,a,p1,2024-01-02 00:00:00
1,a,p2,2024-01-03 00:00:00
2,b,q1,2024-01-02 00:00:00
2,b,q2,2024-01-03 00:00:00
3,c,r1,2024-01-02 00:00:00
EOF
run_ok "$j" "type 1 twice a batch: the changes"
is "$(sqln "select id, city, phone, valid_to from d_t1many order by id, valid_from")" \
"1|a|p2|<null>
2|b|q2|<null>
3|c|r1|<null>" "type 1 twice a batch: each key's last type 1 value, no new version"

done_testing
