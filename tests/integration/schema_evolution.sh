# Schema evolution (the job's schema: section, src/write/schema.c): a
# source that stops delivering a column of the target table.  By default
# the run fails naming the column and the source, and writes nothing (not
# even the checkpoint); plan says the same; schema.missing_columns: null
# loads on, new versions holding NULL there; schema.missing_columns: keep
# loads on, new versions keeping the current version's value (the keep
# section).  A source column the table
# has not: schema.new_columns: add (the default) adds it and fills current
# versions in place (no version for its appearance alone; type 2 after),
# fail refuses the run; plan --sql prints the ALTER TABLE; a failed or
# killed run leaves no column (MariaDB: a marked NULL one the next run
# fills).  Whole tables are compared.
. "$TOP_SRCDIR/tests/integration/lib.sh"

F1=$(file f1.csv <<'EOF'
id,name,city,lmd
1,Ann,Oslo,2024-01-01
2,Bob,Rome,2024-01-01
EOF
)
# name is gone; key 1 moved, key 2 is as it was
F2=$(file f2.csv <<'EOF'
id,city,lmd
1,Bergen,2024-02-01
2,Rome,2024-02-01
EOF
)
export F1 F2

# sjob NAME TABLE MODE [SCHEMA-LINES]: a job of ${FEED} into TABLE
sjob() {
  mkjob "$1" '${FEED}' "$2" '  types: {id: integer}' <<EOF
load:
  mode: $3
  key: id
  lmd: lmd
${4:-}
EOF
}

ORDER="id, valid_from"
DIM_COLS="dim_id, id, name, city, lmd, valid_from, valid_to, is_current, is_deleted"
dump() {
  sqln "SELECT $DIM_COLS FROM $1 ORDER BY $ORDER"
}
checkpoint() {
  sql "SELECT checkpoint FROM dwload_state WHERE job = '$1'"
}

# ---- default: fail ------------------------------------------------------------
j=$(sjob dflt dim scd2)
FEED=$F1 dw run "$j"
is "$RC" 0 "first load: exit 0"
FIRST="1|1|Ann|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
2|2|Bob|Rome|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0"
is "$(dump dim)" "$FIRST" "first load: the whole table"

FEED=$F2 dw run "$j"
is "$RC" 4 "a column the source no longer delivers: exit 4"
like "$ERR" "table dim has column 'name', which the source (f2.csv) does not deliver" \
  "the message names the table, the column and the source"
like "$ERR" "schema.missing_columns: null" "the message names the way out"
like "$ERR" "rolled back: nothing was written" "the run says it wrote nothing"
is "$(field status)" failed "the summary says failed"
is "$(field inserted)" 0 "the summary counts no insert"
is "$(dump dim)" "$FIRST" "the table is as the first load left it"
is "$(checkpoint dflt)" "2024-01-01 00:00:00" "the checkpoint stays"

FEED=$F2 dw plan "$j"
is "$RC" 4 "plan: exit 4 too"
like "$ERR" "table dim has column 'name', which the source (f2.csv) does not deliver" "plan: the same message"

# two missing columns are named together
F3=$(file f3.csv <<'EOF'
id,lmd
1,2024-03-01
EOF
)
FEED=$F3 dw run "$j"
is "$RC" 4 "two missing columns: exit 4"
like "$ERR" "table dim has columns 'name', 'city', which the source (f3.csv) does not deliver" \
  "both columns are named"

# dwload check finds it too, without a run
FEED=$F2 dw check --connect "$j"
is "$RC" 4 "check: exit 4"
like "$OUT$ERR" "table dim has column 'name', which the source (f2.csv) does not deliver" "check: the same message"

