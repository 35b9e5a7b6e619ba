#!/bin/sh
# Append mode with an lmd checkpoint across runs, lmd compared as
# timestamps, and the shape of the JSON summary.
. "$TOP_SRCDIR/tests/integration/lib.sh"

SPINE="$DATA/spine"

# append_job NAME TABLE CSV: an append job with lmd over CSV
append_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $3
target:
  connection: "$WH_CONN"
  table: $2
load:
  mode: append
  lmd: lmd
EOF
}

# state COLUMNS JOB: columns of the job's row in dwload_state
state() {
  sql "SELECT $1 FROM dwload_state WHERE job = '$2'"
}

# rows QUERY: the rows of a query on one line, separated by spaces, the
# fields of a row joined by ':'
rows() {
  sql "$1" | tr '|\n' ': ' | sed 's/ $//'
}

J=$(append_job sales sales "$SPINE/append_1.csv")

# ---- run 1: everything is new --------------------------------------------
dw run "$J"
is "$RC" 0 "run 1 exits 0"
is "$(printf '%s\n' "$OUT" | wc -l)" 1 "run 1: stdout holds only the summary line"
is "$(field status)" ok "run 1: status ok"
is "$(field mode)" append "run 1: mode append"
is "$(field job)" sales "run 1: job named"
is "$(field read)" 4 "run 1: read 4"
is "$(field inserted)" 4 "run 1: inserted 4"
is "$(field skipped)" 0 "run 1: skipped 0"
# The greatest lmd is on the second row, not the last.
is "$(field checkpoint)" "2023-11-22 10:00:00" "run 1: checkpoint is the greatest lmd"
like "$ERR" "info:" "run 1: logs go to stderr"
is "$(sql 'SELECT count(*) FROM sales')" 4 "run 1: table has 4 rows"
is "$(rows 'SELECT id, name FROM sales ORDER BY id')" \
  "1:Alice 2:Bob 3:Carol 4:Dave" "run 1: table holds the file's rows"
is "$(state 'checkpoint, last_status, last_mode, rows_read, skipped, inserted' sales)" \
  "2023-11-22 10:00:00|ok|append|4|0|4" "run 1: state row holds checkpoint and counts"
is "$(state 'CASE WHEN running_since IS NULL AND running_pid IS NULL AND last_error IS NULL THEN 1 ELSE 0 END' sales)" 1 \
  "run 1: state row shows no run in progress and no error"
is "$(state 'CASE WHEN last_run_at IS NOT NULL THEN 1 ELSE 0 END' sales)" 1 "run 1: last_run_at set"
is "$(cols dwload_state)" \
  "job,checkpoint,last_run_at,last_status,last_mode,rows_read,skipped,inserted,expired,updated,deleted,unchanged,rejected,seconds,running_since,running_host,running_pid,last_error,run_id" \
  "dwload_state has the documented columns"

# The summary: one JSON object with exactly these keys in this order.
KEYS=$(printf '%s' "$LAST" | python3 -c '
import json, sys
print(",".join(k for k, _ in json.loads(sys.stdin.read(), object_pairs_hook=list)))')
is "$KEYS" "job,status,mode,run_id,read,skipped,inserted,expired,updated,deleted,unchanged,rejected,late_repaired,late_rejected,late_ignored,absent,widened,guard,checkpoint,seconds" \
  "summary has exactly the documented keys, in order"
is "$(printf '%s' "$LAST" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(all(isinstance(d[k], int) and not isinstance(d[k], bool) for k in
  ("read", "skipped", "inserted", "expired", "updated", "deleted", "unchanged", "rejected", "late_repaired",
   "late_rejected", "late_ignored"))
  and isinstance(d["seconds"], (int, float)))')" True "summary counts are integers, seconds a number"

# ---- run 2: older rows are skipped, newer ones appended -----------------
J=$(append_job sales sales "$SPINE/append_2.csv")
dw run "$J"
is "$RC" 0 "run 2 exits 0"
is "$(field read)" 8 "run 2: read 8"
is "$(field inserted)" 3 "run 2: inserted only the 3 rows past the checkpoint"
is "$(field skipped)" 5 "run 2: skipped the 5 rows at or before the checkpoint"
is "$(field checkpoint)" "2023-11-24 08:00:00" "run 2: checkpoint moves to the greatest lmd"
is "$(sql 'SELECT count(*) FROM sales')" 7 "run 2: table has 7 rows"
is "$(rows 'SELECT id FROM sales ORDER BY id')" "1 2 3 4 5 6 7" \
  "run 2: new rows appended, old ones not duplicated"
