# A delta larger than the memory budget spills to partition files (issue
# 18, run_spill.c): each job runs twice on the same feeds, into separate
# tables: once with the default budget (the delta held in memory) and once
# with --memory-budget 64KiB (spilled); the whole tables, the counts, the
# checkpoints and the reject files are equal, the spill line and the
# summary's spilled_partitions appear only with the tiny budget, and no
# spill file outlives a run: after success, a failure and SIGTERM.
# scd2 (several versions per key per batch, a deletes column, a type 1
# column, late rows repaired through load.lookback), scd2 with
# load.ignore_null_updates, and upsert (through lookup: keys); an initial
# load (which the tiny budget streams instead: tests/integration/stream.sh),
# then a delta into the existing dimension.
. "$TOP_SRCDIR/tests/integration/lib.sh"

unset DWL_ENGINE
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
DFLT="env --default-signal=INT,TERM,HUP"

# feed NAME FROM TO DAY [LATE]: ids FROM..TO, three versions each on DAY
# (city and phone change; every 7th id deleted by its last row), one row
# with a bad lmd (rejected); LATE: ids divisible by 5 also get a row at
# 2024-01-01 02:30, before their stored current version (a late row)
feed() {
  awk -v a="$2" -v b="$3" -v day="$4" -v late="${5:-}" 'BEGIN {
    print "id,city,phone,op,lmd"
    for (i = a; i <= b; i++) {
      for (v = 1; v <= 3; v++)
        printf "%d,%s,p%d_%d,%s,%s 0%d:00:00\n", i,
               (v == 2 && i % 3 == 0) ? "" : sprintf("c%d_%s_%d", i, day, v % 2), i, v,
               (v == 3 && i % 7 == 0) ? "D" : "", day, v
      if (late && i % 5 == 0)
        printf "%d,late%d,pl%d,,2024-01-01 02:30:00\n", i, i, i
    }
    printf "%d,bad,pb,,not a time\n", b + 1
  }' >"$WORK/$1"
}

# pair NAME MODE [LOAD-LINE]: jobs NAME_big and NAME_tiny reading
# $WORK/NAME.csv into d_NAME_big / d_NAME_tiny, each with its reject file
pair() {
  for _s in big tiny; do
    {
      printf 'load:\n  mode: %s\n  engine: memory\n  key: id\n  lmd: lmd\n' "$2"
      # (ignore_null_updates refuses lookback: the late rows are skipped)
      [ "$2" = scd2 ] && [ -z "${3:-}" ] && printf '  type1: [phone]\n  late: repair\n'
      [ -z "${3:-}" ] && printf '  lookback: 1d\n'
      # each partition reads its keys' current versions: scd2 by a scan
      # that keeps only them, upsert through the staged keys
      # (a truncate reaches every current key: lookup: keys cannot apply it)
      [ "$2" = upsert ] && [ -z "${TRUNC:-}" ] && printf '  lookup: keys\n'
      [ -n "${3:-}" ] && printf '%s\n' "$3"
      printf '  max_rejects: 5\n  reject_file: %s\n' "$WORK/${1}_$_s.rejects.csv"
      printf '  deletes:\n    column: op\n    values: [D]\n'
      [ -n "${TRUNC:-}" ] && printf '    truncate_values: [T]\n'
      # a sequence surrogate key numbers new versions in the order they are
      # written, which follows the partitions: the hash one is the same
      [ "$2" = scd2 ] && printf 'dimension:\n  surrogate_strategy: hash\n'
    } | mkjob "${1}_$_s" "$WORK/$1.csv" "d_${1}_$_s" '  types: {id: integer, lmd: timestamp}' >/dev/null
  done
}

# seed NAME: NAME_tiny's table gets one row (2023), so that its next run is
# a delta into a table holding rows: an empty one streams (stream.sh)
seed() {
  printf 'id,city,phone,op,lmd\n0,c0,p0,,2023-12-31 00:00:00\n' >"$WORK/$1.csv"
  dw run "$WORK/${1}_tiny.yaml"
  is "$RC|$(rows_of "d_${1}_tiny")" "0|1" "$1: a first row"
}

# rows_of T: T's rows, 0 when there is no T (MariaDB keeps a table created
# by a run that rolled back)
rows_of() {
  if [ "$(table_exists "$1")" = 1 ]; then sql "SELECT COUNT(*) FROM $1"; else echo 0; fi
}

# spill_files: the names of spill files in TMPDIR (dwload keeps others
# there, its ODBC settings)
spill_files() {
  ls -A "$TMPDIR" | grep dwload-spill
}

# spilled: the log's spill lines: the delta's, or with deletes: absent
# or truncate_values the key map's and the delta's (run_absent.c)
spilled() {
  printf '%s\n' "$ERR" | grep -cE "(delta exceeds the memory budget 0.0625 MiB: spilling to|passes the memory \
budget 0.0625 MiB[^:]*: the current versions and the source go to) [0-9]* partitions (by key )?in $TMPDIR"
}

# keyparts: the log's line of a key map partitioned with the delta
keyparts() {
  printf '%s\n' "$ERR" | grep -c "of every current version (~[0-9]* rows x [0-9]* bytes = [0-9.]* MiB) passes \
the memory budget"
}

# streamed: the log's streaming lines (an initial load streams instead:
# run_stream.c, tests/integration/stream.sh)
streamed() {
  printf '%s\n' "$ERR" | grep -c "an initial load: writing while the source is read"
}

