# The streamed initial load (issue 18, run_stream.c): into a table that
# holds no rows, the memory engine writes the delta in chunks while it
# reads the source.  Each job runs twice on the same feed, into separate
# tables: with the default budget (one pass: these feeds are far below a
# chunk) and with --memory-budget 64KiB (chunks of 64 KiB of rows); the
# whole tables, the counts, the checkpoints and the reject files are equal.
# Keys whose rows straddle chunks, a feed where every key comes back (sorted
# by date), a sequence surrogate key, upsert, ignore_null_updates,
# --full-refresh; a table holding rows is not streamed; a run failing on
# too many rejects after its chunks were written, or killed after they
# reached the warehouse, leaves nothing, and the rerun is whole.
. "$TOP_SRCDIR/tests/integration/lib.sh"

unset DWL_ENGINE
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"

# feed NAME FROM TO ORDER [DAYS]: ids FROM..TO, three versions each (city
# changes at the second, phone, a type 1 column, at each; every 7th id
# deleted by its third row; every third id's second city NULL), one row with
# a bad lmd (rejected).  ORDER key: a key's rows together (keys straddle
# chunks only at their edges); day: the first version of every key, then
# the second, then the third (every key comes back).  DAYS 1: one version
# per key, no deletes.
feed() {
  awk -v a="$2" -v b="$3" -v order="$4" -v days="${5:-3}" '
    function row(i, v) {
      printf "%d,%s,p%d_%d,%s,2024-01-0%d 0%d:00:00\n", i,
             (v == 2 && i % 3 == 0) ? "" : sprintf("c%d_%d", i, v > 1), i, v,
             (v == 3 && i % 7 == 0) ? "D" : "", v, v
    }
    BEGIN {
      print "id,city,phone,op,lmd"
      if (order == "key") { for (i = a; i <= b; i++) for (v = 1; v <= days; v++) row(i, v) }
      else { for (v = 1; v <= days; v++) for (i = a; i <= b; i++) row(i, v) }
      printf "%d,bad,pb,,not a time\n", b + 1
    }' >"$WORK/$1"
}

# pair NAME MODE SK [LOAD-LINES]: jobs NAME_one and NAME_str reading
# $WORK/NAME.csv into d_NAME_one / d_NAME_str, each with its reject file
pair() {
  for _s in one str; do
    {
      printf 'load:\n  mode: %s\n  engine: memory\n  key: id\n  lmd: lmd\n' "$2"
      [ "$2" = scd2 ] && [ -z "${4:-}" ] && printf '  type1: [phone]\n'
      [ -n "${4:-}" ] && printf '%s\n' "$4"
      printf '  max_rejects: 5\n  reject_file: %s\n' "$WORK/${1}_$_s.rejects.csv"
      printf '  deletes:\n    column: op\n    values: [D]\n'
      [ "$2" = scd2 ] && printf 'dimension:\n  surrogate_strategy: %s\n' "$3"
    } | mkjob "${1}_$_s" "$WORK/$1.csv" "d_${1}_$_s" '  types: {id: integer, lmd: timestamp}' >/dev/null
  done
}

rows_of() {
  if [ "$(table_exists "$1")" = 1 ]; then sql "SELECT COUNT(*) FROM $1"; else echo 0; fi
}

streamed() {
  printf '%s\n' "$ERR" | grep -c "an initial load: writing while the source is read, in chunks of 0.0625 MiB"
}

# came_back: "N rows of keys that came back", N
came_back() {
  printf '%s\n' "$ERR" | sed -n 's/.*while reading, \([0-9]*\) rows of keys that came back.*/\1/p'
}

# both NAME WHAT [RUN-OPTION]: the one-pass run, then the streamed one; equal
both() {
  dw run ${3:-} "$WORK/${1}_one.yaml"
  _rc=$RC _c=$(counts) _cp=$(field checkpoint) _sc=$(field streamed_chunks)
  _rej=$(cat "$WORK/${1}_one.rejects.csv" 2>/dev/null)
  dw run ${3:-} --memory-budget 64KiB "$WORK/${1}_str.yaml"
  is "$_rc $RC" "0 0" "$2: both runs exit 0"
  [ "$RC" = 0 ] || echo "# streamed: $ERR"
  is "$(counts)" "$_c" "$2: the same counts"
  is "$(field checkpoint)" "$_cp" "$2: the same checkpoint"
  is "$(cat "$WORK/${1}_str.rejects.csv" 2>/dev/null)" "$_rej" "$2: the same reject file"
  is "$(tdump "d_${1}_str")" "$(tdump "d_${1}_one")" "$2: the same rows"
  is "$_sc|$(streamed)" "0|1" "$2: only the small budget streams, and says so"
  [ "$(field streamed_chunks)" -gt 2 ] && pass "$2: written in several chunks" ||
    fail "$2: written in several chunks" "$(field streamed_chunks)"
  is "$(ls -A "$TMPDIR" | grep -c dwload-spill)" 0 "$2: no spill file is left"
}

# ---- keys together: those straddling two chunks are rewritten -----------------
feed key.csv 1 1500 key
pair key scd2 hash
both key "scd2 by key"
[ "$(came_back)" -gt 0 ] && pass "scd2 by key: keys at the chunks' edges came back" ||
  fail "scd2 by key: keys at the chunks' edges came back" "$ERR"
