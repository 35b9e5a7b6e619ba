#!/bin/sh
# dwload run with several job files or a folder: one summary line per
# job, then the overall JSON line last; the overall exit status (the first
# failing job's, in the order given); --fail-fast; --jobs N bounding how
# many run at once, shown on what the processes hold open: two jobs whose
# sources are FIFOs both have them open at once with --jobs 2, one at a
# time with --jobs 1; SIGTERM passed on to the running jobs, which roll
# back; run options reach each job, but --metrics-file takes one.  One job
# file keeps the single run's output.
. "$TOP_SRCDIR/tests/integration/lib.sh"

CSV=$(file feed.csv <<'EOF'
id,name,lmd
1,alpha,2024-01-01 00:00:00
2,beta,2024-01-01 00:00:00
EOF
)

# many_job DIR NAME TABLE [PLUGIN] [PATH]: an scd2 job file DIR/NAME.yaml
many_job() {
  mkdir -p "$1"
  cat >"$1/$2.yaml" <<EOF
version: 1
job: $2
source:
  plugin: ${4:-csv}
  path: ${5:-$CSV}
target:
  connection: "$WH_CONN"
  table: $3
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
}

# lines: the number of stdout lines of the last dw
lines() {
  printf '%s\n' "$OUT" | wc -l | tr -d ' '
}

# overall EXPR: a Python expression on the overall line (LAST) as o
overall() {
  printf '%s' "$LAST" | python3 -c 'import json, sys; o = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1"
}

# ---- a folder: each job's summary, then the overall line -----------------
D="$WORK/jobs"
many_job "$D" one m_one
many_job "$D" two m_two cvs
many_job "$D" three m_three
echo 'not: a job' >"$D/_common.yaml"
echo 'not a job either' >"$D/notes.txt"
dw run --jobs 2 "$D"
is "$RC" 4 "folder: exit 4, the failing job's (its plugin is misspelt)"
is "$(lines)" 4 "folder: three summary lines and the overall line (_common.yaml and notes.txt are no jobs)"
is "$(printf '%s\n' "$OUT" | head -n 3 | python3 -c 'import json, sys; print(" ".join(sorted(json.loads(l)["job"] + ":" + json.loads(l)["status"] for l in sys.stdin)))')" \
  "one:ok three:ok two:failed" "folder: each job's own summary line"
is "$(overall 'o["jobs"], o["ok"], o["failed"], o["skipped"], o["exit"]')" "(3, 2, 1, 0, 4)" \
  "folder: the overall line counts jobs, ok, failed, skipped and the exit"
is "$(overall '" ".join("%s=%s" % (r["file"].rsplit("/", 1)[1], r["exit"]) for r in o["results"])')" \
  "one.yaml=0 three.yaml=0 two.yaml=4" "folder: each job's exit, files in name order"
is "$(sql 'SELECT count(*) FROM m_one')|$(sql 'SELECT count(*) FROM m_three')" "2|2" \
  "folder: the good jobs committed, the failing one did not stop them"
like "$ERR" "job $D/two.yaml failed: exit 4" "folder: stderr names the failing job"

# ---- --fail-fast: nothing starts after a failure ---------------------------
F="$WORK/ff"
many_job "$F" a_bad ff_a cvs
many_job "$F" b_good ff_b
dw run --fail-fast "$F/a_bad.yaml" "$F/b_good.yaml"
is "$RC" 4 "--fail-fast: exit 4, the failing job's"
is "$(overall 'o["jobs"], o["ok"], o["failed"], o["skipped"], o["results"][1]["exit"]')" "(2, 0, 1, 1, None)" \
  "--fail-fast: the second job is skipped (exit null)"
is "$(table_exists ff_b)" 0 "--fail-fast: the second job did not run"
dw run "$F/a_bad.yaml" "$F/b_good.yaml"
is "$(overall 'o["ok"], o["failed"], o["skipped"]')|$RC" "(1, 1, 0)|4" \
  "without --fail-fast: the second job runs after the first failed, exit still 4"

# ---- include: shared settings, the job's own keys win -----------------------
I="$WORK/inc"
mkdir -p "$I"
cat >"$I/_common.yaml" <<EOF
# shared by the jobs of this folder
source:
  plugin: csv
  path: $CSV