# both NAME WHAT [streams]: the default-budget run, then the tiny one;
# equal.  With "streams" (an initial load) the tiny one streams instead.
both() {
  dw run "$WORK/${1}_big.yaml"
  _rc=$RC _c="$(counts) $(field late_repaired)" _cp=$(field checkpoint) _sp=$(field spilled_partitions) _s=$(spilled)
  _rej=$(cat "$WORK/${1}_big.rejects.csv" 2>/dev/null)
  dw run --memory-budget 64KiB "$WORK/${1}_tiny.yaml"
  is "$_rc $RC" "0 0" "$2: both runs exit 0"
  [ "$RC" = 0 ] || echo "# tiny: $ERR"
  is "$(counts) $(field late_repaired)" "$_c" "$2: the same counts"
  is "$(field checkpoint)" "$_cp" "$2: the same checkpoint"
  is "$(field rejected)|$(cat "$WORK/${1}_tiny.rejects.csv" 2>/dev/null)" "1|$_rej" "$2: the same reject file"
  # (deletions by absence are stamped with each run's clock: NORM=1)
  if [ -n "${NORM:-}" ]; then
    is "$(tdump "d_${1}_tiny" | norm_run)" "$(tdump "d_${1}_big" | norm_run)" "$2: the same rows"
  else
    is "$(tdump "d_${1}_tiny")" "$(tdump "d_${1}_big")" "$2: the same rows"
  fi
  is "$_s|$_sp" "0|0" "$2: the default budget does not spill"
  if [ "${3:-}" = streams ]; then
    is "$(spilled)|$(streamed)" "0|1" "$2: the tiny budget streams the initial load instead"
    [ "$(field streamed_chunks)" -gt 1 ] && pass "$2: streamed in more than one chunk" ||
      fail "$2: streamed in more than one chunk" "$(field streamed_chunks)"
  else
    is "$(spilled)" 1 "$2: the tiny budget says it spills"
    [ "$(field spilled_partitions)" -gt 1 ] && pass "$2: spilled to more than one partition" ||
      fail "$2: spilled to more than one partition" "$(field spilled_partitions)"
  fi
  is "$(spill_files)" "" "$2: no spill file is left"
}

# inu: scd2 with load.ignore_null_updates: a NULL city (every third key's
# second row) keeps the key's city from its previous row or current version
for m in scd2 upsert inu; do
  if [ $m = inu ]; then pair inu scd2 '  ignore_null_updates: [city]'; else pair "$m" "$m"; fi
  feed "$m.csv" 1 300 2024-01-01
  both "$m" "$m: initial load" streams
  # upsert removes the 42 keys whose last row deletes them
  is "$(sql "SELECT COUNT(DISTINCT id) FROM d_${m}_tiny")" "$([ $m = upsert ] && echo 258 || echo 300)" \
    "$m: initial load: every key"
  feed "$m.csv" 150 450 2024-01-02 late
  both "$m" "$m: delta into the dimension"
done
is "$(sql "SELECT COUNT(*) FROM d_scd2_tiny WHERE city LIKE 'late%'")" 61 "scd2: the late rows are in the history"
is "$(sql "SELECT COUNT(*) FROM d_scd2_tiny WHERE city IS NULL")|$(sql "SELECT COUNT(*) FROM d_inu_tiny WHERE city IS NULL")" \
  "201|0" "inu: the NULL cities scd2 stores (100 + 101 keys' rows) are filled in"

# ---- each partition chooses its lookup ------------------------------------------
# 2000 keys of 3 versions in the table; a delta of 1200 rows: as one
# delta, 1200 x 10 >= 6000 versions reads every current version (a scan,
# which a partition filters to its share of the keys); spilled, each
# partition's rows x 10 are below that: it reads its own keys, staged.
pair lk scd2 '  type1: [phone]'
feed lk.csv 1 2000 2024-01-01
both lk "lookup per partition: initial load" streams
feed lk.csv 1 400 2024-01-02
dw run "$WORK/lk_big.yaml"
_err_big=$ERR
dw run --memory-budget 64KiB "$WORK/lk_tiny.yaml"
is "$RC|$(spilled)|$(printf '%s\n' "$_err_big" | grep -c 'current versions (all)')" "0|1|1" \
  "lookup per partition: the delta held reads all current versions, the tiny budget spills"
is "$(printf '%s\n' "$ERR" | grep -c 'current versions (all)')" 0 \
  "lookup per partition: no partition scans the table"
