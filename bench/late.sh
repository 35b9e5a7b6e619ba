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
#   reread_ignore  the same with load.late: ignore (each late row is
#            compared with the version in effect at its lmd, and left out)
# and reports median seconds of RUNS runs and the ratios late/on_time and
# reread/on_time, for each engine of ENGINES (memory, pushdown: its keys
# with late rows go to the memory engine), and pushdown/memory.  Each run
# starts from the same dimension, restored from a copy.
#   usage: bench/late.sh [KEYS] [RUNS] [ENGINES]
#   e.g.   bench/late.sh 100000 5 memory,pushdown
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
keys=${1:-100000}
runs=${2:-5}
engines=${3:-memory}
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

# job NAME CSV EXTRA [ENGINE]
job() {
  cat >"$w/$1.yaml" <<YAML
version: 1
job: bench_late
source: {plugin: csv, path: "$w/$2"}
target: {connection: "Driver=SQLite3;Database=$w/dim.db", table: dim}
load: {mode: scd2, engine: ${4:-memory}, lmd: lmd, key: [id], type1: [name]$3}
dimension: {surrogate_key: sk}
YAML
}
job load full.csv ""
for e in $(echo "$engines" | tr ',' ' '); do
  job "on_time.$e" on_time.csv "" "$e"
  job "late.$e" late.csv ", lookback: 5d" "$e"
  job "reread.$e" full.csv ", lookback: 5d" "$e"
  job "reread_ignore.$e" full.csv ", lookback: 5d, late: ignore" "$e"
done

"$dw" -q run "$w/load.yaml" >/dev/null
cp "$w/dim.db" "$w/dim.base"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Each run: restore the dimension, set the checkpoint to day 5 (as after
# the load), run, take the elapsed seconds.
for e in $(echo "$engines" | tr ',' ' '); do
  for kind in on_time late reread reread_ignore; do
    i=0
    while [ "$i" -lt "$runs" ]; do
      cp "$w/dim.base" "$w/dim.db"
      /usr/bin/time -f '%e' -o "$w/time" "$dw" -q run "$w/$kind.$e.yaml" >"$w/$kind.$e.out"
      cat "$w/time"
      i=$((i + 1))
    done | median >"$w/$kind.$e.s"
    echo "$e $kind: $(cat "$w/$kind.$e.s")s  $(tail -n 1 "$w/$kind.$e.out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join("%s=%s" % (k, d[k]) for k in ("read","inserted","expired","updated","unchanged","late_repaired","late_ignored","engine")))')"
  done
  on_time=$(cat "$w/on_time.$e.s")
  awk -v a="$(cat "$w/late.$e.s")" -v b="$(cat "$w/reread.$e.s")" -v c="$(cat "$w/reread_ignore.$e.s")" \
    -v o="$on_time" -v k="$keys" -v r="$runs" -v e="$e" 'BEGIN {
    printf "%s: keys %d (versions %d), delta %d rows, median of %d runs\n", e, k, 3 * k, k / 10, r
    printf "%s: late/on_time %.2f  reread/on_time %.2f  reread_ignore/on_time %.2f\n", e, (o > 0 ? a / o : 0),
      (o > 0 ? b / o : 0), (o > 0 ? c / o : 0) }'
done
case ",$engines," in
  *,memory,*pushdown,* | *,pushdown,*memory,*)
    for kind in on_time late reread reread_ignore; do
      echo "pushdown/memory $kind: $(awk -v a="$(cat "$w/$kind.pushdown.s")" -v b="$(cat "$w/$kind.memory.s")" 'BEGIN { printf "%.2f", a / b }')"
    done ;;
esac
