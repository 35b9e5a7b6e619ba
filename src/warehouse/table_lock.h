/* The target table's lock: writers of one table exclude each other, whatever
 * their job, across machines.  The table dwload_lock holds one row per
 * target table (its normalized, schema-qualified name); a run locks that row
 * inside its transaction, as it locks its job's row of dwload_state, so the
 * lock dies with the run's session.  Before that, a committed mark names the
 * run (job, since, host, pid), so a run that finds the row locked can say by
 * whom.  On SQLite the database's write lock already admits one writer. */
#ifndef DWL_TABLE_LOCK_H
#define DWL_TABLE_LOCK_H

#include "err.h"
#include "target.h"
#include "ts.h"

#define DWL_LOCK_TABLE "dwload_lock"

/* Creates the lock table when missing (autocommit, idempotent). */
int table_lock_ensure(target *t, dwl_error *err);
/* Before the job's lock (autocommit): the table's row exists and names this
 * run.  Another job writing the table: exit 3 naming the table and it. */
int table_lock_mark(target *t, const char *job, const dwl_ts *started, dwl_error *err);
/* Inside the run's transaction, after the job's lock: locks the table's row
 * (exit 3 as above when another run holds it). */
int table_lock_take(target *t, const char *job, dwl_error *err);
/* Inside the transaction, before the commit: the mark is cleared with it. */
int table_lock_release(target *t, dwl_error *err);
/* After a rollback: clears this run's mark (best effort). */
void table_lock_abandon(target *t);

#endif
