/* Hints for the common failures, in one table keyed on the exit code, on
 * the cause the module that raised the error gave it (err.h), and for a
 * connection on the SQLSTATE the ODBC driver reported, so the modules keep
 * reporting facts and the advice is reviewed, and tested
 * (tests/unit/test_hint.c, tests/integration/ops.sh), in one place.  The
 * first matching row wins: specific rows go first. */
#include "hint.h"

#include <stddef.h>
#include <string.h>

typedef struct hint_rule {
  int code;             /* exit code the rule applies to; 0: any */
  int cause;            /* enum dwl_cause the rule applies to; 0: any */
  const char *sqlstate; /* the first diagnostic's SQLSTATE starts with this (NULL: any) */
  long native;          /* ... and its native code is this (0: any) */
  const char *diag;     /* the driver's text contains this (NULL: nothing more); see below */
  const char *hint;
} hint_rule;

static const char spec_hint[] =
    "fix the job file at the position given (dwload-job(5) lists every key); `dwload check JOB` checks a job "
    "without running it; exit 2 is not worth a retry";

static const char guard_hint[] =
    "check the source first: a retry fails the same way until it delivers the keys; `dwload plan JOB` shows "
    "what a run would delete, with the same overrides";

/* The connection rows by SQLSTATE, as the drivers report them (measured
 * with unixODBC 2.3.11, psqlodbc and MariaDB Connector/ODBC 3.1): unixODBC
 * posts 01000 "Can't open lib" when Driver= names no loadable library and
 * IM002 for no such DSN; MariaDB refuses a login with 28000 and native
 * 1045.  psqlodbc reports a refused password as 08001, native 101, exactly
 * as a refused TCP connection: only the server's text tells them apart, so
 * that one row reads the driver's text, of connection errors only. */
static const hint_rule rules[] = {
  {DWL_EXIT_UNKNOWN, 0, NULL, 0, NULL,
   "`dwload state JOB` shows the run id of the last committed run: if it is this run's id, the run "
   "committed; a retry is safe either way (the data and the checkpoint commit together)"},
  {0, DWL_CAUSE_INTERRUPTED, NULL, 0, NULL,
   "the run was stopped by a signal and rolled back; run the job again to load its rows"},
  {DWL_EXIT_LOCKED, 0, NULL, 0, NULL,
   "exit 3 is worth a retry later; `dwload state JOB` shows the run that holds the lock"},
  {0, DWL_CAUSE_CONNECT, "01000", 0, NULL,
   "the ODBC driver of Driver= is not installed or not registered: `odbcinst -q -d` lists the drivers "
   "(Debian packages libsqliteodbc, odbc-postgresql, odbc-mariadb)"},
  {0, DWL_CAUSE_CONNECT, "IM002", 0, NULL,
   "no such DSN or driver: `odbcinst -q -s` lists the data sources, `odbcinst -q -d` the drivers "
   "(see ODBCINI and ODBCSYSINI in dwload(1))"},
  {0, DWL_CAUSE_CONNECT, NULL, 0, "password authentication failed",
   "the server refused the user or password: check Uid= and the variable the job reads Pwd= from"},
  {0, DWL_CAUSE_CONNECT, "28000", 1045, NULL,
   "the server refused the user or password: check User= and the variable the job reads Password= from"},
  {0, DWL_CAUSE_CONNECT, "28", 0, NULL,
   "the server refused the user or password: check the user and the variable the job reads the password from"},
  {0, DWL_CAUSE_CONNECT, NULL, 0, NULL,
   "check that the server is up and reachable and the connection string's server, port and database; "
   "`dwload check JOB` tries the connection; exit 1 is worth a retry if the server was down"},
  {0, DWL_CAUSE_PLUGIN_NOT_FOUND, NULL, 0, NULL,
   "`dwload plugins` lists the plugins found and where it looked; add the plugin's directory with "
   "--plugin-path or DWLOAD_PLUGIN_PATH"},
  {0, DWL_CAUSE_NOT_PLUGIN, NULL, 0, NULL, "`dwload plugins` lists the files that load as plugins"},
  /* asof before the first run: the message says what to do */
  {0, DWL_CAUSE_NO_TABLE, NULL, 0, NULL, NULL},
  /* guard.c's refusals: the source, not the moment, is what failed */
  {DWL_EXIT_FAILED, DWL_CAUSE_GUARD, NULL, 0, NULL, guard_hint},
  {DWL_EXIT_USAGE, DWL_CAUSE_PLUGIN_OPTION, NULL, 0, NULL,
   "`dwload plugins` lists every plugin's options, with their types and defaults"},
  {DWL_EXIT_USAGE, DWL_CAUSE_SPEC, NULL, 0, NULL, spec_hint},
};

const char *hint_for(const dwl_error *err)
{
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const hint_rule *r = &rules[i];
    if (r->code && r->code != err->code)
      continue;
    if (r->cause && r->cause != err->cause)
      continue;
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
