# columns: through the real binary: the Databricks AUTO CDC SCD type 2
# example (the op and sequence columns drive the engine and stay out of
# the table), rename, include, and the errors, each naming the job file's
# line and column of the entry.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# ---- the Databricks example: exclude the op and sequence columns ----------
# Databricks' cdc_data.users with `COLUMNS * EXCEPT (operation, sequenceNum)`
# and STORED AS SCD TYPE 2; sequenceNum n is the day 2024-01-0n here.
csv=$(file users.csv <<'EOF'
userId,name,city,operation,sequenceNum
124,Raul,Oaxaca,INSERT,2024-01-01 00:00:00
123,Isabel,Monterrey,INSERT,2024-01-01 00:00:00
125,Mercedes,Tijuana,INSERT,2024-01-02 00:00:00
126,Lily,Cancun,INSERT,2024-01-02 00:00:00
123,,,DELETE,2024-01-06 00:00:00
125,Mercedes,Guadalajara,UPDATE,2024-01-06 00:00:00
125,Mercedes,Mexicali,UPDATE,2024-01-05 00:00:00
123,Isabel,Chihuahua,UPDATE,2024-01-05 00:00:00
EOF
)
# cdc_job [LOAD-LINE]: the job, with one more load key when given
cdc_job() {
  mkjob cdc "$csv" users <<EOF
columns:
  exclude: [operation, sequenceNum]
load:
  mode: scd2
  key: [userId]
  lmd: sequenceNum
  deletes: {column: operation, values: [DELETE]}
${1:-}
dimension:
  surrogate_key: null
  current: null
  deleted: null
  valid_from: start_at
  valid_to: end_at
EOF
}
j=$(cdc_job)
dw plan --sql "$j"
is "$RC" 0 "exclude: plan --sql: exit 0"
like "$OUT" "CREATE TABLE" "exclude: plan --sql shows the table it would create"
unlike "$OUT" "sequenceNum" "exclude: plan creates no sequence column"
unlike "$OUT" '"operation"' "exclude: plan creates no op column"
dw check --connect "$j"
like "$OUT" "the table's 3: userId, name, city" "exclude: check names the table's columns"
run_ok "$j" "exclude: the Databricks example loads"
is "$(wh_columns users | tr '\n' ' ')" "userId name city start_at end_at " \
  "exclude: the table has neither the op nor the sequence column"
is "$(tdump users '1, 4')" \
"123|Isabel|Monterrey|2024-01-01 00:00:00|2024-01-05 00:00:00
123|Isabel|Chihuahua|2024-01-05 00:00:00|2024-01-06 00:00:00
124|Raul|Oaxaca|2024-01-01 00:00:00|<null>
125|Mercedes|Tijuana|2024-01-02 00:00:00|2024-01-05 00:00:00
125|Mercedes|Mexicali|2024-01-05 00:00:00|2024-01-06 00:00:00
125|Mercedes|Guadalajara|2024-01-06 00:00:00|<null>
126|Lily|Cancun|2024-01-02 00:00:00|<null>" \
  "exclude: the whole table is Databricks' SCD type 2 result"
dw state "$j"
like "$OUT" "2024-01-06 00:00:00" "exclude: the checkpoint is the greatest sequence, though it is not in the table"
# A second delivery: a change and a delete again by the excluded columns.
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
124,Raul,Puebla,UPDATE,2024-01-07 00:00:00
126,Lily,Cancun,DELETE,2024-01-07 00:00:00
EOF
run_ok "$j" "exclude: a second delivery"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=1 unchanged=0" \
  "exclude: a change and a delete by the op column, against stored versions"
is "$(tdump users '1, 4')" \
"123|Isabel|Monterrey|2024-01-01 00:00:00|2024-01-05 00:00:00
123|Isabel|Chihuahua|2024-01-05 00:00:00|2024-01-06 00:00:00
124|Raul|Oaxaca|2024-01-01 00:00:00|2024-01-07 00:00:00
124|Raul|Puebla|2024-01-07 00:00:00|<null>
125|Mercedes|Tijuana|2024-01-02 00:00:00|2024-01-05 00:00:00
125|Mercedes|Mexicali|2024-01-05 00:00:00|2024-01-06 00:00:00
125|Mercedes|Guadalajara|2024-01-06 00:00:00|<null>
126|Lily|Cancun|2024-01-02 00:00:00|2024-01-07 00:00:00" "exclude: the whole table after the second delivery"

