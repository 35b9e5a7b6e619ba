#!/bin/bash
# scd2 deletions on both engines (issue 18: pushdown parity), on each
# warehouse.  A dimension of KEYS keys, loaded once; then, KIND absent
# (the default): a full extract of it in which a hundredth of the keys
# changed (a later lmd: past the checkpoint) and a hundredth are gone
# (deleted by absence), the rest as loaded (not past the checkpoint: they
# only say their key exists); KIND column: a delta in which a hundredth
# of the keys changed, a hundredth have a delete row (deletes: {column:
# op}, expire style) and a hundredth as many new keys arrive.
# Each run starts from a copy of the loaded dimension and its checkpoint;
# the builds alternate; medians of RUNS runs, and each against memory.
# Every run must give the same counts.  With DWLOAD_OLD, that build's
# pushdown runs too (a reference for a change to pushdown).
#   usage: [DWLOAD_OLD=/old/src/dwload] bench/absent.sh [KEYS] [RUNS] [WAREHOUSES] [KIND]
#   e.g.   bench/absent.sh 100000 3 sqlite,postgresql,mariadb
#          bench/absent.sh 1000000 3 sqlite column
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
old=${DWLOAD_OLD:-}
keys=${1:-100000}
runs=${2:-3}
only=${3:-sqlite}
kind=${4:-absent}
work=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench_absent.XXXXXX")
db=dwl_absent
tmo=3600
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_begin "$only"

python3 - "$keys" "$work" "$kind" <<'EOF'
import sys
keys, w, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(w + "/full.csv", "w") as f, open(w + "/extract.csv", "w") as g:
    f.write("id,name,city,op,lmd\n")
    g.write("id,name,city,op,lmd\n")
    for k in range(keys):
        f.write("%d,n%d,c%d,,2024-01-01 00:00:00\n" % (k, k, k % 97))
        if k % 100 == 1:
            if kind == "column":  # a delete row; absent: gone
                g.write("%d,n%d,c%d,D,2024-01-02 00:00:00\n" % (k, k, k % 97))
            continue
        if k % 100 == 0:
            g.write("%d,n%d,moved%d,,2024-01-02 00:00:00\n" % (k, k, k % 97))
        elif kind == "absent":
            g.write("%d,n%d,c%d,,2024-01-01 00:00:00\n" % (k, k, k % 97))
    for k in range(keys, keys + keys // 100 if kind == "column" else keys):
        g.write("%d,n%d,c%d,,2024-01-02 00:00:00\n" % (k, k, k % 97))
EOF
if [ "$kind" = column ]; then
  deletes="{column: op, values: [D]}"
else
  deletes=absent
fi

# job WH NAME CSV ENGINE
job() {
  cat >"$work/$1.$2.yaml" <<YAML
job: absent
source: {plugin: csv, path: "$work/$3.csv"}
target: {connection: "$(wh_conn "$1" run)", table: dim}
load: {mode: scd2, engine: $4, key: [id], lmd: lmd, type2: [city], type1: [name], deletes: $deletes$(
         [ "$kind" = absent ] && echo ", max_deletes: all")}
YAML
}

# The loaded dimension and its checkpoint, kept aside (save) and put back
# before each run (restore).
save() {
  case $1 in
    sqlite) cp "$(lite_file run)" "$(lite_file base)" ;;
    postgresql) wh_sql "$1" <<'SQL' ;;
CREATE TABLE base_dim (LIKE dim INCLUDING ALL); INSERT INTO base_dim SELECT * FROM dim;
CREATE TABLE base_state AS SELECT * FROM dwload_state;
ANALYZE base_dim;
SQL
    mariadb) wh_sql "$1" <<'SQL' ;;
CREATE TABLE base_dim LIKE dim; INSERT INTO base_dim SELECT * FROM dim;
CREATE TABLE base_state AS SELECT * FROM dwload_state;
SQL
  esac
}
restore() {
  case $1 in
    sqlite) cp "$(lite_file base)" "$(lite_file run)" ;;
    postgresql) wh_sql "$1" <<'SQL' ;;
DROP TABLE dim; CREATE TABLE dim (LIKE base_dim INCLUDING ALL); INSERT INTO dim SELECT * FROM base_dim;
DELETE FROM dwload_state; INSERT INTO dwload_state SELECT * FROM base_state;
ANALYZE dim;
SQL
    mariadb) wh_sql "$1" <<'SQL' ;;
DROP TABLE dim; CREATE TABLE dim LIKE base_dim; INSERT INTO dim SELECT * FROM base_dim;
DELETE FROM dwload_state; INSERT INTO dwload_state SELECT * FROM base_state;
ANALYZE TABLE dim;
SQL
  esac
}

# once WH NAME BIN: one run; "seconds KiB counts"
once() {
  restore "$1" >/dev/null
  bounded /usr/bin/time -f '%e %M' -o "$work/time" "$3" run "$work/$1.$2.yaml" >"$work/out" 2>"$work/err" ||
    die "$1: $2 failed: $(tail -n 3 "$work/err")"
  counts=$(tail -n 1 "$work/out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join("%s=%s" % (k, d[k]) for k in ("read","skipped","inserted","expired","updated","deleted","unchanged","absent")))')
  echo "$(cat "$work/time") $counts"
}

names="memory pushdown"
[ -n "$old" ] && names="$names reference"
for wh in ${only//,/ }; do
  setup_wh "$wh"
  rm -f "$(lite_file run)"
  job "$wh" seed full memory
  job "$wh" memory extract memory
  job "$wh" pushdown extract pushdown
  job "$wh" reference extract pushdown
  bounded "$dw" run "$work/$wh.seed.yaml" >/dev/null 2>"$work/err" || die "$wh: seed: $(tail -n 3 "$work/err")"
  save "$wh" >/dev/null
  for n in $names; do : >"$work/$wh.$n.txt"; done
  i=0
  while [ "$i" -lt "$runs" ]; do
    for n in $names; do
      bin=$dw
      [ "$n" = reference ] && bin=$old
      once "$wh" "$n" "$bin" >>"$work/$wh.$n.txt"
    done
    i=$((i + 1))
  done
  m=$(cut -d' ' -f1 "$work/$wh.memory.txt" | median)
  printf '%s, %s keys, deletes %s:\n' "$(wh_title "$wh")" "$keys" "$kind"
  for n in $names; do
    s=$(cut -d' ' -f1 "$work/$wh.$n.txt" | median)
    printf '  %-9s %8s s median (runs: %s), peak RSS %s KiB, /memory %s\n    %s\n' "$n" "$s" \
      "$(cut -d' ' -f1 "$work/$wh.$n.txt" | tr '\n' ' ' | sed 's/ $//')" \
      "$(cut -d' ' -f2 "$work/$wh.$n.txt" | median)" "$(div "$s" "$m")" \
      "$(head -n 1 "$work/$wh.$n.txt" | cut -d' ' -f3-)"
    [ "$(cut -d' ' -f3- "$work/$wh.$n.txt" | sort -u)" = "$(head -n 1 "$work/$wh.memory.txt" | cut -d' ' -f3-)" ] ||
      die "$wh: $n's counts differ from memory's"
  done
done