[ "$(printf '%s\n' "$ERR" | grep -c "current versions (the delta's keys)")" -gt 1 ] &&
  pass "lookup per partition: the partitions read their keys" ||
  fail "lookup per partition: the partitions read their keys" "$ERR"
is "$(tdump d_lk_tiny)" "$(tdump d_lk_big)" "lookup per partition: the same rows"
# Into a table of one row every partition is more than a tenth of it: it
# scans, where a scan can follow the run's writes; SQLite's scan reads on
# a second connection, which the run's uncommitted writes lock out once
# they spill from the page cache (a 1M-row delta into 10M rows failed so,
# exit 3): there every partition reads its keys.
pair lks scd2 '  type1: [phone]'
printf 'id,city,phone,op,lmd\n0,c0,p0,,2023-12-31 00:00:00\n' >"$WORK/lks.csv"
dw run "$WORK/lks_big.yaml"
dw run "$WORK/lks_tiny.yaml"
feed lks.csv 1 400 2024-01-02
both lks "a delta into a table of one row"
n_all=$(printf '%s\n' "$ERR" | grep -c 'current versions (all)')
n_keys=$(printf '%s\n' "$ERR" | grep -c "current versions (the delta's keys)")
if [ "$WAREHOUSE" = sqlite ]; then
  is "$n_all" 0 "a delta into a table of one row, SQLite: no partition scans"
  [ "$n_keys" -gt 1 ] && pass "... every partition reads its keys ($n_keys)" ||
    fail "... every partition reads its keys" "$ERR"
else
  is "$n_keys" 0 "a delta into a table of one row: no partition reads through staged keys"
  [ "$n_all" -gt 1 ] && pass "... every partition scans ($n_all)" || fail "... every partition scans" "$ERR"
fi

# via_fifo NAME WHAT: NAME_big reads NAME.csv, held; NAME_tiny the same
# rows through a FIFO (a source that does not tell its size) at 64 KiB:
# the same exit status, counts (_c: the held run's) and rows
via_fifo() {
  [ -p "$WORK/$1.fifo" ] || mkfifo "$WORK/$1.fifo"
  sed -i "s|path: .*|path: $WORK/$1.fifo|" "$WORK/$1_tiny.yaml"
  dw run "$WORK/$1_big.yaml"
  _c=$(counts) _dump=$(tdump "d_$1_big" | md5sum)
  cat "$WORK/$1.csv" >"$WORK/$1.fifo" &
  CATPID=$!
  dw run --memory-budget 64KiB "$WORK/$1_tiny.yaml"
  kill "$CATPID" 2>/dev/null
  is "$RC|$(counts)" "0|$_c" "$2: exit 0, the same counts as the delta held"
  is "$(tdump "d_$1_tiny" | md5sum)" "$_dump" "$2: the same rows"
}

# wide_csv NAME KEYS VERSIONS: NAME.csv, VERSIONS rows of each of KEYS
# keys with a 3000-byte city, version v at 2024-01-02 v:00; the last
# deletes every 9th key
wide_csv() {
  awk -v keys="$2" -v versions="$3" 'BEGIN {
    w = sprintf("%3000s", ""); gsub(/ /, "w", w)
    print "id,city,phone,op,lmd"
    for (v = 1; v <= versions; v++)
      for (i = 1; i <= keys; i++)
        printf "%d,c%d_%d%s,p%d,%s,2024-01-02 %02d:00:00\n", i, i, v, w, v, (v == versions && i % 9 == 0) ? "D" : "", v
  }' >"$WORK/$1.csv"
}

# split_back WHAT: the log of the run says partitions were split as they
# were read back, and none held past the budget
split_back() {
  _n=$(printf '%s\n' "$ERR" | grep -c "passed the memory budget as it was read back: its [0-9]* rows split into [0-9]* parts")
  [ "$_n" -gt 0 ] && pass "$1: partitions past the budget are split ($_n)" ||
    fail "$1: partitions past the budget are split" "$ERR"
  unlike "$ERR" "more than the memory budget" "$1: none is held past the budget"
}

# ---- a source that does not tell its size: partitions split again -------------
# A FIFO has no size: the delta spills to 16 partitions, each of which
# (8000 keys of two rows with a 3000-byte city: about 3 MiB of rows held)
# passes the budget as it is read back, and is split by another hash of
# the key instead of being held whole.  The run reading the file holds it
# all (the default budget); both tables must be the same.
pair wide scd2 '  type1: [phone]'
printf 'id,city,phone,op,lmd\n0,c0,p0,,2023-12-31 00:00:00\n' >"$WORK/wide.csv"
dw run "$WORK/wide_big.yaml"
dw run "$WORK/wide_tiny.yaml"
wide_csv wide 8000 2
via_fifo wide "split partitions"
like "$ERR" "spilling to 16 partitions" "split partitions: a source of unknown size spills to 16"
split_back "split partitions"
[ "$(field spilled_partitions)" -gt 16 ] && pass "split partitions: the summary counts the parts" ||
  fail "split partitions: the summary counts the parts" "$(field spilled_partitions)"
is "$(spill_files)" "" "split partitions: no spill file is left"

# ---- a partitioned key map's partitions split again ---------------------------
# 900 keys, one version each: their key map passes 64 KiB (74 KB at
# SQLite's 82 bytes) and is partitioned with the delta, into a few
# partitions; a delta from a FIFO of 18 versions a key with a 3000-byte
# city (about 48 MiB) passes the budget in each as it is read back, and
# each part of a split partition loads only its own keys' entries.
pair wk scd2 '  lookup: scan'
awk 'BEGIN { print "id,city,phone,op,lmd"; for (i = 1; i <= 900; i++) printf "%d,c%d,p%d,,2024-01-01 00:00:00\n", i, i, i }' \
  >"$WORK/wk.csv"
for _s in big tiny; do dw run "$WORK/wk_$_s.yaml"; done
case $WAREHOUSE in  # (the estimate, should the table's creation not have refreshed it)
  postgresql) sql "ANALYZE d_wk_tiny" >/dev/null ;;
  mariadb) sql "ANALYZE TABLE d_wk_tiny" >/dev/null ;;
esac
wide_csv wk 900 18
via_fifo wk "split key parts"
like "$_c" "inserted=16100 expired=900 updated=0 deleted=100" "split key parts: 18 versions a key (the last deletes every 9th), the 900 stored ones expired"
is "$(keyparts)" 1 "split key parts: the key map partitioned with the delta"
split_back "split key parts"
is "$(spill_files)" "" "split key parts: no spill file is left"

