/* Deletes by absence (load.deletes: absent) in the memory engine: the
 * live keys the source did not deliver are marked once the source is
 * read (with load.partition, only those of the partitions it delivered
 * rows of stay marked), and the current rows of the target, read again, are deleted
 * through the sink: expired at the run's clock, closed by a tombstone, or
 * (upsert) removed.  Deletes by a column are rows of the walk
 * (scd_walk.c). */
#include "scd_impl.h"

#include "target.h"

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
  scd_engine *e;
  rowset *doomed;
} doomed_ctx;

static int on_doomed(void *ud, const dwl_value *row, const dwl_ts *vf, int deleted, dwl_error *err)
{
  doomed_ctx *c = ud;
  (void)deleted;
  if (!scd_partition_judged(c->e, row) || !scd_marked(c->e, row))
    return 0;
  rs_row *d = rowset_add(c->doomed, row, 0);
  if (!d)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (vf)
    d->lmd = *vf;  /* the current version's valid_from (scd2) */
  return 0;
}

int scd_collect_doomed(scd_engine *e, target *t, rowset *doomed, dwl_error *err)
{
  doomed_ctx c = {e, doomed};
  rowset_init(doomed, t->nsrc);
  return target_scan(t, NULL, 0, 1, on_doomed, &c, err);
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

int scd_delete_absent(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const scd_sink *sink,
                      scd_counts *counts, dwl_error *err)
{
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  if (!m || !(m->flags & KM_DELETE))
    return 0;
  m->flags &= (uint8_t)~(KM_DELETE | KM_LIVE);
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
