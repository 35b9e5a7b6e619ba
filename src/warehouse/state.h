/* Job state in the target: the table dwload_state holds one row per job
 * (checkpoint, last run, counts) and is also where a run takes the job's
 * lock, so the lock holds across machines and dies with its transaction. */
#ifndef DWL_STATE_H
#define DWL_STATE_H

#include "err.h"
#include "summary.h"
#include "target.h"
#include "ts.h"

#define DWL_STATE_TABLE "dwload_state"

typedef struct job_state {
  int found;
  char checkpoint[128];      /* "" when none; a composite lmd's is a JSON array; a snapshot load's (snapshot.c): its load time */
  char last_run_at[40];
  char last_status[16];
  char last_mode[16];
  long long read, skipped, inserted, expired, updated, deleted, unchanged, rejected;
  double seconds;
  char running_since[40];
  char running_host[128];
  long long running_pid;
  char last_error[600];
} job_state;

/* The stored checkpoint TEXT of JOB: its text tells its type, the decimal
 * integer of a sequence (*seq = 1) or a timestamp; a composite lmd's is a
 * JSON array of its columns' values, the first as one of those (quoted
 * when a point in time), the tie-breakers each an integer or a quoted
 * timestamp: ["2024-05-01 10:00:00",7].  0, or -1 with err. */
int state_checkpoint(const char *job, const char *text, dwl_ts *cp, int *seq, dwl_error *err);
/* The canonical text of checkpoint cp in table t: as target_ts_text, or
 * the JSON array of a composite (cp->nties > 0).  n >= 128. */
void state_checkpoint_text(const target *t, const dwl_ts *cp, char *out, size_t n);
/* The same without a table: c1 is the first column's canonical text, seq
 * whether it is a sequence's integer. */
void state_checkpoint_compose(const char *c1, int seq, const dwl_ts *cp, char *out, size_t n);
/* What a source plugin is told instead of the stored checkpoint cp (seq:
 * a sequence's), into out: cp less load.lookback, and a composite's first
 * column less one step (an integer, a day of a date, a microsecond), so a
 * plugin's `lmd > ?` reads every row at that value too and the
 * tie-breakers are filtered in memory.  1 when out holds it, 0 when the
 * plugin is told the stored text itself. */
int state_checkpoint_lowered(const dwl_ts *cp, int seq, long long lookback, char out[32]);
/* Once the layout knows the lmd's type: a checkpoint of the other type
 * (the lmd column changed between runs), or of another shape than
 * load.lmd's (shape: nties tie-breakers of kinds tie_time, as prep_init
 * found them), fails with exit 2, never compared as the wrong one.  0, or
 * -1 with err. */
int state_checkpoint_fits(const target *t, const char *text, const dwl_ts *cp, int seq, const dwl_ts *shape,
                          dwl_error *err);

/* Creates the state table when missing (autocommit, idempotent). */
int state_ensure(target *t, dwl_error *err);
/* Reads the job's row; found = 0 when the table or the row is missing. */
int state_read(target *t, const char *job, job_state *st, dwl_error *err);
/* After a failed run (its transaction rolled back first, if open): the
 * job's stored checkpoint into out, "" when none or unreadable. */
void state_stored_checkpoint(target *t, const char *job, char *out, size_t n);
/* Begins the run's transaction holding the job's lock.  Another run
 * holding it: exit code 3 with a message naming the job and since when. */
int state_lock(target *t, const char *job, const dwl_ts *started, dwl_error *err);
/* The job's lock was found taken (a lock conflict): replaces err with
 * exit 3 and a message naming the holder, as state_lock says it. */
int state_locked(target *t, const char *job, dwl_error *err);
/* One statement on the state tables: its result; with conflict non-NULL,
 * *conflict tells whether it failed on a lock conflict (the dialect's
 * lock_conflict). */
int state_exec(target *t, const char *sql, const dwl_value *p, size_t n, int *conflict, dwl_error *err);
/* Inside the transaction: stores the checkpoint (or a snapshot load's
 * load time) and the counts. */
int state_save(target *t, const run_summary *s, dwl_error *err);
/* After a rollback: records the failure (autocommit, best effort) with
 * STATUS as last_status: the summary's ("failed", "interrupted"). */
void state_record_failure(target *t, const char *job, const char *status, const char *msg);

/* Each run writes its run id into its row with the commit (state_save),
 * so that after a commit call that failed, the row tells whether the
 * commit happened.  Adds the run_id column to a state table an older
 * dwload created (autocommit, before the run's transaction; idempotent,
 * also when two runs add it at once). */
int state_ensure_run_id(target *t, dwl_error *err);
/* The run id in the job's row on connection c ("" when none).  With wait,
 * on a warehouse with row locks, the read waits (briefly: the lock wait of
 * taking the job's lock) for a transaction still holding the row, so that
 * a commit the server is still finishing is seen; then restore_sql (the
 * session's own lock wait, or NULL) is run. */
int state_read_run_id(odbc_conn *c, const dialect *d, const char *job, int wait, const char *restore_sql,
                      char *out, size_t n, dwl_error *err);

#endif
