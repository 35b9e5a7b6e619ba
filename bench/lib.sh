# The helpers of bench/run and bench/scale.sh, which source this file (it
# is not run on its own): messages and bounds (say, die, bounded, secs,
# median, div); each warehouse's client and the SQL around the benchmark
# tables (pg, my, setup_wh, wh_*); the job files and the reference and
# floor scripts (write_*, instantiate); timed runs of dwload and of the
# references, and their results under $work/res (dw_run, ref_run, record,
# med, all_of).  They read the caller's settings (work, dw, db, tmo), set
# before it sources this file.
# shellcheck shell=bash disable=SC2154,SC2034 # settings from the caller; last_s, last_rss for it

say() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# bounded CMD...: CMD, killed after $tmo seconds (in the foreground process
# group, so a Ctrl-C reaches it)
bounded() { timeout --foreground -k 10 "$tmo" "$@"; }

# secs T0 T1: T1 - T0 to the millisecond
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# median: of the numbers on stdin (mean of the middle two for an even count)
median() {
  sort -g | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "n/a"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# div A B [FMT]: A / B
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { if (a == "n/a" || b == "n/a" || b == 0) print "n/a"; else printf f "\n", a / b }'; }

# ---- warehouses ------------------------------------------------------------

pg() {
  PGOPTIONS='-c client_min_messages=warning' bounded psql -X -q -v ON_ERROR_STOP=1 -h "$DWL_PG_HOST" -p "$DWL_PG_PORT" -U "$DWL_PG_USER" "$@"
}
my() {
  bounded mariadb --no-defaults --batch --skip-column-names -h "$DWL_MARIADB_HOST" -P "$DWL_MARIADB_PORT" \
    -u "$DWL_MARIADB_USER" "$@"
}
lite_file() { printf '%s/sqlite/%s.db\n' "$work" "$1"; }

# wh_sql WH [TABLE]: runs the SQL on stdin; tuples only, unaligned.  On
# SQLite every table lives in a file of its own, named after it.
wh_sql() {
  case $1 in
    postgresql) pg -At -d "$db" ;;
    mariadb) my "$db" ;;
    sqlite) bounded sqlite3 -bail "$(lite_file "$2")" ;;
  esac
}

wh_title() {
  case $1 in
    postgresql) echo PostgreSQL ;;
    mariadb) echo MariaDB ;;
    sqlite) echo SQLite ;;
  esac
}

# setup_wh WH: an empty benchmark database $db on WH
setup_wh() {
  case $1 in
    postgresql)
      # Autovacuum would wake on the freshly loaded tables in the middle
      # of later measurements; the benchmarks analyze the tables themselves.
      pg -At -d postgres <<SQL >/dev/null
ALTER SYSTEM SET autovacuum = off;
SELECT pg_reload_conf();
DROP DATABASE IF EXISTS $db;
CREATE DATABASE $db;
SQL
      ;;
    mariadb) echo "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db;" | my ;;
    sqlite) : ;;
  esac
}

# wh_drop WH TABLE
wh_drop() {
  case $1 in
    postgresql | mariadb) echo "DROP TABLE IF EXISTS $2;" | wh_sql "$1" ;;
    sqlite) rm -f "$(lite_file "$2")" "$(lite_file "$2")-journal" ;;
  esac
}

# wh_clear_state WH JOB: forgets the job (its checkpoint); SQLite files are
# fresh anyway
wh_clear_state() {
  local n=0
  case $1 in
    postgresql) n=$(echo "SELECT count(*) FROM pg_tables WHERE tablename = 'dwload_state';" | wh_sql "$1") ;;
    mariadb)
      n=$(echo "SELECT count(*) FROM information_schema.tables
                WHERE table_schema = DATABASE() AND table_name = 'dwload_state';" | wh_sql "$1")
      ;;
  esac
  [ "$n" -eq 0 ] || echo "DELETE FROM dwload_state WHERE job = '$2';" | wh_sql "$1"
}

# wh_snapshot WH TABLE BASE: keeps a copy of TABLE as BASE
wh_snapshot() {
  case $1 in
    postgresql)
      wh_sql "$1" <<SQL
