#!/bin/sh
# Hostile input, refused quickly and whole: a CSV header of 100,000
# columns, a JSON record of 5000 members, a source wider than the warehouse's tables can be, job files
# nesting collections 200,000 deep (flow and block style), and mappings
# and lists of 100,000 entries.  Each is refused with a message naming the
# file and the line (and column, for a job file), the documented exit
# status, and nothing written; what is just under the caps still loads.
# And a target told by what it is, not by how it is named: dwload migrate
# to a SQLite file reached through a DSN (no "sqlite" in the connection
# string) copies one table at a time, as SQLite takes one writer.
#
# Time: each hostile run must end within LIMIT seconds.  The fixed code
# takes milliseconds; dwload 580d46c took 70 s on the 100,000-column
# header (a quadratic duplicate check), about 60 s on the 200,000-deep
# flow nesting (libyaml is quadratic in the depth) and on the mappings of
# 100,000 keys.  A limit a loaded machine cannot miss by accident still
# tells the complexity classes apart, so it is a test of the class, not of
# speed.  `timeout` ends a run that overstays: exit 124, and a failure.
. "$TOP_SRCDIR/tests/integration/lib.sh"

LIMIT=20

# data_dump: each table with its number of columns and rows (a wide table
# is too wide to sort on MariaDB), of dwload_state (where a failed run is
# recorded too) the committed checkpoints, and of dwload_lock (a row per
# target table a run began to write) the marks still held: none may stay
data_dump() {
  for _t in $(wh_tables); do
    if [ "$_t" = dwload_state ]; then
      sql "SELECT job, checkpoint FROM dwload_state WHERE checkpoint IS NOT NULL ORDER BY job"
    elif [ "$_t" = dwload_runs ]; then
      # A failed run leaves its row in the run history: only a committed one wrote.
      sql "SELECT job FROM dwload_runs WHERE status = 'committed' ORDER BY job"
    elif [ "$_t" = dwload_lock ]; then
      sql "SELECT target_table, job FROM dwload_lock WHERE running_since IS NOT NULL ORDER BY target_table"
    else
      echo "table $_t $(wh_columns "$_t" | wc -l) $(sql "SELECT count(*) FROM \"$_t\"")"
    fi
  done
}

# hostile NAME WANT-RC MESSAGE ARGS...: runs dwload ARGS within LIMIT
# seconds; checks the exit status, that its output holds MESSAGE, that no
# table or checkpoint changed
hostile() {
  _name=$1 _want=$2 _msg=$3
  shift 3
  _before=$(data_dump)
  timeout "$LIMIT" "$DWLOAD" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  RC=$?
  # (cut: the old code's messages listed 100,000 column names)
  ERR=$(cat "$WORK/stdout" "$WORK/stderr" | cut -c1-1000)
  if [ "$RC" = 124 ]; then
    fail "$_name: refused within $LIMIT s" "still running after $LIMIT s"
  else
    pass "$_name: refused within $LIMIT s"
  fi
  is "$RC" "$_want" "$_name: exit $_want"
  like "$ERR" "$_msg" "$_name: says why"
  is "$(data_dump)" "$_before" "$_name: nothing was committed"
}

# wide_csv FILE N [EXTRA-NAME]: a header id,lmd,c0..c(N-3) (N columns, or
# N+1 with EXTRA-NAME last) and two rows
wide_csv() {
  awk -v n="$2" -v extra="${3:-}" 'BEGIN {
    h = "id,lmd"; r1 = "1,2024-01-01 00:00:00"; r2 = "2,2024-01-02 00:00:00"
    for (i = 0; i < n - 2; i++) { h = h ",c" i; r1 = r1 "," i; r2 = r2 "," (i * 2) }
    if (extra != "") { h = h "," extra; r1 = r1 ",x"; r2 = r2 ",y" }
    print h; print r1; print r2 }' >"$1"
}

# ---- a CSV header of 100,000 columns --------------------------------------------
wide_csv "$WORK/wide.csv" 100000
J=$(mkjob wide "$WORK/wide.csv" wide <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
hostile "a header of 100,000 columns" 1 "wide.csv:1: the header has more than 4096 columns; dwload reads at most 4096" run "$J"
no_table wide "a header of 100,000 columns: no table"
hostile "a header of 100,000 columns, check" 1 "the header has more than 4096 columns" check --connect "$J"

# Just over the cap, and just under it: the cap is exact.
wide_csv "$WORK/w4097.csv" 4097
J=$(mkjob w4097 "$WORK/w4097.csv" w4097 <<'EOF'
load:
  mode: append
EOF
)
hostile "a header of 4097 columns" 1 "the header has more than 4096 columns" run "$J"

# Any source, not only a CSV file: an http_json page whose record has 5000
# members (without `fields`, each member is a column).
mkdir "$WORK/api"
awk 'BEGIN { printf "{\"data\": [{\"id\": 1, \"lmd\": \"2024-01-01 00:00:00\""
             for (i = 0; i < 4998; i++) printf ", \"m%d\": %d", i, i
             print "}]}" }' >"$WORK/api/wide.json"
