#!/bin/sh
# Follow-ups of issue 14 ("never lose history"): run --empty-exit refuses
# dwload's own exit codes; connection-string attributes the user set are
# matched by their whole name (UseDeclareFetch= is not Fetch=).
. "$TOP_SRCDIR/tests/integration/lib.sh"

printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n' >"$WORK/one.csv"
J=$(printf 'load:\n  mode: append\n  lmd: lmd\n' | mkjob fu_empty "$WORK/one.csv" fu_empty "  types: {id: integer}")

# ---- run --empty-exit N: N is never one of dwload's own codes -----------------
for n in 1 2 3 4 5 6 128 129 130 143 255; do
  dw run --empty-exit "$n" "$J"
  is "$RC|$(table_exists fu_empty)" "2|0" "--empty-exit $n is refused (exit 2) before anything runs"
done
like "$ERR" "1 to 6 and 128 to 255 are dwload's own exit codes" "the refusal names the reserved codes"
dw run --empty-exit 127 "$J"
is "$RC|$(field inserted)" "0|1" "--empty-exit 127 is allowed: a run that loads exits 0"
dw run --empty-exit 7 "$J"
is "$RC|$(field status)" "7|ok" "--empty-exit 7: nothing past the checkpoint exits 7"

done_testing
