#!/bin/sh
# target.run_id_column: every row a run inserts, and every row whose
# values it changes in place (a type 1 overwrite, an upsert update),
# carries the run's id, the run_id of its JSON summary and of its row in
# dwload_runs; closing a version leaves the id it had, and a rerun with
# nothing new changes nothing.  An existing table without the column fails
# the run before it writes (exit 4); a bad name or one the job already
# uses for another column is a spec error (exit 2).  Runs under both
# engines (ENGINE_TESTS).
. "$TOP_SRCDIR/tests/integration/lib.sh"

# pushdown_took JOB MSG: under DWL_ENGINE=pushdown, mkjob gave the job to
# pushdown (dwload's own check said it takes it)
pushdown_took() {
  if [ "${DWL_ENGINE:-}" = pushdown ]; then
    is "$(grep -c '^  engine: pushdown' "$1")" 1 "$2: the job runs under engine: pushdown"
  else
    pass "$2: the job runs under the memory engine"
  fi
}

# rid_job NAME CSV TABLE TYPES: mkjob's job with target.run_id_column:
# loaded_by; its load: section (and more) on stdin
rid_job() {
  { echo '  run_id_column: loaded_by'; cat; } | mkjob "$1" "$2" "$3" "  types: {$4}"
}

# hybrid_job NAME CSV TABLE [LOAD-LINE]: an scd2 job keyed on id, name
# type 2, city type 1
hybrid_job() {
  printf 'load:\n  mode: scd2\n  key: id\n  lmd: lmd\n  type2: name\n  type1: city\n%s\n' "${4:-}" |
    rid_job "$1" "$2" "$3" "id: integer"
}

# labelled TABLE COLUMNS ORDER ID1 ID2: the table's rows on one line,
# COLUMNS and the run id column, which shows run1 for ID1, run2 for ID2
labelled() {
  sql "SELECT $2, CASE loaded_by WHEN '$4' THEN 'run1' WHEN '$5' THEN 'run2' ELSE loaded_by END
       FROM $1 ORDER BY $3" | tr '\n' ' '
}

# two_runs JOB CSV WHAT TEXT: runs JOB, writes TEXT (printf %b) to CSV and
# runs it again; R1 and R2 are the two runs' ids
two_runs() {
  run_ok "$1" "$3, first run"
  R1=$(field run_id)
  printf '%b' "$4" >"$2"
  run_ok "$1" "$3, second run"
  R2=$(field run_id)
}

# committed ID: 1 when dwload_runs holds run ID as committed
committed() {
  sql "SELECT count(*) FROM dwload_runs WHERE run_id = '$1' AND status = 'committed'"
}

# ---- scd2: versions, type 1 overwrites, closings ---------------------------
csv="$WORK/d.csv"
printf 'id,name,city,lmd\n1,Ann,Oslo,2024-01-01 00:00:00\n2,Bob,Rome,2024-01-01 00:00:00\n3,Cy,Kyiv,2024-01-01 00:00:00\n4,Di,Lima,2024-01-01 00:00:00\n' >"$csv"
j=$(hybrid_job rid_scd2 "$csv" t_rid_scd2)
pushdown_took "$j" "scd2"

run_ok "$j" "scd2 first run"
id1=$(field run_id)
like "$id1" "-" "scd2 first run: the summary has a run id"
is "$(committed "$id1")" 1 "scd2 first run: dwload_runs holds it as committed"
is "$(sql "SELECT count(*) FROM t_rid_scd2 WHERE loaded_by = '$id1'")|$(sql "SELECT count(*) FROM t_rid_scd2")" \
  "4|4" "scd2 first run: each of its 4 versions carries its run id"

# 1 and 4 unchanged, 2 a new version (type 2), 3 a type 1 overwrite, 5 new
printf 'id,name,city,lmd\n1,Ann,Oslo,2024-01-02 00:00:00\n2,Bo,Rome,2024-01-02 00:00:00\n3,Cy,Kiev,2024-01-02 00:00:00\n4,Di,Lima,2024-01-01 00:00:00\n5,Ed,Faro,2024-01-02 00:00:00\n' >"$csv"
run_ok "$j" "scd2 second run"
id2=$(field run_id)
is "$(counts)" "read=5 skipped=1 inserted=2 expired=1 updated=1 deleted=0 unchanged=1" \
  "scd2 second run: 2 inserted, 1 expired, 1 updated, 1 unchanged"
is "$(committed "$id2")" 1 "scd2 second run: dwload_runs holds it as committed"
unlike "$id2" "$id1" "scd2 second run: a run id of its own"
is "$(labelled t_rid_scd2 "id, name, city" "id, valid_from" "$id1" "$id2")" \
  "1|Ann|Oslo|run1 2|Bob|Rome|run1 2|Bo|Rome|run2 3|Cy|Kiev|run2 4|Di|Lima|run1 5|Ed|Faro|run2 " \
  "scd2 second run: new versions carry its id, the type 1 overwrite too; the closed version and unchanged keys keep the first"
