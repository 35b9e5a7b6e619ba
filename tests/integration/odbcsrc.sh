#!/bin/sh
# The odbc source plugin reading from the warehouse under test's own
# driver (SQLite: a second file; the servers: a table of the test's
# database): column types kept (numeric(12,2), NOT NULL), NULLs, unicode,
# timestamps, 100k-character text; the checkpoint pushed down into a table
# read and into a query's :checkpoint (the summary's `read` counts what the
# source returned); replace reads everything; scd2 with pushdown; errors
# with the password redacted.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# The source database and its SQL.
odbc_source
ssql() { sql "$1" "$SRC"; }
ssqln() { sqln "$1" "$SRC"; }

case $WAREHOUSE in
  sqlite) TS=TIMESTAMP; TXT=TEXT; BIG=INTEGER; BOOL=BOOLEAN; CHARS=length ;;
  postgresql) TS="TIMESTAMP(6)"; TXT=TEXT; BIG=BIGINT; BOOL=BOOLEAN; CHARS=length ;;
  mariadb) TS="DATETIME(6)"; TXT=LONGTEXT; BIG=BIGINT; BOOL=BOOLEAN; CHARS=char_length ;;
esac
LONG=$(head -c 100000 /dev/zero | tr '\0' x)

ssql "CREATE TABLE src (id $BIG NOT NULL PRIMARY KEY, name VARCHAR(40) NOT NULL, amount NUMERIC(12,2),
      ratio DOUBLE PRECISION, flag $BOOL, lmd $TS, note $TXT)" ||
  echo "Bail out! cannot create the source table"
ssql "INSERT INTO src VALUES
  (1, 'Zoë Ünïcødé 日本', 12.50, 0.25, '1', '2024-01-01 10:00:00', NULL),
  (2, 'b', NULL, NULL, NULL, '2024-01-02 10:00:00.25', 'ü$LONG'),
  (3, 'c', -0.01, 1e300, '0', '2024-01-03 00:00:00', 'plain'),
  (4, 'd', 1234567890.12, -2.5, '1', '2024-01-03 12:00:00', '')"

# odbc_job NAME MODE TABLE SOURCE-LINES [LOAD-LINES]
odbc_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: odbc
  connection: "$SRC_CONN"
$4
target:
  connection: "$WH_CONN"
  table: $3
load:
  mode: $2
${5:-}
EOF
}

# ---- append with pushdown -----------------------------------------------------
J=$(odbc_job app append copy1 "  table: src" "  lmd: lmd")
dw run "$J"
is "$RC" 0 "append from a table: exit 0"
is "$(field read) $(field inserted)" "4 4" "first run reads and inserts every row"
is "$(sqln "SELECT id, name, flag, lmd FROM copy1 WHERE id IN (1, 3) ORDER BY id")" \
  "1|Zoë Ünïcødé 日本|1|2024-01-01 10:00:00
3|c|0|2024-01-03 00:00:00" "unicode, booleans and timestamps arrive unchanged"
is "$(sqln "SELECT amount FROM copy1 ORDER BY id")" "$(ssqln "SELECT amount FROM src ORDER BY id")" \
  "numerics as the source holds them"
is "$(sqln "SELECT id FROM copy1 WHERE amount IS NULL AND ratio IS NULL AND flag IS NULL AND note IS NOT NULL")" "2" \
  "NULLs stay NULL (and '' stays '')"
is "$(sql "SELECT $CHARS(note), substr(note, 1, 3), substr(note, 99999, 3) FROM copy1 WHERE id = 2")" \
  "100001|üxx|xxx" "a 100,001-character text arrives whole"
is "$(sql "SELECT count(*) FROM copy1 WHERE note = ''")" 1 "an empty text is not NULL"

case $WAREHOUSE in
  sqlite) got=$(sql "SELECT type FROM pragma_table_info('copy1') WHERE name = 'amount'") ;;
  *) got=$(sql "SELECT numeric_precision || ',' || numeric_scale FROM information_schema.columns
                WHERE table_name = 'copy1' AND column_name = 'amount'
                  AND table_schema = $(is_warehouse postgresql && echo 'current_schema()' || echo 'database()')") ;;
esac
case $got in
  *12,2*) pass "numeric(12,2) stays numeric(12,2) in the created table ($got)" ;;
  *) fail "numeric(12,2) stays numeric(12,2) in the created table" "got: $got" ;;
