#!/bin/sh
# run --full-refresh and --backfill-from/--backfill-to, per mode: append,
# upsert and replace reload their table from the source in the run's one
# transaction (all or nothing) with the checkpoint from the data; scd2
# refuses a full refresh (it would lose its history) and instead replays
# a time range into the history through late-row repair, the checkpoint
# never moving back.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# rjob NAME TABLE MODE [LOAD-LINES]: a job on $WORK/NAME.csv (${FEED}
# overrides), types id: integer, memory engine
rjob() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: \${FEED:-$WORK/$1.csv}
  types: {id: integer}
target:
  connection: "$WH_CONN"
  table: $2
load:
  mode: $3
  lmd: lmd
${4:-}
EOF
}

cp_of() {
  sqln "SELECT checkpoint FROM dwload_state WHERE job = '$1'"
}

# ---- append -----------------------------------------------------------------
{ echo "id,name,lmd"; gen_rows 1 3 "2024-06-01 00:00:00"; } >"$WORK/ap.csv"
A=$(rjob ap ap_t append)
run_ok "$A" "append: first run"
# The source now holds corrected rows, all dated before the checkpoint.
printf 'id,name,lmd\n1,one fixed,2024-01-01 00:00:00\n4,four,2024-02-01 00:00:00\n' >"$WORK/ap.csv"
dw run "$A"
is "$(field skipped) $(field inserted)" "2 0" "append: a normal run skips the rows before the checkpoint"
BEFORE=$(tdump ap_t id)

dw plan --full-refresh "$A"
is "$RC" 0 "append: plan --full-refresh: exit 0"
is "$(field deleted) $(field inserted)" "3 2" "append: plan --full-refresh says what the run will do"
is "$(tdump ap_t id)" "$BEFORE" "append: plan --full-refresh writes nothing"

dw run --full-refresh "$A"
is "$RC" 0 "append: --full-refresh: exit 0"
is "$(field read) $(field skipped) $(field deleted) $(field inserted)" "2 0 3 2" \
  "append: --full-refresh reads every row, deletes the old ones, inserts the new"
is "$(tdump ap_t id)" "1|one fixed|2024-01-01 00:00:00
4|four|2024-02-01 00:00:00" "append: the table holds the source's rows, and only them"
is "$(cp_of ap)" "2024-02-01 00:00:00" "append: the checkpoint is set from the data (here earlier than before)"
is "$(field checkpoint)" "2024-02-01 00:00:00" "append: the summary says so"

# All or nothing: a run that fails after the table was emptied leaves it.
BEFORE=$(tdump ap_t id)
printf 'id,name,lmd\n5,five,2024-03-01 00:00:00\n6,six,not a date\n' >"$WORK/ap.csv"
dw run --full-refresh "$A"
is "$RC" 4 "append: --full-refresh with a bad row fails"
is "$(tdump ap_t id)" "$BEFORE" "append: the failed full refresh deleted nothing"
is "$(cp_of ap)" "2024-02-01 00:00:00" "append: ... nor moved the checkpoint"

# An empty source is taken for a failed one.
printf 'id,name,lmd\n' >"$WORK/ap.csv"
dw run --full-refresh "$A"
is "$RC" 4 "append: --full-refresh of an empty source fails"
like "$ERR" "--full-refresh would empty ap_t (2 rows)" "append: ... saying it would empty the table"
is "$(tdump ap_t id)" "$BEFORE" "append: ... and writes nothing"
dw run --full-refresh --allow-empty "$A"
is "$RC" 0 "append: with --allow-empty it empties the table"
is "$(sql 'SELECT count(*) FROM ap_t')|$(cp_of ap)" "0|<null>" "append: no rows, no checkpoint"

# ---- upsert (both engines) ------------------------------------------------------
{ echo "id,name,lmd"; gen_rows 1 3 "2024-06-01 00:00:00"; } >"$WORK/up.csv"
U=$(mkjob up "\${FEED:-$WORK/up.csv}" up_t "  types: {id: integer}" <<EOF
load:
  mode: upsert
  key: id
  lmd: lmd
EOF
)
if [ -n "${DWL_ENGINE:-}" ]; then
  like "$(cat "$U")" "engine: $DWL_ENGINE" "upsert: the job runs on engine $DWL_ENGINE"
fi
run_ok "$U" "upsert: first run"
printf 'id,name,lmd\n1,one a,2024-01-01 00:00:00\n1,one b,2024-01-02 00:00:00\n4,four,2024-01-03 00:00:00\n' \
  >"$WORK/up.csv"
