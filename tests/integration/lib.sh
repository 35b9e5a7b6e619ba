# Shared helpers for the integration tests: TAP output, running the real
# dwload binary, and reading the real warehouse back with its own command
# line client (sqlite3, psql, mariadb).  Each test script sources this,
# calls the helpers, and ends with done_testing.
#
# Environment (set by `make check`, or by hand):
#   DWLOAD      the dwload binary under test
#   TOP_SRCDIR  the source tree (test data lives under tests/data)
#   WAREHOUSE   sqlite (the default), postgresql or mariadb
#   DWL_ENGINE  set (pushdown): mkjob's scd2/upsert jobs name that
#               load.engine (make check's X.pushdown.*.wh tests)
#   DWL_PG_HOST, DWL_PG_PORT, DWL_PG_USER, DWL_PG_PASSWORD
#   DWL_MARIADB_HOST, DWL_MARIADB_PORT, DWL_MARIADB_USER, DWL_MARIADB_PASSWORD
#               the server of WAREHOUSE=postgresql / mariadb (tests/servers.sh
#               starts both; scripts/test does that).  Without them the
#               script is skipped.  Each script gets a database of its own,
#               dwl_<script>_<pid>, dropped when it ends.
#
# The warehouse, for the tests:
#   WH, WH_CONN     the SQLite file / the database's name, and the ODBC
#                   connection string for the job files
#   sql Q [DB]      the rows of Q, fields '|'-separated, NULL as empty
#   sqln Q [DB]     the same with NULL as <null>
#   tdump T [ORDER] the rows of table T, by ORDER (default: every column)
#   wh_dump         a fingerprint of every table's columns and rows
#   wh_tables, wh_columns T, table_exists T
#   nulls_first COL..., every_column T   ORDER BY lists, NULLs first
#   is_warehouse W..., skip_unless_warehouse W REASON, skip_tests N REASON
#
# Output is the same on every warehouse for the same data: psql's t and f
# are printed 1 and 0 (a text value that is exactly t or f too, alas);
# MariaDB's times of day with six digits of fraction (DATETIME(6)) as
# PostgreSQL prints them, 10:00:00.500000 as 10:00:00.5 and 10:00:00.000000
# as 10:00:00 (anywhere in a value); and MariaDB's session (this one only,
# not dwload's) takes || as concatenation and "x" as a name, as SQLite and
# PostgreSQL do (PIPES_AS_CONCAT, ANSI_QUOTES).  Both servers compare text
# by bytes as SQLite does, and use UTC.
set -u

: "${DWLOAD:?DWLOAD must name the dwload binary}"
: "${TOP_SRCDIR:?TOP_SRCDIR must name the source tree}"
DATA="$TOP_SRCDIR/tests/data"

WAREHOUSE=${WAREHOUSE:-sqlite}
case $WAREHOUSE in
  sqlite) ;;
  postgresql)
    if [ -z "${DWL_PG_HOST:-}" ] || [ -z "${DWL_PG_PORT:-}" ] ||
       [ -z "${DWL_PG_USER:-}" ] || [ -z "${DWL_PG_PASSWORD:-}" ]; then
      echo "1..0 # SKIP no postgresql server (run scripts/test)"
      exit 0
    fi ;;
  mariadb)
    if [ -z "${DWL_MARIADB_HOST:-}" ] || [ -z "${DWL_MARIADB_PORT:-}" ] ||
       [ -z "${DWL_MARIADB_USER:-}" ] || [ -z "${DWL_MARIADB_PASSWORD:-}" ]; then
      echo "1..0 # SKIP no mariadb server (run scripts/test)"
      exit 0
    fi ;;
  *)
    echo "Bail out! WAREHOUSE=$WAREHOUSE: not sqlite, postgresql or mariadb"
    exit 1 ;;
esac

T_N=0
T_FAILED=0
WH_DB=""

