# Shared by commit_fail.sh and signals.sh (sourced after lib.sh): an scd2
# job over two days of CSV rows, its state row, and the commit hook
# (tests/hooks/commitfail.c) in HOOK.

HOOK="${TOP_BUILDDIR:-$TOP_SRCDIR}/tests/hooks/.libs/commitfail.so"
# In the sanitizer build (scripts/sanitize) ASan wants its runtime first
# in the preload list; the hook only wraps SQLEndTran, which ASan leaves
# alone, so that order does not matter here.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
if [ ! -f "$HOOK" ]; then
  echo "Bail out! no commit hook at $HOOK (make check builds it)"
  exit 1
fi

{ echo "id,name,lmd"; gen_rows 1 50 "2024-01-01 00:00:00"; } >"$WORK/day1.csv"
{ echo "id,name,lmd"; gen_rows 1 50 "2024-01-01 00:00:00"; gen_rows 51 80 "2024-01-02 00:00:00"; } \
  >"$WORK/day2.csv"

# day_job JOB TABLE: J, an scd2 job reading ${FEED}, its first day loaded
day_job() {
  J=$(mkjob "$1" "\${FEED}" "$2" <<'EOF2'
load:
  mode: scd2
  key: [id]
  lmd: lmd
EOF2
)
  FEED="$WORK/day1.csv" run_ok "$J" "$1: the first day"
}

# state COLUMN JOB: a column of the job's dwload_state row
state() {
  sql "SELECT $1 FROM dwload_state WHERE job = '$2'"
}

# $DFLT CMD...: CMD with SIGINT, SIGTERM and SIGHUP at their defaults (a
# command, not a function: CMD & is then the process itself)
DFLT="env --default-signal=INT,TERM,HUP"
if ! $DFLT true 2>/dev/null; then
  echo "1..0 # SKIP env --default-signal (coreutils 8.31) is needed"
  exit 0
fi

# at_commit JOB: starts the job (day2.csv) in the background (PID; its
# output in $WORK/r.out and r.err), the hook holding it at its commit
# until a line is written to $GO; waits (bounded: 30 s) until it is there
at_commit() {
  GO="$WORK/go.$1.fifo"
  mkfifo "$GO"
  FEED="$WORK/day2.csv" DWL_TEST_COMMIT=hold DWL_TEST_COMMIT_FIFO=$GO LD_PRELOAD=$HOOK $DFLT "$DWLOAD" run \
    "$WORK/$1.yaml" >"$WORK/r.out" 2>"$WORK/r.err" &
  PID=$!
  wait_until 300 test -e "$GO.ready"
}
