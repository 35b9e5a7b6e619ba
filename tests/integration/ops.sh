#!/bin/sh
# Running dwload from a scheduler and at a terminal: run --empty-exit, the
# summary as the last stdout line on every exit path, log lines (text and
# JSON, levels, hints, no passwords) and the live progress line, which
# shows on a terminal (a pseudo-terminal here) and nowhere else.
. "$TOP_SRCDIR/tests/integration/lib.sh"

SPINE="$DATA/spine"
TTY="python3 $TOP_SRCDIR/tests/integration/on_tty.py"

# ops_job NAME CSV [LOAD-LINES]: a job on the test warehouse, append by default
ops_job() {
  printf 'load:\n%s\n' "${3:-  mode: append
  lmd: lmd}" | mkjob "$1" "$2" "$1" "  types: {id: integer}"
}

# json_lines FILE JOB: checks every line of FILE is a JSON log object of
# JOB (empty: null); prints "ok" or what is wrong
json_lines() {
  python3 - "$1" "$2" <<'PY'
import json, re, sys
bad = []
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
for l in lines:
    try:
        o = json.loads(l)
    except ValueError:
        bad.append("not JSON: " + l)
        continue
    if list(o)[:4] != ["ts", "level", "job", "msg"]:
        bad.append("keys: " + l)
    elif not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]):
        bad.append("ts: " + l)
    elif o["level"] not in ("error", "warn", "info", "debug"):
        bad.append("level: " + l)
    elif o["job"] != (sys.argv[2] or None):
        bad.append("job: " + l)
print("ok" if lines and not bad else "; ".join(bad) or "no lines")
PY
}

printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n2,b,2024-01-02 00:00:00\n' >"$WORK/two.csv"
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n2,b,2024-01-02 00:00:00\n3,c,2024-01-03 00:00:00\n' >"$WORK/three.csv"

# ---- --empty-exit ----------------------------------------------------------
J=$(ops_job empty "$WORK/two.csv")
dw run --empty-exit 99 "$J"
is "$RC|$(field inserted)" "0|2" "--empty-exit: a run that loads rows exits 0"
dw run --empty-exit 99 "$J"
is "$RC|$(field status)|$(field read)|$(field skipped)|$(field inserted)" "99|ok|2|2|0" \
  "--empty-exit 99: nothing past the checkpoint exits 99 with an ok summary"
like "$ERR" "nothing past the checkpoint: exit 99" "--empty-exit: the log says why"
dw state "$J"
like "$OUT" "counts:      read 2, skipped 2, inserted 0" "--empty-exit: the empty run's state was committed"
dw run "$J"
is "$RC|$(field skipped)" "0|2" "without --empty-exit an empty run exits 0"
dw run --empty-exit 0 "$J"
is "$RC" 0 "--empty-exit 0 is allowed"
sed "s|$WORK/two.csv|$WORK/three.csv|" "$J" >"$WORK/empty3.yaml"
dw run --empty-exit 99 "$WORK/empty3.yaml"
is "$RC|$(field inserted)|$(field skipped)" "0|1|2" "--empty-exit: a run with one new row exits 0"
for n in 1 2 3 256 -1 x ""; do
  dw run --empty-exit "$n" "$J"
  is "$RC" 2 "--empty-exit '$n' is a usage error"
