# History correctness around deletions (issue 14): a key deleted by absence
# comes back when a full extract holds it again, whatever its lmd; a
# deletion never closes a version before it starts; keys deleted without a
# deleted column are remembered; hash surrogate keys of a key's versions
# stay distinct; a reread delete row counts as unchanged.  make check runs
# it with DWL_ENGINE=pushdown too (absence_history.pushdown.*.wh): the
# jobs give the same tables with pushdown; pushdown_absent.sh compares the
# two engines directly.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# at OFFSET: the UTC time OFFSET (a date(1) -d string, as "+2 hours") from
# now, to the second
at() {
  date -u -d "$1" '+%Y-%m-%d %H:%M:%S'
}

BOB='2,Bob,2024-01-02 00:00:00'

# extract NAME ROW...: the full extract NAME.csv (id,name,lmd) holding the
# rows given and Bob's; prints its path
extract() {
  _x=$1
  shift
  printf 'id,name,lmd\n' >"$WORK/$_x.csv"
  printf '%s\n' "$@" "$BOB" >>"$WORK/$_x.csv"
  echo "$WORK/$_x.csv"
}

# absent_job NAME CSV TABLE [LINES [SOURCE-LINES]]: an scd2 job on key id
# with deletes: absent; LINES follow in its load: section (and may open
# dimension:)
absent_job() {
  printf 'load:\n  mode: scd2\n  key: id\n  lmd: lmd\n  deletes: absent\n%s\n' "${4:-}" |
    mkjob "$1" "$2" "$3" "${5:-}"
}

# negative TABLE: the versions of TABLE whose valid_to is before their
# valid_from
negative() {
  sql "select count(*) from $1 where valid_to is not null and valid_to < valid_from"
}

# overlaps TABLE: pairs of versions of one id whose intervals overlap
# (an open version runs to the end of time)
overlaps() {
  sql "select count(*) from $1 a join $1 b on a.id = b.id and a.valid_from < b.valid_from
       where b.valid_from < coalesce(a.valid_to, '9999-12-31 00:00:00')"
}

# ---- presence revives: expire style -----------------------------------------
csv=$(extract rev "1,Ann,2024-01-01 00:00:00")
j=$(absent_job rev "$csv" h_rev)
run_ok "$j" "revive expire: first full extract"
extract rev >/dev/null
run_ok "$j" "revive expire: key 1 missing"
is "$(field deleted)" 1 "revive expire: key 1 deleted by absence"
del_at=$(sql "select valid_to from h_rev where id = '1'")
extract rev "1,Ann,2024-01-01 00:00:00" >/dev/null
run_ok "$j" "revive expire: key 1 back with its old row"
is "$(counts)" "read=2 skipped=1 inserted=1 expired=0 updated=0 deleted=0 unchanged=0" \
  "revive expire: the returning key's row is not skipped: it is inserted"
is "$(sqln 'select id, name, valid_from, valid_to, is_current, is_deleted from h_rev order by id, valid_from')" \
"1|Ann|2024-01-01 00:00:00|$del_at|0|1
1|Ann|$del_at|<null>|1|0
2|Bob|2024-01-02 00:00:00|<null>|1|0" \
  "revive expire: key 1 current again from its deletion on, no overlap"
before=$(tdump h_rev)
run_ok "$j" "revive expire: the same extract again"
is "$(counts)" "read=2 skipped=2 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" \
  "revive expire: a rerun changes nothing"
is "$(tdump h_rev)" "$before" "revive expire: the table stays as it was"

