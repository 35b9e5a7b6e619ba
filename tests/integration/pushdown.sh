# load.engine: pushdown against the memory engine: each case runs the same
# feeds through a memory job and a pushdown job into two tables of the same
# warehouse and compares the tables row for row and the summaries' counts
# after every run; then pushdown's own errors, refusals and plan.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# The jobs below name their engine; DWL_ENGINE (the suite's switch for the
# other scripts) must not change them.
unset DWL_ENGINE

# pair NAME TABLE [SOURCE-LINES]: jobs NAME_m (memory, table TABLE_m) and
# NAME_p (pushdown, TABLE_p) reading $WORK/NAME.csv; their load: and
# dimension: sections come on stdin, with @ENGINE@ for the engine.
pair() {
  _spec=$(cat)
  printf '%s\n' "$_spec" | sed 's/@ENGINE@/memory/' | mkjob "${1}_m" "$WORK/$1.csv" "${2}_m" "${3:-}" >/dev/null
  printf '%s\n' "$_spec" | sed 's/@ENGINE@/pushdown/' | mkjob "${1}_p" "$WORK/$1.csv" "${2}_p" "${3:-}" >/dev/null
}

# both NAME TABLE ROWS MSG: runs both jobs on the current $WORK/NAME.csv;
# both succeed, report the same counts, leave the same rows, and the
# table has ROWS rows (so equal tables are not both empty by mistake)
both() {
  dw run "$WORK/${1}_m.yaml"
  _mrc=$RC _mc=$(counts) _merr=$ERR
  dw run "$WORK/${1}_p.yaml"
  is "$_mrc $RC" "0 0" "$4: both engines exit 0"
  if [ "$_mrc $RC" != "0 0" ]; then echo "# memory: $_merr"; echo "# pushdown: $ERR"; fi
  is "$(counts)" "$_mc" "$4: the same counts"
  is "$(tdump "${2}_p")" "$(tdump "${2}_m")" "$4: the same rows"
  is "$(sql "SELECT COUNT(*) FROM ${2}_p")" "$3" "$4: $3 rows"
}

# ---- scd2: type 2 and type 1 (current) columns, chains in one batch ------
pair hist d_hist '  types: {id: integer, zip: integer, lmd: timestamp}' <<'EOF'
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  type2: [city, zip]
  type1: [phone]
EOF
file hist.csv >/dev/null <<'EOF'
id,city,zip,phone,lmd
1,Oslo,100,p1,2024-01-01 10:00:00
1,Oslo,100,p2,2024-01-02 10:00:00
1,Bergen,200,p2,2024-01-03 10:00:00
2,Rome,,x,2024-01-01 09:00:00
2,Rome,,x,2024-01-01 09:00:00
3,,300,,2024-01-05 00:00:00
3,Paris,300,,2024-01-04 00:00:00
4,Lima,1,a,2024-01-01 00:00:00
4,Lima,2,a,2024-01-02 00:00:00
4,Lima,1,b,2024-01-03 00:00:00
EOF
both hist d_hist 8 "hist run 1: chains, collapse, an identical duplicate, NULLs"
file hist.csv >/dev/null <<'EOF'
id,city,zip,phone,lmd
1,Bergen,200,p3,2024-02-01 00:00:00
1,Bergen,200,p4,2024-02-02 00:00:00
2,Rome,,y,2024-02-01 00:00:00
2,Rome,5,y,2024-02-02 00:00:00
2,Rome,5,z,2024-02-03 00:00:00
3,,300,,2024-02-01 00:00:00
4,Lima,1,b,2024-02-01 00:00:00
4,Lima,2,b,2024-02-02 00:00:00
4,Lima,1,b,2024-02-03 00:00:00
5,Kiev,7,q,2024-02-01 00:00:00
EOF
both hist d_hist 12 "hist run 2: type 1 on current versions, changes after them, no-ops, a flip-flop"
both hist d_hist 12 "hist run 3: the same feed again skips everything"

# ---- scd2: type1_scope all, tombstones, revivals, hash keys, dates -------
pair tomb d_tomb '  types: {id: integer, lmd: date}' <<'EOF'
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  type2: [city]
  type1: [tier]
  type1_scope: all
  deletes: {column: op, values: [D, X]}
  delete_style: tombstone
dimension:
  surrogate_key: sk
  surrogate_strategy: hash
  open_end: "9999-12-31"
  close: day_before
