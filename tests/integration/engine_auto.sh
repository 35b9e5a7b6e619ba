# load.engine: auto and load.memory_budget (issue 18): a budget below the
# memory engine's estimate makes auto take pushdown (said in the log and
# the summary), and the table equals the memory engine's; a budget above
# it keeps memory; a job pushdown refuses stays with memory and says why;
# --memory-budget wins over the spec; bad sizes fail with exit 2 at their
# position.  Each case reads the same feeds as a load.engine: memory job
# into a second table of the same warehouse.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# The jobs name their engine; DWL_ENGINE must not change them.
unset DWL_ENGINE

# pair NAME BUDGET [EXTRA-LOAD-LINES]: jobs NAME_a (engine: auto with
# memory_budget BUDGET, table d_NAME_a) and NAME_m (engine: memory,
# d_NAME_m), both reading $WORK/NAME.csv.
pair() {
  for _e in auto memory; do
    _t=$([ $_e = auto ] && echo a || echo m)
    {
      printf 'load:\n  mode: scd2\n  engine: %s\n' "$_e"
      [ $_e = auto ] && [ -n "$2" ] && printf '  memory_budget: %s\n' "$2"
      printf '  key: id\n  lmd: lmd\n  type1: [phone]\n'
      [ -n "${3:-}" ] && printf '%s\n' "$3"
    } | mkjob "${1}_$_t" "$WORK/$1.csv" "d_${1}_$_t" '  types: {id: integer, lmd: timestamp}' >/dev/null
  done
}

# both NAME ROWS MSG [AUTO-OPTIONS]: runs the memory job, then the auto
# job (with AUTO-OPTIONS before the job file; its stderr stays in ERR and
# its summary in LAST); both exit 0 with the same counts and rows, ROWS of
# them.
both() {
  dw run "$WORK/${1}_m.yaml"
  _mrc=$RC _mc=$(counts)
  dw run ${4:-} "$WORK/${1}_a.yaml"
  is "$_mrc $RC" "0 0" "$3: both jobs exit 0"
  [ "$RC" = 0 ] || echo "# auto: $ERR"
  is "$(counts)" "$_mc" "$3: the same counts"
  is "$(tdump "d_${1}_a")" "$(tdump "d_${1}_m")" "$3: the same rows as the memory engine"
  is "$(sql "SELECT COUNT(*) FROM d_${1}_a")" "$2" "$3: $2 rows"
}

# The dialect's bytes per current version (scan_row_bytes), in the line.
case $WAREHOUSE in
  sqlite) B=82 ;;
  postgresql) B=90 ;;
  *) B=170 ;;
esac

# chose ENGINE: the log's one line of the choice, and the summary's
# engine field
chose() {
  printf '%s\n' "$ERR" | grep -c "engine: auto chose $1: "
}

feed1() {
  file "$1.csv" >/dev/null <<'CSV'
id,city,phone,lmd
1,Oslo,p1,2024-01-01 10:00:00
2,Rome,p2,2024-01-01 10:00:00
3,Lima,p3,2024-01-01 10:00:00
4,Kiev,p4,2024-01-01 10:00:00
CSV
}
feed2() {
  file "$1.csv" >/dev/null <<'CSV'
id,city,phone,lmd
1,Bergen,p1,2024-02-01 10:00:00
2,Rome,p9,2024-02-01 10:00:00
3,Lima,p3,2024-02-01 10:00:00
5,Quito,p5,2024-02-01 10:00:00
CSV
}

# ---- a budget below the estimate: pushdown -------------------------------
# 100 bytes: less than the stream's 1 MiB filter of written keys, so also
# the first run, into no table yet, takes pushdown.
pair tiny 100B
feed1 tiny
both tiny 4 "tiny budget, run 1"
is "$(chose pushdown)" 1 "tiny budget, run 1: the log says auto chose pushdown, once"
like "$ERR" "engine: auto chose pushdown: dimension ~0 rows x $B bytes = 0 MiB + an initial load streamed in chunks of 9.54e-05 MiB with a 1.0 MiB filter of written keys > budget" \
  "tiny budget, run 1: the log line gives the dimension's estimate (no table yet) and the stream's"
