# Published worked examples reproduced as jobs (tests/data/*/README names
# the sources), their tables asserted whole after each load:
#   - Databricks AUTO CDC FROM SNAPSHOT (tests/data/autocdc_snapshot/):
#     two snapshots into SCD type 2 (a tracked and an untracked column, a
#     key deleted by absence) and SCD type 1 (upsert, deletes: absent);
#   - dlt's scd2 merge strategy (tests/data/dlt_scd2/): full extracts
#     (an update, then a record gone), an incremental extract that retires
#     nothing, and deletes scoped to the partitions an extract delivers.
# Snapshot loads (scd2 without lmd) are dated by run --as-of: the
# examples' snapshot versions and load times.  make check runs this script
# once more with DWL_ENGINE=pushdown: _engine gives every job that engine
# (the scd2 jobs with deletes: absent too), and each asserts which engine
# it ran on.
. "$TOP_SRCDIR/tests/integration/lib.sh"

export WH_CONN

# ex DIR JOB: the example's job file, with engine: $DWL_ENGINE where that
# engine takes it (lib.sh _engine); prints its path
ex() {
  _engine <"$DATA/$1/$2.yaml" | job "$1_$2"
}

# load DIR JOB FEED [RUN-ARGS...]: runs the example's job on FEED (a file of
# DIR); asserts exit 0
load() {
  _d=$1 _j=$2 _f=$3
  shift 3
  FEED="$DATA/$_d/$_f" dw run "$@" "$(ex "$_d" "$_j")"
  is "$RC" 0 "$_d/$_j, $_f: exit 0"
  [ "$RC" = 0 ] || printf '%s\n' "$ERR" | sed 's/^/# /'
}

# expect DIR FILE QUERY MSG: the query's rows are DIR/expect/FILE
expect() {
  is "$(sqln "$3")" "$(cat "$DATA/$1/expect/$2")" "$4"
}

# ran_on DIR JOB: the job ran on the engine make check asked for (its job
# file names pushdown when DWL_ENGINE does)
ran_on() {
  is "$(grep -c '^  engine: pushdown' "$WORK/$1_$2.yaml")" \
    "$([ "${DWL_ENGINE:-}" = pushdown ] && echo 1 || echo 0)" "$1/$2: the job ran on the engine asked for"
}

# ---- Databricks AUTO CDC FROM SNAPSHOT ------------------------------------------
# The snapshot versions 1 and 2 are loaded --as-of 2024-01-01 and 2024-01-02.
A=autocdc_snapshot
load $A scd2 snapshot_1.csv --as-of 2024-01-01
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "$A scd2, snapshot 1: three keys"
load $A scd2 snapshot_2.csv --as-of 2024-01-02
is "$(counts)" "read=3 skipped=0 inserted=2 expired=1 updated=1 deleted=1 unchanged=0" \
  "$A scd2, snapshot 2: key 2's tracked change, key 3 new, key 4's untracked change in place, key 1 gone"
is "$(cols target_scd2)" "Key,TrackingColumn,NonTrackingColumn,__START_AT,__END_AT" \
  "$A scd2: the table has the example's columns, no more"
expect $A target_scd2 'SELECT * FROM target_scd2 ORDER BY "__START_AT", "Key"' \
  "$A scd2: the whole table is the example's SCD type 2 result"
load $A scd1 snapshot_1.csv
load $A scd1 snapshot_2.csv
is "$(counts)" "read=3 skipped=0 inserted=1 expired=0 updated=2 deleted=1 unchanged=0" \
  "$A scd1, snapshot 2: key 3 inserted, keys 2 and 4 updated, key 1 deleted"
expect $A target_scd1 'SELECT * FROM target_scd1 ORDER BY "Key"' \
  "$A scd1: the whole table is the example's SCD type 1 result"
is "$(grep -c '^  engine: pushdown' "$WORK/${A}_scd1.yaml")" \
  "$([ "${DWL_ENGINE:-}" = pushdown ] && echo 1 || echo 0)" "$A scd1: the job ran on the engine asked for"
# A rerun of the last snapshot changes nothing in either table.
load $A scd2 snapshot_2.csv --as-of 2024-01-02
is "$(counts)" "read=3 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=3" "$A scd2: snapshot 2 again: unchanged"
expect $A target_scd2 'SELECT * FROM target_scd2 ORDER BY "__START_AT", "Key"' "$A scd2: snapshot 2 again: the whole table as before"
ran_on $A scd2

# ---- dlt: scd2 merge strategy, full extracts --------------------------------------
D=dlt_scd2
DC='SELECT "_dlt_valid_from", "_dlt_valid_to", customer_key, c1, c2 FROM dim_customer ORDER BY 1, 3'
load $D dim_customer load_1.csv --as-of "2024-04-09 18:27:53.734235"
expect $D dim_customer_1 "$DC" "$D dim_customer, first run: both records inserted, validity added"
load $D dim_customer load_2.csv --as-of "2024-04-09 22:13:07.943703"
expect $D dim_customer_2 "$DC" "$D dim_customer, second run: customer_key 1's new record, the old one retired"
load $D dim_customer load_3.csv --as-of "2024-04-10 06:45:22.847403"
is "$(field deleted)|$(field absent)" "1|1" "$D dim_customer, third run: one record retired by absence"
expect $D dim_customer_3 "$DC" "$D dim_customer, third run: customer_key 2 retired"
is "$(cols dim_customer)" "customer_key,c1,c2,_dlt_valid_from,_dlt_valid_to" \
  "$D dim_customer: the docs' columns (dlt's _dlt_id/_dlt_load_id aside), no more"
ran_on $D dim_customer

# ---- dlt: incremental scd2, case 1: nothing retired (both engines) ----------------
DI='SELECT "_dlt_valid_from", "_dlt_valid_to", customer_key, c1, c2 FROM dim_customer_incremental ORDER BY 1, 3'
load $D dim_customer_incremental load_1.csv --as-of "2024-04-09 18:27:53.734235"
expect $D dim_customer_1 "$DI" "$D incremental, first run: as the full extract's"
load $D dim_customer_incremental load_3.csv --as-of "2024-04-09 22:13:07.943703"
expect $D dim_customer_incremental_2 "$DI" "$D incremental, second run: customer_key 2 not retired"
is "$(grep -c '^  engine: pushdown' "$WORK/${D}_dim_customer_incremental.yaml")" \
  "$([ "${DWL_ENGINE:-}" = pushdown ] && echo 1 || echo 0)" "$D incremental: the job ran on the engine asked for"

# ---- dlt: incremental scd2, case 2: retired only in the delivered partitions ------
SD='SELECT "_dlt_valid_from", "_dlt_valid_to", "date", name FROM some_data ORDER BY 1, 3, 4'
load $D some_data part_1.csv --as-of "2024-01-02 03:03:35.854305"
expect $D some_data_1 "$SD" "$D some_data, first run: the 2024-01-01 partition"
load $D some_data part_2.csv --as-of "2024-01-03 03:01:11.943703"
expect $D some_data_2 "$SD" "$D some_data, second run: 2024-01-02 added, 2024-01-01 untouched"
load $D some_data part_3.csv --as-of "2024-01-03 10:30:05.750356"
expect $D some_data_3 "$SD" "$D some_data, third run: b retired, bb added, 2024-01-02 untouched"
ran_on $D some_data

done_testing
