/* Hints for the common failures, in one table keyed on the exit code and
 * on stems of the messages the modules write (and of the SQLSTATEs the
 * ODBC drivers report), so the modules keep reporting facts and the advice
 * is reviewed, and tested (tests/integration/logs.sh), in one place.  The
 * first matching row wins: specific rows go first. */
#include "hint.h"

#include <stddef.h>
#include <string.h>

typedef struct hint_rule {
  int code;            /* exit code the rule applies to; 0: any */
  const char *has;     /* the message contains this */
  const char *also;    /* ... and this (NULL: nothing more) */
  const char *hint;
} hint_rule;

static const char spec_hint[] =
    "fix the job file at the position given (dwload-job(5) lists every key); `dwload check JOB` checks a job "
    "without running it; exit 2 is not worth a retry";

static const char guard_hint[] =
    "check the source first: a retry fails the same way until it delivers the keys; `dwload plan JOB` shows "
    "what a run would delete, with the same overrides";

static const hint_rule rules[] = {
  {DWL_EXIT_UNKNOWN, NULL, NULL,
   "`dwload state JOB` shows the run id of the last committed run: if it is this run's id, the run "
   "committed; a retry is safe either way (the data and the checkpoint commit together)"},
  {0, "interrupted by SIG", NULL,
   "the run was stopped by a signal and rolled back; run the job again to load its rows"},
  {DWL_EXIT_LOCKED, NULL, NULL,
   "exit 3 is worth a retry later; `dwload state JOB` shows the run that holds the lock"},
  {0, "cannot connect to", "Can't open lib",
   "the ODBC driver of Driver= is not installed or not registered: `odbcinst -q -d` lists the drivers "
   "(Debian packages libsqliteodbc, odbc-postgresql, odbc-mariadb)"},
  {0, "cannot connect to", "[IM002",
   "no such DSN or driver: `odbcinst -q -s` lists the data sources, `odbcinst -q -d` the drivers "
   "(see ODBCINI and ODBCSYSINI in dwload(1))"},
  {0, "cannot connect to", "password authentication failed",
   "the server refused the user or password: check Uid= and the variable the job reads Pwd= from"},
  {0, "cannot connect to", "Access denied",
   "the server refused the user or password: check User= and the variable the job reads Password= from"},
  {0, "cannot connect to", "[28",
   "the server refused the user or password: check the user and the variable the job reads the password from"},
  {0, "cannot connect to", NULL,
   "check that the server is up and reachable and the connection string's server, port and database; "
   "`dwload check JOB` tries the connection; exit 1 is worth a retry if the server was down"},
  {0, "plugin '", "not found",
   "`dwload plugins` lists the plugins found and where it looked; add the plugin's directory with "
   "--plugin-path or DWLOAD_PLUGIN_PATH"},
  {0, "is not a dwload plugin", NULL, "`dwload plugins` lists the files that load as plugins"},
  {0, "does not exist yet; run the job first", NULL, NULL},
  /* guard.c's refusals: the source, not the moment, is what failed */
  {DWL_EXIT_FAILED, "is taken for a failed source", NULL, guard_hint},
  {DWL_EXIT_FAILED, "deletes: absent would delete", "load.max_deletes", guard_hint},
  {DWL_EXIT_USAGE, "unknown option", NULL,
   "`dwload plugins` lists every plugin's options, with their types and defaults"},
  {DWL_EXIT_USAGE, ".yaml:", NULL, spec_hint},
  {DWL_EXIT_USAGE, ".yml:", NULL, spec_hint},
};

const char *hint_for(const dwl_error *err)
{
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const hint_rule *r = &rules[i];
    if (r->code && r->code != err->code)
      continue;
    if (r->has && !strstr(err->msg, r->has))
      continue;
    if (r->also && !strstr(err->msg, r->also))
      continue;
    return r->hint;
  }
  return NULL;
}
