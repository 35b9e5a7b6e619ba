#!/bin/sh
# Values and names (issue 14): decimals of 16 to 38 significant digits,
# negative and of tiny scale, arrive exact on every warehouse and a rerun
# of the same rows changes nothing (no stored spelling churns: SQLite's
# REAL text 1.0e-08, PostgreSQL's and MariaDB's padded 12.50); an older
# SQLite table whose NUMERIC column would round a value fails the run,
# naming the column; MariaDB's DECIMAL(65,30) for a numeric without a
# precision likewise.  Schema-qualified target tables (SQLite main.t,
# PostgreSQL public.t and s.t, MariaDB db.t and another database's) work
# in scd2, upsert, append and replace.  Messages quoting data show NUL, CR
# and ESC escaped; a NUL in PostgreSQL text, and a value an existing
# table's column cannot take (text for an integer, more than its
# numeric(p,s), its varchar(n) or its SMALLINT) name the row and the
# column; the summary of a run locked out shows the stored checkpoint.
# The scd2 and upsert jobs run on the engine of DWL_ENGINE (mkjob).
. "$TOP_SRCDIR/tests/integration/lib.sh"

# dec_norm: '|'-separated rows on stdin, every field that is a decimal
# number (1.0e-08, 12.50, -0) in one spelling, so warehouses' prints compare
dec_norm() {
  python3 -c '
import sys
from decimal import Decimal, InvalidOperation, getcontext
getcontext().prec = 200
def n(f):
    try:
        d = Decimal(f)
    except InvalidOperation:
        return f
    if d == 0:
        return "0"
    s = format(d.normalize(), "f")
    return s
for line in sys.stdin.read().splitlines():
    print("|".join(n(f) for f in line.split("|")))'
}

# ---- decimals --------------------------------------------------------------
DTYPES='  types: {id: integer, lmd: timestamp, w18: "numeric(18,2)", w38: "numeric(38,18)", d38: "numeric(38,0)", tiny: "numeric(12,8)", anyn: numeric}'
W38_1=12345678901234567890.123456789012345678
D38_1=12345678901234567890123456789012345678
file dec.csv >/dev/null <<EOF
id,lmd,w18,w38,d38,tiny,anyn
1,2024-01-01 00:00:00,1234567890123456.78,$W38_1,$D38_1,0.00000001,98765432109876543210.0123456789
2,2024-01-01 00:00:00,-9999999999999999.99,-0.000000000000000001,-99999999999999999999999999999999999999,-0.5,-0.000000000000000000000000000001
3,2024-01-01 00:00:00,0.01,0,0,1234.5678,12.50
EOF
# The wide columns print the same on every warehouse: exact, padded to scale.
WIDE_WANT="1|1234567890123456.78|12345678901234567890.123456789012345678|$D38_1
2|-9999999999999999.99|-0.000000000000000001|-99999999999999999999999999999999999999
3|0.01|0.000000000000000000|0"
NARROW_WANT="1|0.00000001|98765432109876543210.0123456789
2|-0.5|-0.000000000000000000000000000001
3|1234.5678|12.5"

# decjob NAME CSV MODE: a job loading CSV into dec_MODE
decjob() {
  mkjob "$1" "$2" "dec_$3" "$DTYPES" <<EOF
load:
  mode: $3
  key: id
  lmd: lmd
EOF
}

