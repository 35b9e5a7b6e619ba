/* dwload state: what the warehouse holds about a job (its checkpoint, its
 * last run's counts and status, the run id of the last commit, a run that
 * holds or held the lock), read without taking the job's lock. */
#include "state_cmd.h"

#include "state.h"
#include "target.h"

int state_job(const dwl_spec *spec, FILE *out, dwl_error *err)
{
  target *t;
  if (target_connect(spec, &t, err) != 0)
    return -1;
  job_state st;
  int rc = state_read(t, spec->job, &st, err);
  if (rc == 0) {
    fprintf(out, "job:         %s\n", spec->job);
    fprintf(out, "target:      %s (%s)\n", spec->target_table, t->c->redacted);
    if (!st.found) {
      fprintf(out, "state:       no run yet\n");
    } else {
      fprintf(out, "checkpoint:  %s\n", st.checkpoint[0] ? st.checkpoint : "(none)");
      fprintf(out, "last run:    %s, %s\n", st.last_run_at[0] ? st.last_run_at : "(none)",
              st.last_mode[0] ? st.last_mode : "-");
      fprintf(out, "counts:      read %lld, skipped %lld, inserted %lld, expired %lld, updated %lld, deleted %lld, "
                   "unchanged %lld, rejected %lld (%.3fs)\n",
              st.read, st.skipped, st.inserted, st.expired, st.updated, st.deleted, st.unchanged, st.rejected,
              st.seconds);
      fprintf(out, "status:      %s\n", st.last_status[0] ? st.last_status : "-");
      if (st.last_error[0])
        fprintf(out, "last error:  %s\n", st.last_error);
      /* (best effort: a table of an older dwload has no run_id yet) */
      char id[40];
      dwl_error e2;
      err_init(&e2);
      if (state_read_run_id(t->c, t->d, spec->job, 0, NULL, id, sizeof id, &e2) == 0 && id[0])
        fprintf(out, "run id:      %s (the last committed run)\n", id);
      /* Set while a run holds the lock; a run killed outright leaves it
       * behind, but not the lock, which dies with its transaction. */
      if (st.running_since[0])
        fprintf(out, "started:     a run started at %s (host %s, pid %lld) is running or was killed\n",
                st.running_since, st.running_host, st.running_pid);
    }
  }
  target_free(t);
  return rc;
}
