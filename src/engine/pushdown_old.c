/* deletes: absent, the rows not past the checkpoint (pushdown_seen holds
 * them in a local file, with their dwl_seq): the few that may revive a key,
 * those of keys without a live version, staged into dwl_pd_old before
 * absent_revive or apply_revive reads it; the rest never reach the
 * warehouse. */
#include "pushdown_impl.h"

#include <stdlib.h>

#include "log.h"

typedef struct old_ctx {
  pushdown *p;
  long long *refs;  /* the dwl_seq of the rows to stage, ascending */
  size_t n, cap, next;
  long long staged;
} old_ctx;

static int on_ref(void *ud, const dwl_value *r, dwl_error *err)
{
  old_ctx *o = ud;
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 256;
    long long *v = realloc(o->refs, cap * sizeof *v);
    if (!v)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    o->refs = v;
    o->cap = cap;
  }
  o->refs[o->n++] = strtoll(r[0].data, NULL, 10);
  return 0;
}

/* A row from the local file: staged when it is the next one wanted (both
 * go by dwl_seq); refs NULL: every row. */
static int on_old(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  old_ctx *o = ud;
  pushdown *p = o->p;
  long long seq = strtoll(vals[p->ncols + p->nhid].data, NULL, 10);
  if (o->refs && (o->next >= o->n || o->refs[o->next] != seq))
    return 0;
  staged_row(p, vals, seq, origin, lmd);
  if (writer_stage_add(p->old, p->row, err) != 0)
    return -1;
  o->staged++;
  /* 1: the rest of the file is not wanted */
  return o->refs && ++o->next == o->n ? 1 : 0;
}

/* The rows whose key has no live version are those absent_revive and
 * apply_revive may take (they look for the same, each with its own
 * rule, in dwl_pd_old): their dwl_seq, read from dwl_pd_seen, picks them
 * out of the local file.  Into a new table, every row. */
int old_stage(pushdown *p, dwl_error *err)
{
  if (p->old_staged || !p->old || p->nold == 0)
    return 0;
  p->old_staged = 1;
  const target *t = p->t;
  old_ctx o = {p, NULL, 0, 0, 0, 0};
  int rc = 0;
  if (t->exists) {
    dwl_buf b;
    buf_init(&b, 0);
    dwl_value v;
    SQLSMALLINT ty;
    /* On a distributed table a left join: the head batches its keys for
     * the shards (join_cache_level), where NOT EXISTS is a round trip
     * per row not past the checkpoint (72,000 of them: 14 s).  Its match
     * on the key is not NULL-safe there, so only without NULL key parts
     * (a match's key column is then never NULL). */
    int join = t->remote[0] && !p->nullkeys;
    if (join)
      buf_printf(&b, "SELECT s.dwl_ref FROM dwl_pd_seen s LEFT JOIN %s d ON ", t->table_q);
    else
      buf_printf(&b, "SELECT s.dwl_ref FROM dwl_pd_seen s WHERE s.dwl_ref IS NOT NULL AND NOT EXISTS (SELECT 1 FROM %s "
                     "d WHERE ", t->table_q);
    keyeq(p, &b, "d", "s");
    buf_adds(&b, " AND ");
    size_t np = cur_bound(p, &b, "d", &v, &ty);
    live_pred(p, &b, "d");
    if (join)
      buf_printf(&b, " WHERE s.dwl_ref IS NOT NULL AND d.%s IS NULL", p->q[p->e->cols.key[0]]);
    else
      buf_adds(&b, ")");
    buf_adds(&b, " ORDER BY s.dwl_ref");
    rc = writer_stage_flush(p->seen, err) != 0 ? -1
         : each_row(p, &b, np ? &v : NULL, np ? &ty : NULL, np, on_ref, &o, err);
    buf_free(&b);
  }
  if (rc == 0 && (o.refs || !t->exists))
    rc = spill_read(&p->oldf, 0, on_old, &o, err);
  free(o.refs);
  if (rc < 0 || writer_stage_flush(p->old, err) != 0)
    return -1;
  log_msg(LOG_INFO, "pushdown: %lld of the %lld rows not past the checkpoint are of keys without a live version: "
          "staged for them", o.staged, p->nold);
  return 0;
}
