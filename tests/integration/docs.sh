#!/bin/sh
# The documentation and the examples that ship: the manual pages are clean
# (man --warnings, mandoc -T lint) and cover every command, option, exit
# code and environment variable dwload knows; every example job in
# conf/examples runs on the warehouse; the odbc.ini and odbcinst.ini
# examples connect; the Airflow DAG compiles and maps dwload's exit codes
# to Airflow's behaviour.
. "$TOP_SRCDIR/tests/integration/lib.sh"

MAN="$TOP_SRCDIR/man"
EX="$TOP_SRCDIR/conf/examples"

# ---- manual pages ------------------------------------------------------------
if is_warehouse sqlite; then
  for page in dwload.1 dwload-job.5 dwload-plugin.7; do
    MANWIDTH=80 man --warnings -l "$MAN/$page" >/dev/null 2>"$WORK/man.err"
    is "$?|$(cat "$WORK/man.err")" "0|" "$page: man --warnings prints nothing"
    if command -v mandoc >/dev/null 2>&1; then
      is "$(mandoc -T lint "$MAN/$page" 2>&1)" "" "$page: mandoc -T lint is clean"
    else
      skip_tests 1 "mandoc is not installed"
    fi
  done
  # The page as text, roff escapes undone.
  man_text() {
    sed 's/\\-/-/g; s/\\&//g; s/\\f[BIRP]//g' "$MAN/$1"
  }
  man_text dwload.1 >"$WORK/dwload.1.txt"
  # Every option of every --help is in dwload(1).
  "$DWLOAD" --help >"$WORK/help.txt"
  for c in run plan check state asof migrate plugins; do
    "$DWLOAD" "$c" --help >>"$WORK/help.txt"
    grep -q "^\.[BI]*R* *$c\b\|^\.BI \"*$c \|^\.BR $c \|^\.B $c\$" "$WORK/dwload.1.txt" &&
      pass "dwload(1) describes the $c command" || fail "dwload(1) describes the $c command"
  done
  missing=""
  for o in $(grep -o -- '--[a-z][a-z-]*' "$WORK/help.txt" | sort -u); do
    grep -q -- "$o\b" "$WORK/dwload.1.txt" || missing="$missing $o"
  done
  is "$missing" "" "dwload(1) documents every option of the --help texts"
  for code in 0 1 2 3 4 5 6; do
    grep -q "^\.B $code\$" "$WORK/dwload.1.txt" && pass "dwload(1) documents exit status $code" ||
      fail "dwload(1) documents exit status $code"
  done
  grep -q 'empty-exit' "$WORK/dwload.1.txt" && grep -q '^\.SH EXIT STATUS' "$WORK/dwload.1.txt" &&
    sed -n '/^\.SH EXIT STATUS/,/^\.SH ENVIRONMENT/p' "$WORK/dwload.1.txt" | grep -q -- '--empty-exit' &&
    pass "dwload(1) documents the --empty-exit status" || fail "dwload(1) documents the --empty-exit status"
  # Every environment variable the sources read is documented.
  missing=""
  for v in $(grep -ho 'getenv("[A-Z_]*")' "$TOP_SRCDIR"/src/*/*.c | sed 's/getenv("\(.*\)")/\1/' | sort -u); do
    grep -q "$v" "$WORK/dwload.1.txt" || missing="$missing $v"
  done
  is "$missing" "" "dwload(1) documents every environment variable dwload reads"
  # Every key an example job uses is in dwload-job(5).
  man_text dwload-job.5 >"$WORK/job.5.txt"
  missing=""
  for k in $(cat "$EX"/*.yaml | sed -n 's/^ *\([a-z_0-9]*\):.*/\1/p' | sort -u); do
    # column names of the examples' data, not keys
    case $k in id|lmd|name|order_id|customer_id|amount|ordered_at|updated_at|city|tags) continue ;; esac
    grep -q "^\.B $k\$\|^\.BR $k " "$WORK/job.5.txt" || missing="$missing $k"
  done
  is "$missing" "" "dwload-job(5) describes every key the example jobs use"
  # Every key and keyword value the spec parser knows (its quoted
  # lower-case words; "rb" is fopen's mode) is in dwload-job(5).
  missing=""
  for w in $(grep -ho '"[a-z][a-z_0-9]*"' "$TOP_SRCDIR"/src/spec/*.c | tr -d '"' | sort -u); do
    [ "$w" = rb ] && continue
    grep -qw -- "$w" "$WORK/job.5.txt" || missing="$missing $w"
  done
  is "$missing" "" "dwload-job(5) names every key and keyword of src/spec/"
  # The examples of -V, plugins and plugins --json show the ABI this dwload has.
  abi=$("$DWLOAD" -V | sed -n 's/.*(plugin ABI \([0-9.]*\)).*/\1/p')
  shown=$(grep -ho '(plugin ABI [0-9.]*)\|[0-9] (ABI [0-9.]*)\|"abi": "[0-9.]*"' "$MAN"/*.[157] "$TOP_SRCDIR/README.md" |
    grep -o '[0-9]\.[0-9]*[)"]' | tr -d ')"' | sort -u | tr '\n' ' ')
  is "$abi|$shown" "1.3|$abi " "the examples of -V, plugins and --json show plugin ABI $abi"
  # README's seed 000 example: its asof output is what those commands print.
  mkdir "$WORK/seed000"
  cp "$TOP_SRCDIR"/tests/data/seeds/000_dim_customer.yaml "$TOP_SRCDIR"/tests/data/seeds/000_feed_customer_*.csv "$WORK/seed000/"
  (cd "$WORK/seed000" && export DWL_CONN="$WH_CONN" && "$DWLOAD" -q run 000_dim_customer.yaml >/dev/null &&
    FEED=000_feed_customer_2.csv "$DWLOAD" -q run 000_dim_customer.yaml >/dev/null &&
    FEED=000_feed_customer_2.csv "$DWLOAD" asof 000_dim_customer.yaml --at 2016-12-14) >"$WORK/seed000.out" 2>&1
  # the block after the commands' block: its fences are the 2nd and 3rd
  awk '/dwload asof 000_dim_customer.yaml --at 2016-12-14/ { want = 1; next }
       want && /^```$/ { if (++fence == 3) exit; next }
       fence == 2 { print }' "$TOP_SRCDIR/README.md" >"$WORK/seed000.readme"
  is "$(cat "$WORK/seed000.readme")" "$(cat "$WORK/seed000.out")" "README.md: seed 000's asof example shows what dwload asof prints"
else
  skip_tests 21 "the manual pages are checked once, on SQLite"
fi

# ---- example jobs --------------------------------------------------------------
# Each runs on the test warehouse (its connection swapped for the test's,
# a schema dropped from its table), on day 1 and then day 2 of the feed.
# The odbc example reads an orders table of a SQLite file standing in for
# the shop's database, changed between the two days; the http_json example
# needs an HTTP server and is run by http.sh against tests/httpd.py.
cp "$EX"/*.csv "$WORK/"
SHOP="$WORK/shop.db"
sqlite3 "$SHOP" "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL,
  status VARCHAR(20), total NUMERIC(12,2), updated_at TIMESTAMP NOT NULL);
  INSERT INTO orders VALUES (1, 10, 'new', 12.50, '2024-03-01 09:00:00'),
    (2, 11, 'new', 99.99, '2024-03-01 10:00:00'), (3, 10, 'paid', NULL, '2024-03-01 11:00:00');"
for f in "$EX"/*.yaml; do
  name=$(basename "$f" .yaml)
  [ "$name" = http_json ] && continue
  if [ "$name" = odbc_orders ]; then
    sqlite3 "$SHOP" "UPDATE orders SET status = 'new', updated_at = '2024-03-01 09:00:00' WHERE order_id = 1;
      DELETE FROM orders WHERE order_id = 4"
  fi
  sed -e "/^source:/,/^target:/s|^  connection: .*|  connection: \"Driver=SQLite3;Database=$SHOP\"|" \
    -e "/^target:/,\$s|^  connection: .*|  connection: \"$WH_CONN\"|" \
    -e 's|^  table: [a-z_]*\.|  table: |' "$f" >"$WORK/$name.yaml"
  DW_PASSWORD=unused dw run "$WORK/$name.yaml"
  is "$RC|$(field status)" "0|ok" "conf/examples/$name.yaml runs (day 1)"
  [ "$RC" = 0 ] || echo "# $ERR"
  [ "$name" = odbc_orders ] && is "$(field read)" 3 "odbc_orders.yaml: day 1 reads every order"
  [ "$name" = odbc_orders ] && sqlite3 "$SHOP" "UPDATE orders SET status = 'paid', updated_at = '2024-03-02 08:00:00'
      WHERE order_id = 1; INSERT INTO orders VALUES (4, 12, 'new', 5.00, '2024-03-02 09:00:00')"
  DW_PASSWORD=unused DWLOAD_FEED=customers_day2.csv dw run "$WORK/$name.yaml"
  is "$RC|$(field status)" "0|ok" "conf/examples/$name.yaml runs (day 2)"
  [ "$name" = odbc_orders ] && is "$(field read)|$(field inserted)|$(field expired)" "2|2|1" \
    "odbc_orders.yaml: day 2 reads only the orders changed since the checkpoint"
done
# What the examples say they do, as the tables show it.
is "$(sql 'SELECT count(*) FROM customer_latest')" 5 "upsert.yaml: one row per customer"
is "$(sql "SELECT count(*) FROM customer_history WHERE effective_end = '9999-12-31 00:00:00'")" \
  "$(sql 'SELECT count(DISTINCT id) FROM customer_history')" "scd2.yaml: one open version per customer, ending 9999-12-31"
is "$(sql 'SELECT count(*) FROM orders WHERE amount IS NULL')" 1 "csv.yaml: the text NULL is NULL"

# ---- odbc.ini and odbcinst.ini ------------------------------------------------
# unixODBC reads both from ODBCSYSINI; the data source of this warehouse is
# pointed at the test's database, the password given in the connection.
# dsn_set SECTION KEY=VALUE...: the example odbc.ini with those keys of
# SECTION set, into the test's ODBCSYSINI folder
dsn_set() {
  _sec=$1
  shift
  awk -v sec="$_sec" -v sets="$(printf '%s\n' "$@")" '
    BEGIN { n = split(sets, kv, "\n"); for (i = 1; i <= n; i++) { k = kv[i]; sub(/=.*/, "", k); v[k] = kv[i] } }
    /^\[/ { s = $0 }
    s == sec && /^[A-Za-z]+=/ { k = $0; sub(/=.*/, "", k); if (k in v) $0 = v[k] }
    { print }' "$EX/odbc.ini" >"$WORK/odbcex/odbc.ini"
}
mkdir "$WORK/odbcex"
cp "$EX/odbcinst.ini" "$WORK/odbcex/odbcinst.ini"
case $WAREHOUSE in
  sqlite)
    DSN=warehouse_sqlite
    sed "s|^Database=/var/lib/dwload/warehouse.db|Database=$WH|" "$EX/odbc.ini" >"$WORK/odbcex/odbc.ini"
    CONN="DSN=$DSN"
    ;;
  postgresql)
    DSN=warehouse_pg
    dsn_set "[$DSN]" "Servername=$DWL_PG_HOST" "Port=$DWL_PG_PORT" "Database=$WH_DB" \
      "Username=$DWL_PG_USER" "SSLmode=disable"
    CONN="DSN=$DSN;Pwd=$DWL_PG_PASSWORD"
    ;;
  mariadb)
    DSN=warehouse_mariadb
    dsn_set "[$DSN]" "Server=$DWL_MARIADB_HOST" "Port=$DWL_MARIADB_PORT" "Database=$WH_DB" \
      "User=$DWL_MARIADB_USER"
    CONN="DSN=$DSN;Password=$DWL_MARIADB_PASSWORD"
    ;;
