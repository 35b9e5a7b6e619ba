#!/bin/sh
# dwload plugins (the listing, from the plugins' option tables), and the
# example plugin of dwload-plugin(7), plugins/example/seq.c: jobs run with
# it, and the manual page shows that file exactly.
. "$TOP_SRCDIR/tests/integration/lib.sh"

TOP_BUILDDIR=${TOP_BUILDDIR:-$(dirname "$(dirname "$DWLOAD")")}
EXAMPLE_DIR="$TOP_BUILDDIR/plugins/example/.libs"
: "${TEST_PLUGINDIR:?TEST_PLUGINDIR must name the test plugins}"

# ---- dwload plugins ----------------------------------------------------------
dw plugins
is "$RC" 0 "plugins: exit 0"
# The ABI the plugins of this tree are built with: the header's.
ABI=$(abi_version)
like "$OUT" "csv 1.0.0 (ABI $ABI) " "plugins: lists csv with its version and ABI"
like "$OUT" "/csv.so" "plugins: ... and its file"
# every option of the csv plugin's table, with its type and default
is "$(printf '%s\n' "$OUT" | grep -E '^    path +path +required +the CSV file to read$' | wc -l | tr -d ' ')" 1 \
  "plugins: a required option: name, type, required, help"
is "$(printf '%s\n' "$OUT" | grep -E '^    header +bool +default true ' | wc -l | tr -d ' ')" 1 \
  "plugins: an option with a default"
like "$OUT" "searched, in this order:" "plugins: says where it looked"
dw plugins --json
is "$RC" 0 "plugins --json: exit 0"
is "$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
csv = [p for p in d["plugins"] if p["name"] == "csv"][0]
o = {x["name"]: x for x in csv["options"]}
print(csv["abi"], csv["used"], o["path"]["type"], o["path"]["required"], o["header"]["default"],
      o["types"]["type"], len(d["errors"]))')" "$ABI True path True true map 0" \
  "plugins --json: the csv plugin's descriptor and option table"
dw plugins "$WORK/x.yaml"
is "$RC" 2 "plugins takes no job file"
dw plugins --bogus
is "$RC" 2 "plugins: an unknown option is a usage error"

# The test plugins: tiny loads; badabi and noentry do not, and say why.
dw plugins --plugin-path "$TEST_PLUGINDIR"
is "$RC" 1 "plugins: a file that does not load makes it exit 1"
like "$OUT" "tiny 1.0.0 (ABI $ABI) $TEST_PLUGINDIR/tiny.so" "plugins: --plugin-path is searched"
like "$OUT" "badabi.so: not loaded: " "plugins: a plugin of another ABI is listed as not loaded"
like "$OUT" "rebuild the plugin" "plugins: ... with the loader's reason"
like "$OUT" "noentry.so: not loaded: " "plugins: a library without the entry point is listed as not loaded"
like "$OUT" "    fail_at          int     default 0 " "plugins: the tiny plugin's options"
# Listed in search order: the first csv.so found is the one jobs get.
mkdir "$WORK/shadow"
cp "$TOP_BUILDDIR/plugins/.libs/csv.so" "$WORK/shadow/csv.so"
dw --plugin-path "$WORK/shadow" plugins --json
is "$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join("%s:%s" % (p["path"].rsplit("/", 2)[-2], p["used"]) for p in d["plugins"] if p["name"] == "csv"))')" \
  "shadow:True .libs:False" "plugins: a plugin shadowed by one earlier on the path is marked not used"
DWLOAD_PLUGIN_PATH="$WORK/shadow" dw plugins
like "$OUT" "not used: $WORK/shadow/csv.so comes first" "plugins: DWLOAD_PLUGIN_PATH is searched too"

# ---- the example plugin ------------------------------------------------------
[ -f "$EXAMPLE_DIR/seq.so" ] && pass "the example plugin is built" ||
  fail "the example plugin is built" "no $EXAMPLE_DIR/seq.so"
dw --plugin-path "$EXAMPLE_DIR" plugins
like "$OUT" "seq 1.0.0 (ABI $ABI) $EXAMPLE_DIR/seq.so" "plugins: lists the example plugin"
like "$OUT" "    count            int     required            how many rows to deliver" \
  "plugins: the example's required option"
like "$OUT" "    step             int     default 60 " "plugins: the example's option with a default"

