#!/bin/bash
# The streamed initial load (issue 18, src/cmd/run_stream.c) against the
# same load held in memory until the source ends: a reference build
# (DWLOAD_OLD, e.g. the commit before streaming) and this one, side by side
# on each warehouse, alternating, into a fresh table each time.
# bench/gen.py's customer extract (every key once), scd2 with a type 1
# column, the memory engine, the default budget; peak RSS and seconds by
# /usr/bin/time, medians of RUNS.
#   usage: DWLOAD_OLD=/old/src/dwload bench/stream.sh [ROWS] [RUNS] [WAREHOUSES]
#   e.g.   DWLOAD_OLD=/tmp/old/src/dwload bench/stream.sh 1000000 3 sqlite,postgresql,mariadb
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
new=${DWLOAD:-$top/src/dwload}
old=${DWLOAD_OLD:?set DWLOAD_OLD to the reference build}
rows=${1:-1000000}
runs=${2:-3}
only=${3:-sqlite,postgresql,mariadb}
work=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench.XXXXXX")
db=dwl_stream
tmo=3600
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_begin "$only"
bounded python3 "$top/bench/gen.py" full --rows "$rows" "$work/full.csv"

# job WH: the job file for WH
job() {
  cat >"$work/$1.yaml" <<YAML
job: stream
source: {plugin: csv, path: "$work/full.csv"}
target: {connection: "$(wh_conn "$1" dim)", table: dim}
load: {mode: scd2, engine: memory, lmd: lmd, key: [id], type1: [name]}
YAML
}

# once WH BIN: one load into a fresh table and state: "KiB seconds chunks"
once() {
  setup_wh "$1"
  wh_drop "$1" dim
  rm -f "$(lite_file dim)"
  TMPDIR="$work" bounded /usr/bin/time -f '%M %e' -o "$work/time" "$2" run "$work/$1.yaml" >"$work/out" 2>"$work/err" ||
    die "$1: $2 failed: $(tail -n 3 "$work/err")"
  chunks=$(tail -n 1 "$work/out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("streamed_chunks", "-"))')
  n=$(echo "SELECT COUNT(*) FROM dim;" | wh_sql "$1" dim)
  [ "$n" = "$rows" ] || die "$1: $2 loaded $n rows, not $rows"
  echo "$(cat "$work/time") $chunks"
}

IFS=, read -r -a whs <<<"$only"
printf '| warehouse | rows | build | peak RSS (MiB) | seconds | chunks |\n|---|---|---|---|---|---|\n'
for wh in "${whs[@]}"; do
  job "$wh"
  : >"$work/old.txt"
  : >"$work/new.txt"
  for ((i = 0; i < runs; i++)); do
    say "$wh: run $((i + 1)) of $runs"
    once "$wh" "$old" >>"$work/old.txt"
    once "$wh" "$new" >>"$work/new.txt"
  done
  for b in old new; do
    rss=$(cut -d' ' -f1 "$work/$b.txt" | median)
    sec=$(cut -d' ' -f2 "$work/$b.txt" | median)
    printf '| %s | %s | %s | %s | %s | %s |\n' "$(wh_title "$wh")" "$rows" "$b" \
      "$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')" "$sec" "$(cut -d' ' -f3 "$work/$b.txt" | head -n 1)"
  done
done
