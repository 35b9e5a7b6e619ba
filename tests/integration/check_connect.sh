#!/bin/sh
# dwload check is offline: it checks the spec, the plugin's options, the
# columns and types the source's options declare (against load.lmd, the
# keys, the dimension's bookkeeping columns) and the reject folder without
# connecting, so a declared integer lmd is exit 2 at its entry also with
# the warehouse down.  check --connect then connects, opens the source and
# compares the table with the job: every difference on its own line
# (exit 4: missing columns, a type that cannot hold the source's values, no
# index on the key of an upsert or scd2 table), a warehouse it cannot
# reach exit 1, a table that fits exit 0.
. "$TOP_SRCDIR/tests/integration/lib.sh"

CSV=$(file feed.csv <<'EOF'
id,name,lmd
1,alpha,2024-01-01 00:00:00
2,beta,2024-01-02 00:00:00
EOF
)

DOWN=$(wh_down_conn)

# cc_job NAME CONNECTION MODE SOURCE-LINES [LOAD-LINES]: a job file whose
# source options from line 6 on are SOURCE-LINES
cc_job() {
  cat >"$WORK/$1.yaml" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $CSV
$4
target:
  connection: "$2"
  table: $1
load:
  mode: $3
${5:-}
EOF
  echo "$WORK/$1.yaml"
}

TYPES='  types:
    id: integer
    lmd: timestamp'


