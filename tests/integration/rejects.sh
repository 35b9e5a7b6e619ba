#!/bin/sh
# Rejects: bad rows set aside under load.max_rejects, the reject file
# (written only when the run commits), the count in the summary and the
# state, and the run that meets one bad row too many (exit 1, nothing
# committed, the reject file unchanged, its rows in PATH.failed).
. "$TOP_SRCDIR/tests/integration/lib.sh"

# rjob NAME CSV MODE MAX [EXTRA-LOAD-LINE]: a job whose reject file is
# NAME.rejects.csv beside it (a relative path: the job file's folder)
rjob() {
  mkjob "$1" "$2" "$1" "  types: {id: integer, amount: integer, name: varchar(8)}" <<EOF
load:
  mode: $3
  key: id
  lmd: lmd
  max_rejects: $4
  reject_file: $1.rejects.csv
${5:-}
EOF
}

# reject_rows FILE: the reject file's records as "source|origin|reason|row",
# one a line, line breaks inside fields shown as \n
reject_rows() {
  python3 - "$1" <<'PYEOF'
import csv, sys
with open(sys.argv[1], newline="", encoding="utf-8", errors="backslashreplace") as f:
    for rec in csv.reader(f):
        print("|".join(v.replace("\n", "\\n") for v in rec))
PYEOF
}

FEED=$(file feed.csv <<'EOF'
id,name,amount,lmd
1,Ann,10,2024-01-01 00:00:00
2,Bob,x,2024-01-02 00:00:00
3,Cat,30
4,"Dan
Two",40,2024-01-04 00:00:00,extra
5,Eve,50,yesterday
6,Verylongname,60,2024-01-06 00:00:00
,Nul,70,2024-01-07 00:00:00
8,Ok,80,2024-01-08 00:00:00
EOF
)
printf '9,Bad\377,90,2024-01-09 00:00:00\n10,"ÜnïcödéX",100,2024-01-03 00:00:00\n' >>"$FEED"

Q="'"
EXPECT_REJECTS="source|origin|reason|row
feed.csv|4|row has 3 fields, expected 4|3,Cat,30
feed.csv|5|row has 5 fields, expected 4|4,\"Dan\\nTwo\",40,2024-01-04 00:00:00,extra
feed.csv|11|invalid UTF-8 in field 2 (byte 0xFF at offset 3 of the field, line 11)|9,Bad\\xff,90,2024-01-09 00:00:00
feed.csv|3|column ${Q}amount${Q}: ${Q}x${Q} not an integer|2,Bob,x,2024-01-02 00:00:00
feed.csv|7|column ${Q}lmd${Q}: ${Q}yesterday${Q} is not an ISO 8601 timestamp|5,Eve,50,yesterday
feed.csv|8|column ${Q}name${Q}: ${Q}Verylongname${Q} is longer than the column${Q}s 8 characters|6,Verylongname,60,2024-01-06 00:00:00
feed.csv|9|key column ${Q}id${Q} is NULL (load.null_keys: reject)|,Nul,70,2024-01-07 00:00:00"

# ---- within the budget: good rows loaded, bad ones in the file -------------
J=$(rjob up "$FEED" upsert 7 "  null_keys: reject")
run_ok "$J" "upsert, 7 bad rows, max_rejects 7"
is "$(field rejected)" 7 "the summary counts 7 rejected rows"
is "$(field read)" 10 "read counts the rejected rows too"
is "$(field inserted)" 3 "the 3 good rows are inserted"
is "$(sql "SELECT id, name, amount FROM up ORDER BY id")" "1|Ann|10
8|Ok|80
10|ÜnïcödéX|100" "the table holds the good rows only (8 characters of unicode fit varchar(8))"
is "$(field checkpoint)" "2024-01-08 00:00:00" "the checkpoint is the greatest lmd of the good rows"
is "$(sql "SELECT rejected, rows_read FROM dwload_state WHERE job = 'up'")" "7|10" "the state row counts them"
is "$(reject_rows "$WORK/up.rejects.csv")" "$EXPECT_REJECTS" \
  "the reject file: source, line, reason and the raw row (or the values re-encoded)"
is "$(ls "$WORK" | grep -c 'up\.rejects\.csv\.')" 0 "no temporary or .failed file is left"
like "$ERR" "rejected feed.csv:3: column 'amount'" "each rejected row is logged"
GOOD_TABLE=$(tdump up id)
GOOD_STATE=$(sql "SELECT checkpoint, last_run_at, rows_read, inserted, rejected FROM dwload_state WHERE job = 'up'")
GOOD_REJECTS=$(cat "$WORK/up.rejects.csv")

# ---- one bad row too many: exit 1, nothing committed -----------------------
MORE=$(file more.csv <<'EOF'
id,name,amount,lmd
20,New,1,2024-03-01 00:00:00
21,Bad,one,2024-03-02 00:00:00
22,Bad,two,2024-03-03 00:00:00
23,New,3,2024-03-04 00:00:00
24,Bad,three,2024-03-05 00:00:00
25,New,5,2024-03-06 00:00:00
EOF
)
J=$(rjob up "$MORE" upsert 2 "  null_keys: reject")
dw run "$J"
is "$RC" 4 "three bad rows with max_rejects 2: exit 4"
like "$ERR" "more.csv:6: column 'amount': 'three' not an integer; that is 3 rejected rows, more than load.max_rejects (2)" \
  "the message names the row that is one too many and the budget"
