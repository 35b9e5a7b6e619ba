#!/bin/sh
# The cost of late rows (issue 7), on SQLite.  A dimension of KEYS keys
# with three versions each (lmd day 1, 3, 5) receives a delta of a tenth of
# the keys, one row each, three ways:
#   on_time  rows dated day 6: ordinary changes of the current versions
#   late     rows dated day 2 (load.lookback: 5d): each splices a version
#            into its key's history, which is read for those keys only
#   reread   the whole source again with load.lookback: 5d, nothing new:
#            every row is reread and found unchanged (the rows of day 1 and
#            3 are late rows that turn out to be no-ops: history is read)
# and reports median seconds of RUNS runs and the ratios late/on_time and
# reread/on_time.  Each run starts from the same dimension, restored from a
# copy.
#   usage: bench/late.sh [KEYS] [RUNS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
keys=${1:-100000}
runs=${2:-5}
w=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench_late.XXXXXX")
trap 'rm -rf "$w"' EXIT

python3 - "$keys" "$w" <<'EOF'
import sys
keys, w = int(sys.argv[1]), sys.argv[2]
day = lambda d: "2024-01-%02d 00:00:00" % d
with open(w + "/full.csv", "w") as f:
    f.write("id,name,city,lmd\n")
    for d, city in ((1, "Oslo"), (3, "Bergen"), (5, "Rome")):
        for k in range(keys):
            f.write("%d,n%d,%s%d,%s\n" % (k, k, city, k % 7, day(d)))
for name, d in (("on_time", 6), ("late", 2)):
    with open(w + "/%s.csv" % name, "w") as f:
        f.write("id,name,city,lmd\n")
        for k in range(0, keys, 10):
            f.write("%d,n%d,Paris%d,%s\n" % (k, k, k % 7, day(d)))
EOF

job() {
  cat >"$w/$1.yaml" <<YAML
version: 1
job: bench_late
source: {plugin: csv, path: "$w/$2"}
target: {connection: "Driver=SQLite3;Database=$w/dim.db", table: dim}
load: {mode: scd2, lmd: lmd, key: [id], type1: [name]$3}
dimension: {surrogate_key: sk}
YAML
}
job load full.csv ""
job on_time on_time.csv ""
job late late.csv ", lookback: 5d"
job reread full.csv ", lookback: 5d"

"$dw" -q run "$w/load.yaml" >/dev/null
cp "$w/dim.db" "$w/dim.base"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Each run: restore the dimension, set the checkpoint to day 5 (as after
# the load), run, take the elapsed seconds.
for kind in on_time late reread; do
  i=0
  while [ "$i" -lt "$runs" ]; do
    cp "$w/dim.base" "$w/dim.db"
    /usr/bin/time -f '%e' -o "$w/time" "$dw" -q run "$w/$kind.yaml" >"$w/$kind.out"
    cat "$w/time"
    i=$((i + 1))
  done | median >"$w/$kind.s"
  echo "$kind: $(cat "$w/$kind.s")s  $(tail -n 1 "$w/$kind.out")"
done
on_time=$(cat "$w/on_time.s")
awk -v a="$(cat "$w/late.s")" -v b="$(cat "$w/reread.s")" -v o="$on_time" -v k="$keys" -v r="$runs" 'BEGIN {
  printf "keys %d (versions %d), delta %d rows, median of %d runs\n", k, 3 * k, k / 10, r
  printf "late/on_time %.2f  reread/on_time %.2f\n", (o > 0 ? a / o : 0), (o > 0 ? b / o : 0) }'
