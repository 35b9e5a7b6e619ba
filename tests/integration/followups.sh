#!/bin/sh
# Follow-ups of issue 14 ("never lose history"): an unconstrained
# PostgreSQL numeric arrives exact through the odbc source and migrate, on
# every warehouse; run --empty-exit refuses dwload's own exit codes;
# connection-string attributes the user set are matched by their whole
# name (UseDeclareFetch= is not Fetch=, ConnectTimeout= is not Timeout=).
. "$TOP_SRCDIR/tests/integration/lib.sh"

printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n' >"$WORK/one.csv"
J=$(printf 'load:\n  mode: append\n  lmd: lmd\n' | mkjob fu_empty "$WORK/one.csv" fu_empty "  types: {id: integer}")

# ---- run --empty-exit N: N is never one of dwload's own codes -----------------
for n in 1 2 3 4 5 6 128 129 130 143 255; do
  dw run --empty-exit "$n" "$J"
  is "$RC|$(table_exists fu_empty)" "2|0" "--empty-exit $n is refused (exit 2) before anything runs"
done
like "$ERR" "1 to 6 and 128 to 255 are dwload's own exit codes" "the refusal names the reserved codes"
dw run --empty-exit 127 "$J"
is "$RC|$(field inserted)" "0|1" "--empty-exit 127 is allowed: a run that loads exits 0"
dw run --empty-exit 7 "$J"
is "$RC|$(field status)" "7|ok" "--empty-exit 7: nothing past the checkpoint exits 7"

# ---- attributes dwload adds to a connection string ----------------------------
# An attribute the user set is matched by its whole name: ConnectTimeout=
# (an attribute SQLite's driver ignores) is not Timeout=, UseDeclareFetch=
# is not Fetch=.  The "connected to" line shows what the driver got.
case $WAREHOUSE in
  sqlite) USER_ATTR="ConnectTimeout=5" WANT_ATTR=";Timeout=1000;" ;;
  postgresql) USER_ATTR="UseDeclareFetch=1" WANT_ATTR=";Fetch=10000;" ;;
  mariadb) USER_ATTR="" ;;
esac
if [ -n "$USER_ATTR" ]; then
  sed "s|^  connection: .*|  connection: \"$WH_CONN;$USER_ATTR\"|" "$J" >"$WORK/fu_attr.yaml"
  sed -i 's/^job: .*/job: fu_attr/' "$WORK/fu_attr.yaml"
  dw run "$WORK/fu_attr.yaml"
  is "$RC|$(field inserted)" "0|1" "a target connection string with $USER_ATTR: the run loads"
  like "$ERR" "$USER_ATTR$WANT_ATTR" "with $USER_ATTR the driver still gets dwload's ${WANT_ATTR#;}"
  if is_warehouse postgresql; then
    like "$ERR" ";UseDeclareFetch=1;Fetch=10000;pqopt={application_name=dwload})" \
      "UseDeclareFetch=1 is not added twice, and the rest of dwload's attributes follow"
  else
    like "$ERR" ";Timeout=1000;StepAPI=1)" "the rest of dwload's attributes follow"
  fi
else
  skip_tests 3 "dwload adds no attribute to a MariaDB target's connection string"
fi

# ---- an unconstrained PostgreSQL numeric arrives exact -------------------------
# psqlODBC describes `numeric` without a precision as numeric(28,6): the
# source is a PostgreSQL table whatever the warehouse (its own database on
# the PostgreSQL server, dropped at exit).
if [ -z "${DWL_PG_HOST:-}" ] || [ -z "${DWL_PG_PORT:-}" ] || [ -z "${DWL_PG_USER:-}" ] ||
   [ -z "${DWL_PG_PASSWORD:-}" ]; then
  skip_tests 12 "no postgresql server for the source"