# A late row: dated inside the stored history, whose sequence column the
# table does not hold; the history is rebuilt from valid_from.
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
125,Mercedes,Ensenada,UPDATE,2024-01-03 00:00:00
EOF
j=$(cdc_job "  lookback: 7d")
run_ok "$j" "exclude: a late row"
is "$(tdump users '1, 4' | grep '^125')" \
"125|Mercedes|Tijuana|2024-01-02 00:00:00|2024-01-03 00:00:00
125|Mercedes|Ensenada|2024-01-03 00:00:00|2024-01-05 00:00:00
125|Mercedes|Mexicali|2024-01-05 00:00:00|2024-01-06 00:00:00
125|Mercedes|Guadalajara|2024-01-06 00:00:00|<null>" "exclude: the late row repairs the key's history"

# ---- upsert: the op and lmd columns excluded --------------------------------
csv=$(file acct.csv <<'EOF'
id,balance,op,ts
1,10,U,2024-01-01 00:00:00
2,20,U,2024-01-01 00:00:00
3,30,U,2024-01-01 00:00:00
EOF
)
j=$(mkjob ups "$csv" acct <<'EOF'
columns:
  exclude: [op, ts]
load:
  mode: upsert
  key: [id]
  lmd: ts
  deletes: {column: op, values: [D]}
EOF
)
run_ok "$j" "upsert, exclude: first load"
file acct.csv >/dev/null <<'EOF'
id,balance,op,ts
1,10,U,2024-01-02 00:00:00
2,25,U,2024-01-02 00:00:00
3,30,D,2024-01-02 00:00:00
EOF
run_ok "$j" "upsert, exclude: second load"
is "$(counts)" "read=3 skipped=0 inserted=0 expired=0 updated=1 deleted=1 unchanged=1" \
  "upsert, exclude: an unchanged row is unchanged though its lmd is not stored; the op column deletes"
is "$(tdump acct)" "1|10
2|25" "upsert, exclude: the whole table"

# ---- a bad row of an excluded lmd column is set aside as the source gave it
csv=$(file bad.csv <<'EOF'
id,name,op,ts
1,Ann,U,2024-01-01 00:00:00
2,Bob,U,notatime
3,Cy,U,2024-01-01 00:00:00,extra
EOF
)
j=$(mkjob rej "$csv" rej <<'EOF'
columns:
  exclude: [op, ts]
load:
  mode: upsert
  key: [id]
  lmd: ts
  max_rejects: 2
  reject_file: rej.rejects.csv
EOF
)
run_ok "$j" "rejects: a bad lmd in an excluded column"
is "$(field rejected)" 2 "rejects: the row with the bad lmd and the row with a field too many are set aside"
is "$(tdump rej)" "1|Ann" "rejects: the good row loaded"
like "$(cat "$WORK/rej.rejects.csv")" "2,Bob,U,notatime" "rejects: the reject file holds the source's row, excluded columns and all"

# ---- rename, with include ---------------------------------------------------
csv=$(file people.csv <<'EOF'
id,fullName,city,junk,lmd
1,Ann,Oslo,x,2024-01-01 00:00:00
2,Bob,Rome,y,2024-01-01 00:00:00
EOF
)
j=$(mkjob ren "$csv" people <<'EOF'
columns:
  include: [id, fullName, city, lmd]
  rename: {fullName: full_name, lmd: changed_at}
load:
  mode: scd2
  key: [id]
  type1: [full_name]
  lmd: changed_at
EOF
)
run_ok "$j" "rename: first load"
is "$(wh_columns people | tr '\n' ' ')" "dim_id id full_name city changed_at valid_from valid_to is_current is_deleted " \
  "rename, include: the table has the new names, the columns included only"
file people.csv >/dev/null <<'EOF'
id,fullName,city,junk,lmd
1,Anne,Oslo,z,2024-01-02 00:00:00
2,Bob,Milan,y,2024-01-02 00:00:00
EOF
run_ok "$j" "rename: second load"
is "$(sqln 'select id, full_name, city, changed_at, is_current from people order by id, valid_from')" \
"1|Anne|Oslo|2024-01-01 00:00:00|1
2|Bob|Rome|2024-01-01 00:00:00|0
2|Bob|Milan|2024-01-02 00:00:00|1" "rename: type 1 (in place) and type 2 by the new names"
dw check --connect "$j"
like "$OUT" "the table's 4: id, full_name, city, changed_at" "rename: check names the table's columns"

