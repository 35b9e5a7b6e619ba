# schema.widen once the run has already read or written the table
# (src/warehouse/target_widen.c).  MariaDB commits an ALTER TABLE by
# itself, on a connection of its own, which the run's transaction would
# block as soon as it has read or written the table (its metadata lock):
# such a run is refused instead, exit 4, nothing written, the checkpoint
# and the column's type as they were.  The cases dwload-job(5) names:
# load.lookup: scan, load.deletes.truncate_values and
# schema.missing_columns: keep read the table before the source;
# --full-refresh empties it first; a replace empties it at its first row;
# an append sends its first batch (2000 rows on MariaDB) before a later
# row needs the wider column.  (load.deletes: absent: schema_widen.sh.)
# On SQLite and PostgreSQL, whose DDL is transactional, the same runs
# succeed: PostgreSQL widens inside the run, SQLite keeps values whole.
# A snapshot load (scd2 without lmd), which reads the table's latest
# valid_from first, reads it on a connection of its own, so it widens on
# every warehouse.  Whole tables are compared.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# (coltype COLUMN TABLE and checkpoint JOB: lib.sh)

# wj JOB FILE TABLE TYPES LOAD-LINES [TARGET-LINES]: a csv job of ${FEED}
# into TABLE named JOB, written to FILE.yaml; prints its path
wj() {
  {
    printf 'version: 1\njob: %s\nsource:\n  plugin: csv\n  path: ${FEED}\n' "$1"
    printf '  types: {id: integer%s}\ntarget:\n  connection: "%s"\n  table: %s\n' "$4" "$WH_CONN" "$3"
    if [ -n "${6:-}" ]; then printf '%s\n' "$6"; fi
    printf '%s\n' "$5"
  } >"$WORK/$2.yaml"
  echo "$WORK/$2.yaml"
}

# touched LABEL JOB TABLE LOAD-LINES FEED1 FEED2 AFTER [RUN-ARGS...]: the
# first feed makes TABLE with name VARCHAR(5); the second, whose longer
# name comes after the run touched the table, is refused on MariaDB
# (nothing written, the checkpoint and type kept) and gives the whole
# table AFTER elsewhere (PostgreSQL: the column widened to VARCHAR(9))
touched() {
  _l=$1 _j=$2 _t=$3 _load=$4 _f1=$5 _f2=$6 _after=$7
  shift 7
  FEED=$_f1 dw run "$(wj "$_j" "${_j}_1" "$_t" ", name: varchar(5)" "$_load")"
  is "$RC" 0 "$_l: the first run makes the table"
  [ "$RC" = 0 ] || printf '%s\n' "$ERR" | sed 's/^/# /'
  _before=$(tdump "$_t")
  _cp=$(checkpoint "$_j")
  _ty=$(coltype name "$_t")
  FEED=$_f2 dw run "$@" "$(wj "$_j" "${_j}_2" "$_t" "" "$_load")"
  if is_warehouse mariadb; then
    is "$RC" 4 "$_l, MariaDB: a longer name after the run touched the table: exit 4"
    like "$ERR" "table $_t: column 'name' is VARCHAR(5), and the source's values need VARCHAR(9); this run had already read or written the table" \
      "$_l, MariaDB: the message names the column, the types and why"
    like "$ERR" "widen the column yourself (ALTER TABLE \`$_t\` MODIFY COLUMN \`name\` VARCHAR(9)" \
      "$_l, MariaDB: the message gives the statement"
    is "$(tdump "$_t")" "$_before" "$_l, MariaDB: nothing written: the whole table as before"
    is "$(checkpoint "$_j")" "$_cp" "$_l, MariaDB: the checkpoint not moved"
    is "$(coltype name "$_t")" "$_ty" "$_l, MariaDB: the column's type as it was"
  else
    is "$RC" 0 "$_l: the same run widens and succeeds"
    [ "$RC" = 0 ] || printf '%s\n' "$ERR" | sed 's/^/# /'
    is "$(tdump "$_t")" "$_after" "$_l: the whole table, the long name whole"
    case $WAREHOUSE in
    postgresql) is "$_ty > $(coltype name "$_t")" "character varying(5) > character varying(9)" \
                  "$_l, PostgreSQL: VARCHAR(5) widened to VARCHAR(9) inside the run" ;;
    *) is "$(coltype name "$_t")" "$_ty" "$_l, SQLite: the declared type stays, the value whole" ;;
    esac
  fi
}

F1=$(file f1.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01
2,Bob,2024-01-01
EOF
)
F2=$(file f2.csv <<'EOF'
id,name,lmd
3,Cy,2024-02-01
1,Annabelle,2024-02-01
EOF
)
SCD2_AFTER="1|1|Ann|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|2|Bob|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
3|3|Cy|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0
4|1|Annabelle|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0"

# ---- load.lookup: scan: every current version read before the source ---------
touched "lookup: scan" scan t_scan "load:
  mode: scd2
  key: id
  lmd: lmd
  lookup: scan" "$F1" "$F2" "$SCD2_AFTER"

