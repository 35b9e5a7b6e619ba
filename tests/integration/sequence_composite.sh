#!/bin/sh
# A composite load.lmd (AUTO CDC's SEQUENCE BY STRUCT(ts, id)): rows
# ordered by the first column, then the tie-breakers, each typed (9 before
# 10), in a run and against the checkpoint, which dwload_state keeps as a
# JSON array; of a key's rows at one instant only the last by the
# tie-breakers makes a version, and across runs it replaces the version
# that started then; lookback applies to the first column; the odbc
# plugin pushes down the first column only; dwload state shows and sets
# the array; the spec's refusals (empty, duplicates, too many, a column
# not in the source, a text tie-breaker, engine: pushdown in upsert);
# pushdown with late: ignore and reject against memory.  With
# DWL_ENGINE=pushdown (make check's .pushdown tests) every
# scd2 job runs on pushdown, whose keys with rows at one instant go to the
# memory engine.
. "$TOP_SRCDIR/tests/integration/lib.sh"

case $WAREHOUSE in
  sqlite) BIG=INTEGER ;;
  *) BIG=BIGINT ;;
esac
# stored JOB: the job's checkpoint as dwload_state holds it
stored() { sql "SELECT checkpoint FROM dwload_state WHERE job = '$1'"; }
# dim: the table, by key then valid_from
dim() { tdump "${1:-dim}" '1, 5'; }

# ---- CSV: a timestamp and an integer tie-breaker ---------------------------
# chg 9 and 10 at one ts: as text "9" > "10" would win.
csv=$(file feed.csv <<'EOF'
k,name,ts,chg
1,a,2024-01-01 10:00:00,9
1,b,2024-01-01 10:00:00,10
2,x,2024-01-01 10:00:00,2
2,y,2024-01-02 10:00:00,1
3,p,2024-01-03 09:00:00,5
EOF
)
# cjob NAME [LOAD-LINES]
cjob() {
  mkjob "$1" "$csv" dim "  types: {k: integer, ts: timestamp, chg: integer}" <<EOF
load:
  mode: scd2
  key: [k]
  lmd: [ts, chg]
${2:-}
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOF
}
j=$(cjob comp)
run_ok "$j" "run 1"
if [ "${DWL_ENGINE:-}" = pushdown ]; then
  is "$(field engine)" pushdown "run 1: pushdown took the job (key 1's rows at one ts: by the memory engine)"
fi
is "$(counts)" "read=5 skipped=0 inserted=4 expired=0 updated=0 deleted=0 unchanged=1" \
  "run 1: counts (key 1's chg 9 is superseded by chg 10 at the same ts)"
is "$(dim)" \
"1|b|2024-01-01 10:00:00|10|2024-01-01 10:00:00|<null>
2|x|2024-01-01 10:00:00|2|2024-01-01 10:00:00|2024-01-02 10:00:00
2|y|2024-01-02 10:00:00|1|2024-01-02 10:00:00|<null>
3|p|2024-01-03 09:00:00|5|2024-01-03 09:00:00|<null>" \
  "run 1: the whole table: one version per instant, the last by chg (10 after 9), valid_from holds ts"
is "$(stored comp)" '["2024-01-03 09:00:00",5]' "run 1: the checkpoint is the greatest composite, as a JSON array"
dw state "$j"
like "$OUT" 'checkpoint:  ["2024-01-03 09:00:00",5]' "state: shows the composite checkpoint"

# Run 2: at the checkpoint's ts, chg 5 (equal) and 4 (before) are skipped,
# 12 (after; before 5 as text) replaces key 3's version in place; an older
# ts is skipped whatever its chg; a later composite starts a version.
file feed.csv >/dev/null <<'EOF'
k,name,ts,chg
3,q,2024-01-03 09:00:00,5
3,r,2024-01-03 09:00:00,4
3,s,2024-01-03 09:00:00,12
1,c,2024-01-01 10:00:00,11
2,z,2024-01-03 09:00:00,6
EOF
run_ok "$j" "run 2"
is "$(counts)" "read=5 skipped=3 inserted=1 expired=1 updated=1 deleted=0 unchanged=0" \
  "run 2: exactly the three rows at or before the checkpoint are skipped"
is "$(dim)" \
"1|b|2024-01-01 10:00:00|10|2024-01-01 10:00:00|<null>
2|x|2024-01-01 10:00:00|2|2024-01-01 10:00:00|2024-01-02 10:00:00
2|y|2024-01-02 10:00:00|1|2024-01-02 10:00:00|2024-01-03 09:00:00
2|z|2024-01-03 09:00:00|6|2024-01-03 09:00:00|<null>
3|s|2024-01-03 09:00:00|12|2024-01-03 09:00:00|<null>" \
  "run 2: the whole table: key 3's version at 09:00 now holds chg 12's row, no zero-length version"
