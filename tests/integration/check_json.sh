#!/bin/sh
# dwload check --json: the steps as one JSON document, the engine a job
# uses and why, and whether pushdown would take it (what lib.sh's _engine
# asks before it runs a job under DWL_ENGINE=pushdown); --spec-only
# decides that from the spec alone, without a plugin or a connection.
. "$TOP_SRCDIR/tests/integration/lib.sh"

CSV=$(file c.csv <<'EOF'
id,name,lmd
1,a,2024-01-01 00:00:00
EOF
)

# cj NAME CONNECTION LOAD-LINES: a csv job on table NAME
cj() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $CSV
target:
  connection: "$2"
  table: $1
load:
$3
EOF
}

# jfield NAME: a member of the document in LAST, as JSON (true, "ok", ...)
jfield() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
print(json.dumps(json.loads(sys.stdin.read()).get(sys.argv[1], "MISSING")))' "$1"
}

# steps: the document's steps, one "step ok" per line
steps() {
  printf '%s' "$LAST" | python3 -c '
import json, sys
for s in json.loads(sys.stdin.read())["steps"]:
    print(s["step"], "ok" if s["ok"] is True else "FAILED" if s["ok"] is False else "?")'
}

SCD2='  mode: scd2
  key: [id]
  lmd: lmd'

# ---- the whole check ---------------------------------------------------------
J=$(cj t_mem "$WH_CONN" "$SCD2")
dw check --connect --json "$J"
is "$RC" 0 "check --json of a good job exits 0"
is "$(printf '%s\n' "$OUT" | wc -l)" 1 "one line on stdout"
is "$(steps | tr '\n' ',')" "spec ok,plugin ok,types ok,target ok,state ok,source ok,columns ok,table ok," \
  "every step of the text check, each ok"
is "$(jfield ok)" true "ok: true"
is "$(jfield job)" '"t_mem"' "the job's name"
is "$(jfield mode)" '"scd2"' "the mode"
is "$(jfield engine)" '"memory"' "no load.engine: memory"
like "$(jfield engine_reason)" "not set; memory is the default" "the reason: the default"
is "$(jfield pushdown)" '"ok"' "pushdown would take it"
is "$(table_exists t_mem)" 0 "check --json created no table"
dw check --connect "$J"
is "$(printf '%s\n' "$OUT" | grep -c ' ok ')" 8 "without --json: the eight lines as before"

# ---- --spec-only: the spec alone -----------------------------------------------
# No connection is made: an unreachable target still checks.
NOWH="Driver=SQLite3;Database=$WORK/no/such/dir/w.db"
J=$(cj t_off "$NOWH" "$SCD2
  engine: pushdown")
dw check --json --spec-only "$J"
is "$RC" 0 "--spec-only with an unusable connection exits 0"
is "$(steps | tr '\n' ',')" "spec ok," "--spec-only: the spec step only"
is "$(jfield engine)" '"pushdown"' "load.engine: pushdown: pushdown"
like "$(jfield engine_reason)" "t_off.yaml:13:3: the spec sets load.engine: pushdown" \
  "the reason names where the spec sets it"
is "$(jfield pushdown)" '"ok"' "a pushdown job that loaded: ok"
dw check --connect "$J"
is "$RC" 1 "without --spec-only, with --connect, the same job fails at its target"
like "$OUT" "target   FAILED" "... at the target step"

J=$(cj t_abs "$NOWH" "$SCD2
  lookback: 1d
  deletes: absent")
dw check --json --spec-only "$J"
is "$RC|$(jfield pushdown)" '0|"ok"' "load.lookback with deletes: absent: pushdown takes it"
J=$(cj t_trn "$NOWH" "$SCD2
  lookback: 1d
  deletes: {column: op, values: [D], truncate_values: [T]}")
dw check --json --spec-only "$J"
is "$RC|$(jfield pushdown)" '0|"ok"' "load.lookback with truncate_values: pushdown takes it"
J=$(cj t_lkp "$NOWH" "$SCD2
  lookup: keys")
dw check --json --spec-only "$J"
is "$RC" 0 "a memory job pushdown refuses still checks"
is "$(jfield engine)" '"memory"' "... with the memory engine"
like "$(jfield pushdown)" "load.engine: pushdown does not read current versions into memory, so load.lookup does not apply" \
  "pushdown: the refusal, as the spec check words it"
J=$(cj t_lkp2 "$NOWH" "$SCD2
  lookup: keys
  engine: pushdown")
dw check --json --spec-only "$J"
is "$RC" 2 "the same job asking for pushdown is a spec error (exit 2)"
like "$(jfield steps)" "load.engine: pushdown does not read current versions into memory, so load.lookup does not apply" \
  "... its failed spec step says why"
is "$(jfield ok)" false "... ok: false"
is "$(jfield engine)" '"MISSING"' "... and no engine field: the spec did not load"

J=$(cj t_app "$NOWH" '  mode: append')
dw check --json --spec-only "$J"
is "$(jfield pushdown)" '"load.engine: pushdown applies only to modes scd2 and upsert"' \
  "append: pushdown applies only to scd2 and upsert"
J=$(cj t_mem2 "$NOWH" "$SCD2
  engine: memory")
dw check --json --spec-only "$J"
like "$(jfield engine_reason)" "the spec sets load.engine: memory" "an explicit memory engine: its position"

# ---- usage ------------------------------------------------------------------
dw asof --json --at 2024-01-01 "$J"
is "$RC" 2 "--json with asof: usage error"
like "$ERR" "--json applies only to check, state and runs" "... says so"
dw plan --spec-only "$J"
is "$RC" 2 "--spec-only with plan: usage error"

done_testing
