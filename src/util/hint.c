/* Hints for the common failures, in one table keyed on the exit code, on
 * the cause the module that raised the error gave it (err.h), and for a
 * connection on what the ODBC driver reported (connect_hint.c), so the
 * modules keep reporting facts and the advice is reviewed, and tested
 * (tests/unit/test_hint.c, tests/integration/ops.sh), in one place.  The
 * first matching row wins: specific rows go first. */
#include "hint.h"

#include <stddef.h>

#include "connect_hint.h"

typedef struct hint_rule {
  int code;             /* exit code the rule applies to; 0: any */
  int cause;            /* enum dwl_cause the rule applies to; 0: any */
  const char *hint;
  /* Or the hint comes from here (the warehouse layer's connection rows). */
  const char *(*more)(const dwl_error *err);
} hint_rule;

static const char spec_hint[] =
    "fix the job file at the position given (dwload-job(5) lists every key); `dwload check JOB` checks a job "
    "without running it; exit 2 is not worth a retry";

static const char guard_hint[] =
    "check the source first: a retry fails the same way until it delivers the keys; `dwload plan JOB` shows "
    "what a run would delete, with the same overrides";

static const hint_rule rules[] = {
  /* before the plain exit 5's "a retry is safe": here it is not always */
  {DWL_EXIT_UNKNOWN, DWL_CAUSE_COMMIT_APART,
   "the table's rows commit apart from the checkpoint (dwload-job(5), SHARDED AND FOREIGN TARGETS, DISTRIBUTED "
   "TARGETS); when the checkpoint was not committed, a retry reads the same rows again and finds those a server "
   "committed unchanged; when it was, reload the run's rows with run --backfill-from and --backfill-to", NULL},
  {DWL_EXIT_UNKNOWN, 0,
   "`dwload state JOB` shows the run id of the last committed run: if it is this run's id, the run "
   "committed; a retry is safe either way (the data and the checkpoint commit together)", NULL},
  {0, DWL_CAUSE_INTERRUPTED,
   "the run was stopped by a signal and rolled back; run the job again to load its rows", NULL},
  /* before the other lock waits: a retry waits on the same locks */
  {DWL_EXIT_LOCKED, DWL_CAUSE_PREPARED_XA,
   "a prepared XA transaction (from a crashed run or coordinator) holds locks that the shards wait on, and a retry "
   "waits on them again: end each with XA ROLLBACK or XA COMMIT and its xid on the head, and on each server the "
   "message names (ending it on the head leaves their branches prepared: `XA RECOVER` there lists them), then "
   "run again", NULL},
  {DWL_EXIT_LOCKED, 0,
   "exit 3 is worth a retry later; `dwload state JOB` shows the run that holds the lock", NULL},
  /* a connection's rows: the warehouse layer knows the drivers */
  {0, DWL_CAUSE_CONNECT, NULL, connect_hint},
  {0, DWL_CAUSE_PLUGIN_NOT_FOUND,
   "`dwload plugins` lists the plugins found and where it looked; add the plugin's directory with "
   "--plugin-path or DWLOAD_PLUGIN_PATH", NULL},
  {0, DWL_CAUSE_NOT_PLUGIN, "`dwload plugins` lists the files that load as plugins", NULL},
  /* asof before the first run: the message says what to do */
  {0, DWL_CAUSE_NO_TABLE, NULL, NULL},
  /* guard.c's refusals: the source, not the moment, is what failed */
  {DWL_EXIT_PERMANENT, DWL_CAUSE_GUARD, guard_hint, NULL},
  /* the other permanent causes (exit 4): what a person must change */
  {0, DWL_CAUSE_SCHEMA,
   "the target table does not fit the job: alter it, or point target.table at a new table; exit 4 is not worth a "
   "retry", NULL},
  {0, DWL_CAUSE_NON_ATOMIC,
   "turn on the setting the message names for dwload's sessions (SET GLOBAL spider_internal_xa = ON on the head, "
   "or InitStmt in the connection string), or accept the risk with target.accept_non_atomic: true "
   "(dwload-job(5), DISTRIBUTED TARGETS); exit 4 is not worth a retry", NULL},
  {0, DWL_CAUSE_REJECTS,
   "a retry fails the same way until the source's rows are fixed (dwload-job(5), REJECTS, says how a run "
   "sets bad rows aside); exit 4 is not worth a retry", NULL},
  {0, DWL_CAUSE_REJECT_FILE,
   "create load.reject_file's folder or let dwload write to it; exit 4 is not worth a retry", NULL},
  {DWL_EXIT_USAGE, DWL_CAUSE_PLUGIN_OPTION,
   "`dwload plugins` lists every plugin's options, with their types and defaults", NULL},
  {DWL_EXIT_USAGE, DWL_CAUSE_SPEC, spec_hint, NULL},
};

const char *hint_for(const dwl_error *err)
{
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const hint_rule *r = &rules[i];
    if (r->code && r->code != err->code)
      continue;
    if (r->cause && r->cause != err->cause)
      continue;
    return r->more ? r->more(err) : r->hint;
  }
  return NULL;
}