is "$(stored comp)" '["2024-01-03 09:00:00",12]' "run 2: the checkpoint's tie-breaker is 12, not 6"
is "$(sqln 'SELECT COUNT(*) FROM dim')" 5 "run 2: five versions"

# Run 3: lookback (1d, on ts alone) rereads key 3's superseded chg 5 (no
# replacement back: it is at or before the checkpoint) and catches key 2's
# late rows, which the history takes in ts order, the last by chg of the
# two at 12:00 (late repair breaks ties too).
file feed.csv >/dev/null <<'EOF'
k,name,ts,chg
3,p,2024-01-03 09:00:00,5
2,w,2024-01-02 12:00:00,1
2,v,2024-01-02 12:00:00,0
1,d,2024-01-01 10:00:00,99
EOF
j=$(cjob comp "  lookback: 1d")
run_ok "$j" "run 3 (lookback 1d)"
is "$(field read) $(field skipped) $(field unchanged)" "4 1 1" \
  "run 3: ts 2024-01-01 10:00 lies before the lookback window; chg 5 is reread, unchanged"
is "$(dim)" \
"1|b|2024-01-01 10:00:00|10|2024-01-01 10:00:00|<null>
2|x|2024-01-01 10:00:00|2|2024-01-01 10:00:00|2024-01-02 10:00:00
2|y|2024-01-02 10:00:00|1|2024-01-02 10:00:00|2024-01-02 12:00:00
2|w|2024-01-02 12:00:00|1|2024-01-02 12:00:00|2024-01-03 09:00:00
2|z|2024-01-03 09:00:00|6|2024-01-03 09:00:00|<null>
3|s|2024-01-03 09:00:00|12|2024-01-03 09:00:00|<null>" \
  "run 3: the whole table: the late row (chg 1, not 0) repaired in, key 3 keeps chg 12"
is "$(stored comp)" '["2024-01-03 09:00:00",12]' "run 3: the checkpoint unchanged"

# ---- dwload state --set ---------------------------------------------------
dw state --set '[ "2024-01-03 09:00:00", 3 ]' "$j"
is "$RC" 0 "state --set: a composite"
is "$(stored comp)" '["2024-01-03 09:00:00",3]' "state --set: stored in the canonical form"
dw state --set '2024-01-03 09:00:00' "$j"
is "$RC" 2 "state --set: one value for a composite lmd: exit 2"
like "$ERR" "load.lmd is a composite sequence; give its checkpoint as \`dwload state\` prints it" "state --set: says how"
dw state --set '["2024-01-03 09:00:00",3,4]' "$j"
is "$RC $(stored comp)" '2 ["2024-01-03 09:00:00",3]' "state --set: three values for two columns: exit 2, unchanged"
# chg 4 is now past the checkpoint: it replaces key 3's version
file feed.csv >/dev/null <<'EOF'
k,name,ts,chg
3,u,2024-01-03 09:00:00,4
EOF
j=$(cjob comp)
run_ok "$j" "after --set"
is "$(counts) $(dim | grep '^3')" \
  "read=1 skipped=0 inserted=0 expired=0 updated=1 deleted=0 unchanged=0 3|u|2024-01-03 09:00:00|4|2024-01-03 09:00:00|<null>" \
  "after --set: chg 4 is past [..,3] and replaces key 3's version"
is "$(stored comp)" '["2024-01-03 09:00:00",4]' "after --set: the checkpoint follows the row"

# The job's lmd back to one column: the stored composite is not compared.
j=$(mkjob comp "$csv" dim "  types: {k: integer, ts: timestamp, chg: integer}" <<'EOF'
load:
  mode: scd2
  key: [k]
  lmd: ts
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOF
)
before=$(dim)
dw run "$j"
is "$RC" 2 "shape change: a composite checkpoint with one lmd column: exit 2"
# (the line of load.lmd: one more where DWL_ENGINE added load.engine)
like "$ERR" "comp.yaml:$(grep -n '^  lmd: ts$' "$j" | cut -d: -f1):3: load.lmd: the stored checkpoint '[\"2024-01-03 09:00:00\",4]' of job comp is a composite of a point in time and tie-breakers: an integer, but the lmd column 'ts' is now a point in time" \
  "shape change: names the checkpoint at load.lmd"
is "$(dim)|$(stored comp)" "$before|[\"2024-01-03 09:00:00\",4]" "shape change: nothing written"

