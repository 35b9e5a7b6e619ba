/* Deletes by absence (load.deletes: absent) in the memory engine: the
 * live keys the source did not deliver are marked once the source is
 * read (with load.partition, only those of the partitions it delivered
 * rows of stay marked), and the current rows of the target, read again, are deleted
 * through the sink: expired at the run's clock, closed by a tombstone, or
 * (upsert) removed.  Deletes by a column are rows of the walk
 * (scd_walk.c); a truncate row (truncate_values) becomes a delete row of
 * each key of the delta and marks the table's other live keys, deleted
 * here at the truncate's lmd. */
#include "scd_impl.h"

#include "target.h"

#include <stdlib.h>
#include <string.h>

size_t scd_mark_absent(scd_engine *e)
{
  km_entry *m;
  size_t n = 0;
  for (size_t it = 0; (m = keymap_next(&e->km, &it));) {
    if ((m->flags & KM_LIVE) && !(m->flags & KM_SEEN)) {
      m->flags |= KM_DELETE;
      n++;
    }
  }
  e->ndelete = n;
  return n;
}

int scd_marked(scd_engine *e, const dwl_value *row)
{
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  return m && (m->flags & KM_DELETE);
}

/* The second pass over the current versions, only for keys the source no
 * longer has: their full rows are needed for tombstones and messages, and
 * the first pass kept only fingerprints. */
typedef struct doomed_ctx {
  scd_doomed_fn fn;
  void *ud;
} doomed_ctx;

static int on_doomed(void *ud, const dwl_value *row, const dwl_ts *vf, int deleted, dwl_error *err)
{
  doomed_ctx *c = ud;
  (void)deleted;
  return c->fn(c->ud, row, vf, err);
}

int scd_each_current(scd_engine *e, target *t, scd_doomed_fn fn, void *ud, dwl_error *err)
{
  doomed_ctx c = {fn, ud};
  /* Tombstones with sequence surrogate keys are numbered in this order:
   * that of the versions they follow, as pushdown numbers them
   * (pushdown_absent.c), not the order a scan happens to return. */
  if (e->spec->delete_style == DELSTYLE_TOMBSTONE && e->spec->sk_strategy == SK_SEQUENCE)
    return target_scan_by_sk(t, on_doomed, &c, err);
  return target_scan(t, NULL, 0, 1, on_doomed, &c, err);
}

typedef struct hold_ctx {
  scd_engine *e;
  rowset *doomed;
} hold_ctx;

static int hold_doomed(void *ud, const dwl_value *row, const dwl_ts *vf, dwl_error *err)
{
  hold_ctx *h = ud;
  if (!scd_partition_judged(h->e, row) || !scd_marked(h->e, row))
    return 0;
  rs_row *d = rowset_add(h->doomed, row, 0);
  if (!d)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (vf)
    d->lmd = *vf;  /* the current version's valid_from (scd2) */
  return 0;
}

int scd_collect_doomed(scd_engine *e, target *t, rowset *doomed, dwl_error *err)
{
  rowset_init(doomed, t->nsrc);
  hold_ctx h = {e, doomed};
  return scd_each_current(e, t, hold_doomed, &h, err);
}

int scd_partition_judged(scd_engine *e, const dwl_value *row)
{
  if (e->cols.npart == 0)
    return 1;
  km_entry *p = keymap_get(&e->parts, fp_tuple(row, e->cols.part, e->cols.npart));
  if (p && (p->flags & KM_SEEN))
    return 1;
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  if (m && (m->flags & KM_DELETE)) {
    m->flags &= (uint8_t)~KM_DELETE;
    e->ndelete--;
  }
  return 0;
}

long long scd_partition_live(scd_engine *e)
{
  km_entry *p;
  long long n = 0;
  for (size_t it = 0; (p = keymap_next(&e->parts, &it));)
    if (p->flags & KM_SEEN)
      n += p->valid_from;
  return n;
}

/* The first truncate after `after` (microseconds), or NULL. */
static const struct scd_trunc *trunc_after(const scd_engine *e, int64_t after)
{
  for (size_t i = 0; i < e->ntrunc; i++)
    if (e->truncs[i].lmd.us > after)
      return &e->truncs[i];
  return NULL;
}

/* One truncate's delete row for the key of `like` (its values, the delete
 * column holding the truncate value). */
static int add_trunc_row(scd_engine *e, size_t like, const struct scd_trunc *t, dwl_value *tmp, dwl_error *err)
{
  memcpy(tmp, e->delta.rows[like].vals, e->ncols * sizeof *tmp);
  tmp[e->cols.del] = (dwl_value){.data = t->value, .len = strlen(t->value)};
  rs_row *r = rowset_add(&e->delta, tmp, t->origin);
  if (!r)
    return err_set(err, DWL_EXIT_FAILED, "out of memory holding the delta (%zu rows)", e->delta.n);
  r->key = fp_tuple(r->vals, e->cols.key, e->cols.nkey);
  r->fp2 = fp_tuple(r->vals, e->cols.t2, e->cols.nt2);
  r->fp1 = fp_tuple(r->vals, e->cols.t1, e->cols.nt1);
  r->lmd = t->lmd;
  return 0;
}