is "$(sql "SELECT COUNT(DISTINCT id) FROM d_key_str")" 1500 "scd2 by key: every key"
# the next day's delta into the streamed table: an ordinary run, equal
feed key.csv 1000 2000 key
sed -i 's/2024-01-0\([123]\)/2024-01-1\1/' "$WORK/key.csv"
dw run "$WORK/key_one.yaml"
_one=$(counts)
dw run --memory-budget 64KiB "$WORK/key_str.yaml"
is "$RC|$(field streamed_chunks)|$(streamed)" "0|0|0" "a table holding rows is not streamed"
is "$(counts)" "$_one" "delta into the streamed table: the same counts"
is "$(tdump d_key_str)" "$(tdump d_key_one)" "delta into the streamed table: the same rows"

# ---- sorted by date: every key comes back; past half a chunk, the rest waits ----
feed day.csv 1 1500 day
pair day scd2 hash
both day "scd2 by date"
like "$ERR" "most rows are of keys already written" "scd2 by date: says the rest is computed after the source"

# ---- a sequence surrogate key, one row per key: numbered as in one pass --------
feed seq.csv 1 3000 key 1
pair seq scd2 sequence
both seq "sequence key"
is "$(came_back)" 0 "sequence key: no key came back"

# ---- upsert; scd2 with ignore_null_updates -------------------------------------
feed ups.csv 1 1500 key
pair ups upsert hash
both ups "upsert"
feed inu.csv 1 1500 key
pair inu scd2 hash '  ignore_null_updates: [city]'
both inu "ignore_null_updates"
is "$(sql "SELECT COUNT(*) FROM d_inu_str WHERE city IS NULL")" 0 "ignore_null_updates: no NULL city stored"

# ---- --full-refresh empties the table first: streamed (scd2 refuses it) -------
both ups "--full-refresh (upsert)" --full-refresh

# ---- too many rejects after chunks were written: exit 4, nothing written --------
feed bad.csv 1 1500 key
awk 'NR > 4000 && NR % 100 == 0 { sub(/,[^,]*$/, ",bad time") } { print }' "$WORK/bad.csv" >"$WORK/bad2.csv"
mv "$WORK/bad2.csv" "$WORK/bad.csv"
pair bad scd2 hash
dw run --memory-budget 64KiB "$WORK/bad_str.yaml"
is "$RC|$(streamed)" "4|1" "too many rejects after streaming: exit 4"
like "$ERR" "rolled back: nothing was written" "too many rejects: the run says it rolled back"
is "$(rows_of d_bad_str)|$(ls -A "$TMPDIR" | grep -c dwload-spill)" "0|0" \
  "too many rejects: nothing written, no spill file"

# ---- killed after chunks reached the warehouse: nothing left, the rerun whole ----
feed kill.csv 1 40000 key 1
pair kill scd2 hash
# the table exists, empty (a run of no rows), so other sessions can see it
printf 'id,city,phone,op,lmd\n' >"$WORK/kill.csv.head"
sed -i "s|path: .*|path: $WORK/kill.csv.head|" "$WORK/kill_str.yaml"
dw run "$WORK/kill_str.yaml"
is "$RC|$(rows_of d_kill_str)" "0|0" "kill: an empty table first"
FIFO="$WORK/kill.fifo"
mkfifo "$FIFO"
sed -i "s|path: .*|path: $FIFO|" "$WORK/kill_str.yaml"
exec 3<>"$FIFO"
"$DWLOAD" --log-level debug run --memory-budget 64KiB "$WORK/kill_str.yaml" >"$WORK/k.out" 2>"$WORK/k.err" 3>&- &
PID=$!
cat "$WORK/kill.csv" >&3  # and no end: the run waits for more
if wait_until 3000 grep -q "streamed chunk 20:" "$WORK/k.err"; then
  pass "kill: the run writes chunks while the source is open"
else
  fail "kill: the run writes chunks while the source is open" "$(cat "$WORK/k.err")"
fi
# The rows are in the warehouse, uncommitted, before the source ends: on
# PostgreSQL the table's pages grow, on MariaDB a dirty read counts them
# (SQLite's writes stay in the process until the commit).
case $WAREHOUSE in
  postgresql) sent() { [ "$(sql "SELECT pg_relation_size('d_kill_str')")" -gt 0 ]; } ;;
  mariadb) sent() {
      [ "$(sql "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; SELECT COUNT(*) FROM d_kill_str")" -gt 0 ]
    } ;;
  *) sent() { :; } ;;
esac
if wait_until 3000 sent; then
  pass "kill: rows reached the warehouse before the source ended"
else
  fail "kill: rows reached the warehouse before the source ended" "$(tail -n 5 "$WORK/k.err")"
fi
kill -KILL "$PID"
wait "$PID" 2>/dev/null
exec 3>&-
is "$(rows_of d_kill_str)|$(ls -A "$TMPDIR" | grep -c dwload-spill)" "0|0" "kill: nothing committed, no spill file"
sed -i "s|path: .*|path: $WORK/kill.csv|" "$WORK/kill_str.yaml"
dw run "$WORK/kill_one.yaml"
_c=$(counts)
dw run --memory-budget 64KiB "$WORK/kill_str.yaml"
is "$RC|$(counts)" "0|$_c" "kill: the rerun streams and counts as one pass"
is "$(tdump d_kill_str)" "$(tdump d_kill_one)" "kill: the rerun's table is one pass's"

done_testing