# ---- deletes: absent spills: the keys of every current version are kept ------
# apair NAME MODE [LOAD-LINES]: jobs NAME_big and NAME_tiny with deletes:
# absent reading $WORK/NAME.csv into d_NAME_big / d_NAME_tiny
apair() {
  for _s in big tiny; do
    {
      printf 'load:
  mode: %s
  engine: memory
  key: id
  lmd: lmd
  deletes: absent
' "$2"
      printf '  max_rejects: 5
  reject_file: %s
' "$WORK/${1}_$_s.rejects.csv"
      [ -n "${3:-}" ] && printf '%s
' "$3"
      [ "$2" = scd2 ] && printf 'dimension:
  surrogate_strategy: hash
'
    } | mkjob "${1}_$_s" "$WORK/$1.csv" "d_${1}_$_s" '  types: {id: integer, lmd: timestamp}' >/dev/null
  done
}
# extract NAME [REVIVE]: a full extract: ids 50..300 unchanged (their
# rows dated 2024-01-01, before the checkpoint: they only say the key is
# there), ids 301..650 changed on 2024-01-02, ids 1..49 and 651..700 gone;
# key 20's row is rejected (a bad lmd: its key was delivered, so it
# stays); ids 290..300 not deleted (all but 294) get their stored values
# again, dated 2024-01-02 (no-ops).  REVIVE: ids 1..10 come back with rows
# dated 2024-01-01 (a key without a live version revives, however old its
# row).
extract() {
  feed "$1.x" 1 700 2024-01-01
  feed "$1.y" 301 650 2024-01-02
  {
    awk -F, -v r="${2:-}" 'NR == 1 || ($1 >= 50 && $1 <= 300) || (r && $1 >= 1 && $1 <= 10)' "$WORK/$1.x"
    tail -n +2 "$WORK/$1.y" | grep -v ',bad,'
    echo '20,bad,pb,,not a time'
    # keys 290..300 not deleted: their stored values again, past the checkpoint
    awk -F, -v OFS=, '$1 >= 290 && $1 <= 300 && $5 ~ / 03:00:00$/ && $4 == "" { $5 = "2024-01-02 05:00:00"; print }' \
      "$WORK/$1.x"
  } >"$WORK/$1.csv"
}
NORM=1
for m in scd2 upsert tomb; do
  case $m in
    tomb) apair "a$m" scd2 '  delete_style: tombstone' ;;
    *) apair "a$m" "$m" ;;
  esac
  feed "a$m.csv" 1 700 2024-01-01
  both "a$m" "absent $m: an initial load spilled (deletes: absent does not stream)"
  extract "a$m"
  both "a$m" "absent $m: a full extract"
  is "$(field absent)" 98 "absent $m: 98 keys absent (1..49 but 20, 651..700), judged while spilling"
  # (upsert counts unchanged rows its own way: the held run's count,
  # compared above, is the check there)
  [ $m = upsert ] || is "$(field unchanged)" 10 "absent $m: keys 290..300 but 294 unchanged"
  unlike "$ERR" "cannot spill" "absent $m: no warning"
  unlike "$ERR" "current versions (the delta's keys)" "absent $m: the partitions read no current version again"
  # scd2's key map passes 64 KiB everywhere (the estimate counts every
  # version); upsert's 700 rows only on MariaDB (170 bytes a key), and
  # elsewhere the partitions take theirs from the key map held whole
  if [ $m = upsert ] && ! is_warehouse mariadb; then
    like "$ERR" "current versions of the partition's keys from those read before the source" \
      "absent $m: the partitions take their current versions from the scan before the source"
    is "$(keyparts)" 0 "absent $m: a key map within the budget is held whole"
  else
    is "$(keyparts)" 1 "absent $m: a key map past the budget is partitioned with the delta"
    like "$ERR" "info: 98 of 700 live keys absent, judged partition by partition" \
      "absent $m: the absent keys judged partition by partition"
    unlike "$ERR" "from those read before the source" "absent $m: ... and no key map held whole"
  fi
  extract "a$m" revive
  both "a$m" "absent $m: keys 1..10 revive from rows before the checkpoint"
  is "$(field absent)|$(field inserted)" "0|10" "absent $m: none absent, 10 revived"
done
NORM=
is "$(sql "SELECT COUNT(*) FROM d_ascd2_tiny WHERE id BETWEEN 1 AND 10 AND is_current AND NOT is_deleted")" 10 \
  "absent scd2: keys 1..10 revived"
is "$(sql "SELECT COUNT(*) FROM d_aupsert_tiny WHERE id = 20 OR id BETWEEN 651 AND 700")" 1 \
  "absent upsert: key 20 stays, 651..700 are removed"
# The guard: an extract of 100 keys would delete most; nothing is written
aguard() {
  awk -F, 'NR == 1 || $1 <= 100' "$WORK/ascd2.x" >"$WORK/ascd2.csv"
  dw run ${1:+--memory-budget "$1"} "$WORK/ascd2_${2}.yaml"
}
_before=$(tdump d_ascd2_tiny | md5sum)
aguard "" big
_rc=$RC _e=$(printf '%s\n' "$ERR" | grep -o "would delete [0-9]* of the [0-9]* current keys")
aguard 64KiB tiny
is "$RC|$(spilled)|$(field guard)" "$_rc|1|max_deletes" "absent guard: spilled, the guard fails the run as held"
is "$_rc" 4 "absent guard: exit 4"
like "$ERR" "$_e" "absent guard: the same count in the message"
is "$(tdump d_ascd2_tiny | md5sum)" "$_before" "absent guard: nothing written"
is "$(spill_files)" "" "absent guard: no spill file is left"

# plan, which writes no file, holds the key map a run partitions: said.
# (The guard's extract is still the feed: this plan ends at the guard.)
dw plan --memory-budget 16KiB "$WORK/ascd2_tiny.yaml"
like "$ERR" "warn: plan reads every current version before the source (deletes: absent judges every current key): ~" \
  "key map: plan says it holds deletes: absent's"
like "$ERR" "of key map, more than the memory budget 0.0156 MiB, held in memory: plan writes no file (a run partitions it with the delta by key)" \
  "key map: ... with why a run does not"
dw plan --memory-budget 1GiB "$WORK/ascd2_tiny.yaml"
like "$ERR" "engine: memory: load.engine at " "key map: plan with a budget the key map fits chose its engine"
unlike "$ERR" "of key map" "key map: within the budget, no warning"