int scd_truncate_delta(scd_engine *e, dwl_error *err)
{
  size_t n = e->delta.n;
  size_t *idx = malloc((n ? n : 1) * sizeof *idx);
  dwl_value *tmp = malloc((e->ncols ? e->ncols : 1) * sizeof *tmp);
  int rc = idx && tmp ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  if (rc == 0)
    scd_sort_index(&e->delta, idx, n);
  /* (indexes, not row pointers: adding rows may move the array) */
  for (size_t g = 0; rc == 0 && g < n;) {
    size_t end = g + 1;
    while (end < n && fp_eq(e->delta.rows[idx[end]].key, e->delta.rows[idx[g]].key))
      end++;
    km_entry *m = keymap_get(&e->km, e->delta.rows[idx[g]].key);
    int live = m && (m->flags & KM_LIVE);
    if (m)
      m->flags |= KM_WALKED;
    /* A truncate before the stored version, or before the first row of a
     * key the table has no live version of, finds nothing of it to delete. */
    int64_t from = live ? m->valid_from : e->delta.rows[idx[g]].lmd.us;
    size_t prev = g;
    for (size_t t = 0; rc == 0 && t < e->ntrunc; t++) {
      if (e->truncs[t].lmd.us <= from)
        continue;
      while (prev + 1 < end && e->delta.rows[idx[prev + 1]].lmd.us < e->truncs[t].lmd.us)
        prev++;
      rc = add_trunc_row(e, idx[prev], &e->truncs[t], tmp, err);
    }
    g = end;
  }
  free(idx);
  free(tmp);
  return rc;
}

long long scd_truncate_rest(scd_engine *e)
{
  long long reached = 0;
  km_entry *m;
  for (size_t it = 0; (m = keymap_next(&e->km, &it));) {
    if (!(m->flags & KM_LIVE) || !trunc_after(e, m->valid_from))
      continue;
    reached++;
    if (!(m->flags & KM_WALKED)) {
      m->flags |= KM_DELETE;
      e->ndelete++;
    }
  }
  return reached;
}

long long scd_truncate(scd_engine *e, dwl_error *err)
{
  return scd_truncate_delta(e, err) != 0 ? -1 : scd_truncate_rest(e);
}

void scd_mark_walked(scd_engine *e, fp128 key)
{
  km_entry *m = keymap_get(&e->km, key);
  if (m)
    m->flags |= KM_WALKED;
}

int scd_delete_absent(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const scd_sink *sink,
                      scd_counts *counts, dwl_error *err)
{
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  if (!m || !(m->flags & KM_DELETE))
    return 0;
  m->flags &= (uint8_t)~(KM_DELETE | KM_LIVE);
  return scd_delete_row(e, row, valid_from, sink, counts, err);
}

int scd_delete_row(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const scd_sink *sink,
                   scd_counts *counts, dwl_error *err)
{
  counts->deleted++;
  if (e->spec->mode == MODE_UPSERT)
    return sink->remove(sink->ud, row, err) != 0 ? -1 : 1;
  int tomb = e->spec->delete_style == DELSTYLE_TOMBSTONE;
  /* Stamped with the run's clock, but never at or before the current
   * version's start (a source clock ahead of ours, an lmd with a fraction
   * in this second): then the least step after it that the close rule can
   * end it at, so no interval is negative, and a tombstone never starts
   * when the version it ends did (which keeps hash surrogate keys apart). */
  dwl_ts at = e->run_ts;
  const struct scd_trunc *t = e->ntrunc ? trunc_after(e, valid_from ? valid_from->us : INT64_MIN) : NULL;
  if (t)
    at = t->lmd;  /* a truncate's deletion: at its row's lmd */
  int64_t step = close_gap(e->spec) > e->tick_us ? close_gap(e->spec) : e->tick_us;
  if (valid_from && at.us < valid_from->us + step)
    at.us = valid_from->us + step;
  dwl_ts vt = scd_close_at(e->spec, at);
  if (sink->expire(sink->ud, row, valid_from, &vt, !tomb, err) != 0)
    return -1;
  if (tomb) {
    scd_version v = {
      .vals = row, .t1vals = row, .valid_from = at, .open = 1, .current = 1, .deleted = 1, .tombstone = 1};
    if (sink->insert(sink->ud, &v, err) != 0)
      return -1;
    counts->inserted++;
  }
  return 1;
}
