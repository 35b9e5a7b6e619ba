#!/bin/sh
# Secrets: jobs whose connection strings hold a password made for this test
# (a user of its own on PostgreSQL and MariaDB, who logs in with it), run
# with debug logging through successes and every kind of failure (wrong
# password, unknown host, an SQL error, a data error, a locked job, job
# files that do not parse), and http_json jobs with the token in a header
# and the URL (good, 401, echoed back, timeout); then everything dwload wrote is searched for
# the password: standard output (summaries, check, state, plan --sql,
# asof), standard error (logs and errors), reject files and the rows of
# dwload_state.  None may hold it.
#
# To cover another place a secret goes (HTTP headers, say), add a `probe`
# below whose job holds "$SECRET" there, and files to `searched`.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# Unique per run, and nothing else holds it.
SECRET="Sx$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')Q"
WRONG="Wr$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')Q"
SECRET_USER="dwl_sec_$$"

# The connection string of the test's own user, with PASSWORD as password.
# The SQLite driver takes no password; the attribute must still be kept
# out of every message (in braces, with a ';' in it, too).
conn_with() {
  if is_warehouse sqlite; then wh_user_conn "" "{a;$1}" "${2:-}"; else wh_user_conn "$SECRET_USER" "$1" "${2:-}"; fi
}
if is_warehouse sqlite; then
  BAD_HOST_CONN="Driver=SQLite3;Database=$WORK/no/such/dir/wh.db;PWD=$SECRET"
else
  wh_login_user "$SECRET_USER" "$SECRET"
  BAD_HOST_CONN=$(conn_with "$SECRET" no-such-host.invalid)
fi
GOOD_CONN=$(conn_with "$SECRET")

# sjob NAME CONNECTION TABLE CSV [LOAD-LINES]: an scd2 job with a reject file
sjob() {
  conn_job "$1" "$2" "$3" "$4" "  max_rejects: 5
  reject_file: $1.rejects.csv
${5:-}"
}

OUTS="$WORK/outputs"
mkdir -p "$OUTS"
N=0

# probe WANT-RC NAME ARGS...: runs dwload --log-level debug ARGS, keeps its
# output for the search, and checks its exit status
probe() {
  _want=$1
  _name=$2
  shift 2
  N=$((N + 1))
  "$DWLOAD" --log-level debug "$@" >"$OUTS/$N.$_name.out" 2>"$OUTS/$N.$_name.err"
  _rc=$?
  is "$_rc" "$_want" "$_name: exit $_want"
  [ "$_rc" = "$_want" ] || sed 's/^/#   /' "$OUTS/$N.$_name.err"
  is "$(cat "$OUTS/$N.$_name.out" "$OUTS/$N.$_name.err" | grep -c -F -e "$SECRET" -e "$WRONG")" 0 \
    "$_name: the password is in neither stdout nor stderr"
}

FEED=$(file feed.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,not a time
3,Cat,2024-01-03 00:00:00
EOF
)

# ---- successes ---------------------------------------------------------------
J=$(sjob plain "$GOOD_CONN" dim "$FEED")
probe 0 "run (password written in the job file)" run "$J"
like "$(cat "$OUTS/$N."*.err)" "***" "the log shows the connection with the password masked"
probe 0 "check" check --connect "$J"
probe 0 "state" state "$J"
probe 0 "plan --sql" plan --sql "$J"
probe 0 "asof" asof "$J" --at '2024-01-02 00:00:00'
export DWL_SECRET_CONN="$GOOD_CONN"
J=$(sjob fromenv '${DWL_SECRET_CONN}' dim2 "$FEED")
probe 0 "run (password from \${VAR})" run "$J"

# ---- failures ----------------------------------------------------------------
if ! is_warehouse sqlite; then
  J=$(sjob wrongpw "$(conn_with "$WRONG")" dim3 "$FEED")
  probe 1 "wrong password" run "$J"
  probe 1 "wrong password, check" check --connect "$J"
fi
J=$(sjob badhost "$BAD_HOST_CONN" dim4 "$FEED")
probe 1 "unreachable warehouse" run "$J"

# An SQL error: the table exists, and a CHECK constraint refuses a row.
sql "CREATE TABLE sqlerr (dim_id BIGINT, id BIGINT, name VARCHAR(20) CHECK (name <> 'Cat'), lmd TIMESTAMP,
     valid_from TIMESTAMP, valid_to TIMESTAMP, is_current BOOLEAN, is_deleted BOOLEAN)" >/dev/null
J=$(sjob sqlerr "$GOOD_CONN" sqlerr "$FEED")
probe 1 "an SQL error" run "$J"

# Too many bad rows: a data error, and a .failed reject file.
J=$(sjob baddata "$GOOD_CONN" dim5 "$FEED" "  lookup: scan")
sed -i 's/max_rejects: 5/max_rejects: 0/; s/reject_file: .*/reject_file: baddata.rejects.csv/' "$J"
probe 4 "a data error" run "$J"

# A locked job: the first run is held mid-way by a FIFO it reads.
FIFO="$WORK/feed.fifo"
mkfifo "$FIFO"
J=$(sjob locked "$GOOD_CONN" dim6 "$FEED")
exec 3<>"$FIFO"
FEED="$FIFO" "$DWLOAD" --log-level debug run "$J" >"$OUTS/held.out" 2>"$OUTS/held.err" 3>&- &
HELD=$!
printf 'id,name,lmd\n1,Ann,2024-01-01 00:00:00\n' >&3
wh_wait_running locked 10
T0=$(date +%s)
probe 3 "a locked job" run "$J"
T1=$(date +%s)
# The refusal waits for the lock once, SQLite's driver the Timeout=1000
# dwload adds (it used to drop it after the braced PWD={a;...} and wait
# its default 100 s, twice as long per statement: 200 s for the lock, as
# long again for the dwload_runs row): well within ten 1 s waits.
# A refused run writes no row to dwload_runs (which would wait for the
# database the other run holds).
REFUSED_ID=$(sed -n 's/.* info: run id //p' "$OUTS/$N.a locked job.err")
[ $((T1 - T0)) -lt 10 ] && pass "a locked job: refused within 10 lock waits of 1 s" ||
  fail "a locked job: refused within 10 lock waits of 1 s (took $((T1 - T0)) s)"
