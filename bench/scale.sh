#!/usr/bin/env bash
# How dwload's time and memory grow with the dimension's size, per
# warehouse and engine (issue 18: B6 and bench/SCALE.md, which reads its
# results).  For each size N, each warehouse and each engine (load.engine:
# memory and pushdown), side by side in one run:
#
#   init   the initial scd2 load of an N-row extract into an empty table
#   delta  an N/10-row delta (60% changed, 30% new keys, 10% no-op) into
#          the N-row dimension that init made
#
#   bench/scale.sh [--quick] [--sizes LIST] [--runs N] [--only WAREHOUSES]
#                  [--engines LIST] [--timeout S] [--out FILE] [--keep]
#
#   --quick        sizes 100000 only (under ~3 minutes on 2 cores)
#   --sizes LIST   comma-separated row counts (default 100000,300000,1000000)
#   --runs N       repetitions per measurement, median reported (default 3);
#                  the largest of several sizes is run once (the table
#                  says how many runs each figure is)
#   --only LIST    comma-separated subset of postgresql,mariadb,sqlite
#   --engines LIST comma-separated subset of memory,pushdown
#   --timeout S    the bound on one dwload run (default 300 s); a run that
#                  exceeds it is reported as a timeout and the larger sizes
#                  of that warehouse and engine are skipped
#   --out FILE     where the results go (default bench/results.scale.md)
#   --keep         keep the work directory (data, job files, logs)
#   DWLOAD=PATH    measure another build of dwload (default src/dwload)
#
# Every figure is the wall clock of the whole dwload process (connection
# and commit included), its peak RSS (/usr/bin/time -f %M) and the 1-minute
# load average read right after it (the machine may be shared).  Pushdown's
# warehouse-side time is dwload's own log line ("changes computed and
# applied in the warehouse in Xs"); the memory engine's current-version
# read likewise.  Between init and delta the table gets fresh statistics
# (VACUUM ANALYZE / ANALYZE TABLE, not timed), as autovacuum would give it.
# The first delta of each engine is compared row for row with the other
# engine's.
#
# Starts its own throwaway servers (tests/servers.sh) and stops them on
# exit.  Progress goes to stderr, the results table to stdout and FILE.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
out=$top/bench/results.scale.md
gen=$top/bench/gen.py
sizes=100000,300000,1000000
runs=3
only=postgresql,mariadb,sqlite
engines=memory,pushdown
tmo=300
keep=0
quick=0
db=dwl_bench

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --sizes | --runs | --only | --engines | --timeout | --out)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      case $1 in
        --sizes) sizes=$2 ;;
        --runs) runs=$2 ;;
        --only) only=$2 ;;
        --engines) engines=$2 ;;
        --timeout) tmo=$2 ;;
        --out) out=$2 ;;
      esac
      shift
      ;;
    --keep) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[ "$quick" -eq 0 ] || sizes=100000
for v in "$runs" "$tmo" ${sizes//,/ }; do
  case $v in
    '' | *[!0-9]* | 0) echo "bench: --runs, --timeout and --sizes take positive numbers" >&2; exit 2 ;;
  esac
