#!/bin/sh
# An integer load.lmd: a sequence (a version number, a log sequence
# number), compared as a 64-bit integer, never as text (9 < 10, 99 < 100),
# its checkpoint stored as its integer text and checked against the lmd's
# type on the next run; valid_from/valid_to hold the sequence values, as
# AUTO CDC's __START_AT/__END_AT do (the Databricks SCD type 2 example,
# whole table); late rows by sequence with lookback as a count; an ODBC
# source's integer column with the checkpoint pushed down; the refusals
# (close, deletes: absent, a duration lookback; a composite lmd is
# sequence_composite.sh's).
. "$TOP_SRCDIR/tests/integration/lib.sh"


case $WAREHOUSE in
  sqlite) BIG=INTEGER Q='"' ;;
  postgresql) BIG=BIGINT Q='"' ;;
  mariadb) BIG=BIGINT Q='`' ;;
esac
# stored JOB: the job's checkpoint as dwload_state holds it
stored() { sql "SELECT checkpoint FROM dwload_state WHERE job = '$1'"; }

# ---- the Databricks AUTO CDC SCD type 2 example -----------------------------
# cdc_data.users, `SEQUENCE BY sequenceNum COLUMNS * EXCEPT (operation,
# sequenceNum) STORED AS SCD TYPE 2`, as the job tests/data/autocdc_scd2/
# job.yaml, its rows as Databricks lists them.
DATA="$TOP_SRCDIR/tests/data/autocdc_scd2"
csv=$(file users.csv <"$DATA/users.csv")
export FEED="$csv" WH_CONN
# cdc_job NAME [LOAD-LINES] [DIMENSION-LINES] [TABLE]: the example's job
# named NAME, with LOAD-LINES and DIMENSION-LINES added to its sections,
# into TABLE (default users)
cdc_job() {
  awk -v name="$1" -v loadl="${2:-}" -v dim="${3:-}" -v table="${4:-users}" '
    /^job: / { print "job: " name; next }
    /^  table: / { print "  table: " table; next }
    { print }
    /^  deletes: / && loadl != "" { print loadl }
    /^  valid_to: / && dim != "" { print dim }' "$DATA/job.yaml" | _engine | job "$1"
}
j=$(_engine <"$DATA/job.yaml" | job autocdc_scd2)
dw plan --sql "$j"
like "$OUT" "${Q}__START_AT${Q} $BIG" "AUTO CDC: plan creates __START_AT as an integer column"
like "$OUT" "${Q}__END_AT${Q} $BIG" "AUTO CDC: plan creates __END_AT as an integer column"
run_ok "$j" "AUTO CDC: the example loads"
is "$(counts)" "read=8 skipped=0 inserted=7 expired=0 updated=0 deleted=1 unchanged=0" "AUTO CDC: counts"
is "$(tdump users '1, 4')" "$(cat "$DATA/expect")" "AUTO CDC: the whole table is Databricks' SCD type 2 result, sequence values in __START_AT/__END_AT"
is "$(sqln "SELECT ${Q}userId${Q} FROM users WHERE ${Q}__START_AT${Q} > 4 AND ${Q}__START_AT${Q} < 10 ORDER BY 1" | tr '\n' ' ')" \
  "123 125 125 " "AUTO CDC: __START_AT compares as a number in the warehouse"
is "$(stored autocdc_scd2)" "6" "AUTO CDC: the checkpoint is the integer 6"

dw asof "$j" --at 2024-01-01
is "$RC" 2 "asof: validity in sequence values is refused (exit 2), not an empty answer"
like "$ERR" "holds integer sequence values (load.lmd is an integer), not points in time" "asof: says why"
is "$OUT" "" "asof: the refusal prints nothing on stdout, not even the CSV header"

before=$(tdump users '1, 4')
dw run --backfill-from 2024-01-01 "$j"
is "$RC" 2 "backfill: a time range with a sequence is refused (exit 2)"
like "$ERR" "--backfill-from replays a time range, and load.lmd 'sequenceNum' is an integer sequence" \
  "backfill: says why"
is "$(tdump users '1, 4')|$(stored autocdc_scd2)" "$before|6" "backfill: nothing written"

# TRACK HISTORY ON * EXCEPT (city): a change of city alone overwrites the
# version in place (type1), a change of name starts a version.
j=$(_engine <"$DATA/track_history.yaml" | job autocdc_track_history)
run_ok "$j" "track history except city: loads"
is "$(tdump users_t1 '1, 4')" "$(cat "$DATA/expect_track_history")" "track history except city: the whole table, Mercedes' moves in place"
j=$(cdc_job autocdc_scd2)

# Sequences 10 and 9 after a checkpoint of 6: as text "10" < "6" would be
# skipped and "9" would come after "10".
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
126,Lily,Puebla,UPDATE,10
124,Raul,Merida,UPDATE,9
124,Raul,Leon,UPDATE,10
125,Mercedes,Tijuana,UPDATE,3
EOF
run_ok "$j" "9 vs 10: a second delivery"
is "$(counts)" "read=4 skipped=1 inserted=3 expired=2 updated=0 deleted=0 unchanged=0" \
  "9 vs 10: sequence 3 is at or before the checkpoint 6 (skipped); 9 and 10 are after it"
