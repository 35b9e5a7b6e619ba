/* dwload runs: the job's last runs, from the run table. */
#ifndef DWL_RUNS_CMD_H
#define DWL_RUNS_CMD_H

#include <stdio.h>

#include "err.h"
#include "spec.h"

/* Prints the job's last `limit` runs on out, newest first (json: one
 * object per line); -1 with err when the target cannot be read. */
int runs_job(const dwl_spec *spec, long limit, int json, FILE *out, dwl_error *err);

#endif
