#!/bin/sh
# The live progress line on a terminal (tests/integration/on_tty.py): the
# lookup counts the current versions it really read from the target, and
# the apply and write phases show done/total, a percent that rises to
# 100% and an ETA; the read of a file (not of a FIFO) its percent and ETA.  The run is held in its apply phase at its first
# INSERT into the table by tests/hooks/pace.c until the test has seen
# the line there.  The apply phase sends a batch of inserts when the
# writer's batch is full, and where batches go on the connection's own
# thread (PostgreSQL, MariaDB: 10000 rows) the run waits at the next
# batch: so the source has more new rows than two batches hold.  Without a terminal, the --progress-interval log line
# shows the same figures, and there is no live line.  No sleeps: the test
# waits on the hook's ready file and on what the terminal shows.
. "$TOP_SRCDIR/tests/integration/lib.sh"

TTY="python3 $TOP_SRCDIR/tests/integration/on_tty.py"
PACE="${TOP_BUILDDIR:-$TOP_SRCDIR}/tests/hooks/.libs/pace.so"
# In the sanitizer build ASan wants its runtime first in the preload list;
# the hook wraps only SQLPrepare, SQLExecute and SQLExecDirect.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
if [ ! -f "$PACE" ]; then
  echo "Bail out! no pace hook at $PACE (make check builds it)"
  exit 1
fi
# scd2_job NAME TABLE CSV [LOOKUP]: the test's dimension job
scd2_job() {
  mkjob "$1" "$3" "$2" "  types: {id: integer}" <<EOF
load:
  mode: scd2
  key: [id]
  lmd: lmd
  lookup: ${4:-auto}
EOF
}
J=$(scd2_job tty tty_dim "\${FEED}")
# Two small runs leave 600 keys, 100 of them with an older version too.
{ echo "id,name,lmd"; gen_rows 1 600 "2024-01-01 00:00:00"; } >"$WORK/v1.csv"
{ echo "id,name,lmd"; gen_rows 1 100 "2024-01-02 00:00:00" | sed 's/,row /,two /'; } >"$WORK/v2.csv"
FEED="$WORK/v1.csv" run_ok "$J" "first load"
FEED="$WORK/v2.csv" run_ok "$J" "second load"
# The third: 300 keys change, 20200 are new (more than two of the largest
# insert batches).
{
  echo "id,name,lmd"
  gen_rows 1 300 "2024-01-03 00:00:00" | sed 's/,row /,three /'
  gen_rows 601 20800 "2024-01-03 00:00:00"
} >"$WORK/v3.csv"
DELTA=$(($(wc -l <"$WORK/v3.csv") - 1))
# The delta is far larger than a tenth of the table: the lookup scans
# every current version, one per key.
CURRENT=$(sql 'SELECT count(DISTINCT id) FROM tty_dim')
VERSIONS=$(sql 'SELECT count(*) FROM tty_dim')

# like_re TEXT ERE MESSAGE: TEXT matches the extended regular expression
like_re() {
  if printf '%s\n' "$1" | grep -qE "$2"; then pass "$3"; else fail "$3" "expected to match: $2" "got: $1"; fi
}
# frames FILE PHASE: the progress lines of PHASE drawn on the terminal
frames() {
  tr '\r' '\n' <"$1" | sed 's/\x1b\[K//g' | grep -E "^$2 "
}
# percents FILE PHASE: their percents, in the order drawn
percents() {
  frames "$1" "$2" | sed -n 's/.* \([0-9]*\)%  ETA .*/\1/p'
}
# mid_apply FILE: an apply frame between 0% and 100% has been drawn
mid_apply() {
  percents "$1" apply | grep -qvE '^(0|100)$'
}

mkfifo "$WORK/pace"
exec 4<>"$WORK/pace"
FEED="$WORK/v3.csv" LD_PRELOAD="$PACE" DWL_TEST_PACE_TABLE=tty_dim DWL_TEST_PACE_FIFO="$WORK/pace" \
  $TTY "$WORK/tty.out" "$WORK/tty.log" "$DWLOAD" run "$J" 4>&- &
PID=$!
wait_until 300 test -e "$WORK/pace.ready"
wait_until 300 mid_apply "$WORK/tty.log"
mid_apply "$WORK/tty.log" && pass "held at its first insert, the run shows the apply phase part done" ||
  fail "held at its first insert, the run shows the apply phase part done" "$(tr '\r' '\n' <"$WORK/tty.log")"
echo go >&4
finish "$PID" 60
is "$?" 0 "the run succeeds"
exec 4>&-
is "$(sql 'SELECT count(DISTINCT id) FROM tty_dim')" 20800 "every key loaded"

like_re "$(frames "$WORK/tty.log" lookup | tail -n 1)" "^lookup +$CURRENT rows scanned" \
  "the lookup counts the $CURRENT current versions it read (not the $DELTA rows of the delta, not the $VERSIONS versions)"