is "$(tdump users '1, 4' | grep -E '^12[46]')" \
"124|Raul|Oaxaca|1|9
124|Raul|Merida|9|10
124|Raul|Leon|10|<null>
126|Lily|Cancun|2|10
126|Lily|Puebla|10|<null>" "9 vs 10: versions in numeric order, 10 is current"
is "$(stored autocdc_scd2)" "10" "9 vs 10: the checkpoint is 10, not 9"

# 99 and 100 in one delivery, out of order, and a row at the checkpoint.
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
124,Raul,Colima,UPDATE,100
124,Raul,Tepic,UPDATE,99
126,Lily,Chetumal,UPDATE,10
EOF
run_ok "$j" "99 vs 100: a third delivery"
is "$(counts)" "read=3 skipped=1 inserted=2 expired=1 updated=0 deleted=0 unchanged=0" \
  "99 vs 100: the row at the checkpoint 10 is skipped"
is "$(tdump users '1, 4' | grep -E '^124')" \
"124|Raul|Oaxaca|1|9
124|Raul|Merida|9|10
124|Raul|Leon|10|99
124|Raul|Tepic|99|100
124|Raul|Colima|100|<null>" "99 vs 100: 99 before 100"
is "$(stored autocdc_scd2)" "100" "99 vs 100: the checkpoint is 100"

# A late row by sequence: lookback as a count of sequence values rereads
# 100 - 60 = 40 on; sequence 50 falls inside Colima's predecessor Leon.
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
124,Raul,Celaya,UPDATE,50
124,Raul,Merida,UPDATE,30
EOF
j=$(cdc_job autocdc_scd2 "  lookback: 60")
run_ok "$j" "late: a row with sequence 50 against history to 100"
is "$(field read) $(field skipped)" "2 1" "late: sequence 30 is before the lookback window (100 - 60)"
is "$(tdump users '1, 4' | grep -E '^124')" \
"124|Raul|Oaxaca|1|9
124|Raul|Merida|9|10
124|Raul|Leon|10|50
124|Raul|Celaya|50|99
124|Raul|Tepic|99|100
124|Raul|Colima|100|<null>" "late: the history is repaired in sequence order"

# Two different rows of one key at one sequence: the run fails naming the
# sequence as an integer.
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
124,Raul,Tula,UPDATE,200
124,Raul,Tepic,UPDATE,200
EOF
before=$(tdump users '1, 4')
dw run "$j"
is "$RC" 1 "same sequence: two different rows fail the run"
like "$ERR" "with the same lmd 200" "same sequence: the message prints the sequence as an integer"
is "$(tdump users '1, 4')|$(stored autocdc_scd2)" "$before|100" "same sequence: nothing written"

# ---- the checkpoint's type is checked on the next run -----------------------
# The same job now reading its lmd as a timestamp: its stored integer
# checkpoint is not compared as one.
file users.csv >/dev/null <<'EOF'
userId,name,city,operation,sequenceNum
124,Raul,Colima,UPDATE,2024-01-01 00:00:00
EOF
j=$(mkjob autocdc_scd2 "$csv" users_ts <<'EOF'
columns:
  exclude: [operation, sequenceNum]
load:
  mode: upsert
  key: [userId]
  lmd: sequenceNum
EOF
)
dw run "$j"
is "$RC" 2 "type change: an integer checkpoint with a timestamp lmd: exit 2"
like "$ERR" "load.lmd: the stored checkpoint '100' of job autocdc_scd2 is an integer sequence, but the lmd column 'sequenceNum' is now a point in time" \
  "type change: the error names the checkpoint and both types"
is "$(printf '%s\n' "$ERR" | grep -Ec 'autocdc_scd2[.]yaml:[0-9]+:[0-9]+: load[.]lmd: the stored')" 1 \
  "type change: at load.lmd's position in the job file"
is "$(table_exists users_ts) $(stored autocdc_scd2)" "0 100" "type change: no table created, the checkpoint unchanged"