# ---- ignore_null_updates with absence: the values read partition by partition
# The key files hold fingerprints: each partition reads its keys' values
# again.  Keys 200..260 get one row past the checkpoint with no city (and
# a new phone): the city is their stored version's.
NORM=1
apair ainu scd2 '  ignore_null_updates: [city]'
feed ainu.csv 1 700 2024-01-01
both ainu "absent inu: an initial load spilled"
extract ainu
awk 'BEGIN { for (i = 200; i <= 260; i++) printf "%d,,pn%d,,2024-01-02 05:00:00\n", i, i }' >>"$WORK/ainu.csv"
both ainu "absent inu: a full extract, keys 200..260 with no city"
is "$(keyparts)|$(field absent)" "1|98" "absent inu: the key map partitioned with the delta; 98 keys absent"
unlike "$ERR" "of key map" "absent inu: no warning"
is "$(sql "SELECT COUNT(*) FROM d_ainu_tiny WHERE id BETWEEN 200 AND 260 AND is_current AND phone LIKE 'pn%' AND city LIKE 'c%_2024-01-01_1'")" \
  61 "absent inu: keys 200..260's new versions keep their stored city"
NORM=
# An upsert table of 700 keys less those deleted: its key map's estimate
# fits 256 KiB on every warehouse (at most 119 KB), but the values
# ignore_null_updates keeps for every live key while the versions are
# read (the row store's first 1 MiB chunk) do not: the key map goes to
# key files once they pass the budget.
apair vinu upsert '  ignore_null_updates: [city]'
feed vinu.csv 1 700 2024-01-01
for _s in big tiny; do dw run "$WORK/vinu_$_s.yaml"; done
extract vinu
dw run "$WORK/vinu_big.yaml"
_c="$RC|$(counts)" _d=$(tdump d_vinu_big)
dw run --memory-budget 256KiB "$WORK/vinu_tiny.yaml"
is "$RC|$(counts)" "$_c" "inu values: the same exit status and counts as the key map held"
is "$(tdump d_vinu_tiny)" "$_d" "inu values: the same rows"
like "$ERR" "passes the memory budget 0.25 MiB at " "inu values: the key map goes to key files once the values pass the budget"
like "$ERR" "MiB of the values ignore_null_updates keeps; the table's estimate was ~" "inu values: ... saying so"
is "$(keyparts)|$(field absent)" "0|98" "inu values: not partitioned up front; 98 keys absent"

# ---- truncate rows spill: the truncates are held, every key is reached -------
# A delta of keys 150..450 with two truncate rows (2024-01-02 00:30 and
# 02:30): keys 1..149, live without rows, are deleted at the first; the
# delta's keys get delete rows at each after their version's start.
TRUNC=1
for m in scd2 upsert; do
  pair "t$m" "$m" '  max_deletes: all'
  feed "t$m.csv" 1 300 2024-01-01
  both "t$m" "truncate $m: an initial load spilled (truncate_values does not stream)"
  feed "t$m.csv" 150 450 2024-01-02
  printf ',,,T,2024-01-02 02:30:00\n,,,T,2024-01-02 00:30:00\n' >>"$WORK/t$m.csv"
  both "t$m" "truncate $m: a delta with two truncates"
  is "$(field absent)" 258 "truncate $m: every live key reached (300 less the 42 deleted)"
  unlike "$ERR" "cannot spill" "truncate $m: no warning"
  # scd2's table (858 versions) passes 64 KiB everywhere, upsert's (258
  # rows) nowhere
  if [ $m = scd2 ]; then
    is "$(keyparts)" 1 "truncate $m: the key map partitioned with the delta"
    like "$ERR" "info: 258 of 258 live keys reached by a truncate, 128 of them without rows, judged partition by partition" \
      "truncate $m: the keys reached judged partition by partition"
  else
    is "$(keyparts)" 0 "truncate $m: a key map within the budget held whole"
  fi
done
TRUNC=
is "$(sql "SELECT COUNT(*) FROM d_tscd2_tiny WHERE id < 150 AND valid_to = '2024-01-02 00:30:00'")" 128 \
  "truncate scd2: keys 1..149 (less the 21 deleted) end at the first truncate"
dw plan --memory-budget 16KiB "$WORK/tscd2_tiny.yaml"
like "$ERR" "warn: plan reads every current version before the source (load.deletes.truncate_values reaches every current key)" \
  "key map: plan says it holds a truncate's"

# ---- lookup: scan spills: the key map partitioned with the delta -----------
# (an initial load streams: the scan before it finds nothing)
# (with a type 1 column and late rows repaired: each partition reads its
# late keys' histories)
pair scan scd2 '  lookup: scan
  type1: [phone]
  late: repair
  lookback: 1d'
feed scan.csv 1 300 2024-01-01
both scan "lookup: scan: an initial load" streams
feed scan.csv 150 450 2024-01-02 late
both scan "lookup: scan: a delta into the dimension"
is "$(keyparts)|$(field late_repaired)" "1|31" "lookup: scan: the key map (858 versions) partitioned with the delta; 31 late rows repaired"
unlike "$ERR" "judged partition by partition" "lookup: scan: ... with no first pass (nothing to judge)"
unlike "$ERR" "current versions (the delta's keys)" "lookup: scan: ... and no current version read again"
unlike "$ERR" "of key map" "lookup: scan: no warning"
dw plan --memory-budget 16KiB "$WORK/scan_tiny.yaml"
like "$ERR" "warn: plan reads every current version before the source (load.lookup: scan reads every current version): ~" \
  "key map: plan says it holds lookup: scan's"