esac
sed "s|^  connection: .*|  connection: \"$CONN\"|" "$WORK/append.yaml" >"$WORK/dsn.yaml"
# libsqlite3odbc 0.9998 leaks what it reads from odbc.ini when it looks a
# DSN up (allocated inside its SQLDriverConnect, through the odbcinst
# library it loads and unloads; valgrind shows the stack), which the
# sanitizer build's LeakSanitizer would report as dwload's: off for this
# one SQLite DSN connection.  Every other test connects with a connection
# string, under LeakSanitizer.
if is_warehouse sqlite; then
  NOLEAK="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
else
  NOLEAK=${ASAN_OPTIONS:-}
fi
ASAN_OPTIONS=$NOLEAK ODBCSYSINI="$WORK/odbcex" ODBCINI=/nonexistent dw check --connect "$WORK/dsn.yaml"
is "$RC" 0 "odbc.ini / odbcinst.ini: the $DSN data source connects"
like "$OUT" "target   ok" "odbc.ini / odbcinst.ini: check reaches the target"
if is_warehouse postgresql; then
  # CommLog=0 in the example: psqlODBC writes no connection log; with
  # Debian's CommLog=1 it would (into Logdir, here a folder of the test's),
  # but dwload connects through a view of odbcinst.ini with it off
  # (src/warehouse/driver_logs.c; tests/integration/driver_logs.sh).
  mkdir "$WORK/odbcex/logs"
  sed -i "s|^CommLog=0|CommLog=0\nLogdir=$WORK/odbcex/logs|" "$WORK/odbcex/odbcinst.ini"
  ODBCSYSINI="$WORK/odbcex" ODBCINI=/nonexistent dw check --connect "$WORK/dsn.yaml"
  is "$RC|$(ls "$WORK/odbcex/logs" | wc -l | tr -d ' ')" "0|0" "odbcinst.ini: CommLog=0 writes no psqlODBC log"
  sed -i 's/^CommLog=0/CommLog=1/' "$WORK/odbcex/odbcinst.ini"
  ODBCSYSINI="$WORK/odbcex" ODBCINI=/nonexistent dw check --connect "$WORK/dsn.yaml"
  is "$RC|$(ls "$WORK/odbcex/logs" | wc -l | tr -d ' ')" "0|0" "odbcinst.ini: Debian's CommLog=1, through dwload's view: no log either"
