# scd2 with deletes: absent on both engines (pushdown_absent.c against the
# memory engine): the same full extracts, round after round, go into two
# tables of one warehouse, memory into the one and pushdown into the
# other, with their checkpoints kept; after each round the exit codes,
# counts, warnings and rows must be equal.  The instants a run's clock
# stamps (deletions, and the rows moved to them) differ between two runs,
# so the comparison reads them as RUN, and a hash surrogate key of a row
# stamped so as H; tdump_run checks they are today's (or, for day_before,
# yesterday's) times.
#
# Truncate rows (a fourth layout, trn) delete every key at their lmd the
# same way: the delta's keys by a delete row, the others closed there.
#
# Round 1 loads keys 1 to 7 and a NULL key.  Round 2: key 1 changes, 3, 5,
# 6, 7 and the NULL key are absent (deleted at the run's clock), 2 and 4
# come again unchanged (not past the checkpoint: they only say their key
# exists).  Round 3: 3 comes back with its old row (not past the
# checkpoint, dated before its deletion: moved to it); 5 with two rows
# before the deletion (the first dropped); 6 with one row before it and a
# later one after the checkpoint; the NULL key with a new row; 2 is absent
# now; 7 stays away.  Round 4 brings 2 back with a row past the
# checkpoint, dated after its deletion.  Three layouts: expire style with
# sequence keys and close at_next; tombstones with hash keys and
# second_before; tombstones with sequence keys and day_before, with
# load.partition in round 5.  The first has no current flag: its current
# versions end at open_end, a value the statements bind.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# spilled_run NAME: the last run spilled its delta, or (deletes: absent
# with a key map past the budget) partitioned its key map with it
spilled_run() {
  case "$ERR" in
    *"delta exceeds the memory budget 0.000977 MiB: spilling to"* | \
      *"passes the memory budget 0.000977 MiB: the current versions and the source go to"*) pass "$1" ;;
    *) fail "$1" "expected a spill line" "got: $ERR" ;;
  esac
}

unset DWL_ENGINE

# job NAME ENGINE LAYOUT [SUFFIX]: the job file (memory or pushdown) of
# layout NAME, job and table named by SUFFIX (default: the engine's
# initial)
ajob() {
  _sfx=${4:-${2%"${2#?}"}}
  _dim=$(case $3 in
    exp) printf "dimension:\n  surrogate_strategy: sequence\n  current: null\n  open_end: '9999-12-31 00:00:00'\n" ;;
    tmbh) printf 'dimension:\n  surrogate_strategy: hash\n  close: second_before\n' ;;
    tmbd) printf 'dimension:\n  surrogate_strategy: sequence\n  close: day_before\n' ;;
    trd) printf 'dimension:\n  close: day_before\n' ;;
  esac)
  _load=$(case $3 in
    exp) printf '  delete_style: expire\n' ;;
    tmbh) printf '  delete_style: tombstone\n' ;;
    tmbd) printf '  delete_style: tombstone\n  partition: [region]\n' ;;
  esac)
  _del='deletes: absent'
  case $3 in trn | trd) _del='deletes: {column: op, values: [D], truncate_values: [T]}' ;; esac
  _lmd=lmd _types=
  [ "$3" = tmbd ] && _types='  types: {lmd: date}'
  [ "$3" = cmp ] && _lmd='[lmd, seq]' _types='  types: {seq: integer}'
  mkjob "$1_$_sfx" "$WORK/$1.csv" "d_$1_$_sfx" "$_types" >/dev/null <<YAML
$_dim
load:
  mode: scd2
  engine: $2
  key: id
  lmd: $_lmd
  type2: [city]
  type1: [phone]
  $_del
  max_deletes: all
$_load
YAML
}

