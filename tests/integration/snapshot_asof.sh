# Snapshot loads: mode scd2 without load.lmd (dwload-job(5), SNAPSHOT
# LOADS).  Each run compares every delivered row with its key's current
# version by fingerprint; a changed key's new version starts, and a key
# missing from the snapshot ends, at the load time: run --as-of TIMESTAMP
# or the run's clock.  A load dated before the last one, or before a
# version of the table starts, is refused (exit 2, nothing written).  The
# jobs of tests/data/snapshot are a dbt check-strategy sequence of three
# snapshots, asserted whole; deletes: absent is memory-only in scd2, so the
# part both engines run (mkjob) loads snapshots without it.
. "$TOP_SRCDIR/tests/integration/lib.sh"

S="$DATA/snapshot"
DWL_CONN=$WH_CONN
export DWL_CONN

# snap N ARGS...: loads snapshot_N.csv with ARGS (--as-of ...)
snap() {
  _n=$1
  shift
  FEED=snapshot_$_n.csv dw run "$@" "$S/customers.yaml"
}
whole() {
  tdump snap_customers dim_id
}

# ---- three snapshots, each dated by --as-of --------------------------------
snap 1 --as-of 2024-01-01
run_rc() { is "$RC" 0 "$1: exit 0"; [ "$RC" = 0 ] || echo "# stderr: $ERR"; }
run_rc "snapshot 1"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "snapshot 1: counts"
is "$(field checkpoint)" null "snapshot 1: no checkpoint"
is "$(field load_time)" "2024-01-01 00:00:00" "snapshot 1: the load time is --as-of"
snap 2 --as-of 2024-01-02
run_rc "snapshot 2"
is "$(counts)" "read=3 skipped=0 inserted=2 expired=1 updated=0 deleted=1 unchanged=1" \
  "snapshot 2: Alice changed, Dee new, Cy gone, Bob unchanged"
snap 3 --as-of 2024-01-03
run_rc "snapshot 3"
is "$(counts)" "read=3 skipped=0 inserted=1 expired=0 updated=0 deleted=1 unchanged=2" \
  "snapshot 3: Cy back with a new age, Bob gone, Alice and Dee unchanged"
is "$(field absent)" 1 "snapshot 3: one key absent"
is "$(cols snap_customers)" "dim_id,id,name,age,valid_from,valid_to,is_current,is_deleted" \
  "the table: the snapshot's columns and the bookkeeping ones"
expected="1|1|Alice|25|2024-01-01 00:00:00|2024-01-02 00:00:00|0|0
2|2|Bob|30|2024-01-01 00:00:00|2024-01-03 00:00:00|0|1
3|3|Cy|40|2024-01-01 00:00:00|2024-01-02 00:00:00|0|1
4|1|Alice|26|2024-01-02 00:00:00|<null>|1|0
5|4|Dee|35|2024-01-02 00:00:00|<null>|1|0
6|3|Cy|41|2024-01-03 00:00:00|<null>|1|0"
is "$(whole)" "$expected" \
  "the whole table: versions start and deletions end at each snapshot's --as-of, not at today's date"
FEED=x dw state "$S/customers.yaml"
like "$OUT" "load time:   2024-01-03 00:00:00 (a snapshot load: no checkpoint)" "state shows the last load time"
FEED=snapshot_3.csv dw asof "$S/customers.yaml" --at "2024-01-02 12:00:00"
is "$(printf '%s\n' "$OUT" | sed 1d | cut -d, -f2-4 | sort | tr '\n' ' ')" "1,Alice,26 2,Bob,30 4,Dee,35 " \
  "asof 2024-01-02 12:00: the dimension as snapshot 2 had it"

# ---- the same snapshot again at the same time: nothing changes -------------
snap 3 --as-of 2024-01-03
run_rc "snapshot 3 again"
is "$(counts)" "read=3 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=3" \
  "snapshot 3 again: every row compared, none changed (no checkpoint skips any)"
is "$(whole)" "$expected" "snapshot 3 again: the table unchanged"

# ---- a backfill out of order is refused --------------------------------------
snap 2 --as-of 2024-01-02
is "$RC" 2 "snapshot 2 --as-of 2024-01-02 after 2024-01-03: exit 2"
like "$ERR" "the load time 2024-01-02 00:00:00 (--as-of) is before the job's last load 2024-01-03 00:00:00" \
  "out of order: the message names both times"
is "$(whole)" "$expected" "out of order: nothing written"
FEED=x dw state "$S/customers.yaml"
like "$OUT" "load time:   2024-01-03 00:00:00" "out of order: the stored load time unchanged"
# The table's own history also bounds it, should the state row be gone.
FEED=x dw state --reset "$S/customers.yaml"
is "$RC" 0 "state --reset: exit 0"
snap 2 --as-of "2024-01-02 23:59:59"
is "$RC" 2 "after state --reset, --as-of before the latest valid_from: exit 2"
like "$ERR" "is before the latest valid_from in the table, 2024-01-03 00:00:00" \
  "out of order against the table: the message names its latest valid_from"
is "$(whole)" "$expected" "out of order against the table: nothing written"

