# Differential test of late rows: random change streams per key
# (tests/late_gen.py), delivered in random batch splits and random arrival
# order within load.lookback and loaded run after run with load.late:
# repair, must give the same dimension as the whole stream loaded in one
# run.  Several dimension layouts; the run timestamps play no part (deletes
# come from a flag column).
#
#   DWL_DIFF_SEED   the generator's seed (default: a new one, printed)
#   DWL_DIFF_CASES  cases per layout (default: 400 on SQLite, 60 on the
#                   servers); a case is a few keys, and one job holds them all
. "$TOP_SRCDIR/tests/integration/lib.sh"

SEED=${DWL_DIFF_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if is_warehouse sqlite; then CASES=${DWL_DIFF_CASES:-400}; else CASES=${DWL_DIFF_CASES:-60}; fi
echo "# seed $SEED, $CASES cases per layout (DWL_DIFF_SEED=$SEED DWL_DIFF_CASES=$CASES to repeat)"

# layout NAME SEED YAML COLS [BUDGET]: one layout, generated, loaded both
# ways, compared; BUDGET: the incremental runs take --memory-budget BUDGET
# (a tiny one spills their deltas to partition files: run_spill.c)
layout() {
  _name=$1 _seed=$2 _yaml=$3 _cols=$4 _budget=${5:-}
  _dir="$WORK/$_name"
  python3 "$TOP_SRCDIR/tests/late_gen.py" "$_seed" "$CASES" "$_dir" 7200
  _runs=$(cat "$_dir/runs")
  _load="load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D]}"
  _inc=$(printf '%s\n  lookback: 2h\n  late: repair\n%s\n' "$_load" "$_yaml" |
    mkjob "${_name}_inc" "$_dir/src.csv" "${_name}_inc")
  # (the reference is the memory engine's, also when DWL_ENGINE runs the
  # incremental job with pushdown)
  _ref=$(printf '%s\n%s\n' "$_load" "$_yaml" | DWL_ENGINE='' mkjob "${_name}_ref" "$_dir/all.csv" "${_name}_ref")
  _k=1 _bad="" _late=0 _spilled=0 _pd=0
  while [ "$_k" -le "$_runs" ]; do
    cp "$_dir/run$_k.csv" "$_dir/src.csv"
    dw run ${_budget:+--memory-budget "$_budget"} "$_inc"
    if [ "$RC" != 0 ]; then
      _bad="run $_k of $_runs exited $RC: $(printf '%s' "$ERR" | grep -v ' info: ' | head -n 3)"
      break
    fi
    _late=$((_late + $(field late_repaired)))
    [ "$(field engine)" = pushdown ] && _pd=$((_pd + 1))
    # A run with no row past the checkpoint has nothing to spill; one into
    # a table without current versions is an initial load, which streams
    # instead (run_stream.c).  That is not only the first with rows: when
    # the first holds a single delete row (DWL_DIFF_SEED=2591178342 on
    # PostgreSQL), the next finds no current version and streams too.
    if [ "$(field read)" = "$(field skipped)" ]; then
      _spilled=$((_spilled + 1))
    elif [ "$(field spilled_partitions)" -gt 0 ] 2>/dev/null || [ "$(field streamed_chunks)" -gt 0 ] 2>/dev/null; then
      _spilled=$((_spilled + 1))
    fi
    _k=$((_k + 1))
  done
  is "$_bad" "" "$_name: $_runs incremental runs succeed (seed $_seed)"
  # the streams must exercise repairs, or the comparison proves little
  # (at least one in twenty cases: a seed of few late rows must not fail it)
  if [ "$_late" -ge $((CASES / 20 + 1)) ]; then pass "$_name: $_late late rows repaired"; else
    fail "$_name: only $_late late rows repaired for $CASES cases"; fi
  if [ "${DWL_ENGINE:-}" = pushdown ]; then
    # (pushdown hands the keys with late rows to the memory engine:
    # pushdown_take_late; it spills nothing)
    is "$_pd" "$_runs" "$_name: every run took pushdown"
  elif [ -n "$_budget" ]; then
    is "$_spilled" "$_runs" "$_name: with --memory-budget $_budget every run with a delta spills it (an initial load streams)"
  fi
  dw run "$_ref"
  is "$RC" 0 "$_name: the reference run succeeds"
  _q="SELECT $_cols FROM %s ORDER BY id, valid_from, is_deleted"
  # shellcheck disable=SC2059
  sqln "$(printf "$_q" "${_name}_inc")" >"$_dir/inc.txt"
  # shellcheck disable=SC2059
  sqln "$(printf "$_q" "${_name}_ref")" >"$_dir/ref.txt"
  if cmp -s "$_dir/inc.txt" "$_dir/ref.txt" && [ -s "$_dir/ref.txt" ]; then
    pass "$_name: $(wc -l <"$_dir/ref.txt") versions of $CASES cases equal to the one-run load"
  else
    # the cases that differ, by key prefix, and the first lines that do
    _cases=$(diff "$_dir/inc.txt" "$_dir/ref.txt" | sed -n 's/^[<>] \([^|]*|\)\{0,1\}c\([0-9][0-9]*\)k[0-9][0-9]*|.*/\2/p' | sort -un | tr '\n' ' ')
    fail "$_name: dimension differs from the one-run load (DWL_DIFF_SEED=$SEED, layout seed $_seed, cases: $_cases)" \
      "$(diff "$_dir/inc.txt" "$_dir/ref.txt" | head -n 20)"
  fi
}

# expire style, type 1 over every version, sequence surrogate keys (which
# differ by load order, so left out of the comparison)
layout lx "$SEED" "  type1: [t]
  type1_scope: all
dimension:
  surrogate_key: sk" "id, v, t, op, lmd, valid_from, valid_to, is_current, is_deleted"

# tombstones, close one second before the next version, hash surrogate keys
# (compared: they follow valid_from); the incremental runs spill (a 64 KiB
# memory budget)
layout lt "$((SEED + 1))" "  type1: [t]
  type1_scope: all
  delete_style: tombstone
dimension:
  surrogate_key: sk
  surrogate_strategy: hash
  close: second_before" "sk, id, v, t, op, lmd, valid_from, valid_to, is_current, is_deleted" 64KiB

# every column tracked (no type 1), tombstones, no current column: the
# open end marks the current version
layout lo "$((SEED + 2))" "  delete_style: tombstone
dimension:
  current: null
  open_end: '9999-12-31 00:00:00'" "id, v, t, op, lmd, valid_from, valid_to, 0 AS is_current, is_deleted"

done_testing
