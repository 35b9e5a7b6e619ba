# Late rows in mode upsert through the real binary: an older row never
# overwrites a newer one (per key, by the lmd the table holds), as AUTO
# CDC's SCD type 1 keeps the latest by sequence.  load.lookback rereads
# rows before the checkpoint; load.late says what a late row does
# (repair: left out; ignore; reject), on both engines (pushdown refuses
# lookback; a checkpoint set back gives it late rows).  The
# Databricks AUTO CDC SCD type 1 example, tests/data/autocdc_scd1/, whole.
. "$TOP_SRCDIR/tests/integration/lib.sh"


# ---- the Databricks example, one delivery ----------------------------------
DATA="$TOP_SRCDIR/tests/data/autocdc_scd1"
export FEED="$DATA/users.csv" WH_CONN
j=$(_engine <"$DATA/job.yaml" | job autocdc)
run_ok "$j" "autocdc: the example loads"
is "$(counts)" "read=8 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=5" \
  "autocdc: three keys inserted; the superseded rows and 123's delete of a key never stored are no-ops"
is "$(tdump users 1)" "$(cat "$DATA/expect")" \
  "autocdc: the whole table is Databricks' SCD type 1 result (123 deleted: its UPDATE at 5 is older than the DELETE at 6)"
is "$(cols users)" "userId,name,city" "autocdc: neither the op nor the sequence column in the table"
dw run "$j"
is "$RC|$(counts)" "0|read=8 skipped=8 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" \
  "autocdc: a rerun skips every row (not past the checkpoint)"

# ---- the example in two deliveries, the sequence kept in the table ----------
# The second delivery brings a row older than the stored one (125 at 5,
# stored at 6) and a new key dated before the checkpoint, which only
# load.lookback reads.
head -n 7 "$DATA/users.csv" >"$WORK/u1.csv"
printf '%s\n' "userId,name,city,operation,sequenceNum" "126,Lily,Cancun,INSERT,2" \
  "125,Mercedes,Mexicali,UPDATE,5" >"$WORK/u2.csv"
sjob() {
  mkjob "$1" "$WORK/u1.csv" users2 "  types: {sequenceNum: integer}" <<EOF
columns:
  exclude: [operation]
load:
  mode: upsert
  key: [userId]
  lmd: sequenceNum
  deletes: {column: operation, values: [DELETE]}
  lookback: 10
$2
EOF
}
j=$(sjob split "")
run_ok "$j" "split: first delivery"
is "$(tdump users2 1)" \
"124|Raul|Oaxaca|1
125|Mercedes|Guadalajara|6" "split: the first delivery's table"
cp "$WORK/u2.csv" "$WORK/u1.csv"
dw run "$j"
is "$RC|$(field late_repaired)|$(field inserted)|$(field updated)|$(field unchanged)" "0|1|1|0|0" \
  "split: the late row is left out and counted as repaired, the new key inserted"
is "$(tdump users2 1)" \
"124|Raul|Oaxaca|1
125|Mercedes|Guadalajara|6
126|Lily|Cancun|2" "split: the whole table is the example's result again"

# ---- load.late, one key at a time ----------------------------------------------
csv=$(file l.csv <<'EOF'
id,v,lmd
1,a,2024-01-05 00:00:00
2,b,2024-01-05 00:00:00
EOF
)
ljob() {
  mkjob "$1" "$csv" "$2" <<EOF
load:
  mode: upsert
  key: [id]
  lmd: lmd
  lookback: 7d
$3
EOF
}
# first / second: the feed of a job's first and second run
first() {
  printf '%s\n' "id,v,lmd" "1,a,2024-01-05 00:00:00" "2,b,2024-01-05 00:00:00" >"$WORK/l.csv"
}
second() {
  cat >"$WORK/l.csv" <<'EOF'
id,v,lmd
1,old,2024-01-03 00:00:00
2,new,2024-01-06 00:00:00
3,c,2024-01-04 00:00:00
1,a,2024-01-05 00:00:00
EOF
}
AFTER="1|a|2024-01-05 00:00:00
2|new|2024-01-06 00:00:00
3|c|2024-01-04 00:00:00"
for late in repair ignore; do
  first
  j=$(ljob "l_$late" "t_$late" "  late: $late")
  run_ok "$j" "late $late: first run"
  second
  dw run "$j"
  is "$RC|$(counts)" "0|read=4 skipped=0 inserted=1 expired=0 updated=1 deleted=0 unchanged=1" \
    "late $late: the new key inserted, the newer row applied, the reread row unchanged"
  is "$(field late_repaired)|$(field late_ignored)" "$([ $late = repair ] && echo '1|0' || echo '0|1')" \
    "late $late: the older row counted as $late"
  is "$(tdump t_$late 1)" "$AFTER" "late $late: the whole table: the older row did not overwrite key 1"
