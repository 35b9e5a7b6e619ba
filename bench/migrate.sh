#!/usr/bin/env bash
# B5: dwload migrate against pgloader, a 1M-row table from SQLite to
# PostgreSQL; and the peak memory of the odbc source plugin reading a
# 1M-row table from each warehouse.  See bench/RESULTS.md, B5.
#
#   bench/migrate.sh [--rows N] [--runs N] [--out FILE] [--keep]
#
#   --rows N     rows of the table (default 1000000)
#   --runs N     repetitions, median reported (default 3, at least 3)
#   --out FILE   where the results go (default bench/results.b5.md)
#   --keep       keep the work directory
#   DWLOAD=PATH  another build of dwload (default src/dwload)
#
# B5  the same SQLite file (bench/gen.py full, plus a numeric(12,2)
#     column, id the primary key) migrated into an empty PostgreSQL
#     database by `dwload migrate` (which also verifies the copy) and by
#     `pgloader sqlite://... postgresql://...`; wall clock and peak RSS
#     (/usr/bin/time) of each client.  dwload is also run with --no-verify
#     for the copy alone.
# B5m peak RSS of `dwload run` of an append job whose source is the odbc
#     plugin reading the table from SQLite, PostgreSQL and MariaDB (into a
#     SQLite file): what reading a 1M-row result costs with each driver.
#
# Starts its own servers (tests/servers.sh) and stops them on exit.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dw=${DWLOAD:-$top/src/dwload}
out=$top/bench/results.b5.md
rows=1000000
runs=3
keep=0
tmo=900

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=${2:?}; shift ;;
    --runs) runs=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --keep) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
[ "$runs" -ge 3 ] || { echo "bench: --runs must be at least 3" >&2; exit 2; }
command -v pgloader >/dev/null || { echo "bench: pgloader is not installed (apt-get install pgloader)" >&2; exit 2; }
[ -x "$dw" ] || { echo "bench: no dwload at $dw (build it first)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/dwl_b5.XXXXXX")
# shellcheck source=../tests/servers.sh
. "$top/tests/servers.sh"
cleanup() {
  trap - EXIT INT TERM
  servers_stop >/dev/null 2>&1 || true
  if [ "$keep" -eq 1 ]; then echo "bench: work kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
servers_start >&2
export PGPASSWORD=$DWL_PG_PASSWORD MYSQL_PWD=$DWL_MARIADB_PASSWORD

psqlc() { timeout "$tmo" psql -X -q -v ON_ERROR_STOP=1 -h "$DWL_PG_HOST" -p "$DWL_PG_PORT" -U "$DWL_PG_USER" "$@"; }
mariac() { timeout "$tmo" mariadb --no-defaults --protocol=tcp -h "$DWL_MARIADB_HOST" -P "$DWL_MARIADB_PORT" -u "$DWL_MARIADB_USER" "$@"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed FILE CMD...: runs CMD under /usr/bin/time; appends "seconds kb" to FILE
timed() {
  local f=$1
  shift
  timeout "$tmo" /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" ||
    { echo "bench: failed: $*" >&2; tail -5 "$work/err" >&2; exit 1; }
  cat "$work/time" >>"$f"
}

echo "bench: generating $rows rows" >&2
python3 "$top/bench/gen.py" full "$work/full.csv" --rows "$rows"
tail -n +2 "$work/full.csv" |
  awk -F, -v OFS=, '{ print $1, $2, $3, $4, sprintf("%d.%02d", NR % 100000, NR % 100), $5 }' >"$work/big.csv"
sqlite3 "$work/src.db" "CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT NOT NULL, address TEXT, phone TEXT,
                        amount NUMERIC(12,2), lmd TIMESTAMP)" ".mode csv" ".import $work/big.csv big"
src="Driver=SQLite3;Database=$work/src.db"
pg() { echo "Driver=PostgreSQL Unicode;Server=$DWL_PG_HOST;Port=$DWL_PG_PORT;Database=$1;Uid=$DWL_PG_USER;Pwd=\${DWL_PG_PASSWORD}"; }
fresh_pg() { psqlc -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; psqlc -d postgres -c "CHECKPOINT"; }

: >"$work/dw" ; : >"$work/dwnv" ; : >"$work/pgl"
for r in $(seq 1 "$runs"); do
  echo "bench: B5 run $r" >&2
  fresh_pg b5_dwload
  timed "$work/dw" "$dw" -q migrate --from "$src" --to "$(pg b5_dwload)" --table big
  tail -1 "$work/out" | grep -q '"status":"ok","tables":1,"copied":'"$rows"',"rows":'"$rows"',"verified":1' ||
    { echo "bench: dwload did not migrate and verify every row: $(tail -1 "$work/out")" >&2; exit 1; }
  fresh_pg b5_dwload
  timed "$work/dwnv" "$dw" -q migrate --no-verify --from "$src" --to "$(pg b5_dwload)" --table big
  fresh_pg b5_pgloader
  # pgloader takes the password from PGPASSWORD, so none is on its command line.
  timed "$work/pgl" pgloader --no-ssl-cert-verification "sqlite://$work/src.db" \
    "postgresql://$DWL_PG_USER@$DWL_PG_HOST:$DWL_PG_PORT/b5_pgloader"
  n=$(psqlc -d b5_pgloader -A -t -c "SELECT count(*) FROM big")
  [ "$n" = "$rows" ] || { echo "bench: pgloader loaded $n rows" >&2; exit 1; }
done
types_dw=$(psqlc -d b5_dwload -A -t -c "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'big'::regclass AND attnum > 0")
types_pgl=$(psqlc -d b5_pgloader -A -t -c "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'big'::regclass AND attnum > 0")

# B5m: the table on each warehouse, read by the odbc plugin.
echo "bench: B5m" >&2
mariac -e "DROP DATABASE IF EXISTS b5; CREATE DATABASE b5 CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
maria="Driver=MariaDB Unicode;Server=$DWL_MARIADB_HOST;Port=$DWL_MARIADB_PORT;Database=b5;User=$DWL_MARIADB_USER;Password=\${DWL_MARIADB_PASSWORD}"
timeout "$tmo" "$dw" -q migrate --from "$src" --to "$maria" --table big --no-verify >/dev/null
: >"$work/m_sqlite" ; : >"$work/m_postgresql" ; : >"$work/m_mariadb"
for r in $(seq 1 "$runs"); do
  for wh in sqlite postgresql mariadb; do
    case $wh in
      sqlite) conn=$src ;;
      postgresql) conn=$(pg b5_dwload) ;;
      mariadb) conn=$maria ;;
    esac
    rm -f "$work/sink.db"
    cat >"$work/read.yaml" <<EOF
