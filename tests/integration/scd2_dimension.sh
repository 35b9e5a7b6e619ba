# SCD type 2 through the real binary, the dimension's own columns: close
# rules and open_end literals, surrogate keys (a sequence across runs, a
# sha256 hash that a rebuild gives again), bookkeeping columns left out,
# valid_from as the lmd column, asof reading versions back, and a wide
# dimension, each checked against the exact table left in the warehouse
# (SQLite, PostgreSQL or MariaDB).  The change rules are in scd2.sh.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# ---- close rules and open_end literals ------------------------------------
# day_before over dates (the lmd column declared a date), across two runs
# (closing a version in the table and closing one inside the run); open end
# a date literal.
csv=$(file dayb.csv <<'EOF'
id,v,lmd
1,a,2024-01-01
2,a,2024-01-15
EOF
)
j=$(mkjob dayb "$csv" d_dayb "  types: {lmd: date}" <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  close: day_before
  open_end: "2099-12-31"
EOF
)
run_ok "$j" "day_before: first run"
file dayb.csv >/dev/null <<'EOF'
id,v,lmd
1,b,2024-02-01
1,c,2024-03-01
2,b,2024-03-01
2,c,2024-03-02
EOF
run_ok "$j" "day_before: second run"
is "$(counts)" "read=4 skipped=0 inserted=4 expired=2 updated=0 deleted=0 unchanged=0" "day_before: counts"
is "$(sqln 'select id, v, lmd, valid_from, valid_to, is_current from d_dayb order by id, valid_from')" \
"1|a|2024-01-01|2024-01-01|2024-01-31|0
1|b|2024-02-01|2024-02-01|2024-02-29|0
1|c|2024-03-01|2024-03-01|2099-12-31|1
2|a|2024-01-15|2024-01-15|2024-02-29|0
2|b|2024-03-01|2024-03-01|2024-03-01|0
2|c|2024-03-02|2024-03-02|2099-12-31|1" \
  "day_before: valid_to is the day before the next start (leap day, one-day version); open end 2099-12-31"

# second_before over timestamps; open end a timestamp literal
csv=$(file secb.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 10:00:00
1,b,2024-01-02 08:30:00
1,c,2024-01-03 00:00:00
EOF
)
j=$(mkjob secb "$csv" d_secb <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  close: second_before
  open_end: "9999-12-31 23:59:59"
EOF
)
run_ok "$j" "second_before"
is "$(sqln 'select v, valid_from, valid_to, is_current from d_secb order by valid_from')" \
"a|2024-01-01 10:00:00|2024-01-02 08:29:59|0
b|2024-01-02 08:30:00|2024-01-02 23:59:59|0
c|2024-01-03 00:00:00|9999-12-31 23:59:59|1" "second_before: valid_to one second before the next start"
file secb.csv >/dev/null <<'EOF'
id,v,lmd
1,d,2024-01-05 12:00:00
EOF
run_ok "$j" "second_before: second run"
is "$(sqln 'select v, valid_from, valid_to, is_current from d_secb order by valid_from')" \
"a|2024-01-01 10:00:00|2024-01-02 08:29:59|0
b|2024-01-02 08:30:00|2024-01-02 23:59:59|0
c|2024-01-03 00:00:00|2024-01-05 11:59:59|0
d|2024-01-05 12:00:00|9999-12-31 23:59:59|1" "second_before: the open-ended version closed by the next run"

# at_next (the default), explicitly
csv=$(file atn.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 10:00:00
1,b,2024-01-02 08:30:15
EOF
)
j=$(mkjob atn "$csv" d_atn <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  close: at_next
EOF
)
run_ok "$j" "at_next"
is "$(sqln 'select v, valid_from, valid_to from d_atn order by valid_from')" \
"a|2024-01-01 10:00:00|2024-01-02 08:30:15
b|2024-01-02 08:30:15|<null>" "at_next: valid_to equals the next valid_from"