done
# sorted, so that a timeout can skip the sizes above it
sizes=$(tr ',' '\n' <<<"$sizes" | sort -n -u | paste -sd' ' -)
largest=${sizes##* }
smallest=${sizes%% *}

if [ ! -x "$dw" ]; then
  echo "bench: $dw is not built; run: (test -f Makefile || (autoreconf -fi && ./configure)) && make -j2" >&2
  exit 2
fi
for c in python3 psql mariadb sqlite3 timeout awk sed; do
  command -v "$c" >/dev/null 2>&1 || { echo "bench: $c is missing" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (Debian: time)" >&2; exit 2; }

# shellcheck source=/dev/null
. "$top/tests/servers.sh"

t_start=$EPOCHREALTIME
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d "${TMPDIR:-/tmp}/dwl_benchscale.XXXXXX")
cleanup() {
  rc=$?
  trap - EXIT INT TERM
  set +e
  servers_stop >/dev/null 2>&1
  if [ "$keep" -eq 1 ]; then
    echo "bench: work directory kept: $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work/data" "$work/jobs" "$work/sql" "$work/log" "$work/res" "$work/sqlite" "$work/tmp"
# the servers' temporary files too (see bench/run)
export TMPDIR="$work/tmp"

# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"

# ---- one measurement ------------------------------------------------------------

# scale_run WH JOB VARIANT FEED LABEL: one dwload run, bounded by $tmo;
# sets last_s, last_rss, last_load, last_wh (the warehouse-side or the
# current-version read time from dwload's log, n/a if absent) and
# last_lookup (scan, keys or -).  Returns 1
# on a timeout, dies on any other failure.
scale_run() {
  local log="$work/log/$5" t0 t1 rc=0 jf="$1.$2${3:+.$3}"
  t0=$EPOCHREALTIME
  FEED=$4 /usr/bin/time -f '%M' -o "$log.rss" \
    timeout -k 10 "$tmo" "$dw" run "$work/jobs/$jf.yaml" >"$log.out" 2>"$log.err" || rc=$?
  t1=$EPOCHREALTIME
  last_load=$(cut -d' ' -f1 /proc/loadavg)
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    say "$5: timed out after ${tmo}s"
    return 1
  fi
  if [ "$rc" -ne 0 ] || ! grep -q '"status":"ok"' "$log.out"; then
    cat "$log.err" "$log.out" >&2
    die "dwload failed ($jf, exit status $rc)"
  fi
  last_s=$(secs "$t0" "$t1")
  last_rss=$(tail -n 1 "$log.rss")
  last_wh=$(sed -n -e 's/.*applied in the warehouse in \([0-9.]*\)s.*/\1/p' \
    -e 's/.*read [0-9]* current versions .* in \([0-9.]*\)s.*/\1/p' "$log.err" | head -n 1)
  [ -n "$last_wh" ] || last_wh=n/a
  # which current versions the memory engine read (load.lookup: auto
  # decides from the table's row estimate, so it can change at N/10)
  last_lookup=$(sed -n -e 's/.*current versions (all).*/scan/p' -e "s/.*current versions (the delta's keys).*/keys/p" "$log.err" | head -n 1)
  [ -n "$last_lookup" ] || last_lookup=-
}

# expect LABEL FIELD VALUE: dies unless the run's summary says VALUE
expect() {
  [ "$(summary_field "$1" "$2")" = "$3" ] || die "$1: expected $2 $3: $(tail -n 1 "$work/log/$1.out")"
}

# fresh_stats WH TABLE: what autovacuum / a DBA would have done after a load
fresh_stats() {
  case $1 in
    postgresql) echo "VACUUM ANALYZE $2; CHECKPOINT;" | wh_sql "$1" ;;
    mariadb) echo "ANALYZE TABLE $2;" | wh_sql "$1" >/dev/null ;;
    sqlite) echo "ANALYZE;" | wh_sql "$1" "$2" ;;
  esac
}

declare -A skip # WH.ENGINE -> the size that timed out

