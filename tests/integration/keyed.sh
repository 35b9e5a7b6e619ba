# Keyed statements (dialect.h: update_keyed_end, join_keyed_*; target_keyed):
# a delta that is a small share of a table with the key index reaches its
# versions through that index, row by row, on the warehouse whose planner
# would otherwise hash a seq scan of the whole table (PostgreSQL); the
# others have no keyed statements.  Four tables get the same history: the
# memory engine and pushdown each load one with the key index and one
# whose key index was dropped (so never keyed).  The same deltas then go
# into each, and the four must agree row for row, with the same counts;
# the debug log says which runs were keyed.  Where the key index holds
# every version (no partial indexes: MariaDB), pushdown finds the end of a
# key deleted in expire style by probing it (target_probes_history) rather
# than grouping every deleted version of the table; the log says so too.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# The jobs name their engine; DWL_ENGINE must not change them.
unset DWL_ENGINE

keyed_here=0
[ "$WAREHOUSE" = postgresql ] && keyed_here=1
probe_here=0
[ "$WAREHOUSE" = mariadb ] && probe_here=1

# drop_key_index TABLE: the index dwload made on the key of TABLE's
# current versions
drop_key_index() {
  case $WAREHOUSE in
    mariadb) sql "DROP INDEX \`$1_dwl_key\` ON \`$1\`" ;;
    *) sql "DROP INDEX \"$1_dwl_key\"" ;;
  esac
}

# seed NAME MODE [LOAD_LINE]: tables NAME_mi, NAME_mn (memory), NAME_pi,
# NAME_pn (pushdown) loaded from $WORK/base.csv by a job of MODE (deletes
# by the column op, and LOAD_LINE; the target: lines in TGT, the source
# options in SRC); the _n tables lose their key index
seed() {
  _body=$(printf '%sload:\n  mode: %s\n  key: [id]\n  lmd: lmd\n%s  deletes:\n    column: op\n    values: [D]\n  engine: @ENGINE@\n' \
    "${TGT:+$TGT
}" "$2" "${3:+  $3
}")
  SPEC_BODY=$_body
  for _t in mi mn pi pn; do
    _e=memory
    case $_t in p*) _e=pushdown ;; esac
    _j=$(printf '%s\n' "$_body" | sed "s/@ENGINE@/$_e/" | mkjob "$1_$_t" "$WORK/base.csv" "$1_$_t" "${SRC:-}")
    dw run "$_j"
    is "$RC" 0 "$1: seed run into $1_$_t"
    case $_t in *n) drop_key_index "$1_$_t" ;; esac
  done
  is "$(tdump "$1_mn")" "$(tdump "$1_mi")" "$1: seeded tables equal (memory)"
  is "$(tdump "$1_pi")" "$(tdump "$1_mi")" "$1: seeded tables equal (pushdown)"
}

# delta NAME FEED WHAT KEYED [PROBED]: FEED into the four tables (debug
# log); the tables and counts must agree; KEYED 1: on a warehouse with
# keyed statements the runs into the indexed tables say they were keyed,
# and those into the others do not; KEYED 0: none does.  PROBED 1 (scd2
# jobs, KEYED 1): on a warehouse whose key index holds every version the
# pushdown run into the indexed table says it probed deleted versions by
# key, and no other run does
delta() {
  for _t in mi mn pi pn; do
    _e=memory
    case $_t in p*) _e=pushdown ;; esac
    _j=$(printf '%s\n' "$SPEC_BODY" | sed "s/@ENGINE@/$_e/" | mkjob "$1_$_t" "$2" "$1_$_t" "${SRC:-}")
    dw --log-level debug run "$_j"
    is "$RC" 0 "$3: run into $1_$_t"
    counts >"$WORK/$1_$_t.counts"
    _k=$(printf '%s\n' "$ERR" | grep -c 'keyed joins\|applied by key')
    _want=0
    if [ "$4" = 1 ] && [ "$keyed_here" = 1 ]; then
      case $_t in *i) _want=1 ;; esac
    fi
    if [ "$_want" = 1 ]; then
      ok_keyed=$([ "$_k" -gt 0 ] && echo yes || echo "no ($_k lines)")
      is "$ok_keyed" yes "$3: $1_$_t ($_e) was keyed"
    else
      is "$_k" 0 "$3: $1_$_t ($_e) was not keyed"
    fi
    _g=$(printf '%s\n' "$ERR" | grep -c 'deleted versions probed by key')
    _want=0
    [ "${5:-0}" = 1 ] && [ "$probe_here" = 1 ] && [ "$_t" = pi ] && _want=1
    is "$_g" "$_want" "$3: $1_$_t ($_e) probed deleted versions by key: $_want"
  done
  for _t in mn pi pn; do
    is "$(cat "$WORK/$1_$_t.counts")" "$(cat "$WORK/$1_mi.counts")" "$3: $1_$_t counts as $1_mi"
    is "$(tdump "$1_$_t")" "$(tdump "$1_mi")" "$3: $1_$_t holds what $1_mi holds"
  done
}

# set_back NAME WHEN: the four tables' checkpoints set back to WHEN
set_back() {
  for _t in mi mn pi pn; do
    dw state --set "$2" "$WORK/$1_$_t.yaml"
    is "$RC" 0 "$1: checkpoint of $1_$_t set back"
  done
}

