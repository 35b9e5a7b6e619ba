/* dwload state: the job's stored checkpoint and its last run. */
#ifndef DWL_STATE_CMD_H
#define DWL_STATE_CMD_H

#include <stdio.h>

#include "err.h"
#include "spec.h"

/* Prints the job's row of the state table on out; -1 with err when the
 * target cannot be read. */
int state_job(const dwl_spec *spec, FILE *out, dwl_error *err);

#endif