DROP TABLE IF EXISTS $3;
CREATE TABLE $3 (LIKE $2);
INSERT INTO $3 SELECT * FROM $2;
SQL
      ;;
    mariadb)
      wh_sql "$1" <<SQL
DROP TABLE IF EXISTS $3;
CREATE TABLE $3 LIKE $2;
INSERT INTO $3 SELECT * FROM $2;
SQL
      ;;
    sqlite) cp "$(lite_file "$2")" "$(lite_file "$3")" ;;
  esac
}

# wh_restore WH BASE TABLE ORIG [JOB CHECKPOINT]: TABLE becomes a copy of
# BASE (a snapshot of dwload's table ORIG), with the indexes dwload made
# (primary key on the surrogate key, the key index over current versions),
# fresh statistics, and the job's checkpoint set back to the base's
wh_restore() {
  local wh=$1 base=$2 t=$3 orig=$4 job=${5:-} cp=${6:-} state=""
  [ -z "$job" ] || state="UPDATE dwload_state SET checkpoint = '$cp' WHERE job = '$job';"
  case $wh in
    postgresql)
      wh_sql "$wh" <<SQL
DROP TABLE IF EXISTS $t;
CREATE TABLE $t (LIKE $base);
INSERT INTO $t SELECT * FROM $base;
ALTER TABLE $t ADD PRIMARY KEY (dim_id);
CREATE INDEX ${t}_dwl_key ON $t (id) WHERE is_current = TRUE;
VACUUM ANALYZE $t;
$state
CHECKPOINT;
SQL
      ;;
    mariadb)
      wh_sql "$wh" <<SQL >/dev/null
DROP TABLE IF EXISTS $t;
CREATE TABLE $t LIKE $base;
INSERT INTO $t SELECT * FROM $base;
ANALYZE TABLE $t;
$state
SQL
      ;;
    sqlite)
      # The base file holds the job's state row as it was: nothing to reset.
      cp "$(lite_file "$base")" "$(lite_file "$t")"
      rm -f "$(lite_file "$t")-journal"
      # A copy for the reference: the table takes the reference's name.
      [ "$t" = "$orig" ] || echo "ALTER TABLE $orig RENAME TO $t;" | wh_sql "$wh" "$t"
      ;;
  esac
}

# wh_indexes WH TABLE: the table's index definitions, its name blanked out
wh_indexes() {
  case $1 in
    postgresql)
      echo "SELECT replace(indexdef, '$2', 'T') FROM pg_indexes WHERE tablename = '$2' ORDER BY 1;" | wh_sql "$1"
      ;;
    mariadb) echo "SHOW CREATE TABLE $2;" | wh_sql "$1" | sed "s/$2/T/g" ;;
    sqlite) echo "SELECT replace(sql, '$2', 'T') FROM sqlite_master ORDER BY 1;" | wh_sql "$1" "$2" ;;
  esac
}

# wh_diff WH A B: the number of rows (counted with multiplicity) on which
# tables A and B differ, over the columns both tools must agree on
wh_diff() {
  local cols="id, name, address, phone, valid_from, valid_to, is_current" b=$3 attach=""
  if [ "$1" = sqlite ]; then
    attach="ATTACH '$(lite_file "$3")' AS r;"
    b="r.$3"
  fi
  wh_sql "$1" "$2" <<SQL
$attach
SELECT (SELECT count(*) FROM (SELECT $cols, count(*) AS n FROM $2 GROUP BY $cols
                              EXCEPT SELECT $cols, count(*) AS n FROM $b GROUP BY $cols) AS x)
     + (SELECT count(*) FROM (SELECT $cols, count(*) AS n FROM $b GROUP BY $cols
                              EXCEPT SELECT $cols, count(*) AS n FROM $2 GROUP BY $cols) AS y);
SQL
}

