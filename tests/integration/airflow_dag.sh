#!/bin/sh
# The example Airflow DAG as Airflow runs it (tests/integration/airflow_dag.py
# stands in for Airflow): each load task runs twice, each time in a new
# empty working folder with the environment the DAG sets, on the shipped
# job files unchanged, and the second run finds the first one's data
# (nothing past the checkpoint: skipped); and the DAG retries exactly the
# exit codes its docs say (1, 3, 5, 128+N), fails 2, 4 and 6 at once and
# skips 99.
. "$TOP_SRCDIR/tests/integration/lib.sh"

DAG="$TOP_SRCDIR/conf/examples/airflow/dwload_dag.py"
EX="$TOP_SRCDIR/conf/examples"
HELPER="$TOP_SRCDIR/tests/integration/airflow_dag.py"

python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
  "$DAG" "$WORK/dag.pyc" 2>"$WORK/pyc.err"
is "$?|$(cat "$WORK/pyc.err")" "0|" "the DAG compiles (py_compile)"

# The workers' folder: the job files and feeds as they ship.
HOME_DIR="$WORK/dwload_home"
mkdir -p "$HOME_DIR/jobs"
cp "$EX/append.yaml" "$EX/scd2.yaml" "$EX"/customers_day*.csv "$HOME_DIR/jobs/"
# Nothing of the test's own may stand in for what the DAG must set.
unset DWLOAD_WAREHOUSE DWLOAD_FEED DW_HOST DW_PORT DW_DATABASE DW_USER DW_PASSWORD
export DWLOAD_BIN="$DWLOAD" DWLOAD_HOME="$HOME_DIR" DWLOAD_JOBS_DIR="$HOME_DIR/jobs"

# dag ARGS...: the helper; its lines in OUT
dag() {
  OUT=$(python3 "$HELPER" "$WORK" "$DAG" "$@" 2>"$WORK/dag.err")
  RC=$?
  [ "$RC" = 0 ] || sed 's/^/# /' "$WORK/dag.err"
}
# run_line TASK RUN: the OUTCOME of that run
run_line() {
  printf '%s\n' "$OUT" | awk -v t="$1" -v r="$2" '$1 == t && $2 == r { sub(/^([^ ]+ ){4}/, ""); print }'
}
# summary_of TASK RUN FIELD: a field of that run's summary
summary_of() {
  run_line "$1" "$2" | sed 's/^ok://' | python3 -c '
import json, sys
print(json.loads(sys.stdin.read()).get(sys.argv[1], "MISSING"))' "$3" 2>/dev/null
}

DWLOAD_HOME=relative/home DWLOAD_JOBS_DIR= dag import
is "$OUT" "import error: ValueError: DWLOAD_HOME must be an absolute path, not 'relative/home'" \
  "a relative DWLOAD_HOME is refused when the DAG is parsed"

# ---- load_customer_changes: append.yaml, SQLite -------------------------------
dag run load_customer_changes
is "$RC" 0 "the append task ran twice"
is "$(summary_of load_customer_changes 1 status)|$(summary_of load_customer_changes 1 inserted)" "ok|4" \
  "run 1: the day 1 feed loaded, its summary is the XCom value"
is "$(run_line load_customer_changes 2)" skipped \
  "run 2, in another new folder: nothing past the first run's checkpoint, skipped (exit 99)"
is "$(printf '%s\n' "$OUT" | awk '{ print $3 }' | sort -u)" empty "both runs started in an empty folder"
is "$(printf '%s\n' "$OUT" | awk '{ print $4 }' | sort -u | wc -l)" 2 "... a different one each time"
is "$(sqlite3 "$HOME_DIR/warehouse.db" 'SELECT count(*) FROM customer_changes')" 4 \
  "the warehouse is DWLOAD_HOME/warehouse.db and holds the rows once"

# ---- load_customer_dim: scd2.yaml, PostgreSQL ------------------------------
if is_warehouse postgresql; then
  sql "CREATE SCHEMA dw"
  DW_CONN_HOST=$DWL_PG_HOST DW_CONN_PORT=$DWL_PG_PORT DW_CONN_SCHEMA=$WH_DB DW_CONN_LOGIN=$DWL_PG_USER \
    DW_CONN_PASSWORD=$DWL_PG_PASSWORD dag run load_customer_dim
  is "$(summary_of load_customer_dim 1 status)|$(summary_of load_customer_dim 1 inserted)" "ok|4" \
    "scd2 run 1: the connection's host, port, database, login and password reach the job file"
  is "$(run_line load_customer_dim 2)" skipped "scd2 run 2: it finds the first run's checkpoint, skipped"
  is "$(sql 'SELECT count(*) FROM dw.customer_history')" 4 "scd2: one version per customer, loaded once"
  unlike "$OUT$(cat "$WORK/dag.err")" "$DWL_PG_PASSWORD" "scd2: the password is not in the task's output"
else
  skip_tests 4 "scd2.yaml is a PostgreSQL job"
fi

# ---- exit codes: retried, failed at once, skipped ----------------------------
dag codes 0 1 2 3 4 5 6 99 129 130 143
is "$(printf '%s\n' "$OUT" | sed -n 's/^\([0-9]*\) \([a-z-]*\).*/\1 \2/p' | tr '\n' '/')" \
  "0 ok/1 failed-retry/2 failed-no-retry/3 failed-retry/4 failed-no-retry/5 failed-retry/6 failed-no-retry/99 skipped/129 failed-retry/130 failed-retry/143 failed-retry/" \
  "1, 3, 5 and 128+N are retried; 2, 4 and 6 fail at once; 99 skips"
is "$(printf '%s\n' "$OUT" | grep RETRY_EXITS | tr '\n' '/')" "RETRY_EXITS 1,3,5/NO_RETRY_EXITS 2,4,6/" \
  "the DAG's tables say the same"
# What the DAG's docstring and README say.
for c in 1 3 5 128+N 2 4 6 99; do
  grep -q "^  $c  *[a-z-]" "$DAG" && pass "the DAG's docstring says what exit $c does" ||
    fail "the DAG's docstring says what exit $c does"
done
like "$(cat "$TOP_SRCDIR/README.md")" "retries with exponential backoff for exits 1, 3, 5 and 128+N" \
  "README: the retried codes"
like "$(cat "$TOP_SRCDIR/README.md")" "exits 2, 4 and 6 failing at once without retries" "README: the codes failed at once"

done_testing
