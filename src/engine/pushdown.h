/* The pushdown engine (load.engine: pushdown): the delta is staged into a
 * temporary table of the warehouse and the changes are computed there with
 * set-based SQL (window functions over the staged rows joined with the
 * dimension's current versions), then applied with the dialect's
 * statements (a MERGE where the dialect has one; its UPDATE from a stage,
 * DELETE by join) and INSERT ... SELECT.  Nothing of the dimension is held
 * in memory.  Its results are the memory engine's (scd.c): both follow the
 * version rules of versions.c, and what it cannot compute the same way is
 * refused when the spec is checked (engine_pushdown_refusal, rules.c). */
#ifndef DWL_PUSHDOWN_H
#define DWL_PUSHDOWN_H

#include <stdint.h>

#include "dwload/plugin.h"
#include "err.h"
#include "spec.h"
#include "ts.h"

struct target;
struct writer;
struct scd_engine;
struct scd_counts;
typedef struct pushdown pushdown;

/* Creates the staging table.  `e` supplies the resolved column sets,
 * takes the run's truncate rows (pushdown_add) and must outlive the
 * pushdown. */
int pushdown_open(struct target *t, struct writer *w, struct scd_engine *e, pushdown **out, dwl_error *err);
void pushdown_free(pushdown *p);

/* Stages one source row past the checkpoint (normalized, source layout);
 * a truncate row goes to the engine's truncates instead. */
int pushdown_add(pushdown *p, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err);

/* Notes the key of a source row not past the checkpoint (it is still
 * present for deletes: absent); upsert with deletes: absent stages the
 * row too, to bring back a key the table no longer has. */
int pushdown_seen(pushdown *p, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err);

/* Notes the key of a rejected row: present, but its values revive nothing. */
int pushdown_seen_key(pushdown *p, const dwl_value *row, dwl_error *err);

/* deletes: absent, after the source is read: the table's current keys and
 * how many of them the source did not deliver (for the guards, guard.h). */
int pushdown_count_absent(pushdown *p, long long *current, long long *absent, dwl_error *err);
/* load.deletes.truncate_values (scd2): the live current versions, and of
 * them those a truncate row of this run reaches (the guard's count);
 * 0 and 0 without truncate rows. */
int pushdown_count_truncate(pushdown *p, long long *current, long long *reached, dwl_error *err);

/* scd2 with load.late: repair (where pushdown_take_late applies: not with
 * deletes: absent, truncate_values or ignore_null_updates): before
 * pushdown_apply, takes every staged row of the keys with a late row out
 * of the delta and hands each, in source order, to fn (normalized, source
 * layout, as pushdown_add took it), for the memory engine to repair their
 * history; *n: how many.  pushdown_apply then leaves those keys alone. */
typedef int (*pushdown_row_fn)(void *ud, const dwl_value *row, uint64_t origin, const dwl_ts *lmd,
                               dwl_error *err);
int pushdown_take_late(pushdown *p, pushdown_row_fn fn, void *ud, long long *n, dwl_error *err);

/* Computes the changes in the warehouse and applies them (in plan mode:
 * computes them and prints the statements that would apply them); the
 * keys counted absent are deleted only when delete_absent.  On failure
 * `counts` holds only what a failed run reports (rejected late rows).  In
 * PUSHDOWN_APPLY_STEPS steps, each counted into the progress line. */
#define PUSHDOWN_APPLY_STEPS 7
int pushdown_apply(pushdown *p, int delete_absent, struct scd_counts *counts, dwl_error *err);

#endif