is "$(sql "SELECT count(*) FROM t_rid_scd2 d JOIN dwload_runs r ON r.run_id = d.loaded_by WHERE r.job = 'rid_scd2'")" 6 \
  "scd2: every version joins to its run in dwload_runs"

# every row again, later, with the values the table has
printf 'id,name,city,lmd\n1,Ann,Oslo,2024-01-03 00:00:00\n2,Bo,Rome,2024-01-03 00:00:00\n3,Cy,Kiev,2024-01-03 00:00:00\n4,Di,Lima,2024-01-03 00:00:00\n5,Ed,Faro,2024-01-03 00:00:00\n' >"$csv"
before=$(tdump t_rid_scd2)
run_ok "$j" "scd2 rerun, nothing new"
id3=$(field run_id)
is "$(counts)" "read=5 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=5" \
  "scd2 rerun: every row unchanged (the run id column is no part of change detection)"
is "$(tdump t_rid_scd2)" "$before" "scd2 rerun: the table is as it was"
is "$(sql "SELECT count(*) FROM t_rid_scd2 WHERE loaded_by = '$id3'")" 0 "scd2 rerun: no row carries its id"

# ---- type1_scope: all: every version overwritten takes the id ----------------
tcsv="$WORK/t1.csv"
printf 'id,name,city,lmd\n1,Ann,Oslo,2024-01-01 00:00:00\n1,Anna,Oslo,2024-01-02 00:00:00\n2,Bob,Rome,2024-01-01 00:00:00\n' >"$tcsv"
t1=$(hybrid_job rid_t1all "$tcsv" t_rid_t1all '  type1_scope: all')
two_runs "$t1" "$tcsv" "type1_scope all" 'id,name,city,lmd\n1,Anna,Bergen,2024-01-03 00:00:00\n2,Bob,Rome,2024-01-03 00:00:00\n'
is "$(labelled t_rid_t1all "id, name, city" "id, valid_from" "$R1" "$R2")" \
  "1|Ann|Bergen|run2 1|Anna|Bergen|run2 2|Bob|Rome|run1 " \
  "type1_scope all: both versions it overwrites carry the second run's id, the unchanged key the first's"

# ---- a late row's repair: the reshaped version keeps its id ---------------------
lcsv="$WORK/late.csv"
printf 'id,name,lmd\n1,A,2024-01-01 00:00:00\n1,C,2024-01-03 00:00:00\n' >"$lcsv"
l=$(rid_job rid_late "$lcsv" t_rid_late "id: integer" <<EOF
load:
  mode: scd2
  engine: memory
  key: id
  lmd: lmd
  lookback: 7d
EOF
)
# the second run reads a row between the two versions
two_runs "$l" "$lcsv" "late" 'id,name,lmd\n1,B,2024-01-02 00:00:00\n'
is "$(labelled t_rid_late "name" "valid_from" "$R1" "$R2")" "A|run1 B|run2 C|run1 " \
  "late: the repair's new version carries the second run's id, the versions it reshapes keep the first's"

# ---- upsert --------------------------------------------------------------
ucsv="$WORK/u.csv"
printf 'id,amount\n1,10\n2,20\n3,30\n' >"$ucsv"
u=$(rid_job rid_upsert "$ucsv" t_rid_upsert "id: integer, amount: integer" <<EOF
load:
  mode: upsert
  key: id
EOF
)
pushdown_took "$u" "upsert"
run_ok "$u" "upsert first run"
u1=$(field run_id)
is "$(sql "SELECT count(*) FROM t_rid_upsert WHERE loaded_by = '$u1'")" 3 "upsert first run: its 3 rows carry its run id"
printf 'id,amount\n1,10\n2,21\n3,30\n4,40\n' >"$ucsv"
run_ok "$u" "upsert second run"
u2=$(field run_id)
is "$(committed "$u2")" 1 "upsert second run: dwload_runs holds it as committed"
is "$(labelled t_rid_upsert "id, amount" "id" "$u1" "$u2")" \
  "1|10|run1 2|21|run2 3|30|run1 4|40|run2 " \
  "upsert second run: the updated and the new row carry its id, unchanged rows keep the first"
before=$(tdump t_rid_upsert)
run_ok "$u" "upsert rerun, nothing new"
is "$(field updated)|$(field inserted)" "0|0" "upsert rerun: nothing updated or inserted"
is "$(tdump t_rid_upsert)" "$before" "upsert rerun: the table is as it was"