for mode in scd2 upsert; do
  T=dec_$mode
  run_ok "$(decjob "dec_$mode" "$WORK/dec.csv" "$mode")" "$mode decimals: first run"
  is "$(field inserted)" 3 "$mode decimals: three rows inserted"
  is "$(sql "SELECT id, w18, w38, d38 FROM $T ORDER BY id")" "$WIDE_WANT" \
    "$mode decimals: 16 to 38 significant digits arrive exact"
  is "$(sql "SELECT id, tiny, anyn FROM $T ORDER BY id" | dec_norm)" "$NARROW_WANT" \
    "$mode decimals: tiny scale and a numeric without precision arrive exact"
  before=$(tdump "$T")
  # The same rows once more, by a job without a checkpoint: every row is
  # compared with its stored version, whatever spelling the warehouse keeps.
  run_ok "$(decjob "dec_${mode}_again" "$WORK/dec.csv" "$mode")" "$mode decimals: the same rows again"
  is "$(counts)" "read=3 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=3" \
    "$mode decimals: the rerun finds every row unchanged"
  is "$(tdump "$T")" "$before" "$mode decimals: the rerun leaves the table as it was"
  run_ok "$(decjob "dec_${mode}_third" "$WORK/dec.csv" "$mode")" "$mode decimals: and once more"
  is "$(field unchanged)" 3 "$mode decimals: still unchanged (no churn)"
  # One digit, the 38th, changes (a day later): that is a change.
  sed "s/^1,2024-01-01 00:00:00,\(.*\)$W38_1/1,2024-01-02 00:00:00,\112345678901234567890.123456789012345679/" \
    "$WORK/dec.csv" >"$WORK/dec2.csv"
  run_ok "$(decjob "dec_${mode}_last" "$WORK/dec2.csv" "$mode")" "$mode decimals: a change in the 38th digit"
  if [ "$mode" = scd2 ]; then
    is "$(counts)" "read=3 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=2" \
      "scd2 decimals: the 38th digit's change is one new version"
  else
    is "$(counts)" "read=3 skipped=0 inserted=0 expired=0 updated=1 deleted=0 unchanged=2" \
      "upsert decimals: the 38th digit's change is one update"
  fi
  is "$(sql "SELECT count(*) FROM $T WHERE w38 = '12345678901234567890.123456789012345679'")" 1 \
    "$mode decimals: the changed value is stored exact"
done

# An older SQLite table declared NUMERIC(p,s) keeps REALs: values of up to
# 15 significant digits load and reload unchanged (read back as 1.0e-08 and
# the like); one of more fails the run, naming the column.
if is_warehouse sqlite; then
  sql 'CREATE TABLE legacy (id INTEGER, lmd TIMESTAMP, w38 NUMERIC(38,18), tiny NUMERIC(12,8))'
  LTYPES='  types: {id: integer, lmd: timestamp, w38: "numeric(38,18)", tiny: "numeric(12,8)"}'
  file legacy.csv >/dev/null <<'EOF'
id,lmd,w38,tiny
1,2024-01-01 00:00:00,123456789012.345,0.00000001
2,2024-01-01 00:00:00,-0.000000000000000001,-0.00001234
EOF
  J=$(mkjob legacy "$WORK/legacy.csv" legacy "$LTYPES" <<'EOF'
load:
  mode: upsert
  key: id
  lmd: lmd
EOF
)
  run_ok "$J" "legacy NUMERIC table: 15 digits load"
  is "$(sql "SELECT typeof(tiny) FROM legacy WHERE id = 1")" real "legacy NUMERIC table: SQLite keeps a REAL there"
  J2=$(mkjob legacy_again "$WORK/legacy.csv" legacy "$LTYPES" <<'EOF'
load:
  mode: upsert
  key: id
  lmd: lmd
EOF
)
  run_ok "$J2" "legacy NUMERIC table: the same rows again"
  is "$(field unchanged)" 2 "legacy NUMERIC table: its REAL spellings (1.0e-08) compare unchanged"
  before=$(tdump legacy)
  printf '3,2024-01-02 00:00:00,1234567890123456.78,0.5\n' >>"$WORK/legacy.csv"
  dw run "$J"
  is "$RC" 4 "legacy NUMERIC table: a 18-digit value fails the run (exit 4: the table, not the row)"
  like "$ERR" "legacy.csv:4: column 'w38': '1234567890123456.78' has more significant digits than the column keeps" \
    "legacy NUMERIC table: the message names the row, the column and the value"
  like "$ERR" "DECIMAL_TEXT(p,s)" "legacy NUMERIC table: the message says what to do"
  is "$(tdump legacy)" "$before" "legacy NUMERIC table: nothing written"
  is "$(sql "SELECT type FROM pragma_table_info('dec_scd2') WHERE name IN ('w18', 'tiny') ORDER BY cid" | paste -sd' ' -)" \
    "DECIMAL_TEXT(18,2) NUMERIC(12,8)" "SQLite: a new table declares wide decimals DECIMAL_TEXT(p,s), narrow ones NUMERIC(p,s)"
else
  skip_tests 7 "SQLite's NUMERIC affinity"
fi