# _wh_drop_db: drops the test's database (at exit), and the users
# wh_login_user made
_wh_drop_db() {
  for _u in ${_WH_USERS:-}; do
    if [ "$WAREHOUSE" = postgresql ]; then
      # its tables and its rights (on the database too) go first
      _wh_psql "$WH_DB" -c "DROP OWNED BY \"$_u\" CASCADE" >/dev/null 2>&1
      _wh_psql postgres -c "DROP ROLE IF EXISTS \"$_u\"" >/dev/null 2>&1
    else
      _wh_mariadb "" -e "DROP USER IF EXISTS '$_u'@'%'" >/dev/null 2>&1
    fi
  done
  _WH_USERS=""
  [ -n "$WH_DB" ] || return 0
  if [ -n "${KEEP_WORK:-}" ]; then
    echo "# database kept: $WH_DB"
  elif [ "$WAREHOUSE" = postgresql ]; then
    _wh_psql postgres -c "DROP DATABASE IF EXISTS \"$WH_DB\" WITH (FORCE)" >/dev/null ||
      echo "# could not drop database $WH_DB"
  else
    _wh_mariadb "" -e "SET SESSION lock_wait_timeout = 10; DROP DATABASE IF EXISTS \"$WH_DB\"" >/dev/null ||
      echo "# could not drop database $WH_DB"
  fi
  WH_DB=""
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dwl_it.XXXXXX") || exit 1
# Kept on failure so the files can be inspected; the database is dropped
# (unless KEEP_WORK is set).  WH_AT_EXIT: the script's own cleanup (of
# servers beside the warehouse), run first.
WH_AT_EXIT=""
trap 'eval "$WH_AT_EXIT"; _wh_drop_db; if [ "$T_FAILED" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "# work files kept in $WORK"; fi' EXIT
# Killed (make check interrupted): still clean up.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

. "$TOP_SRCDIR/tests/python3-direct.sh"
python3_direct "$WORK/.bin" || exit 1

# Field and record separators of psql's output, which no test value holds.
_US=$(printf '\037')
_RS=$(printf '\036')

# psql itself, not Debian's wrapper (a Perl script that costs 15 ms a call)
_PSQL=psql
if [ "$WAREHOUSE" = postgresql ]; then
  for _d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5nr); do
    if [ -x "$_d/psql" ]; then
      _PSQL="$_d/psql"
      break
    fi
  done
fi

# _wh_psql DB ARGS...: psql on DB with the password in its environment
_wh_psql() {
  _db=$1
  shift
  PGPASSWORD=$DWL_PG_PASSWORD PGCONNECT_TIMEOUT=10 "$_PSQL" -X -q -v ON_ERROR_STOP=1 \
    -h "$DWL_PG_HOST" -p "$DWL_PG_PORT" -U "$DWL_PG_USER" -d "$_db" "$@"
}

# _wh_mariadb DB ARGS...: the mariadb client on DB (none when empty)
_wh_mariadb() {
  _db=$1
  shift
  MYSQL_PWD=$DWL_MARIADB_PASSWORD mariadb --no-defaults --protocol=tcp \
    -h "$DWL_MARIADB_HOST" -P "$DWL_MARIADB_PORT" -u "$DWL_MARIADB_USER" \
    --connect-timeout=10 --default-character-set=utf8mb4 \
    --init-command="SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'PIPES_AS_CONCAT', 'ANSI_QUOTES')" \
    ${_db:+-D "$_db"} "$@"
}