# ---- upsert, deletes: absent: a key that comes back ---------------------------
vcsv="$WORK/v.csv"
printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-01 00:00:00\n3,30,2024-01-01 00:00:00\n' >"$vcsv"
v=$(rid_job rid_revive "$vcsv" t_rid_revive "id: integer, amount: integer" <<EOF
load:
  mode: upsert
  key: id
  lmd: lmd
  deletes: absent
EOF
)
pushdown_took "$v" "revive"
# the second run deletes key 3 by absence
two_runs "$v" "$vcsv" "revive" 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-01 00:00:00\n'
is "$(field deleted)" 1 "revive: the second run deletes the absent key"
# key 3 again, its row not past the checkpoint: it comes back
printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-01 00:00:00\n3,30,2024-01-01 00:00:00\n' >"$vcsv"
run_ok "$v" "revive: third run"
is "$(labelled t_rid_revive "id" "id" "$R1" "$(field run_id)")" "1|run1 2|run1 3|run2 " \
  "revive: the key that comes back carries the third run's id (run2 here), the others the first's"

# ---- append and replace ----------------------------------------------------
acsv="$WORK/a.csv"
printf 'id,amount\n1,10\n2,20\n' >"$acsv"
for mode in append replace; do
  a=$(rid_job "rid_$mode" "$acsv" "t_rid_$mode" "id: integer, amount: integer" <<EOF
load:
  mode: $mode
EOF
)
  two_runs "$a" "$acsv" "$mode" "$(cat "$acsv")\\n"
  want="1|run1 1|run2 2|run1 2|run2 "
  [ "$mode" = replace ] && want="1|run2 2|run2 "
  is "$(labelled t_rid_$mode "id" "id, 2" "$R1" "$R2")" "$want" "$mode: every row carries the id of the run that wrote it"
done

# ---- plan --sql shows the column --------------------------------------------
p=$(rid_job rid_plan "$ucsv" t_rid_plan "id: integer, amount: integer" <<EOF
load:
  mode: upsert
  key: id
EOF
)
dw plan --sql "$p"
is "$RC" 0 "plan --sql: exit 0"
like "$OUT" "$(sqltext '"loaded_by"')" "plan --sql: the CREATE TABLE and the inserts name the run id column"
like "$OUT" "<run id>" "plan --sql: and show where the run's id goes"

# ---- an existing table without the column -------------------------------------
printf 'id,amount\n1,10\n2,20\n' >"$ucsv"
m=$(mkjob rid_missing "$ucsv" t_rid_missing '  types: {id: integer, amount: integer}' <<EOF
load:
  mode: upsert
  key: id
EOF
)
run_ok "$m" "a table made without the column"
sed 's/^  table: t_rid_missing$/&\n  run_id_column: loaded_by/' "$m" >"$WORK/rid_missing2.yaml"
m2="$WORK/rid_missing2.yaml"
printf 'id,amount\n1,11\n2,20\n3,30\n' >"$ucsv"
before=$(tdump t_rid_missing)
dw run "$m2"
is "$RC" 4 "missing column: the run fails with exit 4"
like "$ERR" "has no column 'loaded_by'" "missing column: the message names the column"
is "$(tdump t_rid_missing)" "$before" "missing column: the table is as it was"
is "$(committed "$(field run_id)")" 0 "missing column: dwload_runs has no committed run of it"
is "$(sql "SELECT count(*) FROM dwload_runs WHERE job = 'rid_missing' AND status = 'committed'")" 1 \
  "missing column: the first run is still the job's only committed one"
dw check --connect "$m2"
is "$RC" 4 "missing column: check exits 4 too"
like "$OUT" "has no column 'loaded_by'" "missing column: check names the column"
dw plan "$m2"
is "$RC" 4 "missing column: plan exits 4 too"
like "$ERR" "has no column 'loaded_by'" "missing column: plan names the column"

# ---- bad names ---------------------------------------------------------------
b=$(mkjob rid_bad "$ucsv" t_rid_bad '  types: {id: integer, amount: integer}' <<EOF
  run_id_column: "loaded by"
load:
  mode: upsert
  key: id
EOF
)
dw run "$b"
is "$RC" 2 "a name with a blank: exit 2"
like "$ERR" "$b:$(grep -n '^  run_id_column:' "$b" | cut -d: -f1):18: target.run_id_column: 'loaded by' is not a column name" "a name with a blank: FILE:LINE:COL names the key"
b=$(mkjob rid_clash "$ucsv" t_rid_clash '  types: {id: integer, amount: integer}' <<EOF
  run_id_column: ID
load:
  mode: upsert
  key: id
EOF
)
dw run "$b"
is "$RC" 2 "the name of a key column: exit 2"
like "$ERR" "target.run_id_column: column 'ID' is also in load.key" "the name of a key column: the message says so"
b=$(mkjob rid_src "$ucsv" t_rid_src '  types: {id: integer, amount: integer}' <<EOF
  run_id_column: amount
load:
  mode: upsert
  key: id
EOF
)
dw run "$b"
is "$RC" 2 "the name of a source column: exit 2"
like "$ERR" "target.run_id_column: 'amount' is already a column of the source" "the name of a source column: the message says so"
is "$(table_exists t_rid_src)" 0 "the name of a source column: no table made"

done_testing
