# schema.widen (src/warehouse/target_widen.c): an existing table's column
# too narrow for the source's values.  widen (the default) widens it in
# place to the smallest type that holds them (VARCHAR(n) longer, INTEGER
# to BIGINT, NUMERIC(p,s) with more integer or fraction digits), never
# narrower, and says so in the log and the summary; plan and plan --sql
# show it.  fail refuses the row as before, the message naming the
# column, its type and the type the value needs: nothing written, the
# checkpoint kept.  SQLite keeps every value whole: nothing to widen.  A
# failed run on PostgreSQL leaves the type as it was (DDL inside the run's
# transaction); on MariaDB, whose DDL commits by itself, the column stays
# wider, and nothing else.  Whole tables are compared.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# (coltype COLUMN TABLE and checkpoint JOB: lib.sh)
types() {
  echo "$(coltype name cust) $(coltype qty cust) $(coltype amount cust)"
}
# the table, each warehouse printing its numbers in its own way
case $WAREHOUSE in
postgresql) AMOUNT="TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM CAST(amount AS TEXT)))" ;;
mariadb) AMOUNT="TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM CAST(amount AS CHAR)))" ;;
*) AMOUNT="CAST(amount AS TEXT)" ;;
esac
dump() {
  sqln "SELECT id, name, qty, $AMOUNT, lmd FROM cust ORDER BY id"
}

case $WAREHOUSE in
# MariaDB: the exact collation dwload's own tables have (pushdown compares
# with its stages' text), and a comment: MODIFY COLUMN keeps both
mariadb) NOTE=" CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL COMMENT 'the customer''s name'" TS=DATETIME ;;
*) NOTE="" TS=TIMESTAMP ;;
esac
sql "CREATE TABLE cust (id INTEGER NOT NULL, name VARCHAR(5)${NOTE:- NOT NULL}, qty INTEGER, amount NUMERIC(5,2),
     lmd $TS)" >/dev/null
NARROW=$(types)
if is_warehouse mariadb; then
  COLL=$(sql "SELECT collation_name FROM information_schema.columns WHERE table_schema = DATABASE()
              AND table_name = 'cust' AND column_name = 'name'")
  is "$COLL" utf8mb4_nopad_bin "MariaDB: the name column's collation"
fi
case $WAREHOUSE in
postgresql) is "$NARROW" "character varying(5) integer numeric(5,2)" "the table's narrow types" ;;
mariadb) is "$NARROW" "varchar(5) int(11) decimal(5,2)" "the table's narrow types" ;;
*) is "$NARROW" "VARCHAR(5) INTEGER NUMERIC(5,2)" "the table's declared types" ;;
esac

F1=$(file f1.csv <<'EOF'
id,name,qty,amount,lmd
1,Annabelle,3000000000,12345.678,2024-01-01
2,Bob,5,1.5,2024-01-01
EOF
)
export F1
# wjob NAME MODE [SCHEMA-LINES]: a job of ${FEED} into cust
wjob() {
  mkjob "$1" '${FEED}' cust '  types: {id: integer, qty: integer, amount: numeric}' <<EOF
load:
  mode: $2
  key: id
  lmd: lmd
${3:-}
EOF
}

# ---- plan and plan --sql show the widening, change nothing --------------------
j=$(wjob up upsert)
FEED=$F1 dw plan --sql "$j"
is "$RC" 0 "plan --sql: exit 0"
if is_warehouse sqlite; then
  unlike "$ERR" "widen" "SQLite: plan widens nothing (it keeps values whole)"
  unlike "$OUT" "ALTER TABLE" "SQLite: plan --sql alters nothing"
