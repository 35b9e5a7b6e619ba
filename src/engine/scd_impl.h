/* What the memory engine's files share and nothing else uses: the walk
 * of one key's rows (scd_walk.c), which late-row repair (late.c) replays
 * histories through, and the helpers of the driver (scd.c).  Private to
 * src/engine/scd*.c and late.c.  Hidden from the executable's dynamic
 * symbols (dwload exports its own for plugins): these names are not part
 * of any interface. */
#ifndef DWL_SCD_IMPL_H
#define DWL_SCD_IMPL_H

#include "scd.h"
#include "versions.h"

#pragma GCC visibility push(hidden)

#define ON(e) ((e)->origin_name ? (e)->origin_name : "source")

/* The close rule, named as the engine's code has always called it. */
static inline int64_t end_instant(const dwl_spec *spec, int64_t valid_to)
{
  return ver_end_instant(spec, valid_to);
}

static inline int64_t close_gap(const dwl_spec *spec)
{
  return ver_close_gap(spec);
}

/* ---- scd.c ---------------------------------------------------------------- */

/* "(id='A1', region=NULL)" for messages; long values are cut. */
void describe_key(const scd_engine *e, const dwl_value *row, char *out, size_t n);
int is_delete_row(const scd_engine *e, const dwl_value *row);
/* Sorts idx[n] (indexes into rs) by key, then lmd, then source order. */
void scd_sort_index(const rowset *rs, size_t *idx, size_t n);
/* The instant a key's stored history ends: its current version's start,
 * or its deletion.  0 when the target has nothing of the key. */
int64_t history_end(const scd_engine *e, const km_entry *m);

/* ---- scd_fill.c: load.ignore_null_updates ---------------------------------- */

/* Keeps a key's current row when its delta rows may need its values. */
int fill_keep_current(scd_engine *e, const rs_row *key, const dwl_value *row, dwl_error *err);
/* Gives each NULL of a delta row in an ignore_null_updates column the
 * value of the key's previous row (in the batch, else its current row). */
int fill_nulls(scd_engine *e, dwl_error *err);
void fill_free(scd_engine *e);

/* ---- late.c ------------------------------------------------------------------- */

/* load.late: reject of row r, older than `end` (the key's history end, or
 * upsert's stored lmd): to the rejects (0) or the run fails (-1). */
int late_reject(const scd_engine *e, const rs_row *r, int64_t end, scd_counts *counts, dwl_error *err);

/* ---- scd_walk.c: one key's rows ----------------------------------------------- */

/* H_DB_REPL: the stored current version, replaced in place by a row less
 * than the close step after its start (written by one reshape, as a
 * pending version is by one insert). */
enum head_kind { H_NONE, H_DB_LIVE, H_DB_TOMB, H_PEND, H_PEND_TOMB, H_DB_REPL };

typedef struct walk {
  scd_engine *e;
  const scd_sink *sink;
  scd_counts *counts;
  int kind;
  fp128 fp2, fp1;
  dwl_ts vf;
  int64_t floor;         /* after an expire-style deletion: its instant */
  const rs_row *start;   /* pending version: the row that started it */
  const rs_row *t1row;   /* pending version: the row its type 1 values come from */
  const rs_row *last;    /* last non-delete row, for type1_scope: all */
  int scope_all;
  int tombstones;
  long long t1_only;     /* rows that only changed type 1 values (scope all) */
} walk;


int emit_pending(walk *w, int open, dwl_ts end, int deleted, dwl_error *err);
/* One row (del: a delete row) of the key, by the version rules. */
int walk_event(walk *w, const rs_row *r, int del, dwl_error *err);
/* Rows of one key with the same lmd: identical ones count once, others are
 * a conflict. */
int same_row(const scd_engine *e, const rs_row *a, const rs_row *b);
int conflict(const scd_engine *e, const rs_row *a, const rs_row *b, dwl_error *err);
int same_start(const scd_engine *e, const rs_row *r, dwl_error *err);
/* A composite lmd's row r at vf, the start of its key's stored current
 * version, that replaces that version (scd_walk.c). */
int scd_tie_replaces(const scd_engine *e, const rs_row *r, int64_t vf);
/* An lmd in a message: a timestamp, or the integer of a sequence. */
void scd_when(const scd_engine *e, const dwl_ts *t, char out[32]);
/* One key's rows[n] (sorted by lmd) against its current version. */
int process_scd2(scd_engine *e, rs_row *const *rows, size_t n, const scd_sink *sink, scd_counts *counts,
                 dwl_error *err);

#pragma GCC visibility pop

#endif