EOF
file tomb.csv >/dev/null <<'EOF'
id,city,tier,op,lmd
1,Oslo,gold,U,2024-01-01
1,Bergen,gold,U,2024-01-05
2,Rome,silver,U,2024-01-01
3,Paris,bronze,U,2024-01-01
3,Paris,bronze,D,2024-01-03
3,Nice,silver,U,2024-01-04
4,Lima,gold,U,2024-01-02
EOF
both tomb d_tomb 7 "tomb run 1: a delete and a revival in one batch"
file tomb.csv >/dev/null <<'EOF'
id,city,tier,op,lmd
1,Bergen,platinum,U,2024-02-01
2,Rome,silver,D,2024-02-01
2,Rome,silver,X,2024-02-02
4,Lima,iron,U,2024-02-01
4,Cusco,iron,U,2024-02-03
9,Nowhere,none,D,2024-02-01
EOF
both tomb d_tomb 9 "tomb run 2: type 1 over every version, a tombstone, a repeated delete, an unknown key deleted"
file tomb.csv >/dev/null <<'EOF'
id,city,tier,op,lmd
2,Rome,gold,U,2024-03-01
3,Nice,gold,D,2024-03-01
3,Nice,gold,D,2024-03-02
EOF
both tomb d_tomb 11 "tomb run 3: a revival from a stored tombstone, a delete"

# ---- scd2: composite key with NULLs, expire deletes, no current flag -----
pair comp d_comp '  types: {id: integer, amount: "numeric(8,2)", lmd: timestamp}' <<'EOF'
load:
  mode: scd2
  engine: @ENGINE@
  key: [region, id]
  lmd: lmd
  deletes: {column: op, values: [D]}
dimension:
  current: null
  close: second_before
EOF
file comp.csv >/dev/null <<'EOF'
region,id,amount,op,lmd
EU,1,10.50,U,2024-01-01 00:00:00
EU,1,10.5,U,2024-01-02 00:00:00
,1,7,U,2024-01-01 00:00:00
,1,8,U,2024-01-02 00:00:00
US,2,1,U,2024-01-01 00:00:00
US,2,1,D,2024-01-03 00:00:00
EOF
both comp d_comp 4 "comp run 1: NULL key parts, numeric no-ops, an expire-style delete"
file comp.csv >/dev/null <<'EOF'
region,id,amount,op,lmd
US,2,3,U,2024-02-01 00:00:00
,1,8,D,2024-02-01 00:00:00
,1,9,U,2024-02-02 00:00:00
EU,1,11,U,2024-02-01 00:00:00
EU,1,11,D,2024-02-05 00:00:00
EOF
both comp d_comp 7 "comp run 2: a revival after a stored deletion, delete and revival of a NULL key"

# ---- upsert ----------------------------------------------------------------
pair ups t_ups '  types: {a: integer, v: integer, lmd: timestamp}' <<'EOF'
load:
  mode: upsert
  engine: @ENGINE@
  key: [a, b]
  lmd: lmd
  deletes: {column: op, values: [D]}
EOF
file ups.csv >/dev/null <<'EOF'
a,b,v,op,lmd
1,x,1,U,2024-01-01 00:00:00
1,x,2,U,2024-01-02 00:00:00
1,,3,U,2024-01-01 00:00:00
2,y,4,U,2024-01-01 00:00:00
3,z,5,U,2024-01-01 00:00:00
3,z,5,D,2024-01-02 00:00:00
EOF
both ups t_ups 3 "upsert run 1: last row per key, a NULL key part, inserted then deleted"
file ups.csv >/dev/null <<'EOF'
a,b,v,op,lmd
1,x,2,U,2024-02-01 00:00:00
1,,30,U,2024-02-01 00:00:00
2,y,4,D,2024-02-01 00:00:00
3,z,6,U,2024-02-01 00:00:00
4,w,,U,2024-02-01 00:00:00
EOF
both ups t_ups 4 "upsert run 2: a no-op, an update by NULL key, a delete, re-inserted and new keys"

# upsert with deletes: absent: rows not past the checkpoint still say their
# key is present; a run with no row past it still deletes
pair upa t_upa '  types: {a: integer, lmd: timestamp}' <<'EOF'
load:
  mode: upsert
  engine: @ENGINE@
  key: a
  lmd: lmd
  deletes: absent
