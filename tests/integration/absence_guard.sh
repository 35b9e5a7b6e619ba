# The guards of deletions by absence, through the real binary: a source
# that delivers no rows never deletes by absence (scd2, upsert, a JSON page
# {"data":[]}) nor empties a replace job's table, unless allowed
# (load.allow_empty, --allow-empty); a run that would delete more of the
# current keys than load.max_deletes allows (default 50%; a count, a
# percentage or all; --max-deletes for one run) fails, and plan says so;
# a rejected row whose key is readable counts as present, and one whose
# key cannot be read holds every deletion by absence back.  Each refusal
# exits 1, names the job, the table, the counts and the override, and
# writes nothing (the table and the checkpoint as before).
. "$TOP_SRCDIR/tests/integration/lib.sh"

# ckpt JOB: the job's stored checkpoint
ckpt() {
  sql "select checkpoint from dwload_state where job = '$1'"
}

# refused GUARD ABSENT TABLE JOB MSG: the last run failed with exit 4 on
# GUARD with ABSENT keys counted, and TABLE and JOB's checkpoint are as
# they were before it (BEFORE, CKPT)
refused() {
  is "$RC|$(field status)|$(field guard)|$(field absent)|$(field deleted)" "4|failed|$1|$2|0" \
    "$5: exit 4, guard $1, $2 absent, nothing deleted"
  is "$(tdump "$3")" "$BEFORE" "$5: the table is as before"
  is "$(ckpt "$4")" "$CKPT" "$5: the checkpoint is as before"
}

# remember TABLE JOB: BEFORE and CKPT for refused
remember() {
  BEFORE=$(tdump "$1")
  CKPT=$(ckpt "$2")
}

three='id,amount,lmd
1,10,2024-01-01 00:00:00
2,20,2024-01-01 00:00:00
3,30,2024-01-01 00:00:00'

# absent_job NAME MODE [LOAD-LINES]: n, csv (holding 1..3) and j, a job in
# MODE (scd2: memory engine; upsert: DWL_ENGINE's) with deletes: absent
# reading csv into t_NAME, run once
absent_job() {
  n=$1
  csv="$WORK/$n.csv"
  printf '%s\n' "$three" >"$csv"
  j=$(mkjob "$n" "$csv" "t_$n" '  types: {id: integer, amount: integer}' <<EOF
load:
  mode: $2
  key: [id]
  lmd: lmd
  deletes: absent
${3:-}
EOF
)
  run_ok "$j" "$n: load 1..3"
}

