# Pushdown parity for late rows (load.late: ignore and reject, upsert's
# every mode): a seed job loads two tables of the same warehouse with the
# same history, one per engine; then a job without a checkpoint (so rows
# older than the keys' history are past it: late) runs the same feed into
# each table, memory into the one, pushdown into the other.  The tables
# are compared row for row, with the summaries' counts, the exit codes,
# the error lines and the reject files.  The same comparison, without late
# rows, checks revivals under type1_scope: all with expire-style deletes,
# and the NULLs load.ignore_null_updates fills.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# The jobs name their engine; DWL_ENGINE must not change them.
unset DWL_ENGINE

# seed NAME: (source options in SRC_EXTRA) loads $WORK/NAME.seed.csv into NAME_m and NAME_p with the job
# spec on stdin (@ENGINE@ for the engine); prints nothing
seed() {
  _spec=$(cat)
  SPEC_BODY=$_spec
  for _e in memory pushdown; do
    _j=$(printf '%s\n' "$_spec" | sed "s/@ENGINE@/$_e/" |
      mkjob "$1_seed_${_e%"${_e#?}"}" "$WORK/$1.seed.csv" "$1_${_e%"${_e#?}"}" "${SRC_EXTRA:-}")
    dw run "$_j"
    is "$RC" 0 "$1: seed run ($_e)"
  done
  is "$(tdump "$1_p")" "$(tdump "$1_m")" "$1: seeded tables equal"
}

# late NAME ROUND MSG [EXTRA]: runs job NAME_ROUND_{m,p} (no checkpoint
# yet) on $WORK/NAME.csv with the seed's spec and EXTRA load: lines, and
# compares everything both engines leave.
late() {
  for _e in m p; do
    _eng=memory
    [ "$_e" = p ] && _eng=pushdown
    _j=$(printf '%s\n' "$SPEC_BODY" | sed "s/@ENGINE@/$_eng/" |
      awk -v x="${4:-}" '{ print } /^load: *$/ && x != "" { print x }' |
      sed "s|@RJ@|$WORK/$1_$2_$_e.rejects.csv|" |
      mkjob "$1_$2_$_e" "$WORK/$1.csv" "$1_$_e" "${SRC_EXTRA:-}")
    dw run "$_j"
    # (the job's name and the run's time differ)
    printf '%s\n' "$RC" "$(counts) $(late_counts)" >"$WORK/$1_$2_$_e.out"
    printf '%s\n' "$ERR" | grep -v ' info: \| debug: ' |
      sed "s/^[^ ]* dwload[[][^]]*[]] //; s/$1_$2_$_e/JOB/g" >"$WORK/$1_$2_$_e.err"
  done
  _rc_m=$(sed -n 1p "$WORK/$1_$2_m.out") _rc_p=$(sed -n 1p "$WORK/$1_$2_p.out")
  is "$_rc_p" "$_rc_m" "$3: the same exit code ($_rc_m)"
  is "$(sed -n 2p "$WORK/$1_$2_p.out")" "$(sed -n 2p "$WORK/$1_$2_m.out")" "$3: the same counts"
  is "$(cat "$WORK/$1_$2_p.err")" "$(cat "$WORK/$1_$2_m.err")" "$3: the same errors and warnings"
  is "$(tdump "$1_p")" "$(tdump "$1_m")" "$3: the same rows"
  for _f in rejects.csv rejects.csv.failed; do
    _fm="$WORK/$1_$2_m.$_f" _fp="$WORK/$1_$2_p.$_f"
    if [ -e "$_fm" ] || [ -e "$_fp" ]; then
      is "$(sed "s|$1_$2_p|JOB|g" "$_fp" 2>/dev/null)" "$(sed "s|$1_$2_m|JOB|g" "$_fm" 2>/dev/null)" \
        "$3: the same $_f"
    fi
  done
}

late_counts() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())
except ValueError:
    d = {}
print(" ".join("%s=%s" % (k, d.get(k)) for k in ("late_ignored", "late_rejected", "late_repaired", "rejected")))'
}