# ---- a key with two current versions, apart in the scan's batches ----------
# A copy of key 5's current version, added at the end of the table: the
# partitioned key map meets the two as they are loaded, with their
# fingerprints alone; the run names the key once rolled back, from a scan
# of the current versions (which on SQLite its writes locked out).
pair dup scd2 '  lookup: scan'
feed dup.csv 1 1500 2024-01-01
dw run "$WORK/dup_tiny.yaml"
_cols=$(wh_columns d_dup_tiny | paste -sd, -)
_sel=$(wh_columns d_dup_tiny | sed 's/^dim_id$/1/' | paste -sd, -)
sql "INSERT INTO d_dup_tiny ($_cols) SELECT $_sel FROM d_dup_tiny WHERE id = 5 AND is_current" >/dev/null
is "$RC|$(sql "SELECT COUNT(*) FROM d_dup_tiny WHERE id = 5 AND is_current")" "0|2" "duplicate: key 5 has two current versions"
feed dup.csv 1 1500 2024-01-02
_before=$(tdump d_dup_tiny | md5sum)
_msg="table d_dup_tiny has more than one current version of key (id='5'); repair the table before loading"
dw run --memory-budget 64KiB "$WORK/dup_tiny.yaml"
is "$RC|$(keyparts)" "1|1" "duplicate: the partitioned run fails, exit 1"
like "$ERR" "$_msg" "duplicate: ... naming the key"
is "$(tdump d_dup_tiny | md5sum)|$(spill_files)" "$_before|" "duplicate: nothing written, no spill file left"
dw run "$WORK/dup_tiny.yaml"
is "$RC" 1 "duplicate: the run holding the key map fails too"
like "$ERR" "$_msg" "duplicate: ... with the same message"

# ---- the key map partitioned: a key's deleted versions merged ------------------
# 1500 keys, deletions by expiring (no tombstone: a deleted key's last
# version is read apart from the current ones).  At 64 KiB the scan's
# entries go to the key files every 128: a revived key's current version
# and its deleted one land in different batches, merged as they are
# loaded.  Feeds: keys 1..100 absent; then 1..50 revive from rows before
# the checkpoint and 1401..1500 absent; then 1..20 absent again, 1401..1500
# revive, 51..100 stay deleted.
kpx() {
  awk -F, -v lo="$1" -v hi="$2" -v lo2="${3:-0}" -v hi2="${4:--1}" 'NR == 1 ||
    (($1 >= lo && $1 <= hi) || ($1 >= lo2 && $1 <= hi2))' "$WORK/kp.x" | grep -v ',bad,' >"$WORK/kp.csv"
  [ -n "${5:-}" ] && tail -n +2 "$WORK/kp.y" | grep -v ',bad,' >>"$WORK/kp.csv"
  echo '1501,bad,pb,,not a time' >>"$WORK/kp.csv"
}
NORM=1
# (with late rows repaired: keys 200..300 divisible by 5 get one)
apair kp scd2 '  delete_style: expire
  late: repair
  lookback: 1d'
feed kp.csv 1 1500 2024-01-01
cp "$WORK/kp.csv" "$WORK/kp.x"
feed kp.y 200 300 2024-01-02 late
both kp "key map partitioned: an initial load"
is "$(keyparts)" 0 "key map partitioned: not into a new table (the delta spills alone)"
kpx 101 1500 0 -1 y
both kp "key map partitioned: keys 1..100 absent"
is "$(keyparts)|$(field absent)|$(field late_repaired)" "1|100|21" "key map partitioned: partitioned, 100 keys absent, 21 late rows repaired"
kpx 1 50 101 1400
both kp "key map partitioned: 1..50 revive, 1401..1500 absent"
is "$(keyparts)|$(field absent)|$(field inserted)" "1|100|50" "key map partitioned: 100 absent, 50 revived"
kpx 21 50 101 1500
both kp "key map partitioned: 1..20 absent again, 1401..1500 revive"
is "$(keyparts)|$(field absent)|$(field inserted)" "1|20|100" "key map partitioned: 20 absent, 100 revived"
is "$(sql "SELECT COUNT(*) FROM d_kp_tiny WHERE id <= 100 AND is_current")|$(sql "SELECT COUNT(*) FROM d_kp_tiny WHERE id > 1400 AND is_current")" \
  "30|100" "key map partitioned: keys 21..50 and 1401..1500 current"
NORM=

# ---- a key map past 256 partitions: each partition's entries in slices -------
# 250,000 keys of one version: at 64 KiB the key map (20 MB at SQLite's 82
# bytes) takes the most partitions, 256, whose entries (about 980 each,
# 78 KB loaded) still pass the budget: the first pass judges absence, and
# the second computes, a slice of each partition's keys at a time.  An
# extract without keys 1..1000 and with keys 1001..2000 changed.  (The
# slicing is the same on every warehouse: SQLite's loads are the quickest.)
if is_warehouse sqlite; then
  NORM=1
  apair sl scd2
  awk 'BEGIN { print "id,city,phone,op,lmd"; for (i = 1; i <= 250000; i++) printf "%d,c%d,p%d,,2024-01-01 00:00:00\n", i, i, i }' \
    >"$WORK/sl.csv"
  for _s in big tiny; do dw run "$WORK/sl_$_s.yaml"; done
  awk -F, 'NR == 1 || $1 > 2000 { print; next } $1 > 1000 { print $1 ",n" $1 "," $3 ",,2024-01-02 00:00:00" }' \
    "$WORK/sl.csv" >"$WORK/sl.x"
  { cat "$WORK/sl.x"; echo '250001,bad,pb,,not a time'; } >"$WORK/sl.csv"
  both sl "sliced key map: keys 1..1000 absent, 1001..2000 changed"
  is "$(keyparts)|$(field absent)|$(field inserted)" "1|1000|1000" "sliced key map: partitioned, 1000 absent, 1000 changed"
  like "$ERR" "the current versions and the source go to 256 partitions by key" "sliced key map: into 256 partitions"
  _n=$(printf '%s\n' "$ERR" | grep -c "current versions pass the memory budget: its [0-9]* rows split into [0-9]* parts, each with its own keys' versions")
  [ "$_n" -gt 100 ] && pass "sliced key map: partitions computed in slices ($_n)" ||
    fail "sliced key map: partitions computed in slices" "$_n"
  unlike "$ERR" "more than the memory budget" "sliced key map: no partition's entries loaded past the budget"
  NORM=
