#!/usr/bin/env bash
# Two builds of dwload side by side: bench/run for each, alternately, for
# a number of rounds (so that a quiet or a busy stretch of the machine
# falls on both), then, per benchmark row of bench/run's first table, the
# median of each build's ratios (dwload against the reference measured in
# the same run) and the change from the first build to the second.  A
# change under +5% is within what a restructure may cost; above, the row
# is marked.
#
#   bench/compare.sh OLD_DWLOAD NEW_DWLOAD [--rounds N] [--out FILE] [-- BENCH_RUN_OPTIONS...]
#   bench/compare.sh --report DIR     the table again from the runs kept in DIR
#
#   --rounds N   rounds of (old, new) runs (default 3, at least 1)
#   --out FILE   the comparison table (default: stdout only)
#   after --, options for bench/run (default: --quick --runs 5)
#
# Each bench/run starts its own servers and stops them; its tables are
# kept next to the comparison (FILE.d/, or a temporary folder).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
report_only=
if [ "${1:-}" = --report ]; then
  if [ $# -ne 2 ] || [ ! -d "$2" ]; then
    echo "usage: bench/compare.sh --report DIR" >&2
    exit 2
  fi
  report_only=$2
  set -- /bin/true /bin/true --rounds 0
fi
[ $# -ge 2 ] || { echo "usage: bench/compare.sh OLD_DWLOAD NEW_DWLOAD [--rounds N] [--out FILE] [-- OPTS]" >&2; exit 2; }
old=$1 new=$2
shift 2
rounds=3 out=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "bench/compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case $rounds in '' | *[!0-9]*) echo "bench/compare.sh: --rounds takes a number" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || [ -n "$report_only" ] || { echo "bench/compare.sh: --rounds must be at least 1" >&2; exit 2; }
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--quick --runs 5)
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "bench/compare.sh: $b is not an executable" >&2; exit 2; }
done

if [ -n "$report_only" ]; then
  keep=$report_only
  rounds=$(find "$keep" -name 'old.*.md' | wc -l)
elif [ -n "$out" ]; then
  keep=$out.d
  mkdir -p "$keep"
else
  keep=$(mktemp -d)
fi

for r in $([ -n "$report_only" ] || seq 1 "$rounds"); do
  for side in old new; do
    bin=$old
    [ $side = new ] && bin=$new
    echo "bench/compare.sh: round $r, $side ($bin)" >&2
    DWLOAD=$bin timeout 3600 "$top/bench/run" "${opts[@]}" --out "$keep/$side.$r.md" >/dev/null
  done
done

# The first table's rows: | bench | warehouse | what | dwload | reference | ratio | ...
ratios() {
  awk -F'|' '/^\| bench \|/ { on = 1; next } on && /^\|---/ { next } on && /^\|/ {
      gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $7)
      print $2 "\t" $3 "\t" $7; next } on { exit }' "$1"
}

{
  [ -n "$report_only" ] || echo "bench/compare.sh $old $new --rounds $rounds -- ${opts[*]}"
  echo
  echo "| bench | warehouse | ratio, old (median of $rounds) | ratio, new | change |"
  echo "|---|---|---:|---:|---:|"
  for f in "$keep"/old.*.md; do ratios "$f" | sed 's/^/old\t/'; done >"$keep/all.tsv"
  for f in "$keep"/new.*.md; do ratios "$f" | sed 's/^/new\t/'; done >>"$keep/all.tsv"
  awk -F'\t' '
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $2 "\t" $3; if (!(k in seen)) { seen[k] = 1; order[++n] = k } v[$1, k] = v[$1, k] " " $4 }
    END {
      for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, "\t")
        o = median(v["old", k]); w = median(v["new", k])
        ch = o > 0 ? (w - o) / o * 100 : 0
        printf "| %s | %s | %.2f | %.2f | %+.1f%%%s |\n", p[1], p[2], o, w, ch, (ch > 5 ? " **worse**" : "")
      }
    }' "$keep/all.tsv"
  echo
  echo "Each run's tables: $keep"
} | if [ -n "$out" ]; then tee "$out"; else cat; fi