else
  like "$ERR" "would widen cust.name from VARCHAR(5) to VARCHAR(9)" "plan: the log names the text widening"
  like "$ERR" "would widen cust.qty from INTEGER to BIGINT" "plan: the integer widening"
  like "$ERR" "would widen cust.amount from NUMERIC(5,2) to NUMERIC(8,3)" "plan: the numeric widening"
  case $WAREHOUSE in
  postgresql) like "$OUT" 'ALTER TABLE "cust" ALTER COLUMN "name" TYPE VARCHAR(9);' "plan --sql: the ALTER COLUMN TYPE"
              like "$OUT" 'ALTER TABLE "cust" ALTER COLUMN "qty" TYPE BIGINT;' "plan --sql: to BIGINT"
              like "$OUT" 'ALTER TABLE "cust" ALTER COLUMN "amount" TYPE NUMERIC(8,3);' "plan --sql: to NUMERIC(8,3)" ;;
  mariadb) like "$OUT" "ALTER TABLE \`cust\` MODIFY COLUMN \`name\` VARCHAR(9) CHARACTER SET" "plan --sql: MODIFY, keeping the character set"
           like "$OUT" "$COLL NOT NULL COMMENT 'the customer\\'s name';" "plan --sql: keeping the collation, NOT NULL and the comment"
           like "$OUT" "MODIFY COLUMN \`qty\` BIGINT;" "plan --sql: to BIGINT"
           like "$OUT" "MODIFY COLUMN \`amount\` DECIMAL(8,3);" "plan --sql: to DECIMAL(8,3)" ;;
  esac
  is "$(field widened)" 3 "plan: the summary counts 3 columns it would widen"
fi
is "$(types)" "$NARROW" "plan changed no type"

# ---- fail: the row refused, naming the types; nothing written ----------------
jf=$(wjob upf upsert '
schema:
  widen: fail')
FEED=$F1 dw run "$jf"
if is_warehouse sqlite; then
  is "$RC" 0 "SQLite, widen: fail: nothing is too narrow: exit 0"
  is "$(dump)" "1|Annabelle|3000000000|12345.678|2024-01-01 00:00:00
2|Bob|5|1.5|2024-01-01 00:00:00" "SQLite: the values are kept whole"
  sql "DELETE FROM cust" >/dev/null
  sql "DELETE FROM dwload_state" >/dev/null
else
  is "$RC" 4 "widen: fail: a value too long for its column fails the run (max_rejects 0: exit 4)"
  like "$ERR" "column 'name': 'Annabelle' is too long: column name of table cust is varchar(5); the column is VARCHAR(5), the value needs VARCHAR(9) (schema.widen: fail)" \
    "fail: the message names the column, its type and the type the value needs"
  like "$ERR" "rolled back: nothing was written" "fail: nothing written"
  is "$(sql 'SELECT COUNT(*) FROM cust')" 0 "fail: the table is empty"
  is "$(checkpoint upf)" "" "fail: no checkpoint"
  is "$(types)" "$NARROW" "fail: no type changed"
fi

# ---- widen: the default ------------------------------------------------------
FEED=$F1 dw run "$j"
is "$RC" 0 "widen: exit 0"
if [ "$RC" != 0 ]; then printf "%s\n" "$ERR" | sed "s|^|# |"; fi
WIDE="1|Annabelle|3000000000|12345.678|2024-01-01 00:00:00
2|Bob|5|1.5|2024-01-01 00:00:00"
is "$(dump)" "$WIDE" "widen: the whole table, every value whole"
is "$(checkpoint up)" "2024-01-01 00:00:00" "widen: the checkpoint"
case $WAREHOUSE in
postgresql) is "$(types)" "character varying(9) bigint numeric(8,3)" "widen: the smallest types holding the values"
            like "$ERR" "widened cust.name from VARCHAR(5) to VARCHAR(9) (schema.widen: widen)" "widen: the log says what changed"
            is "$(field widened)" 3 "widen: the summary counts 3 widened columns" ;;
mariadb) is "$(types)" "varchar(9) bigint(20) decimal(8,3)" "widen: the smallest types holding the values"
         like "$ERR" "widened cust.name from VARCHAR(5) to VARCHAR(9) (schema.widen: widen), committed at once" \
           "widen: the log says what changed, and that it committed at once"
         is "$(sql "SELECT is_nullable, column_comment, collation_name FROM information_schema.columns
                    WHERE table_schema = DATABASE() AND table_name = 'cust' AND column_name = 'name'")" \
            "NO|the customer's name|$COLL" "widen: MODIFY kept NOT NULL, the comment and the collation" ;;
*) is "$(types)" "$NARROW" "SQLite: the declared types stay"
   is "$(field widened)" 0 "SQLite: the summary counts none" ;;
esac