# MariaDB declares a numeric without a precision DECIMAL(65,30): a 31st
# decimal would be rounded.  Elsewhere it arrives whole.
file wide.csv >/dev/null <<'EOF'
id,lmd,anyn
1,2024-01-01 00:00:00,0.1234567890123456789012345678901
EOF
J=$(mkjob widen "$WORK/wide.csv" widen '  types: {id: integer, lmd: timestamp, anyn: numeric}' <<'EOF'
load:
  mode: append
  lmd: lmd
EOF
)
dw run "$J"
if is_warehouse mariadb; then
  is "$RC" 4 "MariaDB: 31 decimals for DECIMAL(65,30) fail the run"
  like "$ERR" "wide.csv:2: column 'anyn': '0.1234567890123456789012345678901' has more decimals than the column's scale" \
    "MariaDB: the message names the row and the column"
  like "$ERR" "DECIMAL(65,30)" "MariaDB: the message says why and what to do"
  no_table widen "MariaDB: nothing written"
else
  is "$RC" 0 "$WAREHOUSE: a numeric without a precision takes 31 decimals"
  is "$(sql "SELECT anyn FROM widen")" 0.1234567890123456789012345678901 "$WAREHOUSE: and keeps them exact"
  skip_tests 2 "MariaDB's DECIMAL(65,30)"
fi

# ---- schema-qualified tables ---------------------------------------------
case $WAREHOUSE in
  sqlite) SCHEMAS="main" ;;
  postgresql) sql 'CREATE SCHEMA s' && SCHEMAS="public s" ;;
  mariadb)
    OTHER_DB="${WH_DB}_o"
    _wh_mariadb "" -e "CREATE DATABASE \"$OTHER_DB\" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" &&
      trap '_wh_mariadb "" -e "DROP DATABASE IF EXISTS \"$OTHER_DB\"" >/dev/null; _wh_drop_db' EXIT
    SCHEMAS="$WH_DB $OTHER_DB" ;;
esac
file q1.csv >/dev/null <<'EOF'
id,lmd,name
1,2024-01-01 00:00:00,a
2,2024-01-01 00:00:00,b
EOF
file q2.csv >/dev/null <<'EOF'
id,lmd,name
1,2024-01-02 00:00:00,A
3,2024-01-02 00:00:00,c
EOF
QTYPES='  types: {id: integer, lmd: timestamp}'
for s in $SCHEMAS; do
  for mode in scd2 upsert append replace; do
    T="$s.q_$mode"
    key=""
    case $mode in scd2|upsert) key="  key: id" ;; esac
    FEED=$WORK/q1.csv
    J=$(mkjob "q_${mode}_$s" '${FEED}' "$T" "$QTYPES" <<EOF
load:
  mode: $mode
$key
  lmd: lmd
EOF
)
    export FEED
    dw run "$J"
    is "$RC" 0 "$T ($mode): first run creates the table"
    [ "$RC" = 0 ] || echo "# $ERR"
    FEED=$WORK/q2.csv
    dw run "$J"
    is "$RC" 0 "$T ($mode): second run finds it"
    [ "$RC" = 0 ] || echo "# $ERR"
    case $mode in
      scd2) want="1|a|0
1|A|1
2|b|1
3|c|1"
            got=$(sql "SELECT id, name, is_current FROM $T ORDER BY id, valid_from") ;;
      upsert) want="1|A
2|b
3|c"
              got=$(sql "SELECT id, name FROM $T ORDER BY id") ;;
      append) want="1|a
1|A
2|b
3|c"
              got=$(sql "SELECT id, name FROM $T ORDER BY id, lmd") ;;
      replace) want="1|A
3|c"
               got=$(sql "SELECT id, name FROM $T ORDER BY id") ;;
    esac
    is "$got" "$want" "$T ($mode): the rows of both runs"
    if [ "$mode" = scd2 ]; then
      dw asof "$J" --at "2024-01-01 12:00:00"
      is "$RC" 0 "$T: asof reads it"
      like "$OUT" ",1,2024-01-01 00:00:00,a,2024-01-01 00:00:00," "$T: asof shows the version of the time"
    fi
  done
done
if is_warehouse sqlite; then
  like "$(sql "SELECT sql FROM sqlite_master WHERE name = 'q_scd2_dwl_key'")" 'ON "q_scd2"' \
    "SQLite: main.t's key index is on its table"
else
  is "$(sql "SELECT count(*) FROM dwload_state WHERE job LIKE 'q_%'")" 8 \
    "$WAREHOUSE: the jobs' state is in the connection's own schema"
fi

# ---- messages ------------------------------------------------------------
# Bytes a terminal hides, in values a message quotes.
printf 'id,lmd,name\n1\r,2024-01-01 00:00:00,a\n2\0337,2024-01-01 00:00:00,b\n3\0,2024-01-01 00:00:00,c\n4,2024-01-01 00:00:00,d\n' \
  >"$WORK/ctl.csv"