done

# reject: the run fails naming the row, nothing written; with a reject
# file the row goes there and the rest is applied.
first
j=$(ljob l_rj t_rj "  late: reject")
run_ok "$j" "late reject: first run"
before=$(tdump t_rj 1)
second
dw run "$j"
is "$RC" 1 "late reject: a late row fails the run"
like "$ERR" "l.csv:2: key (id='1') has lmd 2024-01-03 00:00:00, before the stored row's lmd (2024-01-05 00:00:00): a late row, and load.late is reject" \
  "late reject: the message names the row, the stored lmd and why"
is "$(tdump t_rj 1)" "$before" "late reject: nothing written, not even the other keys' changes"
first
j=$(ljob l_rf t_rf "  late: reject
  max_rejects: 1
  reject_file: l.rejects.csv")
run_ok "$j" "late reject, reject file: first run"
second
dw run "$j"
is "$RC|$(field late_rejected)|$(field rejected)|$(field inserted)|$(field updated)" "0|1|1|1|1" \
  "late reject, reject file: the late row set aside and counted, the rest applied"
like "$(cat "$WORK/l.rejects.csv")" "l.csv,2,\"key (id='1') has lmd 2024-01-03 00:00:00, before the stored row's lmd" \
  "late reject, reject file: the file names the row and why"
is "$(tdump t_rf 1)" "$AFTER" "late reject, reject file: the whole table"

# ---- equal lmd: the delivered row is not late; it replaces the stored one ---
sed -i '1!d' "$WORK/l.csv" && printf '%s\n' "1,a,2024-01-05 00:00:00" >>"$WORK/l.csv"
j=$(ljob l_eq t_eq "")
run_ok "$j" "equal lmd: first run"
printf '%s\n' "id,v,lmd" "1,z,2024-01-05 00:00:00" >"$WORK/l.csv"
dw run "$j"
is "$RC|$(field updated)|$(field late_repaired)" "0|1|0" "equal lmd: not late, the row replaces the stored one"
is "$(tdump t_eq 1)" "1|z|2024-01-05 00:00:00" "equal lmd: the whole table"

# ---- without lookback: the checkpoint moved back --------------------------------
# Rows past the checkpoint can still be older than a key's stored row
# (a checkpoint set back with dwload state --set); they never overwrite it.
printf '%s\n' "id,v,lmd" "1,a,2024-01-05 00:00:00" "2,b,2024-01-02 00:00:00" >"$WORK/l.csv"
j=$(mkjob l_set "$csv" t_set <<'EOF'
load:
  mode: upsert
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "state --set: first run"
dw state --set "2024-01-01 00:00:00" "$j"
is "$RC" 0 "state --set: the checkpoint moved back"
printf '%s\n' "id,v,lmd" "1,old,2024-01-04 00:00:00" "2,newer,2024-01-03 00:00:00" >"$WORK/l.csv"
dw run "$j"
# (both engines: pushdown sets late rows apart too, pushdown_late.c)
is "$RC|$(field late_repaired)|$(field updated)" "0|1|1" "state --set: the older row left out, the newer applied"
is "$(tdump t_set 1)" "1|a|2024-01-05 00:00:00
2|newer|2024-01-03 00:00:00" "state --set: the whole table"

# ---- pushdown: load.lookback in upsert, as with memory -----------------------
first
j=$(ljob l_pd t_pd "  engine: pushdown")
run_ok "$j" "pushdown, lookback: first run"
second
dw run "$j"
is "$RC|$(counts)|$(field late_repaired)|$(field engine)" \
  "0|read=4 skipped=0 inserted=1 expired=0 updated=1 deleted=0 unchanged=1|1|pushdown" \
  "pushdown, lookback: the memory engine's counts"
is "$(tdump t_pd 1)" "$AFTER" "pushdown, lookback: the whole table"

done_testing
