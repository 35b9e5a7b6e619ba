# Deletes by absence scoped to partitions (load.partition), through the
# real binary: an extract that holds every row of some partitions (dlt's
# merge_key on a partition column) deletes only the absent keys of the
# partitions it delivered rows of; keys of the other partitions stay.
# load.max_deletes counts against the partitions delivered; an empty
# extract delivers no partition and deletes nothing.  upsert on both
# engines (DWL_ENGINE), scd2 on the memory engine (pushdown refuses
# deletes: absent in scd2).
. "$TOP_SRCDIR/tests/integration/lib.sh"

# pjob NAME MODE KEY: j, a job reading $WORK/NAME.csv into t_NAME with
# deletes: absent and partition: [region]
pjob() {
  j=$(mkjob "$1" "$WORK/$1.csv" "t_$1" '  types: {id: integer, amount: integer}' <<EOF
load:
  mode: $2
  key: $3
  lmd: lmd
  deletes: absent
  partition: [region]
EOF
)
}

# feed NAME: stdin (after the header) is NAME's extract
feed() {
  { echo 'id,region,amount,lmd'; cat; } >"$WORK/$1.csv"
}

# state NAME MODE: the table, whole for upsert; for scd2 every column but
# the clock-stamped valid_to, with the count of closed versions
state() {
  if [ "$2" = upsert ]; then
    tdump "t_$1" id
  else
    sqln "select id, region, amount, valid_from, is_current, is_deleted from t_$1 order by id, valid_from"
  fi
}

suite() {
  n=$1
  mode=$2
  feed "$n" <<'EOF'
1,EU,10,2024-01-01 00:00:00
2,EU,20,2024-01-01 00:00:00
3,US,30,2024-01-01 00:00:00
4,US,40,2024-01-01 00:00:00
5,,50,2024-01-01 00:00:00
EOF
  pjob "$n" "$mode" "${3:-[id]}"
  run_ok "$j" "$n: load EU 1, 2, US 3, 4 and 5 without a region"

  # EU only: 2 is gone from EU; US and the NULL partition are not judged
  feed "$n" <<'EOF'
1,EU,11,2024-02-01 00:00:00
EOF
  dw run "$j"
  is "$RC|$(field deleted)|$(field absent)|$(field guard)" "0|1|1|null" \
    "$n: an extract of EU deletes EU's absent key only (1 of EU's 2: within 50%)"
  if [ "$mode" = upsert ]; then
    is "$(state "$n" "$mode")" "1|EU|11|2024-02-01 00:00:00
3|US|30|2024-01-01 00:00:00
4|US|40|2024-01-01 00:00:00
5|<null>|50|2024-01-01 00:00:00" "$n: 2 deleted, 1 updated; US 3, 4 and 5 (no region) untouched"
  else
    is "$(state "$n" "$mode")" "1|EU|10|2024-01-01 00:00:00|0|0
1|EU|11|2024-02-01 00:00:00|1|0
2|EU|20|2024-01-01 00:00:00|0|1
3|US|30|2024-01-01 00:00:00|1|0
4|US|40|2024-01-01 00:00:00|1|0
5|<null>|50|2024-01-01 00:00:00|1|0" "$n: 2 expired as deleted, 1 a new version; US 3, 4 and 5 (no region) untouched"
  fi

  # US with only a new key: 3 and 4 absent are 2 of US's 2 live keys
  # (100%, over the default 50%), not 2 of the table's 4
  feed "$n" <<'EOF'
6,US,60,2024-03-01 00:00:00
EOF
  before=$(state "$n" "$mode")
  dw run "$j"
  is "$RC|$(field guard)|$(field absent)|$(field deleted)" "4|max_deletes|2|0" \
    "$n: 2 absent of US's 2: the guard refuses"
  like "$ERR" "would delete 2 of the 2 current keys of t_$n (100.0%)" "$n: the base is the partitions delivered"
  is "$(state "$n" "$mode")" "$before" "$n: the refused run wrote nothing"
  dw run --max-deletes all "$j"
  is "$RC|$(field deleted)|$(field inserted)" "0|2|1" "$n: --max-deletes all: US 3 and 4 deleted, 6 inserted"
  is "$(sql "select id from t_$n where $([ "$mode" = scd2 ] && echo 'is_current = TRUE and is_deleted = FALSE' || echo '1 = 1') order by id" | tr '\n' ' ')" \
    "1 5 6 " "$n: EU 1 and 5 (no region) stay, 6 is there"

  # the NULL partition is a partition: 7 without a region judges it
  feed "$n" <<'EOF'
7,,70,2024-04-01 00:00:00
EOF
  dw run --max-deletes all "$j"
  is "$RC|$(field deleted)|$(field inserted)" "0|1|1" "$n: an extract of the partition without a region deletes 5 only"
  is "$(sql "select id from t_$n where $([ "$mode" = scd2 ] && echo 'is_current = TRUE and is_deleted = FALSE' || echo '1 = 1') order by id" | tr '\n' ' ')" \
    "1 6 7 " "$n: EU 1 and US 6 stay"

  # an empty extract holds no partition: nothing is judged, nothing deleted
  feed "$n" </dev/null
  dw run "$j"
  is "$RC|$(field deleted)|$(field absent)|$(field guard)" "0|0|0|null" \
    "$n: an empty extract delivers no partition and deletes nothing"
}

suite pu upsert
suite ps scd2
# the partition column in the key (pushdown joins dwl_pd_seen on both)
suite pk upsert '[region, id]'

# ---- the spec: load.partition names columns of the source and the table
feed px <<'EOF'
1,EU,10,2024-01-01 00:00:00
EOF
j=$(mkjob px "$WORK/px.csv" t_px <<'EOF'
load:
  mode: upsert
  key: [id]
  lmd: lmd
  deletes: absent
  partition: [regio]
EOF
)
dw run "$j"
is "$RC" 2 "an unknown partition column: exit 2"
like "$ERR" "px.yaml:$(grep -n '^  partition:' "$j" | cut -d: -f1):3: load.partition: column 'regio' is not in the source" \
  "it names the key's place and the column"

done_testing