# wh_coltypes WH TABLE: the types of the CSV's columns in TABLE
wh_coltypes() {
  local names="'id', 'name', 'address', 'phone', 'lmd'"
  case $1 in
    postgresql)
      echo "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
            WHERE attrelid = '$2'::regclass AND attname IN ($names) ORDER BY attname;" | wh_sql "$1"
      ;;
    mariadb)
      echo "SELECT CONCAT(column_name, ' ', column_type, ' ', IFNULL(collation_name, '')) FROM information_schema.columns
            WHERE table_schema = DATABASE() AND table_name = '$2' AND column_name IN ($names) ORDER BY column_name;" |
        wh_sql "$1"
      ;;
    sqlite)
      echo "SELECT name || ' ' || type FROM pragma_table_info('$2') WHERE name IN ($names) ORDER BY name;" |
        wh_sql "$1" "$2"
      ;;
  esac
}

# wh_checkpoint WH TABLE JOB
wh_checkpoint() {
  echo "SELECT checkpoint FROM dwload_state WHERE job = '$3';" | wh_sql "$1" "$2"
}

# wh_rowcount WH TABLE
wh_rowcount() { echo "SELECT count(*) FROM $2;" | wh_sql "$1" "$2"; }

# ---- job files and reference SQL --------------------------------------------

# write_job WH JOB TABLE [VARIANT]: the job file $work/jobs/WH.JOB[.VARIANT].yaml
# (passwords stay in the environment); VARIANT scan sets lookup: scan,
# pushdown sets engine: pushdown
# wh_conn WH TABLE: a job's target connection to WH's database $db (on
# SQLite, TABLE's file); passwords stay in the environment
wh_conn() {
  # shellcheck disable=SC2016 # ${...} is for dwload to expand
  case $1 in
    postgresql)
      echo 'Driver=PostgreSQL Unicode;Server=${DWL_PG_HOST};Port=${DWL_PG_PORT};Database='"$db"';Uid=${DWL_PG_USER};Pwd=${DWL_PG_PASSWORD}'
      ;;
    mariadb)
      echo 'Driver=MariaDB Unicode;Server=${DWL_MARIADB_HOST};Port=${DWL_MARIADB_PORT};Database='"$db"';User=${DWL_MARIADB_USER};Password=${DWL_MARIADB_PASSWORD}'
      ;;
    sqlite) echo "Driver=SQLite3;Database=$(lite_file "$2")" ;;
  esac
}

write_job() {
  local conn file="$work/jobs/$1.$2${4:+.$4}.yaml"
  conn=$(wh_conn "$1" "$3")
  cat >"$file" <<YAML
version: 1
job: $2
source:
  plugin: csv
  path: \${FEED}
  types: {id: integer}
target:
  connection: "$conn"
  table: $3
load:
  mode: scd2
  key: [id]
  lmd: lmd
  type1: [name]
YAML
  case ${4:-} in
    '') ;;
    pushdown) echo "  engine: pushdown" >>"$file" ;;
    *) echo "  lookup: $4" >>"$file" ;;
  esac
}

# B1's reference: a table of the CSV's columns, typed as dwload types them,
# filled by the warehouse's bulk loader.  @CSV@ is the file.
write_b1_ref() {
  cat >"$work/sql/postgresql.b1_ref.sql" <<'SQL'
CREATE TABLE b1_ref (id BIGINT, name TEXT, address TEXT, phone TEXT, lmd TIMESTAMP(6));
\copy b1_ref FROM '@CSV@' WITH (FORMAT csv, HEADER true)
SQL
  cat >"$work/sql/mariadb.b1_ref.sql" <<'SQL'
CREATE TABLE b1_ref (id BIGINT, name LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  address LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  phone LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin, lmd DATETIME(6));
LOAD DATA LOCAL INFILE '@CSV@' INTO TABLE b1_ref
  FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\n' IGNORE 1 LINES;
SQL
  cat >"$work/sql/sqlite.b1_ref.sql" <<'SQL'
.bail on
CREATE TABLE b1_ref (id INTEGER, name TEXT, address TEXT, phone TEXT, lmd TIMESTAMP);
.import --csv --skip 1 @CSV@ b1_ref
SQL
}