# ---- never narrower ----------------------------------------------------------
F2=$(file f2.csv <<'EOF'
id,name,qty,amount,lmd
1,Al,1,1,2024-02-01
3,Christophe,7,123456.5,2024-02-01
EOF
)
WIDE_TYPES=$(types)
FEED=$F2 dw run "$j"
is "$RC" 0 "a shorter value, and a longer one: exit 0"
if [ "$RC" != 0 ]; then printf "%s\n" "$ERR" | sed "s|^|# |"; fi
is "$(dump)" "1|Al|1|1|2024-02-01 00:00:00
2|Bob|5|1.5|2024-01-01 00:00:00
3|Christophe|7|123456.5|2024-02-01 00:00:00" "the whole table"
case $WAREHOUSE in
postgresql) is "$(types)" "character varying(10) bigint numeric(9,3)" "wider again, never narrower: VARCHAR(10), NUMERIC(9,3)" ;;
mariadb) is "$(types)" "varchar(10) bigint(20) decimal(9,3)" "wider again, never narrower: VARCHAR(10), DECIMAL(9,3)" ;;
*) is "$(types)" "$WIDE_TYPES" "SQLite: the types stay" ;;
esac
unlike "$ERR" "widened cust.qty" "a value that fits the widened column widens nothing"

# ---- a failed run: PostgreSQL rolls the widening back -------------------------
BEFORE=$(dump)
BEFORE_TYPES=$(types)
F3=$(file f3.csv <<'EOF'
id,name,qty,amount,lmd
4,Maximilianus,1,1,2024-03-01
5,Eve,not a number,1,2024-03-01
EOF
)
ja=$(mkjob ap '${FEED}' cust '  types: {id: integer, qty: integer}' <<'EOF'
load:
  mode: append
  lmd: lmd
EOF
)
FEED=$F3 dw run "$ja"
is "$RC" 4 "append: a bad row after the widening fails the run (max_rejects 0: exit 4)"
is "$(dump)" "$BEFORE" "the failed run wrote no row"
is "$(checkpoint ap)" "" "the failed run stored no checkpoint"
case $WAREHOUSE in
postgresql) like "$ERR" "widened cust.name from VARCHAR(10) to VARCHAR(12)" "the run widened before its failure"
            is "$(types)" "$BEFORE_TYPES" "PostgreSQL: the widening is rolled back with the run" ;;
mariadb) is "$(coltype name cust)" "varchar(12)" "MariaDB: the widening committed at once: only a wider column is left" ;;
*) is "$(types)" "$BEFORE_TYPES" "SQLite: the types stay" ;;
esac

# ---- the source's declared type: widened before any row ----------------------
jd=$(mkjob decl '${FEED}' cust '  types: {id: integer, qty: integer, name: varchar(40), amount: "numeric(12,4)"}' <<'EOF'
load:
  mode: upsert
  key: id
  lmd: lmd
EOF
)
F4=$(file f4.csv <<'EOF'
id,name,qty,amount,lmd
6,Ida,1,2.25,2024-04-01
EOF
)
FEED=$F4 dw run "$jd"
is "$RC" 0 "declared wider types: exit 0"
case $WAREHOUSE in
postgresql) is "$(coltype name cust) $(coltype amount cust)" "character varying(40) numeric(12,4)" \
              "the declared varchar(40) and numeric(12,4) widen the columns" ;;
mariadb) is "$(coltype name cust) $(coltype amount cust)" "varchar(40) decimal(12,4)" \
           "the declared varchar(40) and numeric(12,4) widen the columns" ;;
*) is "$(coltype name cust)" "VARCHAR(5)" "SQLite: the declared type stays" ;;
esac
is "$(sqln "SELECT name FROM cust WHERE id = 6")" "Ida" "the row is loaded"