seq_job() {
  job "$1" <<EOF
version: 1
job: $1
source:
  plugin: seq
  count: $2
  label: hello
target:
  connection: "$WH_CONN"
  table: $1
load:
$3
EOF
}
N=$(seq_job numbers 5 "  mode: append
  lmd: updated_at")
dw --plugin-path "$EXAMPLE_DIR" run "$N"
is "$RC|$(field read)|$(field inserted)|$(field checkpoint)" "0|5|5|2024-01-01 00:05:00" \
  "example plugin: an append job loads its rows, checkpoint on updated_at"
is "$(sql 'SELECT n, label FROM numbers ORDER BY n' | tr '\n' ' ')" "1|hello 2|hello 3|hello 4|hello 5|hello " \
  "example plugin: the rows in the warehouse"
sed 's/count: 5/count: 8/' "$N" >"$WORK/numbers8.yaml"
dw --log-level debug --plugin-path "$EXAMPLE_DIR" run "$WORK/numbers8.yaml"
is "$RC|$(field read)|$(field skipped)|$(field inserted)" "0|8|5|3" \
  "example plugin: the next run inserts only the rows past the checkpoint"
like "$ERR" "debug: seq: the host skips rows up to 2024-01-01 00:05:00" \
  "example plugin: it logs through the host, at debug level, with the checkpoint"
DWLOAD_PLUGIN_PATH="$EXAMPLE_DIR" dw -q run "$WORK/numbers8.yaml"
is "$RC|$(field skipped)|$(field inserted)" "0|8|0" "example plugin: found through DWLOAD_PLUGIN_PATH"
D=$(seq_job numdim 3 "  mode: scd2
  key: n
  lmd: updated_at
  type2: [label]")
dw --plugin-path "$EXAMPLE_DIR" run "$D"
# step 120 puts rows 2 to 4 past the checkpoint (3 minutes): 2 and 3
# change their label (a new version each), 4 is new, 1 is skipped.
sed 's/label: hello/label: bye\n  step: 120/; s/count: 3/count: 4/' "$D" >"$WORK/numdim2.yaml"
dw --plugin-path "$EXAMPLE_DIR" run "$WORK/numdim2.yaml"
is "$RC|$(field read)|$(field skipped)|$(field inserted)|$(field expired)" "0|4|1|3|2" \
  "example plugin: an scd2 job keeps the history of its label"
is "$(sql "SELECT n, label FROM numdim WHERE is_current = TRUE ORDER BY n" | tr '\n' ' ')" "1|hello 2|bye 3|bye 4|bye " \
  "example plugin: the current versions"
dw --plugin-path "$EXAMPLE_DIR" run "$(seq_job seqbad 3 "  mode: append
  bogus: 1")"
is "$RC" 2 "example plugin: a job file error still exits 2"
sed 's/^  label: hello/  lable: hello/' "$N" >"$WORK/typo.yaml"
dw --plugin-path "$EXAMPLE_DIR" run "$WORK/typo.yaml"
is "$RC" 2 "example plugin: an option not in its table exits 2"
like "$ERR" "did you mean 'label'?" "example plugin: the host suggests the option from its table"
sed '/^  count:/d' "$N" >"$WORK/nocount.yaml"
dw --plugin-path "$EXAMPLE_DIR" run "$WORK/nocount.yaml"
is "$RC" 2 "example plugin: a required option missing exits 2"
like "$ERR" "count" "example plugin: ... naming it"

# ---- the manual page shows the example as it is ----------------------------
# The block between the BEGIN and END comments of dwload-plugin(7), with the
# roff escapes it needs undone, is the file.
python3 - "$TOP_SRCDIR/man/dwload-plugin.7" "$TOP_SRCDIR/plugins/example/seq.c" >"$WORK/mandiff" <<'PY'
import difflib, sys
page = open(sys.argv[1], encoding="utf-8").read().split("\n")
begin = page.index('.\\" BEGIN plugins/example/seq.c')
end = page.index('.\\" END plugins/example/seq.c')
block = page[begin + 1:end]
assert block[0] == ".EX" and block[-1] == ".EE", (block[0], block[-1])
code = []
for line in block[1:-1]:
    if line.startswith("\\&"):
        line = line[2:]
    code.append(line.replace("\\-", "-").replace("\\e", "\\"))
want = open(sys.argv[2], encoding="utf-8").read().rstrip("\n").split("\n")
sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(want, code, "seq.c", "dwload-plugin.7", lineterm=""))
PY
is "$?|$(cat "$WORK/mandiff")" "0|" "dwload-plugin(7) shows plugins/example/seq.c exactly"
sed -n '/BEGIN plugins\/example\/seq.c/,/END plugins\/example\/seq.c/p' "$TOP_SRCDIR/man/dwload-plugin.7" |
  grep -c 'dwl_plugin_entry' | grep -qv '^0$' && pass "the page's block is the plugin (it has the entry point)" ||
  fail "the page's block is the plugin (it has the entry point)"

done_testing