# round NAME N MSG: both engines' runs on the extract $WORK/NAME.N.csv;
# everything compared (pushdown's stderr left in P_ERR).  With SPILL set, a third run, the memory engine's
# under a 1 KiB memory budget (its delta spilled to partition files,
# run_spill.c), is compared with the first, but for the sequence
# surrogate key it numbers partition by partition.
round() {
  cp "$WORK/$1.$2.csv" "$WORK/$1.csv"
  for _e in m p ${SPILL:+s}; do
    dw run ${SPILL:+$([ "$_e" = s ] && echo --memory-budget 1KiB)} "$WORK/$1_$_e.yaml"
    printf '%s\n' "$RC" "$(counts) absent=$(field absent)" \
      "late: repaired=$(field late_repaired) ignored=$(field late_ignored) rejected=$(field late_rejected)" \
      >"$WORK/$1.$2.$_e.out"
    # (the spilled run's 1 KiB budget is below the key map of every
    # current version, which it says: the one warning the others lack)
    printf '%s\n' "$ERR" | grep ' warn: \| error: ' | grep -v ' of key map, more than the memory budget ' |
      sed "s/^[^ ]* dwload[[][^]]*[]] //; s/$1_$_e/JOB/g" >"$WORK/$1.$2.$_e.err"
    [ "$_e" = p ] && _eng=$(field engine) P_ERR=$ERR
  done
  is "$_eng" pushdown "$3: the second run is pushdown's"
  is "$(cat "$WORK/$1.$2.p.out")" "$(cat "$WORK/$1.$2.m.out")" "$3: the same exit code and counts"
  is "$(cat "$WORK/$1.$2.p.err")" "$(cat "$WORK/$1.$2.m.err")" "$3: the same warnings"
  is "$(tdump "d_$1_p" | norm_run)" "$(tdump "d_$1_m" | norm_run)" "$3: the same rows"
  [ -n "${SPILL:-}" ] || return 0
  is "$(cat "$WORK/$1.$2.s.out")|$(cat "$WORK/$1.$2.s.err")" \
    "$(cat "$WORK/$1.$2.m.out")|$(cat "$WORK/$1.$2.m.err")" "$3: spilled: the same exit code, counts and warnings"
  _cols=$(wh_columns "d_$1_m" | grep -vx dim_id | paste -sd, -)
  is "$(sqln "SELECT $_cols FROM d_$1_s" | norm_run)" "$(sqln "SELECT $_cols FROM d_$1_m" | norm_run)" \
    "$3: spilled: the same rows"
}

for lay in exp tmbh tmbd; do
  if [ $lay = tmbd ]; then
    d1=2024-01-01 d2=2024-01-02 d3=2024-01-03 d4=2024-01-04 d9=2023-12-30 d8=2023-12-20 d7=2023-12-01
  else
    d1="2024-01-01 00:00:00" d2="2024-01-02 00:00:00" d3="2024-01-03 00:00:00" d4="2024-01-04 00:00:00"
    d9="2023-12-30 00:00:00" d8="2023-12-20 00:00:00" d7="2023-12-01 00:00:00"
  fi
  ajob $lay memory $lay
  ajob $lay pushdown $lay
  # (load.partition's counts span every key: such a run does not spill)
  SPILL=$([ $lay = tmbd ] || echo 1)
  ajob $lay memory $lay s
  file "$lay.1.csv" >/dev/null <<EOF
id,city,phone,region,lmd
1,Oslo,a,n,$d1
2,Rome,b,s,$d1
3,Lima,c,s,$d1
4,Kiev,d,n,$d1
5,Pune,e,s,$d1
6,Baku,f,s,$d1
7,Nuuk,g,n,$d1
,Nul,h,s,$d1
EOF
  round $lay 1 "$lay: round 1, the first load"
  file "$lay.2.csv" >/dev/null <<EOF
id,city,phone,region,lmd
1,Bergen,a,n,$d2
2,Rome,b,s,$d1
4,Kiev,d,n,$d1
EOF
  round $lay 2 "$lay: round 2, five keys absent"
  file "$lay.3.csv" >/dev/null <<EOF
id,city,phone,region,lmd
1,Bergen,a,n,$d2
3,Lima,c,s,$d1
4,Kiev,d,n,$d1
5,Goa,e,s,$d9
5,Pune,x,s,$d2
6,Baku,f,s,$d1
6,Ufa,f,s,$d3
,Nul,w,s,$d3
EOF
  round $lay 3 "$lay: round 3, four keys back"
  # Of the six rows not past the checkpoint, those of keys 1 and 4 (live)
  # only say that their key exists: the warehouse gets the other four
  # (keys 3, 5 and 6) alone.
  like "$P_ERR" "pushdown: 4 of the 6 rows not past the checkpoint are of keys without a live version: staged" \
    "$lay: round 3: only the rows of keys without a live version staged"
  file "$lay.4.csv" >/dev/null <<EOF