like "$ERR" " > budget 9.54e-05 MiB (load.memory_budget at $WORK/tiny_a.yaml:13:3)" \
  "tiny budget, run 1: ... against the budget the spec gives, at its position"
is "$(field engine)" pushdown "tiny budget, run 1: the summary's engine is pushdown"
like "$(field engine_reason)" "engine: auto chose pushdown: dimension ~0 rows" \
  "tiny budget, run 1: the summary's engine_reason is the log's line"
feed2 tiny
both tiny 6 "tiny budget, run 2: a changed type 2 value, a type 1 overwrite, a no-op, a new key"
is "$(chose pushdown)" 1 "tiny budget, run 2: auto chose pushdown"
is "$(printf '%s\n' "$ERR" | grep -cE "engine: auto chose pushdown: dimension ~[1-9][0-9]* rows x $B bytes = [0-9.e-]+ MiB")" 1 \
  "tiny budget, run 2: the dimension's estimate counts the table's rows"
# The budget below the dimension alone: a source that does not tell its
# size (a FIFO) leaves the dimension to decide.
mkfifo "$WORK/fifo.csv"
printf 'load:\n  mode: scd2\n  engine: auto\n  memory_budget: 100B\n  key: id\n  lmd: lmd\n  type1: [phone]\n' |
  mkjob tiny_fifo "$WORK/fifo.csv" d_tiny_a '  types: {id: integer, lmd: timestamp}' >/dev/null
# (bounded: a plan that failed before opening the FIFO leaves no reader)
timeout 60 sh -c 'cat "$1" >"$2"' sh "$WORK/tiny.csv" "$WORK/fifo.csv" &
dw plan "$WORK/tiny_fifo.yaml"
wait
is "$RC" 0 "a FIFO source: plan exits 0"
is "$(printf '%s\n' "$ERR" | grep -cE "engine: auto chose pushdown: dimension ~[1-9][0-9]* rows x $B bytes = [0-9.e-]+ MiB > budget")" 1 \
  "a FIFO source (no size): the dimension alone is over the budget: pushdown, the line without a delta"

# ---- an initial load streams: the source's size does not count ----------
# A 20 MiB budget holds the stream's 16 MiB chunks and 2.5 MiB filter, not
# the 4.6 MB source held (x 5 = 23 MB): the first run, into no table yet,
# keeps the memory engine and streams; the second, a delta of the same
# size into the table the first made, is held, so it takes pushdown.
pair wide 20MiB
wide() {
  awk -v city="$1" -v day="$2" 'BEGIN { pad = sprintf("%200s", ""); gsub(/ /, "x", pad)
    print "id,city,phone,note,lmd"
    for (i = 1; i <= 20000; i++) printf "%d,%s%d,p%d,%s,2024-01-%s 10:00:00\n", i, city, i, i, pad, day }' \
    >"$WORK/wide.csv"
}
wide c 01
is "$(($(wc -c <"$WORK/wide.csv") * 5 > 20 * 1048576))" 1 "wide: the source x 5 exceeds the budget"
dw plan "$WORK/wide_a.yaml"
is "$RC $(chose memory)" "0 1" "initial load: plan says auto chooses memory, as the run will"
both wide 20000 "20 MiB budget, an initial load of a 4.6 MB source"
is "$(chose memory)" 1 "initial load: auto chose memory"
like "$ERR" "engine: auto chose memory: dimension ~0 rows x $B bytes = 0 MiB + an initial load streamed in chunks of 16.0 MiB with a 2.5 MiB filter of written keys <= budget 20.0 MiB (load.memory_budget at $WORK/wide_a.yaml:13:3)" \
  "initial load: the line counts the stream's chunk and filter, not the source"
