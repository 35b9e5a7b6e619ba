# Tables the user created, whose text columns have collations of their
# own (MariaDB: the database's default, a case-insensitive one, latin1),
# not the exact utf8mb4_nopad_bin dwload gives its own tables and stages.
# The stages take each table column's character set and collation
# (column_limits_sql), so the key joins of the memory engine's staged
# writes, deletes: absent, lookup: keys and pushdown's statements mix no
# collations, and change detection stays exact in both engines: a change of
# case or of trailing spaces is a change.  Each table is asserted whole
# against the same job's rows in a table dwload created.  SQLite and
# PostgreSQL run the variants their types allow, with the same assertions.
. "$TOP_SRCDIR/tests/integration/lib.sh"

case $WAREHOUSE in
mariadb) TS=DATETIME VT="DATETIME(6)" TEXT=CHAR ;;
*) TS=TIMESTAMP VT=TIMESTAMP TEXT="VARCHAR(40)" ;;
esac

# Variants: name|key type|the table's column declarations' suffix for text
# |table options.  On MariaDB: the database's default collation
# (utf8mb4_bin for the tests' databases), an explicit case-insensitive one
# on the key and the name, and a latin1 table (latin1_swedish_ci).
VARIANTS="int|INTEGER||
txt|VARCHAR(10)||"
if is_warehouse mariadb; then
  VARIANTS="$VARIANTS
ci|VARCHAR(10)| COLLATE utf8mb4_general_ci|
l1|VARCHAR(10)|| DEFAULT CHARSET=latin1"
fi

# the feeds: run 2 changes name's case ("Ada") and trailing space ("cy"),
# drops key 2 and brings key 4
F1=$(file f1.csv <<'EOF2'
id,name,n,ts
1,ada,1,2024-01-01 10:00:00
2,bob,2,2024-01-01 10:00:00
3,cy ,3,2024-01-01 10:00:00
EOF2
)
F2=$(file f2.csv <<'EOF2'
id,name,n,ts
1,Ada,1,2024-01-02 10:00:00
3,cy,3,2024-01-02 10:00:00
4,zoé,4,2024-01-02 10:00:00
EOF2
)

# ddl TABLE KEYTYPE COLL OPTS MODE: the user's table for MODE
ddl() {
  if [ "$5" = upsert ]; then
    sql "CREATE TABLE $1 (id $2$3 PRIMARY KEY, name VARCHAR(20)$3, n INTEGER, ts $TS)$4"
  else
    sql "CREATE TABLE $1 (dim_id BIGINT, id $2$3 NOT NULL, name VARCHAR(20)$3, n INTEGER, ts $TS,
         valid_from $VT, valid_to $VT, is_current BOOLEAN, is_deleted BOOLEAN)$4"
    sql "CREATE INDEX ${1}_k ON $1 (id)"
  fi
}

# jobfile NAME TABLE KEYTYPE LOAD: the job of the feed $FEED into TABLE
jobfile() {
  case $3 in INTEGER) ty="{id: integer, n: integer}" ;; *) ty="{n: integer}" ;; esac
  mkjob "$1" '${FEED}' "$2" "  types: $ty" <<EOF2
load:
$4
EOF2
}

# dump TABLE MODE: the whole table; a version deletes: absent closed ends
# at its run's clock, which differs between two runs: shown as "run"
dump() {
  if [ "$2" = upsert ]; then
    tdump "$1" "id, ts"
  else
    sqln "SELECT dim_id, id, name, n, ts, valid_from, CASE WHEN valid_to > '2025-01-01' THEN 'run' ELSE
          CAST(valid_to AS $TEXT) END, is_current, is_deleted FROM $1 ORDER BY id, ts"
  fi
}

# collation TABLE COLUMN: the column's collation (MariaDB)
collation() {
  sql "SELECT collation_name FROM information_schema.columns WHERE table_schema = DATABASE()
       AND table_name = '$1' AND column_name = '$2'"
}

# The loads: upsert with deletes: absent (memory: the staged updates and
# removals; pushdown: its absent path), scd2 (the memory engine's staged
# expires; pushdown: change detection alone decides, the lmd is not
# tracked), and for the memory engine only (pushdown takes neither) scd2
# with deletes: absent and with lookup: keys (the keys' stage joined).
LOADS="up|  mode: upsert
  key: [id]
  lmd: ts
  deletes: absent
