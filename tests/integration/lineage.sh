#!/bin/sh
# OpenLineage run events of `dwload run` (dwload(1), LINEAGE): START and
# COMPLETE of committed runs and START and FAIL of a failed one, appended to
# a --lineage-file, every event validated against the vendored OpenLineage
# schema (tests/data/openlineage) and checked against the run's summary
# (runId, the counts, the datasets); POSTed to an endpoint (--lineage-url,
# $OPENLINEAGE_URL, $OPENLINEAGE_ENDPOINT, $OPENLINEAGE_NAMESPACE) that
# tests/integration/ol_httpd.py records; the datasets of other sources (an
# ODBC table, a URL); no password or token in any event or message; and an
# endpoint or a file that fails changes neither the run's outcome nor its
# exit status.
. "$TOP_SRCDIR/tests/integration/lib.sh"
unset OPENLINEAGE_URL OPENLINEAGE_ENDPOINT OPENLINEAGE_NAMESPACE

SCHEMAS="$TOP_SRCDIR/tests/data/openlineage"
EV="$WORK/events.jsonl"

# valid FILE: the checker's verdict on every event of FILE ("ok N")
valid() {
  python3 "$TOP_SRCDIR/tests/integration/ol_check.py" "$SCHEMAS" "$1"
}

# ev FILE N EXPR: Python expression EXPR on event N (1-based; -1 the last)
# of FILE, as `e`; prints its value (JSON text for lists and objects)
ev() {
  python3 -c '
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
n = int(sys.argv[2])
e = json.loads(lines[n - 1 if n > 0 else n])
v = eval(sys.argv[3])
print(json.dumps(v) if isinstance(v, (list, dict)) else v)' "$@"
}

# summary_counts: the summary's counts as the dwload facet lists them
summary_counts() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
print(",".join(str(s[k]) for k in ("read", "skipped", "inserted", "expired", "updated", "deleted", "unchanged", "rejected")))'
}
FACET_COUNTS='",".join(str(e["run"]["facets"]["dwload"][k]) for k in ("read", "skipped", "inserted", "expired", "updated", "deleted", "unchanged", "rejected"))'

case $WAREHOUSE in
  sqlite) OUT_NS="odbc://localhost" OUT_NAME="$WH.d_lin" ;;
  postgresql) OUT_NS="odbc://$DWL_PG_HOST:$DWL_PG_PORT" OUT_NAME="$WH_DB.d_lin" ;;
  mariadb) OUT_NS="odbc://$DWL_MARIADB_HOST:$DWL_MARIADB_PORT" OUT_NAME="$WH_DB.d_lin" ;;
esac
PASSWORD=${DWL_PG_PASSWORD:-}
is_warehouse mariadb && PASSWORD=$DWL_MARIADB_PASSWORD

# ---- the checker: it rejects what it should --------------------------------
printf '%s\n' '{"eventType":"START","eventTime":"2024-01-01T00:00:00Z","run":{"runId":"0b5d2b3c-1f6e-4c1a-9d2e-3f4a5b6c7d8e"},"job":{"namespace":"n","name":"j"},"producer":"https://example.invalid/p","schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}' >"$WORK/good.jsonl"
is "$(valid "$WORK/good.jsonl")" "ok 1" "checker: a minimal valid RunEvent passes"
sed 's/"schemaURL":"[^"]*"/"x":1/' "$WORK/good.jsonl" >"$WORK/bad1.jsonl"
like "$(valid "$WORK/bad1.jsonl")" "not a valid OpenLineage event" "checker: an event without schemaURL fails the schema"
sed 's/"runId":"[^"]*"/"runId":"run-1"/' "$WORK/good.jsonl" >"$WORK/bad2.jsonl"
like "$(valid "$WORK/bad2.jsonl")" "runId is not a UUID" "checker: a runId that is no UUID fails"
sed 's/"run":{/"run":{"facets":{"errorMessage":{"_producer":"https:\/\/x.invalid","_schemaURL":"https:\/\/x.invalid\/s","message":"m"}},/' \
  "$WORK/good.jsonl" >"$WORK/bad3.jsonl"
like "$(valid "$WORK/bad3.jsonl")" "facet errorMessage" "checker: a facet missing a required member fails its schema"

