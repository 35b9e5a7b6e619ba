#!/usr/bin/env bash
# B1, B2 and B3 of bench/run on a MariaDB Spider head (a dimension that is
# a Spider table partitioned by KEY (id) over two shard servers), beside
# the same on a single MariaDB server, in one run: the issue 18 figures
# for a distributed target.
#
#   bench/spider.sh [--quick] [--runs N] [--out FILE] [--keep] [--ref PATH]
#
#   --quick      100k rows instead of 1M (the B3 dimension is a tenth)
#   --runs N     repetitions per measurement, median reported (default 3)
#   --out FILE   where the results go (default bench/results.spider.md)
#   --keep       keep the work directory (data, job files, logs)
#   --ref PATH   also run this build of dwload (an earlier commit's) on
#                Spider beside each B1 and B2 run (both engines), for the
#                ratio of the two side by side (B1 then runs N times)
#   DWLOAD=PATH  benchmark another build of dwload (default src/dwload)
#
# Both targets load the same extract with dwload (B1), then take the same
# 10k-row delta (bench/gen.py: 60% changed, 30% new keys, 10% no-op) with
# the memory engine and with load.engine: pushdown (B2), into the full
# dimension and into one a tenth of its size (B3 = t(full) / t(tenth)).
# Every B2 run starts from the same dimension: on Spider each shard's part
# is restored from a copy on that shard, and the head's checkpoint reset.
# Every B2 result is compared with the single server's, row for row.
# The Spider head runs dwload's sessions with spider_internal_xa = ON (the
# connection's InitStmt), as a Spider target needs (dwload-job(5),
# SHARDED AND FOREIGN TARGETS); its table has the layout that section
# documents: the partition key in the primary key.
#
# Starts its own throwaway servers (tests/servers.sh, with DWL_SPIDER=1):
# the single MariaDB with a 1G buffer pool, each shard with 512M
# (DWL_SPIDER_BUFFER_POOL), so that both hold their dimensions in memory.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
out=$top/bench/results.spider.md
gen=$top/bench/gen.py
rows=1000000
delta=10000
runs=3
keep=0
quick=0
ref=
# shellcheck disable=SC2034 # read by bench/lib.sh
tmo=900          # seconds: the bound on any single command (bench/lib.sh's bounded)
db=dwl_bench

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --runs) [ $# -ge 2 ] || { usage >&2; exit 2; }; runs=$2; shift ;;
    --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
    --keep) keep=1 ;;
    --ref) [ $# -ge 2 ] || { usage >&2; exit 2; }; ref=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[ "$quick" -eq 0 ] || rows=100000
small=$((rows / 10))
[ -x "$dw" ] || { echo "bench: no dwload at $dw (build it first)" >&2; exit 1; }
[ -z "$ref" ] || [ -x "$ref" ] || { echo "bench: no dwload at $ref (--ref)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/dwl_benchspider.XXXXXX")
mkdir -p "$work/data" "$work/jobs" "$work/log" "$work/res" "$work/sql"
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
# shellcheck source=tests/servers.sh
. "$top/tests/servers.sh"

cleanup() {
  trap - EXIT INT TERM
  servers_stop >/dev/null 2>&1 || true
  if [ "$keep" -eq 1 ]; then say "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "generating data"
bounded python3 "$gen" full --rows "$rows" "$work/data/full_$rows.csv"
bounded python3 "$gen" full --rows "$small" "$work/data/full_$small.csv"
bounded python3 "$gen" delta --rows "$delta" --dim "$rows" "$work/data/delta_$rows.csv"
bounded python3 "$gen" delta --rows "$delta" --dim "$small" "$work/data/delta_$small.csv"

say "starting the servers"
export DWL_MARIADB_BUFFER_POOL=1G DWL_SPIDER=1 DWL_SPIDER_BUFFER_POOL=${DWL_SPIDER_BUFFER_POOL:-512M}
servers_start >&2 || true
case " $DWL_WAREHOUSES " in *" mariadb "*) ;; *) die "MariaDB did not start" ;; esac
[ -n "${DWL_SPIDER_PORT:-}" ] || die "the Spider servers did not start (Debian: mariadb-plugin-spider)"
export MYSQL_PWD=$DWL_MARIADB_PASSWORD
[ "$DWL_SPIDER_PASSWORD" = "$DWL_MARIADB_PASSWORD" ] || die "the Spider servers' password is not MariaDB's"