# _wh_query NULL QUERY DB [raw]: QUERY's rows on the warehouse,
# '|'-separated, NULL printed as NULL, PostgreSQL's booleans as 1 and 0
# (unless raw: names of tables and columns); exits non-zero on an SQL error
# (printed on stderr)
_wh_query() {
  case $WAREHOUSE in
    sqlite)
      sqlite3 -batch -noheader -nullvalue "$1" "$3" "$2"
      ;;
    postgresql)
      # Records end in RS, fields in US: values may hold '|' and newlines.
      # The last record is followed by a newline instead.
      _out=$(mktemp "$WORK/sql.XXXXXX") || return 1
      _wh_psql "$3" -A -t -F "$_US" -R "$_RS" -P "null=$1" -c "$2" >"$_out"
      _rc=$?
      awk -v RS="$_RS" -v FS="$_US" -v OFS='|' -v raw="${4:-}" '
        function out(r,   i) {
          $0 = r
          $1 = $1
          for (i = 1; i <= NF && raw == ""; i++) {
            if ($i == "t") $i = 1
            else if ($i == "f") $i = 0
          }
          print
        }
        { cur = $0; if (NR > 1) out(prev); prev = cur }
        END { if (NR) { sub(/\n$/, "", prev); out(prev) } }' "$_out"
      rm -f "$_out"
      return $_rc
      ;;
    mariadb)
      # XML tells NULL from the text NULL and keeps tabs and newlines; in it
      # '<' only starts tags (values are escaped), so records split on it.
      _out=$(mktemp "$WORK/sql.XXXXXX") || return 1
      _wh_mariadb "$3" --xml -e "$2" >"$_out"
      _rc=$?
      awk -v RS='<' -v nullv="$1" '
        # A DATETIME(6) prints its six digits of fraction always, a
        # PostgreSQL timestamp those up to the last non-zero one: as there.
        function ts(v,   out, seg, frac) {
          out = ""
          while (match(v, /[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9][0-9][0-9][0-9]/)) {
            seg = substr(v, RSTART, RLENGTH)
            if (substr(v, RSTART + RLENGTH, 1) ~ /[0-9]/) {
              out = out substr(v, 1, RSTART + RLENGTH - 1)
            } else {
              frac = substr(seg, 10)
              sub(/0+$/, "", frac)
              out = out substr(v, 1, RSTART - 1) substr(seg, 1, 8) (frac == "" ? "" : "." frac)
            }
            v = substr(v, RSTART + RLENGTH)
          }
          return out v
        }
        /^row>/ { row = ""; n = 0; next }
        /^\/row>/ { print row; next }
        /^field / {
          i = index($0, ">")
          v = substr($0, i + 1)
          if (substr($0, 1, i) ~ /xsi:nil="true"/) {
            v = nullv
          } else {
            gsub(/&lt;/, "<", v); gsub(/&gt;/, ">", v); gsub(/&quot;/, "\"", v)
            gsub(/&amp;/, "\\&", v)
            v = ts(v)
          }
          row = (n++ ? row "|" : "") v
        }' "$_out"
      rm -f "$_out"
      return $_rc
      ;;
  esac
}

# The warehouse of a test.  SQLite: a file, through libsqliteodbc.  The
# servers: a database of the test's own on the server of DWL_*.
case $WAREHOUSE in
  sqlite)
    WH="$WORK/warehouse.db"
    WH_CONN="Driver=SQLite3;Database=$WH"
    ;;
  postgresql|mariadb)
    WH_DB=$(basename "$0" | sed 's/\..*//' | tr 'A-Z' 'a-z' | tr -c 'a-z0-9_\n' _)
    WH_DB="dwl_${WH_DB}_$$"
    if [ "$WAREHOUSE" = postgresql ]; then
      _err=$(_wh_psql postgres -c "CREATE DATABASE \"$WH_DB\" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'" 2>&1)
      _rc=$?
      WH_CONN="Driver=PostgreSQL Unicode;Server=$DWL_PG_HOST;Port=$DWL_PG_PORT;Database=$WH_DB;Uid=$DWL_PG_USER;Pwd=$DWL_PG_PASSWORD"
    else
      _err=$(_wh_mariadb "" -e "CREATE DATABASE \"$WH_DB\" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" 2>&1)
      _rc=$?
      WH_CONN="Driver=MariaDB Unicode;Server=$DWL_MARIADB_HOST;Port=$DWL_MARIADB_PORT;Database=$WH_DB;User=$DWL_MARIADB_USER;Password=$DWL_MARIADB_PASSWORD"
    fi
    if [ "$_rc" -ne 0 ]; then
      WH_DB=""
      echo "Bail out! cannot create the $WAREHOUSE database: $(echo "$_err" | tr '\n' ' ')"
      exit 1
    fi
    WH=$WH_DB
    # Debian's odbcinst.ini has psqlodbc write a log of every connection
    # (CommLog=1) into /tmp: the test's go to its work dir instead.  The
    # other drivers are copied as they are (tests use SQLite files beside
    # the server).
    if [ "$WAREHOUSE" = postgresql ] &&
       _drv=$(odbcinst -q -d -n "PostgreSQL Unicode" 2>/dev/null) && [ -n "$_drv" ] &&
       mkdir "$WORK/odbc" &&
       printf '%s\nLogdir=%s\n' "$_drv" "$WORK/odbc" >"$WORK/odbc/odbcinst.ini"; then
      odbcinst -q -d 2>/dev/null | tr -d '[]' | while IFS= read -r _d; do
        [ "$_d" = "PostgreSQL Unicode" ] || odbcinst -q -d -n "$_d" 2>/dev/null
      done >>"$WORK/odbc/odbcinst.ini"
      ODBCSYSINI="$WORK/odbc"
      export ODBCSYSINI
    fi
    ;;
