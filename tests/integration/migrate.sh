#!/bin/sh
# dwload migrate between the warehouse under test and a SQLite file, both
# ways, and (on a server, when the other server runs) to the other server:
# columns, types (numeric(12,2) kept), NOT NULL, primary keys (single,
# composite, none), NULLs, unicode, timestamps, 100k-character text, an
# SCD2 dimension with its history; --all and --jobs; a migration killed
# with SIGKILL after a committed chunk resumes without duplicating a row;
# a changed target row fails the verification, naming the table.
. "$TOP_SRCDIR/tests/integration/lib.sh"

OTHER="$WORK/other.db"
OTHER_CONN="Driver=SQLite3;Database=$OTHER"
osql() { sqlite3 -batch -noheader "$OTHER" "$1"; }
# lib.sh points ODBCSYSINI at a copy of the PostgreSQL driver's entry alone
# (to move its logs); the other drivers this test uses join it.
if [ -n "${ODBCSYSINI:-}" ]; then
  for _d in SQLite3 "MariaDB Unicode"; do
    env -u ODBCSYSINI odbcinst -q -d -n "$_d" >>"$ODBCSYSINI/odbcinst.ini" 2>/dev/null
  done
fi

case $WAREHOUSE in
  sqlite) TS=TIMESTAMP; TXT=TEXT; BIG=INTEGER; CHARS=length ;;
  postgresql) TS="TIMESTAMP(6)"; TXT=TEXT; BIG=BIGINT; CHARS=length ;;
  mariadb) TS="DATETIME(6)"; TXT=LONGTEXT; BIG=BIGINT; CHARS=char_length ;;
esac
LONG=$(head -c 100000 /dev/zero | tr '\0' x)

# items_csv N FIRST: N rows of id,name,amount,ts,flag (ids from FIRST)
items_csv() {
  awk -v n="$1" -v f="$2" 'BEGIN {
    print "id,name,amount,ts,flag"
    for (i = f; i < f + n; i++)
      printf "%d,name %d é,%d.%02d,2024-01-%02d %02d:%02d:%02d.%06d,%d\n", i, i, i * 7, i % 100,
        i % 28 + 1, i % 24, i % 60, i % 59, i % 1000000, i % 2
  }'
}

# load_csv TABLE CSV CONN: appends the CSV into an existing table
load_csv() {
  job "load_$1" <<EOF >/dev/null
version: 1
job: load_$1
source:
  plugin: csv
  path: $2
  types: {id: integer, amount: "numeric(12,2)", ts: timestamp, flag: boolean}
target:
  connection: "$3"
  table: $1
schema:
  missing_columns: null  # items.csv has no note column: it stays NULL
EOF
  dw run "$WORK/load_$1.yaml"
  [ "$RC" = 0 ] || echo "Bail out! loading $1: $ERR"
}

# ---- A: the warehouse to a SQLite file, --all --jobs 2 ------------------------
sql "CREATE TABLE items (id $BIG NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, amount NUMERIC(12,2),
     ts $TS, flag BOOLEAN, note $TXT)" || echo "Bail out! cannot create items"
items_csv 3000 1 >"$WORK/items.csv"
load_csv items "$WORK/items.csv" "$WH_CONN"
sql "INSERT INTO items VALUES (9001, 'Zoë Ünïcødé 日本', -0.01, '1999-12-31 23:59:59.5', '1', 'ü$LONG'),
                              (9002, 'nulls', NULL, NULL, NULL, NULL),
                              (9003, 'empty', 0, '2000-01-01 00:00:00', '0', '')"
