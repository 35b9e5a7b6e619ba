/* Run history in the target: the table dwload_runs holds one row per run
 * (its id, job, times, status, counts, checkpoints, error, host, version),
 * so "what did last night's run do" is one query. */
#ifndef DWL_RUNS_H
#define DWL_RUNS_H

#include <stdio.h>

#include "err.h"
#include "summary.h"
#include "target.h"

#define DWL_RUNS_TABLE "dwload_runs"

/* What a run's row says besides the summary's counts. */
typedef struct run_record {
  const run_summary *sum;
  const char *status;      /* committed, rolled back, failed, interrupted, unknown */
  const char *started;     /* the run's start, as ts_format writes it */
  const char *cp_before;   /* the checkpoint the run started from; "" none */
  const char *error;       /* NULL: none */
} run_record;

/* Creates the run table when missing (autocommit, idempotent). */
int runs_ensure(target *t, dwl_error *err);
/* Inserts the run's row on t's connection, inside the run's transaction:
 * a committed run's row commits with its data and checkpoint. */
int runs_insert(target *t, const run_record *rec, dwl_error *err);
/* After a rollback, or when the run never held its lock: the row in a
 * short transaction of its own, on t's connection or (lost) a new one.
 * Best effort: a failure is logged, the run's outcome stays as it is. */
void runs_record_after(target *t, const run_record *rec);
/* Prints the job's last `limit` runs, newest first: a table, or with json
 * one JSON object per line. */
int runs_print(target *t, const char *job, long limit, int json, FILE *out, dwl_error *err);

#endif