# ---- scd2, expire-style deletes with a flag column -----------------------
file ex.seed.csv >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,a,,2024-01-01 00:00:00
1,Bergen,a,,2024-01-10 00:00:00
1,Bergen,b,,2024-01-20 00:00:00
2,Rome,x,,2024-01-05 00:00:00
2,Rome,x,D,2024-01-15 00:00:00
3,Lima,q,,2024-01-01 00:00:00
4,Kiev,k,,2024-01-01 00:00:00
4,Kiev,k,D,2024-01-08 00:00:00
,Nul,n,,2024-01-10 00:00:00
EOF
seed ex <<'EOF'
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  type2: [city]
  type1: [phone]
  deletes: {column: op, values: [D]}
EOF
# Key 1: a no-op inside its first version, a change inside the second, an
# identical duplicate and two different rows at one instant (all late),
# then a row after its current version.  Key 2 (deleted at 01-15): a row
# before the deletion, one after.  Key 3: a late delete, then a change.
# Key 4: a late delete while deleted (a no-op).  Key 5: new.  A NULL key:
# a late row and a no-op (NULL-safe joins).
file ex.csv >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,z,,2024-01-05 00:00:00
1,Paris,a,,2024-01-06 00:00:00
1,Paris,a,,2024-01-06 00:00:00
1,Lyon,a,,2024-01-07 00:00:00
1,Lyon,c,,2024-01-07 00:00:00
1,Bergen,c,,2024-01-25 00:00:00
2,Milan,x,,2024-01-10 00:00:00
2,Turin,x,,2024-01-20 00:00:00
3,Lima,q,D,2023-12-31 00:00:00
3,Lima,q,D,2024-01-01 00:00:00
5,Baku,n,,2024-01-02 00:00:00
3,Cusco,q,,2024-01-30 00:00:00
4,Kiev,k,D,2024-01-09 00:00:00
4,Kiev,k,D,2024-01-03 00:00:00
,Nul2,n,,2024-01-05 00:00:00
,Nul,n,,2024-01-11 00:00:00
EOF
# plan computes the late rows too, and writes nothing
printf '%s\n' "$SPEC_BODY" | sed "s/@ENGINE@/pushdown/" |
  awk '{ print } /^load: *$/ { print "  late: reject\n  max_rejects: 10\n  reject_file: plan.rejects.csv" }' | mkjob ex_plan "$WORK/ex.csv" ex_p >/dev/null
before=$(tdump ex_p)
dw plan "$WORK/ex_plan.yaml"
is "$RC" 0 "scd2 expire: plan with late rows to reject exits 0"
is "$(tdump ex_p)" "$before" "scd2 expire: plan writes nothing"
is "$(ls "$WORK/plan.rejects.csv"* 2>/dev/null)" "" "scd2 expire: plan writes no reject file"
late ex 1 "scd2 expire: late: ignore" "  late: ignore"
late ex 2 "scd2 expire: late: reject into a file" "  late: reject
  max_rejects: 10
  reject_file: @RJ@"
late ex 3 "scd2 expire: late: reject, one more than max_rejects" "  late: reject
  max_rejects: 2
  reject_file: @RJ@"