else
  skip_tests 2 "CommLog is psqlODBC's"
fi

# ---- the Airflow DAG ---------------------------------------------------------
if is_warehouse sqlite; then
  DAG="$EX/airflow/dwload_dag.py"
  python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
    "$DAG" "$WORK/dag.pyc" 2>"$WORK/pyc.err"
  is "$?|$(cat "$WORK/pyc.err")" "0|" "the Airflow DAG compiles (py_compile)"
  # Airflow is not installed here: a stand-in package with the parts of
  # Airflow's API the DAG uses, BashOperator reproducing what Airflow's does
  # with an exit code (skip_on_exit_code -> AirflowSkipException, another
  # non-zero code -> AirflowException "... non-zero exit code N.", else the
  # last stdout line as the XCom value), runs the DAG's own operator on
  # real dwload runs.
  mkdir -p "$WORK/fake/airflow/operators"
  cat >"$WORK/fake/airflow/__init__.py" <<'PY'
class DAG:
    def __init__(self, dag_id, **kw): self.dag_id = dag_id
    def __enter__(self): return self
    def __exit__(self, *a): return False
PY
  cat >"$WORK/fake/airflow/exceptions.py" <<'PY'
class AirflowException(Exception): pass
class AirflowSkipException(AirflowException): pass
class AirflowFailException(AirflowException): pass
PY
  : >"$WORK/fake/airflow/operators/__init__.py"
  cat >"$WORK/fake/airflow/operators/bash.py" <<'PY'
