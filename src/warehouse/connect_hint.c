/* The hints for a failed connection, by what the ODBC driver manager and
 * the drivers report (SQLSTATE, native code, and where nothing else tells
 * two failures apart, the driver's text): driver knowledge, so it lives
 * with the warehouses.  hint.c asks here for an error of cause
 * DWL_CAUSE_CONNECT. */
#include "connect_hint.h"

#include <stddef.h>
#include <string.h>

typedef struct conn_rule {
  const char *sqlstate; /* the first diagnostic's SQLSTATE starts with this (NULL: any) */
  long native;          /* ... and its native code is this (0: any) */
  const char *diag;     /* the driver's text contains this (NULL: nothing more) */
  const char *hint;
} conn_rule;

/* The connection rows by SQLSTATE, as the drivers report them (measured
 * with unixODBC 2.3.11, psqlodbc and MariaDB Connector/ODBC 3.1): unixODBC
 * posts 01000 "Can't open lib" when Driver= names no loadable library and
 * IM002 for no such DSN; MariaDB refuses a login with 28000 and native
 * 1045.  psqlodbc reports a refused password as 08001, native 101, exactly
 * as a refused TCP connection: only the server's text tells them apart, so
 * that one row reads the driver's text, of connection errors only. */
static const conn_rule rules[] = {
  {"01000", 0, NULL,
   "the ODBC driver of Driver= is not installed or not registered: `odbcinst -q -d` lists the drivers "
   "(Debian packages libsqliteodbc, odbc-postgresql, odbc-mariadb)"},
  {"IM002", 0, NULL,
   "no such DSN or driver: `odbcinst -q -s` lists the data sources, `odbcinst -q -d` the drivers "
   "(see ODBCINI and ODBCSYSINI in dwload(1))"},
  {NULL, 0, "password authentication failed",
   "the server refused the user or password: check Uid= and the variable the job reads Pwd= from"},
  {"28000", 1045, NULL,
   "the server refused the user or password: check User= and the variable the job reads Password= from"},
  {"28", 0, NULL,
   "the server refused the user or password: check the user and the variable the job reads the password from"},
  {NULL, 0, NULL,
   "check that the server is up and reachable and the connection string's server, port and database; "
   "`dwload check --connect JOB` tries the connection; exit 1 is worth a retry if the server was down"},
};

const char *connect_hint(const dwl_error *err)
{
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const conn_rule *r = &rules[i];
    if (r->sqlstate && strncmp(err->sqlstate, r->sqlstate, strlen(r->sqlstate)) != 0)
      continue;
    if (r->native && r->native != err->native)
      continue;
    if (r->diag && !strstr(err->msg, r->diag))
      continue;
    return r->hint;
  }
  return NULL;
}