else
  skip_tests 13 "the key map's slices: on SQLite"
fi

# ---- a stale estimate: the key map partitioned once it passes the budget -----
# PostgreSQL's estimate is the catalog's (reltuples), which ANALYZE and
# VACUUM refresh: with autovacuum off, a table analyzed at 10 keys (30
# versions) and grown to 1500 keys is still estimated at 30 rows, and the
# key map is read whole until it passes 64 KiB.
if is_warehouse postgresql; then
  NORM=1
  apair st scd2
  feed st.csv 1 10 2024-01-01
  for _s in big tiny; do
    dw run "$WORK/st_$_s.yaml"
    sql "ALTER TABLE d_st_$_s SET (autovacuum_enabled = false)" >/dev/null
    sql "ANALYZE d_st_$_s" >/dev/null
  done
  feed st.csv 1 1500 2024-01-02
  for _s in big tiny; do dw run "$WORK/st_$_s.yaml"; done
  is "$RC|$(sql "SELECT reltuples::bigint FROM pg_class WHERE relname = 'd_st_tiny'")" "0|30" \
    "stale estimate: 1500 keys loaded, the catalog still says 30 rows"
  awk -F, 'NR == 1 || $1 > 100' "$WORK/st.csv" | grep -v ',bad,' >"$WORK/st.x"
  { cat "$WORK/st.x"; echo '1501,bad,pb,,not a time'; } >"$WORK/st.csv"
  both st "stale estimate: keys 1..100 absent"
  like "$ERR" "passes the memory budget 0.0625 MiB at " "stale estimate: the key map partitioned as it passes the budget"
  like "$ERR" "the table's estimate was ~30 rows): the current versions and the source go to 256 partitions by key" \
    "stale estimate: ... saying the estimate, into the most partitions (the size is not known)"
  is "$(keyparts)|$(field absent)" "0|100" "stale estimate: not partitioned up front; 100 keys absent"
  NORM=
else
  skip_tests 13 "PostgreSQL's catalog estimate"
fi

# ---- load.partition spills: absence judged in the partitions delivered ---------
# Keys 1..1000, odd ones in region n, even ones in s.  The second extract
# delivers region n only, without keys 1..99 and with keys 401..999
# changed: the 50 odd keys 1..99 are absent; region s's keys stay.  Each
# extract has a row with a bad lmd (rejected).  The key map (1000
# versions, 82 KB at SQLite's 82 bytes) passes 64 KiB: partitioned, and
# the keys to delete are those of the partitions delivered.
region() {
  awk -v a="$1" -v b="$2" -v day="$3" -v only="${4:-}" -v from="${5:-0}" 'BEGIN {
    print "id,region,city,lmd"
    for (i = a; i <= b; i++) {
      r = i % 2 ? "n" : "s"
      if ((only && r != only) || i < from)
        continue
      printf "%d,%s,c%d_%s,%s 01:00:00\n", i, r, i, (i > 400 ? day : "2024-01-01"), (i > 400 ? day : "2024-01-01")
    }
    printf "%d,n,bad,not a time\n", b + 1
  }' >"$WORK/apart.csv"
}
NORM=1
apair apart scd2 '  partition: [region]'
region 1 1000 2024-01-01
both apart "load.partition: an initial load spilled"
region 1 1000 2024-01-02 n 100
both apart "load.partition: an extract of region n, spilled"
is "$(field absent)" 50 "load.partition: the 50 absent keys of region n, judged while spilling"
is "$(sql "SELECT COUNT(*) FROM d_apart_tiny WHERE id % 2 = 0 AND is_current AND NOT is_deleted")" 500 \
  "load.partition: region s's keys stay"
unlike "$ERR" "cannot spill" "load.partition: no warning"
is "$(keyparts)" 1 "load.partition: the key map (1000 versions) partitioned with the delta"
like "$ERR" "info: 50 of 500 live keys of the partitions delivered absent, judged partition by partition" \
  "load.partition: absence judged partition by partition, in the partitions delivered"
unlike "$ERR" "of key map" "load.partition: no warning of the key map"
NORM=

# ---- a failure after spilling: no file left, nothing written -------------------
# (a table holding a row, so the delta spills rather than streams)
pair fail scd2
seed fail
feed fail.csv 1 50 2024-01-01
awk 'NR > 140 { sub(/,[^,]*$/, ",bad time") } { print }' "$WORK/fail.csv" >"$WORK/fail2.csv"
mv "$WORK/fail2.csv" "$WORK/fail.csv"
dw run --memory-budget 64KiB "$WORK/fail_tiny.yaml"
is "$RC|$(spilled)" "4|1" "failure: too many rejects after spilling: exit 4"
is "$(spill_files)|$(rows_of d_fail_tiny)" "|1" \
  "failure: no spill file left, nothing written"

# ---- load.late: reject fails the run after counting every late row -----------
# As one pass does (late.c), a spilled run computes the partitions after
# the one that failed on its late rows, to count theirs: the same count
# and exit status at both budgets, and nothing written.
pair lr scd2 '  late: reject
  lookback: 1d'
