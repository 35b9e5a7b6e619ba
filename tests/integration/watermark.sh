# load.watermark (dwload-job(5), WATERMARK): with the default, checkpoint,
# rows at or before the checkpoint are skipped; with none, no row is
# skipped: each is compared with its key's current version by lmd and
# fingerprint, so an update a lagging source node dated before the last
# run's maximum is kept (dbt's timestamp strategy compares per key too),
# and a row before its key's current version is a late row (load.late).
# The jobs of tests/data/watermark: the same three extracts through both,
# tables asserted whole.  Pushdown gives the same table (its keys with late
# rows go to the memory engine), with deletes: absent or truncate rows too.
. "$TOP_SRCDIR/tests/integration/lib.sh"

S="$DATA/watermark"
DWL_CONN=$WH_CONN
export DWL_CONN

# feed N WM: extract skew_N.csv through job skew_WM
feed() {
  FEED=skew_$1.csv dw run "$S/skew_$2.yaml"
  is "$RC" 0 "$2, extract $1: exit 0"
  [ "$RC" = 0 ] || echo "# stderr: $ERR"
}
late() {
  printf '%s' "$LAST" | python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["late_repaired"])'
}

# ---- the default: the checkpoint skips the backdated update ------------------
feed 1 checkpoint
is "$(field checkpoint)" "2024-01-05 00:00:00" "checkpoint, extract 1: the checkpoint is Rome's lmd"
feed 2 checkpoint
is "$(counts)" "read=4 skipped=4 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" \
  "checkpoint, extract 2: Bergen (2024-01-04) and Nice (2024-01-03) are at or before the checkpoint: skipped, lost"
feed 3 checkpoint
is "$(counts)" "read=5 skipped=5 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "checkpoint, extract 3: all skipped"
is "$(tdump skew_checkpoint dim_id)" \
"1|1|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|<null>|1|0
2|2|Rome|2024-01-05 00:00:00|2024-01-05 00:00:00|<null>|1|0" \
  "checkpoint: the whole table misses the backdated changes"

# ---- watermark: none: every row compared with its key -----------------------
feed 1 none
feed 2 none
is "$(counts)" "read=4 skipped=0 inserted=2 expired=1 updated=0 deleted=0 unchanged=2" \
  "none, extract 2: Bergen is later than Oslo's version: kept; Nice new; the rows already loaded unchanged"
is "$(field checkpoint)" "2024-01-05 00:00:00" "none, extract 2: the checkpoint is still stored (for state)"
feed 3 none
is "$(counts)" "read=5 skipped=0 inserted=1 expired=0 updated=0 deleted=0 unchanged=4" \
  "none, extract 3: Pisa (2024-01-02) is before Rome's version: a late row; the rest unchanged"
is "$(late)" 1 "none, extract 3: the late row repaired into Rome's history (load.late: repair)"
expected="1|1|Oslo|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-01-04 00:00:00|0|0
2|2|Rome|2024-01-05 00:00:00|2024-01-05 00:00:00|<null>|1|0
3|1|Bergen|2024-01-04 00:00:00|2024-01-04 00:00:00|<null>|1|0
4|3|Nice|2024-01-03 00:00:00|2024-01-03 00:00:00|<null>|1|0
5|2|Pisa|2024-01-02 00:00:00|2024-01-02 00:00:00|2024-01-05 00:00:00|0|0"
is "$(tdump skew_none dim_id)" "$expected" "none: the whole table keeps the backdated update, the new key and the late row"
feed 3 none
is "$(counts)" "read=5 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=5" "none, extract 3 again: all unchanged"
is "$(tdump skew_none dim_id)" "$expected" "none, extract 3 again: the table unchanged"

# ---- with load.late: reject the late row fails the run, nothing written -------
sed -e 's/job: skew_none/job: skew_reject/' -e 's/table: skew_none/table: skew_reject/' \
    -e 's/^  watermark: none$/  watermark: none\n  late: reject/' "$S/skew_none.yaml" >"$WORK/skew_reject.yaml"
FEED=$S/skew_2.csv dw run "$WORK/skew_reject.yaml"
FEED=$S/skew_1.csv dw run "$WORK/skew_reject.yaml"
is "$RC" 0 "late: reject, extract 1 after 2: exit 0 (Oslo and Rome at their versions: unchanged)"
is "$(counts)" "read=2 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=2" "late: reject, the same rows again: unchanged"
before=$(tdump skew_reject dim_id)
FEED=$S/skew_3.csv dw run "$WORK/skew_reject.yaml"
is "$RC" 1 "late: reject, the late Pisa row: exit 1"
like "$ERR" "skew_3.csv:4: key (id='2') has lmd 2024-01-02 00:00:00, before the key's stored history ends (2024-01-05 00:00:00): a late row, and load.late is reject" "late: reject names the late row"
is "$(tdump skew_reject dim_id)" "$before" "late: reject: nothing written"

# ---- pushdown: the same extracts, the same table -----------------------------
# (the key with the late Pisa row goes to the memory engine, which repairs
# its history: pushdown_take_late); with deletes: absent too (skew_pda:
# every key is in each extract, none absent; pd_hands_all)
sed -e 's/^load:$/load:\n  engine: pushdown/' -e 's/job: skew_none/job: skew_pd/' \
    -e 's/table: skew_none/table: skew_pd/' "$S/skew_none.yaml" >"$WORK/skew_pd.yaml"
sed -e 's/^  watermark: none$/  watermark: none\n  deletes: absent/' -e 's/skew_pd$/skew_pda/' \
  "$WORK/skew_pd.yaml" >"$WORK/skew_pda.yaml"
for t in skew_pd skew_pda; do
  for x in 1 2 3; do
    FEED=$S/skew_$x.csv dw run "$WORK/$t.yaml"
    is "$RC $(field engine)" "0 pushdown" "$t, extract $x: exit 0"
  done
  is "$(counts) $(late) $(field absent)" "read=5 skipped=0 inserted=1 expired=0 updated=0 deleted=0 unchanged=4 1 0" \
    "$t, extract 3: the memory engine's counts, the late row repaired"
  is "$(tdump $t dim_id)" "$expected" "$t: the memory engine's whole table"
done

# ... and with truncate rows (city the delete column, T none of its
# values): pushdown (skew_pdt) against the same job on the memory engine
for e in pushdown memory; do
  sed -e "s/^load:\$/load:\n  engine: $e/" -e 's/^  watermark: none$/  watermark: none\n  deletes: {column: city, values: [D], truncate_values: [T]}/' \
    -e "s/skew_none\$/skew_t$e/" "$S/skew_none.yaml" >"$WORK/skew_t$e.yaml"
  for x in 1 2 3; do
    FEED=$S/skew_$x.csv dw run "$WORK/skew_t$e.yaml"
    is "$RC $(field engine)" "0 $e" "skew_t$e, extract $x: exit 0"
  done
  eval "c_$e=\"\$(counts) \$(late)\""
done
is "$c_pushdown" "$c_memory" "truncate_values, extract 3: pushdown's counts are the memory engine's"
is "${c_pushdown##* }" 1 "truncate_values, extract 3: the late row repaired"
is "$(tdump skew_tpushdown dim_id)" "$(tdump skew_tmemory dim_id)" "truncate_values: the memory engine's whole table"

done_testing
