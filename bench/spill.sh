#!/bin/sh
# Peak RSS of a large initial scd2 load with the delta held in memory
# against the same load spilled to partition files past a memory budget
# (issue 18, src/cmd/run_spill.c).  SQLite; bench/gen.py's customer
# extract; each configuration into a fresh database; medians of RUNS runs.
# "unlimited" is --memory-budget 1TiB: nothing spills.
#   usage: bench/spill.sh [ROWS] [BUDGET] [RUNS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dw="$top/src/dwload"
rows=${1:-1000000}
budget=${2:-64MiB}
runs=${3:-1}
w=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench.XXXXXX")
trap 'rm -rf "$w"' EXIT
python3 "$top/bench/gen.py" full --rows "$rows" "$w/full.csv"
cat >"$w/job.yaml" <<YAML
job: spill
source: {plugin: csv, path: "$w/full.csv"}
target: {connection: "Driver=SQLite3;Database=\${DB}", table: dim}
load: {mode: scd2, engine: memory, lmd: lmd, key: [id], type1: [name]}
YAML

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure BUDGET: RUNS loads into fresh databases: "KiB seconds" lines
measure() {
  i=0
  while [ "$i" -lt "$runs" ]; do
    rm -f "$w/d.db"
    DB="$w/d.db" TMPDIR="$w" /usr/bin/time -f '%M %e' -o "$w/time" "$dw" run --memory-budget "$1" "$w/job.yaml" \
      >"$w/out" 2>"$w/err"
    parts=$(tail -n 1 "$w/out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("spilled_partitions", "no"))')
    echo "$(cat "$w/time") $parts"
    i=$((i + 1))
  done
}

for b in 1TiB "$budget"; do
  measure "$b" >"$w/m.txt"
  rss=$(cut -d' ' -f1 "$w/m.txt" | median)
  sec=$(cut -d' ' -f2 "$w/m.txt" | median)
  parts=$(cut -d' ' -f3 "$w/m.txt" | head -n 1)
  printf '%s rows, --memory-budget %s: peak RSS %s KiB (%.1f MiB), %s s, %s spilled partitions (median of %s)\n' \
    "$rows" "$b" "$rss" "$(echo "$rss" | awk '{print $1 / 1024}')" "$sec" "$parts" "$runs"
done