setup_wh mariadb
spider_db "$db"

# The columns dwload gives this job's table on MariaDB (bench/lib.sh's
# write_job), with the partition key in the primary key.
cols() {
  local text="LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"
  echo "dim_id BIGINT NOT NULL, id BIGINT NOT NULL, name $text, address $text, phone $text, lmd DATETIME(6),
        valid_from DATETIME(6), valid_to DATETIME(6), is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL,
        PRIMARY KEY (dim_id, id), KEY ${1}_dwl_key (id, is_current)"
}

# spider_table T: T on both shards, and the head's Spider table over them
spider_table() {
  local n
  for n in 1 2; do
    echo "DROP TABLE IF EXISTS $1; CREATE TABLE $1 ($(cols "$1")) ENGINE=InnoDB;" | shard "$n" "$db"
  done
  echo "DROP TABLE IF EXISTS $1; CREATE TABLE $1 ($(cols "$1")) ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"$1\"'
          PARTITION BY KEY (id) (PARTITION p1 COMMENT = 'srv \"s1\"', PARTITION p2 COMMENT = 'srv \"s2\"');" |
    headsql "$db"
}

# spider_restore BASE T JOB CHECKPOINT: each shard's part of T a copy of
# its BASE, the head's checkpoint of JOB set back
spider_restore() {
  local n
  for n in 1 2; do
    echo "TRUNCATE TABLE $2; INSERT INTO $2 SELECT * FROM $1; ANALYZE TABLE $2;" | shard "$n" "$db" >/dev/null
  done
  echo "UPDATE dwload_state SET checkpoint = '$4' WHERE job = '$3';" | headsql "$db"
}
spider_snapshot() {
  local n
  for n in 1 2; do
    echo "DROP TABLE IF EXISTS $2; CREATE TABLE $2 LIKE $1; INSERT INTO $2 SELECT * FROM $1;" | shard "$n" "$db"
  done
}

# spider_state: dwload_state behind Spider, so that the checkpoint commits
# with the rows (dwload-job(5), DISTRIBUTED TARGETS): dwload's columns
# (the single server's table, made by its first run) on shard 1, and a
# Spider table over it on the head
spider_state() {
  local ddl
  ddl=$(echo "SHOW CREATE TABLE dwload_state;" | my -r "$db" | sed '1s/^[^	]*	//')
  echo "$ddl;" | shard 1 "$db"
  echo "$(printf '%s' "$ddl" | sed 's/ENGINE=InnoDB/ENGINE=SPIDER/')
        COMMENT='wrapper \"mysql\", srv \"s1\", table \"dwload_state\"';" | headsql "$db"
}

# spider_empty T JOB: T emptied on both shards, JOB's checkpoint gone
spider_empty() {
  local n
  for n in 1 2; do
    echo "TRUNCATE TABLE $1;" | shard "$n" "$db"
  done
  echo "DELETE FROM dwload_state WHERE job = '$2';" | headsql "$db"
}

# jobs: write_job's MariaDB job, and the same on the head with XA on
jobs() {
  local job=$1 t=$2 v f
  for v in "" pushdown; do
    write_job mariadb "$job" "$t" $v
    f=$work/jobs/mariadb.$job${v:+.$v}.yaml
    # shellcheck disable=SC2016 # ${...} is for dwload to expand
    sed -e 's/DWL_MARIADB_/DWL_SPIDER_/g' \
        -e 's/\(connection: ".*\)"$/\1;InitStmt=SET SESSION spider_internal_xa = ON"/' \
        "$f" >"$work/jobs/spider.$job${v:+.$v}.yaml"
  done
}

# spider_ref_run JOB FEED LABEL KEY WHAT: JOB on FEED into the Spider
# table with the reference build (--ref), recorded under KEY
spider_ref_run() {
  local own=$dw
  dw=$ref
  dw_run spider "$1" "$2" "$3"
  dw=$own
  record "$4" "$last_s" "$last_rss"
  say "$5: Spider, reference dwload ${last_s}s"
}

