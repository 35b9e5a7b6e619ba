#!/bin/sh
# Issue 17: psqlODBC's own logs.  Debian's odbcinst.ini registers psqlODBC
# with CommLog=1, which leaves /tmp/psqlodbc_<program>_<user><pid>.log
# behind every process that connects (a fixed folder: TMPDIR does not move
# it), and CommLog=0 in the connection string does not stop it.  A dwload
# run, warehouse and odbc source alike, leaves none; a connection string's
# own CommLog=1 still gets one.  The script runs with the system's
# odbcinst.ini (lib.sh's ODBCSYSINI, which moves the tests' logs aside, is
# dropped), and a PostgreSQL source database whatever the warehouse.
. "$TOP_SRCDIR/tests/integration/lib.sh"
unset ODBCSYSINI ODBCINSTINI

if [ -z "${DWL_PG_HOST:-}" ] || [ -z "${DWL_PG_PORT:-}" ] || [ -z "${DWL_PG_USER:-}" ] ||
   [ -z "${DWL_PG_PASSWORD:-}" ]; then
  skip_tests 13 "no postgresql server for the source"
  done_testing
fi
case $(odbcinst -q -d -n "PostgreSQL Unicode" 2>/dev/null | tr -d ' ' | grep -i '^CommLog=') in
  CommLog=[1-9]*) ;;
  *) skip_tests 13 "the system's odbcinst.ini does not turn psqlODBC's CommLog on (Debian's does)"
     done_testing ;;
esac

PGSRC="dwl_driver_logs_src_$$"
_wh_psql postgres -c "CREATE DATABASE \"$PGSRC\" TEMPLATE template0 ENCODING 'UTF8'" >/dev/null ||
  echo "Bail out! cannot create the PostgreSQL source database"
trap '_wh_psql postgres -c "DROP DATABASE IF EXISTS \"$PGSRC\" WITH (FORCE)" >/dev/null 2>&1; _wh_drop_db;
  if [ "$T_FAILED" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "# work files kept in $WORK"; fi' EXIT
_wh_psql "$PGSRC" -c "CREATE TABLE src (id integer PRIMARY KEY, name text);
  INSERT INTO src SELECT g, 'n' || g FROM generate_series(1, 50) g" >/dev/null ||
  echo "Bail out! cannot create the source table"
PG_SRC="Driver=PostgreSQL Unicode;Server=$DWL_PG_HOST;Port=$DWL_PG_PORT;Database=$PGSRC;Uid=$DWL_PG_USER;Pwd=$DWL_PG_PASSWORD"

# src_job NAME SOURCE-CONNECTION [TARGET-CONNECTION]: an odbc -> append job
src_job() {
  cat >"$WORK/$1.yaml" <<EOF2
version: 1
job: $1
source:
  plugin: odbc
  connection: "$2"
  table: src
target:
  connection: "${3:-$WH_CONN}"
  table: $1
load:
  mode: append
EOF2
  echo "$WORK/$1.yaml"
}

# logged ARGS...: dw run ARGS with a TMPDIR of the test's; PID is the
# run's process id, LOGS psqlODBC's log files of that process (0 if none)
# and TMPLEFT what the run left in its TMPDIR
logged() {
  mkdir -p "$WORK/tmp"
  TMPDIR="$WORK/tmp" sh -c 'echo $$ >"$0"; o=$1 e=$2; shift 2; exec "$@" >"$o" 2>"$e"' \
    "$WORK/pid" "$WORK/stdout" "$WORK/stderr" "$DWLOAD" run "$@"
  RC=$?
  ERR=$(cat "$WORK/stderr")
  LAST=$(tail -n 1 "$WORK/stdout")
  PID=$(cat "$WORK/pid")
  LOGS=$(ls /tmp 2>/dev/null | grep -c -E "^(psqlodbc|mylog)_.*[^0-9]$PID[.]log\$")
  TMPLEFT=$(ls -A "$WORK/tmp" | tr '\n' ' ')
}

J=$(src_job dl_src "$PG_SRC")
logged "$J"
is "$RC|$(field inserted)" "0|50" "odbc source from PostgreSQL: the run loads"
is "$LOGS" 0 "no psqlODBC log of the run in /tmp (CommLog=1 in odbcinst.ini)"
is "$TMPLEFT" "" "the run leaves nothing in its TMPDIR"

J=$(src_job dl_zero "$PG_SRC;CommLog=0")
logged "$J"
is "$RC|$LOGS" "0|0" "CommLog=0 in the source's connection string: no log either"

if is_warehouse postgresql; then
  printf 'id,name\n1,a\n2,b\n' >"$WORK/two.csv"
  J=$(printf 'load:\n  mode: append\n' | mkjob dl_wh "$WORK/two.csv" dl_wh)
  logged "$J"
  is "$RC|$LOGS" "0|0" "a csv -> PostgreSQL warehouse run: no psqlODBC log"
else
  skip_tests 1 "the warehouse is not psqlODBC's"
fi

# The user's own CommLog=1 (and its abbreviation B3=1) still logs.
for attr in CommLog=1 B3=1; do
  J=$(src_job "dl_on_$(echo "$attr" | tr -d '=')" "$PG_SRC;$attr")
  logged "$J"
  is "$RC|$LOGS" "0|1" "$attr in the source's connection string: psqlODBC logs the connection"
  # (counted, not printed: psqlODBC's log holds the password)
  is "$(cat /tmp/psqlodbc_*[!0-9]"$PID".log 2>/dev/null | grep -c -m 1 "PQconnectdbParams: .*dbname='$PGSRC'")" 1 \
    "... and it is the source's connection that is logged"
  rm -f /tmp/psqlodbc_*[!0-9]"$PID".log
done

# A run killed before its exit handlers (SIGKILL) leaves its view of
# odbcinst.ini (dwload-odbc.<pid>.*) in TMPDIR; the next run removes it,
# and leaves alone the view of a process that is still running.  The
# killed run waits on a FIFO source: killed once its view is there.
mkdir -p "$WORK/tmp"
mkfifo "$WORK/feed.fifo"
J=$(printf 'load:\n  mode: append\n' | mkjob dl_kill "$WORK/feed.fifo" dl_kill)
TMPDIR="$WORK/tmp" "$DWLOAD" run "$J" >"$WORK/kill.out" 2>&1 &
KPID=$!
view_there() { ls -d "$WORK/tmp/dwload-odbc.$KPID".* >/dev/null 2>&1; }
wait_until 600 view_there
is "$?" 0 "killed run: its view of odbcinst.ini is in TMPDIR"
kill -9 "$KPID"
wait "$KPID" 2>/dev/null
is "$(ls -A "$WORK/tmp" | grep -c "^dwload-odbc[.]$KPID[.]")" 1 "killed run: SIGKILL left its view behind"
LIVE=$$  # this script: running
mkdir "$WORK/tmp/dwload-odbc.$LIVE.keepme"
J=$(src_job dl_sweep "$PG_SRC")
logged "$J"
is "$RC|$(field inserted)" "0|50" "after the killed run: the next run loads"
is "$TMPLEFT" "dwload-odbc.$LIVE.keepme " "after the killed run: it removed the dead run's view, not a live process's"
rmdir "$WORK/tmp/dwload-odbc.$LIVE.keepme"

done_testing