if httpd_start "$WORK/api"; then
  HTTPD_PID=$STARTED_PID
  J=$(job jwide <<EOF
version: 1
job: jwide
source:
  plugin: http_json
  url: "http://127.0.0.1:$(cat "$WORK/api/port")/raw/wide.json"
  records: data
target:
  connection: "$WH_CONN"
  table: jwide
load:
  mode: append
EOF
)
  hostile "a JSON record of 5000 members" 4 "the source has 5000 columns; dwload loads at most 4096" run "$J"
  kill "$HTTPD_PID" 2>/dev/null
  wait "$HTTPD_PID" 2>/dev/null
else
  fail "tests/httpd.py did not start: $(cat "$WORK/api.err")"
fi

# ---- wider than the warehouse's tables ---------------------------------------
# scd2 adds dim_id, valid_from, valid_to, is_current, is_deleted: 5 more.
case $WAREHOUSE in
  sqlite) MAXC=2000 NAME=SQLite ;;
  postgresql) MAXC=1600 NAME=PostgreSQL ;;
  mariadb) MAXC=1017 NAME=MariaDB ;;
esac
wide_csv "$WORK/over.csv" $((MAXC - 4))
J=$(mkjob over "$WORK/over.csv" over <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
hostile "one column more than a $NAME table holds" 4 \
  "table over would have $((MAXC + 1)) columns ($((MAXC - 4)) from the source, the rest dwload's bookkeeping); $NAME tables hold at most $MAXC" run "$J"
no_table over "wider than the warehouse: no table"

# A wide source the warehouse takes loads whole, and its layout is checked
# in linear time: a last column whose name differs from an early one
# only in case is found.  (MariaDB's rows are capped in bytes too:
# InnoDB refuses far fewer TEXT columns than its 1017.)
case $WAREHOUSE in
  mariadb) OK=150 ;;
  *) OK=$((MAXC - 5)) ;;
