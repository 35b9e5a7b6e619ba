/* The change engine: computes, in memory, what a run must write.
 *
 * It is fed the dimension's current versions (only fingerprints, kept in a
 * keymap) and the source rows (the delta, kept in a rowset), then walks
 * each business key's rows in lmd order and emits operations through an
 * scd_sink: insert a version, expire a key's current version, overwrite
 * type 1 columns, and for upsert update or remove a row.  Keys with rows
 * older than their stored history (late rows) get their full history fed
 * in (scd_add_history) and are rebuilt: reshape, drop and insert versions.
 * It knows nothing of SQL; the target writer turns the operations into
 * statements. */
#ifndef DWL_SCD_H
#define DWL_SCD_H

#include <stddef.h>
#include <sys/types.h>

#include "dwload/plugin.h"
#include "err.h"
#include "keymap.h"
#include "rowset.h"
#include "spec.h"
#include "ts.h"
#include "versions.h"  /* scd_close_at, the close rule */

/* Column index sets into the source row. */
typedef struct scd_cols {
  size_t *key, nkey;
  size_t *t2, nt2;       /* scd2: type 2; upsert: every non-key column */
  size_t *t1, nt1;
  size_t *part, npart;   /* load.partition */
  ssize_t lmd;           /* -1: none */
  ssize_t del;           /* delete-flag column, -1: none */
} scd_cols;

/* 1 when a part of row's key is NULL: equality joins and key lists miss
 * such a key, which needs a NULL-safe statement of its own. */
static inline int scd_null_key(const scd_cols *c, const dwl_value *row)
{
  for (size_t i = 0; i < c->nkey; i++)
    if (row[c->key[i]].is_null)
      return 1;
  return 0;
}

/* One version to insert. */
typedef struct scd_version {
  const dwl_value *vals;    /* source-layout row that started the version */
  const dwl_value *t1vals;  /* source-layout row whose type 1 values it carries */
  dwl_ts valid_from;
  int open;                 /* 1: valid_to is the open end */
  dwl_ts valid_to;          /* when !open, already adjusted by the close rule */
  int current;
  int deleted;
  int tombstone;            /* a tombstone version (delete_style: tombstone) */
} scd_version;

typedef struct scd_sink {
  void *ud;
  int (*insert)(void *ud, const scd_version *v, dwl_error *err);
  /* Close the current version of the key found in `keyrow` (source
   * layout), the one that started at `valid_from`. */
  int (*expire)(void *ud, const dwl_value *keyrow, const dwl_ts *valid_from, const dwl_ts *valid_to, int deleted,
                dwl_error *err);
  /* Overwrite type 1 columns from `row` on the key's current version (the
   * one that started at `valid_from`), or on every version when
   * all_versions (valid_from is then NULL). */
  int (*type1)(void *ud, const dwl_value *row, const dwl_ts *valid_from, int all_versions, dwl_error *err);
  /* upsert: overwrite every non-key column of the key's row. */
  int (*update)(void *ud, const dwl_value *row, dwl_error *err);
  /* upsert: remove the key's row. */
  int (*remove)(void *ud, const dwl_value *keyrow, dwl_error *err);
  /* History repair: rewrite the version of the key that started at
   * `old_vf` (with deleted flag `old_deleted`) as `v`: its valid_from,
   * valid_to, flags and every non-key value.  A sequence surrogate key is
   * kept; a hash one follows the new valid_from. */
  int (*reshape)(void *ud, const dwl_value *keyrow, const dwl_ts *old_vf, int old_deleted, const scd_version *v,
                 dwl_error *err);
  /* History repair: remove the version of the key that started at `vf`. */
  int (*drop)(void *ud, const dwl_value *keyrow, const dwl_ts *vf, int deleted, dwl_error *err);
} scd_sink;