scd|  mode: scd2
  key: [id]
  lmd: ts
sca|  mode: scd2
  key: [id]
  lmd: ts
  deletes: absent
lk|  mode: scd2
  key: [id]
  lmd: ts
  lookup: keys"
LOADS_RUN="up scd sca lk"
[ -z "${DWL_ENGINE:-}" ] || LOADS_RUN="up scd"


for v in $(printf '%s\n' "$VARIANTS" | cut -d'|' -f1); do
  line=$(printf '%s\n' "$VARIANTS" | grep "^$v|")
  kt=$(printf '%s' "$line" | cut -d'|' -f2)
  coll=$(printf '%s' "$line" | cut -d'|' -f3)
  opts=$(printf '%s' "$line" | cut -d'|' -f4)
  for l in $LOADS_RUN; do
    load=$(printf '%s\n' "$LOADS" | awk -v l="$l" '/^[a-z]+\|/ { on = index($0, l "|") == 1; sub(/^[a-z]+\|/, "") } on')
    mode=upsert
    [ "$l" = up ] || mode=scd2
    u="u_${v}_$l"
    r="r_${v}_$l"
    ddl "$u" "$kt" "$coll" "$opts" "$mode"
    if is_warehouse mariadb && [ "$v" = ci ]; then
      is "$(collation "$u" id) $(collation "$u" name)" "utf8mb4_general_ci utf8mb4_general_ci" "$u: the key's and the name's collation"
    fi
    JU=$(jobfile "ju_$u" "$u" "$kt" "$load")
    JR=$(jobfile "jr_$u" "$r" "$kt" "$load")
    if [ -n "${DWL_ENGINE:-}" ]; then
      like "$(cat "$JU")" "engine: $DWL_ENGINE" "$u: the job runs on the $DWL_ENGINE engine"
    fi
    for f in "$F1" "$F2"; do
      n=${f##*/}
      FEED=$f dw run "$JU"
      is "$RC" 0 "$u, $n: exit 0"
      [ "$RC" = 0 ] || echo "# $ERR"
      ucounts=$(counts)
      FEED=$f dw run "$JR"
      is "$RC" 0 "$r (dwload's own table), $n: exit 0"
      is "$ucounts" "$(counts)" "$u, $n: the counts of dwload's table"
      is "$(cols "$u")" "$(cols "$r")" "$u: the columns of dwload's table"
      is "$(dump "$u" "$mode")" "$(dump "$r" "$mode")" "$u, $n: the whole table, as dwload's own"
    done
    # the case and the trailing space were changes, key 2 went, 4 came
    case $l in
    up) want="read=3 skipped=0 inserted=1 expired=0 updated=2 deleted=1 unchanged=0" ;;
    sca) want="read=3 skipped=0 inserted=3 expired=2 updated=0 deleted=1 unchanged=0" ;;
    *) want="read=3 skipped=0 inserted=3 expired=2 updated=0 deleted=0 unchanged=0" ;;
    esac
    is "$ucounts" "$want" "$u, f2.csv: two changes, one new key"
    if [ "$l" = up ]; then
      # check --connect notes a text key whose collation holds texts equal
      # that differ (MariaDB's _bin collations pad with spaces); dwload's
      # own tables' utf8mb4_nopad_bin does not
      FEED=$F2 dw check --connect "$JU"
      is "$RC" 0 "$u: check --connect passes"
      if is_warehouse mariadb && [ "$v" != int ]; then
        cs=$(sql "SELECT character_set_name FROM information_schema.columns WHERE table_schema = DATABASE()
                  AND table_name = '$u' AND column_name = 'id'")
        like "$OUT" "note: key column id CHARACTER SET $cs COLLATE $(collation "$u" id) holds texts equal" \
          "$u: check --connect notes the key's collation"
      else
        unlike "$OUT" "note: key column" "$u: check --connect notes nothing of an integer key or exact text"
      fi
      FEED=$F2 dw check --connect "$JR"
      unlike "$OUT" "note: key column" "$r: nothing to note of dwload's own table"
    fi
  done
done

done_testing