# ---- surrogate keys: sequence across runs ---------------------------------
csv=$(file seq.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
2,a,2024-01-01 00:00:00
3,a,2024-01-01 00:00:00
EOF
)
j=$(mkjob seq "$csv" d_seq <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  surrogate_key: sk
EOF
)
run_ok "$j" "sequence: first run"
# A key inserted by hand far above the others: the next run continues from max.
sql "insert into d_seq (sk, id, v, lmd, valid_from, valid_to, is_current, is_deleted) values (10, '9', 'z', '2023-01-01 00:00:00', '2023-01-01 00:00:00', null, TRUE, FALSE)"
file seq.csv >/dev/null <<'EOF'
id,v,lmd
2,b,2024-02-01 00:00:00
4,a,2024-02-01 00:00:00
EOF
run_ok "$j" "sequence: second run"
is "$(sqln 'select sk, id, v, is_current from d_seq order by sk')" \
"1|1|a|1
2|2|a|0
3|3|a|1
10|9|z|1
11|2|b|1
12|4|a|1" "sequence: new versions numbered from max(sk)+1"

# ---- surrogate keys: sha256 hash ------------------------------------------
csv=$(file hash.csv <<'EOF'
k1,k2,v,lmd
A,x,1,2024-01-01 00:00:00
A,x,2,2024-02-01 00:00:00
B,,1,2024-01-01 00:00:00
EOF
)
hashjob() {
  mkjob "$1" "$csv" "${2:-d_hash}" <<'EOF'
load:
  mode: scd2
  key: [k1, k2]
  lmd: lmd
dimension:
  surrogate_key: hk
  surrogate_strategy: hash
EOF
}
j=$(hashjob hash)
run_ok "$j" "hash: first run"
# The expected digests, computed here from the documented encoding:
# per value 0x00 for NULL, else 0x01, length (8 bytes LE), bytes; key
# values in key order, then valid_from's canonical text.
expect_hash() {
  python3 - "$@" <<'EOF'
import hashlib, struct, sys
def enc(v):
    if v is None:
        return b"\x00"
    b = v.encode()
    return b"\x01" + struct.pack("<Q", len(b)) + b
args = sys.argv[1:]
vals = [None if a == "<null>" else a for a in args]
print(hashlib.sha256(b"".join(enc(v) for v in vals)).hexdigest())
EOF
}
h1=$(expect_hash A x "2024-01-01 00:00:00")
h2=$(expect_hash A x "2024-02-01 00:00:00")
h3=$(expect_hash B "<null>" "2024-01-01 00:00:00")
is "$(sqln 'select hk, k1, k2, v, valid_from from d_hash order by k1, valid_from')" \
"$h1|A|x|1|2024-01-01 00:00:00
$h2|A|x|2|2024-02-01 00:00:00
$h3|B|<null>|1|2024-01-01 00:00:00" "hash: sha256 hex of the key values and valid_from"
is "$(sql "select count(*), count(distinct hk), min(length(hk)), max(length(hk)) from d_hash")|$(sql 'select hk from d_hash' | grep -c '[^0-9a-f]')" \
  "3|3|64|64|0" "hash: 64 lowercase hex characters, distinct per version"
before=$(tdump d_hash hk)
run_ok "$j" "hash: rerun"
is "$(tdump d_hash hk)" "$before" "hash: the rerun leaves every key as it was"
# The same input into a fresh table (a job of its own, with no checkpoint)
# gives the same keys.
j=$(hashjob hash2 d_hash2)
run_ok "$j" "hash: rebuild elsewhere"
is "$(sql 'select hk from d_hash2 order by hk')" "$(sql 'select hk from d_hash order by hk')" \
  "hash: a rebuild from the same input gives the same keys"
# On SQLite, also into a fresh warehouse file.
if is_warehouse sqlite; then
  WH_SAVE=$WH
  WH="$WORK/fresh.db"
  WH_CONN="Driver=SQLite3;Database=$WH"
  j=$(hashjob hash3 d_hash)
  run_ok "$j" "hash: rebuild in a fresh warehouse"
  is "$(sqlite3 -batch -noheader "$WH" 'select hk from d_hash order by hk')" \
    "$(sqlite3 -batch -noheader "$WH_SAVE" 'select hk from d_hash order by hk')" \
    "hash: a rebuild in a fresh warehouse gives the same keys"
  WH=$WH_SAVE
  WH_CONN="Driver=SQLite3;Database=$WH"
fi