dw run --full-refresh "$U"
is "$RC" 0 "upsert: --full-refresh: exit 0"
is "$(field deleted) $(field inserted) $(field unchanged)" "3 2 1" \
  "upsert: the old rows deleted, each key's last row inserted, the superseded one unchanged"
is "$(tdump up_t id)" "1|one b|2024-01-02 00:00:00
4|four|2024-01-03 00:00:00" "upsert: the table holds one row per source key, the last one; keys gone are gone"
is "$(cp_of up)" "2024-01-03 00:00:00" "upsert: the checkpoint is set from the data"
dw run "$U"
is "$(field skipped) $(field inserted) $(field updated)" "3 0 0" "upsert: the next run goes on from there"

# ---- replace --------------------------------------------------------------------
{ echo "id,name,lmd"; gen_rows 1 2 "2024-06-01 00:00:00"; } >"$WORK/rp.csv"
R=$(rjob rp rp_t replace)
run_ok "$R" "replace: first run"
{ echo "id,name,lmd"; gen_rows 7 8 "2024-01-01 00:00:00"; } >"$WORK/rp.csv"
dw run "$R"
is "$(cp_of rp)" "2024-06-01 00:00:00" "replace: a normal run keeps the later stored checkpoint"
dw run --full-refresh "$R"
is "$RC" 0 "replace: --full-refresh: exit 0"
is "$(tdump rp_t id)" "7|row 7|2024-01-01 00:00:00
8|row 8|2024-01-01 00:00:00" "replace: the table holds the source's rows"
is "$(cp_of rp)" "2024-01-01 00:00:00" "replace: --full-refresh sets the checkpoint from the data"

# ---- scd2: no full refresh ---------------------------------------------------------
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n2,x,2024-01-01 00:00:00\n' >"$WORK/sc.csv"
S=$(rjob sc sc_t scd2 "  key: id")
run_ok "$S" "scd2: first run"
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n2,x,2024-01-01 00:00:00\n1,b,2024-01-10 00:00:00\n' >"$WORK/sc.csv"
run_ok "$S" "scd2: second run"
HIST="SELECT id, name, valid_from, valid_to FROM sc_t ORDER BY id, valid_from"
BEFORE=$(sqln "$HIST")
is "$BEFORE" "1|a|2024-01-01 00:00:00|2024-01-10 00:00:00
1|b|2024-01-10 00:00:00|<null>
2|x|2024-01-01 00:00:00|<null>" "scd2: the history before"
dw run --full-refresh "$S"
is "$RC" 2 "scd2: --full-refresh: exit 2"
like "$ERR" "--full-refresh would delete its history" "scd2: ... saying it would delete the history"
like "$ERR" "--backfill-from" "scd2: ... and naming the backfill instead"
is "$(field status)" failed "scd2: the summary says failed"
is "$(sqln "$HIST")" "$BEFORE" "scd2: the refused full refresh changed nothing"

# ---- scd2: backfill ----------------------------------------------------------------
# The source now also has rows dated before the checkpoint, which normal
# runs skip: 1 a2 on 01-05 (in the range), 2 y on 01-02 (before it).
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n2,x,2024-01-01 00:00:00\n2,y,2024-01-02 00:00:00
1,a2,2024-01-05 00:00:00\n1,b,2024-01-10 00:00:00\n' >"$WORK/sc.csv"
dw run "$S"
is "$(field skipped) $(field inserted)" "5 0" "scd2: a normal run skips the rows before the checkpoint"
dw run --backfill-from 2024-01-03 --backfill-to 2024-01-07 "$S"
is "$RC" 0 "scd2: --backfill-from/--backfill-to: exit 0"
is "$(field skipped) $(field late_repaired)" "4 1" "scd2: the one row in the range is replayed, late-repaired"
is "$(sqln "$HIST")" "1|a|2024-01-01 00:00:00|2024-01-05 00:00:00
1|a2|2024-01-05 00:00:00|2024-01-10 00:00:00
1|b|2024-01-10 00:00:00|<null>
2|x|2024-01-01 00:00:00|<null>" "scd2: spliced into the history, which is otherwise kept; the row before the range is not"
is "$(cp_of sc)" "2024-01-10 00:00:00" "scd2: the checkpoint does not move back"
# From before every row: all replayed; only 2 y on 01-02, before the first
# range, is new (a late change of key 2), the rest are no-ops.
dw run --backfill-from 2024-01-01 "$S"
is "$RC|$(field skipped)|$(field inserted)|$(field expired)|$(field updated)" "0|0|1|1|0" \
  "scd2: a wider backfill replays every row; only the row before the first range changes anything"