late ex 4 "scd2 expire: late: reject without max_rejects" "  late: reject"
is "$_rc_p" 1 "scd2 expire: late: reject without max_rejects fails the run"
# repair: the keys with late rows go to the memory engine; the one with
# two different rows at an instant fails the run as with memory, which
# then the same feed without that row repairs
late ex 5 "scd2 expire: late: repair, a conflict" "  late: repair"
is "$_rc_p" 1 "scd2 expire: late: repair of two rows at one instant fails the run"
grep -v '^1,Lyon,c,' "$WORK/ex.csv" >"$WORK/ex.csv.new"
late ex 6 "scd2 expire: late: repair, a delete at a version's start" "  late: repair"
is "$_rc_p" 1 "scd2 expire: late: repair of a delete at a version's start fails the run"
grep -v '^3,Lima,q,D,2024-01-01' "$WORK/ex.csv.new" >"$WORK/ex.csv"
# plan computes the repair of the keys with late rows too, and writes nothing
sed '/^  late: reject$/d; /^  max_rejects:/d; /^  reject_file:/d' "$WORK/ex_plan.yaml" >"$WORK/ex_plan2.yaml"
before=$(tdump ex_p)
dw plan --sql "$WORK/ex_plan2.yaml"
is "$RC" 0 "scd2 expire: plan with late rows to repair exits 0"
like "$ERR" "rows of keys with late rows (or rows pushdown does not place: at one instant, within a close step, at a tombstone's start) go to the memory engine" \
  "scd2 expire: plan says where the late keys go"
like "$OUT" "INSERT INTO" "scd2 expire: plan prints the repair's statements"
is "$(tdump ex_p)" "$before" "scd2 expire: plan with repair writes nothing"
late ex 7 "scd2 expire: late: repair" "  late: repair"
is "$_rc_p" 0 "scd2 expire: late: repair commits"

# ---- scd2, tombstones, a type 1 scope of all, a date dimension ----------
file tb.seed.csv >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,a,,2024-01-01
1,Bergen,a,,2024-01-10
2,Rome,x,,2024-01-05
2,Rome,x,D,2024-01-15
EOF
SRC_EXTRA='  types: {id: integer, lmd: date}'
seed tb <<'EOF'
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  type2: [city]
  type1: [phone]
  type1_scope: all
  deletes: {column: op, values: [D]}
  delete_style: tombstone
EOF
file tb.csv >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,a,,2024-01-04
1,Lund,a,,2024-01-04
1,Bergen,b,,2024-01-11
2,Rome,x,D,2024-01-03
2,Rome,x,D,2024-01-12
2,Pisa,y,,2024-01-14
2,Pisa,y,,2024-01-20
EOF
late tb 1 "scd2 tombstones: late: ignore" "  late: ignore"
late tb 2 "scd2 tombstones: late: reject into a file" "  late: reject
  max_rejects: 5
  reject_file: @RJ@"
grep -v '^1,Lund,' "$WORK/tb.csv" >"$WORK/tb.csv.new" && mv "$WORK/tb.csv.new" "$WORK/tb.csv"
late tb 3 "scd2 tombstones: late: repair" "  late: repair"
is "$_rc_p" 0 "scd2 tombstones: late: repair commits"

SRC_EXTRA=

# ---- scd2, expire-style deletes, a type 1 scope of all: revivals ----------
# A key deleted without a tombstone has no current version, only closed
# ones; a revival gives them its type 1 values (the memory engine's walk),
# with the deleted flag and with dimension.deleted: null, where a deleted
# key is one without a current version.  No row is late: the second run
# goes on from the seed's history.
for dl in flag none; do
  file "t1$dl.seed.csv" >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,a,,2024-01-01 00:00:00
1,Bergen,a,,2024-01-10 00:00:00
1,Bergen,a,D,2024-01-15 00:00:00
2,Rome,x,,2024-01-05 00:00:00
2,Rome,x,D,2024-01-08 00:00:00
3,Lima,q,,2024-01-01 00:00:00
3,Quito,q,,2024-01-04 00:00:00
4,Kiev,k,,2024-01-01 00:00:00
4,Kiev,k,D,2024-01-03 00:00:00
6,Pune,p,,2024-01-01 00:00:00
6,Pune,p,D,2024-01-02 00:00:00
,Nul,n,,2024-01-01 00:00:00
,Nul,n,D,2024-01-02 00:00:00
EOF
  _dim=
  [ "$dl" = none ] && _dim="dimension:
  deleted: null"
  seed "t1$dl" <<EOF
