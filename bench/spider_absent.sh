#!/usr/bin/env bash
# deletes: absent on a MariaDB Spider table (issue 18), upsert and scd2,
# both engines.  A dimension of KEYS keys partitioned by KEY (id) over two
# shards, loaded once; then a full extract of it in which a hundredth of
# the keys changed (a later lmd), a hundredth are gone (deleted by
# absence) and the rest are as loaded (not past the checkpoint: they only
# say their key exists), as bench/absent.sh's on a single server.
# Each run starts from a copy of the loaded dimension on each shard and
# the head's checkpoint; the engines (and builds) alternate; medians of
# RUNS runs.  Every run of a mode must give the same counts and the same
# rows (valid_to of the versions absence closes aside: the run's clock).
# With DWLOAD_OLD, that build's pushdown runs too (a reference for a
# change to pushdown).
#   usage: [DWLOAD_OLD=/old/src/dwload] bench/spider_absent.sh [KEYS] [RUNS]
#   e.g.   bench/spider_absent.sh 100000 3
# Starts its own throwaway servers (tests/servers.sh, DWL_SPIDER=1).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
old=${DWLOAD_OLD:-}
keys=${1:-100000}
runs=${2:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/dwl_bench_spabsent.XXXXXX")
db=dwl_spabsent
# shellcheck disable=SC2034 # read by bench/lib.sh
tmo=3600
mkdir -p "$work/log" "$work/res" "$work/jobs"
[ -x "$dw" ] || { echo "bench: no dwload at $dw (build it first)" >&2; exit 1; }
[ -z "$old" ] || [ -x "$old" ] || { echo "bench: no dwload at $old (DWLOAD_OLD)" >&2; exit 1; }
export DWL_SPIDER=1
# shellcheck source=bench/lib.sh
. "$top/bench/lib.sh"
bench_begin mariadb
[ -n "${DWL_SPIDER_PORT:-}" ] || die "the Spider servers did not start (Debian: mariadb-plugin-spider)"

spider_db "$db"

python3 - "$keys" "$work" <<'EOF'
import sys
keys, w = int(sys.argv[1]), sys.argv[2]
with open(w + "/full.csv", "w") as f, open(w + "/extract.csv", "w") as g:
    f.write("id,name,lmd\n")
    g.write("id,name,lmd\n")
    for k in range(keys):
        f.write("%d,n%d,2024-01-01 00:00:00\n" % (k, k))
        if k % 100 == 1:
            continue
        if k % 100 == 0:
            g.write("%d,m%d,2024-01-02 00:00:00\n" % (k, k))
        else:
            g.write("%d,n%d,2024-01-01 00:00:00\n" % (k, k))
EOF

# job FILE NAME TABLE MODE ENGINE: job NAME, a csv job on ${FEED} into the
# head's TABLE, as $work/jobs/FILE.yaml
job() {
  cat >"$work/jobs/$1.yaml" <<EOF
version: 1
job: $2
source:
  plugin: csv
  path: \${FEED}
  types: {id: integer, name: varchar(20)}
target:
  connection: "Driver=MariaDB Unicode;Server=\${DWL_SPIDER_HOST};Port=\${DWL_SPIDER_PORT};Database=$db;User=\${DWL_SPIDER_USER};Password=\${DWL_SPIDER_PASSWORD};InitStmt=SET SESSION spider_internal_xa = ON"
  table: $3
load:
  mode: $4
  key: [id]
  lmd: lmd
  deletes: absent
  engine: $5
EOF
}

# The layouts dwload gives these jobs' tables, the partition key in the
# primary key (dwload-job(5), DISTRIBUTED TARGETS).
cols() {
  if [ "$1" = upsert ]; then
    echo "id BIGINT NOT NULL, name VARCHAR(20), lmd DATETIME(6), PRIMARY KEY (id)"
  else
    echo "dim_id BIGINT NOT NULL, id BIGINT NOT NULL, name VARCHAR(20), lmd DATETIME(6), valid_from DATETIME(6),
          valid_to DATETIME(6), is_current BOOLEAN NOT NULL, is_deleted BOOLEAN NOT NULL,
          PRIMARY KEY (dim_id, id), KEY ${2}_key (id, is_current)"
  fi
}
spider_table() {
  local n
  for n in 1 2; do
    echo "CREATE TABLE $2 ($(cols "$1" "$2")) ENGINE=InnoDB;" | shard "$n" "$db"
  done
  echo "CREATE TABLE $2 ($(cols "$1" "$2")) ENGINE=SPIDER COMMENT='wrapper \"mysql\", table \"$2\"'
          PARTITION BY KEY (id) (PARTITION p1 COMMENT = 'srv \"s1\"', PARTITION p2 COMMENT = 'srv \"s2\"');" |
    headsql "$db"
}

# dwload_state behind Spider, so that the checkpoint commits with the rows:
# a first load into a local table of the head makes dwload's own, whose
# definition goes to shard 1 and, as a Spider table over it, to the head.
job seed seed seed upsert memory
printf 'id,name,lmd\n1,a,2024-01-01\n' >"$work/seed.csv"
FEED=$work/seed.csv bounded "$dw" run "$work/jobs/seed.yaml" >"$work/log/seed.out" 2>"$work/log/seed.err" ||
  die "the seed load failed: $(tail -n 3 "$work/log/seed.err")"
ddl=$(echo "SHOW CREATE TABLE dwload_state;" | headsql -r "$db" | sed '1s/^[^	]*	//')
echo "DROP TABLE dwload_state;" | headsql "$db"
echo "$ddl;" | shard 1 "$db"
echo "$(printf '%s' "$ddl" | sed 's/ENGINE=InnoDB/ENGINE=SPIDER/')
      COMMENT='wrapper \"mysql\", srv \"s1\", table \"dwload_state\"';" | headsql "$db"

# run BUILD JOB LOG: one timed run of the extract, from the loaded copy;
# its counts and rows to $work/res/LOG.check
run() {
  local t0 t1 n rc=0
  for n in 1 2; do
    echo "TRUNCATE TABLE $tbl; INSERT INTO $tbl SELECT * FROM ${tbl}_base; ANALYZE TABLE $tbl;" |
      shard "$n" "$db" >/dev/null
  done
  echo "UPDATE dwload_state SET checkpoint = '2024-01-01 00:00:00' WHERE job = '$tbl';" |
    headsql "$db"
  t0=$EPOCHREALTIME
  FEED=$work/extract.csv bounded "$1" run "$work/jobs/$2.yaml" >"$work/log/$3.out" 2>"$work/log/$3.err" || rc=$?
  t1=$EPOCHREALTIME
  [ "$rc" -eq 0 ] || die "dwload failed ($2, exit $rc): $(tail -n 3 "$work/log/$3.err")"
  record "$3" "$(secs "$t0" "$t1")"
  { tail -n 1 "$work/log/$3.out" | grep -o '"read":.*"unchanged":[0-9]*'
    echo "SELECT COUNT(*), SUM(CRC32(CONCAT_WS('|', id, name, lmd$vcols))) FROM $tbl;" |
      headsql "$db"; } >"$work/res/$3.check.$(wc -l <"$work/res/$3")"
}

for mode in upsert scd2; do
  tbl=sa_$mode
  vcols=""
  [ "$mode" = upsert ] || vcols=", valid_from, is_current, is_deleted"
  spider_table "$mode" "$tbl"
  # one job, one checkpoint: the engine is the job file's only difference
  job "$tbl" "$tbl" "$tbl" "$mode" memory
  job "${tbl}_pd" "$tbl" "$tbl" "$mode" pushdown
  say "$mode: loading $keys keys"
  FEED=$work/full.csv bounded "$dw" run "$work/jobs/$tbl.yaml" >"$work/log/$tbl.load.out" 2>"$work/log/$tbl.load.err" ||
    die "the initial load failed: $(tail -n 3 "$work/log/$tbl.load.err")"
  for n in 1 2; do
    echo "CREATE TABLE ${tbl}_base LIKE $tbl; INSERT INTO ${tbl}_base SELECT * FROM $tbl;" | shard "$n" "$db"
  done
  for i in $(seq 1 "$runs"); do
    run "$dw" "$tbl" "$mode.memory"
    run "$dw" "${tbl}_pd" "$mode.pushdown"
    [ -z "$old" ] || run "$old" "${tbl}_pd" "$mode.old"
    say "$mode run $i: memory $(tail -n 1 "$work/res/$mode.memory")s, pushdown $(tail -n 1 "$work/res/$mode.pushdown")s${old:+, reference pushdown $(tail -n 1 "$work/res/$mode.old")s}"
  done
  for c in "$work/res/$mode".*.check.*; do
    cmp -s "$c" "$work/res/$mode.memory.check.1" || die "$mode: $(basename "$c") differs from the memory engine's first run"
  done
done

echo "deletes: absent on a Spider table of $keys keys (a head and two shards on loopback, spider_internal_xa = ON), a full extract: 1% changed, 1% gone, 98% not past the checkpoint; medians of $runs runs, seconds"
echo
echo "| mode | memory | pushdown | pushdown / memory |${old:+ reference pushdown | pushdown / reference |}"
echo "|---|---:|---:|---:|${old:+---:|---:|}"
for mode in upsert scd2; do
  m=$(med "$mode.memory")
  p=$(med "$mode.pushdown")
  line="| $mode | $m | $p | $(div "$p" "$m") |"
  [ -z "$old" ] || line="$line $(med "$mode.old") | $(div "$p" "$(med "$mode.old")") |"
  echo "$line"
done
echo
for mode in upsert scd2; do
  for k in memory pushdown ${old:+old}; do
    echo "- $mode, $k: $(tr '\n' ' ' <"$work/res/$mode.$k")"
  done
done
echo "- counts: upsert $(head -n 1 "$work/res/upsert.memory.check.1"); scd2 $(head -n 1 "$work/res/scd2.memory.check.1")"
echo "- $dw: $("$dw" --version 2>&1 | head -n 1); tree at commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')${old:+; reference $old}"