# B2's reference: what dbt's snapshot does on PostgreSQL, for this job's
# columns (key id, type 2 address and phone, type 1 name): stage the delta,
# a temporary table of inserts, updates (and type 1 changes) from a join of
# the staged rows with the current versions, then one UPDATE to close and
# one INSERT ... SELECT to open, in one transaction.  @DIM@ is the
# dimension, @CSV@ the delta.  Like a dbt snapshot it takes one row per key
# (this delta has one).
write_b2_ref() {
  cat >"$work/sql/postgresql.b2_ref.sql" <<'SQL'
BEGIN;
CREATE TEMPORARY TABLE stage (id BIGINT, name TEXT, address TEXT, phone TEXT, lmd TIMESTAMP(6)) ON COMMIT DROP;
\copy stage FROM '@CSV@' WITH (FORMAT csv, HEADER true)
CREATE TEMPORARY TABLE snapshot_staging ON COMMIT DROP AS
  SELECT 'insert' AS change_type, s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s LEFT JOIN @DIM@ d ON d.id = s.id AND d.is_current
   WHERE d.id IS NULL OR d.address IS DISTINCT FROM s.address OR d.phone IS DISTINCT FROM s.phone
  UNION ALL
  SELECT 'update', s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s JOIN @DIM@ d ON d.id = s.id AND d.is_current
   WHERE d.address IS DISTINCT FROM s.address OR d.phone IS DISTINCT FROM s.phone
  UNION ALL
  SELECT 'type1', s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s JOIN @DIM@ d ON d.id = s.id AND d.is_current
   WHERE d.address IS NOT DISTINCT FROM s.address AND d.phone IS NOT DISTINCT FROM s.phone
     AND d.name IS DISTINCT FROM s.name;
UPDATE @DIM@ d SET valid_to = s.lmd, is_current = FALSE
  FROM snapshot_staging s
 WHERE s.change_type = 'update' AND d.id = s.id AND d.is_current;
UPDATE @DIM@ d SET name = s.name
  FROM snapshot_staging s
 WHERE s.change_type = 'type1' AND d.id = s.id AND d.is_current;
INSERT INTO @DIM@ (dim_id, id, name, address, phone, lmd, valid_from, valid_to, is_current, is_deleted)
SELECT m.max_id + row_number() OVER (ORDER BY s.id), s.id, s.name, s.address, s.phone, s.lmd, s.lmd, NULL, TRUE, FALSE
  FROM snapshot_staging s CROSS JOIN (SELECT coalesce(max(dim_id), 0) AS max_id FROM @DIM@) m
 WHERE s.change_type = 'insert';
COMMIT;
SQL
  cat >"$work/sql/mariadb.b2_ref.sql" <<'SQL'
START TRANSACTION;
-- The dimension's own column types: <=> refuses to compare across collations.
CREATE TEMPORARY TABLE stage (KEY (id)) AS SELECT id, name, address, phone, lmd FROM @DIM@ WHERE 1 = 0;
LOAD DATA LOCAL INFILE '@CSV@' INTO TABLE stage
  FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' LINES TERMINATED BY '\n' IGNORE 1 LINES;
CREATE TEMPORARY TABLE snapshot_staging (KEY (id)) AS
  SELECT 'insert' AS change_type, s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s LEFT JOIN @DIM@ d ON d.id = s.id AND d.is_current = 1
   WHERE d.id IS NULL OR NOT (d.address <=> s.address) OR NOT (d.phone <=> s.phone)
  UNION ALL
  SELECT 'update', s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s JOIN @DIM@ d ON d.id = s.id AND d.is_current = 1
   WHERE NOT (d.address <=> s.address) OR NOT (d.phone <=> s.phone)
  UNION ALL
  SELECT 'type1', s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s JOIN @DIM@ d ON d.id = s.id AND d.is_current = 1
   WHERE d.address <=> s.address AND d.phone <=> s.phone AND NOT (d.name <=> s.name);
UPDATE @DIM@ d JOIN snapshot_staging s ON d.id = s.id AND d.is_current = 1
   SET d.valid_to = s.lmd, d.is_current = 0
 WHERE s.change_type = 'update';
UPDATE @DIM@ d JOIN snapshot_staging s ON d.id = s.id AND d.is_current = 1
   SET d.name = s.name
 WHERE s.change_type = 'type1';
INSERT INTO @DIM@ (dim_id, id, name, address, phone, lmd, valid_from, valid_to, is_current, is_deleted)
SELECT m.max_id + ROW_NUMBER() OVER (ORDER BY s.id), s.id, s.name, s.address, s.phone, s.lmd, s.lmd, NULL, 1, 0
  FROM snapshot_staging s CROSS JOIN (SELECT COALESCE(MAX(dim_id), 0) AS max_id FROM @DIM@) m
 WHERE s.change_type = 'insert';
COMMIT;
SQL
  cat >"$work/sql/sqlite.b2_ref.sql" <<'SQL'
.bail on
BEGIN;
CREATE TEMPORARY TABLE stage (id INTEGER, name TEXT, address TEXT, phone TEXT, lmd TIMESTAMP);
.import --csv --skip 1 @CSV@ stage
CREATE TEMPORARY TABLE snapshot_staging AS
  SELECT 'insert' AS change_type, s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s LEFT JOIN @DIM@ d ON d.id = s.id AND d.is_current = 1
   WHERE d.id IS NULL OR d.address IS DISTINCT FROM s.address OR d.phone IS DISTINCT FROM s.phone
  UNION ALL
  SELECT 'update', s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s JOIN @DIM@ d ON d.id = s.id AND d.is_current = 1
   WHERE d.address IS DISTINCT FROM s.address OR d.phone IS DISTINCT FROM s.phone
  UNION ALL
  SELECT 'type1', s.id, s.name, s.address, s.phone, s.lmd
    FROM stage s JOIN @DIM@ d ON d.id = s.id AND d.is_current = 1
   WHERE d.address IS NOT DISTINCT FROM s.address AND d.phone IS NOT DISTINCT FROM s.phone
     AND d.name IS DISTINCT FROM s.name;
UPDATE @DIM@ AS d SET valid_to = s.lmd, is_current = 0
  FROM snapshot_staging s
 WHERE s.change_type = 'update' AND d.id = s.id AND d.is_current = 1;
UPDATE @DIM@ AS d SET name = s.name
  FROM snapshot_staging s
 WHERE s.change_type = 'type1' AND d.id = s.id AND d.is_current = 1;
INSERT INTO @DIM@ (dim_id, id, name, address, phone, lmd, valid_from, valid_to, is_current, is_deleted)
SELECT m.max_id + row_number() OVER (ORDER BY s.id), s.id, s.name, s.address, s.phone, s.lmd, s.lmd, NULL, 1, 0
  FROM snapshot_staging s CROSS JOIN (SELECT coalesce(max(dim_id), 0) AS max_id FROM @DIM@) m
 WHERE s.change_type = 'insert';
COMMIT;
SQL
}