esac

ssql "INSERT INTO src VALUES (5, 'e', 5.00, 5, '1', '2024-02-01 00:00:00', 'late'),
                             (6, 'f', 6.00, 6, '0', '2023-12-31 00:00:00', 'early')"
dw run "$J"
is "$RC" 0 "second append: exit 0"
is "$(field read) $(field inserted)" "1 1" \
  "the checkpoint is pushed down: the source returns only the row past it"
like "$ERR" "lmd > 2024-01-03 12:00:00" "the log names the pushed-down checkpoint"
is "$(sql "SELECT id FROM copy1 WHERE id >= 5")" "5" "the new row is there, the older one is not"

# ---- query with :checkpoint ------------------------------------------------------
J=$(odbc_job q append copy2 "  query: SELECT id, name, lmd FROM src WHERE lmd > :checkpoint AND name <> ':checkpoint'" \
  "  lmd: lmd")
dw run "$J"
is "$RC" 0 "a query with :checkpoint: exit 0"
is "$(field read)" 6 "first run: the placeholder stands before every date"
ssql "INSERT INTO src VALUES (7, 'g', 7, 7, '1', '2024-03-01 00:00:00', NULL)"
dw run "$J"
is "$(field read) $(field inserted)" "1 1" "second run: the query receives the checkpoint"
is "$(sql "SELECT count(*) FROM copy2")" 7 "every row once"

# ---- replace reads everything, checkpoint or not -------------------------------
J=$(odbc_job rep replace copy3 "  table: src" "  lmd: lmd")
dw run "$J"
dw run "$J"
is "$RC $(field read) $(field inserted)" "0 7 7" "replace with lmd: the second run reads and loads every row again"
is "$(sql "SELECT count(*) FROM copy3")" 7 "and the table holds each row once"

# ---- scd2 with pushdown ----------------------------------------------------------
J=$(odbc_job dim scd2 dim1 "  query: SELECT id, name, lmd FROM src WHERE lmd > :checkpoint" \
  "  key: [id]
  lmd: lmd")
dw run "$J"
is "$RC $(field inserted)" "0 7" "scd2 first run: every key inserted"
ssql "UPDATE src SET name = 'G2', lmd = '2024-04-01 00:00:00' WHERE id = 7"
dw run "$J"
is "$RC $(field read) $(field expired) $(field inserted)" "0 1 1 1" \
  "scd2 second run: only the changed row is read, its version expired and a new one inserted"
is "$(sql "SELECT count(*) FROM dim1 WHERE id = 7")" 2 "key 7 has two versions"

# ---- errors ----------------------------------------------------------------------
J=$(odbc_job both append copy4 "  table: src
  query: SELECT 1")
dw run "$J"
is "$RC" 1 "table and query together: exit 1"
like "$ERR" "exactly one of table and query" "the error says why"

J=$(odbc_job ph append copy5 "  query: SELECT id FROM src WHERE id > :checkpoint")
dw run "$J"
is "$RC" 1 ":checkpoint without load.lmd: exit 1"
like "$ERR" ":checkpoint needs load.lmd" "the error says why"

job badpw <<EOF >/dev/null
version: 1
job: badpw
source:
  plugin: odbc
  connection: "Driver=NoSuchDriver-dwl;Server=localhost;Uid=u;Pwd=sEcReT-42"
  table: src
target:
  connection: "$WH_CONN"
  table: copy6
EOF
dw run "$WORK/badpw.yaml"
is "$RC" 1 "a connection that fails: exit 1"
like "$ERR" "Pwd=***" "the error shows the connection with the password redacted"
unlike "$ERR$OUT" "sEcReT-42" "the password appears nowhere"

J=$(odbc_job nosuch append copy7 "  table: no_such_table")
dw run "$J"
is "$RC" 1 "a missing source table: exit 1"
like "$ERR" "no_such_table" "the error names the table"

done_testing