sql "CREATE TABLE pairs (a $BIG NOT NULL, b VARCHAR(20) NOT NULL, v $TXT, PRIMARY KEY (a, b))"
sql "INSERT INTO pairs VALUES (1, 'x', 'a'), (1, 'y', NULL), (2, 'x', 'c'), (2, 'yy', 'd'), (3, 'a', 'e')"
sql "CREATE TABLE nopk (x $BIG, y $TXT)"
sql "INSERT INTO nopk VALUES (1, 'one'), (1, 'one'), (NULL, NULL)"
# An SCD2 dimension with history, made by dwload.
printf 'id,name,lmd\n1,a,2024-01-01\n2,b,2024-01-01\n' >"$WORK/d1.csv"
printf 'id,name,lmd\n1,a2,2024-01-02\n2,b,2024-01-02\n3,c,2024-01-02\n' >"$WORK/d2.csv"
for f in d1 d2; do
  j=$(mkjob "dim_$f" "$WORK/$f.csv" dim "  types: {id: integer, lmd: date}" <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  surrogate_key: dim_id
EOF
)
  run_ok "$j" "dimension load $f"
done

ntables=$(wh_tables | wc -l)
dw migrate --from "$WH_CONN" --to "$OTHER_CONN" --all --jobs 2 --chunk-rows 700
is "$RC" 0 "migrate --all to a SQLite file: exit 0"
[ "$RC" = 0 ] || echo "# $ERR"
is "$(field status) $(field tables) $(field verified) $(field failed)" "ok $ntables $ntables null" \
  "the summary counts every table, each verified"
total=0
for t in $(wh_tables); do total=$((total + $(sql "SELECT count(*) FROM \"$t\""))); done
is "$(field rows)" "$total" "the summary's rows: every row of every table"
for t in items pairs nopk dim dwload_state; do
  is "$(osql "SELECT count(*) FROM \"$t\"")" "$(sql "SELECT count(*) FROM \"$t\"")" "$t: as many rows"
done
is "$(osql "SELECT name, amount, flag FROM items WHERE id = 9001")" "Zoë Ünïcødé 日本|-0.01|1" "unicode and numerics"
is "$(osql "SELECT length(note), substr(note, 1, 2) FROM items WHERE id = 9001")" "100001|üx" "long text whole"
is "$(osql "SELECT count(*) FROM items WHERE amount IS NULL AND ts IS NULL AND flag IS NULL AND note IS NULL")" 1 \
  "NULLs stay NULL"
is "$(osql "SELECT count(*) FROM items WHERE note = ''")" 1 "'' stays ''"
is "$(osql "SELECT ts FROM items WHERE id = 9001")" "1999-12-31 23:59:59.500000" "timestamps with fractions"
# MariaDB's BOOLEAN is TINYINT(1), which its driver reports as an integer.
flag=BOOLEAN
is_warehouse mariadb && flag=INTEGER
is "$(osql "SELECT type || ':' || \"notnull\" || ':' || pk FROM pragma_table_info('items') ORDER BY cid" | paste -sd' ' -)" \
  "INTEGER:1:1 TEXT:1:0 NUMERIC(12,2):0:0 TIMESTAMP:0:0 $flag:0:0 TEXT:0:0" \
  "column types, NOT NULL and the primary key"
is "$(osql "SELECT name || ':' || pk FROM pragma_table_info('pairs') WHERE pk > 0 ORDER BY pk" | paste -sd' ' -)" \
  "a:1 b:2" "a composite key stays composite, in order"
is "$(osql "SELECT id, name FROM dim WHERE id = 1 ORDER BY valid_from")" "1|a
1|a2" "the dimension keeps its history"
is "$(osql "SELECT count(*) FROM dwload_migrate WHERE done = 1")" "$ntables" "the progress table records each table done"

dw migrate --from "$WH_CONN" --to "$OTHER_CONN" --table items
is "$RC" 1 "migrating a migrated table again without --resume: exit 1"
like "$ERR" "continue it with --resume" "the error says how to continue"
dw migrate --from "$WH_CONN" --to "$OTHER_CONN" --table items --resume
is "$RC $(field copied) $(field verified)" "0 0 1" "--resume of a done table copies nothing and verifies it"

# ---- B: a SQLite file to the warehouse, killed and resumed ---------------------
N=20000
osql "CREATE TABLE big (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, amount NUMERIC(12,2),
      ts TIMESTAMP, note TEXT)"