id,city,phone,region,lmd
1,Bergen,a,n,$d2
2,Milan,b,s,$d4
3,Lima,c,s,$d1
4,Kiev,d,n,$d1
5,Pune,x,s,$d2
6,Ufa,f,s,$d3
,Nul,w,s,$d3
EOF
  round $lay 4 "$lay: round 4, a key back past the checkpoint"
  # the deletions really are the run's: RUN stands for today (yesterday
  # with day_before)
  n_run=$(tdump "d_${lay}_p" | norm_run | grep -c RUN)
  [ "$n_run" -gt 0 ] && pass "$lay: the runs stamped deletions ($n_run rows)" ||
    fail "$lay: the runs stamped deletions" "$(tdump "d_${lay}_p")"
  if [ -n "$SPILL" ]; then
    # (the last round's run: three keys' rows past the checkpoint)
    spilled_run "$lay: the third run spilled"
  fi
  # Late rows (every checkpoint set back before them): pushdown hands
  # their keys to the memory engine (pd_hands_absent).  Round L1, late:
  # repair: 4 gets a version before its first; 1's first row again (the
  # history says it: unchanged); 2, 3, 5, 6 and the NULL key have rows
  # dated before their deletion by absence (a run's clock: ignored; the
  # NULL key is looked up apart); 8 is new; with
  # second_before, 1 a row half a second after its version's start (within
  # the close step).  Round L2, late: reject: 3's row before its deletion
  # is still ignored, not rejected; round L3: 4's older row is rejected,
  # and without a reject file the run fails, on both engines alike.
  set_back() {
    for _e in m p ${SPILL:+s}; do
      dw state --set "$d7" "$WORK/${lay}_$_e.yaml"
      is "$RC" 0 "$lay: checkpoint of ${lay}_$_e set back"
    done
  }
  set_back
  file "$lay.L1.csv" >/dev/null <<EOF
id,city,phone,region,lmd
1,Oslo,a,n,$d1
1,Bergen,a,n,$d2
2,Turin,b,s,$d3
2,Milan,b,s,$d4
3,Cusco,c,s,$d2
4,Riga,d,n,$d9
4,Kiev,d,n,$d1
5,Pune,x,s,$d2
6,Ufa,f,s,$d3
8,Faro,k,s,$d2
,Nul,w,s,$d3
,Nil,w,s,$d2
EOF
  [ $lay = tmbh ] && echo "1,Molde,a,n,2024-01-02 00:00:00.5" >>"$WORK/$lay.L1.csv"
  round $lay L1 "$lay: round L1, late rows repaired"
  like "$P_ERR" "go to the memory engine" "$lay: round L1: pushdown handed keys over"
  is "$(sqln "SELECT city FROM d_${lay}_p WHERE id = '4' ORDER BY valid_from" | paste -sd, -)" "Riga,Kiev" \
    "$lay: round L1: key 4's late row is its first version"
  for _e in m p ${SPILL:+s}; do
    sed -i 's/^  max_deletes: all$/  max_deletes: all\n  late: reject/' "$WORK/${lay}_$_e.yaml"
  done
  set_back
  # (with second_before, Molde took the place of 1's Bergen version: its
  # row again would be a second version at that instant)
  grep -v "^1,Bergen,a,n,$d2\$" "$WORK/$lay.L1.csv" | sed "s/^3,Cusco,c,s,.*/3,Quito,c,s,$d2/" >"$WORK/$lay.L2.csv"
  [ $lay = tmbh ] || echo "1,Bergen,a,n,$d2" >>"$WORK/$lay.L2.csv"
  round $lay L2 "$lay: round L2, late: reject, a row before a deletion by absence"
  is "$(sed -n 1p "$WORK/$lay.L2.p.out")" 0 "$lay: round L2: the run commits"
  like "$(sed -n 3p "$WORK/$lay.L2.p.out")" "rejected=0" "$lay: round L2: 3's row ignored, not rejected"
  set_back
  sed "s/^4,Riga,d,n,.*/4,Vigo,d,n,$d8/" "$WORK/$lay.L2.csv" >"$WORK/$lay.L3.csv"
  round $lay L3 "$lay: round L3, late: reject, a late row rejected"
  is "$(sed -n 1p "$WORK/$lay.L3.p.out")" 1 "$lay: round L3: the run fails (exit 1)"