esac

# wh_login_user NAME PASSWORD: a user of the server (PostgreSQL, MariaDB)
# who logs in with PASSWORD (any characters but ') and may do anything in
# the test's database; dropped when the script ends
wh_login_user() {
  case $WAREHOUSE in
    postgresql)
      sql "CREATE ROLE \"$1\" LOGIN PASSWORD '$2';
           GRANT ALL ON DATABASE \"$WH_DB\" TO \"$1\";
           GRANT ALL ON SCHEMA public TO \"$1\"" >/dev/null ;;
    mariadb)
      sql "CREATE USER '$1'@'%' IDENTIFIED BY '$2';
           GRANT ALL ON \"$WH_DB\".* TO '$1'@'%'" >/dev/null ;;
  esac
  _WH_USERS="${_WH_USERS:-} $1"
}

# wh_user_conn USER PASSWORD [HOST]: the connection string of the test's
# database for USER (wh_login_user) with PASSWORD as written, on HOST
# (default: the server's); SQLite, which has no users: the test's file
# (or the file HOST) with PWD=PASSWORD
wh_user_conn() {
  case $WAREHOUSE in
    sqlite) printf 'Driver=SQLite3;Database=%s;PWD=%s' "${3:-$WH}" "$2" ;;
    postgresql)
      printf 'Driver=PostgreSQL Unicode;Server=%s;Port=%s;Database=%s;Uid=%s;Pwd=%s' \
        "${3:-$DWL_PG_HOST}" "$DWL_PG_PORT" "$WH_DB" "$1" "$2" ;;
    mariadb)
      printf 'Driver=MariaDB Unicode;Server=%s;Port=%s;Database=%s;User=%s;Password=%s' \
        "${3:-$DWL_MARIADB_HOST}" "$DWL_MARIADB_PORT" "$WH_DB" "$1" "$2" ;;
  esac
}

# warehouse: prints the warehouse (sqlite, postgresql or mariadb)
warehouse() {
  echo "$WAREHOUSE"
}

# is_warehouse NAME...: true when the warehouse is one of NAMEs
is_warehouse() {
  for _w in "$@"; do
    [ "$WAREHOUSE" = "$_w" ] && return 0
  done
  return 1
}

# skip_unless_warehouse NAMES REASON: skips the whole script (call it before
# any test) unless the warehouse is one of NAMES (space-separated)
skip_unless_warehouse() {
  # shellcheck disable=SC2086  # the names are words
  is_warehouse $1 && return 0
  if [ "$T_N" -eq 0 ]; then
    echo "1..0 # SKIP $2"
    exit 0
  fi
  echo "# the rest skipped: $2"
  done_testing
}

pass() {
  T_N=$((T_N + 1))
  echo "ok $T_N - $1"
}

fail() {
  T_N=$((T_N + 1))
  T_FAILED=$((T_FAILED + 1))
  echo "not ok $T_N - $1"
  shift
  for line in "$@"; do
    printf '%s\n' "$line" | sed 's/^/#   /'
  done
  # what the last dwload run said on stderr, when it said anything: the
  # cause of a failed assertion is most often there
  if [ -s "$WORK/stderr" ]; then
    echo "#   last dwload stderr:"
    tail -n 5 "$WORK/stderr" | sed 's/^/#     /'
  fi
}

# skip_tests COUNT REASON: COUNT tests skipped (a section that does not
# apply to this warehouse, say)
skip_tests() {
  _i=0
  while [ "$_i" -lt "$1" ]; do
    T_N=$((T_N + 1))
    echo "ok $T_N - # SKIP $2"
    _i=$((_i + 1))
  done
}

# is ACTUAL EXPECTED MESSAGE
is() {
  if [ "$1" = "$2" ]; then
    pass "$3"
  else
    fail "$3" "expected: $2" "got:      $1"
  fi
}