# scale_size WH N: init and delta at size N, each engine in turn per run
scale_size() {
  local wh=$1 n=$2 d=$(($2 / 10)) job="scale_$2" t="scale_dim_$2" r=$runs i e v key diff
  # the largest of several sizes once: it takes most of the time
  [ "$n" != "$largest" ] || [ "$n" = "$smallest" ] || r=1
  echo "$r" >"$work/res/$wh.$n.runs"
  write_job "$wh" "$job" "$t"
  write_job "$wh" "$job" "$t" pushdown
  for i in $(seq 1 "$r"); do
    for e in ${engines//,/ }; do
      key=$wh.$e
      [ -z "${skip[$key]:-}" ] || continue
      v=""
      [ "$e" = memory ] || v=pushdown
      wh_drop "$wh" "$t"
      wh_clear_state "$wh" "$job"
      if ! scale_run "$wh" "$job" "$v" "$work/data/full_$n.csv" "$key.$n.init.$i"; then
        skip[$key]=$n
        continue
      fi
      expect "$key.$n.init.$i" inserted "$n"
      record "$key.$n.init" "$last_s" "$last_rss" "$last_load" "$last_wh" -
      say "$wh $e $n init run $i: ${last_s}s, ${last_rss} KiB, load $last_load"
      fresh_stats "$wh" "$t"
      if ! scale_run "$wh" "$job" "$v" "$work/data/delta_$n.csv" "$key.$n.delta.$i"; then
        skip[$key]=$n
        continue
      fi
      expect "$key.$n.delta.$i" inserted $((d * 9 / 10))
      expect "$key.$n.delta.$i" expired $((d * 6 / 10))
      record "$key.$n.delta" "$last_s" "$last_rss" "$last_load" "$last_wh" "$last_lookup"
      say "$wh $e $n delta run $i: ${last_s}s, ${last_rss} KiB, load $last_load"
      [ "$i" -eq 1 ] || continue
      # the engines' first results, row for row
      if [ ! -f "$work/res/$wh.$n.first" ]; then
        wh_snapshot "$wh" "$t" "${t}_first"
        [ "$wh" != sqlite ] || echo "ALTER TABLE $t RENAME TO ${t}_first;" | wh_sql "$wh" "${t}_first"
        echo "$e" >"$work/res/$wh.$n.first"
      else
        diff=$(wh_diff "$wh" "$t" "${t}_first")
        echo "$diff" >"$work/res/$wh.$n.diff"
        [ "$diff" = 0 ] || say "$wh $n: WARNING: the engines' dimensions differ on $diff rows"
      fi
    done
  done
  wh_drop "$wh" "$t"
  wh_drop "$wh" "${t}_first"
}

# ---- main -------------------------------------------------------------------

say "work directory $work; sizes $sizes; $runs runs$([ "$largest" = "$smallest" ] || echo " (1 at $largest)"); timeout ${tmo}s per run"
say "generating data"
for n in $sizes; do
  bounded python3 "$gen" full --rows "$n" "$work/data/full_$n.csv"
  bounded python3 "$gen" delta --rows $((n / 10)) --dim "$n" "$work/data/delta_$n.csv"
done

say "starting the servers"
export DWL_MARIADB_BUFFER_POOL=${DWL_MARIADB_BUFFER_POOL:-1G}
servers_ok=1
if ! servers_start >&2; then
  servers_ok=0
  say "a server did not start; its measurements are skipped"
fi
export PGPASSWORD=${DWL_PG_PASSWORD:-} MYSQL_PWD=${DWL_MARIADB_PASSWORD:-}

whs=""
for wh in postgresql mariadb sqlite; do
  case ",$only," in *",$wh,"*) ;; *) continue ;; esac
  case " $DWL_WAREHOUSES " in
    *" $wh "*) whs="$whs $wh" ;;
    *) say "$wh: not available, skipped" ;;
  esac
done
[ -n "$whs" ] || die "no warehouse to run"

declare -A phase_s
for wh in $whs; do
  t0=$EPOCHREALTIME
  setup_wh "$wh"
  for n in $sizes; do scale_size "$wh" "$n"; done
  phase_s[$wh]=$(secs "$t0" "$EPOCHREALTIME")
  say "$wh done in ${phase_s[$wh]}s"
done

# ---- the results table ---------------------------------------------------------

# usrow SECONDS ROWS: microseconds per row
usrow() { awk -v s="$1" -v n="$2" 'BEGIN { if (s == "n/a") print "n/a"; else printf "%.2f", s * 1e6 / n }'; }
mib() { awk -v k="$1" 'BEGIN { if (k == "n/a") print "n/a"; else printf "%.0f", k / 1024 }'; }

# slope KEY FIELD SCALE: (value at the largest size - at the smallest) /
# (rows between them) x SCALE, the growth per row with the fixed costs out
slope() {
  local lo=$smallest a b
  a=$(med "$1.$lo.$2" "$3")
  b=$(med "$1.$largest.$2" "$3")
  awk -v a="$a" -v b="$b" -v lo="$lo" -v hi="$largest" -v k="$4" \
    'BEGIN { if (a == "n/a" || b == "n/a" || hi == lo) print "n/a"; else printf "%.2f", (b - a) * k / (hi - lo) }'
}

