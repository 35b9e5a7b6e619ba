#!/bin/sh
# Peak RSS of a spilled delta from a source that does not tell its size
# (issue 18, src/cmd/run_spill.c): such a delta spills to 16 partitions,
# whatever its size, and a reference build (DWLOAD_OLD) holds each of them
# whole however far past the budget it is, where this one splits a
# partition that passes the budget as it is read back.  SQLite; bench/gen.py's
# customer extract as the delta, fed through a FIFO, into a table of one
# row (an empty one would stream the load instead: run_stream.c); both
# builds alternating, each run on a fresh copy of the seeded database;
# medians of RUNS.
#   usage: DWLOAD_OLD=/old/src/dwload bench/spill_split.sh [ROWS] [BUDGET] [RUNS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
new=${DWLOAD:-$top/src/dwload}
old=${DWLOAD_OLD:?set DWLOAD_OLD to the reference build}
rows=${1:-2000000}
budget=${2:-8MiB}
runs=${3:-3}
w=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench.XXXXXX")
trap 'rm -rf "$w"' EXIT
export DWLOAD_PLUGIN_PATH="${DWLOAD_PLUGIN_PATH:-$top/plugins/.libs}"
python3 "$top/bench/gen.py" full --rows "$rows" "$w/full.csv"
printf 'id,name,address,phone,lmd\n0,n,a,p,2000-01-01 00:00:00\n' >"$w/seed.csv"
mkfifo "$w/feed"
for f in seed feed; do
  cat >"$w/$f.yaml" <<YAML
job: split
source: {plugin: csv, path: "$w/$f$([ $f = seed ] && echo .csv)"}
target: {connection: "Driver=SQLite3;Database=\${DB}", table: dim}
load: {mode: scd2, engine: memory, lmd: lmd, key: [id], type1: [name]}
YAML
done
DB="$w/seed.db" "$new" run "$w/seed.yaml" >/dev/null 2>&1

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# one BUILD: a run into a fresh copy: "KiB seconds partitions warnings"
one() {
  cp "$w/seed.db" "$w/d.db"
  cat "$w/full.csv" >"$w/feed" &
  DB="$w/d.db" TMPDIR="$w" /usr/bin/time -f '%M %e' -o "$w/time" "$1" run --memory-budget "$budget" \
    "$w/feed.yaml" >"$w/out" 2>"$w/err" || { cat "$w/err" >&2; exit 1; }
  wait
  parts=$(tail -n 1 "$w/out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("spilled_partitions", "no"))')
  echo "$(cat "$w/time") $parts $(grep -c 'more than the memory budget' "$w/err" || :)"
}

i=0
: >"$w/old.txt"
: >"$w/new.txt"
while [ "$i" -lt "$runs" ]; do
  one "$old" >>"$w/old.txt"
  one "$new" >>"$w/new.txt"
  i=$((i + 1))
done
for b in old new; do
  rss=$(cut -d' ' -f1 "$w/$b.txt" | median)
  sec=$(cut -d' ' -f2 "$w/$b.txt" | median)
  printf '%s: %s rows, --memory-budget %s: peak RSS %s KiB (%.1f MiB), %s s, %s partitions, %s over-budget warnings (median of %s; runs: %s)\n' \
    "$b" "$rows" "$budget" "$rss" "$(echo "$rss" | awk '{print $1 / 1024}')" "$sec" \
    "$(cut -d' ' -f3 "$w/$b.txt" | head -n 1)" "$(cut -d' ' -f4 "$w/$b.txt" | head -n 1)" "$runs" \
    "$(cut -d' ' -f1,2 "$w/$b.txt" | tr '\n' ';')"
done
