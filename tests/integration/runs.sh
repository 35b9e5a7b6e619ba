# Run history: every run leaves a row in dwload_runs.  A committed run's
# row (status committed, its counts, checkpoints before and after, host,
# version) commits with its data; a run a guard refuses is rolled back and
# its row (status rolled back, the error) is written after the rollback.
# `dwload runs` prints them newest first, --limit N of them, --json one
# object per line; the run ids are the summaries'.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# row ID COLUMNS: the run table's row of run ID, '|'-separated
row() {
  sql "select $2 from dwload_runs where run_id = '$1'"
}

csv="$WORK/r.csv"
printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,20,2024-01-01 00:00:00\n3,30,2024-01-01 00:00:00\n' >"$csv"
j=$(mkjob runs "$csv" t_runs '  types: {id: integer, amount: integer}' <<EOF
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: absent
EOF
)

dw runs "$j"
is "$RC" 0 "runs before any run: exit 0"
like "$OUT" "no runs recorded for job runs" "... says no run is recorded"

run_ok "$j" "first run"
id1=$(field run_id)
cp1=$(field checkpoint)
is "$(sql "select count(*) from dwload_runs")" 1 "first run: one row in dwload_runs"
is "$(row "$id1" "job, status, rows_read, inserted, expired, rejected")" \
  "runs|committed|3|3|0|0" "first run: its row says committed, read 3, inserted 3"
is "$(row "$id1" "coalesce(checkpoint_before, 'none'), checkpoint_after")" "none|$cp1" \
  "first run: no checkpoint before, the summary's after"
is "$(row "$id1" "host")" "$(hostname)" "first run: the host"
is "$(row "$id1" "version")" "$("$DWLOAD" --version | awk '{print $2}')" "first run: the dwload version"
is "$(row "$id1" "coalesce(error, 'none')")" "none" "first run: no error"

printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n2,21,2024-01-02 00:00:00\n3,30,2024-01-01 00:00:00\n' >"$csv"
run_ok "$j" "second run"
id2=$(field run_id)
cp2=$(field checkpoint)
is "$(row "$id2" "status, inserted, expired, checkpoint_before, checkpoint_after")" \
  "committed|1|1|$cp1|$cp2" "second run: committed, 1 inserted, 1 expired, checkpoints $cp1 to $cp2"

# two of three keys absent: over load.max_deletes (50%), refused, rolled back
printf 'id,amount,lmd\n1,10,2024-01-01 00:00:00\n' >"$csv"
dw run "$j"
is "$RC" 4 "refused run: exit 4"
id3=$(field run_id)
is "$(row "$id3" "status, rows_read, deleted, checkpoint_before, checkpoint_after")" \
  "rolled back|1|0|$cp2|$cp2" "refused run: its row says rolled back, read 1, deleted 0, the checkpoint unchanged"
like "$(row "$id3" "error")" "max_deletes" "refused run: its row holds the error"
like "$ERR" "recorded run $id3 as rolled back in dwload_runs" "refused run: the log says it was recorded"
is "$(sql "select count(*) from t_runs")" 4 "refused run: the table holds the 4 versions of before"

dw runs "$j"
is "$RC" 0 "dwload runs: exit 0"
is "$(printf '%s\n' "$OUT" | awk '{print $1}' | tr '\n' ' ')" "$id3 $id2 $id1 " "dwload runs: the three runs, newest first"
like "$(printf '%s\n' "$OUT" | head -n 1)" "rolled back  read 1" "dwload runs: the refused run first, rolled back"
like "$(printf '%s\n' "$OUT" | head -n 1)" "error: job runs: deletes: absent would delete 2" "dwload runs: ... with its error"
dw runs --limit 2 "$j"
is "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 2 "dwload runs --limit 2: two lines"
dw runs --json "$j"
is "$RC" 0 "dwload runs --json: exit 0"
is "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join("%s:%s:%s" % (d["run_id"], d["status"], d["inserted"]) for d in map(json.loads, sys.stdin)))')" \
  "$id3:rolled back:0 $id2:committed:1 $id1:committed:3" "dwload runs --json: one object per run, newest first"
dw runs --limit 0 "$j"
is "$RC" 2 "dwload runs --limit 0: exit 2"
dw state --limit 3 "$j"
is "$RC" 2 "--limit on another command: exit 2"

done_testing
