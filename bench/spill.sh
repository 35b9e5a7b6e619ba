#!/bin/sh
# Peak RSS of a large scd2 load with the delta held in memory against the
# same load spilled to partition files past a memory budget (issue 18,
# src/cmd/run_spill.c).  SQLite; bench/gen.py's customer extract; medians
# of RUNS runs.  "unlimited" is --memory-budget 1TiB: nothing spills.
#   initial: an initial load of ROWS rows, each run into a fresh database;
#   absent:  deletes: absent: a full extract of 0.9 x ROWS rows (10%
#            changed, 5% new keys, all past the checkpoint: 14.5% of the
#            dimension's keys absent) into a dimension of ROWS keys, each
#            run into a copy of it.
#   absent-inu: the same with load.ignore_null_updates: true.
#   scan:    the same extract with load.lookup: scan instead of absence.
#   usage: [DWLOAD=build] [DWLOAD_REF=build] bench/spill.sh [ROWS] [BUDGET] [RUNS] [initial|absent|absent-inu|scan]
# DWLOAD_REF: an earlier build, run beside each run (alternating).  Each
# result line says the spill files' size (the log's) against the CSV's.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}  # (DWLOAD: a copy, so that a rebuild cannot change it mid-run)
export DWLOAD_PLUGIN_PATH="${DWLOAD_PLUGIN_PATH:-$top/plugins/.libs}"
rows=${1:-1000000}
budget=${2:-64MiB}
runs=${3:-1}
kind=${4:-initial}
w=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench.XXXXXX")
trap 'rm -rf "$w"' EXIT
python3 "$top/bench/gen.py" full --rows "$rows" "$w/full.csv"
job() {
  cat <<YAML
job: spill
source: {plugin: csv, path: "$w/$1.csv"}
target: {connection: "Driver=SQLite3;Database=\${DB}", table: dim}
load: {mode: scd2, engine: memory, lmd: lmd, key: [id], type1: [name]$2}
YAML
}
job full "" >"$w/job.yaml"
case $kind in
  initial) ;;
  absent) extra=", deletes: absent" ;;
  absent-inu) extra=", deletes: absent, ignore_null_updates: true" ;;
  scan) extra=", lookup: scan" ;;
  *) echo "bench/spill.sh: unknown kind $kind" >&2; exit 2 ;;
esac
if [ "$kind" != initial ]; then
  # the dimension, loaded once (held: nothing spills), copied for each run
  DB="$w/base.db" "$dw" run --memory-budget 1TiB "$w/job.yaml" >/dev/null 2>"$w/err"
  python3 "$top/bench/gen.py" delta --rows $((rows * 9 / 10)) --dim "$rows" --changed 0.1 --new 0.05 \
    "$w/extract.csv"
  job extract "$extra" >"$w/job.yaml"
fi

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# once BUDGET BUILD: one load into a fresh database: "KiB seconds
# partitions/deleted/status spill-MiB keyfile-MiB" (the log's sizes of
# the spill files and of a partitioned key map's files, 0 when none)
once() {
  rm -f "$w/d.db"
  [ "$kind" = initial ] || cp "$w/base.db" "$w/d.db"
  DB="$w/d.db" TMPDIR="$w" /usr/bin/time -f '%M %e' -o "$w/time" "$2" run --memory-budget "$1" "$w/job.yaml" \
    >"$w/out" 2>"$w/err"
  parts=$(tail -n 1 "$w/out" | python3 -c 'import json,sys; d = json.load(sys.stdin)
print("%s/%s/%s" % (d.get("spilled_partitions", "no"), d.get("deleted"), d.get("status")))')
  mib=$(sed -n 's/.*spilled to [0-9]* partitions (\([0-9.]*\) MiB).*/\1/p' "$w/err" | head -n 1)
  kf=$(sed -n 's/.* to the key files (\([0-9.]*\) MiB).*/\1/p' "$w/err" | head -n 1)
  echo "$(cat "$w/time") $parts ${mib:-0} ${kf:-0}"
}

# RUNS runs of each budget; with DWLOAD_REF, that build's run beside each
# of this one's, alternating
csv=$(stat -c %s "$w/$([ "$kind" = initial ] && echo full || echo extract).csv" | awk '{ printf "%.1f", $1 / 1048576 }')
for b in 1TiB "$budget"; do
  rm -f "$w/m.own" "$w/m.ref"
  i=0
  while [ "$i" -lt "$runs" ]; do
    [ -z "${DWLOAD_REF:-}" ] || once "$b" "$DWLOAD_REF" >>"$w/m.ref"
    once "$b" "$dw" >>"$w/m.own"
    i=$((i + 1))
  done
  for m in own ref; do
    [ -f "$w/m.$m" ] || continue
    rss=$(cut -d' ' -f1 "$w/m.$m" | median)
    sec=$(cut -d' ' -f2 "$w/m.$m" | median)
    parts=$(cut -d' ' -f3 "$w/m.$m" | head -n 1)
    spilled=$(cut -d' ' -f4 "$w/m.$m" | median)
    keyfiles=$(cut -d' ' -f5 "$w/m.$m" | median)
    printf '%s%s, %s rows, --memory-budget %s: peak RSS %s KiB (%.1f MiB), %s s, spilled partitions/deleted/status %s, spill files %s MiB for %s MiB of CSV, key files %s MiB (median of %s)\n' \
      "$([ "$m" = ref ] && echo "reference ($DWLOAD_REF): ")" "$kind" "$rows" "$b" "$rss" \
      "$(echo "$rss" | awk '{print $1 / 1024}')" "$sec" "$parts" "$spilled" "$csv" "$keyfiles" "$runs"
  done
done
