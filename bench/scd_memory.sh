#!/bin/sh
# Peak RSS of the in-memory change engine per current dimension row
# (issue 3, goal: at most 100 bytes).  Two dimensions, 1k and 1M current
# rows, receive the same 10k-row delta (60% changed, 30% new, 10% no-op);
# bytes per row = (peak RSS at 1M - peak RSS at 1k) / (1M - 1k), so the
# process baseline and the delta cancel out.  Medians of RUNS runs.
# load.lookup: scan makes both runs read every current version, as the
# measure needs: the default (auto) reads only the delta's keys when the
# delta is under a tenth of the dimension, which the 1M run's is.
#   usage: bench/scd_memory.sh [BIG_ROWS] [RUNS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dw="$top/src/dwload"
big=${1:-1000000}
runs=${2:-3}
small=1000
w=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench.XXXXXX")
trap 'rm -rf "$w"' EXIT
python3 "$top/bench/gen.py" full --rows "$big" "$w/full_big.csv"
python3 "$top/bench/gen.py" full --rows "$small" "$w/full_small.csv"
python3 "$top/bench/gen.py" delta --rows 10000 --dim "$big" "$w/delta.csv"
for size in small big; do
  cat >"$w/$size.yaml" <<YAML
job: mem_$size
source: {plugin: csv, path: "\${FEED}"}
target: {connection: "Driver=SQLite3;Database=$w/$size.db", table: dim}
load: {mode: scd2, lmd: lmd, key: [id], type1: [name], lookup: scan}
YAML
done

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Loads the dimension, snapshots it, then times RUNS incremental runs,
# each against a fresh copy of the snapshot.
measure() {
  size=$1
  rm -f "$w/$size.db"
  FEED="$w/full_$size.csv" "$dw" -q run "$w/$size.yaml" >/dev/null
  cp "$w/$size.db" "$w/$size.db.base"
  i=0
  while [ "$i" -lt "$runs" ]; do
    cp "$w/$size.db.base" "$w/$size.db"
    FEED="$w/delta.csv" /usr/bin/time -f '%M %e' -o "$w/time" "$dw" -q run "$w/$size.yaml" >/dev/null
    cat "$w/time"
    i=$((i + 1))
  done
}

measure small >"$w/small.txt"
measure big >"$w/big.txt"
rss_small=$(cut -d' ' -f1 "$w/small.txt" | median)
rss_big=$(cut -d' ' -f1 "$w/big.txt" | median)
sec_big=$(cut -d' ' -f2 "$w/big.txt" | median)
echo "peak RSS, 10k delta against $small current rows: ${rss_small} KiB (median of $runs)"
echo "peak RSS, 10k delta against $big current rows: ${rss_big} KiB, ${sec_big} s (median of $runs)"
awk -v a="$rss_small" -v b="$rss_big" -v n="$big" -v s="$small" \
  'BEGIN { printf "bytes per current dimension row: %.1f\n", (b - a) * 1024 / (n - s) }'