done
dw run --empty-exit 3 "$J"
like "$ERR" "1 to 6 and 128 to 255 are dwload's own" "--empty-exit: the usage error says why"
dw plan --empty-exit 99 "$J"
is "$RC" 2 "--empty-exit applies to run only"
dw run --empty-exit 99 "$(ops_job emptybad "$SPINE/ragged.csv")"
is "$RC|$(field status)" "4|failed" "--empty-exit: a failed run still exits with its code (4: a rejected row)"
# scd2 with deletes by absence: no row past the checkpoint, but a key gone
# is a change, so the run is not empty.
S=$(ops_job emptyscd "$WORK/two.csv" "  mode: scd2
  key: id
  lmd: lmd
  deletes: absent")
dw run --empty-exit 99 "$S"
is "$RC|$(field inserted)" "0|2" "--empty-exit scd2: first run exits 0"
printf 'id,name,lmd\n1,a,2024-01-01 00:00:00\n' >"$WORK/two.csv"
dw run --empty-exit 99 "$S"
is "$RC|$(field skipped)|$(field deleted)" "0|1|1" "--empty-exit scd2: a deletion by absence is not empty"
dw run --empty-exit 99 "$S"
is "$RC|$(field skipped)|$(field deleted)" "99|1|0" "--empty-exit scd2: then nothing is"

# ---- the summary is the last stdout line on every exit path ----------------
# (what Airflow's BashOperator pushes to XCom)
last_is_summary() {
  printf '%s' "$OUT" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
o = json.loads(lines[-1])
assert list(o)[:3] == ["job", "status", "mode"], o
assert len(lines) == 1, lines
print(o["status"])' 2>&1
}
P=$(ops_job lastline "$WORK/three.csv")
dw --log-format json run --empty-exit 99 "$P"
is "$RC|$(last_is_summary)" "0|ok" "exit 0: stdout is the summary alone"
dw --log-format json run --empty-exit 99 "$P"
is "$RC|$(last_is_summary)" "99|ok" "exit 99 (--empty-exit): stdout is the summary alone"
dw --log-format json run --empty-exit 99 "$(ops_job lastbad "$SPINE/ragged.csv")"
is "$RC|$(last_is_summary)" "4|failed" "exit 4: stdout is the summary alone"
printf 'version: 1\njob: x\nsource: {plugin: csv}\n' >"$WORK/broken.yaml"
dw --log-format json run --empty-exit 99 "$WORK/broken.yaml"
is "$RC|$(last_is_summary)" "2|failed" "exit 2 (bad job file): stdout is the summary alone"
if is_warehouse sqlite; then
  # The warehouse's write lock, held by another program: exit 3 after
  # the driver's busy timeout.
  printf 'id,name,lmd\n9,z,2024-02-01 00:00:00\n' >"$WORK/late.csv"
  sed "s|$WORK/three.csv|$WORK/late.csv|" "$P" >"$WORK/lastlock.yaml"
  python3 - "$WH" "$DWLOAD" "$WORK/lastlock.yaml" >"$WORK/stdout" 2>"$WORK/stderr" <<'PY'
import sqlite3, subprocess, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN IMMEDIATE")
rc = subprocess.call([sys.argv[2], "--log-format", "json", "run", "--empty-exit", "99", sys.argv[3]])
con.execute("ROLLBACK")
sys.exit(rc)
PY
  RC=$?
  OUT=$(cat "$WORK/stdout")
  ERR=$(cat "$WORK/stderr")
  is "$RC|$(last_is_summary)" "3|failed" "exit 3 (locked): stdout is the summary alone"
  like "$ERR" '"hint":"exit 3 is worth a retry later' "exit 3: the hint says a retry is worth it"
else
  skip_tests 2 "exit 3 on a server warehouse is in lock.sh"
fi

# ---- log lines -------------------------------------------------------------
L=$(ops_job logs "$WORK/three.csv")
dw run "$L"
bad=$(printf '%s\n' "$ERR" | grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z dwload\[logs\] (error|warn|info|debug): ' || true)
is "$bad" "" "text: every line has a UTC timestamp, the job and the level"
like "$ERR" "dwload[logs] info: committed: read 3" "text: the commit line"
dw --log-format json run "$L"
printf '%s\n' "$ERR" >"$WORK/log.json"
is "$(json_lines "$WORK/log.json" logs)" ok "json: every line is an object with ts, level, job, msg"
is "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["msg"].startswith("committed"):
        print(o["read"], o["skipped"], o["inserted"])' "$WORK/log.json")" "3 3 0" "json: the commit line carries the counts as fields"
dw --log-format json run "$(ops_job logsbad "$SPINE/ragged.csv")"
printf '%s\n' "$ERR" >"$WORK/logbad.json"
is "$(json_lines "$WORK/logbad.json" logsbad)" ok "json: a failed run's lines are objects too"
is "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["level"] == "error":
        print(o["exit"])' "$WORK/logbad.json")" 4 "json: the error line carries the exit code"
dw --log-format json run "$WORK/broken.yaml"
printf '%s\n' "$ERR" >"$WORK/logspec.json"
is "$(json_lines "$WORK/logspec.json" x)" ok "json: a bad job file's error is an object, with the job name it did read"
dw --log-level warn run "$L"
is "$RC|$ERR" "0|" "--log-level warn: no info lines"
dw --log-format yaml run "$L"
is "$RC" 2 "--log-format yaml is a usage error"
like "$ERR" "text or json" "--log-format: the usage error names the formats"

# ---- hints: what to do next ------------------------------------------------
hint_of() {
  printf '%s\n' "$ERR" | sed -n 's/^.* hint: //p'
}
sed 's/^  table:/  tabel:/' "$L" >"$WORK/typo.yaml"
dw run "$WORK/typo.yaml"
like "$(hint_of)" "dwload-job(5)" "hint: a job file error points to dwload-job(5)"
like "$(hint_of)" "not worth a retry" "hint: ... and says a retry will not help"
sed 's/^  plugin: csv/  plugin: nosuchplugin/' "$L" >"$WORK/noplugin.yaml"
dw run "$WORK/noplugin.yaml"
like "$(hint_of)" "dwload plugins" "hint: a missing plugin points to dwload plugins"
sed 's/^  connection: .*/  connection: "Driver=NoSuchDriver;Database=x"/' "$L" >"$WORK/nodriver.yaml"
dw run "$WORK/nodriver.yaml"
like "$(hint_of)" "odbcinst -q -d" "hint: a driver not installed points to odbcinst -q -d"
sed 's/^  connection: .*/  connection: "Driver=PostgreSQL Unicode;Server=127.0.0.1;Port=1;Database=x;Uid=u;Pwd=Unreachable42"/' \
  "$L" >"$WORK/noserver.yaml"
dw --log-format json run "$WORK/noserver.yaml"
is "$RC" 1 "a server that does not answer: exit 1"
like "$ERR" '"hint":"check that the server is up' "hint: a server that does not answer"
unlike "$ERR" "Unreachable42" "the password of a failed connection is not in the JSON log"
if is_warehouse postgresql mariadb; then
  PW_ATTR=$(printf '%s' "$WH_CONN" | tr ';' '\n' | grep -iE '^(pwd|password)=')
  sed "s|$PW_ATTR|${PW_ATTR%%=*}=WrongPassword42|" "$L" >"$WORK/badpw.yaml"
  dw --log-level debug run "$WORK/badpw.yaml"
  is "$RC" 1 "a wrong password: exit 1"
  like "$(hint_of)" "refused the user or password" "hint: a wrong password"
  unlike "$ERR$OUT" "WrongPassword42" "the wrong password is not shown"
else
  skip_tests 3 "SQLite has no login"
fi

# ---- the progress line -----------------------------------------------------
awk 'BEGIN { print "id,name,lmd"; for (i = 1; i <= 5000; i++) printf "%d,row %d,2024-03-01 00:00:00\n", i, i }' \
  >"$WORK/many.csv"
G=$(ops_job progress "$WORK/many.csv")
$TTY "$WORK/tty.out" "$WORK/tty.log" "$DWLOAD" run "$G"
is "$?|$(tail -n 1 "$WORK/tty.out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inserted"])')" "0|5000" \
  "on a terminal: the run succeeds and stdout holds the summary"
frames=$(tr '\r' '\n' <"$WORK/tty.log" | sed 's/\x1b\[K//g' | grep -E '^[a-z]+ +[0-9]+ rows +[0-9]+ rows/s +[0-9]{2}:[0-9]{2}:[0-9]{2}$')
like "$frames" "read" "on a terminal: a progress line names the read phase"
like "$(printf '%s\n' "$frames" | grep '^commit')" "5000 rows" \
  "on a terminal: the commit phase shows the rows read"
like "$(cat "$WORK/tty.log")" "$(printf '\r\033[K')" "on a terminal: the line is redrawn in place"
# A log line never starts where a progress line stands: the line is erased
# first.
is "$(grep -c 'rows/s  [0-9:]*[0-9]\{4\}-' "$WORK/tty.log")" 0 "on a terminal: log lines are not glued to the progress line"
like "$(cat "$WORK/tty.log")" "dwload[progress] info: committed" "on a terminal: log lines still show"
# What follows the last erase is no progress line.
is "$(python3 -c 'import sys; print(b"rows/s" in open(sys.argv[1], "rb").read().rsplit(b"\r\033[K", 1)[-1])' "$WORK/tty.log")" \
  False "on a terminal: no progress line is left at the end"
dw run "$G"
unlike "$ERR" "rows/s" "stderr not a terminal: no progress line"
unlike "$ERR" "$(printf '\r')" "stderr not a terminal: no carriage return"
$TTY "$WORK/tty.out" "$WORK/tty.log" "$DWLOAD" -q run "$G"
unlike "$(cat "$WORK/tty.log")" "rows/s" "on a terminal with --quiet: no progress line"
$TTY "$WORK/tty.out" "$WORK/tty.log" "$DWLOAD" --no-progress run "$G"
unlike "$(cat "$WORK/tty.log")" "rows/s" "on a terminal with --no-progress: no progress line"
$TTY "$WORK/tty.out" "$WORK/tty.log" "$DWLOAD" --log-format json run "$G"
tr -d '\r' <"$WORK/tty.log" >"$WORK/tty.json"
is "$(json_lines "$WORK/tty.json" progress)" ok "on a terminal with --log-format json: JSON lines only"

done_testing