# The floors (see the top).  B1's: dwload's table shape (@DIM@ is
# dwload's table, whose definition and indexes it copies; SQLite's is
# written per run, from the schema dwload made) filled by the bulk loader
# with the rows B1 leaves.  B2's: the closes (@CLOSE@: id, valid_to) and
# the new versions (@NEW@) staged and applied to @DIM@.
dimcols="dim_id, id, name, address, phone, lmd, valid_from, valid_to, is_current, is_deleted"
write_floors() {
  cat >"$work/sql/postgresql.b1_floor.sql" <<SQL
CREATE TABLE b1_floor (LIKE @DIM@ INCLUDING ALL);
\copy b1_floor ($dimcols) FROM '@CSV@' WITH (FORMAT csv)
SQL
  cat >"$work/sql/mariadb.b1_floor.sql" <<SQL
CREATE TABLE b1_floor LIKE @DIM@;
LOAD DATA LOCAL INFILE '@CSV@' INTO TABLE b1_floor
  FIELDS TERMINATED BY ',' LINES TERMINATED BY '\n' ($dimcols);
SQL
  cat >"$work/sql/postgresql.b2_floor.sql" <<SQL
BEGIN;
CREATE TEMPORARY TABLE fl_close (id BIGINT, valid_to TIMESTAMP(6)) ON COMMIT DROP;
\copy fl_close FROM '@CLOSE@' WITH (FORMAT csv)
ANALYZE fl_close;
CREATE TEMPORARY TABLE fl_new (LIKE @DIM@) ON COMMIT DROP;
\copy fl_new ($dimcols) FROM '@NEW@' WITH (FORMAT csv)
UPDATE @DIM@ d SET valid_to = c.valid_to, is_current = FALSE
  FROM fl_close c WHERE d.id = c.id AND d.is_current;
INSERT INTO @DIM@ ($dimcols) SELECT $dimcols FROM fl_new;
COMMIT;
SQL
  cat >"$work/sql/mariadb.b2_floor.sql" <<SQL
START TRANSACTION;
CREATE TEMPORARY TABLE fl_close (id BIGINT, valid_to DATETIME(6), KEY (id));
LOAD DATA LOCAL INFILE '@CLOSE@' INTO TABLE fl_close FIELDS TERMINATED BY ',' LINES TERMINATED BY '\n';
CREATE TEMPORARY TABLE fl_new AS SELECT $dimcols FROM @DIM@ WHERE 1 = 0;
LOAD DATA LOCAL INFILE '@NEW@' INTO TABLE fl_new FIELDS TERMINATED BY ',' LINES TERMINATED BY '\n' ($dimcols);
UPDATE @DIM@ d JOIN fl_close c ON d.id = c.id AND d.is_current = 1
   SET d.valid_to = c.valid_to, d.is_current = 0;
INSERT INTO @DIM@ ($dimcols) SELECT $dimcols FROM fl_new;
COMMIT;
SQL
  # .import reads an empty field as '': NULLIF puts the NULL back.
  cat >"$work/sql/sqlite.b2_floor.sql" <<SQL
.bail on
BEGIN;
CREATE TEMPORARY TABLE fl_close (id INTEGER, valid_to TIMESTAMP);
.import --csv @CLOSE@ fl_close
CREATE TEMPORARY TABLE fl_new AS SELECT $dimcols FROM @DIM@ WHERE 0;
.import --csv @NEW@ fl_new
UPDATE @DIM@ AS d SET valid_to = c.valid_to, is_current = 0
  FROM fl_close c WHERE d.id = c.id AND d.is_current = 1;
INSERT INTO @DIM@ ($dimcols)
SELECT dim_id, id, name, address, phone, lmd, valid_from, NULLIF(valid_to, ''), is_current, is_deleted FROM fl_new;
COMMIT;
SQL
}

