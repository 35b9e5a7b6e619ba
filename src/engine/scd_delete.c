/* Deletes by absence (load.deletes: absent) in the memory engine: the
 * live keys the source did not deliver are marked once the source is
 * read, and the current rows of the target, read again, are deleted
 * through the sink: expired at the run's clock, closed by a tombstone, or
 * (upsert) removed.  Deletes by a column are rows of the walk
 * (scd_walk.c). */
#include "scd_impl.h"

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
