# TRUNCATE events (load.deletes.truncate_values), through the real binary:
# a row whose operation column holds a truncate value deletes every key
# live at that point, at the row's lmd (scd2: versions closed then;
# upsert: rows removed); rows before it apply first, rows after it bring
# keys back.  max_deletes judges every live key a truncate reaches; a
# rerun of the same feed changes nothing.  make check runs it with
# DWL_ENGINE=pushdown too, which takes both modes (pushdown_absent.c;
# pushdown_parity.sh compares the engines on more truncates; delete_style:
# tombstone is refused with either engine: tests/bad/truncate_tombstone).
. "$TOP_SRCDIR/tests/integration/lib.sh"

# tjob NAME MODE [LOAD-LINES]: j, a job reading $WORK/NAME.csv into t_NAME
tjob() {
  j=$(mkjob "$1" "$WORK/$1.csv" "t_$1" '  types: {id: integer, amount: integer}' <<EOF
load:
  mode: $2
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D], truncate_values: [T]}
${3:-}
EOF
)
}

feed() {
  { echo 'id,op,amount,lmd'; cat; } >"$WORK/$1.csv"
}

first='1,I,10,2024-01-01 00:00:00
2,I,20,2024-01-01 00:00:00
3,I,30,2024-01-01 00:00:00'
# 1 changes, then the truncate; 2 comes back after it, 4 is new
second='1,U,11,2024-02-01 00:00:00
,T,,2024-02-02 00:00:00
2,I,22,2024-02-03 00:00:00
4,I,40,2024-02-04 00:00:00'

suite() {
  n=$1
  printf '%s\n' "$first" | feed "$n"
  tjob "$n" "$2"
  run_ok "$j" "$n: load 1, 2, 3"
  printf '%s\n' "$second" | feed "$n"
  before=$(tdump "t_$n")
  dw run "$j"
  is "$RC|$(field guard)|$(field absent)|$(field deleted)" "4|max_deletes|3|0" \
    "$n: the truncate reaches 3 of 3 live keys, over the default 50%: refused"
  like "$ERR" "a truncate row (load.deletes.truncate_values) would delete 3 of the 3 current keys of t_$n" \
    "$n: the message names the truncate"
  is "$(tdump "t_$n")" "$before" "$n: the refused run wrote nothing"
  dw run --max-deletes all "$j"
  is "$RC|$(field guard)" "0|null" "$n: --max-deletes all: the truncate applies"
  [ -z "${DWL_ENGINE:-}" ] || is "$(field engine)" "$DWL_ENGINE" "$n: the engine DWL_ENGINE names took the job"
  is "$(tdump "t_$n")" "$3" "$n: the whole table"
  dw run "$j"
  is "$RC|$(field inserted)|$(field deleted)|$(field updated)" "0|0|0|0" "$n: the same feed again changes nothing"
  is "$(tdump "t_$n")" "$3" "$n: the table is as before"
}

suite tu upsert '2|I|22|2024-02-03 00:00:00
4|I|40|2024-02-04 00:00:00'

# (dim_id, id, op, amount, lmd, valid_from, valid_to, is_current, is_deleted)
suite ts scd2 '1|1|I|10|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|2|I|20|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-02 00:00:00|0|1
3|3|I|30|2024-01-01 00:00:00|2024-01-01 00:00:00|2024-02-02 00:00:00|0|1
4|1|U|11|2024-02-01 00:00:00|2024-02-01 00:00:00|2024-02-02 00:00:00|0|1
5|2|I|22|2024-02-03 00:00:00|2024-02-03 00:00:00|<null>|1|0
6|4|I|40|2024-02-04 00:00:00|2024-02-04 00:00:00|<null>|1|0'

# a row of a key at the truncate's very lmd is a conflict
feed tc <<'EOF'
1,I,10,2024-01-01 00:00:00
2,I,20,2024-01-01 00:00:00
EOF
tjob tc scd2 '  max_deletes: all'
run_ok "$j" "tc: load 1, 2"
feed tc <<'EOF'
,T,,2024-02-01 00:00:00
1,U,11,2024-02-01 00:00:00
EOF
before=$(tdump t_tc)
dw run "$j"
is "$RC" 1 "tc: a row at the truncate's lmd: the run fails"
like "$ERR" "(id='1')" "tc: the message names the key"
is "$(tdump t_tc)" "$before" "tc: nothing written"

done_testing