# guard_suite NAME MODE: the empty-extract and mass-deletion guards on an
# absent_job
guard_suite() {
  absent_job "$1" "$2"
  remember "t_$n" "$n"

  # ---- an extract with no rows
  printf 'id,amount,lmd\n' >"$csv"
  dw run "$j"
  refused empty_extract 3 "t_$n" "$n" "$n: a header-only extract"
  like "$ERR" "job $n: the source delivered no rows, and deletes: absent would delete every current key of t_$n (3)" \
    "$n: the message names the job, the table and the count"
  like "$ERR" "--allow-empty --max-deletes all (or set load.allow_empty: true)" "$n: the message says how to allow it"
  dw plan "$j"
  is "$RC|$(field status)|$(field guard)|$(field absent)" "4|failed|empty_extract|3" \
    "$n: plan of the empty extract: the guard would stop it, 3 absent"
  like "$ERR" "deletes: absent would delete every current key of t_$n (3)" "$n: plan says why"
  # allowed empty, still judged by max_deletes (100% > 50%)
  dw run --allow-empty "$j"
  refused max_deletes 3 "t_$n" "$n" "$n: --allow-empty alone"
  like "$ERR" "would delete 3 of the 3 current keys of t_$n (100.0%), more than load.max_deletes: 50% allows (1)" \
    "$n: --allow-empty alone: max_deletes still applies, and says so"
  dw run --allow-empty --max-deletes all "$j"
  is "$RC|$(field status)|$(field deleted)|$(field absent)|$(field guard)" "0|ok|3|3|null" \
    "$n: --allow-empty --max-deletes all: every key deleted"

  # ---- mass deletion: 4 keys back, then only one of them
  printf '%s\n4,40,2024-01-02 00:00:00\n' "$three" | sed 's/2024-01-01/2024-02-01/' >"$csv"
  run_ok "$j" "$n: 1..4 back"
  remember "t_$n" "$n"
  printf 'id,amount,lmd\n1,10,2024-02-01 00:00:00\n' >"$csv"
  dw run "$j"
  refused max_deletes 3 "t_$n" "$n" "$n: 3 of 4 keys missing (default 50%)"
  like "$ERR" "job $n: deletes: absent would delete 3 of the 4 current keys of t_$n (75.0%), more than load.max_deletes: 50% allows (2)" \
    "$n: the message names the job, the table, the counts and the limit"
  like "$ERR" "run once with --max-deletes 3 (or all), or raise load.max_deletes" "$n: the message says how to allow it"
  dw plan "$j"
  is "$RC|$(field status)|$(field guard)|$(field absent)|$(field deleted)" "4|failed|max_deletes|3|0" \
    "$n: plan: 3 would be deleted, and the guard would stop it"
  dw plan --max-deletes 3 "$j"
  is "$RC|$(field status)|$(field guard)|$(field absent)|$(field deleted)" "0|ok|null|3|3" \
    "$n: plan --max-deletes 3: would delete 3"
  is "$(tdump "t_$n")" "$BEFORE" "$n: plan wrote nothing"
  dw run --max-deletes 2 "$j"
  refused max_deletes 3 "t_$n" "$n" "$n: --max-deletes 2 is a count"
  like "$ERR" "more than --max-deletes: 2 allows (2)" "$n: the message names the command-line limit"
  dw run --max-deletes 74.9% "$j"
  refused max_deletes 3 "t_$n" "$n" "$n: --max-deletes 74.9%"
  # exactly half is not more than half
  printf 'id,amount,lmd\n1,10,2024-02-01 00:00:00\n2,20,2024-02-01 00:00:00\n' >"$csv"
  dw run "$j"
  is "$RC|$(field deleted)|$(field absent)|$(field guard)" "0|2|2|null" "$n: 2 of 4 keys missing: at the limit, deleted"
  is "$(sql "select count(*) from t_$n where id in (1, 2) $([ "$2" = scd2 ] && echo 'and is_current = TRUE and is_deleted = FALSE')")" 2 \
    "$n: the keys the source has stay"

  # ---- the limit in the spec: a count, and all
  sed -i 's/^  deletes: absent$/  deletes: absent\n  max_deletes: 0/' "$j"
  printf 'id,amount,lmd\n1,10,2024-02-01 00:00:00\n' >"$csv"
  remember "t_$n" "$n"
  dw run "$j"
  refused max_deletes 1 "t_$n" "$n" "$n: max_deletes: 0 refuses any deletion by absence"
  like "$ERR" "more than load.max_deletes: 0 allows (0)" "$n: max_deletes: 0 is named"
  sed -i 's/^  max_deletes: 0$/  max_deletes: all\n  allow_empty: true/' "$j"
  printf 'id,amount,lmd\n' >"$csv"
  dw run "$j"
  is "$RC|$(field deleted)|$(field guard)" "0|2|null" "$n: max_deletes: all, allow_empty: true: the empty extract deletes the rest"
}

guard_suite gscd scd2
guard_suite gups upsert