# ---- bookkeeping columns left out -----------------------------------------
# surrogate_key: null, current: null, deleted: null, open end NULL: the
# current predicate is valid_to IS NULL.
csv=$(file bare.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
2,a,2024-01-01 00:00:00
EOF
)
j=$(mkjob bare "$csv" d_bare <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  surrogate_key: null
  current: null
  deleted: null
EOF
)
run_ok "$j" "bare: first run"
is "$(cols d_bare)" "id,v,lmd,valid_from,valid_to" "bare: no surrogate, current or deleted column"
file bare.csv >/dev/null <<'EOF'
id,v,lmd
1,b,2024-02-01 00:00:00
2,a,2024-02-01 00:00:00
EOF
run_ok "$j" "bare: second run"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" "bare: counts"
file bare.csv >/dev/null <<'EOF'
id,v,lmd
1,c,2024-03-01 00:00:00
EOF
run_ok "$j" "bare: third run"
is "$(sqln 'select id, v, valid_from, valid_to from d_bare order by id, valid_from')" \
"1|a|2024-01-01 00:00:00|2024-02-01 00:00:00
1|b|2024-02-01 00:00:00|2024-03-01 00:00:00
1|c|2024-03-01 00:00:00|<null>
2|a|2024-01-01 00:00:00|<null>" "bare: only the open version (valid_to IS NULL) is closed each time"

# surrogate_key: null alone, deleted: null alone
for col in surrogate_key deleted; do
  file one_$col.csv >/dev/null <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
2,a,2024-01-01 00:00:00
EOF
  j=$(mkjob one_$col "$WORK/one_$col.csv" d_one_$col <<EOF
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  $col: null
EOF
  )
  run_ok "$j" "$col null: first run"
  file one_$col.csv >/dev/null <<'EOF'
id,v,lmd
1,b,2024-02-01 00:00:00
EOF
  run_ok "$j" "$col null: second run"
  is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" "$col null: counts"
  if [ $col = surrogate_key ]; then
    is "$(cols d_one_$col)" "id,v,lmd,valid_from,valid_to,is_current,is_deleted" "surrogate_key null: no surrogate column"
    is "$(sqln "select id, v, valid_from, valid_to, is_current, is_deleted from d_one_$col order by id, valid_from")" \
"1|a|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
1|b|2024-02-01 00:00:00|<null>|1|0
2|a|2024-01-01 00:00:00|<null>|1|0" "surrogate_key null: exact table"
  else
    is "$(cols d_one_$col)" "dim_id,id,v,lmd,valid_from,valid_to,is_current" "deleted null: no deleted column"
    is "$(sqln "select dim_id, id, v, valid_from, valid_to, is_current from d_one_$col order by id, valid_from")" \
"1|1|a|2024-01-01 00:00:00|2024-02-01 00:00:00|0
3|1|b|2024-02-01 00:00:00|<null>|1
2|2|a|2024-01-01 00:00:00|<null>|1" "deleted null: exact table"
  fi
done

# current: null with a literal open end: the current predicate is
# valid_to = the open end.
csv=$(file bare2.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
EOF
)
j=$(mkjob bare2 "$csv" d_bare2 <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
dimension:
  current: null
  open_end: "9999-12-31 23:59:59"
EOF
)
run_ok "$j" "current null + open end: first run"
is "$(cols d_bare2)" "dim_id,id,v,lmd,valid_from,valid_to,is_deleted" "current null: no current column"
file bare2.csv >/dev/null <<'EOF'
id,v,lmd
1,b,2024-02-01 00:00:00
EOF
run_ok "$j" "current null + open end: second run"
file bare2.csv >/dev/null <<'EOF'
id,v,lmd
1,b,2024-03-01 00:00:00
1,c,2024-04-01 00:00:00
EOF
run_ok "$j" "current null + open end: third run"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" \
  "current null + open end: the version with valid_to = open end is the one compared"
is "$(sqln 'select dim_id, v, valid_from, valid_to, is_deleted from d_bare2 order by valid_from')" \
"1|a|2024-01-01 00:00:00|2024-02-01 00:00:00|0
2|b|2024-02-01 00:00:00|2024-04-01 00:00:00|0
3|c|2024-04-01 00:00:00|9999-12-31 23:59:59|0" "current null + open end: exact table"

# ---- valid_from is the lmd column -----------------------------------------
csv=$(file vflmd.csv <<'EOF'
id,v,changed_at
1,a,2024-01-01 00:00:00
EOF
)
j=$(mkjob vflmd "$csv" d_vflmd <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: changed_at
dimension:
  valid_from: changed_at
EOF
)
run_ok "$j" "valid_from = lmd: first run"
is "$(cols d_vflmd)" "dim_id,id,v,changed_at,valid_to,is_current,is_deleted" \
  "valid_from = lmd: no separate valid_from column"
