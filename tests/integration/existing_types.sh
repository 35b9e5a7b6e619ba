# A table the user created, with typed columns (an integer key, integer,
# numeric and timestamp values), loaded from a CSV without source.types:
# every value arrives as text.  The staged writes (PostgreSQL, MariaDB:
# expires, type 1 overwrites and upsert updates go through stage tables)
# join the stage's key to the table's and set the table's columns from
# the stage's, so a stage column must have the table's kind, not the
# source's text: PostgreSQL refuses `integer = text`.  Through the real
# binary, on both engines, the whole table asserted after each run.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# Text in dwload's own collation on MariaDB: this script is about kinds
# (user_collation.sh is about a table's other collations).
TXT="VARCHAR(20)"
if is_warehouse mariadb; then TXT="VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"; fi

printf 'id,name,n,amount,ts\n1,a,5,1.50,2024-01-01\n2,b,6,2.25,2024-01-01\n' >"$WORK/d1.csv"
printf 'id,name,n,amount,ts\n1,a,7,1.75,2024-01-02\n3,c,8,3.00,2024-01-02\n' >"$WORK/d2.csv"

# ---- upsert: an update of key 1 and a new key 3 ---------------------------
sql "CREATE TABLE up_typed (id INTEGER PRIMARY KEY, name $TXT, n INTEGER, amount NUMERIC(8,2), ts TIMESTAMP)" >/dev/null
j=$(mkjob up "$WORK/d1.csv" up_typed <<EOT
load:
  mode: upsert
  key: [id]
  lmd: ts
EOT
)
run_ok "$j" "upsert: first load into the user's table"
sed -i "s|$WORK/d1.csv|$WORK/d2.csv|" "$j"
run_ok "$j" "upsert: an update of an integer key from untyped text"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=0 updated=1 deleted=0 unchanged=0" "upsert: counts"
is "$(sql "SELECT id, name, n, CAST(amount * 100 AS INTEGER) FROM up_typed ORDER BY id" | paste -sd' ' -)" \
  "1|a|7|175 2|b|6|225 3|c|8|300" "upsert: the whole table, key 1 updated in place"

# ---- scd2: key 1 expires and a new version opens ---------------------------
sql "CREATE TABLE scd_typed (id INTEGER, name $TXT, n INTEGER, amount NUMERIC(8,2), ts TIMESTAMP,
  valid_from TIMESTAMP, valid_to TIMESTAMP)" >/dev/null
j=$(mkjob scd "$WORK/d1.csv" scd_typed <<EOT
load:
  mode: scd2
  key: [id]
  lmd: ts
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOT
)
run_ok "$j" "scd2: first load into the user's table"
sed -i "s|$WORK/d1.csv|$WORK/d2.csv|" "$j"
run_ok "$j" "scd2: a change of an integer key from untyped text"
is "$(counts)" "read=2 skipped=0 inserted=2 expired=1 updated=0 deleted=0 unchanged=0" "scd2: counts"
is "$(sql "SELECT id, n, CAST(amount * 100 AS INTEGER), CASE WHEN valid_to IS NULL THEN 'open' ELSE 'closed' END FROM scd_typed ORDER BY id, n" |
      paste -sd' ' -)" \
  "1|5|150|closed 1|7|175|open 2|6|225|open 3|8|300|open" "scd2: the whole history, key 1's first version expired"

done_testing