import os, subprocess
from airflow.exceptions import AirflowException, AirflowSkipException
class BashOperator:
    def __init__(self, *, task_id, bash_command, env=None, append_env=False, skip_on_exit_code=99, **kw):
        self.task_id, self.bash_command, self.skip = task_id, bash_command, skip_on_exit_code
        self.env = dict(os.environ, **(env or {})) if append_env else env
    def __rshift__(self, other): return other
    def __rrshift__(self, other): return self
    def execute(self, context):
        r = subprocess.run(["bash", "-c", self.bash_command], env=self.env, stdout=subprocess.PIPE, text=True)
        if r.returncode == self.skip:
            raise AirflowSkipException(f"Bash command returned exit code {r.returncode}. Skipping.")
        if r.returncode != 0:
            raise AirflowException(f"Bash command failed. The command returned a non-zero exit code {r.returncode}.")
        lines = r.stdout.splitlines()
        return lines[-1] if lines else None
PY
  cat >"$WORK/fake/airflow/operators/python.py" <<'PY'
class PythonOperator:
    def __init__(self, *, task_id, python_callable, op_kwargs=None, **kw):
        self.task_id, self.python_callable, self.op_kwargs = task_id, python_callable, op_kwargs or {}
    def __rshift__(self, other): return other
    def __rrshift__(self, other): return self