# history SQL-CLIENT T: the table's rows but surrogate keys, sorted
history() {
  echo "SELECT id, name, address, phone, lmd, valid_from, valid_to, is_current, is_deleted FROM $2
        ORDER BY id, valid_from;" | "$1" "$db" | md5sum | cut -d' ' -f1
}

# bench_size N: B1 at N rows on both targets, then B2 (runs times each
# engine on each target)
bench_size() {
  local n=$1 job="sb_$1" t="sb_dim_$1" base="sb_base_$1" cp i v eng single spider
  jobs "$job" "$t"
  spider_table "$t"
  say "loading the $n-row dimension (B1): single MariaDB"
  dw_run mariadb "$job" "$work/data/full_$n.csv" "single.$job.b1"
  record "single.b1_$n" "$last_s" "$last_rss"
  say "single MariaDB: ${last_s}s"
  [ -n "$(echo "SHOW TABLES LIKE 'dwload_state';" | headsql "$db")" ] || spider_state
  # with --ref, B1 on Spider runs times for each build, alternating, from
  # an empty table and no checkpoint; this build's last load stays for B2
  for i in $(seq 1 "$([ -n "$ref" ] && echo "$runs" || echo 1)"); do
    if [ -n "$ref" ]; then
      spider_empty "$t" "$job"
      spider_ref_run "$job" "$work/data/full_$n.csv" "spiderref.$job.b1.$i" "spiderref.b1_$n" "B1 ($n rows) run $i"
      spider_empty "$t" "$job"
    fi
    say "loading the $n-row dimension (B1): Spider"
    dw_run spider "$job" "$work/data/full_$n.csv" "spider.$job.b1.$i"
    record "spider.b1_$n" "$last_s" "$last_rss"
    say "Spider: ${last_s}s"
  done
  single=$(history my "$t")
  spider=$(history headsql "$t")
  [ "$single" = "$spider" ] || die "B1 ($n rows): the Spider table differs from the single server's"
  cp=$(wh_checkpoint mariadb "$t" "$job")
  wh_snapshot mariadb "$t" "$base"
  spider_snapshot "$t" "$base"
  for i in $(seq 1 "$runs"); do
    for v in "" pushdown; do
      eng=${v:-memory}
      wh_restore mariadb "$base" "$t" "$t" "$job" "$cp"
      dw_run mariadb "$job${v:+.$v}" "$work/data/delta_$n.csv" "single.$job.$eng.$i"
      record "single.b2_$n.$eng" "$last_s" "$last_rss"
      say "B2 ($n rows) run $i, $eng: single MariaDB ${last_s}s"
      [ "$i" -gt 1 ] || single=$(history my "$t")
      spider_restore "$base" "$t" "$job" "$cp"
      dw_run spider "$job${v:+.$v}" "$work/data/delta_$n.csv" "spider.$job.$eng.$i"
      record "spider.b2_$n.$eng" "$last_s" "$last_rss"
      say "B2 ($n rows) run $i, $eng: Spider ${last_s}s"
      if [ "$i" -eq 1 ]; then
        spider=$(history headsql "$t")
        [ "$single" = "$spider" ] || die "B2 ($n rows, $eng): the Spider table differs from the single server's"
      fi
      if [ -n "$ref" ]; then
        spider_restore "$base" "$t" "$job" "$cp"
        spider_ref_run "$job${v:+.$v}" "$work/data/delta_$n.csv" "spiderref.$job.$eng.$i" "spiderref.b2_$n.$eng" \
          "B2 ($n rows) run $i, $eng"
        if [ "$i" -eq 1 ]; then
          spider=$(history headsql "$t")
          [ "$single" = "$spider" ] || die "B2 ($n rows, $eng, reference): the Spider table differs from the single server's"
        fi
      fi
    done
  done
  say "B2 ($n rows): the Spider tables matched the single server's, row for row"
}

t0=$EPOCHREALTIME
bench_size "$rows"
bench_size "$small"
total=$(secs "$t0" "$EPOCHREALTIME")