is "$(sql "SELECT count(*) FROM sales WHERE id = '9'")" 0 \
  "run 2: a new key with an lmd older than the checkpoint is skipped"
is "$(state 'checkpoint, rows_read, skipped, inserted' sales)" \
  "2023-11-24 08:00:00|8|5|3" "run 2: state row updated"

# ---- run 3: the same file again adds nothing ------------------------------
BEFORE=$(sql 'SELECT * FROM sales ORDER BY id')
dw run "$J"
is "$RC" 0 "rerun exits 0"
is "$(field inserted)" 0 "rerun: inserted 0"
is "$(field skipped)" "$(field read)" "rerun: skipped equals read"
is "$(field read)" 8 "rerun: read 8"
is "$(field checkpoint)" "2023-11-24 08:00:00" "rerun: checkpoint unchanged"
is "$(sql 'SELECT * FROM sales ORDER BY id')" "$BEFORE" "rerun: table unchanged"
is "$(state 'checkpoint, rows_read, skipped, inserted' sales)" \
  "2023-11-24 08:00:00|8|8|0" "rerun: state row records the empty run"

# ---- lmd values are compared as timestamps, not as strings ---------------
F1=$(file ts_1.csv <<'EOF'
id,lmd
1,2023-11-22 10:00:00
EOF
)
T=$(append_job stamps stamps "$F1")
dw run "$T"
is "$(field checkpoint)" "2023-11-22 10:00:00" "timestamps: first checkpoint"

# As strings, every one of these sorts after "2023-11-22 10:00:00" except
# row 11; as instants, 10, 13 and 15 are past it and the rest are not.
F2=$(file ts_2.csv <<'EOF'
id,lmd
10,2023-11-22T10:30:00
11,2023-11-22
12,2023-11-22T12:00:00+02:00
13,2023-11-22 10:00:00.5
14,2023-11-22T09:00:00
15,2023-11-22T07:00:00-05:00
16,2023-11-22T11:59:59+02:00
EOF
)
T=$(append_job stamps stamps "$F2")
dw run "$T"
is "$RC" 0 "timestamps: run exits 0"
is "$(rows 'SELECT id FROM stamps ORDER BY id')" "1 10 13 15" \
  "timestamps: only rows past the checkpoint as instants are loaded"
is "$(field inserted)" 3 "timestamps: inserted 3"
is "$(field skipped)" 4 "timestamps: skipped 4 (date only, equal instant in another zone, earlier)"
# 07:00-05:00 is 12:00 UTC: the greatest instant, though not the greatest string.
is "$(field checkpoint)" "2023-11-22 12:00:00" "timestamps: checkpoint is the greatest instant, in UTC"

# A date-only checkpoint is midnight of that day.
F1=$(file dates_1.csv <<'EOF'
id,lmd
1,2023-11-22
2,2023-11-21
EOF
)
D=$(append_job dates dates "$F1")
dw run "$D"
is "$(field checkpoint)" "2023-11-22 00:00:00" "dates: an undeclared lmd column holds timestamps: a date is its midnight"
F2=$(file dates_2.csv <<'EOF'
id,lmd
3,2023-11-22 00:00:00
4,2023-11-22 00:00:01
5,2023-11-22T10:00:00.250Z
6,2023-11-22
EOF
)
D=$(append_job dates dates "$F2")
dw run "$D"
is "$(rows 'SELECT id FROM dates ORDER BY id')" "1 2 4 5" \
  "dates: midnight of the checkpoint's day is not past it, a second later is"
is "$(field checkpoint)" "2023-11-22 10:00:00.250000" "dates: fractional seconds kept in the checkpoint"

# An lmd column declared a date keeps dates: in the table, in the checkpoint,
# and a value with a time of day is refused.
F1=$(file days_1.csv <<'EOF'
id,lmd
1,2023-11-22
2,21-11-2023
EOF
)
job days <<EOF >/dev/null
version: 1
job: days
source:
  plugin: csv
  path: $F1
  types: {lmd: date}
target:
  connection: "$WH_CONN"
  table: days
load:
  mode: append
  lmd: lmd