file vflmd.csv >/dev/null <<'EOF'
id,v,changed_at
1,b,2024-02-01 00:00:00
1,b,2024-02-15 00:00:00
EOF
run_ok "$j" "valid_from = lmd: second run"
is "$(counts)" "read=2 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=1" "valid_from = lmd: counts"
is "$(sqln 'select dim_id, v, changed_at, valid_to, is_current from d_vflmd order by changed_at')" \
"1|a|2024-01-01 00:00:00|2024-02-01 00:00:00|0
2|b|2024-02-01 00:00:00|<null>|1" "valid_from = lmd: the lmd column starts each version"
dw asof "$j" --at "2024-01-15"
is "$OUT" "dim_id,id,v,changed_at,valid_to
1,1,a,2024-01-01 00:00:00,2024-02-01 00:00:00" "valid_from = lmd: asof reads it"

# ---- (10) asof -------------------------------------------------------------
csv=$(file asof.csv <<'EOF'
id,v,op,lmd
1,a,I,2024-01-01 00:00:00
1,b,U,2024-02-01 00:00:00
2,x,I,2024-01-15 00:00:00
2,x,D,2024-03-01 00:00:00
2,y,I,2024-04-01 00:00:00
EOF
)
j=$(mkjob asof "$csv" d_asof <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D]}
EOF
)
run_ok "$j" "asof: load"
dw asof "$j" --at "2023-12-31 23:59:59"
is "$RC" 0 "asof before the first version: exit 0"
is "$OUT" "dim_id,id,v,op,lmd,valid_from,valid_to" "asof before the first version: header only (no flag columns)"
dw asof "$j" --at "2024-01-20"
is "$OUT" "dim_id,id,v,op,lmd,valid_from,valid_to
1,1,a,I,2024-01-01 00:00:00,2024-01-01 00:00:00,2024-02-01 00:00:00
3,2,x,I,2024-01-15 00:00:00,2024-01-15 00:00:00,2024-03-01 00:00:00" "asof between versions: the versions valid then"
dw asof "$j" --at "2024-02-01 00:00:00"
is "$OUT" "dim_id,id,v,op,lmd,valid_from,valid_to
2,1,b,U,2024-02-01 00:00:00,2024-02-01 00:00:00,
3,2,x,I,2024-01-15 00:00:00,2024-01-15 00:00:00,2024-03-01 00:00:00" \
  "asof at a version's start: the new version (valid_to exclusive), open end empty"
dw asof "$j" --at "2024-03-01 00:00:01"
is "$OUT" "dim_id,id,v,op,lmd,valid_from,valid_to
2,1,b,U,2024-02-01 00:00:00,2024-02-01 00:00:00," "asof after a deletion: the deleted key is gone"
# (5) the deleted key came back
dw asof "$j" --at "2024-04-01"
is "$OUT" "dim_id,id,v,op,lmd,valid_from,valid_to
2,1,b,U,2024-02-01 00:00:00,2024-02-01 00:00:00,
4,2,y,I,2024-04-01 00:00:00,2024-04-01 00:00:00," "asof after a revival: the key's new version"
is "$(sqln "select dim_id, v, valid_from, valid_to, is_current, is_deleted from d_asof where id = '2' order by valid_from")" \
"3|x|2024-01-15 00:00:00|2024-03-01 00:00:00|0|1
4|y|2024-04-01 00:00:00|<null>|1|0" "revival in one run: the deleted version closed and flagged, the new one current"

# ---- a wide dimension ------------------------------------------------------
# 80 source columns and 5 bookkeeping ones: each multi-row INSERT must stay
# under what the driver takes per statement (psqlODBC loses sync with the
# server above ~7450 parameters; MariaDB's driver fails above 32767).
awk 'BEGIN {
  printf "id"; for (c = 1; c <= 80; c++) printf ",c%d", c; print ",lmd"
  for (i = 1; i <= 1200; i++) {
    printf "%d", i; for (c = 1; c <= 80; c++) printf ",v%d_%d", i, c; print ",2024-01-01 00:00:00"
  }
}' >"$WORK/wide.csv"
j=$(mkjob wide "$WORK/wide.csv" d_wide <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF
)
run_ok "$j" "wide dimension (85 columns)"
is "$(field inserted)" 1200 "wide dimension: every row inserted"
is "$(sql 'SELECT count(*), min(c80), max(c1) FROM d_wide')" "1200|v1000_80|v9_1" \
  "wide dimension: the rows and their last columns arrived"

done_testing