else
  PGSRC="dwl_followups_src_$$"
  _wh_psql postgres -c "CREATE DATABASE \"$PGSRC\" TEMPLATE template0 ENCODING 'UTF8'" >/dev/null ||
    echo "Bail out! cannot create the PostgreSQL source database"
  trap '_wh_psql postgres -c "DROP DATABASE IF EXISTS \"$PGSRC\" WITH (FORCE)" >/dev/null 2>&1; _wh_drop_db;
    if [ "$T_FAILED" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "# work files kept in $WORK"; fi' EXIT
  PG_SRC="Driver=PostgreSQL Unicode;Server=$DWL_PG_HOST;Port=$DWL_PG_PORT;Database=$PGSRC;Uid=$DWL_PG_USER;Pwd=$DWL_PG_PASSWORD;CommLog=0"
  psrc() { _wh_psql "$PGSRC" -At -c "$1"; }
  # exact: the values on stdin, one a line, as exact decimals,
  # trailing zeros of the fraction dropped (MariaDB's DECIMAL(65,30) pads)
  exact() {
    python3 -c '
import decimal, sys
decimal.getcontext().prec = 1000
for l in sys.stdin.read().splitlines():
    print("NULL" if l == "" else format(decimal.Decimal(l).normalize(), "f"))'
  }
  psrc "CREATE TABLE wide (id integer PRIMARY KEY, n numeric, m numeric(12,2), lmd timestamp);
        INSERT INTO wide VALUES (1, 1234567890123456789012345.123456789012, 1.25, '2024-01-01'),
          (2, 0.000000000123, -3.5, '2024-01-01'), (3, -98765432109876543210987654321.000000000001, NULL, '2024-01-01'),
          (4, NULL, 0, '2024-01-01')" ||
    echo "Bail out! cannot create the source table"
  WANT=$(psrc "SELECT n FROM wide ORDER BY id" | exact)
  # wide_job NAME SOURCE-CONNECTION: an scd2 job from the table wide
  wide_job() {
    _engine >"$WORK/$1.yaml" <<EOF2
version: 1
job: $1
source:
  plugin: odbc
  connection: "$2"
  table: wide
target:
  connection: "$WH_CONN"
  table: $1
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF2
    echo "$WORK/$1.yaml"
  }
  J=$(wide_job fu_wide "$PG_SRC")
  dw run "$J"
  is "$RC|$(field inserted)" "0|4" "odbc source, unconstrained numeric: the run loads every row"
  is "$(sql "SELECT n FROM fu_wide ORDER BY id" | exact)" "$WANT" \
    "odbc source: 25 integer digits, 12 decimals, 1e-10 and 30 integer digits arrive exact"
  is "$(sql "SELECT m FROM fu_wide ORDER BY id" | exact)" "$(psrc "SELECT m FROM wide ORDER BY id" | exact)" \
    "odbc source: a numeric(12,2) arrives as it is"
  # Every row past the checkpoint again, its values as they were: each is
  # compared with the version the warehouse holds.
  psrc "UPDATE wide SET lmd = '2024-01-02'"
  dw run "$J"
  is "$RC|$(field read)|$(field inserted)|$(field expired)|$(field unchanged)" "0|4|0|0|4" \
    "odbc source: a second run of the same values changes nothing (no churn)"
  is "$(sql "SELECT count(*) FROM fu_wide")" 4 "odbc source: one version per key"

  # dwload migrate, PostgreSQL to this warehouse
  dw migrate --from "$PG_SRC" --to "$WH_CONN" --table wide
  is "$RC|$(field status)" "0|ok" "migrate from PostgreSQL: exit 0, verified"
  is "$(sql "SELECT n FROM wide ORDER BY id" | exact)" "$WANT" "migrate: the unconstrained numeric arrives exact"
  is "$(sql "SELECT m FROM wide ORDER BY id" | exact)" "$(psrc "SELECT m FROM wide ORDER BY id" | exact)" \
    "migrate: a numeric(12,2) arrives as it is"
  dw migrate --from "$PG_SRC" --to "$WH_CONN" --table wide --resume
  is "$RC" 0 "migrate --resume: the copy verifies again"
  is "$(sql "SELECT n FROM wide ORDER BY id" | exact)" "$WANT" "migrate --resume: the values are unchanged"

  # The odbc source's own attributes, by whole name too.
  dw run "$(wide_job fu_attr_src "$PG_SRC;UseDeclareFetch=1")"
  is "$RC|$(field inserted)" "0|4" "odbc source with UseDeclareFetch=1: the run loads"
  case $ERR in
    *"odbc: connected to PostgreSQL ("*"CommLog=0;UseDeclareFetch=1;Fetch="[0-9]*";BoolsAsChar=0)"*)
      pass "odbc source with UseDeclareFetch=1: the driver still gets the plugin's Fetch= and BoolsAsChar=" ;;
    *) fail "odbc source with UseDeclareFetch=1: the driver still gets the plugin's Fetch= and BoolsAsChar=" \
         "got: $ERR" ;;
  esac
fi

done_testing