report() {
  local eng s1 sp
  echo "# dwload on a MariaDB Spider head beside a single MariaDB server"
  echo
  echo "bench/spider.sh$([ "$quick" -eq 0 ] || echo ' --quick') --runs $runs: $rows-row dimension, $small-row small dimension, $delta-row delta; medians of $runs runs; seconds, wall clock of the whole dwload process. Spider: a head and two shards on this machine (loopback), the dimension partitioned by KEY (id), spider_internal_xa = ON."
  echo
  echo "| bench | engine | single MariaDB | Spider | Spider / single |"
  echo "|---|---|---:|---:|---:|"
  s1=$(med "single.b1_$rows")
  sp=$(med "spider.b1_$rows")
  echo "| B1 initial load, $rows rows | memory (streamed) | $s1 | $sp | $(div "$sp" "$s1") |"
  for eng in memory pushdown; do
    s1=$(med "single.b2_$rows.$eng")
    sp=$(med "spider.b2_$rows.$eng")
    echo "| B2 $delta-row delta into $rows rows | $eng | $s1 | $sp | $(div "$sp" "$s1") |"
  done
  for eng in memory pushdown; do
    echo "| B3 t($rows) / t($small) (goal ≤ 1.3) | $eng | $(div "$(med "single.b2_$rows.$eng")" "$(med "single.b2_$small.$eng")") | $(div "$(med "spider.b2_$rows.$eng")" "$(med "spider.b2_$small.$eng")") | |"
  done
  if [ -n "$ref" ]; then
    echo
    echo "Beside the reference dwload ($ref: $("$ref" --version 2>&1 | head -n 1)), on Spider:"
    echo
    echo "| bench | engine | reference | this dwload | this / reference |"
    echo "|---|---|---:|---:|---:|"
    local n
    for n in "$rows" "$small"; do
      s1=$(med "spiderref.b1_$n")
      sp=$(med "spider.b1_$n")
      echo "| B1 initial load, $n rows | memory (streamed) | $s1 | $sp | $(div "$sp" "$s1") |"
      for eng in memory pushdown; do
        s1=$(med "spiderref.b2_$n.$eng")
        sp=$(med "spider.b2_$n.$eng")
        echo "| B2 $delta-row delta into $n rows | $eng | $s1 | $sp | $(div "$sp" "$s1") |"
      done
    done
  fi
  echo
  echo "Every run (seconds):"
  echo
  echo "| measurement | single MariaDB | Spider |"
  echo "|---|---|---|"
  for k in "b1_$rows" "b1_$small" "b2_$rows.memory" "b2_$rows.pushdown" "b2_$small.memory" "b2_$small.pushdown"; do
    echo "| $k | $(all_of "single.$k") | $(all_of "spider.$k") |"
  done
  if [ -n "$ref" ]; then
    for k in "b1_$rows" "b1_$small" "b2_$rows.memory" "b2_$rows.pushdown" "b2_$small.memory" "b2_$small.pushdown"; do
      echo "| $k, reference | | $(all_of "spiderref.$k") |"
    done
  fi
  echo
  echo "Peak RSS of dwload (KiB, medians): B2 $rows rows, memory engine: single $(med "single.b2_$rows.memory" 2), Spider $(med "spider.b2_$rows.memory" 2); pushdown: single $(med "single.b2_$rows.pushdown" 2), Spider $(med "spider.b2_$rows.pushdown" 2)."
  echo
  echo "Machine and versions:"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), nproc $(nproc)"
  echo "- MariaDB $(echo 'SELECT VERSION();' | my); Spider $(echo "SELECT PLUGIN_VERSION FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'SPIDER';" | headsql); buffer pools: single 1G, shards $DWL_SPIDER_BUFFER_POOL"
  echo "- $dw: $("$dw" --version 2>&1 | head -n 1), built $(date -u -r "$dw" '+%Y-%m-%d %H:%M UTC'); tree at commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$top" diff --quiet HEAD -- src plugins include 2>/dev/null || echo ' (src modified)')"
  echo "- total runtime of the measurements: $total s"
}
report | tee "$out"
say "written to $out"