esac
wide_csv "$WORK/ok.csv" "$OK"
J=$(mkjob okwide "$WORK/ok.csv" okwide <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
dw run "$J"
is "$RC" 0 "a source of $OK columns (the table: $((OK + 5))) loads"
[ "$RC" = 0 ] || printf '%s\n' "$ERR" | sed 's/^/#   /'
is "$(sql "SELECT count(*) FROM okwide")" 2 "the wide table has both rows"
is "$(sql "SELECT c$((OK - 3)) FROM okwide WHERE id = '2'")" $(((OK - 3) * 2)) "the last source column holds its value"
is "$(wh_columns okwide | wc -l | tr -d ' ')" $((OK + 5)) "the wide table has every column"
wide_csv "$WORK/case.csv" 4000 C0
J=$(mkjob casedup "$WORK/case.csv" casedup <<'EOF'
load:
  mode: append
EOF
)
hostile "4001 columns, the last one C0 beside c0" 2 "the source has columns 'c0' and 'C0', whose names differ only in case" run "$J"

# ---- job files nested deep -------------------------------------------------------
# deep_yaml FILE PREFIX OPEN CLOSE N: a job whose source option x holds N
# nested collections (OPEN repeated N times, then CLOSE N times)
deep_yaml() {
  {
    printf 'version: 1\njob: deep\nsource:\n  plugin: csv\n  path: %s\n%s' "$WORK/ok.csv" "$2"
    awk -v o="$3" -v c="$4" -v n="$5" 'BEGIN { for (i = 0; i < n; i++) printf "%s", o; for (i = 0; i < n; i++) printf "%s", c; print "" }'
    printf 'target:\n  connection: "%s"\n  table: deep\n' "$WH_CONN"
  } >"$1"
}
# The source mapping is depth 2, x's value depth 3: the 63rd '[' is the
# 65th level, at column 6 + 62.
deep_yaml "$WORK/flow.yaml" "  x: " "[" "]" 200000
hostile "200,000 nested flow lists" 2 "flow.yaml:6:68: the job file nests collections more than 64 levels deep" run "$WORK/flow.yaml"
deep_yaml "$WORK/flowmap.yaml" "  x: " "{a: " "}" 200000
hostile "200,000 nested flow mappings" 2 "the job file nests collections more than 64 levels deep" check "$WORK/flowmap.yaml"
deep_yaml "$WORK/block.yaml" "  x:
    " "- " "" 200000
hostile "200,000 nested block lists (- - - ...)" 2 "block.yaml:7:" run "$WORK/block.yaml"
like "$ERR" "more than 64 levels deep" "200,000 nested block lists: says why"
# 64 levels are read: what is wrong with them then is not their depth.
deep_yaml "$WORK/d64.yaml" "  x: " "[" "]" 62
dw run "$WORK/d64.yaml"
is "$RC" 2 "64 levels: the job is still refused (an option holding lists)"
unlike "$ERR" "levels deep" "64 levels: not for the depth"
like "$ERR" "list items must be scalars" "64 levels: for what the option holds"

# ---- 100,000 entries -----------------------------------------------------------
# many_yaml FILE KIND: a job with 100,000 source options (KIND keys), types
# (types), or key columns (list)
many_yaml() {
  {
    printf 'version: 1\njob: many\nsource:\n  plugin: csv\n  path: %s\n' "$WORK/ok.csv"
    case $2 in
      keys) awk 'BEGIN { for (i = 0; i < 100000; i++) printf "  k%d: v\n", i }' ;;
      types) printf '  types:\n'; awk 'BEGIN { for (i = 0; i < 100000; i++) printf "    k%d: integer\n", i }' ;;
    esac
    printf 'target:\n  connection: "%s"\n  table: many\nload:\n  mode: scd2\n  lmd: lmd\n' "$WH_CONN"
    case $2 in
      list) awk 'BEGIN { printf "  key: [id"; for (i = 0; i < 100000; i++) printf ", k%d", i; print "]" }' ;;
      *) printf '  key: id\n' ;;
    esac
  } >"$1"
}
many_yaml "$WORK/keys.yaml" keys
# The 4097th key of source (plugin, path, k0 on line 6, ...) is on line 4100.
hostile "100,000 source options" 2 "keys.yaml:4100:3: a mapping in the job file has more than 4096 entries" run "$WORK/keys.yaml"
many_yaml "$WORK/types.yaml" types
hostile "100,000 types" 2 "types.yaml:4103:5: a mapping in the job file has more than 4096 entries" check "$WORK/types.yaml"
many_yaml "$WORK/list.yaml" list
hostile "a key of 100,001 columns" 2 "list.yaml:12:" run "$WORK/list.yaml"
like "$ERR" "a list in the job file has more than 4096 entries" "a key of 100,001 columns: says why"

# ---- migrate to SQLite through a DSN -------------------------------------------
# odbcinst.ini: this machine's drivers (migrate.sh does the same); odbc.ini:
# the data source of a SQLite file.
mkdir "$WORK/dsn"
for _d in SQLite3 "PostgreSQL Unicode" "MariaDB Unicode"; do
  env -u ODBCSYSINI odbcinst -q -d -n "$_d" >>"$WORK/dsn/odbcinst.ini" 2>/dev/null
done
printf '[h5target]\nDriver=SQLite3\nDatabase=%s\n' "$WORK/dsn.db" >"$WORK/dsn/odbc.ini"
for t in m1 m2 m3; do
  sql "CREATE TABLE $t (id INTEGER NOT NULL PRIMARY KEY, v VARCHAR(10))"
  sql "INSERT INTO $t VALUES (1, 'a'), (2, 'b'), (3, '$t')"
done
# libsqlite3odbc leaks what it reads from odbc.ini (docs.sh says more).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" ODBCSYSINI="$WORK/dsn" ODBCINI=/nonexistent \
  dw migrate --from "$WH_CONN" --to "DSN=h5target" --table m1 --table m2 --table m3 --jobs 3
is "$RC" 0 "migrate to DSN=h5target (a SQLite file), --jobs 3: exit 0"
[ "$RC" = 0 ] || printf '%s\n' "$ERR" | sed 's/^/#   /'
like "$ERR" "the target is SQLite: tables are copied one at a time" "a SQLite target behind a DSN is known as SQLite"
is "$(for t in m1 m2 m3; do sqlite3 -batch -noheader "$WORK/dsn.db" "SELECT count(*), max(v) FROM $t"; done | paste -sd' ' -)" \
  "3|m1 3|m2 3|m3" "every table arrived whole"

done_testing
