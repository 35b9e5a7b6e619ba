# Schema evolution (the job's schema: section, src/write/schema.c): a
# source that stops delivering a column of the target table.  By default
# the run fails naming the column and the source, and writes nothing (not
# even the checkpoint); plan says the same; schema.missing_columns: null
# loads on, new versions holding NULL there.  Whole tables are compared.
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

# a column the table has not: the run fails naming it and the source
F4=$(file f4.csv <<'EOF'
id,name,city,email,lmd
1,Ann,Oslo,ann@example.org,2024-02-01
EOF
)
FEED=$F4 dw run "$j"
is "$RC" 4 "a new source column: exit 4"
like "$ERR" "table dim exists but has no column 'email', which the source (f4.csv) delivers" \
  "the message names the column and the source"
is "$(dump dim)" "$FIRST" "a new source column: the table is unchanged"
FEED=$F4 dw check --connect "$j"
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

done_testing
