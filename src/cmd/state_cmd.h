/* dwload state: the job's stored checkpoint and its last run; with an
 * option, a change to them (state_cmd.c). */
#ifndef DWL_STATE_CMD_H
#define DWL_STATE_CMD_H

#include <stdio.h>

#include "err.h"
#include "spec.h"

/* What `dwload state` was asked to do. */
typedef struct state_opts {
  enum { STATE_SHOW = 0, STATE_DO_RESET, STATE_DO_SET, STATE_DO_CLEAR_RUNNING } action;
  const char *value;  /* --set VALUE */
  int json;           /* --json: the change as one JSON line */
} state_opts;

/* Prints the job's row of the state table on out, or changes it (under the
 * job's lock, one transaction) and prints before -> after; -1 with err when
 * the target cannot be read, the value is bad (exit 2) or a run holds the
 * lock (exit 3). */
int state_job(const dwl_spec *spec, const state_opts *o, FILE *out, dwl_error *err);

#endif
