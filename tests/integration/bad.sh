#!/bin/sh
# The bad input corpus, tests/bad/: every case is a directory holding a job
# file (job.yaml), the files it reads, and `expect`:
#
#   exit: 2                        the exit status (1, 2 or 4)
#   message: unknown key 'lmdd'    a fragment of standard error (fixed text)
#   command: run                   optional: run (default), plan or check
#   args: --as-of yesterday        optional: options after the command (split
#                                  at blanks)
#
# The job's connection string is "${BAD_CONN}" and its table, unless the
# case is about the name, "${BAD_TABLE}"; this script sets both.  Each case
# is copied into a fresh folder with a fresh SQLite warehouse and run once;
# the script asserts the exit status, the fragment, that dwload ended by
# exiting (1, 2 or 4, never a signal or a sanitizer's abort), and that nothing
# was written: no table but dwload_state, no committed run in it, and no
# file in the case's folder but the warehouse (and a reject file's .failed
# list, which is what a failed run leaves).
#
# JSON page cases (http_json jobs) read from tests/httpd.py, started here
# on loopback: "${BAD_API}" is its address, and a case's api/FILE is served
# as "${BAD_API}/raw/${BAD_CASE}.FILE", byte for byte.
. "$TOP_SRCDIR/tests/integration/lib.sh"

skip_unless_warehouse sqlite "the corpus runs on a fresh SQLite file per case; identifiers.sh covers names on every warehouse"

CORPUS="$TOP_SRCDIR/tests/bad"

# expect_field FILE KEY: the value of "KEY: value" in FILE
expect_field() {
  sed -n "s/^$2: //p" "$1" | head -n 1
}

API="$WORK/api"
mkdir -p "$API"
httpd_start "$API" || { echo "Bail out! tests/httpd.py did not start: $(cat "$API.err")"; exit 1; }
HTTPD_PID=$STARTED_PID
BAD_API="http://127.0.0.1:$(cat "$API/port")"
export BAD_API

n=0
for dir in "$CORPUS"/*/; do
  case=$(basename "$dir")
  [ -f "$dir/expect" ] || { fail "$case: has no expect file"; continue; }
  n=$((n + 1))
  want_rc=$(expect_field "$dir/expect" exit)
  want_msg=$(expect_field "$dir/expect" message)
  cmd=$(expect_field "$dir/expect" command)
  args=$(expect_field "$dir/expect" args)
  [ -n "$want_rc" ] && [ -n "$want_msg" ] || { fail "$case: expect lacks exit: or message:"; continue; }

  run="$WORK/bad/$case"
  mkdir -p "$run"
  cp -R "$dir". "$run/"
  rm -f "$run/expect"
  if [ -d "$dir/api" ]; then
    for p in "$dir"/api/*; do cp "$p" "$API/$case.$(basename "$p")"; done
  fi
  before=$(cd "$run" && ls -A | LC_ALL=C sort)
  BAD_CASE="$case" BAD_CONN="Driver=SQLite3;Database=$run/wh.db" BAD_TABLE="bad_$case" \
    "$DWLOAD" "${cmd:-run}" $args "$run/job.yaml" >"$run.out" 2>"$run.err"
  rc=$?
  err=$(cat "$run.err")

  is "$rc" "$want_rc" "$case: exit $want_rc"
  [ "$rc" = "$want_rc" ] || printf '%s\n' "$err" | sed 's/^/#   /'
  like "$err" "$want_msg" "$case: message"
  case $rc in
    1|2|4) pass "$case: exited normally" ;;
    *) fail "$case: exited normally" "exit status $rc (a signal or a crash)" ;;
  esac
  case $err in
    *AddressSanitizer*|*runtime\ error:*|*LeakSanitizer*) fail "$case: no sanitizer report" "$err" ;;
    *) pass "$case: no sanitizer report" ;;
  esac

  written=""
  if [ -f "$run/wh.db" ]; then
    written=$(sqlite3 -batch -noheader "$run/wh.db" "
      SELECT 'table ' || name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('dwload_state', 'dwload_runs')
        AND name NOT LIKE 'sqlite\_%' ESCAPE '\\'" 2>&1)
    if [ "$(sqlite3 "$run/wh.db" "SELECT count(*) FROM sqlite_master WHERE name = 'dwload_state'")" = 1 ]; then
      written="$written$(sqlite3 -batch -noheader "$run/wh.db" "SELECT 'committed run of ' || job
        FROM dwload_state WHERE checkpoint IS NOT NULL OR last_status = 'ok'" 2>&1)"
    fi
    # A failed run leaves its row in the run history: only a committed one is writing.
    if [ "$(sqlite3 "$run/wh.db" "SELECT count(*) FROM sqlite_master WHERE name = 'dwload_runs'")" = 1 ]; then
      written="$written$(sqlite3 -batch -noheader "$run/wh.db" "SELECT 'committed run ' || run_id
        FROM dwload_runs WHERE status = 'committed'" 2>&1)"
    fi
  fi
  after=$(cd "$run" && ls -A | grep -v -e '^wh\.db' -e '\.failed$' | LC_ALL=C sort)
  [ "$after" = "$before" ] || written="$written files: $(echo "$after" | tr '\n' ' ')"
  is "$written" "" "$case: nothing written"
done
kill "$HTTPD_PID" 2>/dev/null
wait "$HTTPD_PID" 2>/dev/null
[ "$n" -ge 40 ] && pass "the corpus has $n cases (at least 40)" || fail "the corpus has $n cases, fewer than 40"

done_testing