version: 1
job: b5m
source:
  plugin: odbc
  connection: "$conn"
  table: big
target:
  connection: "Driver=SQLite3;Database=$work/sink.db"
  table: big
load:
  mode: append
EOF
    timed "$work/m_$wh" "$dw" -q run "$work/read.yaml"
    tail -1 "$work/out" | grep -q "\"read\":$rows" || { echo "bench: B5m $wh: $(tail -1 "$work/out")" >&2; exit 1; }
  done
done

med() { cut -d' ' -f"$2" "$work/$1" | median; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
{
  echo "# B5: dwload migrate vs pgloader ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "bench/migrate.sh --rows $rows --runs $runs; medians; wall clock and peak RSS of the client process."
  echo
  echo "| what | wall (s) | peak RSS (MiB) |"
  echo "|---|---:|---:|"
  echo "| dwload migrate (copy + verification) | $(med dw 1) | $(mb "$(med dw 2)") |"
  echo "| dwload migrate --no-verify | $(med dwnv 1) | $(mb "$(med dwnv 2)") |"
  echo "| pgloader | $(med pgl 1) | $(mb "$(med pgl 2)") |"
  echo
  echo "ratios: time dwload/pgloader $(awk -v a="$(med dw 1)" -v b="$(med pgl 1)" 'BEGIN { printf "%.2f", a / b }'), memory dwload/pgloader $(awk -v a="$(med dw 2)" -v b="$(med pgl 2)" 'BEGIN { printf "%.3f", a / b }')"
  echo
  echo "column types, dwload: $types_dw"
  echo
  echo "column types, pgloader: $types_pgl"
  echo
  echo "B5m: peak RSS of \`dwload run\` reading the $rows-row table through the odbc plugin (append into a SQLite file):"
  echo
  echo "| source | wall (s) | peak RSS (MiB) |"
  echo "|---|---:|---:|"
  for wh in sqlite postgresql mariadb; do echo "| $wh | $(med "m_$wh" 1) | $(mb "$(med "m_$wh" 2)") |"; done
  echo
  echo "Every run (seconds, KiB):"
  for f in dw dwnv pgl m_sqlite m_postgresql m_mariadb; do echo "- $f: $(tr '\n' ';' <"$work/$f")"; done
  echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