is "$(sqln "SELECT id, name, valid_from FROM sc_t WHERE id = 2 ORDER BY valid_from")" "2|x|2024-01-01 00:00:00
2|y|2024-01-02 00:00:00" "scd2: ... spliced into key 2's history"
AFTER=$(sqln "$HIST")
dw run --backfill-from 2024-01-01 "$S"
is "$(field inserted) $(field expired) $(field updated) $(field late_repaired)" "0 0 0 0" \
  "scd2: the same backfill again changes nothing"
is "$(sqln "$HIST")" "$AFTER" "scd2: ... and the history is as it was"
is "$(cp_of sc)" "2024-01-10 00:00:00" "scd2: the checkpoint still does not move back"

# A job with load.late: reject is repaired all the same by a backfill.
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n1,b,2024-01-10 00:00:00\n' >"$WORK/lr.csv"
L=$(rjob lr lr_t scd2 "  key: id
  late: reject")
run_ok "$L" "late reject: first run"
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n1,c,2024-01-05 00:00:00\n1,b,2024-01-10 00:00:00\n' >"$WORK/lr.csv"
dw run --backfill-from 2024-01-05 "$L"
is "$RC $(field late_repaired) $(field late_rejected)" "0 1 0" "late reject: the backfill repairs the late row"
is "$(sql "SELECT name FROM lr_t ORDER BY valid_from" | paste -sd, -)" "a,c,b" "late reject: spliced in"

# Pushdown: the keys with late rows go to the memory engine, which
# repairs their history: the same backfill, the same history; with
# deletes: absent (a: every key delivered, none absent) and with truncate
# rows (t: an empty delete column, none truncates) too.
# (pm: the same runs with the memory engine)
for v in "" a t; do
  case $v in
    a) del="
  deletes: absent" lab=", deletes: absent" ;;
    t) del="
  deletes: {column: op, values: [D], truncate_values: [T]}" lab=", truncate_values" ;;
    *) del= lab= ;;
  esac
  for e in m d; do
    printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n2,x,2024-01-01 00:00:00\n1,b,2024-01-10 00:00:00\n' \
      >"$WORK/p$e$v.csv"
    P=$(rjob "p$e$v" "p$e${v}_t" scd2 "  key: id
  engine: $([ $e = m ] && echo memory || echo pushdown)$del")
    # (truncates: the feeds with an empty op column)
    feed() { if [ "$v" = t ]; then sed -e '1s/,lmd$/,op,lmd/' -e '2,$s/,\([^,]*\)$/,,\1/' "$1"; else cat "$1"; fi; }
    feed "$WORK/p$e$v.csv" >"$WORK/p$e$v.tmp" && mv "$WORK/p$e$v.tmp" "$WORK/p$e$v.csv"
    run_ok "$P" "pushdown ($e$v): first run"
    feed "$WORK/sc.csv" >"$WORK/p$e$v.csv"
    dw run --backfill-from 2024-01-01 "$P"
    eval "rc_$e=\$RC counts_$e=\"\$(counts) \$(field late_repaired) \$(field absent)\""
  done
  is "$rc_d|$(field engine)" "0|pushdown" "pushdown$lab: --backfill-from: exit 0"
  is "$counts_d" "$counts_m" "pushdown$lab: --backfill-from: the memory engine's counts"
  is "$(sqln "SELECT id, name, valid_from, valid_to FROM pd${v}_t ORDER BY id, valid_from")" "$AFTER" \
    "pushdown$lab: --backfill-from: the memory engine's history"
done

# ---- usage --------------------------------------------------------------------------
dw run --backfill-to 2024-01-01 "$S"
is "$RC" 2 "--backfill-to alone: exit 2"
dw run --full-refresh --backfill-from 2024-01-01 "$A"
is "$RC" 2 "--full-refresh with --backfill-from: exit 2"
dw run --backfill-from 2024-01-09 --backfill-to 2024-01-02 "$S"
is "$RC" 2 "--backfill-to before --backfill-from: exit 2"
like "$ERR" "is before --backfill-from" "... says so"
dw run --backfill-from yesterday "$S"
is "$RC" 2 "--backfill-from that is no timestamp: exit 2"
like "$ERR" "'yesterday' is not a timestamp" "... says so"
dw run --backfill-from 2024-01-01 "$A"
is "$RC" 2 "--backfill-from for an append job: exit 2"
like "$ERR" "use --full-refresh" "... names --full-refresh"
dw state --full-refresh "$A"
is "$RC" 2 "--full-refresh with state: usage error"
is "$(sqln "$HIST")" "$AFTER" "refused commands changed nothing"

done_testing