# ---- presence revives: tombstones, close: second_before ----------------------
# The version starts ahead of the run's clock (a source clock two hours
# ahead): the deletion is stamped one second after it, so that its
# second_before valid_to is not before its valid_from; the revival starts
# one second after the tombstone for the same reason.
ahead=$(at '+2 hours')
csv=$(extract tomb "1,Ann,$ahead")
j=$(absent_job tomb "$csv" h_tomb "  delete_style: tombstone
dimension:
  close: second_before")
run_ok "$j" "revive tombstone: first full extract"
extract tomb >/dev/null
run_ok "$j" "revive tombstone: key 1 missing"
is "$(negative h_tomb)" 0 "revive tombstone: no version ends before it starts"
extract tomb "1,Ann,$ahead" >/dev/null
run_ok "$j" "revive tombstone: key 1 back with its old row"
is "$(field inserted)" 1 "revive tombstone: the revival inserted"
is "$(field expired)" 1 "revive tombstone: the tombstone closed"
# plus SECONDS TS: TS (to the second) that many seconds later
plus() {
  date -u -d "$2 UTC + $1 seconds" '+%Y-%m-%d %H:%M:%S'
}
tomb_at=$(plus 1 "$ahead")
back_at=$(plus 2 "$ahead")
is "$(sqln "select valid_from, valid_to, is_current, is_deleted from h_tomb where id = '1' order by valid_from")" \
"$ahead|$ahead|0|0
$tomb_at|$tomb_at|0|1
$back_at|<null>|1|0" \
  "revive tombstone: deleted one second after its start, back one second after the tombstone"
is "$(negative h_tomb)" 0 "revive tombstone: still no negative interval"
is "$(overlaps h_tomb)" 0 "revive tombstone: no overlap"

# ---- a deletion never closes a version before it starts --------------------
# An lmd with a fraction, ahead of the run's clock (which has whole
# seconds): the deletion comes one microsecond after it.
frac="$(at '+1 hour').500000"
csv=$(extract frac "1,Ann,$frac")
j=$(absent_job frac "$csv" h_frac)
run_ok "$j" "fraction: first full extract"
extract frac >/dev/null
run_ok "$j" "fraction: key 1 missing"
is "$(negative h_frac)" 0 "fraction: the deleted version does not end before it starts"
is "$(sql "select valid_to from h_frac where id = '1'")" "${frac%.*}.500001" \
  "fraction: deleted one microsecond after its start"

# A date dimension: the run's clock is today; a version that starts today
# is deleted the day after it starts (day_before would end it yesterday).
today=$(date -u '+%Y-%m-%d')
tomorrow=$(date -u -d '+1 day' '+%Y-%m-%d')
csv=$(file day.csv <<EOF
id,name,lmd
1,Ann,$today
2,Bob,2024-01-02
EOF
)
j=$(absent_job day "$csv" h_day "  delete_style: tombstone
dimension:
  close: day_before" '  types: {lmd: date}')
run_ok "$j" "date: first full extract"
printf 'id,name,lmd\n2,Bob,2024-01-02\n' >"$csv"
run_ok "$j" "date: key 1 missing"
is "$(sqln "select valid_from, valid_to, is_deleted from h_day where id = '1' order by valid_from")" \
"$today|$today|0
$tomorrow|<null>|1" "date: the version keeps its one day; the tombstone starts the day after"

# ---- hash surrogate keys: delete, return, delete, return --------------------
csv=$(extract hash "1,Ann,2024-01-01 00:00:00")
j=$(absent_job hash "$csv" h_hash "  delete_style: tombstone
dimension:
  surrogate_key: sk
  surrogate_strategy: hash")
run_ok "$j" "hash: first full extract"
n=0
for lmd in 2024-01-03 2024-01-04 2024-01-05; do
  n=$((n + 1))
  extract hash >/dev/null
  run_ok "$j" "hash: key 1 missing ($n)"
  extract hash "1,Ann,$lmd 00:00:00" >/dev/null
  run_ok "$j" "hash: key 1 back ($n)"
done
is "$(sql "select count(*), count(distinct sk) from h_hash where id = '1'")" "7|7" \
  "hash: seven versions of key 1, seven surrogate keys"
is "$(sql "select is_deleted from h_hash where id = '1'" | grep -c '^1$')" 3 "hash: three tombstones"
is "$(negative h_hash)" 0 "hash: no negative interval"
is "$(overlaps h_hash)" 0 "hash: no overlap"

# ---- dimension.deleted: null: deleted keys are remembered -------------------
csv=$(file nd.csv <<'EOF'
id,name,op,lmd
1,Ann,U,2024-03-01 08:00:00
1,Ann,D,2024-03-02 08:00:00
2,Bob,U,2024-03-01 09:00:00
EOF
)
j=$(mkjob nd "$csv" h_nd <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
  type2: [name]
  deletes: {column: op, values: [D]}
  lookback: 2d
dimension:
  deleted: null
EOF
)
run_ok "$j" "no deleted column: first run"
is "$(field deleted)" 1 "no deleted column: key 1 deleted by its delete row"
run_ok "$j" "no deleted column: rerun inside lookback"
run_ok "$j" "no deleted column: and again"
is "$(counts)" "read=3 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=3" \
  "no deleted column: a reread deletion changes nothing"
is "$(sqln "select id, name, valid_from, valid_to, is_current from h_nd order by id, valid_from")" \
"1|Ann|2024-03-01 08:00:00|2024-03-02 08:00:00|0
2|Bob|2024-03-01 09:00:00|<null>|1" "no deleted column: one version per key after three runs"
# A late row between the start and the deletion is spliced in before it.
file nd.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,U,2024-03-01 08:00:00
1,Ada,U,2024-03-01 20:00:00
1,Ann,D,2024-03-02 08:00:00
2,Bob,U,2024-03-01 09:00:00
EOF
run_ok "$j" "no deleted column: a late row before the deletion"
is "$(sqln "select id, name, valid_from, valid_to, is_current from h_nd order by id, valid_from")" \
"1|Ann|2024-03-01 08:00:00|2024-03-01 20:00:00|0
1|Ada|2024-03-01 20:00:00|2024-03-02 08:00:00|0
2|Bob|2024-03-01 09:00:00|<null>|1" "no deleted column: the late row ends at the deletion, the key stays deleted"
is "$(overlaps h_nd)" 0 "no deleted column: no overlap"

# deletes: absent without a deleted column: a returning key starts at its
# deletion, not at its older lmd.
csv=$(extract nda "1,Ann,2024-01-01 00:00:00")
j=$(absent_job nda "$csv" h_nda "dimension:
  deleted: null")
run_ok "$j" "no deleted column, absent: first run"
extract nda >/dev/null
run_ok "$j" "no deleted column, absent: key 1 missing"
del_at=$(sql "select valid_to from h_nda where id = '1'")
extract nda "1,Eve,2024-01-03 00:00:00" >/dev/null
run_ok "$j" "no deleted column, absent: key 1 back, changed, dated before its deletion"
is "$(sqln "select name, valid_from, valid_to, is_current from h_nda where id = '1' order by valid_from")" \
"Ann|2024-01-01 00:00:00|$del_at|0
Eve|$del_at|<null>|1" "no deleted column, absent: the returning version starts at the deletion"
is "$(overlaps h_nda)" 0 "no deleted column, absent: no overlap"

# ---- a reread delete row counts as unchanged --------------------------------
csv=$(file rr.csv <<'EOF'
id,name,op,lmd
1,Ann,U,2024-03-01 08:00:00
1,Ann,D,2024-03-02 08:00:00
EOF
)
for style in expire tombstone; do
  j=$(mkjob "rr_$style" "$csv" "h_rr_$style" <<EOF
load:
  mode: scd2
  key: id
  lmd: lmd
  deletes: {column: op, values: [D]}
  delete_style: $style
  lookback: 2d
EOF
)
  run_ok "$j" "reread $style: first run"
  before=$(tdump "h_rr_$style")
  run_ok "$j" "reread $style: rerun inside lookback"
  is "$(counts)" "read=2 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=2" \
    "reread $style: one outcome per row, both unchanged"
  is "$(tdump "h_rr_$style")" "$before" "reread $style: the table unchanged"
done

# ---- upsert: presence revives too -------------------------------------------
for engine in memory pushdown; do
  csv=$(extract "up_$engine" "1,Ann,2024-01-01 00:00:00")
  j=$(job "up_$engine" <<EOF
version: 1
job: up_$engine
source: {plugin: csv, path: $csv}
target:
  connection: "$WH_CONN"
  table: h_up_$engine
load:
  mode: upsert
  key: id
  lmd: lmd
  deletes: absent
  engine: $engine
EOF
)
  run_ok "$j" "upsert $engine: first full extract"
  extract "up_$engine" >/dev/null
  run_ok "$j" "upsert $engine: key 1 missing"
  is "$(sql "select count(*) from h_up_$engine")" 1 "upsert $engine: key 1 removed"
  extract "up_$engine" "1,Ann,2024-01-01 00:00:00" >/dev/null
  run_ok "$j" "upsert $engine: key 1 back with its old row"
  is "$(counts)" "read=2 skipped=1 inserted=1 expired=0 updated=0 deleted=0 unchanged=0" \
    "upsert $engine: the returning key inserted"
  is "$(sql "select id, name, lmd from h_up_$engine order by id")" "1|Ann|2024-01-01 00:00:00
2|Bob|2024-01-02 00:00:00" "upsert $engine: both keys there"
done

# ---- SQLite: the absent keys' versions are read before the run writes ------
# The memory engine reads them again on SQLite's second connection, which
# the run's uncommitted writes lock out once they spill from the page
# cache: 100k keys with 1000 changed and 1000 gone waited for the lock
# until target.lock_timeout and failed (exit 3) on every rerun.
if is_warehouse sqlite; then
  python3 - "$WORK" <<'EOF'
import sys
w = sys.argv[1]
with open(w + "/big1.csv", "w") as f, open(w + "/big2.csv", "w") as g:
    f.write("id,name,lmd\n")
    g.write("id,name,lmd\n")
    for k in range(100000):
        f.write("%d,n%d,2024-01-01 00:00:00\n" % (k, k))
        if k % 100 == 1:
            continue
        g.write("%d,%s%d,%s\n" % (k, "m" if k % 100 == 0 else "n", k,
                                  "2024-01-02 00:00:00" if k % 100 == 0 else "2024-01-01 00:00:00"))
EOF
  job big <<EOF >/dev/null
version: 1
job: big
source:
  plugin: csv
  path: \${FEED}
target:
  connection: "$WH_CONN"
  table: h_big
  lock_timeout: 5s
load:
  mode: scd2
  key: id
  lmd: lmd
  deletes: absent
  max_deletes: all
EOF
  _engine <"$WORK/big.yaml" | job big_e >/dev/null
  FEED="$WORK/big1.csv" dw run "$WORK/big_e.yaml"
  is "$RC" 0 "SQLite, 100k keys: the first load"
  FEED="$WORK/big2.csv" dw run "$WORK/big_e.yaml"
  is "$RC|$(field inserted)|$(field deleted)" "0|1000|1000" \
    "SQLite, 100k keys, 1000 changed and 1000 gone: the run commits, nothing waits for a lock"
fi

done_testing