# 300 keys, one version each
{
  echo "id,name,city,op,lmd"
  awk 'BEGIN { for (i = 1; i <= 300; i++) printf "%d,n%d,c%d,,2024-01-01 00:00:00\n", i, i, i % 7 }'
} >"$WORK/base.csv"

# ---- scd2: type 1, type 2, deletes by a column, two versions in one run ---
seed s2 scd2 "type1: [name]"

# seven rows against 300 keys: keyed where the dialect has it
file s2_small.csv >/dev/null <<'EOF'
id,name,city,op,lmd
1,n1,Paris,,2024-02-01 00:00:00
2,renamed,c2,,2024-02-01 00:00:00
3,n3,c3,D,2024-02-01 00:00:00
4,n4,c4,,2024-02-01 00:00:00
5,n5,Rome,,2024-02-01 00:00:00
5,five,Lima,,2024-02-03 00:00:00
301,new,Oslo,,2024-02-01 00:00:00
EOF
delta s2 "$WORK/s2_small.csv" "scd2, 7 rows into 300 keys" 1 1

is "$(sql "SELECT COUNT(*) FROM s2_mi WHERE id = '5'")" 3 "scd2: key 5 has three versions (the delta's two made it)"

# sixty rows (a fifth of the table): no keyed statement anywhere
{
  echo "id,name,city,op,lmd"
  awk 'BEGIN { for (i = 100; i < 160; i++) printf "%d,m%d,d%d,%s,2024-03-01 00:00:00\n", i, i, i % 5, i % 10 == 0 ? "D" : "" }'
} >"$WORK/s2_large.csv"
delta s2 "$WORK/s2_large.csv" "scd2, 60 rows into 300 keys" 0

# keys deleted in expire style come back: key 3 after its deletion (a
# revival), key 110 with a row dated before its deletion (a late row,
# repaired by the memory engine), key 120 at its deletion's very instant;
# each is judged by its last deleted version's end, which the probe reads
# (the checkpoint set back, so that the rows before the deletions are past it)
set_back s2 "2024-02-10 00:00:00"
file s2_gone.csv >/dev/null <<'EOF'
id,name,city,op,lmd
3,back,Kiel,,2024-04-01 00:00:00
110,m110,Late,,2024-02-15 00:00:00
120,m120,Same,,2024-03-01 00:00:00
7,n7,Bern,,2024-04-01 00:00:00
EOF
delta s2 "$WORK/s2_gone.csv" "scd2, deleted keys back, 4 rows into 300 keys" 1 1
is "$(sql "SELECT city FROM s2_mi WHERE id = '3' AND valid_to IS NULL")" "Kiel" "scd2: key 3 revived"
is "$(sql "SELECT city FROM s2_mi WHERE id = '110' AND is_deleted = TRUE")" "Late" \
  "scd2: key 110's late row made the version its deletion closed"
is "$(sql "SELECT COUNT(*) FROM s2_mi WHERE id = '120' AND valid_to IS NULL")" "1" \
  "scd2: key 120 back at its deletion's instant"

# ---- upsert: updates and deletes ------------------------------------------
seed up upsert
file up_small.csv >/dev/null <<'EOF'
id,name,city,op,lmd
7,seven,Bonn,,2024-02-01 00:00:00
8,n8,c8,D,2024-02-01 00:00:00
9,n9,c2,,2024-02-01 00:00:00
302,new,Oslo,,2024-02-01 00:00:00
EOF
delta up "$WORK/up_small.csv" "upsert, 4 rows into 300 keys" 1
is "$(sql "SELECT name, city FROM up_mi WHERE id = '7'")" "seven|Bonn" "upsert: key 7 updated"
is "$(sql "SELECT COUNT(*) FROM up_mi WHERE id = '8'")" "0" "upsert: key 8 deleted"

# ---- late rows set apart (load.late: ignore): pushdown's late join -------
# (the checkpoint set back, so that a row dated before its key's version
# is past it: a late row)
seed lt scd2 "late: ignore"
set_back lt "2023-06-01 00:00:00"
file lt_small.csv >/dev/null <<'EOF'
id,name,city,op,lmd
10,n10,Late,,2023-12-01 00:00:00
11,n11,Graz,,2024-02-01 00:00:00
12,n12,c5,,2024-02-01 00:00:00
EOF
delta lt "$WORK/lt_small.csv" "late: ignore, 3 rows into 300 keys" 1 1
is "$(field late_ignored)" 1 "late: ignore: the row of key 10 is set apart"
is "$(sql "SELECT city FROM lt_mi WHERE id = '10'")" "c3" "late: ignore: key 10 keeps its version"

# ---- a partitioned dimension: a row's ctid is unique in its partition only -
# Four partitions hold the same ctids; an update reaching rows by ctid
# alone would change rows of other partitions too.
if is_warehouse sqlite; then
  done_testing
fi
TGT='  partition_by: [id]
  partitions: 4'
SRC='  types: {id: integer}'
seed pt scd2 "type1: [name]"
delta pt "$WORK/s2_small.csv" "partitioned scd2, 7 rows into 300 keys" 1 1
is "$(sql "SELECT COUNT(*) FROM (SELECT id FROM pt_mi WHERE is_current = TRUE GROUP BY id HAVING COUNT(*) > 1) x")" 0 \
  "partitioned: no key has two current versions"
is "$(sql "SELECT COUNT(*) FROM pt_mi WHERE is_current = FALSE")" 4 \
  "partitioned: four versions closed (keys 1, 3 and twice 5), no other"
unset TGT SRC

done_testing
