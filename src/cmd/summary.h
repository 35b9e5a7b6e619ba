/* The run summary: counts of a run, printed as the one-line JSON object
 * that ends stdout (Airflow's BashOperator pushes that line to XCom). */
#ifndef DWL_SUMMARY_H
#define DWL_SUMMARY_H

#include <stdio.h>

typedef struct run_summary {
  char job[128];
  int ok;
  /* NULL: "ok" or "failed" by ok; else "interrupted" (a signal) or
   * "unknown" (the commit call failed and its outcome could not be read) */
  const char *status;
  const char *mode;
  char run_id[40];       /* written to dwload_state with the commit; "" = null */
  long long read, skipped, inserted, expired, updated, deleted, unchanged, rejected;
  long long late_repaired, late_rejected, late_ignored;  /* rows older than their key's history */
  long long widened;     /* columns schema.widen widened (a plan: would widen) */
  long long absent;      /* deletes: absent: keys missing from the source */
  const char *guard;     /* the guard that stopped the run or held deletions back (guard.c); NULL: none */
  char checkpoint[128];  /* "" = null; a composite lmd's is longer (state_checkpoint_text) */
  char load_time[40];    /* a snapshot load (snapshot.c): its time; "" none */
  const char *engine;    /* scd2, upsert: "memory" or "pushdown" (engine/choose.h); NULL: none */
  char engine_reason[1200]; /* ... and why */
  long long spilled_partitions; /* the memory engine's delta spilled to this many partition files; 0: held in memory */
  long long streamed_chunks;    /* an initial load written in this many chunks while the source was read; 0: not streamed */
  double seconds;
} run_summary;

void summary_init(run_summary *s, const char *job, const char *mode);
/* The engine the run uses and why (a copy of `why`). */
void summary_engine(run_summary *s, const char *engine, const char *why);

/* A run's counts by name, in the summary's order (lineage and metrics
 * report them the same way). */
typedef struct summary_count {
  const char *name;
  long long v;
} summary_count;
#define SUMMARY_NCOUNTS 8
void summary_counts(const run_summary *s, summary_count out[SUMMARY_NCOUNTS]);
/* One line of JSON, keys in the documented order, then '\n'.  Returns 0,
 * or -1 with errno set when it could not be written (a full disk, a
 * closed pipe). */
int summary_print(const run_summary *s, FILE *out);

/* The summary of `dwload migrate`. */
typedef struct migrate_summary {
  int ok;
  long long tables;      /* tables migrated (verified or copied) */
  long long copied;      /* rows copied by this run */
  long long rows;        /* rows in the migrated tables at the end */
  long long verified;    /* tables whose verification passed */
  char failed[256];      /* the first table that failed, "" none */
  double seconds;
} migrate_summary;

void migrate_summary_print(const migrate_summary *s, FILE *out);

#endif