EOF
file upa.csv >/dev/null <<'EOF'
a,v,lmd
1,x,2024-01-01 00:00:00
2,y,2024-01-01 00:00:00
3,z,2024-01-01 00:00:00
EOF
both upa t_upa 3 "upsert absent run 1"
file upa.csv >/dev/null <<'EOF'
a,v,lmd
1,x,2024-01-01 00:00:00
2,w,2024-01-02 00:00:00
EOF
both upa t_upa 2 "upsert absent run 2: a key missing, one skipped but present"
file upa.csv >/dev/null <<'EOF'
a,v,lmd
1,x,2024-01-01 00:00:00
EOF
both upa t_upa 1 "upsert absent run 3: nothing past the checkpoint, a key missing"

# ---- generated feeds: many keys, random changes, deletes and duplicates -----
# Seeded, so a failure reproduces; values from small sets so that no-ops,
# collapses and flip-flops are common.
gen() {
  python3 - "$1" "$2" <<'PY'
import random, sys
run, out = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(1000 + run)
rows = []
for key in range(1, 41):
    if rnd.random() < 0.3:
        continue
    n = rnd.randint(1, 4)
    minutes = sorted(rnd.sample(range(1, 600), n))
    for m in minutes:
        lmd = "2024-%02d-01 %02d:%02d:00" % (run, m // 60, m % 60)
        op = "D" if rnd.random() < 0.15 else "U"
        row = (str(key % 7) if key % 5 else "", str(key), rnd.choice(["a", "b", ""]),
               rnd.choice(["1", "2"]), rnd.choice(["p", "q"]), op, lmd)
        rows.append(row)
        if rnd.random() < 0.1:
            rows.append(row)  # an identical duplicate
rnd.shuffle(rows)
with open(out, "w") as f:
    f.write("g,id,c2,n2,t1,op,lmd\n")
    for r in rows:
        f.write(",".join(r) + "\n")
PY
}
for scope in current all; do
  for style in expire tombstone; do
    for sk in sequence hash; do
      name=g_${scope}_${style}_$sk
      if [ "$scope/$style" = all/expire ]; then
        # refused by pushdown (a revival's type 1 values reach the closed
        # versions only in the memory engine)
        continue
      fi
      pair "$name" "d_$name" '  types: {id: integer, n2: integer, lmd: timestamp}' <<EOF
load:
  mode: scd2
  engine: @ENGINE@
  key: [g, id]
  lmd: lmd
  type2: [c2, n2]
  type1: [t1]
  type1_scope: $scope
  deletes: {column: op, values: [D]}
  delete_style: $style
dimension:
  surrogate_strategy: $sk
EOF
      for run in 1 2 3; do
        gen "$run" "$WORK/$name.csv"
        dw run "$WORK/${name}_m.yaml"
        _mrc=$RC _mc=$(counts)
        dw run "$WORK/${name}_p.yaml"
        if [ "$_mrc $RC" = "0 0" ] && [ "$(counts)" = "$_mc" ] &&
           [ "$(tdump "d_${name}_p")" = "$(tdump "d_${name}_m")" ]; then
          pass "generated run $run ($scope, $style, $sk): the same counts and rows"
        else
          fail "generated run $run ($scope, $style, $sk): the same counts and rows" \
            "memory: rc $_mrc $_mc" "pushdown: rc $RC $(counts) $ERR"
        fi
      done
      closed=$(sql "SELECT COUNT(*) FROM d_${name}_p WHERE valid_to IS NOT NULL")
      if [ "$closed" -gt 10 ]; then
        pass "generated ($scope, $style, $sk): history was made ($closed closed versions)"
      else
        fail "generated ($scope, $style, $sk): history was made" "only $closed closed versions"
      fi
    done
  done
done

# ---- errors: the same lmd twice, late rows; nothing is written ----------
file bad.csv >/dev/null <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
2,a,2024-01-01 00:00:00
2,b,2024-01-01 00:00:00
EOF
j=$(mkjob bad "$WORK/bad.csv" d_bad <<'EOF'
load:
  mode: scd2
  engine: pushdown
  key: id
  lmd: lmd
EOF
)
dw run "$j"
is "$RC" 1 "conflict: exit 1"
like "$ERR" "key (id='2') has two different source rows with the same lmd 2024-01-01 00:00:00 (bad.csv:3 and bad.csv:4)" \
  "conflict: the key, the lmd and both source lines"
# (MariaDB keeps the table a failed first run created, empty)
rows=0
if [ "$(table_exists d_bad)" = 1 ]; then rows=$(sql "SELECT COUNT(*) FROM d_bad"); fi
is "$rows" 0 "conflict: nothing written"
# A row past the checkpoint but older than the key's current version
# (through another job's checkpoint: the late run's job is X2) is late:
# the key goes to the memory engine, which repairs its history
# (load.late: repair, the default); with deletes: absent too (job bada,
# table d_bada).
printf 'id,v,lmd\n1,a,2024-01-05 00:00:00\n' >"$WORK/first.csv"
printf 'id,v,lmd\n1,b,2024-01-06 00:00:00\n1,c,2024-01-04 00:00:00\n' >"$WORK/late.csv"
sed -e 's/^job: bad$/job: bada/' -e 's/d_bad$/d_bada/' -e 's/^  lmd: lmd$/  lmd: lmd\n  deletes: absent/' \
  "$j" >"$WORK/bada.yaml"
for t in d_bad d_bada; do
  jj=$([ $t = d_bad ] && echo "$j" || echo "$WORK/bada.yaml")
  cp "$WORK/first.csv" "$WORK/bad.csv"
  run_ok "$jj" "late ($t): the first run"
  cp "$WORK/late.csv" "$WORK/bad.csv"
  sed 's/^job: \(.*\)$/job: \12/' "$jj" >"$WORK/late2.yaml"
  dw run "$WORK/late2.yaml"
  is "$RC|$(field late_repaired)|$(field engine)" "0|1|pushdown" "late ($t): repaired"
  is "$(sqln "SELECT v, valid_from, valid_to FROM $t ORDER BY valid_from")" "c|2024-01-04 00:00:00|2024-01-05 00:00:00
a|2024-01-05 00:00:00|2024-01-06 00:00:00
b|2024-01-06 00:00:00|<null>" "late ($t): spliced into the history, the later change after it"
done

# ---- refusals at spec-check time -----------------------------------------
j=$(job refuse2 <<EOF
version: 1
job: refuse2
source: {plugin: csv, path: $WORK/bad.csv}
target: {connection: "$WH_CONN", table: d_refuse}
load: {mode: append, engine: pushdown}
EOF
)
dw run "$j"
is "$RC" 2 "refused: mode append, exit 2"
like "$ERR" "refuse2.yaml:5:22: load.engine: pushdown applies only to modes scd2 and upsert" \
  "refused: append names the engine key"
# (load.lookup: pushdown reads no current versions into memory)
cat >"$WORK/refuse3.yaml" <<EOF
version: 1
job: refuse3
source: {plugin: csv, path: $WORK/bad.csv}
target: {connection: "$WH_CONN", table: d_refuse}
load:
  mode: scd2
  key: id
  lmd: lmd
  type1: [v]
  deletes: {column: op, values: [D]}
  lookup: keys
  engine: pushdown
EOF
dw run "$WORK/refuse3.yaml"
is "$RC" 2 "refused: lookup: keys, exit 2"
like "$ERR" "refuse3.yaml:12:3: load.engine: pushdown does not read current versions into memory, so load.lookup does not apply" \
  "refused: lookup: keys: the engine key's position, and why"
is "$(table_exists d_refuse)" 0 "refused: no table created"

# ---- plan --------------------------------------------------------------------
file hist.csv >/dev/null <<'EOF'
id,city,zip,phone,lmd
1,Tromso,200,p4,2024-03-01 00:00:00
5,Kiev,7,r,2024-03-01 00:00:00
6,Baku,8,s,2024-03-01 00:00:00
EOF
before=$(wh_dump)
dw plan --sql "$WORK/hist_p.yaml"
is "$RC" 0 "plan --sql: exit 0"
plan_counts=$(counts)
is "$plan_counts" "read=3 skipped=0 inserted=2 expired=1 updated=1 deleted=0 unchanged=0" "plan: the counts"
case $WAREHOUSE in
  mariadb) upd='UPDATE `d_hist_p` AS d JOIN dwl_pd_t1 AS s ON' ;;
  *) upd='UPDATE "d_hist_p" AS d SET "phone" = s."phone" FROM dwl_pd_t1 AS s WHERE' ;;
esac
like "$OUT" "$upd" "plan --sql: the type 1 update from the stage, in the dialect's form"
like "$OUT" "$(sqltext 'INSERT INTO "d_hist_p" ("dim_id", "id", "city", "zip", "phone", "lmd", "valid_from", "valid_to", "is_current", "is_deleted") SELECT ? + ROW_NUMBER() OVER (ORDER BY e.dwl_kseq, e.dwl_t, e.dwl_seq)')" \
  "plan --sql: the new versions in one INSERT ... SELECT"
is "$(wh_dump)" "$before" "plan: nothing written"
both hist d_hist 14 "hist run 4: the run after the plan"
is "$(counts)" "$plan_counts" "plan: the run reports what the plan did"

done_testing
