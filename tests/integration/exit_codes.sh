#!/bin/sh
# Exit 4 against exit 1, as a scheduler reads them: every permanent cause
# (a table that lacks a column, rejects over budget, a reject folder that
# does not exist, a deletion guard, a plugin not found, not loadable or of
# another ABI) ends a run with 4 and commits nothing; a server that does
# not answer (transient) still ends it with 1.  The code follows the cause
# (err.c's table); the JSON log's error line carries it too.
. "$TOP_SRCDIR/tests/integration/lib.sh"

TP="${TEST_PLUGINDIR:-${TOP_BUILDDIR:-.}/tests/plugins/.libs}"

# exit_is WANT MSG: the last run exited WANT, its summary says failed, and
# its JSON error line (when --log-format json) says the same code
exit_is() {
  is "$RC|$(field status)" "$1|failed" "$2: exit $1, status failed"
}

# json_exit: the "exit" field of the error line of a JSON log in ERR
json_exit() {
  printf '%s\n' "$ERR" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["level"] == "error":
        print(o.get("exit"))'
}

# upjob NAME CSV TABLE [SOURCE-LINES] [LOAD-LINES]: an upsert job
upjob() {
  printf 'load:\n  mode: upsert\n  key: id\n  lmd: lmd\n%s' "${5:+$5
}" | mkjob "$1" "$2" "$3" "${4:-}"
}

F1=$(file one.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
EOF
)

# ---- schema: the target table lacks a column --------------------------------
J=$(upjob schema "$F1" t_schema)
run_ok "$J" "schema: first load"
CKPT=$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'schema'")
F2=$(file wider.csv <<'EOF'
id,name,city,lmd
1,Ann,Oslo,2024-01-02 00:00:00
EOF
)
J=$(upjob schema "$F2" t_schema "" 'schema:
  new_columns: fail')
dw --log-format json run "$J"
exit_is 4 "schema: a source column the table lacks (schema.new_columns: fail)"
like "$ERR" "has no column 'city'" "schema: the message names the column"
is "$(json_exit)" 4 "schema: the JSON error line carries exit 4"
is "$(sql "SELECT checkpoint FROM dwload_state WHERE job = 'schema'")" "$CKPT" "schema: the checkpoint did not move"

# ---- rejects over budget, and the default budget of 0 ----------------------
BAD=$(file bad.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
x,Bob,2024-01-01 00:00:00
y,Cat,2024-01-01 00:00:00
EOF
)
J=$(upjob rej "$BAD" t_rej "  types: {id: integer}" "  max_rejects: 1
  reject_file: $WORK/rej.csv")
dw run "$J"
exit_is 4 "rejects: two bad rows over max_rejects 1"
like "$ERR" "more than load.max_rejects (1)" "rejects: the message says the budget"
no_table t_rej "rejects: nothing written"
J=$(upjob rej0 "$BAD" t_rej0 "  types: {id: integer}")
dw run "$J"
exit_is 4 "rejects: the first bad row with the default max_rejects 0"

# ---- a reject folder that does not exist ------------------------------------
J=$(upjob rejdir "$F1" t_rejdir "" "  max_rejects: 5
  reject_file: $WORK/no/such/folder/rej.csv")
dw run "$J"
exit_is 4 "reject folder missing"
like "$ERR" "load.reject_file: its folder $WORK/no/such/folder cannot take the reject file" "reject folder: the message names the folder"
no_table t_rejdir "reject folder: nothing written"

# ---- a deletion guard: an empty extract, then max_deletes --------------------
gjob() {
  mkjob guard "$1" t_guard <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
  deletes: absent
EOF
}
F3=$(file three.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
3,Cat,2024-01-01 00:00:00
4,Dan,2024-01-01 00:00:00
EOF
)
run_ok "$(gjob "$F3")" "guard: first load"
BEFORE=$(tdump t_guard)
EMPTY=$(file empty.csv <<'EOF'
id,name,lmd
EOF
)
dw run "$(gjob "$EMPTY")"
exit_is 4 "guard: an empty extract"
is "$(field guard)" empty_extract "guard: the summary names empty_extract"
ONE=$(file onekey.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
EOF
)
dw run "$(gjob "$ONE")"
exit_is 4 "guard: 3 of 4 keys missing, over the default max_deletes"
is "$(field guard)" max_deletes "guard: the summary names max_deletes"
dw plan "$(gjob "$ONE")"
is "$RC" 4 "guard: plan exits 4 too"
is "$(tdump t_guard)" "$BEFORE" "guard: the table is as before"

# ---- plugins: not found, not loadable, another ABI ---------------------------
pjob() {
  cat >"$WORK/p_$1.yaml" <<EOF
version: 1
job: p_$1
source:
  plugin: $1
target:
  connection: "$WH_CONN"
  table: t_p
load:
  mode: append
EOF
  echo "$WORK/p_$1.yaml"
}
dw --log-format json run "$(pjob nosuchplugin)"
exit_is 4 "plugin not found"
like "$ERR" "plugin 'nosuchplugin' not found" "plugin not found: the message"
is "$(json_exit)" 4 "plugin not found: the JSON error line carries exit 4"
mkdir -p "$WORK/plug"
printf 'not an ELF file\n' >"$WORK/plug/junk.so"
dw --plugin-path "$WORK/plug" run "$(pjob junk)"
exit_is 4 "a plugin file that does not load"
like "$ERR" "cannot load plugin $WORK/plug/junk.so" "not loadable: the message names the file"
dw --plugin-path "$TP" run "$(pjob badabi)"
exit_is 4 "a plugin of another ABI"
like "$ERR" "ABI 2.0" "another ABI: the message says which"
dw --plugin-path "$TP" run "$(pjob noentry)"
exit_is 4 "a shared object without the plugin entry"
no_table t_p "plugins: nothing written"

# ---- transient: the warehouse does not answer ------------------------------
# The warehouse's own driver on a port nothing listens on (port 1 needs
# root to listen); SQLite has no server, so there the PostgreSQL driver.
if is_warehouse postgresql mariadb; then
  DOWN=$(printf '%s' "$WH_CONN" | sed 's/Port=[0-9]*/Port=1/')
else
  DOWN="Driver=PostgreSQL Unicode;Server=127.0.0.1;Port=1;Database=x;Uid=u;Pwd=x"
fi
sed "s|^  connection: .*|  connection: \"$DOWN\"|" "$WORK/schema.yaml" >"$WORK/down.yaml"
dw --log-format json run "$WORK/down.yaml"
exit_is 1 "a warehouse that does not answer (transient)"
is "$(json_exit)" 1 "transient: the JSON error line carries exit 1"

done_testing