# ---- rejected rows -----------------------------------------------------------
# rejects_suite NAME MODE: a row rejected for a bad value still delivers its
# key; a row whose key cannot be read holds the deletions back
rejects_suite() {
  absent_job "$1" "$2" "  max_rejects: 5
  reject_file: $1.rejects.csv"
  current="id in (1, 2, 3)"
  [ "$2" = scd2 ] && current="$current and is_current = TRUE and is_deleted = FALSE"
  # 3 comes with a bad amount, and is written as 03: its key still reads
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-01 00:00:00\n03,n/a,2024-01-02 00:00:00\n' >"$csv"
  dw run "$j"
  is "$RC|$(field rejected)|$(field deleted)|$(field absent)" "0|1|0|0" "$n: a row rejected for its amount: its key is present"
  is "$(sql "select count(*) from t_$n where $current")" 3 "$n: key 3 is kept"
  # 3 dated beyond load.future_tolerance: set aside, but delivered
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-01 00:00:00\n3,30,9999-12-31 23:59:59\n' >"$csv"
  dw run "$j"
  is "$RC|$(field rejected)|$(field deleted)|$(field absent)" "0|1|0|0" "$n: a row rejected for a far-future lmd: its key is present"
  is "$(sql "select count(*) from t_$n where $current")" 3 "$n: key 3 is kept after its far-future row"
  # the same, with key 2 really gone: only 2 is deleted
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n3,n/a,2024-01-02 00:00:00\n' >"$csv"
  dw run "$j"
  is "$RC|$(field rejected)|$(field deleted)|$(field absent)|$(field guard)" "0|1|1|1|null" \
    "$n: a readable rejected key and a missing one: the missing one deleted"
  is "$(sql "select id from t_$n where $current order by id")" "1
3" "$n: keys 1 and 3 kept"
  # the deleted key 2 delivered again, but rejected: its values revive nothing
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,n/a,2024-01-01 00:00:00\n3,n/a,2024-01-02 00:00:00\n' >"$csv"
  dw run "$j"
  is "$RC|$(field rejected)|$(field inserted)|$(field deleted)" "0|2|0|0" \
    "$n: a rejected row of a deleted key: not revived, nothing deleted"
  is "$(sql "select id from t_$n where $current order by id")" "1
3" "$n: key 2 stays deleted"
  # a key that does not read as an integer: the deletions wait
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-05 00:00:00\n3,30,2024-01-01 00:00:00\n4,40,2024-01-05 00:00:00\n' >"$csv"
  run_ok "$j" "$n: 2 and 4 back"
  remember "t_$n" "$n"
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\nfour,40,2024-01-04 00:00:00\n' >"$csv"
  dw run "$j"
  is "$RC|$(field rejected)|$(field deleted)|$(field absent)|$(field guard)" "0|1|0|3|unreadable_reject" \
    "$n: a rejected row without a readable key: no deletion by absence, and the summary says why"
  like "$ERR" "1 rejected row had no readable key (the first: $n.csv:3), so deletes: absent deletes none of the 3 keys of t_$n missing from the source" \
    "$n: a warning says so"
  is "$(tdump "t_$n")" "$BEFORE" "$n: the table is as before"
  # a ragged row (the CSV plugin hands over its raw text only)
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n4,40\n' >"$csv"
  dw run "$j"
  is "$RC|$(field rejected)|$(field deleted)|$(field guard)" "0|1|0|unreadable_reject" \
    "$n: a ragged row: no deletion by absence"
  is "$(tdump "t_$n")" "$BEFORE" "$n: ragged row: the table is as before"
  # nothing rejected: the deletions go through (3 of 4: allowed for the run)
  printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n' >"$csv"
  dw run --max-deletes all "$j"
  is "$RC|$(field rejected)|$(field deleted)|$(field guard)" "0|0|3|null" "$n: clean extract: the 3 missing keys deleted"
}

rejects_suite rscd scd2
rejects_suite rups upsert

# ---- mode replace -----------------------------------------------------------
csv="$WORK/rep.csv"
printf '%s\n' "$three" >"$csv"
j=$(mkjob rep "$csv" t_rep '  types: {id: integer, amount: integer}' <<'EOF'
load:
  mode: replace
  max_rejects: 5
  reject_file: rep.rejects.csv
EOF
)
run_ok "$j" "replace: load 1..3"
remember t_rep rep
printf 'id,amount,lmd\n' >"$csv"
dw run "$j"
is "$RC|$(field status)|$(field guard)" "4|failed|empty_extract" "replace: a header-only extract is refused"
like "$ERR" "job rep: the source delivered no rows to load, and mode replace would empty t_rep (3 rows)" \
  "replace: the message names the job, the table and its rows"
