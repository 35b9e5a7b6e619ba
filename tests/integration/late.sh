# Late and out-of-order rows through the real binary: load.lookback
# rereads a window before the checkpoint, load.late repairs, rejects or
# ignores rows dated before their key's stored history ends.  Targeted
# cases; late_diff.sh compares random streams with one-run loads.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# ---- lookback: a row committed late, dated before the checkpoint -----------
csv=$(file lb.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 10:00:00
2,x,2024-01-01 12:00:00
EOF
)
j=$(mkjob lb "$csv" d_lb <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookback: 2h
dimension:
  surrogate_key: sk
EOF
)
run_ok "$j" "lookback: first run"
before=$(tdump d_lb sk)
dw run "$j"
is "$RC|$(field skipped)|$(field unchanged)" "0|1|1" \
  "lookback: rerun: the row in the window is reread (unchanged), the older one skipped"
is "$(tdump d_lb sk)" "$before" "lookback: rerun writes nothing"
# Row 3 was committed after the run, with an lmd before the checkpoint but
# inside the window; row 4 is older than the window.
file lb.csv >/dev/null <<'EOF'
id,v,lmd
1,a,2024-01-01 10:00:00
2,x,2024-01-01 12:00:00
3,n,2024-01-01 11:30:00
4,m,2024-01-01 09:59:59
EOF
run_ok "$j" "lookback: rows committed late"
is "$(field inserted)|$(field skipped)|$(field checkpoint)" "1|2|2024-01-01 12:00:00" \
  "lookback: the row inside the window is loaded, the one before it skipped; the checkpoint stays"
is "$(sql "select id, v, valid_from from d_lb order by id")" \
"1|a|2024-01-01 10:00:00
2|x|2024-01-01 12:00:00
3|n|2024-01-01 11:30:00" "lookback: the late key has its version"

# ---- repair: splice, merge with the successor; surrogate keys --------------
hist() {
  file "$1" <<'EOF'
id,region,v,op,lmd
1,n,a,,2024-01-01 00:00:00
1,n,b,,2024-01-10 00:00:00
2,n,p,,2024-01-01 00:00:00
2,n,q,,2024-01-10 00:00:00
3,,s,,2024-01-01 00:00:00
3,,w,,2024-01-10 00:00:00
4,n,k,,2024-01-01 00:00:00
4,n,k,D,2024-01-10 00:00:00
EOF
}
# late rows: 1 gets a version between its two; 2 a row equal to its
# successor (q starts earlier); 3 (a NULL key part) a version between; 4 a
# revival dated before its deletion.
late_rows() {
  cat >>"$1" <<'EOF'
1,n,c,,2024-01-05 00:00:00
2,n,q,,2024-01-05 00:00:00
3,,u,,2024-01-05 00:00:00
4,n,r,,2024-01-05 00:00:00
EOF
}
for style in expire tombstone; do
  for sk in sequence hash; do
    name="r_${style}_$sk"
    csv=$(hist "$name.csv")
    j=$(mkjob "$name" "$csv" "d_$name" <<EOF
load:
  mode: scd2
  key: [id, region]
  lmd: lmd
  deletes: {column: op, values: [D]}
  delete_style: $style
  lookback: 30d
dimension:
  surrogate_key: sk
  surrogate_strategy: $sk
EOF
)
    run_ok "$j" "$name: history"
    sks=$(sql "select id, sk from d_$name where valid_from = '2024-01-01 00:00:00' order by id")
    late_rows "$csv"
    run_ok "$j" "$name: late rows"
    is "$(field late_repaired)|$(field unchanged)" "4|8" "$name: four late rows repaired, the reread ones unchanged"
    if [ "$style" = expire ]; then
      want4="4|n|k|2024-01-01 00:00:00|2024-01-05 00:00:00|0|0
4|n|r|2024-01-05 00:00:00|2024-01-10 00:00:00|0|1"
    else
      want4="4|n|k|2024-01-01 00:00:00|2024-01-05 00:00:00|0|0
4|n|r|2024-01-05 00:00:00|2024-01-10 00:00:00|0|0
4|n|k|2024-01-10 00:00:00|<null>|1|1"
    fi
    is "$(sqln "select id, region, v, valid_from, valid_to, is_current, is_deleted from d_$name order by id, valid_from")" \