PY
  cat >"$WORK/fake/pendulum.py" <<'PY'
def datetime(*a, **kw): return None
PY
  cp "$DAG" "$WORK/dag_under_test.py"
  mkdir "$WORK/jobs"
  sed -e "s|^  path: .*|  path: $WORK/customers_day1.csv|" -e 's|^job: .*|job: dag_customers|' \
    -e 's|^  table: .*|  table: dag_customer_dim|' "$WORK/customers.yaml" >"$WORK/jobs/customers.yaml"
  printf 'version: 1\njob: broken\nsource: {plugin: csv}\n' >"$WORK/jobs/broken.yaml"
  sed "s|^  path: .*|  path: $TOP_SRCDIR/tests/data/spine/ragged.csv|" "$WORK/append.yaml" >"$WORK/jobs/ragged.yaml"
  PYTHONPATH="$WORK/fake:$WORK" DWLOAD_BIN="$DWLOAD" DWLOAD_JOBS_DIR="$WORK/jobs" python3 - >"$WORK/dag.out" 2>"$WORK/dag.err" <<'PY'
import json
import dag_under_test as d
from airflow.exceptions import AirflowException, AirflowFailException, AirflowSkipException

def outcome(job):
    op = d.DwloadRunOperator(task_id="t_" + job, job_file=job + ".yaml")
    try:
        return "ok " + json.loads(op.execute({}))["status"]
    except AirflowSkipException:
        return "skipped"
    except AirflowFailException:
        return "failed, no retry"
    except AirflowException:
        return "failed, retry"

print(outcome("customers"))   # loads the day 1 feed
print(outcome("customers"))   # nothing new: --empty-exit 99
print(outcome("broken"))      # exit 2
print(outcome("ragged"))      # exit 4 (a rejected row)

class TI:
    def __init__(self, values): self.values = values
    def xcom_pull(self, task_ids): return self.values.get(task_ids)
summary = '{"job":"a","status":"ok","mode":"append","read":3,"skipped":0,"inserted":3,"expired":0,"updated":0,"deleted":0,"unchanged":0,"rejected":0,"checkpoint":"2024-01-01","seconds":0.1}'
print(d.report_summaries(TI({"x": summary}), ["x", "skipped_task"])["inserted"])
PY
  is "$?|$(tr '\n' '/' <"$WORK/dag.out")" "0|ok ok/skipped/failed, no retry/failed, no retry/a: ok, read 3, inserted 3, expired 0, updated 0, deleted 0, checkpoint 2024-01-01, 0.1s/3/" \
    "the DAG's operator: 0 pushes the summary, 99 skips, 2 and 4 fail without retry (airflow_dag.sh: all codes)" ||
    sed 's/^/# /' "$WORK/dag.err"
else
  skip_tests 2 "the Airflow DAG is checked once, on SQLite"
fi

done_testing