like "$(cat "$OUTS/$N.a locked job.err")" "run $REFUSED_ID is not recorded in dwload_runs: refused, another run holds the lock" \
  "a locked job: the log says the refused run leaves no row in dwload_runs"
exec 3>&-
wait "$HELD"
is "$?" 0 "the run that held the lock finishes"
is "$([ -n "$REFUSED_ID" ] && sql "SELECT count(*) FROM dwload_runs WHERE run_id = '$REFUSED_ID'")" 0 \
  "a locked job: dwload_runs has no row for the refused run"
is "$(cat "$OUTS/held.out" "$OUTS/held.err" | grep -c -F "$SECRET")" 0 \
  "the run that held the lock: the password is in neither stdout nor stderr"

# Job files that do not parse, with the password written in them.
cat >"$WORK/syntax.yaml" <<EOF
version: 1
job: syntax
target:
  connection: "$GOOD_CONN
  table: t
EOF
probe 2 "a YAML syntax error on the password's line" run "$WORK/syntax.yaml"
cat >"$WORK/unset.yaml" <<EOF
version: 1
job: unset
source: {plugin: csv, path: $FEED}
target:
  connection: "$GOOD_CONN;X=\${DWL_SURELY_UNSET_VAR}"
  table: t
EOF
probe 2 "an unset variable beside the password" run "$WORK/unset.yaml"
cat >"$WORK/malformed.yaml" <<EOF
version: 1
job: malformed
source: {plugin: csv, path: $FEED}
target:
  connection: "$GOOD_CONN;X=\${oops"
  table: t
EOF
probe 2 "a malformed variable beside the password" run "$WORK/malformed.yaml"
cat >"$WORK/shape.yaml" <<EOF
version: 1
job: shape
source: {plugin: csv, path: $FEED}
target:
  connection: ["$GOOD_CONN"]
  table: t
EOF
probe 2 "a connection that is not a string" run "$WORK/shape.yaml"

# ---- HTTP headers ---------------------------------------------------------------
# The same search for a token in an http_json job's headers (tests/httpd.py
# on loopback wants it in X-Api-Token) and in its URL's query: a good run,
# a wrong token (401), an error page that echoes the token back, and a
# timeout, all with debug logging.
API="$WORK/api"
mkdir "$API"
printf '%s\n' "$SECRET" >"$API/token"
printf '[{"id": 1, "name": "Ann", "lmd": "2024-01-01 10:00:00"}]\n' >"$API/people.json"
httpd_start "$API"
HTTPD_PID=$STARTED_PID
BASE="http://127.0.0.1:$(cat "$API/port")"
# token_job NAME PATH TOKEN: an scd2 job reading BASE/PATH with TOKEN in a header
# and in the URL's query
token_job() {
  cat >"$WORK/$1.yaml" <<EOF
version: 1
job: $1
source:
  plugin: http_json
  url: "$BASE/$2?api_key=$3"
  records: data
  next: links.next
  timeout: 2
  max_retries: 0
  headers:
    X-Api-Token: "$3"
  fields: {id: id, name: name, lmd: lmd}
target:
  connection: "$GOOD_CONN"
  table: $1
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
  echo "$WORK/$1.yaml"
}
probe 0 "http_json with the token in a header" run "$(token_job http_ok auth/next/people "$SECRET")"
probe 1 "http_json with a wrong token (401)" run "$(token_job http_401 auth/next/people "$WRONG")"
probe 1 "http_json: an error page that repeats the token" run "$(token_job http_echo echo "$SECRET")"
probe 1 "http_json: a timeout" run "$(token_job http_slow slow/5/next/people "$SECRET")"
is "$(sql 'SELECT count(*) FROM http_ok')" 1 "the run with the right token loaded its row"
kill "$HTTPD_PID" 2>/dev/null
wait "$HTTPD_PID" 2>/dev/null

# ---- what stays behind ---------------------------------------------------------
like "$(cat "$WORK/plain.rejects.csv" "$WORK/baddata.rejects.csv.failed" 2>&1)" "not a time" \
  "reject files were written (committed and failed runs)"
is "$(cat "$WORK"/*.rejects.csv* | grep -c -F "$SECRET")" 0 "the reject files do not hold the password"
STATE=$(sqln "SELECT * FROM dwload_state")
like "$STATE" "baddata" "dwload_state has the failed runs' rows"
is "$(printf '%s\n' "$STATE" | grep -c -F -e "$SECRET" -e "$WRONG")" 0 "dwload_state does not hold the password"
unlike "$(cat "$OUTS"/*)" "$SECRET" "no output at all holds the password"
if [ -d "$WORK/odbc" ]; then
  is "$(cat "$WORK"/odbc/* | grep -c -F "$SECRET")" 0 "the ODBC driver's own logs (psqlODBC's CommLog) do not hold it"
fi
# The search itself finds the password where it is.
is "$(grep -c -F "$SECRET" "$WORK/plain.yaml")" 1 "the search finds the password in the job file that holds it"

done_testing