# a column the table has not, with schema.new_columns: fail: the run fails
# naming it and the source (the same table, a job of its own)
F4=$(file f4.csv <<'EOF'
id,name,city,email,lmd
1,Ann,Oslo,ann@example.org,2024-02-01
EOF
)
jf=$(sjob dfail dim scd2 'schema:
  new_columns: fail')
FEED=$F4 dw run "$jf"
is "$RC" 4 "a new source column, new_columns: fail: exit 4"
like "$ERR" "table dim exists but has no column 'email', which the source (f4.csv) delivers" \
  "the message names the column and the source"
like "$ERR" "schema.new_columns: add" "the message names the way out"
is "$(dump dim)" "$FIRST" "a new source column: the table is unchanged"
is "$(cols dim)" "$(echo "$DIM_COLS" | tr -d ' ')" "new_columns: fail: the table has no new column"
FEED=$F4 dw check --connect "$jf"
like "$OUT$ERR" "has no column 'email', which the source (f4.csv) delivers" "check: the same message"

# ---- null: load on, new versions hold NULL ------------------------------------
j=$(sjob nul dimn scd2 'schema:
  missing_columns: null')
FEED=$F1 dw run "$j"
is "$RC" 0 "null: first load: exit 0"
FEED=$F2 dw run "$j"
is "$RC" 0 "null: a missing column: exit 0"
like "$ERR" "warn: table dimn has column 'name', which the source (f2.csv) does not deliver: new versions hold NULL there" \
  "null: the run warns, naming the column"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" \
  "null: only the key that changed has a new version"
is "$(dump dimn)" \
"1|1|Ann|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
3|1|<null>|Bergen|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0
2|2|Bob|Rome|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0" \
  "null: the whole table: the new version holds NULL, the old ones their names"
is "$(checkpoint nul)" "2024-02-01 00:00:00" "null: the checkpoint moves"

# ---- upsert: the same default -------------------------------------------------
j=$(sjob ups upt upsert)
FEED=$F1 dw run "$j"
is "$RC" 0 "upsert: first load: exit 0"
FEED=$F2 dw run "$j"
is "$RC" 4 "upsert: a missing column: exit 4"
like "$ERR" "table upt has column 'name', which the source (f2.csv) does not deliver; loading on would give new rows NULL" \
  "upsert: the message speaks of rows"
is "$(sqln "SELECT id, name, city, lmd FROM upt ORDER BY id")" \
"1|Ann|Oslo|2024-01-01 00:00:00
2|Bob|Rome|2024-01-01 00:00:00" "upsert: the table is unchanged"

# ---- plan --sql: the DDL a run would execute ----------------------------------
j=$(sjob fresh fresh scd2)
FEED=$F1 dw plan --sql "$j"
is "$RC" 0 "plan --sql on a fresh target: exit 0"
ddl=$(printf '%s\n' "$OUT" | grep '^CREATE ')
like "$ddl" "$(sqltext 'CREATE TABLE "fresh" ("dim_id" ')" "plan --sql prints the CREATE TABLE"
like "$ddl" "$(sqltext '"fresh_dwl_key"')" "plan --sql prints the key index"
like "$OUT" "$(sqltext 'INSERT INTO "fresh"')" "plan --sql prints the inserts after it"
is "$(table_exists fresh)" 0 "plan creates nothing"
# the printed DDL, run by the warehouse's own client, makes the table the run loads
printf '%s\n' "$ddl" | while IFS= read -r stmt; do sql "$stmt" >/dev/null; done
is "$(table_exists fresh)" 1 "the printed DDL creates the table"
FEED=$F1 dw run "$j"
is "$RC" 0 "a run loads the table the printed DDL made"
is "$(dump fresh)" "$FIRST" "the whole table, as a run that created it would have it"
FEED=$F1 dw plan --sql "$j"
unlike "$OUT" "CREATE " "plan --sql on an existing table prints no DDL"

# ---- keep: new versions carry the current version's value --------------------
# (issue 16) name is gone again: key 1 moves, key 2 is as it was, key 3 is
# new; then key 1 moves once more.  Compared without dim_id, which the
# engines number in their own order.
F5=$(file f5.csv <<'EOF'
id,city,lmd
1,Bergen,2024-02-01
2,Rome,2024-02-01
3,Paris,2024-02-01
EOF
)
F6=$(file f6.csv <<'EOF'
id,city,lmd
1,Tromso,2024-03-01
EOF
)
KEEP_COLS="id, name, city, lmd, valid_from, valid_to, is_current, is_deleted"
j=$(sjob kept dimk scd2 'schema:
  missing_columns: keep')
FEED=$F1 dw run "$j"
is "$RC" 0 "keep: first load: exit 0"
FEED=$F5 dw run "$j"
is "$RC" 0 "keep: a missing column: exit 0"
like "$ERR" "table dimk has column 'name', which the source (f5.csv) does not deliver: new versions keep the current version's values" \
  "keep: the log says what the run does with the column"
is "$(counts)" "read=3 skipped=0 inserted=2 expired=1 updated=0 deleted=0 unchanged=1" \
  "keep: the missing column is no change: key 2 opens no version"
is "$(sqln "SELECT $KEEP_COLS FROM dimk ORDER BY $ORDER")" \
"1|Ann|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
1|Ann|Bergen|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0
2|Bob|Rome|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
3|<null>|Paris|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0" \
  "keep: the whole table: key 1's new version keeps Ann, new key 3 has NULL"
FEED=$F6 dw run "$j"
is "$RC|$(counts)" "0|read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" \
  "keep: the next run: one new version"
is "$(sqln "SELECT $KEEP_COLS FROM dimk WHERE id = 1 ORDER BY $ORDER")" \
"1|Ann|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
1|Ann|Bergen|2024-02-01 00:00:00|2024-02-01 00:00:00|2024-03-01 00:00:00|0|0
1|Ann|Tromso|2024-03-01 00:00:00|2024-03-01 00:00:00|<null>|1|0" \
  "keep: a kept value is kept again: key 1's history"
is "$(checkpoint kept)" "2024-03-01 00:00:00" "keep: the checkpoint moves"

# upsert: the row keeps its value, a new key's row has NULL
j=$(sjob upk upk upsert 'schema:
  missing_columns: keep')
FEED=$F1 dw run "$j"
is "$RC" 0 "keep, upsert: first load: exit 0"
FEED=$F5 dw run "$j"
is "$RC" 0 "keep, upsert: a missing column: exit 0"
is "$(sqln "SELECT id, name, city, lmd FROM upk ORDER BY id")" \
"1|Ann|Bergen|2024-02-01 00:00:00
2|Bob|Rome|2024-02-01 00:00:00
3|<null>|Paris|2024-02-01 00:00:00" "keep, upsert: the whole table: rows keep their names, the new key has NULL"

# ---- new_columns: add (the default): a new source column ----------------------
# The run adds it (ALTER TABLE) and, in that run, the current versions take
# its values in place: a key gets no version for the column's appearance
# alone (dbt's check strategy would give every key one); a key that changed
# otherwise opens its version with the value; closed versions hold NULL.
# Later runs track the column as type 2 (it is not listed as type 1).
G1=$(file g1.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01
2,Bob,2024-01-01
3,Cid,2024-01-01
EOF
)
# email appears: 1 and 3 are otherwise as they were (3 has no email), 2 has
# a new name, 4 is new
G2=$(file g2.csv <<'EOF'
id,name,email,lmd
1,Ann,ann@x,2024-02-01
2,Bobby,bob@x,2024-02-01
3,Cid,,2024-02-01
4,Dan,dan@x,2024-02-01
EOF
)
# only key 1's email changes; 4 is as it was
G3=$(file g3.csv <<'EOF'
id,name,email,lmd
1,Ann,ann@y,2024-03-01
4,Dan,dan@x,2024-03-01
EOF
)
export G1 G2 G3
XCOLS="dim_id, id, name, email, lmd, valid_from, valid_to, is_current"
xdump() {
  sqln "SELECT $XCOLS FROM $1 ORDER BY $ORDER"
}
BASE_COLS="dim_id,id,name,lmd,valid_from,valid_to,is_current,is_deleted"
AFTER2="1|1|Ann|ann@x|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1
2|2|Bob|<null>|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0
4|2|Bobby|bob@x|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1
3|3|Cid|<null>|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1
5|4|Dan|dan@x|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1"

j=$(sjob grow dimx scd2)
FEED=$G1 dw run "$j"
is "$RC" 0 "add: first load: exit 0"

# plan --sql prints the ALTER TABLE and the changes, and adds nothing
FEED=$G2 dw plan --sql "$j"
is "$RC" 0 "add: plan --sql: exit 0"
like "$OUT" "$(sqltext 'ALTER TABLE "dimx" ADD COLUMN "email" ')" "add: plan --sql prints the ALTER TABLE"
is "$(printf '%s\n' "$OUT" | grep -c '^ALTER TABLE')" 1 "add: plan --sql prints one ALTER TABLE"
is "$(counts)" "read=4 skipped=0 inserted=2 expired=1 updated=1 deleted=0 unchanged=1" \
  "add: plan counts what the run will do"
is "$(cols dimx)" "$BASE_COLS" "add: plan adds no column"

FEED=$G2 dw run "$j"
is "$RC" 0 "add: a new source column: exit 0"
like "$ERR" "added column email to table dimx (schema.new_columns: add)" "add: the run says it added the column"
is "$(counts)" "read=4 skipped=0 inserted=2 expired=1 updated=1 deleted=0 unchanged=1" \
  "add: one in-place update (key 1), one new version for the changed key, one for the new key"
is "$(cols dimx)" "$BASE_COLS,email" "add: the table has the column"
is "$(xdump dimx)" "$AFTER2" \
  "add: the whole table: current versions hold the values, the closed one NULL, no version for keys 1 and 3"
is "$(sql "SELECT count(*) FROM dimx WHERE id IN (1, 3)")" 2 "add: the unchanged keys have one version each"
is "$(checkpoint grow)" "2024-02-01 00:00:00" "add: the checkpoint moves"

# the next run: the column is type 2 now, and only a change opens a version
FEED=$G3 dw run "$j"
is "$RC" 0 "add: the run after: exit 0"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" \
  "add: the run after: a changed email opens a version, the unchanged key is unchanged"
is "$(xdump dimx)" "1|1|Ann|ann@x|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-03-01 00:00:00|0
6|1|Ann|ann@y|2024-03-01 00:00:00|2024-03-01 00:00:00|<null>|1
2|2|Bob|<null>|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0
4|2|Bobby|bob@x|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1
3|3|Cid|<null>|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1
5|4|Dan|dan@x|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1" \
  "add: the run after: the whole table"

# left_column TABLE WHAT: after a run that failed past its ALTER TABLE:
# no column (rolled back with the run), or on MariaDB, whose DDL commits by
# itself, the column with NULL in every row; the rows as the first load
# left them
left_column() {
  if is_warehouse mariadb; then
    is "$(cols "$1")" "$BASE_COLS,email" "$2: MariaDB keeps the column"
    is "$(sql "SELECT count(*) FROM $1 WHERE email IS NOT NULL")" 0 "$2: MariaDB: NULL in every row"
  else
    is "$(cols "$1")" "$BASE_COLS" "$2: no column"
  fi
  is "$(sql "SELECT count(*) FROM $1")" 3 "$2: the rows are as the first load left them"
}

# A run that fails after its ALTER TABLE (two rows of key 1 at one instant
# disagree): SQLite and PostgreSQL roll the column back with the rest;
# MariaDB's DDL commits by itself, so the column stays there, NULL in every
# row.  Either way the next run gives the table the first one would have.
G2BAD=$(file g2bad.csv <<'EOF'
id,name,email,lmd
1,Ann,ann@x,2024-02-01
1,Ann,ann@z,2024-02-01
EOF
)
export G2BAD
jb=$(sjob growf dimf scd2)
FEED=$G1 dw run "$jb"
is "$RC" 0 "add, failed run: first load: exit 0"
FEED=$G2BAD dw run "$jb"
is "$RC" 1 "add, failed run: the run fails: exit 1"
like "$ERR" "key (id='1')" "add, failed run: the message names the key"
like "$ERR" "rolled back: nothing was written" "add, failed run: the run says it wrote nothing"
left_column dimf "add, failed run"
is "$(checkpoint growf)" "2024-01-01 00:00:00" "add, failed run: the checkpoint stays"
FEED=$G2 dw run "$jb"
is "$RC" 0 "add, the run after the failed one: exit 0"
is "$(counts)" "read=4 skipped=0 inserted=2 expired=1 updated=1 deleted=0 unchanged=1" \
  "add, the run after the failed one: the counts of a first appearance"
is "$(xdump dimf)" "$AFTER2" "add, the run after the failed one: the whole table, as without the failure"

if is_warehouse mariadb; then
  is "$(sql "SELECT column_comment FROM information_schema.columns WHERE table_schema = database()
             AND table_name = 'dimf' AND column_name = 'email'")" "" \
    "add, the run after the failed one: MariaDB: the column is no longer marked as not filled"
fi
FEED=$G3 dw run "$jb"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" \
  "add, after the failed run: the column is type 2 from then on"

# A run killed after its ALTER TABLE, while it reads the feed (killat.py
# watches its read position: the ALTER TABLE came before the first row):
# the same, without a chance to roll back on MariaDB.
GK="$WORK/gk.csv"
{ echo "id,name,email,lmd"; cat <<'EOF'
1,Ann,ann@x,2024-02-01
2,Bobby,bob@x,2024-02-01
3,Cid,,2024-02-01
EOF
  awk 'BEGIN { for (i = 4; i <= 3000; i++) printf "%d,name %d,e%d@x,2024-02-01\n", i, i, i }'; } >"$GK"
export GK
jk=$(sjob growk dimgk scd2)
FEED=$G1 dw run "$jk"
is "$RC" 0 "add, killed run: first load: exit 0"
FEED=$GK python3 "$TOP_SRCDIR/tests/integration/killat.py" read:0.5 "$GK" -- "$DWLOAD" run "$jk" >"$WORK/killat.out" 2>&1
like "$(cat "$WORK/killat.out")" "killed at read:0.5" "add, killed run: killed while reading the feed"
left_column dimgk "add, killed run"
FEED=$GK dw run "$jk"
is "$RC" 0 "add, the run after the killed one: exit 0"
is "$(counts)" "read=3000 skipped=0 inserted=2998 expired=1 updated=1 deleted=0 unchanged=1" \
  "add, the run after the killed one: the counts of a first appearance"
is "$(xdump dimgk | head -n 4)" "$(printf '%s\n' "$AFTER2" | head -n 4)" \
  "add, the run after the killed one: keys 1 to 3 as without the kill"
is "$(sql "SELECT count(*) FROM dimgk WHERE valid_to IS NULL AND email IS NOT NULL")" 2999 \
  "add, the run after the killed one: every current version with an email holds it"

# upsert: the rows take the new column's values (an update each: no history)
ju=$(sjob growu dimu upsert)
FEED=$G1 dw run "$ju"
is "$RC" 0 "add, upsert: first load: exit 0"
FEED=$G2 dw run "$ju"
is "$RC" 0 "add, upsert: a new source column: exit 0"
is "$(counts)" "read=4 skipped=0 inserted=1 expired=0 updated=3 deleted=0 unchanged=0" \
  "add, upsert: every delivered row is updated or inserted"
is "$(sqln "SELECT id, name, email, lmd FROM dimu ORDER BY id")" "1|Ann|ann@x|2024-02-01 00:00:00
2|Bobby|bob@x|2024-02-01 00:00:00
3|Cid|<null>|2024-02-01 00:00:00
4|Dan|dan@x|2024-02-01 00:00:00" "add, upsert: the whole table"

done_testing