# ---- types against the spec, the warehouse down: exit 2, no connection -------
J=$(cc_job cc_lmdreal "$DOWN" append '  types:
    id: integer
    lmd: real' '  lmd: lmd')
dw check "$J"
is "$RC" 2 "lmd declared real: check exits 2 with the warehouse down"
like "$ERR$OUT" "$J:8:5: source.types.lmd: 'real' declares a real, but the column is the lmd (load.lmd at $J:14:3)" \
  "lmd declared real: the types entry's file:line:col, and load.lmd's"
dw run "$J"
is "$RC" 2 "lmd declared real: run exits 2 before it connects (1 would be the connection)"
like "$ERR" "$J:8:5: source.types.lmd" "lmd declared real: run names the entry"

J=$(cc_job cc_badtype "$DOWN" append '  types:
    id: integr')
dw check "$J"
is "$RC" 2 "a type name no warehouse maps: check exits 2"
like "$ERR$OUT" "$J:7:5: source.types.id: 'integr': unknown type" "a type name no warehouse maps: its entry named"

J=$(cc_job cc_nokey "$DOWN" upsert '  header: false
  columns: [id, name, lmd]' '  key: [id, code]')
dw check "$J"
is "$RC" 2 "a key the declared columns lack: check exits 2"
like "$ERR$OUT" "$J:13:13: load.key: column 'code' is not among the source's declared columns (source.columns at $J:7:3: id, name, lmd)" \
  "a key the declared columns lack: the key's own entry named"
dw run "$J"
is "$RC" 2 "a key the declared columns lack: run exits 2 before it connects"

J=$(cc_job cc_bk "$DOWN" scd2 '  header: false
  columns: [id, name, lmd, valid_to]' '  key: [id]
  lmd: lmd')
dw check "$J"
is "$RC" 2 "a declared column named like a bookkeeping column: check exits 2"
like "$ERR$OUT" "$J:7:28: source.columns: column 'valid_to' has the name of the bookkeeping column dimension.valid_to" \
  "a declared column named like a bookkeeping column: its entry named"

# ---- the warehouse down: plain check 0, check --connect 1 -------------------
J=$(cc_job cc_down "$DOWN" append "$TYPES" '  lmd: lmd')
dw check "$J"
is "$RC" 0 "warehouse down: plain check stays offline and exits 0"
unlike "$OUT" "target" "warehouse down: plain check has no target step"
dw check --connect "$J"
is "$RC" 1 "warehouse down: check --connect exits 1"
like "$OUT" "target   FAILED" "warehouse down: check --connect's target step fails"

# ---- the table fits: 0 -------------------------------------------------------
J=$(cc_job cc_fit "$WH_CONN" append "$TYPES" '  lmd: lmd')
dw check --connect "$J"
is "$RC" 0 "no table yet: check --connect exits 0"
like "$OUT" "table    ok     cc_fit will be created" "no table yet: it says the table will be created"
like "$OUT" "dwload_state will be created" "no state table yet: it says so"
dw run "$J"
is "$RC" 0 "the run creates the table"
dw check --connect --json "$J"
is "$RC" 0 "a table the run made fits: check --connect exits 0"
is "$(check_steps)" "spec ok,plugin ok,types ok,target ok,state ok,source ok,columns ok,table ok," \
  "a table that fits: every step passes"
like "$OUT" '"connected":true' "check --connect --json says it connected"
dw check --json "$J"
like "$OUT" '"connected":false' "plain check --json says it did not connect"

# ---- a table missing two columns: both named, exit 4 ---------------------------
# (schema.new_columns: fail; with add, the default, a run adds them)
sql "CREATE TABLE cc_two (id INTEGER)"
J=$(cc_job cc_two "$WH_CONN" append "$TYPES" '  lmd: lmd')
printf 'schema:\n  new_columns: fail\n' >>"$J"
dw check --connect "$J"
is "$RC" 4 "a table missing two columns: check --connect exits 4"
like "$OUT" "table    FAILED table cc_two exists but has no column 'name'" "the first missing column named"
like "$OUT" "table    FAILED table cc_two exists but has no column 'lmd'" "the second missing column named too"
is "$(printf '%s\n' "$OUT" | grep -c 'table    FAILED')" 2 "each difference on its own line"
dw run "$J"
is "$RC" 4 "the run refuses the same table (exit 4)"
sql "CREATE TABLE cc_add (id INTEGER)"
J=$(cc_job cc_add "$WH_CONN" append "$TYPES" '  lmd: lmd')
dw check --connect "$J"
is "$RC" 0 "new_columns: add (the default): source columns the table lacks are no difference"

# ---- a column of a type that cannot hold the source's values -------------------
sql "CREATE TABLE cc_type (id INTEGER, name VARCHAR(40), lmd INTEGER, extra INTEGER)"
J=$(cc_job cc_type "$WH_CONN" append "$TYPES" '  lmd: lmd')
dw check --connect "$J"
is "$RC" 4 "a timestamp column declared integer: check --connect exits 4"
like "$OUT" "table    FAILED table cc_type: column 'lmd' is integer, which cannot hold it: the source (feed.csv) delivers timestamp" \
  "the column of the wrong type named, with both types"
like "$OUT" "table    FAILED table cc_type has column 'extra', which the source (feed.csv) does not deliver" \
  "and the table's column the source does not deliver, on its own line"
is "$(sql 'SELECT COUNT(*) FROM cc_type')" 0 "check --connect wrote nothing"

# ---- the key index: dwload's own lookups need one on the key -------------------
UPS='  key: [id]
  lmd: lmd'
J=$(cc_job cc_upfit "$WH_CONN" upsert "$TYPES" "$UPS")
dw run "$J"
is "$RC" 0 "an upsert run creates its table with the key index"
dw check --connect "$J"
is "$RC" 0 "the table an upsert run made, with its key index: check --connect exits 0"
J=$(cc_job cc_scdfit "$WH_CONN" scd2 "$TYPES" "$UPS")
dw run "$J"
dw check --connect "$J"
is "$RC" 0 "the table an scd2 run made, with its key index: check --connect exits 0"
case $WAREHOUSE in
  mariadb) TS=DATETIME ;;
  *) TS=TIMESTAMP ;;
esac
sql "CREATE TABLE cc_noidx (id INTEGER, name VARCHAR(40), lmd $TS)"
J=$(cc_job cc_noidx "$WH_CONN" upsert "$TYPES" "$UPS")
dw check --connect "$J"
is "$RC" 4 "an upsert table without an index on its key: check --connect exits 4"
like "$OUT" "table    FAILED table cc_noidx has no index that begins with its key (id)" "the missing key index named"
is "$(printf '%s\n' "$OUT" | grep -c 'table    FAILED')" 1 "and nothing else"
sql "CREATE INDEX cc_noidx_k ON cc_noidx (id)"
dw check --connect "$J"
is "$RC" 0 "with an index on the key: check --connect exits 0"

done_testing