is "$(field engine)" memory "initial load: the summary's engine is memory"
wide d 02
both wide 40000 "20 MiB budget, a 4.6 MB delta into the loaded table"
is "$(chose pushdown)" 1 "the delta into the loaded table: auto chose pushdown"
is "$(printf '%s\n' "$ERR" | grep -cE " \+ delta 4\.[0-9] MiB of source x 5 = 2[0-9]\.[0-9] MiB > budget 20\.0 MiB")" 1 \
  "the delta into the loaded table: the line counts the source held"

# ---- a budget above the estimate: memory ---------------------------------
pair big 1GiB
feed1 big
both big 4 "large budget, run 1"
is "$(chose memory)" 1 "large budget: the log says auto chose memory"
like "$ERR" "<= budget 1024 MiB (load.memory_budget at $WORK/big_a.yaml:13:3)" "large budget: ... within the budget"
is "$(field engine)" memory "large budget: the summary's engine is memory"

# ---- --memory-budget wins over the spec, both ways -----------------------
feed2 big
both big 6 "large budget in the spec, --memory-budget 100B" "--memory-budget 100B"
is "$(chose pushdown)" 1 "--memory-budget 100B over the spec's 1GiB: pushdown"
like "$ERR" "> budget 9.54e-05 MiB (--memory-budget)" "... the log names the option as the budget's source"
feed2 tiny
dw plan --memory-budget 2GiB "$WORK/tiny_a.yaml"
is "$RC" 0 "--memory-budget 2GiB over the spec's 100B: plan exits 0"
like "$ERR" "engine: auto chose memory: dimension ~" "plan: the log says auto chose memory"
like "$ERR" "<= budget 2048 MiB (--memory-budget)" "plan: ... against the option's budget"
is "$(field engine)" memory "plan: the summary's engine is memory"

# ---- the default budget --------------------------------------------------
pair dflt ''
feed1 dflt
both dflt 4 "no memory_budget"
like "$ERR" "(the default: a quarter of physical memory, 256 MiB to 16 GiB)" \
  "no memory_budget: the log names the default as the budget's source"
is "$(chose memory)" 1 "no memory_budget: a small job stays with memory"
dw plan "$WORK/dflt_m.yaml"
like "$ERR" "engine: memory: load.engine at $WORK/dflt_m.yaml:12:3 (memory budget " \
  "engine: memory: plan says the engine, where the spec sets it, and the budget"

# ---- pushdown refuses the job: memory, and why ---------------------------
# The memory engine over its 100-byte budget spills (run_spill.c): hash
# surrogate keys, as a spilled run numbers sequence ones partition by
# partition.  load.lookup: pushdown reads no current versions into memory.
pair late 100B '  lookup: keys
dimension:
  surrogate_strategy: hash'
feed1 late
both late 4 "tiny budget, load.lookup (pushdown refuses it), run 1"
is "$(chose memory)" 1 "load.lookup: auto chose memory over the budget"
like "$ERR" "> budget 9.54e-05 MiB (load.memory_budget at $WORK/late_a.yaml:13:3), but load.engine: pushdown does not read current versions into memory, so load.lookup does not apply" \
  "load.lookup: the line says the estimate is over the budget and why pushdown does not take the job"
feed2 late
both late 6 "tiny budget, load.lookup, run 2"
is "$(field engine)" memory "load.lookup: the summary's engine is memory"

# load.watermark: none with load.deletes.truncate_values: pushdown takes it
# (the keys with late rows go to the memory engine, which gives them the
# truncates itself).  (phone, the delete column, is not tracked: no
# truncate arrives.)
pair wmt 100B '  watermark: none
  deletes: {column: phone, values: [D], truncate_values: [T]}
dimension:
  surrogate_strategy: hash'