# like TEXT FIXED-STRING MESSAGE: TEXT contains the string
like() {
  case "$1" in
    *"$2"*) pass "$3" ;;
    *) fail "$3" "expected to contain: $2" "got: $1" ;;
  esac
}

# unlike TEXT FIXED-STRING MESSAGE
unlike() {
  case "$1" in
    *"$2"*) fail "$3" "expected not to contain: $2" "got: $1" ;;
    *) pass "$3" ;;
  esac
}

# dw ARGS...: runs dwload; sets RC, OUT (stdout), ERR (stderr) and LAST
# (the last stdout line: the JSON summary of run and plan).
dw() {
  "$DWLOAD" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
  RC=$?
  OUT=$(cat "$WORK/stdout")
  ERR=$(cat "$WORK/stderr")
  LAST=$(tail -n 1 "$WORK/stdout")
}

# wh_down_conn: a connection to this warehouse that cannot be made: the
# server's port 1 on loopback (nothing listens there), a SQLite file in a
# missing folder
wh_down_conn() {
  case $WAREHOUSE in
    sqlite) echo "Driver=SQLite3;Database=$WORK/no/such/dir/w.db" ;;
    *) printf '%s' "$WH_CONN" | sed 's/Port=[0-9]*/Port=1/' ;;
  esac
}

# check_steps: the steps of the check --json document in OUT, "step
# ok|FAILED," each
check_steps() {
  printf '%s' "$OUT" | python3 -c '
import json, sys
print("".join("%s %s," % (s["step"], "ok" if s["ok"] else "FAILED") for s in json.loads(sys.stdin.read())["steps"]))'
}

# field NAME: a member of the JSON summary in LAST, as JSON text
# ("ok" for strings without quotes, null, numbers as written).
field() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
v = json.loads(sys.stdin.read()).get(sys.argv[1], "MISSING")
print("null" if v is None else v)' "$1"
}

# sql QUERY [DB]: rows of a query on the warehouse, '|'-separated, NULL as
# the empty string.  DB: another SQLite file, or database on the server.
sql() {
  _wh_query "" "$1" "${2:-$WH}"
}

# sqln QUERY [DB]: like sql, NULL printed as <null> (so '' and NULL differ)
sqln() {
  _wh_query "<null>" "$1" "${2:-$WH}"
}

# wh_tables: the warehouse's tables, one a line, in byte order
wh_tables() {
  case $WAREHOUSE in
    sqlite)
      [ -f "$WH" ] || return 0
      _wh_query "" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\\'" "$WH" raw
      ;;
    postgresql)
      _wh_query "" "SELECT CASE WHEN table_schema = current_schema() THEN table_name
                  ELSE table_schema || '.' || table_name END
           FROM information_schema.tables
           WHERE table_type = 'BASE TABLE' AND table_schema <> 'information_schema'
             AND table_schema NOT LIKE 'pg\_%'" "$WH" raw
      ;;
    mariadb)
      _wh_query "" "SELECT table_name FROM information_schema.tables
           WHERE table_schema = database() AND table_type = 'BASE TABLE'" "$WH" raw
      ;;
  esac | LC_ALL=C sort
}

# wh_columns TABLE: the table's column names in order, one a line
wh_columns() {
  case $WAREHOUSE in
    sqlite)
      _wh_query "" "SELECT name FROM pragma_table_info('$1') ORDER BY cid" "$WH" raw
      ;;
    postgresql)
      case $1 in
        *.*) _wc_s="'${1%%.*}'" _wc_t=${1#*.} ;;
        *) _wc_s="current_schema()" _wc_t=$1 ;;
      esac
      _wh_query "" "SELECT column_name FROM information_schema.columns
           WHERE table_schema = $_wc_s AND table_name = '$_wc_t' ORDER BY ordinal_position" "$WH" raw
      ;;
    mariadb)
      _wh_query "" "SELECT column_name FROM information_schema.columns
           WHERE table_schema = database() AND table_name = '$1' ORDER BY ordinal_position" "$WH" raw
      ;;
  esac
}

# table_exists TABLE: prints 1 when the warehouse has the table, else 0
table_exists() {
  if wh_tables | grep -qxF "$1"; then echo 1; else echo 0; fi
}