"1|n|a|2024-01-01 00:00:00|2024-01-05 00:00:00|0|0
1|n|c|2024-01-05 00:00:00|2024-01-10 00:00:00|0|0
1|n|b|2024-01-10 00:00:00|<null>|1|0
2|n|p|2024-01-01 00:00:00|2024-01-05 00:00:00|0|0
2|n|q|2024-01-05 00:00:00|<null>|1|0
3|<null>|s|2024-01-01 00:00:00|2024-01-05 00:00:00|0|0
3|<null>|u|2024-01-05 00:00:00|2024-01-10 00:00:00|0|0
3|<null>|w|2024-01-10 00:00:00|<null>|1|0
$want4" "$name: spliced, merged, deleted and revived in lmd order"
    is "$(sql "select id, sk from d_$name where valid_from = '2024-01-01 00:00:00' order by id")" "$sks" \
      "$name: the versions that were reshaped keep their surrogate keys"
    if [ "$sk" = hash ]; then
      is "$(sql "select count(*) from d_$name where lmd = valid_from")" \
        "$(sql "select count(*) from d_$name")" "$name: every version starts with the row that began it"
      # the same rows loaded in one run give every version the same hash
      ref=$(sed "s/^job: .*/job: ${name}_ref/; s/table: d_$name/table: d_${name}_ref/" "$j" | job "${name}_ref")
      run_ok "$ref" "$name: the same rows in one run"
      is "$(sql "select sk, valid_from from d_$name order by sk")" \
        "$(sql "select sk, valid_from from d_${name}_ref order by sk")" \
        "$name: hash keys follow valid_from, as a one-run load has them (a moved version rehashed)"
    else
      is "$(sql "select count(distinct sk) from d_$name")" "$(sql "select count(*) from d_$name")" \
        "$name: new versions get new sequence keys"
    fi
    before=$(tdump "d_$name" sk)
    run_ok "$j" "$name: the same rows again"
    is "$(field late_repaired)|$(field inserted)|$(field updated)" "0|0|0" "$name: rereading repaired rows is a no-op"
    is "$(tdump "d_$name" sk)" "$before" "$name: nothing written"
  done
done

# ---- plan, and lookup: keys ---------------------------------------------------
csv=$(file pl.csv <<'EOF'
id,city,lmd
7,Oslo,2024-03-01 08:00:00
7,Rome,2024-03-04 08:00:00
8,X,2024-03-01 00:00:00
EOF
)
j=$(mkjob pl "$csv" d_pl <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookback: 1d
EOF
)
run_ok "$j" "plan: history"
echo "7,Bergen,2024-03-03 20:00:00" >>"$csv"
before=$(wh_dump)
dw plan --sql "$j"
is "$RC|$(field late_repaired)|$(field inserted)|$(field updated)|$(field skipped)" "0|1|1|1|2" \
  "plan: the repair it would make (Oslo closed earlier, Bergen inserted; Oslo's row older than the window)"
like "$OUT" "'Bergen'" "plan --sql: the inserted version is shown"
is "$(wh_dump)" "$before" "plan: nothing written"
# (lookup is the memory engine's: not with DWL_ENGINE=pushdown)
sed -i -e 's/lookback: 1d/lookback: 1d\n  lookup: keys/' -e '/^  engine: pushdown$/d' "$j"
run_ok "$j" "lookup: keys, the late row"
is "$(sql "select city, valid_from, valid_to, is_current from d_pl where id = '7' order by valid_from")" \
"Oslo|2024-03-01 08:00:00|2024-03-03 20:00:00|0
Bergen|2024-03-03 20:00:00|2024-03-04 08:00:00|0
Rome|2024-03-04 08:00:00||1" "lookup: keys: the history read through the staged keys and repaired"

# ---- a stored history with two equal versions in a row (written by hand) ----
csv=$(file rd.csv <<'EOF'
id,v,lmd
9,a,2024-01-01 00:00:00
9,b,2024-01-10 00:00:00
EOF
)
j=$(mkjob rd "$csv" d_rd <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookback: 30d
EOF
)
run_ok "$j" "redundant: history"
sql "update d_rd set v = 'a' where valid_from = '2024-01-10 00:00:00'" >/dev/null
echo "9,a,2024-01-05 00:00:00" >>"$csv"
sed -i 's/^9,b,/9,a,/' "$csv"
run_ok "$j" "redundant: a key's history rebuilt"
is "$(sqln "select v, valid_from, valid_to, is_current from d_rd")" "a|2024-01-01 00:00:00|<null>|1" \
  "redundant: the replay merges the equal versions: one reshaped, the other removed"

