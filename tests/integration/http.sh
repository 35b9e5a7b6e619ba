# The http_json source through the real binary, against tests/httpd.py on
# loopback: an SCD2 dimension loaded from a paginated API with a token
# header and since_param, run again after the API's data changed; every
# pagination style; retries (429 with Retry-After, 500s) checked in the
# server's request log; and the bad responses (timeout, truncated body,
# HTML, redirect loop, page over the cap, a failing later page), each
# failing with exit 1, the page and the redacted URL, and nothing
# committed; and TLS against an HTTPS server with a self-signed certificate
# (verified by default, ca_file, insecure: true, a wrong host name).
# Token values must never be printed.
. "$TOP_SRCDIR/tests/integration/lib.sh"

API="$WORK/api"
mkdir "$API" || exit 1
REQS="$API/requests.log"

# ---- the server ------------------------------------------------------------
if ! httpd_start "$API"; then
  echo "Bail out! tests/httpd.py did not start: $(cat "$API.err")"
  exit 1
fi
HTTPD_PID=$STARTED_PID
PORT=$(cat "$API/port")
BASE="http://127.0.0.1:$PORT"

# The token the server wants, and the job's: never in any output.
API_TOKEN="tok-$$-Zq81vXk"
printf '%s\n' "$API_TOKEN" >"$API/token"
export API_TOKEN
API_KEY="key-$$-Wm27"
export API_KEY

# hjob NAME TABLE MODE SOURCE-OPTION-LINES: an http_json job; the rest of
# the load: section (after mode) comes on stdin.  Prints the path.
hjob() {
  {
    printf 'version: 1\njob: %s\nsource:\n  plugin: http_json\n%s\n' "$1" "$4"
    printf 'target:\n  connection: "%s"\n  table: %s\nload:\n  mode: %s\n' "$WH_CONN" "$2" "$3"
    cat
  } >"$WORK/$1.yaml"
  echo "$WORK/$1.yaml"
}

# reqs PATTERN: the request log lines that contain PATTERN
reqs() {
  grep -F -- "$1" "$REQS" 2>/dev/null
}

# no_token MSG: the last run printed neither token
no_token() {
  case "$OUT$ERR" in
    *"$API_TOKEN"* | *"$API_KEY"*) fail "$1: a secret was printed" "$OUT" "$ERR" ;;
    *) pass "$1: no secret printed" ;;
  esac
}

# kept: the data tables' rows and every job's checkpoint (a failed run
# records its failure in dwload_state, and nothing else)
kept() {
  for _t in d_customers p_next; do
    [ "$(table_exists "$_t")" = 0 ] || tdump "$_t" id
  done
  sqln "SELECT job, checkpoint FROM dwload_state WHERE checkpoint IS NOT NULL ORDER BY job"
}

# ---- (1) SCD2 from the API, run twice with the data changed ------------------
cat >"$API/customers.json" <<'EOF'
[{"id": 1, "name": "Ann", "addr": {"city": "Oslo", "zip": "0150"}, "tags": ["vip"], "lmd": "2024-01-01 10:00:00"},
 {"id": 2, "name": "Bob", "addr": {"city": "Rome"}, "tags": [], "lmd": "2024-01-02 10:00:00"},
 {"id": 3, "name": "Cy", "addr": null, "tags": null, "lmd": "2024-01-03 10:00:00"}]
EOF
j=$(hjob customers d_customers scd2 "  url: $BASE/auth/next/customers
  records: data
  next: links.next
  since_param: since
  headers:
    X-Api-Token: \${API_TOKEN}
  fields:
    id: id
    name: name
    city: addr.city
    tags: tags
    lmd: lmd
  types:
    id: integer
    lmd: timestamp" <<'EOF'
  key: id
  lmd: lmd
  type2: [name, city, tags]
EOF
)
run_ok "$j" "scd2 day 1"
no_token "scd2 day 1"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "scd2 day 1: counts"
is "$(reqs /auth/next/customers)" "GET /auth/next/customers 200 token=ok
GET /auth/next/customers?page=2 200 token=ok" \
  "scd2 day 1: two pages, the token header sent to both, no since on a first run"
is "$(cols d_customers)" "dim_id,id,name,city,tags,lmd,valid_from,valid_to,is_current,is_deleted" \
  "scd2 day 1: the columns are the fields, in their order"

