# Shared helpers for the integration tests: TAP output, running the real
# dwload binary, and reading the real SQLite warehouse file back with the
# sqlite3 shell.  Each test script sources this, calls the helpers, and
# ends with done_testing.
#
# Environment (set by `make check`, or by hand):
#   DWLOAD      the dwload binary under test
#   TOP_SRCDIR  the source tree (test data lives under tests/data)
set -u

: "${DWLOAD:?DWLOAD must name the dwload binary}"
: "${TOP_SRCDIR:?TOP_SRCDIR must name the source tree}"
DATA="$TOP_SRCDIR/tests/data"

T_N=0
T_FAILED=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dwl_it.XXXXXX") || exit 1
# Kept on failure so the files can be inspected.
trap 'if [ "$T_FAILED" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "# work files kept in $WORK"; fi' EXIT

# The SQLite warehouse of a test, through libsqliteodbc.
WH="$WORK/warehouse.db"
WH_CONN="Driver=SQLite3;Database=$WH"

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

# field NAME: a member of the JSON summary in LAST, as JSON text
# ("ok" for strings without quotes, null, numbers as written).
field() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
v = json.loads(sys.stdin.read()).get(sys.argv[1], "MISSING")
print("null" if v is None else v)' "$1"
}

# sql QUERY [DB]: rows of a query on the warehouse, '|'-separated.
sql() {
  sqlite3 -batch -noheader "${2:-$WH}" "$1"
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

# checksum of the warehouse's tables, to show nothing was written
wh_dump() {
  if [ -f "$WH" ]; then
    sqlite3 -batch "$WH" .dump | md5sum | cut -d' ' -f1
  else
    echo "no-warehouse"
  fi
}

done_testing() {
  echo "1..$T_N"
  [ "$T_FAILED" -eq 0 ]
  exit $?
}
