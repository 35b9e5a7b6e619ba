#!/bin/sh
# load.lookup: reading current versions for the delta's keys only gives the
# same dimension as a full scan, is chosen automatically for a small delta
# against a large table, and handles keys with a NULL part.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# jobfile NAME TABLE LOOKUP: an scd2 job over $WORK/feed.csv
jobfile() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $WORK/feed.csv
  types: {id: integer}
target:
  connection: "$WH_CONN"
  table: $2
load:
  mode: scd2
  lmd: lmd
  key: [id, region]
  type1: [name]
  deletes: {column: op, values: [D]}
  lookup: $3
EOF
}

# feed N OFFSET LMD: N rows, city varying with OFFSET, key 3 with a NULL region
feed() {
  awk -v n="$1" -v off="$2" -v lmd="$3" 'BEGIN {
    print "id,region,name,city,op,lmd"
    for (i = 1; i <= n; i++)
      printf "%d,%s,name%d,city%d,,%s\n", i, (i == 3 ? "" : "eu"), i, (i + off) % 7, lmd
  }' >"$WORK/feed.csv"
}

SCAN=$(jobfile by_scan d_scan scan)
KEYS=$(jobfile by_keys d_keys keys)
AUTO=$(jobfile by_auto d_auto auto)

feed 300 0 "2024-01-01 00:00:00"
for j in "$SCAN" "$KEYS" "$AUTO"; do
  dw run "$j"
  is "$RC" 0 "first load with $(basename "$j" .yaml)"
done

# A delta of 12 rows (one with a NULL key part, one delete, one new key,
# one type 1 change, the rest type 2 changes) against 300 keys.
{
  echo "id,region,name,city,op,lmd"
  for i in 1 2 4 5 6 7 8 9 10; do echo "$i,eu,name$i,moved$i,,2024-01-02 00:00:00"; done
  echo "3,,name3,moved3,,2024-01-02 00:00:00"
  echo "11,eu,Eleven,city4,,2024-01-02 00:00:00"
  echo "12,eu,name12,city5,D,2024-01-02 00:00:00"
  echo "999,eu,new,city1,,2024-01-02 00:00:00"
} >"$WORK/feed.csv"

dw run "$SCAN"
SCAN_COUNTS=$(printf '%s' "$LAST" | sed 's/"seconds":[0-9.]*//; s/"run_id":"[^"]*",//')
like "$ERR" "current versions (all)" "scan: reads every current version"
dw run "$KEYS"
KEYS_COUNTS=$(printf '%s' "$LAST" | sed 's/"seconds":[0-9.]*//; s/"run_id":"[^"]*",//; s/by_keys/by_scan/')
like "$ERR" "read 12 current versions (the delta's keys)" "keys: reads the current versions of the 12 known delta keys, not 300"
is "$KEYS_COUNTS" "$SCAN_COUNTS" "keys: the same counts as a scan"
dw run "$AUTO"
like "$ERR" "(the delta's keys)" "auto: 13 delta rows against 300 rows picks the keyed lookup"
is "$(field expired)" 10 "auto: ten versions closed (nine moves and the NULL-key one)"
is "$(field updated)" 1 "auto: one type 1 update"
is "$(field deleted)" 1 "auto: one delete"

cols="id, region, name, city, op, lmd, valid_from, valid_to, is_current, is_deleted"
want=$(sqln "SELECT $cols FROM d_scan ORDER BY id, valid_from")
is "$(sqln "SELECT $cols FROM d_keys ORDER BY id, valid_from")" "$want" "keys: the same dimension as a scan"
is "$(sqln "SELECT $cols FROM d_auto ORDER BY id, valid_from")" "$want" "auto: the same dimension as a scan"
is "$(sql "SELECT count(*) FROM d_keys WHERE id = 3 AND region IS NULL")" 2 \
  "keys: the NULL-region key got its new version through the NULL-safe lookup"
is "$(sql "SELECT count(*) FROM d_keys WHERE is_current = TRUE")" 300 "keys: one current version per live key"

# A large delta against the same table: auto goes back to the scan.
feed 300 3 "2024-01-03 00:00:00"
dw run "$AUTO"
like "$ERR" "current versions (all)" "auto: a delta as large as the table scans"

# The spec refuses what cannot work.
BAD=$(job bad <<EOF
version: 1
job: bad
source: {plugin: csv, path: $WORK/feed.csv}
target: {connection: "$WH_CONN", table: d_bad}
load: {mode: scd2, lmd: lmd, key: [id], deletes: absent, lookup: keys}
EOF
)
dw run "$BAD"
is "$RC" 2 "lookup: keys with deletes: absent is a spec error"
like "$ERR" "needs every current key" "the message says why"

done_testing