$_dim
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  type2: [city]
  type1: [phone]
  type1_scope: all
  deletes: {column: op, values: [D]}
EOF
  # Key 1: revived with a new phone, then a type 1 change.  Key 2: revived
  # and deleted again (its last row that is not a delete gives the values).
  # Key 3: live, a type 1 change.  Key 4: a delete row while deleted.  Key
  # 5: new, with a type 1 change.  Key 6: revived with its own old values.
  # The NULL key: revived (NULL-safe joins).
  file "t1$dl.csv" >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Bergen,b,,2024-01-20 00:00:00
1,Bergen,c,,2024-01-22 00:00:00
2,Rome,y,,2024-01-20 00:00:00
2,Rome,y,D,2024-01-21 00:00:00
3,Quito,r,,2024-01-20 00:00:00
4,Kiev,z,D,2024-01-20 00:00:00
5,Baku,n,,2024-01-20 00:00:00
5,Baku,m,,2024-01-21 00:00:00
6,Pune,p,,2024-01-20 00:00:00
,Nul,w,,2024-01-20 00:00:00
EOF
  _w="scd2 expire, type1_scope all, deleted: $dl"
  late "t1$dl" 1 "$_w" ""
  is "$_rc_p" 0 "$_w: pushdown takes the job"
  like "$(sed -n 2p "$WORK/t1${dl}_1_p.out")" "updated=5 " "$_w: five keys' versions overwritten"
  is "$(sql "SELECT count(*) FROM \"t1${dl}_p\" WHERE id = '1' AND phone = 'c'")" 3 \
    "$_w: a revival's type 1 values reach the closed versions"
  is "$(sql "SELECT count(*) FROM \"t1${dl}_p\" WHERE id = '2' AND phone = 'y'")" 2 \
    "$_w: those of a key deleted again too"
  is "$(sql "SELECT count(*) FROM \"t1${dl}_p\" WHERE id IS NULL AND phone = 'w'")" 2 \
    "$_w: and of a NULL key"
  is "$(sql "SELECT count(*) FROM \"t1${dl}_p\" WHERE id = '4' AND phone = 'k'")" 1 \
    "$_w: a delete row revives nothing"
done

# ---- scd2, load.ignore_null_updates ----------------------------------------
# A NULL means "unchanged": the key's previous row in lmd order gives the
# value, else its live current version.  Key 1: a NULL city from the
# current version (a type 1 change), then a NULL phone from that row.  Key
# 2: all NULL (unchanged), a delete, then NULLs after it (nothing to
# carry).  Key 4: deleted in the seed (with tombstones, its current version
# gives nothing).  Key 5: new, a NULL city kept, then a NULL phone carried.
# The NULL key: filled from its current version.  Every column (expire
# style), and the city only (tombstones).
for inu in all city; do
  file "nu$inu.seed.csv" >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,a,,2024-01-01 00:00:00
2,Rome,b,,2024-01-01 00:00:00
4,Kiev,d,,2024-01-01 00:00:00
4,Kiev,d,D,2024-01-01 12:00:00
,Nul,n,,2024-01-01 00:00:00
EOF
  if [ $inu = all ]; then _inu=true _style=expire; else _inu='[city]' _style=tombstone; fi
  seed "nu$inu" <<EOF
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  type2: [city]
  type1: [phone]
  deletes: {column: op, values: [D]}
  delete_style: $_style
  ignore_null_updates: $_inu
EOF
  file "nu$inu.csv" >/dev/null <<'EOF'