report() {
  local wh e n p rows what
  echo "# dwload scale: results of the latest run"
  echo
  echo "bench/scale.sh$([ "$quick" -eq 0 ] || echo ' --quick') --sizes ${sizes// /,} --runs $runs: init = initial scd2 load of N rows; delta = N/10 rows (60% changed, 30% new, 10% no-op) into that N-row dimension. Medians of $runs runs$([ "$largest" = "$smallest" ] || echo " (1 run at $largest rows)"); seconds, wall clock of the whole dwload process; RSS = peak RSS of dwload; load = 1-minute load average after the run (medians); wh = pushdown's warehouse-side time (\"changes computed and applied in the warehouse\"; memory engine: its current-version read), from dwload's log; lookup = the current versions the memory engine read (scan: all, keys: the delta's keys; load.lookup: auto)."
  echo
  echo "| warehouse | engine | phase | rows | runs | seconds | µs per row | peak RSS (MiB) | wh (s) | load | lookup | every run (s) |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
  for wh in $whs; do
    for e in ${engines//,/ }; do
      for p in init delta; do
        for n in $sizes; do
          rows=$n
          [ "$p" = init ] || rows=$((n / 10))
          what="$(med "$wh.$e.$n.$p")"
          [ -n "${skip[$wh.$e]:-}" ] && [ "$n" -ge "${skip[$wh.$e]}" ] && [ "$what" = n/a ] && what="timeout (> ${tmo}s)"
          echo "| $(wh_title "$wh") | $e | $p | $rows | $(cat "$work/res/$wh.$n.runs" 2>/dev/null || echo 0) | $what | $(usrow "$(med "$wh.$e.$n.$p")" "$rows") | $(mib "$(med "$wh.$e.$n.$p" 2)") | $(med "$wh.$e.$n.$p" 4) | $(med "$wh.$e.$n.$p" 3) | $(all_of "$wh.$e.$n.$p" 5 | tr ' ' '\n' | sort -u | paste -sd/ -) | $(all_of "$wh.$e.$n.$p") |"
        done
      done
    done
  done
  if [ "$smallest" != "$largest" ]; then
    echo
    echo "Growth per row between $smallest and $largest rows (fixed costs cancel): bytes of peak RSS per row of the dimension, and µs per row:"
    echo
    echo "| warehouse | engine | init: bytes per row | init: µs per row | delta: bytes per dimension row | delta: µs per delta row |"
    echo "|---|---|---:|---:|---:|---:|"
    for wh in $whs; do
      for e in ${engines//,/ }; do
        echo "| $(wh_title "$wh") | $e | $(slope "$wh.$e" init 2 1024) | $(slope "$wh.$e" init 1 1e6) | $(slope "$wh.$e" delta 2 1024) | $(slope "$wh.$e" delta 1 1e7) |"
      done
    done
  fi
  echo
  echo "Engines compared row for row after the first delta at each size:"
  for wh in $whs; do
    for n in $sizes; do
      echo "- $(wh_title "$wh"), $n rows: $(if [ -f "$work/res/$wh.$n.diff" ]; then
        [ "$(cat "$work/res/$wh.$n.diff")" = 0 ] && echo "same dimension" || echo "**differ on $(cat "$work/res/$wh.$n.diff") rows**"
      else echo "not compared"; fi)"
    done
  done
  echo
  echo "Machine and build:"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc); memory: $(free -h | awk '/^Mem:/ { print "total " $2 ", available " $7 }')"
  echo "- load average at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- MariaDB InnoDB buffer pool: $DWL_MARIADB_BUFFER_POOL"
  echo "- $dw: $("$dw" --version 2>&1 | head -n 1); tree at commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$top" diff --quiet HEAD -- src plugins include 2>/dev/null || echo ' (src modified)')"
  echo "- total runtime: $(secs "$t_start" "$EPOCHREALTIME") s ($(for wh in $whs; do printf '%s %ss; ' "$wh" "${phase_s[$wh]}"; done | sed 's/; $//'))"
}

report >"$work/results.md"
cat "$work/results.md"
cp "$work/results.md" "$out"
say "written to $out"
[ "$servers_ok" -eq 1 ] || exit 1