typedef struct scd_counts {
  long long inserted, expired, updated, deleted, unchanged;
  long long late_repaired, late_rejected, late_ignored;
  long long revived;  /* of the inserted: rows not past the checkpoint (pushdown), not skipped after all */
} scd_counts;

typedef struct scd_span {
  size_t first, n;
} scd_span;

/* A stored version of a key with late rows, beside its row in `hist`. */
typedef struct scd_hver {
  int64_t vt;     /* valid_to as stored (when !open) */
  uint8_t open;
  uint8_t deleted;
} scd_hver;

typedef struct scd_engine {
  const dwl_spec *spec;
  scd_cols cols;
  size_t ncols;
  const dwl_column *srccols;
  keymap km;
  rowset delta;
  dwl_ts run_ts;
  int64_t tick_us;          /* the least step of time the table holds: 1 us, a day for dates */
  int seq;                  /* the lmd is an integer sequence (its messages print the integer) */
  /* The stored checkpoint, NULL when none: with a composite lmd a row at
   * its key's current version's start replaces it only when past this. */
  const dwl_ts *cp;
  size_t ndelete;           /* keys marked for deletion by absence */
  size_t nlive;             /* current versions read that are not deleted: load.max_deletes's base */
  /* load.partition: one entry per partition (fingerprint of its values),
   * of the table's live keys or the source's rows; KM_SEEN: the source
   * delivered a row of it; valid_from counts its live keys (not a time). */
  keymap parts;
  /* load.deletes.truncate_values: the truncate rows past the checkpoint,
   * by lmd, in source order at one lmd (they join no key's rows:
   * scd_truncate; pushdown's truncate_rows reads them too). */
  struct scd_trunc {
    dwl_ts lmd;
    uint64_t origin;
    const char *value;  /* the spec's truncate value it holds */
  } *truncs;
  size_t ntrunc;
  const char *origin_name;  /* "feed.csv" or "source", for messages */
  /* Keys with rows older than their history (late rows) wait for it. */
  rs_row **sorted;          /* the delta by key and lmd, kept while keys wait */
  scd_span *deferred;       /* their groups in `sorted` */
  size_t ndeferred;
  rowset latekeys;          /* one row per such key, to look their history up */
  rowset hist;              /* their stored versions (lmd = valid_from) */
  scd_hver *hver;           /* parallel to hist */
  size_t hver_cap;
  /* load.late: reject with load.max_rejects above 0: late rows go to the
   * run's rejects through this (0: set aside; -1: one too many, err set).
   * NULL: a rejected late row fails the run. */
  int (*reject)(void *ud, const rs_row *r, const char *reason, dwl_error *err);
  void *reject_ud;
  size_t nstored;           /* columns the table holds (scd_hide) */
  /* load.ignore_null_updates (scd_fill.c): the columns a NULL leaves as
   * they were, and the current rows of keys whose delta rows have one. */
  size_t *inu_req, ninu_req; /* as listed */
  size_t *inu, ninu;         /* in effect: tracked, not the lmd nor the delete flag */
  int inu_ready;
  fp128 *want;               /* keys whose current row is kept, sorted; NULL: every key */
  size_t nwant;
  int want_ready;
  rowset cur;                /* those current rows */
  int fill_later;            /* none kept until scd_reset (scd_fill_later) */
} scd_engine;

/* Resolves the spec's column names against the source columns.  Unknown
 * names fail with exit code 2 and the spec position. */
int scd_init(scd_engine *e, const dwl_spec *spec, const dwl_column *cols, size_t ncols, dwl_ts run_ts,
             dwl_error *err);
/* Columns from nstored on are the engine's only (columns.exclude of the
 * lmd or deletes column): no tracked set compares them.  After scd_init. */
void scd_hide(scd_engine *e, size_t nstored);
void scd_free(scd_engine *e);
/* Forgets the rows and current versions registered (the delta, the key
 * map, late keys' histories), keeping the columns, load.partition's map
 * of partitions and the truncate rows, which span every key: for the
 * next partition of a spilled delta (run_spill.c, run_absent.c). */