id,city,phone,op,lmd
1,,x,,2024-01-02 00:00:00
1,Bergen,,,2024-01-03 00:00:00
2,,,,2024-01-02 00:00:00
2,Milan,,D,2024-01-03 00:00:00
2,,,,2024-01-04 00:00:00
4,,q,,2024-01-02 00:00:00
5,,e,,2024-01-02 00:00:00
5,Pune,,,2024-01-03 00:00:00
,,w,,2024-01-02 00:00:00
EOF
  _w="scd2, ignore_null_updates: $_inu, $_style"
  late "nu$inu" 1 "$_w" ""
  is "$_rc_p" 0 "$_w: pushdown takes the job"
  is "$(sqln "SELECT city, phone FROM \"nu${inu}_p\" WHERE id = '1' ORDER BY valid_from")" \
    "$([ $inu = all ] && printf 'Oslo|x\nBergen|x' || printf 'Oslo|x\nBergen|<null>')" \
    "$_w: key 1's NULL city from the current version (a type 1 change in place), then its NULL phone from that row"
  # Late rows with NULLs: keys 1 and 5 go to the memory engine, which
  # repairs their history and fills their NULLs itself; key 3 (new) and the
  # NULL key stay pushdown's, filled in the warehouse.
  file "nu$inu.csv" >/dev/null <<'EOF'
id,city,phone,op,lmd
1,,z,,2024-01-01 06:00:00
1,Turku,,,2024-01-02 12:00:00
5,,f,,2024-01-01 12:00:00
3,,c,,2024-01-05 00:00:00
3,Lima,,,2024-01-06 00:00:00
,,v,,2024-01-05 00:00:00
EOF
  late "nu$inu" 2 "$_w, late rows" ""
  is "$_rc_p" 0 "$_w, late rows: pushdown takes the job"
  like "$ERR" "go to the memory engine" "$_w, late rows: the keys with late rows go to the memory engine"
done

# ---- upsert, load.ignore_null_updates, late rows -----------------------------
# A NULL takes the key's previous row's value, else its stored row's; a
# row older than the stored one (late) neither takes nor gives.  Key 1: a
# late row with values (left out, giving nothing), then NULLs filled from
# the stored row.  Key 2: a late row, then a later row all NULL.  Key 3:
# a delete, then NULLs (nothing to carry).  Key 4: new.  The NULL key.
file unu.seed.csv >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Oslo,a,,2024-01-05 00:00:00
2,Rome,b,,2024-01-05 00:00:00
3,Lima,c,,2024-01-05 00:00:00
,Nul,n,,2024-01-05 00:00:00
EOF
seed unu <<'EOF'
load:
  mode: upsert
  engine: @ENGINE@
  key: id
  lmd: lmd
  deletes: {column: op, values: [D]}
  ignore_null_updates: true
EOF
file unu.csv >/dev/null <<'EOF'
id,city,phone,op,lmd
1,Paris,z,,2024-01-01 00:00:00
1,,,,2024-01-06 00:00:00
1,Bergen,,,2024-01-07 00:00:00
2,Milan,y,,2024-01-02 00:00:00
2,,,,2024-01-06 00:00:00
3,,,D,2024-01-06 00:00:00
3,,q,,2024-01-07 00:00:00
4,,e,,2024-01-06 00:00:00
4,Pune,,,2024-01-07 00:00:00
,,w,,2024-01-06 00:00:00
EOF
for lm in repair ignore reject; do
  _x="  late: $lm"
  [ $lm = reject ] && _x="$_x
  max_rejects: 5
  reject_file: @RJ@"
  late unu "$lm" "upsert, ignore_null_updates, late: $lm" "$_x"
  is "$_rc_p" 0 "upsert, ignore_null_updates, late: $lm: pushdown takes the job"
done
is "$(sqln "SELECT city, phone FROM unu_p WHERE id = '1'")" "Bergen|a" \
  "upsert, ignore_null_updates: key 1's NULLs from the stored row, not from its late row"