is "$(frames "$WORK/tty.log" lookup | sed -n 's/^lookup *\([0-9]*\) rows scanned.*/\1/p' |
      awk -v max="$CURRENT" '$1 > max' | wc -l | tr -d ' ')" 0 "the lookup never counts past what it read"
P=$(percents "$WORK/tty.log" apply | tr '\n' ' ')
is "$(percents "$WORK/tty.log" apply | head -n 1)" 0 "the apply phase starts at 0% ($P)"
is "$(percents "$WORK/tty.log" apply | tail -n 1)" 100 "... and ends at 100%"
is "$(percents "$WORK/tty.log" apply | sort -n -c 2>&1 && echo rising)" rising "... its percent never falls"
is "$(percents "$WORK/tty.log" apply | sort -un | awk 'NR == 1 { lo = $1 } { n++; hi = $1 } END { print (n >= 3 && lo == 0 && hi == 100) ? "yes" : "no" }')" \
  yes "... and shows 0%, at least one percent between and 100%"
like_re "$(frames "$WORK/tty.log" apply | grep -vE ' (0|100)%' | tail -n 1)" \
  "^apply +[0-9]+/$DELTA +[0-9]+%  ETA [0-9]{2}:[0-9]{2}:[0-9]{2}  [0-9]{2}:[0-9]{2}:[0-9]{2}$" \
  "the held apply line shows done/$DELTA, the percent, an ETA and the elapsed time"
like_re "$(frames "$WORK/tty.log" apply | tail -n 1)" "^apply +$DELTA/$DELTA +100%  ETA 00:00:00 " \
  "the last apply line counts every row of the delta"