int scd_reset(scd_engine *e, dwl_error *err);
/* Forgets the current versions registered (the key map), keeping the
 * delta: a partition of a partitioned key map reads its keys' versions
 * again (cmd/run_absent.c). */
int scd_forget_current(scd_engine *e, dwl_error *err);
/* load.ignore_null_updates: keeps no current row's values until
 * scd_reset, and drops those kept: a key map partitioned with the delta
 * (cmd/run_absent.c) reads every current version before the source, and
 * each partition reads its keys' values again, once its rows say which. */
void scd_fill_later(scd_engine *e);

/* Resolves `name` among the source columns (exact match first, then
 * case-insensitive); -1 when absent. */
ssize_t scd_col_index(const dwl_column *cols, size_t ncols, const char *name);

/* A column the table gets in this run (schema.new_columns: add), source
 * index `col`: the stored versions hold NULL there, so for this run it is
 * compared as a type 1 column of the current version: a key whose other
 * values are unchanged takes the value in place (no new version), a key
 * that changed opens its version with it, closed versions keep NULL.
 * Later runs track it as the job's rules say.  Before any row. */
int scd_fill_column(scd_engine *e, size_t col, dwl_error *err);

/* Registers one current version read from the target.  `row` is in source
 * layout (only key, type 1 and type 2 positions are read). */
int scd_add_current(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, int tombstone, dwl_error *err);

/* Registers the last deleted version of a key that has no current version
 * (delete_style: expire), so a revival does not overlap its history.
 * `valid_to` is that version's valid_to as stored. */
int scd_add_gone(scd_engine *e, const dwl_value *row, const dwl_ts *valid_to, dwl_error *err);

/* Registers one source row.  Rows not past the checkpoint only mark their
 * key as present (for deletes by absence); the others join the delta.
 * With deletes: absent a row of a key without a live current version joins
 * it all the same (presence revives): returns 1 for such a row. */
/* deletes: absent: a rejected row's key (its fingerprint) was delivered,
 * so it is present; unlike scd_add_source, its values never revive a
 * deleted key.  Returns
 * 1 when, with deletes: absent, the key has no live current version: a
 * row of it that scd_add_source took would revive it (a spilled run
 * decides so which rows not past the checkpoint it spills). */
int scd_mark_present(scd_engine *e, fp128 key);
/* load.partition: `row`'s partition is one the source delivered rows of
 * (scd_add_source marks it; a spilled run marks its rows' so). */
int scd_mark_partition(scd_engine *e, const dwl_value *row, dwl_error *err);

int scd_add_source(scd_engine *e, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past_checkpoint,
                   dwl_error *err);

/* load.deletes.truncate_values, before scd_apply: each key of the delta
 * gets a delete row at every truncate's lmd later than its stored version
 * (the walk applies rows before and after it in lmd order); the table's
 * live keys without rows are marked for deletion at the first truncate
 * after their version's start (deleted by scd_delete_absent).  Returns
 * how many of the table's live keys a truncate reaches (the guard's
 * count), -1 on error. */
long long scd_truncate(scd_engine *e, dwl_error *err);
/* scd_truncate's two halves, for a spilled delta (cmd/run_spill.c): the
 * delete rows of the delta's keys (each partition's); then, over every
 * current version, the live keys a truncate reaches counted and those
 * without rows (not marked by scd_mark_walked or the first half) marked
 * for deletion.  0 / the count, -1 on error. */
int scd_truncate_delta(scd_engine *e, dwl_error *err);
long long scd_truncate_rest(scd_engine *e);
/* truncate_values in a spilled run: the key has rows in the delta
 * (spilled), so its walk, not the deletion of keys without rows, applies
 * the truncates to it. */
void scd_mark_walked(scd_engine *e, fp128 key);

/* Walks the delta and emits operations.  Keys with rows dated before
 * their latest stored version (or deletion) wait: see scd_repair. */