for _t in a m; do sed -i '/^  type1: \[phone\]$/d' "$WORK/wmt_$_t.yaml"; done
feed1 wmt
both wmt 4 "tiny budget, load.watermark: none with truncate_values, run 1"
feed2 wmt
both wmt 6 "tiny budget, load.watermark: none with truncate_values, run 2"
is "$(field engine)" pushdown "load.watermark: none with truncate_values: auto chose pushdown"
# key 1's row of a city between its versions: a late row, repaired
file wmt.csv >/dev/null <<'CSV'
id,city,phone,lmd
1,Paris,p1,2024-01-15 10:00:00
1,Bergen,p1,2024-02-01 10:00:00
CSV
both wmt 7 "tiny budget, load.watermark: none with truncate_values, a late row"
is "$(field engine) $(field late_repaired)" "pushdown 1" \
  "load.watermark: none with truncate_values: pushdown repaired the late row"

# ... with load.ignore_null_updates instead, pushdown takes it: its fill
# comes after the keys with late rows went to the memory engine
pair inu 100B '  watermark: none
  ignore_null_updates: true
dimension:
  surrogate_strategy: hash'
feed1 inu
both inu 4 "tiny budget, load.watermark: none, ignore_null_updates, run 1"
feed2 inu
both inu 6 "tiny budget, load.watermark: none, ignore_null_updates, run 2"
is "$(field engine)" pushdown "load.watermark: none, ignore_null_updates: auto chose pushdown"

# load.lookback alone: pushdown takes it (the keys with late rows go to the
# memory engine, pushdown_take_late), with the same rows.
pair lb 100B '  lookback: 40d'
feed1 lb
both lb 4 "tiny budget, load.lookback alone, run 1"
feed2 lb
both lb 6 "tiny budget, load.lookback alone, run 2"
is "$(field engine)" pushdown "load.lookback alone: auto chose pushdown over the budget"
# within the lookback: key 1's row of a city between its versions (spliced
# in), key 5's again (a no-op)
file lb.csv >/dev/null <<'CSV'
id,city,phone,lmd
1,Paris,p1,2024-01-15 10:00:00
5,Quito,p5,2024-02-01 10:00:00
CSV
both lb 7 "tiny budget, load.lookback alone, a late row"
is "$(field engine) $(field late_repaired)" "pushdown 1" "load.lookback alone: pushdown repaired the late row"

# ---- several jobs: each one's run takes --memory-budget -----------------
dw run --memory-budget 100B "$WORK/big_a.yaml" "$WORK/dflt_a.yaml"
is "$RC" 0 "two jobs with --memory-budget 100B: exit 0"
is "$(printf '%s\n' "$ERR" | grep 'engine: auto chose pushdown: ' | grep -c '(--memory-budget)')" 2 \
  "two jobs: both runs chose pushdown against the option's budget"

# ---- check --json: the job's engine is auto -------------------------------
dw check --json --spec-only "$WORK/tiny_a.yaml"
is "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["engine"], d["pushdown"])')" \
  "auto ok" "check --json: engine auto, pushdown would take the job"

# ---- bad sizes: exit 2 at the value's position -------------------------------
for bad in 12XB 0 -5 1.5GiB 2gib 99999999999TiB; do
  sed "s/memory_budget: 100B/memory_budget: \"$bad\"/" "$WORK/tiny_a.yaml" >"$WORK/bad.yaml"
  dw run "$WORK/bad.yaml"
  is "$RC" 2 "memory_budget: $bad: exit 2"
  like "$ERR" "$WORK/bad.yaml:13:18: load.memory_budget: expected a size such as 512MiB, 2GiB, 64KiB or a number of bytes, more than 0 and at most 1 PiB, found '$bad'" \
    "memory_budget: $bad: the message gives the file, line and column"
done
for bad in 12XB 0 1e9; do
  dw run --memory-budget "$bad" "$WORK/tiny_a.yaml"
  is "$RC" 2 "--memory-budget $bad: exit 2"
  like "$ERR" "--memory-budget must be a size such as 512MiB" "--memory-budget $bad: the message says the forms"
done
dw check --memory-budget 1GiB "$WORK/tiny_a.yaml"
is "$RC" 2 "--memory-budget with check: exit 2"

done_testing