J=$(mkjob ctl "$WORK/ctl.csv" ctl "$QTYPES" <<EOF
load:
  mode: append
  lmd: lmd
  max_rejects: 5
  reject_file: $WORK/ctl.rej
EOF
)
dw run "$J"
is "$RC" 0 "control bytes: the bad rows are set aside"
like "$ERR" "ctl.csv:2: column 'id': '1\\r' not an integer" "a lone CR is shown as backslash r"
like "$ERR" "ctl.csv:3: column 'id': '2\\x1b7' not an integer" "ESC is shown as backslash x1b"
like "$ERR" "ctl.csv:4: column 'id': '3\\0' not an integer" "NUL is shown as backslash 0"
like "$(cat "$WORK/ctl.rej")" "'1\\r' not an integer" "the reject file's reason is escaped too"

# A NUL in text: PostgreSQL's text cannot hold it; the row is named.
printf 'id,lmd,name\n1,2024-01-01 00:00:00,ok\n2,2024-01-01 00:00:00,a\0b\n' >"$WORK/nul.csv"
J=$(mkjob nul "$WORK/nul.csv" nul "$QTYPES" <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
dw run "$J"
if is_warehouse postgresql; then
  is "$RC" 4 "PostgreSQL: a NUL in text fails the run"
  like "$ERR" "nul.csv:3: column 'name': 'a\\0b' holds a NUL byte, which PostgreSQL text cannot hold" \
    "PostgreSQL: the message names the row and the column"
  unlike "$ERR" "malformed array literal" "PostgreSQL: not the server's words about an array"
  no_table nul "PostgreSQL: nothing written"
else
  is "$RC" 0 "$WAREHOUSE: a NUL in text loads"
  is "$(sql "SELECT count(*) FROM nul WHERE name = 'a' || char(0) || 'b'" 2>/dev/null ||
        sql "SELECT count(*) FROM nul WHERE HEX(name) = '610062'")" 1 "$WAREHOUSE: with its NUL"
  skip_tests 2 "PostgreSQL's text"
fi

# The same inside a full batch of inserts (600 rows: SQLite's are 500
# rows, bound once and sent as terminated strings), where the value with a
# NUL must keep its length, and its neighbours theirs.
python3 - "$WORK/nulbatch.csv" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.write(b"id,lmd,name\n")
    for i in range(1, 601):
        f.write(b"%d,2024-01-01 00:00:00,%s\n" % (i, b"a\0b" if i == 100 else b"n%d" % i))
EOF
J=$(mkjob nulbatch "$WORK/nulbatch.csv" nulbatch "$QTYPES" <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
dw run "$J"
if is_warehouse postgresql; then
  is "$RC" 4 "PostgreSQL: a NUL in a full batch fails the run"
  skip_tests 2 "PostgreSQL's text"
else
  is "$RC" 0 "$WAREHOUSE: a NUL in a full batch loads"
  is "$(sql "SELECT id FROM nulbatch WHERE name = 'a' || char(0) || 'b'" 2>/dev/null ||
        sql "SELECT id FROM nulbatch WHERE HEX(name) = '610062'")" 100 "$WAREHOUSE: the value keeps its NUL and what follows"
  is "$(sql "SELECT count(*) FROM nulbatch WHERE name = 'n' || id")" 599 "$WAREHOUSE: the other 599 values as they were"
fi

# An existing table made elsewhere takes less than the source holds: text
# that is not an integer, more decimals than its numeric(10,2) (which
# PostgreSQL and MariaDB would round), more digits, more than its
# varchar(5), an integer beyond its SMALLINT.  Each row is named with its
# column before the server sees the batch (schema.widen: fail; the default
# widens the column instead: schema_widen.sh).
sql 'CREATE TABLE clash (id INTEGER, lmd TIMESTAMP, qty INTEGER, price NUMERIC(10,2), code VARCHAR(5), small SMALLINT)'
sql "INSERT INTO clash VALUES (0, '2023-12-31 00:00:00', 1, 1.50, 'abc', 7)"
before=$(tdump clash)
n=0
# column|qty|price|code|small|the message after "column 'COLUMN': "
for c in "qty|many|1.00|ab|1|'many' not an integer: column qty of table clash is an integer from -2147483648 to 2147483647" \
         "price|7|1.2345|ab|1|'1.2345' has more decimals than the column's scale: column price of table clash is numeric(10,2)" \
         "price|7|123456789|ab|1|'123456789' has more digits than the column's precision: column price of table clash is numeric(10,2)" \
         "code|7|1.00|toolong|1|'toolong' is too long: column code of table clash is varchar(5)" \
         "small|7|1.00|ab|99999|'99999' is out of range: column small of table clash is an integer from -32768 to 32767"; do
  IFS='|' read -r col qty price code small msg <<EOF