is "$(percents "$WORK/tty.log" write | tail -n 1)" 100 "the write phase ends at 100%"
is "$(python3 -c 'import sys; print(b"%" in open(sys.argv[1], "rb").read().rsplit(b"\r\033[K", 1)[-1])' "$WORK/tty.log")" \
  False "no progress line is left at the end"
# The read phase of a regular file: the csv plugin says how many bytes
# of the file's size it has read (ABI 1.3 progress), so the read line
# carries a percent and an ETA beside the rows, and the last one drawn as
# the phase ends is 100% with every row counted.
like_re "$(frames "$WORK/tty.log" read | tail -n 1)" \
  "^read +$DELTA rows +[0-9]+ rows/s  100%  ETA 00:00:00  [0-9]{2}:[0-9]{2}:[0-9]{2}$" \
  "the read of a file ends at 100% of it, with its $DELTA rows, its rate and the ETA"
is "$(frames "$WORK/tty.log" read | sed -n 's/.* \([0-9]*\)%  ETA .*/\1/p' | sort -n -c 2>&1 && echo rising)" rising \
  "... its read percent never falls"

# Held mid-file by tests/hooks/readhold.c (at a line of the file's
# getline), the read line shows a percent between 0 and 100 that only the
# bytes read can give; let go, it ends at 100%.
READHOLD="${TOP_BUILDDIR:-$TOP_SRCDIR}/tests/hooks/.libs/readhold.so"
# read_pcts FILE: the read phase's percents, in the order drawn
read_pcts() {
  frames "$1" read | sed -n 's/.* \([0-9]*\)%  ETA .*/\1/p'
}
mid_read() {
  read_pcts "$1" | grep -qvE '^(0|100)$'
}
mkfifo "$WORK/readhold"
exec 5<>"$WORK/readhold"
JR=$(scd2_job ttyread tty_read "$WORK/v3.csv")
LD_PRELOAD="$READHOLD" DWL_TEST_READ_FILE="$WORK/v3.csv" DWL_TEST_READ_LINE=12000 DWL_TEST_READ_FIFO="$WORK/readhold" \
  $TTY "$WORK/ttyr.out" "$WORK/ttyr.log" "$DWLOAD" run "$JR" 5>&- &
PID=$!
wait_until 300 test -e "$WORK/readhold.ready"
wait_until 300 mid_read "$WORK/ttyr.log"
like_re "$(frames "$WORK/ttyr.log" read | grep -vE ' (0|100)%' | tail -n 1)" \
  "^read +[0-9]+ rows +[0-9]+ rows/s +[0-9]+%  ETA ([0-9]{2}:[0-9]{2}:[0-9]{2}|--:--:--)  [0-9]{2}:[0-9]{2}:[0-9]{2}$" \
  "held mid-file, the read line shows rows, rate, a percent of the file between 0 and 100 and an ETA"
echo go >&5
finish "$PID" 60
is "$?" 0 "... and the run succeeds"
R=$(read_pcts "$WORK/ttyr.log" | tr '\n' ' ')
is "$(read_pcts "$WORK/ttyr.log" | tail -n 1)" 100 "... its read ends at 100% ($R)"
is "$(read_pcts "$WORK/ttyr.log" | sort -n -c 2>&1 && echo rising)" rising "... and its read percent never falls"

# Without a terminal, held mid-file, the log line carries the percent.
JRL=$(scd2_job ttyreadlog tty_readlog "$WORK/v3.csv")
rm -f "$WORK/readhold.ready"
LD_PRELOAD="$READHOLD" DWL_TEST_READ_FILE="$WORK/v3.csv" DWL_TEST_READ_LINE=12000 DWL_TEST_READ_FIFO="$WORK/readhold" \
  "$DWLOAD" --progress-interval 1 run "$JRL" >"$WORK/rlog.out" 2>"$WORK/rlog.err" 5>&- &
PID=$!
wait_until 300 test -e "$WORK/readhold.ready"
wait_until 300 grep -q "progress: read, [0-9]* rows read, [0-9]*% of the source" "$WORK/rlog.err"
like_re "$(grep 'progress: read' "$WORK/rlog.err" | tail -n 1)" \
  "info: progress: read, [0-9]+ rows read, [0-9]+% of the source, ETA ([0-9]+s|unknown), [0-9]+ rows/s, [0-9]+s elapsed" \
  "without a terminal, held mid-file, the log line shows the rows, the percent of the file, an ETA and the rate"
P=$(sed -n 's/.*progress: read, [0-9]* rows read, \([0-9]*\)% of the source.*/\1/p' "$WORK/rlog.err" | tail -n 1)
is "$([ "$P" -gt 0 ] && [ "$P" -lt 100 ] && echo between)" between "... a percent between 0 and 100 ($P%)"
echo go >&5
finish "$PID" 60
is "$?" 0 "... and the run succeeds"
exec 5>&-

# A keyed lookup reads only the current versions of the delta's keys: the
# 50 the table has of the source's 70.
{
  echo "id,name,lmd"
  gen_rows 1 50 "2024-01-04 00:00:00" | sed 's/,row /,four /'
  gen_rows 30001 30020 "2024-01-04 00:00:00"
} >"$WORK/v4.csv"
KEYED=$(sql 'SELECT count(DISTINCT id) FROM tty_dim WHERE id BETWEEN 1 AND 50 OR id BETWEEN 30001 AND 30020')
J4=$(scd2_job tty tty_dim "$WORK/v4.csv" keys)
$TTY "$WORK/tty4.out" "$WORK/tty4.log" "$DWLOAD" run "$J4"
is "$?" 0 "a keyed lookup: the run succeeds"
like_re "$(frames "$WORK/tty4.log" lookup | tail -n 1)" "^lookup +$KEYED rows scanned" \
  "a keyed lookup counts the $KEYED current versions of the delta's keys it read, not the 70 keys"

# From a FIFO the size is not known: the read line shows rows and rate
# only, no percent.
mkfifo "$WORK/feed.fifo"
cat "$WORK/v4.csv" >"$WORK/feed.fifo" &
J5=$(scd2_job tty tty_dim "$WORK/feed.fifo" keys)
$TTY "$WORK/tty5.out" "$WORK/tty5.log" "$DWLOAD" run "$J5"
is "$?" 0 "from a FIFO: the run succeeds"
like_re "$(frames "$WORK/tty5.log" read | tail -n 1)" "^read +[0-9]+ rows +[0-9]+ rows/s  [0-9]{2}:[0-9]{2}:[0-9]{2}$" \
  "from a FIFO the read line shows rows and rate, no percent (the size is not known)"

# Without a terminal: the log line every second carries the same figures,
# and nothing is drawn.  Held at its first insert into a second table, the
# run logs the apply phase part done.
J2=$(scd2_job ttylog tty_log "$WORK/v3.csv")
rm -f "$WORK/pace.ready"
exec 4<>"$WORK/pace"
LD_PRELOAD="$PACE" DWL_TEST_PACE_TABLE=tty_log DWL_TEST_PACE_FIFO="$WORK/pace" \
  "$DWLOAD" --progress-interval 1 run "$J2" >"$WORK/log.out" 2>"$WORK/log.err" 4>&- &
PID=$!
wait_until 300 test -e "$WORK/pace.ready"
wait_until 300 grep -q "progress: apply, [0-9]* of" "$WORK/log.err"
like_re "$(grep 'progress: apply' "$WORK/log.err" | tail -n 1)" \
  "info: progress: apply, [0-9]+ of $DELTA \\([0-9]+%\\), ETA ([0-9]+s|unknown), [0-9]+s elapsed" \
  "without a terminal, held in the apply phase, the log line shows done of total, percent and ETA"
echo go >&4
finish "$PID" 60
is "$?" 0 "... and the run succeeds"
exec 4>&-
unlike "$(cat "$WORK/log.err")" "$(printf '\r')" "without a terminal: no carriage return"
unlike "$(cat "$WORK/log.err")" "$(printf '\033')" "without a terminal: no terminal escape"

done_testing
