#!/bin/sh
# scd2 with deletes: absent on both engines (issue 18: pushdown parity), on
# SQLite.  A dimension of KEYS keys, loaded once; then a full extract of
# it in which a hundredth of the keys changed (a later lmd: past the
# checkpoint) and a hundredth are gone (deleted by absence), the rest as
# loaded (not past the checkpoint: they only say their key exists).  Each
# run starts from a copy of the loaded dimension; the two engines
# alternate; medians of RUNS runs, and pushdown/memory.  Both runs must
# give the same counts.
#   usage: bench/absent.sh [KEYS] [RUNS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
keys=${1:-100000}
runs=${2:-3}
w=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench_absent.XXXXXX")
trap 'rm -rf "$w"' EXIT

python3 - "$keys" "$w" <<'EOF'
import sys
keys, w = int(sys.argv[1]), sys.argv[2]
with open(w + "/full.csv", "w") as f, open(w + "/extract.csv", "w") as g:
    f.write("id,name,city,lmd\n")
    g.write("id,name,city,lmd\n")
    for k in range(keys):
        f.write("%d,n%d,c%d,2024-01-01 00:00:00\n" % (k, k, k % 97))
        if k % 100 == 1:
            continue  # gone
        if k % 100 == 0:
            g.write("%d,n%d,moved%d,2024-01-02 00:00:00\n" % (k, k, k % 97))
        else:
            g.write("%d,n%d,c%d,2024-01-01 00:00:00\n" % (k, k, k % 97))
EOF

job() {
  cat >"$w/$1.yaml" <<YAML
job: absent
source: {plugin: csv, path: "$w/$2.csv"}
target: {connection: "Driver=SQLite3;Database=$w/$3.db", table: dim}
load: {mode: scd2, engine: $4, key: [id], lmd: lmd, type2: [city], type1: [name], deletes: absent,
       max_deletes: all}
YAML
}
job seed full base memory
job memory extract run memory
job pushdown extract run pushdown
"$dw" run "$w/seed.yaml" >/dev/null 2>"$w/err" || { cat "$w/err" >&2; exit 1; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
i=0
: >"$w/memory.txt"
: >"$w/pushdown.txt"
while [ "$i" -lt "$runs" ]; do
  for e in memory pushdown; do
    cp "$w/base.db" "$w/run.db"
    /usr/bin/time -f '%e %M' -o "$w/time" "$dw" run "$w/$e.yaml" >"$w/out" 2>"$w/err" || { cat "$w/err" >&2; exit 1; }
    counts=$(tail -n 1 "$w/out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join("%s=%s" % (k, d[k]) for k in ("read","skipped","inserted","expired","updated","deleted","unchanged","absent","engine")))')
    echo "$(cat "$w/time") $counts" >>"$w/$e.txt"
  done
  i=$((i + 1))
done
m=$(cut -d' ' -f1 "$w/memory.txt" | median)
p=$(cut -d' ' -f1 "$w/pushdown.txt" | median)
for e in memory pushdown; do
  printf '%s: %s keys: %s s median, peak RSS %s KiB (median), runs: %s\n  %s\n' "$e" "$keys" \
    "$(cut -d' ' -f1 "$w/$e.txt" | median)" "$(cut -d' ' -f2 "$w/$e.txt" | median)" \
    "$(cut -d' ' -f1 "$w/$e.txt" | tr '\n' ' ')" "$(head -n 1 "$w/$e.txt" | cut -d' ' -f3- | sed 's/ engine=.*//')"
done
[ "$(head -n 1 "$w/memory.txt" | cut -d' ' -f3- | sed 's/ engine=.*//')" = \
  "$(head -n 1 "$w/pushdown.txt" | cut -d' ' -f3- | sed 's/ engine=.*//')" ] || { echo "the counts differ" >&2; exit 1; }
echo "pushdown/memory: $(awk -v a="$p" -v b="$m" 'BEGIN { printf "%.2f", a / b }')"