# ---- scd2: a table dwload made, the source's values outgrow it ----------------
# The first run declares name varchar(6): the table is made VARCHAR(6).
# Later runs declare no length: a longer name widens the column; with
# deletes: absent the current versions are read before the source.
D1=$(file d1.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01
2,Bob,2024-01-01
EOF
)
D2=$(file d2.csv <<'EOF'
id,name,lmd
1,Annabelle,2024-02-01
2,Bob,2024-01-01
EOF
)
export D1 D2
# djob NAME TYPES [LOAD-LINES]
djob() {
  mkjob "$1" '${FEED}' dim "  types: {id: integer$2}" <<EOF
load:
  mode: scd2
  key: id
  lmd: lmd
${3:-}
EOF
}
FEED=$D1 dw run "$(djob dim1 ', name: varchar(6)')"
is "$RC" 0 "scd2: the first run makes the table"
dimtype() {
  coltype name dim
}
DIM1=$(dimtype)
DIM_FIRST=$(tdump dim dim_id)
FEED=$D2 dw run "$(djob dim2 '' '  deletes: absent')"
if is_warehouse mariadb && [ "${DWL_ENGINE:-}" != pushdown ]; then
  # the current versions were read first, in the run's transaction: an
  # ALTER on another connection would wait for the run's own lock (pushdown
  # reads none before the source: it widens the column, as without absence)
  is "$RC" 4 "MariaDB, scd2, deletes: absent: a longer name found after the lookup: exit 4"
  like "$ERR" "table dim: column 'name' is VARCHAR(6), and the source's values need VARCHAR(9); this run had already read or written the table" \
    "MariaDB: the message names the column, its type, the type needed and why it cannot widen now"
  like "$ERR" "widen the column yourself (ALTER TABLE \`dim\` MODIFY COLUMN \`name\` VARCHAR(9)" "MariaDB: the message gives the statement"
  is "$(tdump dim dim_id)" "$DIM_FIRST" "MariaDB: nothing was written"
  is "$(dimtype)" "$DIM1" "MariaDB: the type is as it was"
  is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'dim2'")" "" "MariaDB: no checkpoint stored"
  # the default lookup reads the source first: the widening comes before
  FEED=$D2 dw run "$(djob dim3 "")"
fi
is "$RC" 0 "scd2: a longer name: exit 0"
if [ "$RC" != 0 ]; then printf "%s\n" "$ERR" | sed "s|^|# |"; fi
is "$(sqln "SELECT dim_id, id, name, lmd, valid_from, valid_to, is_current, is_deleted FROM dim ORDER BY dim_id")" \
"1|1|Ann|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|2|Bob|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
3|1|Annabelle|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0" "scd2: the whole table, the new version's name whole"
case $WAREHOUSE in
postgresql) is "$DIM1 > $(dimtype)" "character varying(6) > character varying(9)" "scd2: VARCHAR(6) widened to VARCHAR(9)" ;;
mariadb) is "$DIM1 > $(dimtype)" "varchar(6) > varchar(9)" "scd2: VARCHAR(6) widened to VARCHAR(9)" ;;
*) is "$(dimtype)" "$DIM1" "SQLite: the type stays" ;;
esac