# write_b1_floor_sqlite: SQLite's B1 floor, with the schema of dwload's
# b1_dim (it lives in a file of its own)
write_b1_floor_sqlite() {
  {
    echo ".bail on"
    echo ".schema b1_dim" | wh_sql sqlite b1_dim | sed 's/b1_dim/b1_floor/g'
    echo ".import --csv @CSV@ b1_floor"
  } >"$work/sql/sqlite.b1_floor.sql"
}

# floor_data WH NAME: the floors' data file NAME for WH (NULL spelled for
# its bulk loader)
floor_data() {
  case $1 in
    mariadb) echo "$work/data/$2.mdb" ;;
    *) echo "$work/data/$2.csv" ;;
  esac
}

# instantiate WH NAME DIM CSV [CLOSE NEW]: the reference script with its
# placeholders filled, as a file
instantiate() {
  local out="$work/sql/$1.$2.run.sql"
  sed -e "s|@DIM@|$3|g" -e "s|@CSV@|$4|g" -e "s|@CLOSE@|${5:-}|g" -e "s|@NEW@|${6:-}|g" \
    "$work/sql/$1.$2.sql" >"$out"
  echo "$out"
}

# ---- timed runs ---------------------------------------------------------------

last_s=""
last_rss=""

# dw_run WH JOBFILE FEED LABEL: one dwload run of $work/jobs/WH.JOBFILE.yaml,
# timed; sets last_s and last_rss (KiB) and keeps its summary and log as
# $work/log/LABEL.*
dw_run() {
  local log="$work/log/$4" t0 t1 rc=0
  t0=$EPOCHREALTIME
  FEED=$3 /usr/bin/time -f '%M' -o "$log.rss" \
    timeout --foreground -k 10 "$tmo" "$dw" run "$work/jobs/$1.$2.yaml" >"$log.out" 2>"$log.err" || rc=$?
  t1=$EPOCHREALTIME
  if [ "$rc" -ne 0 ] || ! grep -q '"status":"ok"' "$log.out"; then
    cat "$log.err" "$log.out" >&2
    die "dwload failed ($1, job $2, exit status $rc)"
  fi
  last_s=$(secs "$t0" "$t1")
  last_rss=$(tail -n 1 "$log.rss")
}