done
SPILL=

# load.partition (tmbd): an extract of region n only judges that region's
# keys: 1 is deleted, s's keys stay
file tmbd.5.csv >/dev/null <<'EOF'
id,city,phone,region,lmd
4,Kiev,d,n,2024-01-01
EOF
round tmbd 5 "tmbd: round 5, one partition delivered"
cur_deleted() {
  sql "SELECT CASE WHEN is_deleted THEN 1 ELSE 0 END FROM d_tmbd_p WHERE id = '$1' AND valid_to IS NULL"
}
is "$(cur_deleted 1)|$(cur_deleted 2)" "1|0" "tmbd: round 5: region n's absent key deleted, region s's kept"

# ---- truncate rows (load.deletes.truncate_values) -----------------------------
# Round 2: key 1 changes before the first truncate and comes back after
# it (the second closes it again); 6 is new before the first (a version
# it closes), 7 between the two, 8 after the second; 2 to 5 are not in the
# delta and close at the first.  Round 3: 2 comes back, 9 is new, nothing truncated.
ajob trn memory trn
ajob trn pushdown trn
ajob trn memory trn s
SPILL=1
file trn.1.csv >/dev/null <<'EOF'
id,city,phone,region,op,lmd
1,Oslo,a,n,,2024-01-01 00:00:00
2,Rome,b,s,,2024-01-01 00:00:00
3,Lima,c,s,,2024-01-01 00:00:00
4,Kiev,d,n,,2024-01-01 00:00:00
5,Pune,e,s,,2024-01-01 00:00:00
EOF
round trn 1 "trn: round 1, the first load"
file trn.2.csv >/dev/null <<'EOF'
id,city,phone,region,op,lmd
1,Bergen,a,n,,2024-01-02 00:00:00
,,,,T,2024-01-03 00:00:00
1,Bergen,z,n,,2024-01-04 00:00:00
6,Baku,f,s,,2024-01-02 00:00:00
7,Nuuk,g,n,,2024-01-04 00:00:00
,,,,T,2024-01-06 00:00:00
8,Ufa,h,s,,2024-01-07 00:00:00
EOF
round trn 2 "trn: round 2, two truncates"
# (inserted: 1 twice, 6, 7, 8; deleted: 1 twice, 6, 7, and 2 to 5; 6's
# second truncate finds it deleted: unchanged)
is "$(sed -n 2p "$WORK/trn.2.p.out")" "read=7 skipped=0 inserted=5 expired=1 updated=0 deleted=8 unchanged=1 absent=5" \
  "trn: round 2: the counts (the five live keys reached)"
file trn.3.csv >/dev/null <<'EOF'
id,city,phone,region,op,lmd
2,Rome,b,s,,2024-01-08 00:00:00
9,Oran,i,s,,2024-01-08 00:00:00
EOF
round trn 3 "trn: round 3, keys back, none truncated"
spilled_run "trn: the third run spilled"
# Round 4, the checkpoints set back: 2 has a late row (after its
# truncation, before its return), 1 one before its truncation (the end of
# its deleted version); both go to the memory engine, which gives 2 the
# new truncate's delete row itself; 9 is in the delta as stored, 8 not
# (pushdown closes it at the truncate).
for _e in m p s; do
  dw state --set "2024-01-04 00:00:00" "$WORK/trn_$_e.yaml"
  is "$RC" 0 "trn: checkpoint of trn_$_e set back"
done
file trn.4.csv >/dev/null <<'EOF'
id,city,phone,region,op,lmd
2,Rome,b,s,,2024-01-08 00:00:00
2,Pisa,b,s,,2024-01-05 00:00:00
9,Oran,i,s,,2024-01-08 00:00:00
1,Molde,z,n,,2024-01-05 00:00:00
,,,,T,2024-01-10 00:00:00
EOF
round trn 4 "trn: round 4, late rows and a truncate"
like "$P_ERR" "go to the memory engine" "trn: round 4: pushdown handed keys over"
is "$(sqln "SELECT city FROM d_trn_p WHERE id = '2' ORDER BY valid_from" | paste -sd, -)" "Rome,Pisa,Rome" \
  "trn: round 4: key 2's late row spliced in"
is "$(sql "SELECT COUNT(*) FROM d_trn_p WHERE valid_to IS NULL")" 0 "trn: round 4: the truncate closed every key"
SPILL=

