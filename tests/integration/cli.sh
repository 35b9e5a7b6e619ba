#!/bin/sh
# The command line: help, version, usage errors, logging, and the check,
# state and plan commands.
. "$TOP_SRCDIR/tests/integration/lib.sh"

SPINE="$DATA/spine"

# cli_job NAME CSV [KEY]: an append job, or an scd2 job when KEY is given
cli_job() {
  if [ -n "${3:-}" ]; then
    load="  mode: scd2
  lmd: lmd
  key: $3"
  else
    load="  mode: append
  lmd: lmd"
  fi
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: csv
  path: $2
target:
  connection: "$WH_CONN"
  table: $1
load:
$load
EOF
}

# ---- help and version ------------------------------------------------------
dw --help
is "$RC" 0 "--help exits 0"
like "$OUT" "Usage: dwload" "--help prints the usage"
for c in run plan check state; do
  like "$OUT" "  $c JOB.yaml" "--help lists the $c command"
done
dw -h
is "$RC" 0 "-h exits 0"
like "$OUT" "Usage: dwload" "-h prints the usage"
dw --version
is "$RC" 0 "--version exits 0"
like "$OUT" "dwload" "--version names dwload"
like "$OUT" "ABI $(abi_version)" "--version gives the plugin ABI (the header's)"
dw run --help
is "$RC" 0 "run --help exits 0"
like "$OUT" "Usage: dwload run" "run --help prints the run usage"
dw plan --help
like "$OUT" "--sql" "plan --help mentions --sql"

# ---- usage errors: exit 2 --------------------------------------------------
dw frobnicate x.yaml
is "$RC" 2 "unknown command exits 2"
like "$ERR" "frobnicate" "unknown command is named"
dw
is "$RC" 2 "no command exits 2"
dw run
is "$RC" 2 "run without a job file exits 2"
like "$ERR" "job file" "run without a job file says so"
dw run "$WORK/no-such-job.yaml"
is "$RC" 2 "nonexistent job file exits 2"
like "$ERR" "no-such-job.yaml" "nonexistent job file is named"
dw --log-level loud --help
is "$RC" 2 "--log-level with a bad level exits 2"
like "$ERR" "loud" "bad log level is named"

J=$(cli_job people "$SPINE/append_1.csv")
dw plan "$J" "$J"
is "$RC" 2 "plan with two job files exits 2 (only run takes several)"
dw run --sql "$J"
is "$RC" 2 "--sql on run exits 2"
is "$(table_exists people)" 0 "usage errors wrote nothing"

# ---- state before any run ------------------------------------------------
dw state "$J"
is "$RC" 0 "state before any run exits 0"
like "$OUT" "no run yet" "state before any run says no run yet"

# ---- check -----------------------------------------------------------------
dw check --connect "$J"
is "$RC" 0 "check of a good job exits 0"
for s in spec target state plugin source columns table; do
  is "$(printf '%s\n' "$OUT" | grep -c "^$s  *ok ")" 1 "check reports step '$s' ok"
done
like "$OUT" "will be created" "check: the table does not exist yet"
is "$(table_exists people)" 0 "check created no table"

K=$(cli_job people_dim "$SPINE/append_1.csv" ident)
dw check --connect "$K"
is "$([ "$RC" -ne 0 ] && echo non-zero || echo "$RC")" non-zero \
  "check with a key column not in the source exits non-zero"
like "$OUT" "FAILED" "check with a bad key column says FAILED"
like "$OUT" "ident" "check names the missing column"
is "$(printf '%s\n' "$OUT" | grep -c '^spec  *ok ')" 1 "check still reports the steps before the failure"

# ---- plan on a fresh warehouse: nothing written ---------------------------
dw plan "$J"
is "$RC" 0 "plan exits 0"
is "$(field inserted)" 4 "plan reports inserted 4"
is "$(field status)" ok "plan reports status ok"
is "$(table_exists people)" 0 "plan created no table"
is "$(table_exists dwload_state)" 0 "plan created no state table"

# ---- run, then state -------------------------------------------------------
dw -q run "$J"
is "$RC" 0 "run -q exits 0"
is "$ERR" "" "-q silences the info logs"
is "$(field inserted)" 4 "run -q still prints the summary"
dw --log-level debug state "$J"
like "$OUT" "2023-11-22 10:00:00" "state after a run shows the checkpoint"
like "$OUT" "inserted 4" "state after a run shows the counts"
dw --log-level error run "$J"
unlike "$ERR" "info:" "--log-level error silences the info logs"
dw run "$J"
like "$ERR" "info:" "info logs are on by default"