osql "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $N)
      INSERT INTO big SELECT i, 'nom ' || i || ' ü', (i * 3) || '.' || printf('%02d', i % 100),
        printf('2024-02-%02d 10:00:%02d', i % 28 + 1, i % 60), CASE WHEN i % 10 = 0 THEN NULL ELSE 'n' || i END
      FROM g"

"$DWLOAD" -q migrate --from "$OTHER_CONN" --to "$WH_CONN" --table big --chunk-rows 10 \
  >"$WORK/bg.out" 2>"$WORK/bg.err" &
pid=$!
# Step the migration until a few chunks are committed (bounded: 20000
# steps): it runs for a moment, is stopped (SIGSTOP) while the target is
# read, and goes on only when fewer than 300 rows are committed.  Chunks
# of 10 rows (2000 commits) keep a whole migration far longer than one
# step, even when a loaded machine stretches the step (a SQLite target
# copied 20000 rows in 100-row chunks in 0.15 s, and a read of the target
# fails while the stopped run holds its commit lock).
i=0 copied=""
while [ $i -lt 20000 ] && kill -STOP $pid 2>/dev/null; do
  copied=$(sql "SELECT rows_copied FROM dwload_migrate WHERE table_name = 'big'" 2>/dev/null)
  if [ -n "$copied" ] && [ "$copied" -ge 300 ]; then break; fi
  kill -CONT $pid 2>/dev/null
  # a read that failed (the run stopped holding its commit lock) lets it
  # go on only until the next look
  [ -z "$copied" ] || sleep 0.002
  i=$((i + 1))
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
state=$(sql "SELECT rows_copied, done FROM dwload_migrate WHERE table_name = 'big'")
before=${state%%|*}
case $state in
  *"|0") pass "killed with SIGKILL mid-way ($before of $N rows committed)" ;;
  *) fail "killed with SIGKILL mid-way" "progress: $state" ;;
esac
is "$(sql "SELECT count(*) FROM big")" "$before" "the target holds exactly the committed chunks"

dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table big
is "$RC" 1 "without --resume the stopped migration is refused"
like "$ERR" "--resume" "and the message says --resume"

dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table big --chunk-rows 3000 --resume
is "$RC" 0 "--resume: exit 0"
[ "$RC" = 0 ] || echo "# $ERR"
is "$(field copied) $(field rows) $(field verified)" "$((N - before)) $N 1" \
  "it copies only the rest, and the whole table verifies"
is "$(sql "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM big")" "$N|$N|1|$N" "no row twice, none missing"
is "$(sql "SELECT name, amount, ts FROM big WHERE id = 1234")" "nom 1234 ü|3702.34|2024-02-03 10:00:34" \
  "values arrive as the source holds them"
is "$(sql "SELECT count(*) FROM big WHERE note IS NULL")" "$((N / 10))" "NULLs stay NULL"
case $WAREHOUSE in
  sqlite)
    got="$(sql "SELECT type FROM pragma_table_info('big') WHERE name = 'amount'")"
    got="$got $(sql "SELECT \"notnull\" FROM pragma_table_info('big') WHERE name = 'name'")" ;;
  *)
    cond="table_name = 'big' AND table_schema = $(is_warehouse postgresql && echo 'current_schema()' || echo 'database()')"
    got="$(sql "SELECT numeric_precision, numeric_scale FROM information_schema.columns WHERE $cond AND column_name = 'amount'")"
    got="$got $(sql "SELECT is_nullable FROM information_schema.columns WHERE $cond AND column_name = 'name'")" ;;
esac
case $got in
  "NUMERIC(12,2) 1"|"12|2 NO") pass "numeric(12,2) and NOT NULL kept ($got)" ;;
  *) fail "numeric(12,2) and NOT NULL kept" "got: $got" ;;
esac

