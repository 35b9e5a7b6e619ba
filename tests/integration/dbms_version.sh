#!/bin/sh
# The warehouse's version as check and the run's log show it is the
# server's own: PostgreSQL 15.18, not psqlODBC's 15.0.18; MariaDB 10.11.19,
# not 10.11.000019 (SQL_DBMS_VER's zero-padded form).
. "$TOP_SRCDIR/tests/integration/lib.sh"

printf 'a,lmd\n1,2024-01-01\n' >"$WORK/f.csv"
JOB=$(mkjob verjob "$WORK/f.csv" t_verjob </dev/null)
dw check --connect "$JOB"
shown=$(printf '%s\n' "$OUT" | sed -n 's/^target *ok *[A-Za-z]* \([^ ]*\) .*/\1/p')
case $WAREHOUSE in
  postgresql) want=$(sql 'SHOW server_version' | sed 's/ .*//') ;;
  mariadb) want=$(sql 'SELECT VERSION()' | sed 's/-.*//') ;;
  *) want=$shown ;;  # the driver's own SQLite library, not the sqlite3 shell's
esac
is "$RC|$shown" "0|$want" "check shows the server's version ($want)"
like "$shown" "." "the version has its dots"
case ".$shown" in
  *.0[0-9]*) fail "no part of the version is zero-padded" "got: $shown" ;;
  *) pass "no part of the version is zero-padded" ;;
esac
dw run "$JOB"
like "$ERR" "connected to " "run logs the connection"
like "$ERR" " $want (" "run logs the server's version"
done_testing
