#!/bin/sh
# wh-run.sh SHELL TEST: make check's compiler for the .wh tests.  TEST names
# an integration script and a warehouse: tests/integration/append.pg.wh is
# tests/integration/append.sh run by SHELL with WAREHOUSE=postgresql,
# append.mariadb.wh the same with WAREHOUSE=mariadb (and .sqlite.wh with
# SQLite); scd2.pushdown.pg.wh is scd2.sh on PostgreSQL with the pushdown
# engine.  No such file exists;
# only the name is read.
name=$(basename "$2" .wh)
case $name in
  *.pg) WAREHOUSE=postgresql ;;
  *.mariadb) WAREHOUSE=mariadb ;;
  *.sqlite) WAREHOUSE=sqlite ;;
  *)
    echo "Bail out! $2: not NAME.pg.wh, NAME.mariadb.wh or NAME.sqlite.wh"
    exit 1 ;;
esac
name=${name%.*}
# NAME.pushdown.pg.wh: NAME.sh with the pushdown engine (DWL_ENGINE, which
# tests/integration/lib.sh's mkjob and the seed specs honour).
case $name in
  *.pushdown)
    DWL_ENGINE=pushdown
    export DWL_ENGINE
    name=${name%.pushdown} ;;
esac
export WAREHOUSE
exec "$1" "${TOP_SRCDIR:?}/tests/integration/$name.sh"