# ---- the odbc plugin: rename the lmd column --------------------------------
# The plugin is told the lmd column's source name: its checkpoint goes
# into the query it sends, which a table's name of the column would fail.
odbc_source
case $WAREHOUSE in
  sqlite) TS=TIMESTAMP ;;
  postgresql) TS="TIMESTAMP(6)" ;;
  mariadb) TS="DATETIME(6)" ;;
esac
sql "CREATE TABLE osrc (id INTEGER NOT NULL PRIMARY KEY, nm VARCHAR(20), changed $TS, extra VARCHAR(20))" "$SRC" ||
  echo "Bail out! cannot create the source table"
sql "INSERT INTO osrc VALUES (1, 'a', '2024-01-01 10:00:00', 'x'), (2, 'b', '2024-01-02 10:00:00', 'y')" "$SRC"
oj=$(job odbccols <<EOF
version: 1
job: odbccols
source:
  plugin: odbc
  connection: "$SRC_CONN"
  table: osrc
target:
  connection: "$WH_CONN"
  table: ocopy
columns:
  exclude: [extra]
  rename: {nm: name, changed: changed_at}
load:
  mode: append
  lmd: changed_at
EOF
)
run_ok "$oj" "odbc: first run"
sql "INSERT INTO osrc VALUES (3, 'c', '2024-01-03 10:00:00', 'z')" "$SRC"
run_ok "$oj" "odbc: second run"
is "$(field read) $(field inserted)" "1 1" "odbc: the checkpoint reached the source's query by the source name"
is "$(wh_columns ocopy | tr '\n' ' ')" "id name changed_at " "odbc: the table has the new names, not the excluded column"
is "$(tdump ocopy 1)" "1|a|2024-01-01 10:00:00
2|b|2024-01-02 10:00:00
3|c|2024-01-03 10:00:00" "odbc: the whole table"

# ---- errors: each names its entry --------------------------------------------
# bad NAME COLUMNS-BLOCK LOAD-BLOCK: a job on people.csv, run; sets RC/ERR
bad() {
  _bj=$(mkjob "$1" "$csv" "bad_$1" <<EOF
$2
load:
$3
EOF
)
  dw run "$_bj"
}
bad unknown "columns:
  exclude: [junk, nosuch]" "  mode: append"
is "$RC" 2 "unknown column: exit 2"
like "$ERR" "unknown.yaml:10:19: columns.exclude: column 'nosuch' is not in the source (the source's columns: id, fullName, city, junk, lmd)" \
  "unknown column: the entry's line and column, and the source's columns"
bad unknown_ren "columns:
  rename: {nosuch: x}" "  mode: append"
is "$RC" 2 "unknown renamed column: exit 2"
like "$ERR" "unknown_ren.yaml:10:12: columns.rename: column 'nosuch' is not in the source" "unknown renamed column: its position"
bad clash "columns:
  rename: {fullName: city}" "  mode: append"
is "$RC" 2 "new name of a kept column: exit 2"
like "$ERR" "clash.yaml:10:12: columns.rename: the new name 'city' of column 'fullName' is the name of source column 'city', which is kept" \
  "new name of a kept column: named"
bad twice "columns:
  rename: {fullName: name, city: name}" "  mode: append"
is "$RC" 2 "two columns to one name: exit 2"
like "$ERR" "twice.yaml:10:34: columns.rename.city: 'name' is already the new name of 'fullName'" "two columns to one name: the second"
bad keyout "columns:
  exclude: [id]" "  mode: scd2
  key: [id]
  lmd: lmd"
is "$RC" 2 "excluded key: exit 2"
like "$ERR" "keyout.yaml:13:3: load.key: column 'id' is in columns.exclude, but load.key names columns of the table" \
  "excluded key: the key's position"
bad both "columns:
  include: [id]
  exclude: [junk]" "  mode: append"
is "$RC" 2 "include and exclude: exit 2"
like "$ERR" "both.yaml:11:3: columns.exclude: give columns.include or columns.exclude, not both" "include and exclude: the later"
bad oldname "columns:
  rename: {id: person_id}" "  mode: upsert
  key: [id]"
is "$RC" 2 "a key by its old name: exit 2"
like "$ERR" "load.key: column 'id' is renamed to 'person_id' by columns.rename; load.key names it 'person_id'" \
  "a key by its old name: the new name given"
for t in bad_unknown bad_unknown_ren bad_clash bad_keyout; do
  is "$(table_exists "$t")" 0 "$t: no table created"
done

done_testing