case $WAREHOUSE in
  sqlite) got=$(sql "SELECT name FROM pragma_table_info('big') WHERE pk > 0") ;;
  *) got=$(sql "SELECT k.column_name FROM information_schema.table_constraints c
                JOIN information_schema.key_column_usage k
                  ON k.constraint_name = c.constraint_name AND k.table_name = c.table_name
                 AND k.table_schema = c.table_schema
                WHERE c.table_name = 'big' AND c.constraint_type = 'PRIMARY KEY'
                  AND c.table_schema = $(is_warehouse postgresql && echo 'current_schema()' || echo 'database()')") ;;
esac
is "$got" "id" "the primary key is there at the end (PostgreSQL: added with the last chunk)"

sql "UPDATE big SET name = 'changed' WHERE id = 777"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table big --resume
is "$RC" 1 "a changed target row fails the verification: exit 1"
like "$ERR" "verification failed for table big" "the error names the table"
is "$(field status) $(field failed)" "failed big" "the summary names it too"

# ---- D: values that need escaping; the parallel verification --------------------
# Rows go to PostgreSQL inside one array literal of the table's row type,
# and come back for the verification packed into one text per chunk; the
# values here exercise both (quotes, backslashes, the literals' own
# punctuation, what looks like a length prefix, NULL against '').
# A source value the copy cannot read stops a migration after its
# committed chunks; once it is fixed, --resume copies the rest, and the
# verification reads the ranges between that run's chunks with two
# connections, the first and last ranges open-ended.
esc_table() {
  osql "CREATE TABLE $1 (id INTEGER NOT NULL PRIMARY KEY, note TEXT, amount NUMERIC(12,2))"
  osql "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 200)
        INSERT INTO $1 SELECT i, CASE i % 10
          WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'say \"hi\" \\ back\\slash'
          WHEN 3 THEN '(a,b),{c,d}' WHEN 4 THEN '12:ab' WHEN 5 THEN ':'
          WHEN 6 THEN '  lead and trail  ' WHEN 7 THEN 'line' || char(10) || 'two' || char(9) || 'tab'
          WHEN 8 THEN 'NULL' ELSE 'é ' || i || ' 日本' END, i || '.25'
        FROM g"
  osql "UPDATE $1 SET amount = 'oops' WHERE id = 150"
}
hex_note() {
  case $WAREHOUSE in
    postgresql) sql "SELECT id || ':' || coalesce(encode(convert_to(note, 'UTF8'), 'hex'), 'N') FROM $1 ORDER BY id" ;;
    mariadb) sql "SELECT concat(id, ':', coalesce(lower(hex(note)), 'N')) FROM $1 ORDER BY id" ;;
    *) sql "SELECT id || ':' || CASE WHEN note IS NULL THEN 'N' ELSE lower(hex(note)) END FROM $1 ORDER BY id" ;;
  esac
}
for t in esc1 esc2; do
  esc_table $t
  dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table $t --chunk-rows 20
  is "$RC $(sql "SELECT count(*) FROM $t")" "1 140" "$t: a value the copy cannot read stops it after 7 chunks"
  like "$ERR" "row 150: column amount holds 'oops'" "$t: the error names the row and the value"
  osql "UPDATE $t SET amount = 1.5 WHERE id = 150"
done
sql "UPDATE esc1 SET note = 'changed' WHERE id = 3"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table esc1 --chunk-rows 20 --resume
is "$RC $(field copied)" "1 60" "a row changed before the resume: the rest is copied, and the verification fails"
like "$ERR" "esc1: 200 rows on both sides, but their values differ" "the parallel readers see the changed row"
sql "INSERT INTO esc2 (id, note) VALUES (100000, 'extra')"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table esc2 --chunk-rows 20 --resume
is "$RC" 1 "a row the source lacks, after every key: the verification fails"
like "$ERR" "esc2: 200 rows read from the source, 201 in the target" "the last range is open-ended"
sql "DELETE FROM esc2 WHERE id = 100000"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table esc2 --resume
is "$RC $(field verified)" "0 1" "without it the table verifies"
# A composite key copied in 4-row chunks: the ranges between them must
# cover every row once (a gap or an overlap changes the count).
osql "CREATE TABLE pairs2 (a INTEGER NOT NULL, b TEXT NOT NULL, v TEXT, PRIMARY KEY (a, b))"
osql "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 60)
      INSERT INTO pairs2 SELECT i / 7, 'k' || (i % 7), 'v' || i FROM g"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table pairs2 --chunk-rows 4