# ---- upsert, truncate rows ----------------------------------------------------
# A truncate deletes every row stored before it that the delta has no row
# of; a key of the delta gets a delete row at each truncate after its
# stored row (or its first row), so its rows after the last truncate
# bring it back.  Key 1: stored before both truncates, a row between them
# (deleted again by the second).  Key 2: stored after the first, not in
# the delta: the second reaches it.  Key 3: stored after the last
# truncate: untouched.  Key 4: new before the first and after the last.
# Key 5: new between them (gone).  Key 6: a late row (older than its
# stored row), no truncate after its stored row.  With the lmd in the
# table, and kept out of it (columns.exclude: every truncate reaches
# every stored row).
for tl in kept excl; do
  file "tr$tl.seed.csv" >/dev/null <<'EOF'
id,city,op,lmd
1,Oslo,,2024-01-01 00:00:00
2,Rome,,2024-01-05 00:00:00
3,Lima,,2024-01-20 00:00:00
6,Kiev,,2024-01-25 00:00:00
,Nul,,2024-01-01 00:00:00
EOF
  _x=
  [ $tl = excl ] && _x='columns:
  exclude: [lmd]'
  seed "tr$tl" <<EOF
$_x
load:
  mode: upsert
  engine: @ENGINE@
  key: id
  lmd: lmd
  deletes: {column: op, values: [D], truncate_values: [T]}
  max_deletes: all
EOF
  file "tr$tl.csv" >/dev/null <<'EOF'
id,city,op,lmd
4,Baku,,2024-01-02 00:00:00
,,T,2024-01-03 00:00:00
1,Bergen,,2024-01-04 00:00:00
5,Pune,,2024-01-06 00:00:00
,,T,2024-01-10 00:00:00
4,Quito,,2024-01-12 00:00:00
6,Minsk,,2024-01-21 00:00:00
EOF
  _w="upsert, truncates, the lmd $tl"
  late "tr$tl" 1 "$_w" ""
  is "$_rc_p" 0 "$_w: pushdown takes the job"
  late "tr$tl" 2 "$_w, the same feed again" ""
done
is "$(sqln "SELECT id, city FROM trkept_p ORDER BY id")" "3|Lima
4|Quito
6|Kiev" "upsert, truncates, the lmd kept: the whole table"

# ---- scd2 with the delete flag column excluded from the table -------------
file xc.seed.csv >/dev/null <<'EOF'
id,city,op,lmd
1,Oslo,,2024-01-01 00:00:00
1,Bergen,,2024-01-10 00:00:00
EOF
seed xc <<'EOF'
columns:
  exclude: [op]
load:
  mode: scd2
  engine: @ENGINE@
  key: id
  lmd: lmd
  deletes: {column: op, values: [D]}
EOF
file xc.csv >/dev/null <<'EOF'
id,city,op,lmd
1,Lund,,2024-01-05 00:00:00
1,Lund,D,2024-01-06 00:00:00
1,Bergen,,2024-01-12 00:00:00
EOF
late xc 1 "scd2, op excluded: late: reject into a file" "  late: reject
  max_rejects: 5
  reject_file: @RJ@"

# ---- upsert: every load.late leaves late rows out --------------------------
file up.seed.csv >/dev/null <<'EOF'
id,v,lmd
1,a,2024-01-10 00:00:00
2,b,2024-01-10 00:00:00
EOF
seed up <<'EOF'
load:
  mode: upsert
  engine: @ENGINE@
  key: id
  lmd: lmd
EOF
file up.csv >/dev/null <<'EOF'
id,v,lmd
1,z,2024-01-05 00:00:00
1,z,2024-01-05 00:00:00
1,y,2024-01-05 00:00:00
1,c,2024-01-11 00:00:00
2,q,2024-01-01 00:00:00
3,n,2024-01-01 00:00:00
EOF
late up 1 "upsert: late: repair (left out)" ""
late up 2 "upsert: late: ignore" "  late: ignore"
late up 3 "upsert: late: reject into a file" "  late: reject
  max_rejects: 5
  reject_file: @RJ@"
late up 4 "upsert: late: reject without max_rejects" "  late: reject"
is "$_rc_p" 1 "upsert: late: reject without max_rejects fails the run"

done_testing