# ---- upsert: the greatest sequence wins, not the greatest text ----------------
csv=$(file acct.csv <<'EOF'
id,balance,seq
1,10,9
1,11,10
2,20,100
2,21,99
EOF
)
j=$(mkjob ups "$csv" acct "  types: {id: integer, seq: $BIG}" <<'EOF'
load:
  mode: upsert
  key: [id]
  lmd: seq
EOF
)
run_ok "$j" "upsert: first load"
is "$(tdump acct 1)" "1|11|10
2|20|100" "upsert: the row with the greatest sequence per key"
file acct.csv >/dev/null <<'EOF'
id,balance,seq
1,12,101
2,22,1000
1,13,99
EOF
run_ok "$j" "upsert: second load"
is "$(field skipped)" "1" "upsert: sequence 99 is not past the checkpoint 100"
is "$(tdump acct 1)" "1|12|101
2|22|1000" "upsert: 101 and 1000 are past the checkpoint 100"
dw state --set 5 "$j"
is "$RC" 0 "state --set: an integer checkpoint"
is "$(stored ups)" "5" "state --set: stored as the integer 5"
file acct.csv >/dev/null <<'EOF'
id,balance,seq
1,14,6
1,15,4
EOF
# 6 is past the checkpoint but older than the stored row's 101: upsert
# never lets an older row overwrite a newer one (the memory engine leaves
# it out, load.late: repair, on either engine).
dw run "$j"
is "$RC $(field skipped) $(field late_repaired) $(tdump acct 1)" "0 1 1 1|12|101
2|22|1000" "state --set: sequence 6 is read (4 is not), and left out: older than the stored 101"
like "$(field late_repaired)" "1" "state --set: counted as repaired"

# ---- refusals: what an integer sequence has no meaning for ----------------
# refused NAME LOAD-LINES DIM-LINES KEY MSG: exit 2 at KEY's position, nothing written
refused() {
  j=$(cdc_job "$1" "$2" "$3")
  before=$(tdump users '1, 4')
  dw run "$j"
  is "$RC" 2 "refused: $5: exit 2"
  like "$ERR" ": $4: the lmd column 'sequenceNum' is an integer sequence" "refused: $5: names $4"
  is "$(printf '%s\n' "$ERR" | grep -Ec "$1[.]yaml:[0-9]+:[0-9]+: $4: ")" 1 "refused: $5: at the key's position"
  is "$(tdump users '1, 4')|$(stored "$1")" "$before|" "refused: $5: nothing written"
}
refused close_day "" "  close: day_before" dimension.close "close: day_before"
refused close_sec "" "  close: second_before" dimension.close "close: second_before"
refused open_end "" "  open_end: 9999-12-31" dimension.open_end "open_end"
refused lookback_d "  lookback: 1d" "" load.lookback "a duration lookback"
refused fmt "  lmd_format: '%Y'" "" load.lmd_format "lmd_format"
j=$(mkjob absent "$csv" acct2 "  types: {id: integer, seq: integer}" <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: seq
  deletes: absent
EOF
)
dw run "$j"
is "$RC" 2 "refused: deletes: absent: exit 2"
like "$ERR" "load.deletes: the lmd column 'seq' is an integer sequence: absent needs the run's time" \
  "refused: deletes: absent: names load.deletes"
is "$(printf '%s\n' "$ERR" | grep -Ec 'absent[.]yaml:[0-9]+:[0-9]+: load[.]deletes: ')" 1 \
  "refused: deletes: absent: at the key's position"
is "$(table_exists acct2)" 0 "refused: deletes: absent: no table"

# ---- an ODBC source's integer column, the checkpoint pushed down ----------------
odbc_source
sql "CREATE TABLE seqsrc (id $BIG NOT NULL, name VARCHAR(20), lsn $BIG NOT NULL)" "$SRC"
sql "INSERT INTO seqsrc VALUES (1, 'a', 9), (2, 'b', 8)" "$SRC"
j=$(job odbcseq <<EOF
version: 1
job: odbcseq
source:
  plugin: odbc
  connection: "$SRC_CONN"
  table: seqsrc
target:
  connection: "$WH_CONN"
  table: seqdim
load:
  mode: scd2
  key: [id]
  lmd: lsn
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOF
)
run_ok "$j" "odbc: first run"
sql "INSERT INTO seqsrc VALUES (1, 'a2', 10), (2, 'b2', 100)" "$SRC"
run_ok "$j" "odbc: second run"
is "$(field read)" "2" "odbc: the checkpoint 9 pushed down as an integer: 10 and 100 are read, 9 and 8 not"
is "$(tdump seqdim '1, 3')" \
"1|a|9|9|10
1|a2|10|10|<null>
2|b|8|8|100
2|b2|100|100|<null>" "odbc: the whole table, validity in sequence values"
is "$(stored odbcseq)" "100" "odbc: the checkpoint is 100"

# A query's :checkpoint on a first run stands before every sequence value
# (before any date would compare an integer with text).
j=$(job odbcq <<EOF
version: 1
job: odbcq
source:
  plugin: odbc
  connection: "$SRC_CONN"
  query: "SELECT id, name, lsn FROM seqsrc WHERE lsn > :checkpoint"
target:
  connection: "$WH_CONN"
  table: seqq
load:
  mode: upsert
  key: [id]
  lmd: lsn
EOF
)
run_ok "$j" "odbc query: first run"
is "$(field read)" "4" "odbc query: the first run's :checkpoint is before every sequence value"
sql "INSERT INTO seqsrc VALUES (3, 'c', 99), (4, 'd', 101)" "$SRC"
run_ok "$j" "odbc query: second run"
is "$(field read) $(stored odbcq)" "1 101" "odbc query: :checkpoint is 100: 101 is read, 99 not"

done_testing