# ---- a composite lmd (load.lmd: [lmd, seq]) -----------------------------------
# Round 2: 1 has two rows at one first value (their tie-breakers order
# them), 2 a row at its version's start with a greater tie-breaker (it
# replaces the version), 3 is absent; pushdown hands 1 and 2 to the memory
# engine.  Round 3: 3 comes back with its old row (moved to its deletion),
# 1 and 2 as stored.
ajob cmp memory cmp
ajob cmp pushdown cmp
file cmp.1.csv >/dev/null <<'EOF'
id,city,phone,region,lmd,seq
1,Oslo,a,n,2024-01-01 00:00:00,0
2,Rome,b,s,2024-01-01 00:00:00,0
3,Lima,c,s,2024-01-01 00:00:00,0
4,Kiev,d,n,2024-01-01 00:00:00,0
EOF
round cmp 1 "cmp: round 1, the first load"
file cmp.2.csv >/dev/null <<'EOF'
id,city,phone,region,lmd,seq
1,Lyon,a,n,2024-01-02 00:00:00,2
1,Paris,a,n,2024-01-02 00:00:00,1
2,Turin,b,s,2024-01-01 00:00:00,5
4,Kiev,d,n,2024-01-01 00:00:00,0
EOF
round cmp 2 "cmp: round 2, ties and a replaced version, a key absent"
like "$P_ERR" "go to the memory engine" "cmp: round 2: pushdown handed keys over"
is "$(sqln "SELECT city FROM d_cmp_p WHERE id = '1' ORDER BY valid_from" | paste -sd, -)" "Oslo,Lyon" \
  "cmp: round 2: the greater tie-breaker's row is key 1's version"
file cmp.3.csv >/dev/null <<'EOF'
id,city,phone,region,lmd,seq
1,Lyon,a,n,2024-01-02 00:00:00,2
2,Turin,b,s,2024-01-01 00:00:00,5
3,Lima,c,s,2024-01-01 00:00:00,0
4,Kiev,d,n,2024-01-01 00:00:00,0
EOF
round cmp 3 "cmp: round 3, a key back"

# ---- truncate rows with close: day_before ---------------------------------------
# Round 2: 1 has two rows less than a day apart (the first replaced within
# the close step), 2 a row less than a day after its version's start; both
# go to the memory engine, which gives them the truncate too; 3 is new.
ajob trd memory trd
ajob trd pushdown trd
file trd.1.csv >/dev/null <<'EOF'
id,city,phone,region,op,lmd
1,Oslo,a,n,,2024-03-01 09:00:00
2,Rome,b,s,,2024-03-01 09:00:00
4,Kiev,d,n,,2024-03-01 09:00:00
EOF
round trd 1 "trd: round 1, the first load"
file trd.2.csv >/dev/null <<'EOF'
id,city,phone,region,op,lmd
1,Bergen,a,n,,2024-03-02 09:00:00
1,Molde,a,n,,2024-03-02 17:00:00
2,Turin,b,s,,2024-03-01 20:00:00
3,Lima,c,s,,2024-03-03 09:00:00
,,,,T,2024-03-05 00:00:00
EOF
round trd 2 "trd: round 2, rows within the close step, a truncate"
like "$P_ERR" "go to the memory engine" "trd: round 2: pushdown handed keys over"
is "$(sql "SELECT COUNT(*) FROM d_trd_p WHERE valid_to IS NULL")" 0 "trd: round 2: the truncate closed every key"

# The guard: the default max_deletes stops an extract that lost most keys,
# with the same message and nothing written, on both engines.
for _e in m p; do
  sed -i '/max_deletes: all/d' "$WORK/exp_$_e.yaml"
done
before_m=$(tdump d_exp_m) before_p=$(tdump d_exp_p)
printf 'id,city,phone,region,lmd\n1,Bergen,a,n,2024-01-02 00:00:00\n' >"$WORK/exp.6.csv"
round exp 6 "exp: round 6, the guard"
is "$(sed -n 1p "$WORK/exp.6.p.out")" 4 "exp: round 6: the guard stops pushdown's run (exit 4)"
is "$(tdump d_exp_p)|$(tdump d_exp_m)" "$before_p|$before_m" "exp: round 6: nothing written"

done_testing