# ---- what --as-of refuses --------------------------------------------------
before=$(wh_dump)
snap 3 --as-of yesterday
is "$RC" 2 "--as-of yesterday: exit 2"
like "$ERR" "--as-of 'yesterday' is not a timestamp" "--as-of yesterday: not a timestamp"
snap 3 --as-of 2999-01-01
is "$RC" 2 "--as-of in the future: exit 2"
like "$ERR" "--as-of '2999-01-01' is later than the run's clock" "--as-of in the future: said so"
csv=$(file lmd.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
EOF
)
j=$(mkjob with_lmd "$csv" d_with_lmd <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
dw run --as-of 2024-01-01 "$j"
is "$RC" 2 "--as-of with load.lmd: exit 2"
like "$ERR" "job 'with_lmd' has load.lmd: its versions start at each row's lmd, so --as-of does not apply" \
  "--as-of with load.lmd: refused, saying why"
j=$(mkjob ups "$csv" d_ups <<'EOF'
load:
  mode: upsert
  key: [id]
EOF
)
dw run --as-of 2024-01-01 "$j"
is "$RC" 2 "--as-of in mode upsert: exit 2"
like "$ERR" "job 'ups' is in mode upsert: --as-of dates the versions of a snapshot load" "--as-of in mode upsert: refused"
is "$(wh_dump)" "$before" "the refused runs wrote nothing"

# ---- plan --as-of: the same changes, nothing written --------------------------
FEED=snapshot_1.csv dw plan --as-of 2024-01-04 "$S/customers.yaml"
is "$RC" 0 "plan --as-of: exit 0"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=2 updated=0 deleted=1 unchanged=0" \
  "plan --as-of 2024-01-04 with snapshot 1: Alice back to 25, Bob revived, Cy back to 40, Dee gone"
is "$(whole)" "$expected" "plan --as-of: nothing written"

# ---- the run's clock ----------------------------------------------------------
T0=$(date -u '+%Y-%m-%d %H:%M:%S')
snap 1
T1=$(date -u '+%Y-%m-%d %H:%M:%S')
run_rc "snapshot 1 without --as-of"
ok_in_run "$(field load_time)" "without --as-of the load time is the run's clock"
ok_in_run "$(sql 'select valid_from from snap_customers where dim_id = 7')" "a new version starts at the run's clock"
ok_in_run "$(sql 'select max(valid_to) from snap_customers where id = 4')" \
  "a key missing from the snapshot ends at the run's clock"
clock=$(field load_time)
is "$(tdump snap_customers dim_id | sed "s/$clock/CLOCK/g")" \
"1|1|Alice|25|2024-01-01 00:00:00|2024-01-02 00:00:00|0|0
2|2|Bob|30|2024-01-01 00:00:00|2024-01-03 00:00:00|0|1
3|3|Cy|40|2024-01-01 00:00:00|2024-01-02 00:00:00|0|1
4|1|Alice|26|2024-01-02 00:00:00|CLOCK|0|0
5|4|Dee|35|2024-01-02 00:00:00|CLOCK|0|1
6|3|Cy|41|2024-01-03 00:00:00|CLOCK|0|0
7|1|Alice|25|CLOCK|<null>|1|0
8|2|Bob|30|CLOCK|<null>|1|0
9|3|Cy|40|CLOCK|<null>|1|0" "the run's clock: the whole table, the clock's versions and deletion"
snap 3 --as-of 2024-01-05
is "$RC" 2 "--as-of before a load dated by the clock: exit 2"

# ---- both engines: snapshots without deletes (mkjob adds engine: pushdown) ---
j=$(mkjob snap_both "$S/snapshot_1.csv" d_snap_both '  types: {id: integer, age: integer}' <<'EOF'
load:
  mode: scd2
  key: [id]
EOF
)
for n in 1 2 3; do
  FEED=x dw run --as-of "2024-01-0$n" "$(sed "s|snapshot_1.csv|snapshot_$n.csv|" "$j" | job snap_both_$n)"
  run_rc "no deletes: snapshot $n${DWL_ENGINE:+ ($DWL_ENGINE)}"
done
is "$(counts)" "read=3 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=2" \
  "no deletes: snapshot 3 gives Cy a new version; a key missing from a snapshot stays"
is "$(tdump d_snap_both dim_id)" \
"1|1|Alice|25|2024-01-01 00:00:00|2024-01-02 00:00:00|0|0
2|2|Bob|30|2024-01-01 00:00:00|<null>|1|0
3|3|Cy|40|2024-01-01 00:00:00|2024-01-03 00:00:00|0|0
4|1|Alice|26|2024-01-02 00:00:00|<null>|1|0
5|4|Dee|35|2024-01-02 00:00:00|<null>|1|0
6|3|Cy|41|2024-01-03 00:00:00|<null>|1|0" "no deletes: the whole table"
FEED=x dw run --as-of 2024-01-02 "$WORK/snap_both_2.yaml"
is "$RC" 2 "no deletes: out of order refused, on this engine too"
grep -q 'engine: pushdown' "$WORK/snap_both_1.yaml" && pushed=1 || pushed=0
is "$pushed" "$([ "${DWL_ENGINE:-}" = pushdown ] && echo 1 || echo 0)" "no deletes: the job ran on the engine asked for"

done_testing