int scd_apply(scd_engine *e, const scd_sink *sink, scd_counts *counts, dwl_error *err);

/* Keys that wait for their history; e->latekeys holds one row of each. */
size_t scd_deferred(const scd_engine *e);

/* Registers one stored version (every column, source layout) of a key that
 * waits; versions of other keys are ignored.  `valid_to` NULL: open. */
int scd_add_history(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const dwl_ts *valid_to,
                    int deleted, dwl_error *err);

/* Handles the keys that wait, after their history is registered, by
 * load.late: repair splices the rows into the history (reshape, drop and
 * insert versions), ignore skips the late rows, reject fails the run.  A
 * row equal to the stored version covering its lmd is a no-op, whatever
 * load.late says. */
int scd_repair(scd_engine *e, const scd_sink *sink, scd_counts *counts, dwl_error *err);

/* Marks live keys the source did not deliver (deletes: absent) and returns
 * how many there are. */
size_t scd_mark_absent(scd_engine *e);

/* For a current row of the target (source layout, every column): if its key
 * is marked for deletion, emits the delete (expire, tombstone, or upsert
 * remove) and returns 1; else 0; -1 on error. */
int scd_delete_absent(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const scd_sink *sink,
                      scd_counts *counts, dwl_error *err);
/* The same for a row already known to be of a key to delete, without the
 * key map (cmd/run_absent.c keeps only the keys): emits the delete and
 * returns 1, or -1. */
int scd_delete_row(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const scd_sink *sink,
                   scd_counts *counts, dwl_error *err);

/* Is the key of `row` (source layout) marked for deletion by absence? */
int scd_marked(scd_engine *e, const dwl_value *row);

/* Reads the current rows of the target again and keeps in `doomed` those
 * of keys marked for deletion (of the partitions judged), with each
 * version's valid_from as lmd. */
struct target;
int scd_collect_doomed(scd_engine *e, struct target *t, rowset *doomed, dwl_error *err);
/* Every current row of the target, in the order scd_collect_doomed keeps
 * its rows in, to fn (values valid during the call only; valid_from NULL
 * when the version has none): for a caller that knows the keys to delete
 * by other means (cmd/run_absent.c). */
typedef int (*scd_doomed_fn)(void *ud, const dwl_value *row, const dwl_ts *valid_from, dwl_error *err);
int scd_each_current(scd_engine *e, struct target *t, scd_doomed_fn fn, void *ud, dwl_error *err);

/* load.partition: is `row`'s partition one the source delivered rows of
 * (always 1 without load.partition)?  If not, its key is no longer marked
 * for deletion: absence judges only the partitions an extract holds. */
int scd_partition_judged(scd_engine *e, const dwl_value *row);
/* load.partition: the live keys read of the partitions the source delivered
 * (load.max_deletes's base). */
long long scd_partition_live(scd_engine *e);

/* Is `row` (source layout) a delete by the operation column? */
int scd_is_delete(const scd_engine *e, const dwl_value *row);
/* load.ignore_null_updates: the columns a NULL leaves unchanged (type 2
 * and type 1, neither the lmd nor the delete flag; with a list, only
 * those), into out (room for nt2 + nt1); their number. */
size_t scd_fill_columns(const scd_engine *e, size_t *out);
/* Is it a truncate row (load.deletes.truncate_values)? */
int scd_is_truncate(const scd_engine *e, const dwl_value *row);

/* "(id='A1', region=NULL)": the key of `row` (source layout), for messages. */
void scd_describe_key(const scd_engine *e, const dwl_value *row, char *out, size_t n);
/* load.late: reject of a late row the pushdown engine set apart (row in
 * source layout, e->ncols values), with the memory engine's reason and
 * counts: before `end`, where its key's stored history ends. */
int scd_reject_late(const scd_engine *e, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int64_t end,
                    scd_counts *counts, dwl_error *err);

#endif