# nulls_first COL...: an ORDER BY list of the columns (names or positions),
# NULLs first on every warehouse: SQLite and MariaDB sort them so, and
# PostgreSQL, which puts them last, is told to; "1" for no column
nulls_first() {
  _nf=""
  for _nfc in "$@"; do
    _nf="$_nf${_nf:+, }$_nfc"
    [ "$WAREHOUSE" != postgresql ] || _nf="$_nf NULLS FIRST"
  done
  echo "${_nf:-1}"
}

# every_column TABLE: an ORDER BY list of every column of TABLE, by
# position, NULLs first
every_column() {
  nulls_first $(wh_columns "$1" | awk '{ print NR }')
}

# httpd_start DIR [CERT KEY]: tests/httpd.py serving DIR in the background
# (HTTPS with CERT and KEY); waits (bounded: 10 s) for it to write DIR/port
# and sets STARTED_PID; false when it did not start (stderr in DIR.err)
httpd_start() {
  python3 "$TOP_SRCDIR/tests/httpd.py" "$@" 2>"$1.err" &
  STARTED_PID=$!
  _i=0
  while [ ! -s "$1/port" ] && [ "$_i" -lt 100 ] && kill -0 "$STARTED_PID" 2>/dev/null; do
    sleep 0.1
    _i=$((_i + 1))
  done
  [ -s "$1/port" ]
}

# abi_version: the plugin ABI of this tree's header, as MAJOR.MINOR
abi_version() {
  _h="$TOP_SRCDIR/include/dwload/plugin.h"
  echo "$(sed -n 's/^#define DWL_ABI_MAJOR \([0-9]*\)$/\1/p' "$_h").$(sed -n 's/^#define DWL_ABI_MINOR \([0-9]*\)$/\1/p' "$_h")"
}

# _wh_quote NAME: NAME as a quoted SQL name (schema.table: each part)
_wh_quote() {
  printf '"%s"' "$1" | sed 's/\./"."/'
}

# tdump TABLE [ORDER_BY]: the table's rows (NULL as <null>), ordered by
# ORDER_BY or else by every column: to show a table is unchanged
# norm_run: tdump's rows on stdin with the run's instants (any value
# starting with today's or yesterday's UTC date: a run near midnight) as
# RUN and, in a row holding one, 64-hex hash keys as H, sorted: two runs'
# deletions at their own clocks compare equal.
norm_run() {
  python3 -c '
import re, sys
days = sys.argv[1:]
for line in sys.stdin.read().splitlines():
    f = line.split("|")
    run = [any(x.startswith(d) for d in days) for x in f]
    g = ["RUN" if r else x for x, r in zip(f, run)]
    if any(run):
        g = ["H" if re.fullmatch(r"[0-9a-f]{64}", x) else x for x in g]
    print("|".join(g))' "$(date -u +%Y-%m-%d)" "$(date -u -d yesterday +%Y-%m-%d)" | sort
}

tdump() {
  sqln "SELECT * FROM $(_wh_quote "$1") ORDER BY ${2:-$(every_column "$1")}"
}

# job NAME: writes stdin to $WORK/NAME.yaml and prints the path.
job() {
  cat >"$WORK/$1.yaml"
  echo "$WORK/$1.yaml"
}

# file NAME: writes stdin to $WORK/NAME and prints the path.
file() {
  cat >"$WORK/$1"
  echo "$WORK/$1"
}

# wh_dump: a checksum of every table's name, columns and rows, to show
# nothing was written; "no-warehouse" when there is no table at all (for
# SQLite: or not even the file)
wh_dump() {
  _tables=$(wh_tables)
  if [ -z "$_tables" ]; then
    echo "no-warehouse"
    return 0
  fi
  for _t in $_tables; do
    _cols=$(wh_columns "$_t")
    echo "table $_t"
    echo "columns $(printf '%s\n' "$_cols" | tr '\n' ',')"
    tdump "$_t" "$(nulls_first $(printf '%s\n' "$_cols" | awk '{ print NR }'))"
  done | md5sum | cut -d' ' -f1
}

# ---- helpers shared by several test scripts ------------------------------

# cols TABLE: the table's column names in order, comma-separated
cols() {
  wh_columns "$1" | paste -sd, -
}