is "$RC $(field copied) $(field verified)" "0 60 1" "a composite key in 4-row chunks: every range verified once"
if is_warehouse mariadb; then
  is "$(sql "SELECT character_maximum_length FROM information_schema.columns
              WHERE table_schema = database() AND table_name = 'pairs2' AND column_name = 'b'")" 766 \
    "MariaDB: the key's text column gets what the BIGINT leaves of 3072 bytes"
fi
sql "UPDATE pairs2 SET v = 'changed' WHERE a = 5 AND b = 'k2'"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table pairs2 --resume
is "$RC" 1 "and a changed row of it fails the verification"
# (SQLite's hex(NULL) is '')
is "$(hex_note esc2)" "$(osql "SELECT id || ':' || CASE WHEN note IS NULL THEN 'N' ELSE lower(hex(note)) END FROM esc2 ORDER BY id")" \
  "quotes, backslashes, punctuation, control characters, '' and NULL arrive byte for byte"

# ---- C: server to server -------------------------------------------------------
XDB="dwl_migrate_x_$$"
if is_warehouse mariadb && [ -n "${DWL_PG_HOST:-}" ]; then
  _wh_psql postgres -c "CREATE DATABASE \"$XDB\" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'" >/dev/null
  XCONN="Driver=PostgreSQL Unicode;Server=$DWL_PG_HOST;Port=$DWL_PG_PORT;Database=$XDB;Uid=$DWL_PG_USER;Pwd=$DWL_PG_PASSWORD"
  xcount() { _wh_psql "$XDB" -A -t -c "SELECT count(*) FROM \"$1\""; }
  xdrop() { _wh_psql postgres -c "DROP DATABASE IF EXISTS \"$XDB\" WITH (FORCE)" >/dev/null; }
elif is_warehouse postgresql && [ -n "${DWL_MARIADB_HOST:-}" ]; then
  _wh_mariadb "" -e "CREATE DATABASE \"$XDB\" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" >/dev/null
  XCONN="Driver=MariaDB Unicode;Server=$DWL_MARIADB_HOST;Port=$DWL_MARIADB_PORT;Database=$XDB;User=$DWL_MARIADB_USER;Password=$DWL_MARIADB_PASSWORD"
  xcount() { _wh_mariadb "$XDB" -N -e "SELECT count(*) FROM \"$1\""; }
  xdrop() { _wh_mariadb "" -e "DROP DATABASE IF EXISTS \"$XDB\"" >/dev/null; }
else
  XCONN=""
fi
if [ -n "$XCONN" ]; then
  dw migrate --from "$WH_CONN" --to "$XCONN" --table items --table pairs --table nopk --table dim --jobs 2
  is "$RC $(field tables) $(field verified)" "0 4 4" "$WAREHOUSE to the other server: four tables verified"
  [ "$RC" = 0 ] || echo "# $ERR"
  is "$(xcount items) $(xcount dim)" "3003 $(sql "SELECT count(*) FROM dim")" "rows arrive"
  unlike "$ERR$OUT" "${DWL_PG_PASSWORD:-x}" "no password in any output"
  xdrop
else
  skip_tests 3 "server to server: only on a server, with the other one running"
fi

# ---- usage -----------------------------------------------------------------------
dw migrate --to "$WH_CONN" --table x
is "$RC" 2 "no --from: exit 2"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --all --table x
is "$RC" 2 "--all with --table: exit 2"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table x --jobs 0
is "$RC" 2 "--jobs 0: exit 2"
dw migrate --from "$OTHER_CONN" --to "$WH_CONN" --table no_such_table
is "$RC" 1 "a table the source lacks: exit 1"
like "$ERR" "no_such_table" "the error names it"
dw migrate --from "$OTHER_CONN" --to "Driver=NoSuchDriver-dwl;Uid=u;Pwd=sEcReT-42" --table big
is "$RC" 1 "a target that cannot connect: exit 1"
like "$ERR" "Pwd=***" "the message redacts the password"
unlike "$ERR$OUT" "sEcReT-42" "the password appears nowhere"

done_testing
