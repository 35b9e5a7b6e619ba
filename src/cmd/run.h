/* One run of a job, end to end: spec -> source plugin -> rows (normalized,
 * filtered by the checkpoint) -> change engine -> target writer -> commit
 * of the rows and the new checkpoint in one transaction.  The read-only
 * commands built on the same pieces are check_cmd.h and state_cmd.h. */
#ifndef DWL_RUN_H
#define DWL_RUN_H

#include <stdio.h>

#include "err.h"
#include "spec.h"
#include "summary.h"
#include "ts.h"

typedef struct run_opts {
  int plan;        /* compute everything, write nothing */
  FILE *sqlout;    /* plan --sql: print statements here */
  const spec_limit *max_deletes;  /* --max-deletes: overrides load.max_deletes; NULL: none */
  int allow_empty; /* --allow-empty: as load.allow_empty: true */
  long long memory_budget;  /* --memory-budget in bytes: overrides load.memory_budget; 0: none */
  int full_refresh; /* --full-refresh: checkpoint ignored, the table's rows replaced (refresh.c) */
  const char *backfill_from, *backfill_to;  /* --backfill-from/-to: NULL none */
  dwl_ts bf_from, bf_to;                    /* ... parsed by refresh_check */
  const char *as_of;  /* --as-of: a snapshot load's time (snapshot.c); NULL: the run's clock */
  dwl_ts as_of_ts;    /* ... parsed by refresh_check */
  void (*on_start)(void *ud, const run_summary *sum);  /* once the run has its id (lineage) */
  void *start_ud;
} run_opts;

/* Fills sum in every case (status failed on error). */
int run_job(const dwl_spec *spec, const run_opts *o, run_summary *sum, dwl_error *err);

const char *run_mode_name(int mode);

#endif