target:
  connection: "$WH_CONN"
  table: inc_default
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
printf 'version: 1\ninclude: _common.yaml\njob: inc_a\ntarget:\n  table: inc_a\n' >"$I/a.yaml"
printf 'version: 1\ninclude: _common.yaml\njob: inc_b\ntarget:\n  table: inc_b\nload:\n  mode: append\n' >"$I/b.yaml"
dw run "$I"
is "$RC|$(overall 'o["jobs"], o["ok"]')" "0|(2, 2)" "include: both jobs of the folder run with the shared settings"
is "$(table_exists inc_a)|$(table_exists inc_b)|$(table_exists inc_default)" "1|1|0" \
  "include: each job's own target.table wins over the shared one"
like "$(cols inc_a)" "valid_from" "include: the shared load.mode scd2 applies where the job sets none"
is "$(cols inc_b)" "id,name,lmd" "include: the job's own load.mode append wins, the shared key and lmd stay"
# An error found at run time about a key the included file gave names that file.
printf 'load:\n  mode: append\n  lmd: no_such_column\n' >"$WORK/shared_bad.yaml"
printf 'version: 1\ninclude: shared_bad.yaml\njob: inc_c\nsource:\n  plugin: csv\n  path: %s\ntarget:\n  connection: "%s"\n  table: inc_c\n' \
  "$CSV" "$WH_CONN" >"$WORK/inc_c.yaml"
dw run "$WORK/inc_c.yaml"
is "$RC" 2 "include: a column the source lacks: exit 2"
like "$ERR" "$WORK/shared_bad.yaml:3:3: load.lmd: column 'no_such_column' is not in the source" \
  "include: the run-time error names the included file, line and column"

# ---- bad arguments ------------------------------------------------------------
mkdir -p "$WORK/empty"
dw run "$WORK/empty" "$WORK/empty"
is "$RC" 2 "a folder without job files: exit 2"
like "$ERR" "holds no job file" "a folder without job files: said so"
dw run --jobs 0 "$D"
is "$RC" 2 "--jobs 0: exit 2"
dw plan --jobs 2 "$D/one.yaml"
is "$RC" 2 "--jobs applies only to run: exit 2"

# ---- one job file: the single run's output, unchanged ------------------------
dw run "$D/one.yaml"
is "$RC|$(lines)|$(field job)" "0|1|one" "one job file: exit 0 and only its summary line"

# ---- --jobs N bounds how many run at once -------------------------------------
# Each source is a FIFO this script holds open read-write, so a job's open
# never blocks nor sees an end of file until the script writes its rows
# and closes it.  SQLite: each job writes a database of its own (one
# writer at a time per file).
# open_by PID FIFO: a child of PID holds FIFO open
open_by() {
  for _c in $(pgrep -P "$1"); do
    ls -l "/proc/$_c/fd" 2>/dev/null | grep -qF -- "-> $2" && return 0
  done
  return 1
}
# children PID: how many children PID has
children() {
  pgrep -P "$1" | wc -l | tr -d ' '
}
# feed FD: writes the rows to the FIFO open on FD
feed() {
  printf 'id,name,lmd\n1,one,2024-01-02 00:00:00\n' >&"$1"
}
P="$WORK/par"
CONN_SAVED=$WH_CONN
for n in 1 2; do
  rm -f "$WORK/fa$n" "$WORK/fb$n"
  mkfifo "$WORK/fa$n" "$WORK/fb$n"
  many_job "$P$n" a "par${n}_a" csv "$WORK/fa$n"
  if is_warehouse sqlite; then WH_CONN="Driver=SQLite3;Database=$WORK/second$n.db"; fi
  many_job "$P$n" b "par${n}_b" csv "$WORK/fb$n"
  WH_CONN=$CONN_SAVED
done

exec 3<>"$WORK/fa2" 4<>"$WORK/fb2"
"$DWLOAD" run --jobs 2 "$P"2 >"$WORK/par2.out" 2>"$WORK/par2.err" 3>&- 4>&- &
PID=$!
if wait_until 300 eval 'open_by $PID "$WORK/fa2" && open_by $PID "$WORK/fb2"'; then
  pass "--jobs 2: both jobs read their sources at once"
