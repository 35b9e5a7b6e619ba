/* Changing a job's row of dwload_state by hand (dwload state --reset,
 * --set, --clear-running): under the job's lock, in one transaction, so a
 * live run is never changed under its feet and the change is all or
 * nothing. */
#include "state_edit.h"

#include <string.h>

/* One statement; a lock conflict (a run holds the job's row, or on SQLite
 * the database's write lock) becomes exit 3 naming the holder. */
static int edit_exec(target *t, const char *job, const char *sql, const dwl_value *p, size_t n, dwl_error *err)
{
  int conflict;
  int rc = state_exec(t, sql, p, n, &conflict, err);
  return conflict ? state_locked(t, job, err) : rc;
}

static int change(target *t, const char *job, state_action a, const char *checkpoint, const job_state *before,
                  dwl_error *err)
{
  dwl_value p[2];
  switch (a) {
  case STATE_RESET:
    odbc_text(&p[0], job);
    return edit_exec(t, job, "UPDATE " DWL_STATE_TABLE " SET checkpoint = NULL WHERE job = ?", p, 1, err);
  case STATE_SET:
    odbc_text(&p[0], job);
    /* A job that never ran gets its row now: its first run starts there. */
    if (!before->found &&
        edit_exec(t, job, "INSERT INTO " DWL_STATE_TABLE " (job) VALUES (?)", p, 1, err) != 0)
      return -1;
    odbc_text(&p[0], checkpoint);
    odbc_text(&p[1], job);
    return edit_exec(t, job, "UPDATE " DWL_STATE_TABLE " SET checkpoint = ? WHERE job = ?", p, 2, err);
  case STATE_CLEAR_RUNNING:
    odbc_text(&p[0], job);
    return edit_exec(t, job,
                     "UPDATE " DWL_STATE_TABLE " SET running_since = NULL, running_host = NULL, running_pid = NULL "
                     "WHERE job = ?",
                     p, 1, err);
  }
  return err_set(err, DWL_EXIT_FAILED, "unknown state change");
}

int state_edit(target *t, const char *job, state_action a, const char *checkpoint, job_state *before,
               job_state *after, dwl_error *err)
{
  memset(before, 0, sizeof *before);
  memset(after, 0, sizeof *after);
  if (a == STATE_SET && state_ensure(t, err) != 0)
    return -1;
  if (odbc_begin(t->c, err) != 0)
    return -1;
  /* Waiting for the lock is how a live run is found: only briefly. */
  dwl_value p;
  odbc_text(&p, job);
  int rc = t->d->lock_wait_sql ? odbc_exec(t->c, t->d->lock_wait_sql, NULL, NULL, 0, err) : 0;
  /* The job's lock first, as a run takes it; then the row as it stands
   * under the lock (none yet: nothing to lock, and nothing to change but
   * for --set). */
  if (rc == 0)
    rc = state_read(t, job, before, err);
  if (rc == 0 && before->found)
    rc = edit_exec(t, job, "UPDATE " DWL_STATE_TABLE " SET running_pid = running_pid WHERE job = ?", &p, 1, err);
  if (rc == 0 && before->found)
    rc = state_read(t, job, before, err);
  if (rc == 0 && (before->found || a == STATE_SET))
    rc = change(t, job, a, checkpoint, before, err);
  if (rc == 0)
    rc = state_read(t, job, after, err);
  if (rc == 0)
    rc = odbc_commit(t->c, err);
  if (rc != 0 && t->c->in_txn)
    odbc_rollback(t->c);
  /* The session waits for locks as target.lock_timeout says again. */
  dwl_error e2;
  err_init(&e2);
  if (t->lock_done_sql[0])
    odbc_exec(t->c, t->lock_done_sql, NULL, NULL, 0, &e2);
  return rc;
}