# ---- integer sequence and integer tie-breaker, with valid_from the sequence -
csv=$(file ver.csv <<'EOF'
k,v,ver,sub
1,a,9,10
1,b,9,9
1,c,10,1
2,d,100,2
EOF
)
j=$(mkjob ver "$csv" vdim "  types: {k: integer, ver: integer, sub: integer}" <<'EOF'
columns:
  exclude: [sub]
load:
  mode: scd2
  key: [k]
  lmd: [ver, sub]
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOF
)
run_ok "$j" "integers: run 1"
is "$(tdump vdim '1, 4')" \
"1|a|9|9|10
1|c|10|10|<null>
2|d|100|100|<null>" "integers: the whole table: (9,10) after (9,9), 10 after 9, validity in ver, sub kept out"
is "$(stored ver)" "[100,2]" "integers: the checkpoint [100,2]"
file ver.csv >/dev/null <<'EOF'
k,v,ver,sub
2,e,100,10
2,f,100,1
1,g,99,50
EOF
run_ok "$j" "integers: run 2"
is "$(counts) $(stored ver)" "read=3 skipped=2 inserted=0 expired=0 updated=1 deleted=0 unchanged=0 [100,10]" \
  "integers: (100,10) is past [100,2] (10 > 2 as integers), (100,1) and (99,50) are not"
is "$(tdump vdim '1, 4' | grep '^2')" "2|e|100|100|<null>" "integers: key 2's version replaced in place"