else
  fail "--jobs 2: both jobs read their sources at once" "$(cat "$WORK/par2.err")"
fi
feed 3; feed 4
exec 3>&- 4>&-
finish "$PID" 60
is "$?" 0 "--jobs 2: exit 0"
LAST=$(tail -n 1 "$WORK/par2.out")
is "$(overall 'o["ok"]')" 2 "--jobs 2: both jobs ok"

exec 3<>"$WORK/fa1" 4<>"$WORK/fb1"
"$DWLOAD" run --jobs 1 "$P"1 >"$WORK/par1.out" 2>"$WORK/par1.err" 3>&- 4>&- &
PID=$!
wait_until 300 eval 'open_by $PID "$WORK/fa1"'
is "$(children "$PID")|$(open_by "$PID" "$WORK/fb1" && echo b-open || echo b-closed)" "1|b-closed" \
  "--jobs 1: while the first job reads, it is the only one running"
feed 3
exec 3>&-
if wait_until 300 eval 'open_by $PID "$WORK/fb1"'; then
  pass "--jobs 1: the second job starts once the first has ended"
else
  fail "--jobs 1: the second job starts once the first has ended" "$(cat "$WORK/par1.err")"
fi
feed 4
exec 4>&-
finish "$PID" 60
is "$?" 0 "--jobs 1: exit 0"

# ---- SIGTERM: passed on to the running jobs, which roll back ----------------
rm -f "$WORK/fa2" "$WORK/fb2"
mkfifo "$WORK/fa2" "$WORK/fb2"
exec 3<>"$WORK/fa2" 4<>"$WORK/fb2"
"$DWLOAD" run --jobs 2 "$P"2 >"$WORK/sig.out" 2>"$WORK/sig.err" 3>&- 4>&- &
PID=$!
wait_until 300 eval 'open_by $PID "$WORK/fa2" && open_by $PID "$WORK/fb2"'
kill -TERM "$PID"
finish "$PID" 60
is "$?" 143 "SIGTERM: exit 143"
exec 3>&- 4>&-
is "$(head -n 2 "$WORK/sig.out" | python3 -c 'import json, sys; print(" ".join(sorted(json.loads(l)["status"] for l in sys.stdin)))')" \
  "interrupted interrupted" "SIGTERM: both jobs' summaries say interrupted"
LAST=$(tail -n 1 "$WORK/sig.out")
is "$(overall 'o["exit"], [r["exit"] for r in o["results"]]')" "(143, [143, 143])" \
  "SIGTERM: the overall line and each job: 143"
is "$(grep -c 'rolled back: nothing was written' "$WORK/sig.err")" 2 "SIGTERM: each job rolled back"
is "$(sql 'SELECT count(*) FROM par2_a')" 1 "SIGTERM: the table is as before the interrupted run"

# ---- run options reach each job; --metrics-file takes one job ---------------
O="$WORK/opts"
many_job "$O" o_one m_o_one
many_job "$O" o_two m_o_two
dw run --lineage-file "$WORK/ol.jsonl" "$O"
is "$RC" 0 "--lineage-file with a folder: exit 0"
is "$(python3 -c 'import json, sys; print(" ".join(sorted(json.loads(l)["job"]["name"] + ":" + json.loads(l)["eventType"] for l in open(sys.argv[1]))))' "$WORK/ol.jsonl" 2>&1)" \
  "o_one:COMPLETE o_one:START o_two:COMPLETE o_two:START" "--lineage-file with a folder: each job's run emits its events"
dw run --full-refresh "$O"
is "$RC|$(overall 'o["failed"], [r["exit"] for r in o["results"]]')" "2|(2, [2, 2])" \
  "--full-refresh with a folder: each job gets it (and, being scd2, refuses it)"
dw run --metrics-file "$WORK/m.prom" "$O"
is "$RC" 2 "--metrics-file with a folder: exit 2"
like "$ERR" "--metrics-file takes one job" "--metrics-file with a folder: says why"
is "$([ -e "$WORK/m.prom" ] && echo written || echo none)" none "--metrics-file with a folder: no file written"

done_testing