like "$ERR" "run once with --allow-empty (or set load.allow_empty: true)" "replace: the message says how to allow it"
is "$(tdump t_rep)" "$BEFORE" "replace: the table is as before"
printf 'id,amount,lmd\n4,n/a,2024-01-01 00:00:00\n' >"$csv"
dw run "$j"
is "$RC|$(field rejected)|$(field guard)" "4|1|empty_extract" "replace: only rejected rows: refused too"
is "$(tdump t_rep)" "$BEFORE" "replace: only rejected rows: the table is as before"
dw plan "$j"
is "$RC|$(field guard)" "4|empty_extract" "replace: plan says the guard would stop it"
printf '4,40,2024-01-01 00:00:00\n' >>"$csv"
run_ok "$j" "replace: one good row among rejected ones"
is "$(sql 'select id from t_rep')" 4 "replace: the table is the good row"
printf 'id,amount,lmd\n' >"$csv"
dw run --allow-empty "$j"
is "$RC|$(sql 'select count(*) from t_rep')" "0|0" "replace --allow-empty: the table emptied"
printf '%s\n' "$three" >"$csv"
run_ok "$j" "replace: 1..3 again"
printf 'id,amount,lmd\n' >"$csv"
sed -i 's/^  mode: replace$/  mode: replace\n  allow_empty: true/' "$j"
dw run "$j"
is "$RC|$(sql 'select count(*) from t_rep')" "0|0" "replace with load.allow_empty: true: the table emptied"

# ---- a JSON page {"data":[]} ----------------------------------------------
API="$WORK/api"
mkdir "$API" || exit 1
if ! httpd_start "$API"; then
  echo "Bail out! tests/httpd.py did not start: $(cat "$API.err")"
  exit 1
fi
HTTPD_PID=$STARTED_PID
printf '{"data":[{"id":1,"amount":10,"lmd":"2024-01-01 00:00:00"},{"id":2,"amount":20,"lmd":"2024-01-01 00:00:00"}]}' \
  >"$API/page.json"
j=$({
  cat <<EOF
version: 1
job: hjson
source:
  plugin: http_json
  url: http://127.0.0.1:$(cat "$API/port")/raw/page.json
  records: data
  fields: {id: id, amount: amount, lmd: lmd}
  types: {id: integer, amount: integer, lmd: timestamp}
target:
  connection: "$WH_CONN"
  table: t_hjson
load:
  mode: upsert
  key: [id]
  lmd: lmd
  deletes: absent
EOF
} | _engine >"$WORK/hjson.yaml"; echo "$WORK/hjson.yaml")
run_ok "$j" "http_json: load 1 and 2"
remember t_hjson hjson
printf '{"data":[]}' >"$API/page.json"
dw run "$j"
refused empty_extract 2 t_hjson hjson "http_json: a page {\"data\":[]}"
like "$ERR" "deletes: absent would delete every current key of t_hjson (2)" "http_json: the message says why"
kill "$HTTPD_PID" 2>/dev/null
wait "$HTTPD_PID" 2>/dev/null

# ---- nothing to lose: an empty source and a table without current keys ----
printf 'id,amount,lmd\n' >"$WORK/none.csv"
for m in scd2 upsert replace; do
  if [ $m = replace ]; then load="  mode: replace"; else load="  mode: $m
  key: [id]
  lmd: lmd
  deletes: absent"; fi
  j=$(mkjob "none_$m" "$WORK/none.csv" "t_none_$m" '  types: {id: integer, amount: integer}' <<EOF
load:
$load
EOF
)
  dw run "$j"
  is "$RC|$(field status)|$(field absent)|$(field guard)" "0|ok|0|null" "$m: a first run from an empty source is not refused"
done

# ---- the command line ---------------------------------------------------------
for bad in 101% -1 1.5 x "" "50 %"; do
  dw run --max-deletes "$bad" "$j"
  is "$RC" 2 "--max-deletes '$bad' is a usage error"
done
like "$ERR" "--max-deletes must be a number of keys, a percentage from 0% to 100% or all" "--max-deletes: the usage error says what it takes"
dw check --allow-empty "$j"
is "$RC" 2 "--allow-empty applies to run and plan only"

done_testing