# ---- reject and ignore -------------------------------------------------------
csv=$(file rj.csv <<'EOF'
id,v,lmd
1,a,2024-01-10 00:00:00
2,x,2024-01-10 00:00:00
EOF
)
j=$(mkjob rj "$csv" d_rj <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookback: 10d
  late: reject
EOF
)
run_ok "$j" "reject: first run"
before=$(tdump d_rj)
file rj.csv >/dev/null <<'EOF'
id,v,lmd
1,a,2024-01-10 00:00:00
2,x,2024-01-10 00:00:00
1,a,2024-01-10 00:00:00
2,y,2024-01-05 00:00:00
1,b,2024-01-12 00:00:00
EOF
dw run "$j"
is "$RC|$(field status)|$(field late_rejected)" '1|failed|1' "reject: a late row fails the run, counted"
like "$ERR" "rj.csv:5: key (id='2') has lmd 2024-01-05 00:00:00, before the key's stored history ends (2024-01-10 00:00:00): a late row, and load.late is reject" \
  "reject: the message names the row and the key"
is "$(tdump d_rj)" "$before" "reject: nothing written, not even the other key's change"
# With load.max_rejects the late row goes to the reject file instead, and
# the rest of the run is applied.
# (a job of its own: its first run loads the first two rows of rj.csv)
head -n 3 "$WORK/rj.csv" >"$WORK/rj2.csv"
sed -e 's/rj\.csv/rj2.csv/; s/d_rj/d_rj2/; s/^job: .*/job: rj2/' "$j" >"$WORK/rj2.yaml"
printf '  max_rejects: 1\n  reject_file: rj2.rejects.csv\n' >>"$WORK/rj2.yaml"
run_ok "$WORK/rj2.yaml" "reject with max_rejects: first run"
cp "$WORK/rj.csv" "$WORK/rj2.csv"
dw run "$WORK/rj2.yaml"
is "$RC|$(field late_rejected)|$(field rejected)|$(field inserted)|$(field expired)" "0|1|1|1|1" \
  "reject with max_rejects: the late row set aside, counted twice, key 1's change applied"
like "$(cat "$WORK/rj2.rejects.csv")" "rj2.csv,5,\"key (id='2') has lmd 2024-01-05 00:00:00" \
  "reject with max_rejects: the reject file names the row, its line and why"
is "$(sql "select id, v, valid_from from d_rj2 where id = '2'")" "2|x|2024-01-10 00:00:00" \
  "reject with max_rejects: key 2's history untouched"
sed -i 's/late: reject/late: ignore/' "$j"
run_ok "$j" "ignore"
is "$(field late_ignored)|$(field inserted)|$(field expired)" "1|1|1" "ignore: the late row skipped and counted, the rest applied"
is "$(sql "select id, v, valid_from from d_rj order by id, valid_from")" \
"1|a|2024-01-10 00:00:00
1|b|2024-01-12 00:00:00
2|x|2024-01-10 00:00:00" "ignore: key 2's history untouched"

# ---- close rules: the spliced version ends as the rule says -----------------
csv=$(file cr.csv <<'EOF'
id,v,lmd
1,a,2024-01-01
1,b,2024-01-10
EOF
)
j=$(mkjob cr "$csv" d_cr <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookback: 30d
dimension:
  close: day_before
  open_end: '9999-12-31'
EOF
)
run_ok "$j" "day_before: history"
printf '1,c,2024-01-05\n' >>"$csv"
run_ok "$j" "day_before: a late row"
is "$(sql "select v, valid_from, valid_to from d_cr order by valid_from")" \
"a|2024-01-01 00:00:00|2024-01-04 00:00:00
c|2024-01-05 00:00:00|2024-01-09 00:00:00
b|2024-01-10 00:00:00|9999-12-31 00:00:00" "day_before: each version ends the day before the next"

done_testing