feed lr.csv 1 300 2024-01-01
for _s in big tiny; do
  dw run "$WORK/lr_$_s.yaml"
  is "$RC" 0 "late reject: the initial load exits 0 ($_s)"
done
feed lr.csv 150 450 2024-01-02 late
dw run "$WORK/lr_big.yaml"
_lr="$RC|$(field late_rejected)|$(field inserted)"
dw run --memory-budget 64KiB "$WORK/lr_tiny.yaml"
is "$(spilled)" 1 "late reject: the tiny budget spills"
is "$RC|$(field late_rejected)|$(field inserted)" "$_lr" "late reject: the same exit status and late_rejected count"
is "$_lr" "4|31|0" "late reject: exit 4, the 31 late rows (keys 150..300 divisible by 5) counted, nothing inserted"
like "$ERR" ": a late row, and load.late is reject" "late reject: the message names a late row"
like "$ERR" "the 32 bad rows of this failed run are in $WORK/lr_tiny.rejects.csv.failed" \
  "late reject: the failed run's reject file holds the 31 late rows and the bad lmd"
is "$(sort "$WORK/lr_tiny.rejects.csv.failed")" "$(sort "$WORK/lr_big.rejects.csv.failed")" \
  "late reject: the same rows set aside in the failed run's reject file"
is "$(tdump d_lr_tiny)" "$(tdump d_lr_big)" "late reject: both tables as after the initial load"
is "$(spill_files)" "" "late reject: no spill file is left"

# ---- a full disk: a clear error (a 128 KiB tmpfs, where mounting one is
# allowed: root on Linux) -------------------------------------------------------
FULL="$WORK/full"
mkdir -p "$FULL"
if mount -t tmpfs -o size=128k tmpfs "$FULL" 2>/dev/null; then
  pair full scd2
  seed full
  feed full.csv 1 3000 2024-01-01
  TMPDIR="$FULL" dw run --memory-budget 64KiB "$WORK/full_tiny.yaml"
  umount "$FULL"
  is "$RC" 1 "full disk: exit 1"
  like "$ERR" "writing the delta's spill files in $FULL failed: No space left on device" \
    "full disk: the error says where and why"
  is "$(rows_of d_full_tiny)" 1 "full disk: nothing written"
else
  skip_tests 4 "cannot mount a tmpfs (not root)"
fi

# ---- pushdown with deletes: absent holds the rows not past the checkpoint
# in a file of TMPDIR (pushdown_old.c): a full disk there is the same clear
# error, and nothing is written --------------------------------------------
awk 'BEGIN { print "id,city,lmd"; for (i = 1; i <= 3000; i++) printf "%d,city%d,2024-01-01 00:00:00\n", i, i }' \
  >"$WORK/pdfull.csv"
J=$(mkjob pdfull "$WORK/pdfull.csv" d_pdfull <<'EOF'
load:
  mode: scd2
  engine: pushdown
  key: id
  lmd: lmd
  deletes: absent
EOF
)
if mount -t tmpfs -o size=128k tmpfs "$FULL" 2>/dev/null; then
  dw run "$J"
  first=$RC
  before=$(tdump d_pdfull)
  # (the same extract again: all 3000 rows at the checkpoint)
  TMPDIR="$FULL" dw run "$J"
  umount "$FULL"
  is "$first|$RC" "0|1" "pushdown, full disk: the first load exits 0, the second 1"
  like "$ERR" "writing pushdown's file of the rows not past the checkpoint in $FULL failed: No space left on device" \
    "pushdown, full disk: the error says which file, where and why"
  unlike "$ERR" "memory_budget" "pushdown, full disk: the hint is not the memory budget's"
  is "$(tdump d_pdfull)" "$before" "pushdown, full disk: nothing written"
else
  skip_tests 4 "cannot mount a tmpfs (not root)"
fi

# ---- SIGTERM while spilling ---------------------------------------------------
pair sig scd2
seed sig
FIFO="$WORK/sig.fifo"
mkfifo "$FIFO"
sed -i "s|path: .*|path: $FIFO|" "$WORK/sig_tiny.yaml"
exec 3<>"$FIFO"
: >"$WORK/r.err"
$DFLT "$DWLOAD" run --memory-budget 64KiB "$WORK/sig_tiny.yaml" >"$WORK/r.out" 2>"$WORK/r.err" 3>&- &
PID=$!
feed sig.csv 1 2000 2024-01-01
cat "$WORK/sig.csv" >&3  # and no end: the run waits for more
# (or until the run ends: one that failed early says why at once)
spill_or_end() {
  grep -q "spilling to" "$WORK/r.err" || ! kill -0 "$PID"
}
if wait_until 3000 spill_or_end && grep -q "spilling to" "$WORK/r.err"; then
  pass "SIGTERM: the run spills"
else
  fail "SIGTERM: the run spills" "$(cat "$WORK/r.err")"
fi
# the files are open, unlinked, in TMPDIR
held=$(ls -l "/proc/$PID/fd" 2>/dev/null | grep -c "$TMPDIR/dwload-spill-.* (deleted)")
[ "$held" -gt 0 ] && pass "SIGTERM: the run holds its spill files ($held)" ||
  fail "SIGTERM: the run holds its spill files" "$(ls -l "/proc/$PID/fd")"
is "$(spill_files)" "" "SIGTERM: none of them has a name in TMPDIR"
kill -TERM "$PID"
finish "$PID" 60
is "$?" 143 "SIGTERM while spilling: exit 143"
exec 3>&-
is "$(spill_files)|$(rows_of d_sig_tiny)" "|1" \
  "SIGTERM: no spill file left, nothing written"

done_testing