# ---- schema.new_columns: ignore ------------------------------------------------
# A source column the table has not is left out, as columns.exclude would
# leave it: not added, not stored, never a change; the run notes it once.
D3=$(file d3.csv <<'EOF'
id,name,city,lmd
1,Annabelle,Oslo,2024-02-01
2,Bob,Rome,2024-01-01
EOF
)
export D3
DIM_COLS=$(cols dim)
DIM_BEFORE=$(tdump dim dim_id)
ji=$(djob dimi "" '  deletes: absent
schema:
  new_columns: ignore')
FEED=$D3 dw run "$ji"
is "$RC" 0 "new_columns: ignore: exit 0"
if [ "$RC" != 0 ]; then printf "%s\n" "$ERR" | sed "s|^|# |"; fi
is "$(cols dim)" "$DIM_COLS" "ignore: no column added"
is "$(tdump dim dim_id)" "$DIM_BEFORE" "ignore: the whole table as it was: the new column opens no version"
is "$(printf '%s\n' "$ERR" | grep -c "the source delivers column 'city', which table dim has not: not loaded (schema.new_columns: ignore)")" 1 \
  "ignore: the run notes the column once"
is "$(field inserted) $(field unchanged)" "0 2" "ignore: the summary: nothing inserted, both keys unchanged"
D4=$(file d4.csv <<'EOF'
id,name,city,lmd
1,Annabelle,Oslo,2024-02-01
2,Bobby,Rome,2024-03-01
EOF
)
FEED=$D4 dw run "$ji"
is "$RC" 0 "ignore: a changed name: exit 0"
is "$(sqln "SELECT dim_id, id, name, lmd, valid_from, valid_to, is_current, is_deleted FROM dim ORDER BY dim_id")" \
"1|1|Ann|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|2|Bob|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-03-01 00:00:00|0|0
3|1|Annabelle|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0
4|2|Bobby|2024-03-01 00:00:00|2024-03-01 00:00:00|<null>|1|0" "ignore: the whole table: the name's change opens a version, no city anywhere"
is "$(cols dim)" "$DIM_COLS" "ignore: still no column added"
jn=$(djob dimn "" '  type2: [name, city]
schema:
  new_columns: ignore')
FEED=$D4 dw run "$jn"
is "$RC" 4 "ignore: a new column the job names in load.type2: exit 4"
like "$ERR" "table dim has no column 'city', which the source (d4.csv) delivers and load.type1 or load.type2 names" \
  "ignore: the message names the column and why it cannot be left out"

# ---- killed around the widening ----------------------------------------------
# SIGKILL at moments of a run that widens (killat.py: observed, not timed:
# once the feed is open, and at fractions of the round trips after it, as
# a run to its end counts them): the table is then exactly as before the
# run, or as the run commits it; on PostgreSQL the type is as before
# unless the run committed, on MariaDB it may be wider (its ALTER commits
# first), and nothing else.  The next run to completion gives the table the
# uninterrupted run gives.
if is_warehouse postgresql mariadb; then
  KILLAT="python3 $TOP_SRCDIR/tests/integration/killat.py"
  DWLOAD_ALLOW_CORE=1
  export DWLOAD_ALLOW_CORE
  K1=$(file k1.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01
2,Bob,2024-01-01
EOF
)
  K2=$(file k2.csv <<'EOF'
id,name,lmd
1,Annabelle,2024-02-01
3,Cy,2024-02-01
EOF
)
  jk=$(mkjob kt "\${FEED}" kt '  types: {id: integer}' <<'EOF'
load:
  mode: upsert
  key: id
  lmd: lmd
EOF
)
  ktype() {
    coltype name kt
  }
  # kreset: the table narrow again with the first feed's rows, no state
  kreset() {
    sql "DROP TABLE IF EXISTS kt" >/dev/null
    sql "DELETE FROM dwload_state WHERE job = 'kt'" >/dev/null 2>&1
    sql "CREATE TABLE kt (id INTEGER NOT NULL, name VARCHAR(5)$KCOLL, lmd $TS)" >/dev/null
    FEED=$K1 "$DWLOAD" run "$jk" >/dev/null 2>&1
  }
  # MariaDB: the exact collation, as above
  KCOLL=""
  if is_warehouse mariadb; then KCOLL=" CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"; fi
  kreset
  KBEFORE=$(tdump kt id)
  is "$KBEFORE" "1|Ann|2024-01-01 00:00:00
2|Bob|2024-01-01 00:00:00" "killed: the table before the run"
  KNARROW=$(ktype)
  out=$(FEED=$K2 $KILLAT never "$K2" -- "$DWLOAD" run "$jk" 2>/dev/null)
  KAFTER=$(tdump kt id)
  KWIDE=$(ktype)
  is "$KAFTER" "1|Annabelle|2024-02-01 00:00:00
2|Bob|2024-01-01 00:00:00
3|Cy|2024-02-01 00:00:00" "killed: the uninterrupted run's whole table"
  like "$KNARROW > $KWIDE" "5) > " "killed: the uninterrupted run widened the column"
  total=$(printf '%s\n' "$out" | sed -n 's/^waited //p')
  bad=""
  kills=0
  wider=0
  for p in open wait:1 "wait:$((total / 4 + 1))" "wait:$((total / 2 + 1))" "wait:$((total * 3 / 4 + 1))"; do
    kreset
    out=$(FEED=$K2 $KILLAT "$p" "$K2" -- "$DWLOAD" run "$jk" 2>/dev/null)
    case $out in
      "killed at"*) kills=$((kills + 1)) ;;
    esac
    now=$(tdump kt id)
    ty=$(ktype)
    if [ "$now" = "$KBEFORE" ]; then
      case $WAREHOUSE:$ty in
        postgresql:"$KNARROW" | mariadb:"$KNARROW") ;;
        mariadb:"$KWIDE") wider=$((wider + 1)) ;;
        *) bad="$bad; $p: rows as before, type $ty" ;;
      esac
    elif [ "$now" != "$KAFTER" ] || [ "$ty" != "$KWIDE" ]; then
      bad="$bad; $p: neither before nor after ($ty)"
    fi
    FEED=$K2 "$DWLOAD" run "$jk" >/dev/null 2>&1
    [ "$(tdump kt id)|$(ktype)" = "$KAFTER|$KWIDE" ] || bad="$bad; $p: the next run's table differs"
  done
  is "$bad" "" "killed at each point: the table as before (a wider column on MariaDB) or as committed; the next run completes it"
  is "$([ "$kills" -gt 0 ] && echo some)" some "killed: points were reached before the run's end ($kills of 5)"
  echo "# killed around the widening: $kills kills, $wider of them left the rows as before with a wider column"
fi

done_testing