$c
EOF
  n=$((n + 1))
  printf 'id,lmd,qty,price,code,small\n1,2024-01-01 00:00:00,5,1.00,ab,-32768\n2,2024-01-01 00:00:00,%s,%s,%s,%s\n' \
    "$qty" "$price" "$code" "$small" >"$WORK/clash.csv"
  J=$(mkjob "clash_$n" "$WORK/clash.csv" clash '  types: {price: "numeric(14,4)", small: integer}' <<'EOF'
load:
  mode: append
  lmd: lmd
schema:
  widen: fail
EOF
)
  dw run "$J"
  if is_warehouse sqlite; then
    is "$RC" 0 "SQLite: column $col takes the value (SQLite's columns take any)"
    sql "DELETE FROM clash WHERE id <> 0"
    skip_tests 2 "SQLite keeps what it is given"
  else
    is "$RC" 4 "$WAREHOUSE: column $col: the run fails"
    like "$ERR" "clash.csv:3: column '$col': $msg" "$WAREHOUSE: column $col: the message names the row and the column"
    is "$(tdump clash)" "$before" "$WAREHOUSE: column $col: nothing written"
  fi
done
# Values within every limit load.
printf 'id,lmd,qty,price,code,small\n1,2024-01-02 00:00:00,5,12345678.9,abcde,32767\n' >"$WORK/clash.csv"
J=$(mkjob clash_ok "$WORK/clash.csv" clash '  types: {price: "numeric(14,4)", small: integer}' <<'EOF'
load:
  mode: append
  lmd: lmd
schema:
  widen: fail
EOF
)
run_ok "$J" "an existing table: values within its limits load"
is "$(sql "SELECT qty, price, code, small FROM clash WHERE id = 1" | dec_norm)" "5|12345678.9|abcde|32767" \
  "an existing table: and arrive as they were"

# A run locked out by another: its summary shows the checkpoint stored.
file lk.csv >/dev/null <<'EOF'
id,lmd,name
1,2024-03-01 10:00:00,a
EOF
FEED=$WORK/lk.csv
J=$(mkjob lk '${FEED}' lk "$QTYPES" <<'EOF'
load:
  mode: append
  lmd: lmd
EOF
)
run_ok "$J" "locked out: a first run stores a checkpoint"
FIFO="$WORK/lk.fifo"
mkfifo "$FIFO"
exec 3<>"$FIFO"
FEED="$FIFO" "$DWLOAD" run "$J" >"$WORK/lk1.out" 2>"$WORK/lk1.err" 3>&- &
PID1=$!
echo "id,lmd,name" >&3
# held: the first run holds the job's lock, as lock.sh observes it: the
# state row names it, and the warehouse refuses another writer
held() {
  [ "$(sql "SELECT running_pid FROM dwload_state WHERE job = 'lk'" 2>/dev/null)" = "$PID1" ] || return 1
  if is_warehouse sqlite; then
    ! sqlite3 -batch "$WH" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1
  else
    [ "$(sql "SELECT job FROM dwload_state WHERE job = 'lk' FOR UPDATE NOWAIT" 2>/dev/null)" != lk ]
  fi
}
i=0
while [ $i -lt 100 ] && ! held; do
  sleep 0.1
  i=$((i + 1))
done
dw run "$J"
is "$RC" 3 "locked out: the second run exits 3"
is "$(field checkpoint)" "2024-03-01 10:00:00" "locked out: its summary shows the stored checkpoint, not null"
echo "2,2024-03-02 10:00:00,b" >&3
exec 3>&-
finish "$PID1" >/dev/null
is "$?" 0 "locked out: the first run finishes"
rm -f "$FIFO"
# A run failing on a bad row reports the checkpoint still stored.
printf 'id,lmd,name\nx,2024-03-03 10:00:00,c\n' >"$WORK/lk.csv"
dw run "$J"
is "$RC" 4 "failed run (a bad row): exit 4"
is "$(field checkpoint)" "2024-03-02 10:00:00" "failed run: its summary shows the stored checkpoint"

done_testing
