/* Changing a job's row of dwload_state by hand: resetting or setting its
 * checkpoint, clearing a stale running mark (state_edit.c). */
#ifndef DWL_STATE_EDIT_H
#define DWL_STATE_EDIT_H

#include "state.h"

typedef enum state_action {
  STATE_RESET = 1,     /* checkpoint NULL: the next run reads every row */
  STATE_SET,           /* checkpoint = the given text (canonical, checked by the caller) */
  STATE_CLEAR_RUNNING  /* running_since/host/pid NULL: a killed run's mark */
} state_action;

/* In one transaction under the job's lock: reads the job's row into
 * before, applies the change, reads it back into after and commits.  A
 * missing row is left missing (before and after not found), except that
 * STATE_SET creates it.  A live run holding the lock: exit 3 naming it,
 * nothing changed. */
int state_edit(target *t, const char *job, state_action a, const char *checkpoint, job_state *before,
               job_state *after, dwl_error *err);

#endif
