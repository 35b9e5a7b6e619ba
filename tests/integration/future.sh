#!/bin/sh
# load.future_tolerance: a row whose lmd lies further after the run's clock
# than the tolerance (default 1d) is a clock or data error.  It never moves
# the checkpoint (one row dated 9999-12-31 would make every later run skip
# everything): the run fails naming the row and its value, or, with a
# reject budget, sets the row aside and loads the rest.  A source whose
# lmd is a business date in the future raises the tolerance or turns it
# off.  Every mode; scd2 and upsert on both engines (make check runs this
# script again with DWL_ENGINE=pushdown).
. "$TOP_SRCDIR/tests/integration/lib.sh"

FAR="9999-12-31 23:59:59"
# Times relative to the clock, minutes apart from any boundary: the test
# does not depend on how fast it runs.
SOON=$(date -u -d '+2 hours' '+%Y-%m-%d %H:%M:%S')
NEXT_WEEK=$(date -u -d '+7 days' '+%Y-%m-%d %H:%M:%S')

# ck JOB: the stored checkpoint of JOB
ck() {
  sql "SELECT checkpoint FROM dwload_state WHERE job = '$1'"
}

# fjob NAME CSV TABLE MODE [LOAD-LINES]: a job of MODE keyed on id
fjob() {
  {
    printf 'load:\n  mode: %s\n  lmd: lmd\n' "$4"
    [ "$4" = append ] || printf '  key: [id]\n'
    if [ -n "${5:-}" ]; then printf '%s\n' "$5"; fi
  } | mkjob "$1" "$2" "$3"
}

for mode in scd2 upsert append; do
  # ---- a far-future row fails the run ---------------------------------------
  F1=$(file "$mode.1.csv" <<EOF
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-02 00:00:00
EOF
)
  J=$(fjob "f_$mode" "$F1" "f_$mode" "$mode")
  run_ok "$J" "$mode: first run"
  is "$(ck "f_$mode")" "2024-01-02 00:00:00" "$mode: checkpoint of the first run"
  BEFORE=$(tdump "f_$mode")

  F2=$(file "$mode.2.csv" <<EOF
id,name,lmd
1,Ann B,2024-02-01 00:00:00
3,Cat,$FAR
4,Dan,2024-02-02 00:00:00
EOF
)
  J2=$(fjob "f_$mode" "$F2" "f_$mode" "$mode")
  dw run "$J2"
  is "$RC" 4 "$mode: a row dated $FAR fails the run (exit 4)"
  like "$ERR" "$mode.2.csv:3: column 'lmd': '$FAR' is more than 1d after the run's clock" \
    "$mode: the message names the row (file:line), the column and its value"
  like "$ERR" "load.future_tolerance" "$mode: the message names the key that allows it"
  is "$(field status)" failed "$mode: the summary says failed"
  is "$(ck "f_$mode")" "2024-01-02 00:00:00" "$mode: the checkpoint did not move"
  is "$(tdump "f_$mode")" "$BEFORE" "$mode: nothing was written"

  # ---- with a reject budget the row is set aside ----------------------------
  J3=$(fjob "f_$mode" "$F2" "f_$mode" "$mode" "  max_rejects: 5
  reject_file: $WORK/$mode.rejects.csv")
  dw run "$J3"
  is "$RC" 0 "$mode: with max_rejects the run loads the other rows"
  is "$(field rejected)" 1 "$mode: the far-future row is counted in rejected"
  is "$(ck "f_$mode")" "2024-02-02 00:00:00" "$mode: the checkpoint is the latest acceptable lmd"
  is "$(sql "SELECT count(*) FROM f_$mode WHERE id = '3'")" 0 "$mode: the far-future row is not loaded"
  like "$(cat "$WORK/$mode.rejects.csv")" "$mode.2.csv,3,column 'lmd': '$FAR' is more than 1d" \
    "$mode: the reject file holds the row with its origin and reason"
  like "$(cat "$WORK/$mode.rejects.csv")" "3,Cat,$FAR" "$mode: the reject file holds the row's values"

  # The job is not disabled: a later row is loaded by the next run.
  F4=$(file "$mode.4.csv" <<EOF
id,name,lmd
5,Eve,2024-03-01 00:00:00
EOF
)
  J4=$(fjob "f_$mode" "$F4" "f_$mode" "$mode")
  dw run "$J4"
  is "$RC" 0 "$mode: the next run succeeds"
  is "$(field skipped)" 0 "$mode: the next run skips nothing"
  is "$(sql "SELECT count(*) FROM f_$mode WHERE id = '5'")" 1 "$mode: the next run loads its new row"
  is "$(ck "f_$mode")" "2024-03-01 00:00:00" "$mode: the checkpoint moves on"

  # ---- within the tolerance, and raised or off ------------------------------
  F5=$(file "$mode.5.csv" <<EOF
id,name,lmd
6,Fay,$SOON
EOF
)
  J5=$(fjob "f_$mode" "$F5" "f_$mode" "$mode")
  dw run "$J5"
  is "$RC" 0 "$mode: a row two hours ahead (clock skew) is within the default 1d"
  is "$(ck "f_$mode")" "$SOON" "$mode: it moves the checkpoint"

  F6=$(file "$mode.6.csv" <<EOF
id,name,lmd
7,Gil,$NEXT_WEEK
EOF
)
  J6=$(fjob "f_$mode" "$F6" "f_$mode" "$mode")
  dw run "$J6"
  is "$RC" 4 "$mode: a row a week ahead exceeds the default"
  J6=$(fjob "f_$mode" "$F6" "f_$mode" "$mode" "  future_tolerance: 8d")
  dw run "$J6"
  is "$RC" 0 "$mode: future_tolerance: 8d accepts it"
  is "$(ck "f_$mode")" "$NEXT_WEEK" "$mode: and takes it into the checkpoint"
  J6=$(fjob "f_$mode" "$F6" "f_$mode" "$mode" "  future_tolerance: 1h")
  F7=$(file "$mode.7.csv" <<EOF
id,name,lmd
8,Hal,$SOON
EOF
)
  J7=$(fjob "f_$mode" "$F7" "f_$mode" "$mode" "  future_tolerance: 1h")
  dw run "$J7"
  is "$RC" 4 "$mode: future_tolerance: 1h refuses a row two hours ahead"
  like "$ERR" "is more than 1h after the run's clock" "$mode: the message says the tolerance"
  F8=$(file "$mode.8.csv" <<EOF
id,name,lmd
9,Ida,$FAR
EOF
)
  J8=$(fjob "f_$mode" "$F8" "f_$mode" "$mode" "  future_tolerance: off")
  dw run "$J8"
  is "$RC" 0 "$mode: future_tolerance: off accepts a business date far ahead"
  is "$(ck "f_$mode")" "$FAR" "$mode: and takes it into the checkpoint"
done

# ---- a date-typed lmd ---------------------------------------------------------
F=$(file d.1.csv <<EOF
id,name,lmd
1,Ann,2024-01-01
2,Bob,9999-12-31
EOF
)
J=$(fjob f_dates "$F" f_dates scd2)
dw run "$J"
is "$RC" 4 "dates: a far-future date fails the run"
like "$ERR" "d.1.csv:3: column 'lmd': '9999-12-31' is more than 1d after" "dates: the message names the row"
is "$(sql "SELECT count(*) FROM dwload_state WHERE job = 'f_dates' AND checkpoint IS NOT NULL")" 0 \
  "dates: no checkpoint was stored"

done_testing
