#!/bin/sh
# wh-run.sh SHELL TEST: make check's compiler for the .wh tests.  TEST names
# an integration script and a warehouse: tests/integration/append.pg.wh is
# tests/integration/append.sh run by SHELL with WAREHOUSE=postgresql, and
# append.mariadb.wh the same with WAREHOUSE=mariadb.  No such file exists;
# only the name is read.
name=$(basename "$2" .wh)
case $name in
  *.pg) WAREHOUSE=postgresql ;;
  *.mariadb) WAREHOUSE=mariadb ;;
  *)
    echo "Bail out! $2: not NAME.pg.wh or NAME.mariadb.wh"
    exit 1 ;;
esac
export WAREHOUSE
exec "$1" "${TOP_SRCDIR:?}/tests/integration/${name%.*}.sh"