# coltype COLUMN TABLE: the declared type of TABLE's column, as the
# warehouse's catalog prints it
coltype() {
  case $WAREHOUSE in
  postgresql) sql "SELECT format_type(atttypid, atttypmod) FROM pg_attribute
                   WHERE attrelid = '$2'::regclass AND attname = '$1'" ;;
  mariadb) sql "SELECT column_type FROM information_schema.columns WHERE table_schema = DATABASE()
                AND table_name = '$2' AND column_name = '$1'" ;;
  *) sql "SELECT type FROM pragma_table_info('$2') WHERE name = '$1'" ;;
  esac
}

# checkpoint JOB: the job's stored checkpoint (empty: none)
checkpoint() {
  sql "SELECT checkpoint FROM dwload_state WHERE job = '$1'"
}

# counts: the summary's counts in LAST, on one line
counts() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join("%s=%s" % (k, d.get(k)) for k in
      ("read", "skipped", "inserted", "expired", "updated", "deleted", "unchanged")))'
}

# gen_rows FROM TO LMD: CSV rows id,name,lmd, ids FROM to TO
gen_rows() {
  awk -v a="$1" -v b="$2" -v lmd="$3" 'BEGIN { for (i = a; i <= b; i++) printf "%d,row %d,%s\n", i, i, lmd }'
}

# ok_in_run TS MSG: passes when T0 <= TS <= T1 (the clock a test read just
# before and after a run), TS to the second (a warehouse may print
# fractions)
ok_in_run() {
  if awk -v t0="$T0" -v ts="$(printf '%.19s' "$1")" -v t1="$T1" 'BEGIN { exit !(t0 <= ts && ts <= t1) }'; then
    pass "$2"
  else
    fail "$2" "$1 not in [$T0, $T1]"
  fi
}

# no_table TABLE MSG: a failed first run left no table; MariaDB, which
# cannot roll back DDL, creates it on a connection of its own and leaves it
# there, empty (dwload-job(5), TABLE LAYOUT)
no_table() {
  if is_warehouse mariadb && [ "$(table_exists "$1")" = 1 ]; then
    is "$(sql "SELECT count(*) FROM \"$1\"")" 0 "$2 (MariaDB: or left there empty)"
  else
    is "$(table_exists "$1")" 0 "$2"
  fi
}

# sqltext TEXT: SQL as dwload prints it on this warehouse: the identifiers
# TEXT writes in double quotes are in backquotes on MariaDB
sqltext() {
  if is_warehouse mariadb; then printf '%s' "$1" | tr '"' '`'; else printf '%s' "$1"; fi
}

# odbc_source: sets SRC and SRC_CONN, a source database for the odbc
# plugin on the warehouse under test's own driver (SQLite: a second file;
# the servers: the test's database)
odbc_source() {
  if is_warehouse sqlite; then
    SRC="$WORK/source.db"
    SRC_CONN="Driver=SQLite3;Database=$SRC"
  else
    SRC=$WH
    SRC_CONN=$WH_CONN
  fi
}

# conn_job NAME CONNECTION TABLE CSV [LOAD-LINES]: an scd2 job of CSV (its
# path may be overridden by $FEED) into TABLE through CONNECTION, as
# written; prints the job file's path
conn_job() {
  cat >"$WORK/$1.yaml" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: \${FEED:-$4}
  types: {id: integer}
target:
  connection: "$2"
  table: $3
load:
  mode: scd2
  key: id
  lmd: lmd
${5:-}
EOF
  echo "$WORK/$1.yaml"
}

# wait_until TENTHS CMD...: runs CMD every 0.1 s until it succeeds, at most
# TENTHS times; false when it never did
wait_until() {
  _wn=$1
  shift
  _wi=0
  until "$@" 2>/dev/null; do
    _wi=$((_wi + 1))
    [ "$_wi" -lt "$_wn" ] || return 1
    sleep 0.1
  done
}

# wh_wait_running JOB [SECONDS]: waits until JOB's row of dwload_state
# shows a run holding it (running_since), at most SECONDS (default 30)
wh_wait_running() {
  wait_until $((${2:-30} * 10)) eval '[ "$(sql "SELECT CASE WHEN running_since IS NOT NULL THEN 1 ELSE 0 END
                                        FROM dwload_state WHERE job = '"'$1'"'")" = 1 ]'
}