# summary_field LABEL FIELD: a count from a run's JSON summary
summary_field() {
  tail -n 1 "$work/log/$1.out" | sed -n "s/.*\"$2\":\\([0-9]*\\).*/\\1/p"
}

# ref_run WH SCRIPT LABEL [SQLITE_TABLE]: the reference, one client
# invocation, timed; sets last_s
ref_run() {
  local log="$work/log/$3" t0 t1 rc=0
  t0=$EPOCHREALTIME
  case $1 in
    postgresql) pg -d "$db" -f "$2" >"$log.out" 2>"$log.err" || rc=$? ;;
    mariadb) my --local-infile=1 "$db" <"$2" >"$log.out" 2>"$log.err" || rc=$? ;;
    sqlite) bounded sqlite3 "$(lite_file "$4")" <"$2" >"$log.out" 2>"$log.err" || rc=$? ;;
  esac
  t1=$EPOCHREALTIME
  [ ! -s "$log.err" ] || cat "$log.err" >&2
  [ "$rc" -eq 0 ] || die "reference failed ($1, $2, exit status $rc)"
  last_s=$(secs "$t0" "$t1")
}

# record KEY VALUE...: appends a line to $work/res/KEY
record() {
  local k=$1
  shift
  echo "$*" >>"$work/res/$k"
}
# med KEY [FIELD]: median of a field of $work/res/KEY
med() {
  if [ -f "$work/res/$1" ]; then
    cut -d' ' -f"${2:-1}" "$work/res/$1" | median
  else
    echo n/a
  fi
}
all_of() {
  if [ -f "$work/res/$1" ]; then
    cut -d' ' -f"${2:-1}" "$work/res/$1" | paste -sd' ' -
  else
    echo n/a
  fi
}

# bench_begin WAREHOUSES: for a script that compares builds itself (not
# bench/run): the SQLite folder under $work, the servers WAREHOUSES (a
# comma-separated list) need, started (tests/servers.sh), and on exit
# stopped and $work removed
bench_begin() {
  # shellcheck source=tests/servers.sh
  . "$top/tests/servers.sh"
  trap 'servers_stop >/dev/null 2>&1 || :; rm -rf "$work"' EXIT
  mkdir -p "$work/sqlite"
  case ",$1," in *,postgresql,* | *,mariadb,*) servers_start >&2 ;; esac
  export PGPASSWORD=${DWL_PG_PASSWORD:-} MYSQL_PWD=${DWL_MARIADB_PASSWORD:-}
}

# The Spider servers (tests/servers.sh with DWL_SPIDER=1; bench/spider.sh,
# bench/spider_absent.sh).  headsql SQL...: the head; shard N SQL...:
# shard N
headsql() {
  bounded mariadb --no-defaults --batch --skip-column-names -h "$DWL_SPIDER_HOST" -P "$DWL_SPIDER_PORT" \
    -u "$DWL_SPIDER_USER" "$@"
}
shard() {
  local h p
  eval "h=\$DWL_SPIDER_SHARD$1_HOST p=\$DWL_SPIDER_SHARD$1_PORT"
  shift
  bounded mariadb --no-defaults --batch --skip-column-names -h "$h" -P "$p" -u "$DWL_SPIDER_USER" "$@"
}
# spider_db DB: database DB on the head and each shard, and the head's
# SERVERs s1 and s2 for the shards' copies
spider_db() {
  local n h p
  echo "CREATE DATABASE $1;" | headsql
  for n in 1 2; do
    echo "CREATE DATABASE $1;" | shard "$n"
    eval "h=\$DWL_SPIDER_SHARD${n}_HOST p=\$DWL_SPIDER_SHARD${n}_PORT"
    echo "CREATE SERVER s$n FOREIGN DATA WRAPPER mysql OPTIONS (HOST '$h', PORT $p, USER '$DWL_SPIDER_USER',
            PASSWORD '$DWL_SPIDER_PASSWORD', DATABASE '$1');" | headsql
  done
}