is "$(field status)" failed "the summary says failed"
is "$(tdump up id)" "$GOOD_TABLE" "the table is unchanged"
is "$(sql "SELECT checkpoint, last_run_at, rows_read, inserted, rejected FROM dwload_state WHERE job = 'up'")" \
  "$GOOD_STATE" "the checkpoint and the last run's counts are unchanged"
is "$(cat "$WORK/up.rejects.csv")" "$GOOD_REJECTS" "the reject file still holds the last committed run's rows"
is "$(reject_rows "$WORK/up.rejects.csv.failed" | cut -d'|' -f2)" "origin
3
4
6" "PATH.failed holds the failed run's bad rows, the one too many included"
is "$(ls "$WORK" | grep -c 'up\.rejects\.csv\.tmp')" 0 "no temporary file is left"

# ---- plan counts, writes nothing ------------------------------------------
J=$(rjob up "$MORE" upsert 3 "  null_keys: reject")
dw plan "$J"
is "$RC" 0 "plan with the budget: exit 0"
is "$(field rejected)" 3 "plan counts the bad rows"
is "$(cat "$WORK/up.rejects.csv")" "$GOOD_REJECTS" "plan leaves the reject file alone"
is "$(ls "$WORK" | grep -c 'up\.rejects\.csv\.tmp')" 0 "plan writes no temporary file"

# ---- the next committed run replaces the file and clears .failed -----------
run_ok "$J" "the same feed with max_rejects 3"
is "$(field inserted)" 3 "its good rows are inserted"
is "$(reject_rows "$WORK/up.rejects.csv" | cut -d'|' -f1,2,4)" "source|origin|row
more.csv|3|21,Bad,one,2024-03-02 00:00:00
more.csv|4|22,Bad,two,2024-03-03 00:00:00
more.csv|6|24,Bad,three,2024-03-05 00:00:00" "the reject file holds this run's rows only"
is "$(ls "$WORK" | grep -c 'up\.rejects\.csv\.failed')" 0 "the committed run removed the .failed file"

CLEAN=$(file clean.csv <<'EOF'
id,name,amount,lmd
30,Fine,1,2024-04-01 00:00:00
EOF
)
J=$(rjob up "$CLEAN" upsert 3)
run_ok "$J" "a clean feed"
is "$(field rejected)" 0 "nothing rejected"
is "$(cat "$WORK/up.rejects.csv")" "source,origin,reason,row" "a clean run leaves a header-only reject file"

# ---- scd2: the engine path, and values re-encoded with quotes --------------
S=$(file s.csv <<'EOF'
id,name,amount,lmd
1,"a ""qq"", b",1,2024-01-01 00:00:00
2,"",x,2024-01-02 00:00:00
3,ok,3,2024-01-03 00:00:00
EOF
)
J=$(rjob dim "$S" scd2 5)
run_ok "$J" "scd2 with a bad row"
like "$ERR" "rejected s.csv:2: column 'name': 'a \"qq\", b' is longer" "an over-long name with quotes is rejected"
is "$(sql "SELECT id, name FROM dim ORDER BY id")" "3|ok" "scd2 loads the good row"
is "$(reject_rows "$WORK/dim.rejects.csv" | cut -d'|' -f2,4)" "origin|row
2|1,\"a \"\"qq\"\", b\",1,2024-01-01 00:00:00
3|2,\"\",x,2024-01-02 00:00:00" "values re-encoded as CSV: quotes doubled, the empty string quoted"

# ---- a run that fails without bad rows clears an older failed run's list ---
J=$(rjob up "$MORE" upsert 2)
dw run "$J"
is "$(ls "$WORK" | grep -c 'up\.rejects\.csv\.failed')" 1 "an over-budget run leaves its .failed list"
CONFLICT=$(file conflict.csv <<'EOF'
id,name,amount,lmd
40,One,1,2024-05-01 00:00:00
40,Two,2,2024-05-01 00:00:00
EOF
)
J=$(rjob up "$CONFLICT" upsert 2)
dw run "$J"
is "$RC" 1 "a run failing on a key conflict, with no bad rows: exit 1"
is "$(ls "$WORK" | grep -c 'up\.rejects\.csv\.')" 0 "it removes the older .failed list and leaves no temporary file"

# ---- the default: the first bad row fails the run, as always ---------------
J=$(mkjob plain "$MORE" plain "  types: {amount: integer}" <<'EOF'
load:
  mode: append
  lmd: lmd
EOF
)
dw run "$J"
is "$RC" 4 "max_rejects 0 (default): the first bad row fails the run (exit 4)"
like "$ERR" "more.csv:3: column 'amount': 'one' not an integer" "with the row's message, unchanged"
unlike "$ERR" "max_rejects" "and no mention of a budget"
no_table plain "nothing written"

done_testing