# day 2: Bob moves, Dee arrives, Ann and Cy unchanged
cat >"$API/customers.json" <<'EOF'
[{"id": 1, "name": "Ann", "addr": {"city": "Oslo", "zip": "0150"}, "tags": ["vip"], "lmd": "2024-01-01 10:00:00"},
 {"id": 2, "name": "Bob", "addr": {"city": "Paris"}, "tags": ["new"], "lmd": "2024-02-01 09:00:00"},
 {"id": 3, "name": "Cy", "addr": null, "tags": null, "lmd": "2024-01-03 10:00:00"},
 {"id": 4, "name": "Dee", "addr": {"city": "Lima"}, "tags": [{"k": "v"}, 1.5, true], "lmd": "2024-02-02 09:00:00"}]
EOF
: >"$REQS"
run_ok "$j" "scd2 day 2"
no_token "scd2 day 2"
is "$(counts)" "read=2 skipped=0 inserted=2 expired=1 updated=0 deleted=0 unchanged=0" \
  "scd2 day 2: only the rows past the checkpoint came (since_param)"
is "$(reqs /auth/next/customers)" "GET /auth/next/customers?since=2024-01-03+10%3a00%3a00 200 token=ok" \
  "scd2 day 2: the checkpoint went out as since"
is "$(sqln 'select dim_id, id, name, city, tags, lmd, valid_from, valid_to, is_current, is_deleted from d_customers order by dim_id')" \
"1|1|Ann|Oslo|[\"vip\"]|2024-01-01 10:00:00|2024-01-01 10:00:00|<null>|1|0
2|2|Bob|Rome|[]|2024-01-02 10:00:00|2024-01-02 10:00:00|2024-02-01 09:00:00|0|0
3|3|Cy|<null>|<null>|2024-01-03 10:00:00|2024-01-03 10:00:00|<null>|1|0
4|2|Bob|Paris|[\"new\"]|2024-02-01 09:00:00|2024-02-01 09:00:00|<null>|1|0
5|4|Dee|Lima|[{\"k\":\"v\"},1.5,true]|2024-02-02 09:00:00|2024-02-02 09:00:00|<null>|1|0" \
  "scd2 day 2: the whole dimension: Bob's old version closed, his new one and Dee's open; nested JSON as compact text"
is "$(field checkpoint)" "2024-02-02 09:00:00" "scd2 day 2: checkpoint"
is "$(sql 'select sum(id) from d_customers')" 12 "scd2: types: id is an integer column"

# day 3: nothing new; the fields keep the columns known
run_ok "$j" "scd2 day 3 (nothing new)"
is "$(counts)" "read=0 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "scd2 day 3: counts"

# a wrong token: exit 1, named, never printed, nothing written
before=$(kept)
j2=$(hjob badtoken d_customers scd2 "  url: $BASE/auth/next/customers
  records: data
  next: links.next
  max_retries: 0
  headers:
    X-Api-Token: \${API_KEY}" <<'EOF'
  key: id
  lmd: lmd
EOF
)
dw run "$j2"
is "$RC" 1 "wrong token: exit 1"
like "$ERR" "page 1 ($BASE/auth/next/customers): HTTP status 401" "wrong token: the status, page and URL"
no_token "wrong token"
like "$ERR" 'HTTP status 401; the response begins: {"error": "bad token"}' "wrong token: what the server said"
is "$(kept)" "$before" "wrong token: the warehouse is unchanged"

# ---- (1b) the shipped example, conf/examples/http_json.yaml ------------------
cat >"$API/crm.json" <<'EOF'
[{"id": 7, "name": "Grace", "address": {"city": "Arlington"}, "tags": ["navy"], "updated_at": "2024-03-01T08:00:00Z"},
 {"id": 9, "name": "Alan", "address": {"city": "Wilmslow"}, "tags": [], "updated_at": "2024-03-02T08:00:00+01:00"},
 {"id": 8, "name": "Ada", "address": {"city": "London"}, "tags": null, "updated_at": "2024-03-03T08:00:00Z"}]
EOF
ex="$WORK/http_json.yaml"
CONN=$WH_CONN awk '/^  connection: / { print "  connection: \"" ENVIRON["CONN"] "\""; next } { print }' \
  "$TOP_SRCDIR/conf/examples/http_json.yaml" >"$ex"
CRM_URL="$BASE/next/crm" CRM_TOKEN="$API_TOKEN"
export CRM_URL CRM_TOKEN
: >"$REQS"
run_ok "$ex" "example http_json.yaml, first run"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "example: counts"
is "$(sqln 'select id, name, city, tags, updated_at, is_current from customer_api_dim order by id')" \
"7|Grace|Arlington|[\"navy\"]|2024-03-01 08:00:00|1
8|Ada|London|<null>|2024-03-03 08:00:00|1
9|Alan|Wilmslow|[]|2024-03-02 07:00:00|1" \
  "example: the dimension, lmd values with zones in UTC"
sed 's/"Arlington"}, "tags": \["navy"\], "updated_at": "2024-03-01T08:00:00Z"/"New York"}, "tags": ["navy"], "updated_at": "2024-04-01T08:00:00Z"/' \
  "$API/crm.json" >"$API/crm.new" && mv "$API/crm.new" "$API/crm.json"
: >"$REQS"
run_ok "$ex" "example http_json.yaml, second run"
is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" "example, second run: counts"
is "$(reqs /next/crm | cut -d' ' -f2)" "/next/crm?updated_since=2024-03-03T08%3a00%3a00Z" \
  "example, second run: the checkpoint went out in ISO 8601"
is "$(sqln 'select id, city, valid_to, is_current from customer_api_dim where id = 7 order by valid_from')" \
"7|Arlington|2024-04-01 08:00:00|0
7|New York|<null>|1" "example, second run: Grace's move made a new version"
no_token "example"
unset CRM_URL CRM_TOKEN

# ---- (2) every pagination style, 5 records in pages of 2 -----------------------
cat >"$API/five.json" <<'EOF'
[{"id": "a", "n": 1}, {"id": "b", "n": 2.5}, {"id": "c", "n": null, "x": "extra"}, {"id": "d", "n": -7}, {"id": "e", "n": 1e21}]
EOF
ALL="a|1
b|2.5
c|<null>
d|-7
e|1e+21"
style() {
  # style NAME TABLE OPTION-LINES
  _j=$(hjob "$1" "$2" replace "$3" </dev/null)
  : >"$REQS"
  dw run "$_j"
  is "$RC" 0 "$1: exit 0"
  [ "$RC" = 0 ] || echo "# $ERR"
  is "$(sqln "select id, n from $2 order by id")" "$ALL" "$1: every record of every page"
}
style next p_next "  url: $BASE/next/five
  records: data
  next: links.next"
is "$(reqs /next/five | wc -l | tr -d ' ')" 3 "next: 3 pages requested"
like "$ERR" "member 'x' is not one of the columns" "next: a member missing from the first page is named in a warning"

style link p_link "  url: $BASE/link/five?size=2
  link_header: true
  fields: {id: id, n: n}"
is "$(reqs /link/five | cut -d' ' -f2 | paste -sd' ' -)" "/link/five?size=2 /link/five?size=2&page=2 /link/five?size=2&page=3" \
  "link_header: the rel=\"next\" links (relative) followed, rel=\"first\" not"

style pages p_pages "  url: $BASE/pages/five
  records: items
  page_param: page
  page_size_param: size
  page_size: 2"
is "$(reqs /pages/five | cut -d' ' -f2 | paste -sd' ' -)" \
  "/pages/five?size=2&page=1 /pages/five?size=2&page=2 /pages/five?size=2&page=3 /pages/five?size=2&page=4" \
  "page_param: numbers from 1 with the page size, until an empty page"

style cursor p_cursor "  url: $BASE/cursor/five
  records: results
  cursor_param: after
  cursor: meta.next_cursor"
is "$(reqs /cursor/five | cut -d' ' -f2 | paste -sd' ' -)" "/cursor/five /cursor/five?after=2 /cursor/five?after=4" \
  "cursor_param: each page's cursor sent for the next"

# ---- (3) retries ----------------------------------------------------------------
style retry429 p_429 "  url: $BASE/flaky/429/1/pages/five
  records: items
  page_param: page
  backoff_ms: 10"
is "$(reqs /flaky/429/1/pages/five?page=1 | cut -d' ' -f3 | paste -sd' ' -)" "429 200" \
  "429: the request was repeated after the 429"
like "$ERR" "HTTP status 429; retry 1 of 5 in 1000 ms (Retry-After)" "429: the wait came from Retry-After"

style retry500 p_500 "  url: $BASE/flaky/500/2/next/five
  records: data
  next: links.next
  max_retries: 2
  backoff_ms: 10"
is "$(reqs '/flaky/500/2/next/five ' | cut -d' ' -f3 | paste -sd' ' -)" "500 500 200" \
  "500 then success: two retries, then the page"

# ---- (4) bad responses: exit 1, page and redacted URL named, nothing written ------
before=$(kept)
# bad NAME URL-PATH EXTRA-OPTION-LINES EXPECTED-MESSAGE
bad() {
  _j=$(hjob "$1" p_next replace "  url: $BASE$2
  records: data
  next: links.next
  backoff_ms: 10
$3" </dev/null)
  dw run "$_j"
  is "$RC" 1 "$1: exit 1"
  like "$ERR" "$4" "$1: the message"
  is "$(field status)" "failed" "$1: the summary says failed"
  is "$(kept)" "$before" "$1: nothing written"
  is "$(sql "SELECT last_status FROM dwload_state WHERE job = '$1'")" failed "$1: the failure is recorded"
}
bad too_slow "/slow/3/next/five" "  timeout: 1
  max_retries: 0" "page 1 ($BASE/slow/3/next/five): Operation timed out after"
# The server logs the slow request when its answer ends, after dwload gave
# up: wait for that line (bounded), so no later check sees it arrive.
i=0
until [ -n "$(reqs "GET /slow/3/next/five")" ] || [ $i -ge 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
bad truncated "/truncated/five" "  max_retries: 1" "page 1 ($BASE/truncated/five): transfer closed with"
is "$(reqs '/truncated/five ' | wc -l | tr -d ' ')" 2 "truncated: retried once as a transfer error"
bad cut "/cut/five" "" "page 1 ($BASE/cut/five): truncated JSON: the body ends after"
bad html "/html" "" "page 1 ($BASE/html): the response is an HTML page, not JSON"
bad redirect_loop "/loop" "" "page 1 ($BASE/loop): redirect loop: more than 10 redirects"
bad page_cap "/big/300000" "  max_page_bytes: 100000" \
  "page 1 ($BASE/big/300000): the page is larger than max_page_bytes (100000 bytes)"
bad not_array "/cursor/five" "" "page 1 ($BASE/cursor/five): the records path 'data' is not in the response"
bad later_page "/failpage/3/next/five?api_key=\${API_KEY}" "  max_retries: 1" \
  "page 3 ($BASE/failpage/3/next/five?api_key=***&page=3): HTTP status 500, after 1 retry"
no_token "later page"
bad server_error "/flaky/500/9/next/five" "  max_retries: 0" "page 1 ($BASE/flaky/500/9/next/five): HTTP status 500"
unlike "$(sql "SELECT last_error FROM dwload_state")" "$API_KEY" "the errors recorded in dwload_state hold no secret"
: >"$REQS"
bad redirect_away "/away/five" "  headers:
    X-Api-Token: \${API_TOKEN}" \
  "page 1 ($BASE/away/five): redirected to http://localhost:$PORT/next/five, another host or plain http: not following it with the job's headers"
# (only requests for /next/five itself: a /slow/... request of an earlier
# case may be logged when its answer ends, after the log was emptied)
is "$(grep '^GET /next/five' "$REQS")" "" "redirect away: no request went to the other host"
style moved p_moved "  url: $BASE/moved/five
  records: data
  next: links.next
  headers:
    X-Api-Token: \${API_TOKEN}"
is "$(reqs ' /next/five ' | cut -d' ' -f4)" "token=ok" "redirect on the same host: followed, with the headers"
style away p_away "  url: $BASE/away/five
  records: data
  next: links.next"
is "$(reqs /away/five | cut -d' ' -f3)" "301" "redirect to another host without headers: followed"
bad echo "/echo?access_token=\${API_KEY}" "  headers:
    X-Api-Token: \${API_TOKEN}" \
  "page 1 ($BASE/echo?access_token=***): HTTP status 400; the response begins: {\"error\": \"bad request\", \"url\": \"/echo?access_token=***\", \"token\": \"***\"}"
no_token "a response that repeats the secrets"
j=$(hjob userinfo p_next replace "  url: http://u:\${API_KEY}@127.0.0.1:$PORT/html
  records: data" </dev/null)
dw run "$j"
like "$ERR" "page 1 (http://***@127.0.0.1:$PORT/html)" "userinfo: redacted in the message"
no_token "userinfo"

j=$(hjob stuck p_next replace "  url: $BASE/next/five
  records: data
  page_param: p" </dev/null)
dw run "$j"
is "$RC" 1 "a page parameter the API ignores: exit 1"
like "$ERR" "page 2 ($BASE/next/five?p=2): the page repeats the one before: the pagination does not advance (does the API take the page number in 'p'?)" \
  "a page parameter the API ignores: stopped at the first repeated page"

# ---- (5) options checked before any request ------------------------------------
: >"$REQS"
j=$(hjob twostyles p_next replace "  url: $BASE/next/five
  next: links.next
  page_param: page" </dev/null)
dw run "$j"
is "$RC" 1 "two pagination styles: exit 1"
like "$ERR" "options next and page_param are two pagination styles; give one" "two pagination styles: the message"
j=$(hjob ftp p_next replace "  url: ftp://127.0.0.1:$PORT/x?token=\${API_KEY}" </dev/null)
dw run "$j"
like "$ERR" "option url: ftp://127.0.0.1:$PORT/x?token=*** is not an http or https URL" "not http: the message, redacted"
no_token "not http"
is "$(cat "$REQS")" "" "bad options: no request was sent"

# ---- TLS ---------------------------------------------------------------------
# A second server speaks HTTPS with a self-signed certificate for 127.0.0.1
# (not for "localhost"): verification is on by default, ca_file trusts
# it, insecure: true skips it with a warning, and a name the certificate
# does not hold fails even with the CA trusted.
TLS="$WORK/tls"
mkdir -p "$TLS/api"
cp "$API/five.json" "$TLS/api/"
if openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
     -addext "subjectAltName=IP:127.0.0.1" -keyout "$TLS/key.pem" -out "$TLS/cert.pem" 2>"$TLS/openssl.err"; then
  httpd_start "$TLS/api" "$TLS/cert.pem" "$TLS/key.pem"
  HTTPSD_PID=$STARTED_PID
  SPORT=$(cat "$TLS/api/port")
  # tjob NAME URL EXTRA-LINES: a replace job of the five records over HTTPS
  tjob() {
    hjob "$1" "t_$1" replace "  url: $2
  records: data
  next: links.next
  max_retries: 0
$3" </dev/null
  }
  dw run "$(tjob tls_default "https://127.0.0.1:$SPORT/next/five" "")"
  is "$RC|$(field status)" "1|failed" "TLS: a self-signed certificate is refused by default"
  like "$ERR" "certificate" "TLS: the message says it is the certificate"
  is "$(table_exists t_tls_default)" 0 "TLS: nothing written"
  dw run "$(tjob tls_ca "https://127.0.0.1:$SPORT/next/five" "  ca_file: $TLS/cert.pem")"
  is "$RC|$(sql 'SELECT count(*) FROM t_tls_ca')" "0|5" "TLS: ca_file trusts the server: every record loaded"
  unlike "$ERR" "insecure" "TLS: ca_file: no warning"
  dw run "$(tjob tls_insecure "https://127.0.0.1:$SPORT/next/five" "  insecure: true")"
  is "$RC|$(sql 'SELECT count(*) FROM t_tls_insecure')" "0|5" "TLS: insecure: true loads without verifying"
  like "$ERR" "warn" "TLS: insecure: true logs a warning"
  like "$ERR" "not verified" "TLS: the warning says what is not verified"
  dw run "$(tjob tls_name "https://localhost:$SPORT/next/five" "  ca_file: $TLS/cert.pem")"
  is "$RC" 1 "TLS: a host name the certificate does not hold fails, the CA trusted or not"
  kill "$HTTPSD_PID" 2>/dev/null
  wait "$HTTPSD_PID" 2>/dev/null
else
  skip_tests 9 "openssl could not make a certificate: $(cat "$TLS/openssl.err")"
fi

kill "$HTTPD_PID" 2>/dev/null
wait "$HTTPD_PID" 2>/dev/null
done_testing
