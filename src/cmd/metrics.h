/* run --metrics-file PATH: the run's counts, duration, outcome, last
 * success and checkpoint lag as a Prometheus textfile (dwload(1),
 * METRICS), replaced atomically.  Best effort: a failure is a warning. */
#ifndef DWL_METRICS_H
#define DWL_METRICS_H

#include "summary.h"

/* Writes path for the run of sum, which exits exit_code; nothing when
 * path is NULL or the job is unknown (its spec did not load). */
void metrics_write(const char *path, const run_summary *sum, int exit_code);

#endif