# wh_held JOB: true once a run of JOB holds its lock, observed from outside:
# the state row names a running run, and the warehouse refuses another
# writer (SQLite: the database's write lock; elsewhere: the lock on the
# job's row of dwload_state, which a NOWAIT probe cannot take).
wh_held() {
  [ "$(sql "SELECT CASE WHEN running_since IS NOT NULL THEN 1 ELSE 0 END FROM dwload_state
            WHERE job = '$1'" 2>/dev/null)" = 1 ] || return 1
  if is_warehouse sqlite; then
    ! sqlite3 -batch "$WH" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1
  else
    [ "$(sql "SELECT job FROM dwload_state WHERE job = '$1' FOR UPDATE NOWAIT" 2>/dev/null)" != "$1" ]
  fi
}

# wh_wait_held JOB: polls wh_held for at most ~10 s
wh_wait_held() {
  wait_until 100 wh_held "$1"
}

# mkjob NAME CSV TABLE [SOURCE-LINES]: a csv -> scd2 job; the load: and
# dimension: sections come on stdin.  Prints the job file's path.
mkjob() {
  {
    printf 'version: 1\njob: %s\nsource:\n  plugin: csv\n  path: %s\n' "$1" "$2"
    if [ -n "${4:-}" ]; then printf '%s\n' "$4"; fi
    printf 'target:\n  connection: "%s"\n  table: %s\n' "$WH_CONN" "$3"
    cat
  } | _engine >"$WORK/$1.yaml"
  echo "$WORK/$1.yaml"
}

# _engine: a job file on stdin, with `engine: $DWL_ENGINE` added to its
# block-style load mapping when DWL_ENGINE is set (make check runs the
# engine-sensitive scripts once more with DWL_ENGINE=pushdown) and dwload
# itself says that engine takes the job: `check --json --spec-only` reports
# "pushdown": "ok" or why not, so the rules live in dwload alone.  Jobs the
# engine refuses stay with the memory engine, as do job files that set
# load.engine themselves (they test the key) or do not load.
_engine() {
  if [ -z "${DWL_ENGINE:-}" ]; then
    cat
    return
  fi
  _e_job=$(mktemp "$WORK/.engine.XXXXXX")
  cat >"$_e_job"
  # The job's ${VAR}s as the script has them now, exported or not; one set
  # only for the run (FEED=... dw run) gets a stand-in: no rule of the
  # engines' reads a value that comes from a variable.
  if ! grep -q '^  engine:' "$_e_job" &&
     [ "$(for _e_v in $(grep -o '[$][{][A-Za-z_][A-Za-z0-9_]*}' "$_e_job" | tr -d '${}' | sort -u); do
            eval "[ -n \"\${$_e_v+x}\" ] || $_e_v=unset-until-the-run"
            export "$_e_v"
          done
          "$DWLOAD" check --json --spec-only "$_e_job" 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.loads(sys.stdin.read()).get(sys.argv[1], ""))
except ValueError:
    print("")' "$DWL_ENGINE")" = ok ]; then
    awk -v e="$DWL_ENGINE" '{ print } /^load: *$/ { print "  engine: " e }' "$_e_job"
  else
    cat "$_e_job"
  fi
  rm -f "$_e_job"
}

# finish PID [SECONDS]: waits at most SECONDS (default 30) for a background
# run to end, killing it after that; returns its exit status
finish() {
  _i=0
  while [ $_i -lt $((${2:-30} * 10)) ] && [ -e "/proc/$1" ] &&
        [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; do
    sleep 0.1
    _i=$((_i + 1))
  done
  [ $_i -lt $((${2:-30} * 10)) ] || kill -9 "$1" 2>/dev/null
  wait "$1"
}

# run_ok JOB MSG: runs the job, asserts exit 0
run_ok() {
  dw run "$1"
  is "$RC" 0 "$2: exit 0"
  if [ "$RC" != 0 ]; then echo "# stderr: $ERR"; fi
}

done_testing() {
  echo "1..$T_N"
  [ "$T_FAILED" -eq 0 ]
  exit $?
}
