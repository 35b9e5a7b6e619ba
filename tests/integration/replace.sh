#!/bin/sh
# Replace mode: each run rebuilds the table from the source, whatever the
# checkpoint; a failed run keeps the previous contents.
. "$TOP_SRCDIR/tests/integration/lib.sh"

SPINE="$DATA/spine"

# replace_job NAME CSV [LMD-LINE]
replace_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $2
target:
  connection: "$WH_CONN"
  table: customers
load:
  mode: replace
${3:-}
EOF
}

# rows: the table's rows on one line, as id:name:lmd separated by spaces
rows() {
  sql "SELECT id, name, lmd FROM customers ORDER BY id" | tr '|\n' ': ' | sed 's/ $//'
}

# ---- run 1 ----------------------------------------------------------------
J=$(replace_job cust "$SPINE/replace_1.csv" "  lmd: lmd")
dw run "$J"
is "$RC" 0 "run 1 exits 0"
is "$(field mode)" replace "run 1: mode replace"
is "$(field inserted)" 4 "run 1: inserted 4"
is "$(field checkpoint)" "2023-11-22 10:00:00" "run 1: checkpoint is the greatest lmd"
is "$(sql 'SELECT count(*) FROM customers')" 4 "run 1: table has the 4 rows"

# ---- run 2: the table becomes exactly the second file ---------------------
# replace_2.csv has rows older than the checkpoint: they are loaded all the same.
J=$(replace_job cust "$SPINE/replace_2.csv" "  lmd: lmd")
dw run "$J"
is "$RC" 0 "run 2 exits 0"
is "$(field status)" ok "run 2: status ok"
is "$(field read)" 3 "run 2: read 3"
is "$(field inserted)" 3 "run 2: inserted = rows of the second file"
is "$(field skipped)" 0 "run 2: nothing skipped, whatever the checkpoint"
is "$(rows)" "2:Bobby:2023-01-05 00:00:00 5:Erin:2023-11-25 10:00:00 6:Frank:2022-06-30 12:00:00" \
  "run 2: table equals the second file (old rows gone, older lmds loaded)"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'cust'")" "$(field checkpoint)" \
  "run 2: stored checkpoint is the one the summary reports"
is "$(sql "SELECT last_mode, inserted FROM dwload_state WHERE job = 'cust'")" "replace|3" \
  "run 2: state row records mode and count"

# ---- run 3: the same file again leaves the same table ---------------------
dw run "$J"
is "$RC" 0 "rerun exits 0"
is "$(field inserted)" 3 "rerun: inserted 3 again"
is "$(rows)" "2:Bobby:2023-01-05 00:00:00 5:Erin:2023-11-25 10:00:00 6:Frank:2022-06-30 12:00:00" \
  "rerun: no duplicates"

# ---- a failing replace keeps the old contents ----------------------------
BAD=$(file bad.csv <<'EOF'
id,name,lmd
7,Gina,2023-12-01 00:00:00
8,Hank,2023-12-02 00:00:00,extra
EOF
)
BEFORE=$(tdump customers id)
J=$(replace_job cust "$BAD" "  lmd: lmd")
dw run "$J"
is "$RC" 4 "replace with a ragged row exits 4"
like "$ERR" "bad.csv:3" "the error names the file and line"
is "$(tdump customers id)" "$BEFORE" \
  "failed replace: table exactly as before (the delete was rolled back)"

# ---- without lmd, and to an empty source ---------------------------------
EMPTY=$(file empty.csv <<'EOF'
id,name,lmd
EOF
)
J=$(replace_job cust "$EMPTY")
# (a source without rows empties the table only when allowed:
# absence_guard.sh tests the refusal)
dw run --allow-empty "$J"
is "$RC" 0 "replace --allow-empty from a header-only file exits 0"
is "$(field inserted)" 0 "empty source: inserted 0"
is "$(sql 'SELECT count(*) FROM customers')" 0 "empty source: table emptied"
is "$(field checkpoint)" null "no lmd: no checkpoint in the summary"

done_testing