# ---- plan after runs: reports the work, writes nothing --------------------
J2=$(cli_job people "$SPINE/append_2.csv")
BEFORE=$(wh_dump)
dw plan "$J2"
is "$RC" 0 "plan with new rows exits 0"
is "$(field inserted)" 3 "plan reports the 3 rows run would insert"
is "$(field skipped)" 5 "plan reports the 5 rows run would skip"
is "$(field checkpoint)" "2023-11-24 08:00:00" "plan reports the checkpoint run would store"
is "$(wh_dump)" "$BEFORE" "plan left the warehouse byte-for-byte unchanged"
dw plan --sql "$J2"
is "$RC" 0 "plan --sql exits 0"
is "$(printf '%s\n' "$OUT" | grep -c '^INSERT INTO ')" 1 "plan --sql prints the INSERT statement"
like "$OUT" "'Erin'" "plan --sql prints the parameters of the new rows"
unlike "$OUT" "'Alice'" "plan --sql leaves out the skipped rows"
is "$(wh_dump)" "$BEFORE" "plan --sql left the warehouse unchanged"
dw run "$J2"
is "$(field inserted)" 3 "the run then does what plan said"

# ---- plugin search path ----------------------------------------------------
N=$(job noplugin <<EOF
version: 1
job: noplugin
source:
  plugin: nosuchplugin
target:
  connection: "$WH_CONN"
  table: noplugin
EOF
)
mkdir "$WORK/plugins"
dw --plugin-path "$WORK/plugins" run "$N"
is "$RC" 4 "--plugin-path, unknown plugin: exits 4"
like "$ERR" "not found" "--plugin-path, unknown plugin: says not found"
like "$ERR" "$WORK/plugins" "--plugin-path: the directory is searched"
DWLOAD_PLUGIN_PATH="$WORK/plugins" dw check "$N"
is "$RC" 4 "DWLOAD_PLUGIN_PATH, unknown plugin: check exits 4"
like "$OUT$ERR" "not found" "DWLOAD_PLUGIN_PATH, unknown plugin: says not found"
like "$OUT$ERR" "$WORK/plugins" "DWLOAD_PLUGIN_PATH: the directory is searched"

# A plugin found only through the path: the test plugin `tiny`.
TP="${TEST_PLUGINDIR:-${TOP_BUILDDIR:-.}/tests/plugins/.libs}"
Y=$(job tiny <<EOF
version: 1
job: tiny
source:
  plugin: tiny
  label: x
  rows: 5
target:
  connection: "$WH_CONN"
  table: tiny
EOF
)
if [ -f "$TP/tiny.so" ]; then
  dw run "$Y"
  is "$RC" 4 "plugin outside the path: not found"
  dw --plugin-path "$TP" run "$Y"
  is "$RC" 0 "--plugin-path finds a plugin"
  is "$(sql 'SELECT count(*) FROM tiny')" 5 "--plugin-path: the plugin's rows were loaded"
  DWLOAD_PLUGIN_PATH="$TP" dw run "$Y"
  is "$RC" 0 "DWLOAD_PLUGIN_PATH finds a plugin"
else
  for i in 1 2 3 4; do pass "plugin path with tiny # SKIP test plugins not built (make check builds them)"; done
fi

# ---- the README's examples work as shipped --------------------------------
# They name a SQLite file (DWLOAD_WAREHOUSE, here the test's own); on other
# warehouses a copy of them whose connection is the test database.
if is_warehouse sqlite; then
  EX="$TOP_SRCDIR/conf/examples"
else
  EX="$WORK/examples"
  mkdir "$EX"
  cp "$TOP_SRCDIR/conf/examples/"* "$EX/"
  for f in "$EX/"*.yaml; do
    CONN=$WH_CONN awk '/^  connection: / { print "  connection: \"" ENVIRON["CONN"] "\""; next } { print }' \
      "$f" >"$f.new" && mv "$f.new" "$f"
  done
fi
EXDB=$WH
for e in customers append replace; do
  DWLOAD_WAREHOUSE="$EXDB" dw check --connect "$EX/$e.yaml"
  is "$RC" 0 "example $e.yaml passes check"
done
DWLOAD_WAREHOUSE="$EXDB" dw run "$EX/customers.yaml"
is "$RC|$(field inserted)" "0|4" "example customers.yaml, day 1: 4 customers loaded"
DWLOAD_WAREHOUSE="$EXDB" DWLOAD_FEED=customers_day2.csv dw run "$EX/customers.yaml"
is "$RC" 0 "example customers.yaml, day 2: exits 0"
is "$(field inserted)|$(field expired)|$(field unchanged)|$(field skipped)" "3|2|1|1" \
  "example day 2: address and phone changes and a new key add versions; an lmd-only change adds none"
is "$(sql 'SELECT count(*) FROM customer_dim WHERE is_current')" 5 \
  "example day 2: one current version per customer"
DWLOAD_WAREHOUSE="$EXDB" dw state "$EX/customers.yaml"
like "$OUT" "2023-11-23 11:45:00" "example state shows the day 2 checkpoint"

done_testing
