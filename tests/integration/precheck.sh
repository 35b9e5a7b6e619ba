#!/bin/sh
# Checks before work: run and check load the plugin, validate its options
# and check the reject file's folder BEFORE they connect, so a misspelt
# option is exit 2 with FILE:LINE:COL also when the warehouse is down (it
# was exit 1, the connection's failure), a run that would fail on them
# touches nothing in the warehouse (not even dwload_state), and check
# reports a reject folder that does not exist (it said ok, and the run
# failed).
. "$TOP_SRCDIR/tests/integration/lib.sh"

CSV=$(file feed.csv <<'EOF'
id,name,lmd
1,alpha,2024-01-01 00:00:00
EOF
)

DOWN=$(wh_down_conn)

# pc_job NAME CONNECTION [SOURCE-LINE] [LOAD-LINE]: an append job file
pc_job() {
  cat >"$WORK/$1.yaml" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $CSV
${3:-}
target:
  connection: "$2"
  table: $1
load:
  mode: append
${4:-}
EOF
  echo "$WORK/$1.yaml"
}

# inc_run NAME OPTION-LINE WHERE-AND-ERROR WHAT: a job (warehouse down)
# whose include: file gives the plugin and OPTION-LINE: exit 2, and the
# error at LINE:COL of the included file
inc_run() {
  printf 'source:\n  plugin: csv\n%s\n' "$2" >"$WORK/_shared.yaml"
  _j=$(pc_job "$1" "$DOWN")
  sed -i "s/^job: $1/job: $1\\ninclude: _shared.yaml/" "$_j"
  dw run "$_j"
  is "$RC" 2 "$4: exit 2"
  like "$ERR" "$WORK/_shared.yaml:$3" "$4: the included file's line and column"
}


# ---- a misspelt option, the warehouse down: exit 2, the option named -------
J=$(pc_job pc_down "$DOWN" '  delimitr: ","')
dw run "$J"
is "$RC" 2 "warehouse down + misspelt option: run exits 2 (the option), not 1 (the connection)"
like "$ERR" "$J:6:3: unknown option 'delimitr' for plugin csv; did you mean 'delimiter'?" \
  "warehouse down + misspelt option: the error names file:line:col and the option"
is "$(field status)" failed "warehouse down + misspelt option: the summary says failed"
dw check "$J"
is "$RC" 2 "warehouse down + misspelt option: check exits 2"
like "$OUT" "plugin   FAILED $J:6:3: unknown option 'delimitr'" "check: the plugin step fails"
unlike "$OUT" "target" "check: it stops before connecting"
J=$(pc_job pc_noplug "$DOWN")
sed -i 's/plugin: csv/plugin: cvs/' "$J"
dw run "$J"
is "$RC" 4 "warehouse down + a plugin that does not exist: exit 4 (permanent), not 1"
like "$ERR" "plugin 'cvs' not found" "warehouse down + a plugin that does not exist: said so"

# ---- the warehouse up: a run that fails its checks touches nothing -----------
BEFORE=$(wh_dump)
J=$(pc_job pc_up "$WH_CONN" '  delimitr: ","')
dw run "$J"
is "$RC" 2 "misspelt option: exit 2"
is "$(wh_dump)" "$BEFORE" "misspelt option: nothing in the warehouse changed (not even dwload_state)"
# An option the included file misspells is named there.
inc_run pc_inc '  quote_char: "x"' "3:3: unknown option 'quote_char' for plugin csv" "a misspelt option from include"
J=$(pc_job pc_type "$DOWN" '  header: maybe')
dw run "$J"
is "$RC" 2 "warehouse down + an option of the wrong type: exit 2"
like "$ERR" "$J:6:11: source.header: 'maybe' is not a boolean" "an option of the wrong type: the value's line and column"
inc_run pc_inc2 '  header: perhaps' "3:11: source.header: 'perhaps' is not a boolean" \
  "an option of the wrong type from include"

# ---- the reject file's folder ------------------------------------------------
J=$(pc_job pc_rej "$WH_CONN" "" '  reject_file: missing/rejects.csv
  max_rejects: 5')
dw check --json "$J"
is "$RC" 4 "reject folder missing: check exits 4"
is "$(check_steps)" "spec ok,plugin ok,types ok,rejects FAILED," "reject folder missing: check --json's rejects step fails, before target"
like "$OUT" "$J:12:3: load.reject_file: its folder $WORK/missing cannot take the reject file: No such file or directory" \
  "reject folder missing: the message names file:line:col and the folder"
BEFORE=$(wh_dump)
dw run "$J"
is "$RC" 4 "reject folder missing: run exits 4"
like "$ERR" "load.reject_file: its folder $WORK/missing cannot take" "reject folder missing: run says why"
is "$(wh_dump)" "$BEFORE" "reject folder missing: the run touched nothing in the warehouse"
dw plan "$J"
is "$RC" 0 "reject folder missing: plan, which writes no reject file, still runs"
: >"$WORK/missing"
dw check "$J"
is "$RC" 4 "reject path under a plain file: check exits 4"
like "$OUT" "cannot take the reject file: not a folder" "reject path under a plain file: not a folder"
rm -f "$WORK/missing"
mkdir "$WORK/missing"
dw check "$J"
is "$RC" 0 "reject folder there: check exits 0"
like "$OUT" "rejects  ok     $WORK/missing/rejects.csv can be written" "reject folder there: the rejects step is ok"
if [ "$(id -u)" = 0 ]; then
  skip_tests 1 "root writes into a read-only folder"
else
  chmod 555 "$WORK/missing"
  dw check "$J"
  like "$RC $OUT" "cannot take the reject file: Permission denied" "a read-only reject folder: said so"
  chmod 755 "$WORK/missing"
fi
run_ok "$J" "reject folder there"

done_testing