# ---- load.deletes.truncate_values: the current versions read first -----------
T1=$(file t1.csv <<'EOF'
id,name,op,lmd
1,Ann,I,2024-01-01
2,Bob,I,2024-01-01
EOF
)
T2=$(file t2.csv <<'EOF'
id,name,op,lmd
3,Cy,I,2024-02-01
1,Annabelle,U,2024-02-01
EOF
)
touched "truncate_values" trunc t_trunc "load:
  mode: scd2
  key: id
  lmd: lmd
  deletes: {column: op, values: [D], truncate_values: [T]}" "$T1" "$T2" \
"1|1|Ann|I|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|2|Bob|I|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
3|3|Cy|I|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0
4|1|Annabelle|U|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0"

# ---- schema.missing_columns: keep: the current versions copied first ---------
K1=$(file k1.csv <<'EOF'
id,name,city,lmd
1,Ann,Oslo,2024-01-01
2,Bob,Rome,2024-01-01
EOF
)
touched "missing_columns: keep" keep t_keep "load:
  mode: scd2
  key: id
  lmd: lmd
schema:
  missing_columns: keep" "$K1" "$F2" \
"1|1|Ann|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|2|Bob|Rome|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
3|3|Cy|<null>|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0
4|1|Annabelle|Oslo|2024-02-01 00:00:00|2024-02-01 00:00:00|<null>|1|0"

# ---- --full-refresh: the table emptied before the source is read -------------
touched "--full-refresh" refresh t_refresh "load:
  mode: upsert
  key: id
  lmd: lmd" "$F1" "$F2" \
"1|Annabelle|2024-02-01 00:00:00
3|Cy|2024-02-01 00:00:00" --full-refresh

# ---- replace: emptied at its first row, the long name in the second ----------
# (no load.lmd: the lmd column is text here)
touched "replace" repl t_repl "load:
  mode: replace" "$F1" "$F2" \
"1|Annabelle|2024-02-01
3|Cy|2024-02-01"

# ---- append: the long name after the first batch was sent --------------------
A2="$WORK/a2.csv"
{
  echo "id,name,lmd"
  awk 'BEGIN { for (i = 3; i <= 2002; i++) printf "%d,r%d,2024-02-01\n", i, i }'
  echo "2003,Annabelle,2024-02-01"
} >"$A2"
AAFTER=$({
  printf '%s\n' "1|Ann|2024-01-01 00:00:00" "2|Bob|2024-01-01 00:00:00"
  awk 'BEGIN { for (i = 3; i <= 2002; i++) printf "%d|r%d|2024-02-01 00:00:00\n", i, i }'
  echo "2003|Annabelle|2024-02-01 00:00:00"
})
touched "append" app t_app "load:
  mode: append
  lmd: lmd" "$F1" "$A2" "$AAFTER"

# ---- a snapshot load reads the latest valid_from on a connection of its own --
# so it widens on MariaDB too (it used to wait for its own transaction's
# metadata lock until target.lock_timeout, then fail with exit 3)
S1=$(file s1.csv <<'EOF'
id,name
1,Ann
2,Bob
EOF
)
S2=$(file s2.csv <<'EOF'
id,name
3,Cy
1,Annabelle
2,Bob
EOF
)
SNAP_LOAD="load:
  mode: scd2
  key: id"
LOCK="  lock_timeout: 5s"
FEED=$S1 dw run --as-of 2024-01-01 "$(wj snap snap_1 t_snap ", name: varchar(5)" "$SNAP_LOAD" "$LOCK")"
is "$RC" 0 "snapshot: the first load makes the table"
SNAP_TY=$(coltype name t_snap)
FEED=$S2 dw run --as-of 2024-01-02 "$(wj snap snap_2 t_snap "" "$SNAP_LOAD" "$LOCK")"
is "$RC" 0 "snapshot: a longer name in the second snapshot widens the column and loads"
[ "$RC" = 0 ] || printf '%s\n' "$ERR" | sed 's/^/# /'
is "$(tdump t_snap dim_id)" "1|1|Ann|2024-01-01 00:00:00|2024-01-02 00:00:00|0|0
2|2|Bob|2024-01-01 00:00:00|<null>|1|0
3|3|Cy|2024-01-02 00:00:00|<null>|1|0
4|1|Annabelle|2024-01-02 00:00:00|<null>|1|0" "snapshot: the whole table"
case $WAREHOUSE in
postgresql) is "$SNAP_TY > $(coltype name t_snap)" "character varying(5) > character varying(9)" "snapshot: widened to VARCHAR(9)" ;;
mariadb) is "$SNAP_TY > $(coltype name t_snap)" "varchar(5) > varchar(9)" "snapshot, MariaDB: widened to VARCHAR(9), committed at once"
         like "$ERR" "widened t_snap.name from VARCHAR(5) to VARCHAR(9) (schema.widen: widen), committed at once" \
           "snapshot, MariaDB: the log says so" ;;
*) is "$(coltype name t_snap)" "$SNAP_TY" "snapshot, SQLite: the declared type stays" ;;
esac

done_testing