EOF
dw run "$WORK/days.yaml"
is "$RC" 4 "declared dates: a value that is not ISO 8601 fails the run (exit 4)"
like "$ERR" "days_1.csv:3" "declared dates: the message names the row"
printf 'id,lmd\n1,2023-11-22\n2,2023-11-21\n' >"$F1"
dw run "$WORK/days.yaml"
is "$(field checkpoint)" "2023-11-22" "declared dates: the checkpoint is a date"
is "$(sql 'SELECT lmd FROM days ORDER BY id')" "2023-11-22
2023-11-21" "declared dates: the table holds dates"
printf 'id,lmd\n3,2023-11-23 10:00:00\n' >"$F1"
dw run "$WORK/days.yaml"
is "$RC" 4 "declared dates: a time of day fails the run (exit 4)"
like "$ERR" "has a time of day" "declared dates: the message says why"
is "$(sql 'SELECT count(*) FROM days')" 2 "declared dates: the failed run wrote nothing"

# ---- values that outgrow their batch's buffers ------------------------------
# Full batches keep their parameters bound to buffers of the statement's
# own (SQLite, MariaDB; PostgreSQL sends arrays), which start small and
# grow when a value does not fit: long values in the middle of full
# batches, after short ones and before short ones again, arrive whole, and
# their neighbours unchanged.
awk 'BEGIN { print "id,note,lmd"
  for (i = 1; i <= 1500; i++) {
    n = (i == 700) ? 70000 : (i == 1100) ? 3000 : (i % 50 == 0) ? 40 + i : 5
    s = sprintf("%*s", n, ""); gsub(/ /, substr("abcdefghij", i % 10 + 1, 1), s)
    printf "%d,%s,2024-01-01 00:00:00\n", i, s
  } }' >"$WORK/long.csv"
dw run "$(append_job long long_notes "$WORK/long.csv")"
is "$RC" 0 "values outgrowing the batch buffers: exit 0"
is "$(sql "SELECT count(*), sum(length(note)) FROM long_notes")" \
   "$(awk -F, 'NR > 1 { n++; s += length($2) } END { print n "|" s }' "$WORK/long.csv")" \
   "every row arrives with its whole value (the 70000- and 3000-character ones too)"
is "$(sql "SELECT length(note) FROM long_notes WHERE id IN ('699', '700', '701', '1100') ORDER BY length(id), id" | paste -sd' ' -)" \
   "5 70000 5 3000" "the long values and their neighbours, exactly"

# Inserts go in sets of rows (MariaDB: one-row statements executed for a
# parameter set, sent as one bulk command; elsewhere multi-row VALUES or
# arrays).  NULLs in the middle of a set stay NULL, and a row that fails in
# the middle of a later set fails the run with nothing written.
sql "CREATE TABLE dup (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40), n BIGINT)"
awk 'BEGIN { print "id,note,n"
  for (i = 1; i <= 4500; i++)
    printf "%d,%s,%s\n", (i == 4100 ? 7 : i), (i % 3 == 0 ? "" : "note " i), (i % 7 == 0 ? "" : i) }' >"$WORK/dup.csv"
job dup <<EOF >/dev/null
version: 1
job: dup
source:
  plugin: csv
  path: $WORK/dup.csv
  types: {id: integer, n: integer}
target:
  connection: "$WH_CONN"
  table: dup
load:
  mode: append
EOF
dw run "$WORK/dup.yaml"
is "$RC $(sql "SELECT count(*) FROM dup")" "1 0" "a duplicate key in the third set of rows: exit 1, nothing written"
like "$ERR" "inserting into dup" "the error names the table"
sed -i 's/^7,note 4100,/4600,note 4100,/' "$WORK/dup.csv"
dw run "$WORK/dup.yaml"
is "$RC $(sql "SELECT count(*), count(note), count(n), sum(n) FROM dup")" \
   "0 $(awk -F, 'NR > 1 { r++; if ($2 != "") c++; if ($3 != "") { k++; s += $3 } } END { print r "|" c "|" k "|" s }' "$WORK/dup.csv")" \
   "without it every row arrives, its NULLs NULL and its values whole"
is "$(sql "SELECT id, note, n FROM dup WHERE id IN (3, 7, 14, 4099, 4600) ORDER BY id" | paste -sd' ' -)" \
   "$(awk -F, '$1 == 3 || $1 == 7 || $1 == 14 || $1 == 4099 || $1 == 4600 { print $1 "|" $2 "|" $3 }' "$WORK/dup.csv" |
      sort -n | paste -sd' ' -)" "NULLs and values in place in the middle of sets"

done_testing