# ---- upsert: the last row by the composite is the key's state ------------
csv=$(file ups.csv <<'EOF'
k,v,ts,chg
1,x,2024-01-01 10:00:00,10
1,y,2024-01-01 10:00:00,9
2,z,2024-01-01 10:00:00,1
EOF
)
j=$(mkjob ups "$csv" udim "  types: {k: integer, ts: timestamp, chg: integer}" <<'EOF'
load:
  mode: upsert
  key: [k]
  lmd: [ts, chg]
EOF
)
run_ok "$j" "upsert: run 1"
is "$(tdump udim 1) $(stored ups)" "1|x|2024-01-01 10:00:00|10
2|z|2024-01-01 10:00:00|1 [\"2024-01-01 10:00:00\",10]" "upsert: chg 10 wins over 9 (arriving later)"
file ups.csv >/dev/null <<'EOF'
k,v,ts,chg
1,w,2024-01-01 10:00:00,11
2,u,2024-01-01 10:00:00,10
EOF
run_ok "$j" "upsert: run 2"
is "$(counts) $(tdump udim 1)" "read=2 skipped=1 inserted=0 expired=0 updated=1 deleted=0 unchanged=0 1|w|2024-01-01 10:00:00|11
2|z|2024-01-01 10:00:00|1" "upsert: (10:00, 11) past the checkpoint overwrites, (10:00, 10) is skipped"

# ---- an ODBC source: the first column pushed down, the tie-breaker in memory --
odbc_source
sql "CREATE TABLE compsrc (k $BIG NOT NULL, name VARCHAR(20), lsn $BIG NOT NULL, sub $BIG NOT NULL)" "$SRC"
sql "INSERT INTO compsrc VALUES (1, 'a', 5, 1), (2, 'b', 3, 7), (3, 'c', 1, 1)" "$SRC"
j=$(job odbccomp <<EOF
version: 1
job: odbccomp
source:
  plugin: odbc
  connection: "$SRC_CONN"
  table: compsrc
target:
  connection: "$WH_CONN"
  table: odim
load:
  mode: scd2
  key: [k]
  lmd: [lsn, sub]
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOF
)
run_ok "$j" "odbc: run 1"
is "$(stored odbccomp)" "[5,1]" "odbc: the checkpoint [5,1]"
sql "INSERT INTO compsrc VALUES (1, 'a2', 5, 2), (2, 'b2', 5, 0), (3, 'c2', 6, 0)" "$SRC"
run_ok "$j" "odbc: run 2"
is "$(field read) $(field skipped)" "4 2" \
  "odbc: lsn >= 5 is read (the pushdown is on lsn alone: 1 and 3 not), (5,1) and (5,0) filtered in memory"
is "$(tdump odim '1, 5')" \
"1|a2|5|2|5|<null>
2|b|3|7|3|<null>
3|c|1|1|1|6
3|c2|6|0|6|<null>" "odbc: the whole table: (5,2) replaces key 1's version, (5,0) is skipped, 6 starts one"
is "$(stored odbccomp)" "[6,0]" "odbc: the checkpoint [6,0]"

# ---- pushdown with late: ignore and reject ------------------------------------
# The keys with two rows at one ts, a row at their version's start or a
# late row go to the memory engine (pushdown_take_late), which orders them
# by their tie-breakers: both engines, the same counts, rejects and rows.
# Round 2 runs with the checkpoint set back: 1 has two rows at one ts, 2
# a row before its version (late) and one at its start with a greater
# chg (it replaces the version), 3 one at its start with a lesser chg,
# 4 is new.
printf 'k,name,ts,chg\n1,a,2024-01-01 10:00:00,1\n2,x,2024-01-01 10:00:00,1\n3,p,2024-01-02 10:00:00,5\n' \
  >"$WORK/lt.csv"
for late in ignore reject; do
  for e in memory pushdown; do
    mkjob "lt_${late}_$e" "$WORK/lt.csv" "lt_${late}_$e" "  types: {k: integer, ts: timestamp, chg: integer}" \
      >/dev/null <<EOF
load:
  mode: scd2
  engine: $e
  key: [k]
  lmd: [ts, chg]
  late: $late
  max_rejects: 5
  reject_file: $WORK/lt_${late}_$e.rejects.csv
EOF
  done
done
for round in 1 2; do
  if [ $round = 2 ]; then
    printf '%s\n' 'k,name,ts,chg' '1,b,2024-01-03 10:00:00,2' '1,c,2024-01-03 10:00:00,1' \
      '2,w,2023-12-30 10:00:00,1' '2,y,2024-01-01 10:00:00,3' '3,q,2024-01-02 10:00:00,4' \
      '4,n,2024-01-03 10:00:00,1' >"$WORK/lt.csv"
  fi
  for late in ignore reject; do
    for e in memory pushdown; do
      if [ $round = 2 ]; then
        dw state --set '["2023-12-01 00:00:00",0]' "$WORK/lt_${late}_$e.yaml"
        is "$RC" 0 "late $late, $e: the checkpoint set back"
      fi
      rm -f "$WORK/lt_${late}_$e.rejects.csv"
      dw run "$WORK/lt_${late}_$e.yaml"
      eval "_rc_$e=\$RC _c_$e=\"\$(counts) \$(field late_ignored) \$(field late_rejected) \$(field rejected)\""
      [ $e = pushdown ] && _eng=$(field engine) _err=$ERR
    done
    is "$_eng|$_rc_pushdown|$_c_pushdown" "pushdown|$_rc_memory|$_c_memory" \
      "late $late, round $round: pushdown's run, the same exit code and counts"
    is "$(cut -d, -f2- "$WORK/lt_${late}_pushdown.rejects.csv" 2>/dev/null)" \
      "$(cut -d, -f2- "$WORK/lt_${late}_memory.rejects.csv" 2>/dev/null)" "late $late, round $round: the same rejects"
    is "$(tdump "lt_${late}_pushdown" dim_id)" "$(tdump "lt_${late}_memory" dim_id)" \
      "late $late, round $round: the same rows"
    if [ $round = 2 ]; then
      like "$_err" "go to the memory engine" "late $late, round 2: pushdown handed keys over"
      like "$_c_pushdown" "$([ $late = ignore ] && echo ' 1 0 0' || echo ' 0 1 1')" \
        "late $late, round 2: 2's late row $([ $late = ignore ] && echo ignored || echo rejected)"
    fi
  done
done

# ---- refusals: exit 2 at the list's position --------------------------------
# bad NAME LMD LINE:COL MSG [ENGINE-LINE] (the mode BAD_MODE, default scd2)
bad() {
  j=$(job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $WORK/feed.csv
  types: {k: integer, ts: timestamp, chg: integer}
target:
  connection: "$WH_CONN"
  table: bad_$1
load:
  mode: ${BAD_MODE:-scd2}
  key: [k]
  lmd: $2
${5:-}
EOF
)
  dw run "$j"
  is "$RC" 2 "refused: $1: exit 2"
  like "$ERR" "$1.yaml:$3: $4" "refused: $1: at the position, says why"
  is "$(table_exists "bad_$1")" 0 "refused: $1: no table"
}
bad empty "[]" 13:8 "load.lmd: an empty list"
bad twice "[ts, chg, ts]" 13:18 "load.lmd: column 'ts' is listed twice"
bad five "[ts, chg, k, name, chg2]" 13:8 "load.lmd: 5 columns; a composite sequence has at most 4"
bad missing "[ts, nope]" 13:13 "load.lmd: column 'nope' is not in the source"
bad text "[ts, name]" 13:13 "load.lmd: the tie-breaking column 'name' is not an integer, a date or a timestamp"
BAD_MODE=upsert bad pushdown "[ts, chg]" 14:3 "load.engine: pushdown supports a composite load.lmd (tie-breaking columns after the first) only in mode scd2" "  engine: pushdown"

done_testing