# ---- committed runs to a file ------------------------------------------------
printf 'id,name,lmd\n1,ann,2024-01-01\n2,bob,2024-01-02\n' >"$WORK/day1.csv"
J=$(mkjob lin "\${FEED:-$WORK/day1.csv}" d_lin <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
dw run --lineage-file "$EV" "$J"
is "$RC|$(field status)" "0|ok" "day 1: the run commits"
RUN1=$(field run_id)
is "$(wc -l <"$EV" | tr -d ' ')" 2 "day 1: two events in the file"
is "$(valid "$EV")" "ok 2" "day 1: both events are valid OpenLineage RunEvents"
is "$(ev "$EV" 1 'e["eventType"]')|$(ev "$EV" 2 'e["eventType"]')" "START|COMPLETE" "day 1: START, then COMPLETE"
is "$(ev "$EV" 1 'e["run"]["runId"]')|$(ev "$EV" 2 'e["run"]["runId"]')" "$RUN1|$RUN1" \
  "day 1: both events carry the run id of the summary"
is "$(ev "$EV" 2 'e["job"]["namespace"] + "|" + e["job"]["name"]')" "dwload|lin" "the job: namespace dwload, the job's name"
is "$(ev "$EV" 1 'e["inputs"]')" "[{\"namespace\": \"file\", \"name\": \"$WORK/day1.csv\"}]" \
  "the input: the CSV file, by its absolute path"
is "$(ev "$EV" 2 'e["outputs"][0]["namespace"] + "|" + e["outputs"][0]["name"]')" "$OUT_NS|$OUT_NAME" \
  "the output: the target table, named by the connection's server and database"
is "$(ev "$EV" 2 'e["run"]["facets"]["dwload"]["mode"] + "|" + e["run"]["facets"]["dwload"]["status"]')" "scd2|ok" \
  "COMPLETE: the dwload facet says the mode and status ok"
is "$(ev "$EV" 2 "$FACET_COUNTS")" "$(summary_counts)" "COMPLETE: the dwload facet's counts are the summary's"
is "$(ev "$EV" 2 'e["run"]["facets"]["dwload"]["checkpoint"]')" "$(field checkpoint)" \
  "COMPLETE: the dwload facet's checkpoint is the summary's"
is "$(ev "$EV" 2 'e["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"]')" 2 \
  "COMPLETE: outputStatistics.rowCount counts the rows written"
is "$(ev "$EV" 1 '"facets" in e["run"] or "outputFacets" in e["outputs"][0]')" False "START: no counts yet"

printf 'id,name,lmd\n1,ann,2024-01-01\n2,bobby,2024-01-03\n3,cy,2024-01-03\n' >"$WORK/day2.csv"
FEED="$WORK/day2.csv" dw run --lineage-file "$EV" "$J"
is "$RC|$(field inserted)|$(field expired)" "0|2|1" "day 2: one new version, one new key"
is "$(valid "$EV")" "ok 4" "day 2: appended; every event is valid"
is "$(ev "$EV" 3 'e["run"]["runId"]')|$(ev "$EV" -1 'e["run"]["runId"]')" "$(field run_id)|$(field run_id)" \
  "day 2: its events carry its own run id"
unlike "$(ev "$EV" -1 'e["run"]["runId"]')" "$RUN1" "day 2: a new run id, not day 1's"
is "$(ev "$EV" -1 'e["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"]')" \
  "$(($(field inserted) + $(field expired) + $(field updated) + $(field deleted)))" \
  "day 2: rowCount is inserted + expired + updated + deleted of the summary"
is "$(ev "$EV" -1 "$FACET_COUNTS")" "$(summary_counts)" "day 2: the facet's counts are the summary's"

# ---- a failed run --------------------------------------------------------------
before=$(tdump d_lin)
printf 'id,name,lmd\n1,ann,2024-01-05\n4,"dee,2024-01-05\n' >"$WORK/bad.csv"
FEED="$WORK/bad.csv" dw run --lineage-file "$EV" "$J"
is "$RC|$(field status)" "1|failed" "a bad feed: the run fails (exit 1)"
is "$(tdump d_lin)" "$before" "a bad feed: nothing written"
is "$(valid "$EV")" "ok 6" "a bad feed: START and FAIL appended, both valid"
is "$(ev "$EV" 5 'e["eventType"]')|$(ev "$EV" -1 'e["eventType"]')" "START|FAIL" "a bad feed: START, then FAIL"
is "$(ev "$EV" -1 'e["run"]["runId"]')" "$(field run_id)" "FAIL: the failed run's id"
like "$(ev "$EV" -1 'e["run"]["facets"]["errorMessage"]["message"]')" "bad.csv:3: unterminated quoted field" \
  "FAIL: errorMessage holds the run's error, with the file and line"
is "$(ev "$EV" -1 'e["run"]["facets"]["dwload"]["status"]')" failed "FAIL: the dwload facet says failed"
is "$(ev "$EV" -1 '"outputFacets" in e["outputs"][0]')" False "FAIL: no outputStatistics: nothing was written"

# ---- an interrupted run -----------------------------------------------------------
# Blocked reading a FIFO after it read the checkpoint under the lock, then
# SIGTERM: rolled back, exit 143, and ABORT after START.
mkfifo "$WORK/feed.fifo"
exec 3<>"$WORK/feed.fifo"
: >"$WORK/r.err"
FEED="$WORK/feed.fifo" env --default-signal=TERM "$DWLOAD" run --lineage-file "$EV" "$J" >"$WORK/r.out" 2>"$WORK/r.err" 3>&- &
PID=$!
echo "id,name,lmd" >&3
if wait_until 300 grep -qF "checkpoint 2024-01-03" "$WORK/r.err"; then
  pass "SIGTERM: the run reads its source"
else
  fail "SIGTERM: the run reads its source" "$(cat "$WORK/r.err")"
fi
kill -TERM "$PID"
finish "$PID" 60
is "$?" 143 "SIGTERM: exit 143"
exec 3>&-
LAST=$(tail -n 1 "$WORK/r.out")
is "$(valid "$EV")" "ok 8" "SIGTERM: START and ABORT appended, both valid"
is "$(ev "$EV" 7 'e["eventType"]')|$(ev "$EV" -1 'e["eventType"] + "|" + e["run"]["runId"]')" "START|ABORT|$(field run_id)" \
  "SIGTERM: START, then ABORT, of the interrupted run"
is "$(ev "$EV" -1 'e["run"]["facets"]["dwload"]["status"]')" interrupted "ABORT: the dwload facet says interrupted"
like "$(ev "$EV" -1 'e["run"]["facets"]["errorMessage"]["message"]')" "interrupted by SIGTERM" \
  "ABORT: errorMessage says the signal"

# ---- HTTP ----------------------------------------------------------------------
API="$WORK/api"
mkdir "$API" || exit 1
python3 "$TOP_SRCDIR/tests/integration/ol_httpd.py" "$API" 2>"$API.err" &
SRV=$!
if ! wait_until 100 test -s "$API/port"; then
  echo "Bail out! ol_httpd.py did not start: $(cat "$API.err")"
  exit 1
fi
BASE="http://127.0.0.1:$(cat "$API/port")"
# wait_posts N: until the server has kept N events (bounded: 10 s)
wait_posts() {
  wait_until 100 eval '[ "$(wc -l <"$API/events.jsonl" 2>/dev/null | tr -d " ")" -ge '"$1"' ]'
}

printf 'id,name,lmd\n1,ann,2024-01-01\n2,bobby,2024-01-03\n3,cy,2024-01-04\n' >"$WORK/day3.csv"
FEED="$WORK/day3.csv" dw run --lineage-url "$BASE/" "$J"
is "$RC|$(field status)" "0|ok" "--lineage-url: the run commits"
wait_posts 2
is "$(cat "$API/requests.log")" "POST /api/v1/lineage application/json
POST /api/v1/lineage application/json" "--lineage-url: two POSTs to /api/v1/lineage, as application/json"
is "$(valid "$API/events.jsonl")" "ok 2" "--lineage-url: both bodies are valid RunEvents"
is "$(ev "$API/events.jsonl" 1 'e["eventType"] + "|" + e["run"]["runId"]')|$(ev "$API/events.jsonl" 2 'e["eventType"] + "|" + e["run"]["runId"]')" \
  "START|$(field run_id)|COMPLETE|$(field run_id)" "--lineage-url: START and COMPLETE of this run"
is "$(ev "$API/events.jsonl" 2 "$FACET_COUNTS")" "$(summary_counts)" "--lineage-url: the counts are the summary's"

: >"$API/requests.log"
OPENLINEAGE_URL=$BASE OPENLINEAGE_ENDPOINT=/custom/path OPENLINEAGE_NAMESPACE=nightly dw run "$J"
is "$RC" 0 "OPENLINEAGE_URL: the run commits"
wait_posts 4
is "$(cut -d' ' -f2 "$API/requests.log" | sort -u)" "/custom/path" "OPENLINEAGE_URL + OPENLINEAGE_ENDPOINT: posted there"
is "$(ev "$API/events.jsonl" -1 'e["eventType"] + "|" + e["job"]["namespace"]')" "COMPLETE|nightly" \
  "OPENLINEAGE_NAMESPACE names the job's namespace"

# ---- emitting fails: the run does not ----------------------------------------
: >"$API/requests.log"
dw run --lineage-url "$BASE/fail500" --lineage-file "$WORK/no/such/dir/ev.jsonl" "$J"
is "$RC|$(field status)" "0|ok" "an endpoint answering 500 and an unwritable file: the run still commits, exit 0"
like "$ERR" "could not send an OpenLineage event to $BASE/fail500/api/v1/lineage: the server answered HTTP 500" \
  "the endpoint's failure is a warning naming it"
like "$ERR" "could not write an OpenLineage event to $WORK/no/such/dir/ev.jsonl: No such file or directory" \
  "the file's failure is a warning naming it"
is "$(grep -c . "$API/requests.log")" 2 "the failing endpoint was tried for START and COMPLETE"
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null
dw run --lineage-url "$BASE" "$J"
is "$RC|$(field status)" "0|ok" "an endpoint that refuses connections: the run still commits, exit 0"
like "$ERR" "could not send an OpenLineage event to $BASE/api/v1/lineage" "a refused connection is a warning"
FEED="$WORK/bad.csv" dw run --lineage-url "$BASE" "$J"
is "$RC|$(field status)" "1|failed" "a failing run with a failing endpoint still exits 1"

# ---- other sources' datasets; no secret in any event -------------------------
sqlite3 "$WORK/shop.db" "CREATE TABLE orders (id INTEGER PRIMARY KEY, lmd TEXT); INSERT INTO orders VALUES (1, '2024-01-01')"
cat >"$WORK/osrc.yaml" <<EOF
version: 1
job: osrc
source:
  plugin: odbc
  connection: "Driver=SQLite3;Database=$WORK/shop.db;Pwd=src-secret-42"
  table: orders
target:
  connection: "$WH_CONN"
  table: o_lin
EOF
dw run --lineage-file "$WORK/o.jsonl" "$WORK/osrc.yaml"
is "$RC" 0 "an odbc source: the run commits"
is "$(ev "$WORK/o.jsonl" 1 'e["inputs"][0]["namespace"] + "|" + e["inputs"][0]["name"]')" \
  "odbc://localhost|$WORK/shop.db.orders" "an odbc source: its table, by connection and name"
cat >"$WORK/hsrc.yaml" <<EOF
version: 1
job: hsrc
source:
  plugin: http_json
  url: "http://user:url-secret-7@127.0.0.1:9/v1/items?token=tok-secret-9"
target:
  connection: "$WH_CONN"
  table: h_lin
EOF
dw run --lineage-file "$WORK/h.jsonl" "$WORK/hsrc.yaml"
is "$RC" 1 "an http_json source that cannot connect: the run fails"
is "$(valid "$WORK/h.jsonl")" "ok 2" "an http_json source: START and FAIL, valid"
unlike "$ERR" "secret" "an http_json source: no credential or token in the messages"
is "$(ev "$WORK/h.jsonl" 1 'e["inputs"][0]["namespace"] + "|" + e["inputs"][0]["name"]')" "http://127.0.0.1:9|/v1/items" \
  "an http_json source: the URL's origin and path, without credentials or query"
secrets=$(cat "$EV" "$WORK/o.jsonl" "$WORK/h.jsonl" "$API/events.jsonl" | grep -c -e 'src-secret-42' -e 'url-secret-7' \
  -e 'tok-secret-9' ${PASSWORD:+-e "$PASSWORD"})
is "$secrets" 0 "no password, URL credential or token in any event"
dw run --lineage-url "http://lin:url-pass-3@127.0.0.1:9/base?key=k-secret-5" "$J"
is "$RC" 0 "a --lineage-url with credentials that cannot connect: the run commits"
like "$ERR" "could not send an OpenLineage event to http://127.0.0.1:9/base/api/v1/lineage" \
  "the warning names the endpoint without its credentials"
unlike "$ERR" "url-pass-3" "no --lineage-url credential in the messages"

# ---- only run emits --------------------------------------------------------------
dw plan --lineage-file "$WORK/plan.jsonl" "$J"
is "$RC|$([ -e "$WORK/plan.jsonl" ] && echo file)" "2|" "plan refuses --lineage-file (exit 2) and writes nothing"
like "$ERR" "--lineage-file applies only to run" "plan --lineage-file: the message says why"

done_testing
