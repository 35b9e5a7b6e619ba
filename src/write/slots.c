/* Per-key statements (writer_impl.h): one prepared UPDATE or DELETE per
 * kind of operation, executed once per key, for the keys with a NULL part
 * (the staged writes join on equality, which a NULL never meets: such a
 * key needs a NULL-safe statement of its own).  Also what the history
 * repair's reshapes and drops touch, which the stages share. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "writer_impl.h"

/* ---- per-key statements (keys with a NULL part) ------------------------------ */

/* Adds " WHERE k1 IS ? AND k2 IS ?" and the key columns' types. */
static void where_key(const writer *w, dwl_buf *b, SQLSMALLINT *types, size_t *nt)
{
  const target *t = w->t;
  buf_adds(b, " WHERE ");
  for (size_t i = 0; i < w->cols->nkey; i++) {
    size_t tc = tcol_of(w, w->cols->key[i]);
    if (i)
      buf_adds(b, " AND ");
    buf_printf(b, "%s%s", t->cols[tc].q, t->d->null_safe_eq);
    types[(*nt)++] = col_ptype(w, tc);
  }
}

/* SET list "a = ?, b = ?" over source columns idx[], then the run id
 * column's (sink_set binds the values in that order). */
static void set_list(const writer *w, dwl_buf *b, const size_t *idx, size_t n, SQLSMALLINT *types, size_t *nt)
{
  for (size_t i = 0; i < n; i++) {
    size_t tc = tcol_of(w, idx[i]);
    buf_printf(b, "%s%s = ?", i ? ", " : "", w->t->cols[tc].q);
    types[(*nt)++] = col_ptype(w, tc);
  }
  if (has_run_id(w)) {
    size_t tc = (size_t)w->t->ix[TC_RUN_ID];
    buf_printf(b, "%s%s = ?", n ? ", " : "", w->t->cols[tc].q);
    types[(*nt)++] = col_ptype(w, tc);
  }
}

static void cur_param_type(const writer *w, SQLSMALLINT *types, size_t *nt)
{
  if (!w->t->spec->current && w->t->open_end[0])
    types[(*nt)++] = col_ptype(w, (size_t)w->t->ix[TC_VALID_TO]);
}

/* ---- history repair: what reshape and drop touch ------------------------- */


/* The bookkeeping column an SC_* value belongs to. */
int stage_role(long what)
{
  switch (what) {
  case SC_VF:
  case SC_OLDVF: return TC_VALID_FROM;
  case SC_VT: return TC_VALID_TO;
  case SC_CUR: return TC_CURRENT;
  case SC_SK: return TC_SK;
  case SC_RUN: return TC_RUN_ID;
  default: return TC_DELETED;
  }
}

size_t what_tcol(const writer *w, long what)
{
  return what < 0 ? (size_t)w->t->ix[stage_role(what)] : tcol_of(w, (size_t)what);
}

/* What a reshape sets (SC_* values or source indexes): the bookkeeping
 * columns, every non-key source column, and a hash surrogate key, which
 * follows valid_from (a sequence one stays). */
size_t reshape_set(const writer *w, long *what)
{
  const target *t = w->t;
  size_t n = 0;
  what[n++] = SC_VF;
  what[n++] = SC_VT;
  if (t->ix[TC_CURRENT] >= 0)
    what[n++] = SC_CUR;
  if (t->ix[TC_DELETED] >= 0)
    what[n++] = SC_DEL;
  for (size_t i = 0; i < t->nsrc; i++) {
    int key = 0;
    for (size_t k = 0; k < w->cols->nkey; k++)
      key |= w->cols->key[k] == i;
    if (!key && (ssize_t)tcol_of(w, i) != t->ix[TC_VALID_FROM])
      what[n++] = (long)i;
  }
  if (t->ix[TC_SK] >= 0 && t->spec->sk_strategy == SK_HASH)
    what[n++] = SC_SK;
  return n;
}

/* Per-key statements: a version is named by key, valid_from and (where
 * there is one) its deleted flag, as a tombstone and a revival may share
 * a valid_from. */
static void history_slots(writer *w)
{
  const target *t = w->t;
  if (t->spec->mode != MODE_SCD2) {
    w->slot_sql[SLOT_DROP] = strdup("-- (scd2 only)");
    w->slot_sql[SLOT_RESHAPE] = strdup("-- (scd2 only)");
    return;
  }
  long *what = w->rs_what = calloc(t->ncols + 4, sizeof *what);
  if (!what)
    return;
  w->rs_n = reshape_set(w, what);
  for (int slot = SLOT_DROP; slot <= SLOT_RESHAPE; slot++) {
    SQLSMALLINT *ty = w->slot_types[slot];
    size_t nt = 0;
    dwl_buf b;
    buf_init(&b, 0);
    if (slot == SLOT_DROP) {
      buf_printf(&b, "DELETE FROM %s", t->table_q);
    } else {
      size_t n = w->rs_n;
      buf_printf(&b, "UPDATE %s SET ", t->table_q);
      for (size_t i = 0; i < n; i++) {
        buf_printf(&b, "%s%s = ?", i ? ", " : "", t->cols[what_tcol(w, what[i])].q);
        ty[nt++] = col_ptype(w, what_tcol(w, what[i]));
      }
    }
    where_key(w, &b, ty, &nt);
    buf_printf(&b, " AND %s = ?", t->cols[t->ix[TC_VALID_FROM]].q);
    ty[nt++] = col_ptype(w, (size_t)t->ix[TC_VALID_FROM]);
    if (t->ix[TC_DELETED] >= 0) {
      buf_printf(&b, " AND %s = ?", t->cols[t->ix[TC_DELETED]].q);
      ty[nt++] = col_ptype(w, (size_t)t->ix[TC_DELETED]);
    }
    w->slot_sql[slot] = buf_steal(&b);
  }
}

int build_slots(writer *w, dwl_error *err)
{
  const target *t = w->t;
  const scd_cols *c = w->cols;
  size_t cap = t->ncols + c->nkey + 4;
  for (int s = 0; s < NSLOTS; s++) {
    w->slot_types[s] = calloc(cap, sizeof(SQLSMALLINT));
    if (!w->slot_types[s])
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  dwl_buf b;
  size_t nt;
  SQLSMALLINT *ty;

  /* expire: close the key's current version */
  buf_init(&b, 0);
  nt = 0;
  ty = w->slot_types[SLOT_EXPIRE];
  if (t->spec->mode == MODE_SCD2) {
    buf_printf(&b, "UPDATE %s SET %s = ?", t->table_q, t->cols[t->ix[TC_VALID_TO]].q);
    ty[nt++] = col_ptype(w, (size_t)t->ix[TC_VALID_TO]);
    if (t->ix[TC_CURRENT] >= 0)
      buf_printf(&b, ", %s = %s", t->cols[t->ix[TC_CURRENT]].q, t->d->false_lit);
    if (t->ix[TC_DELETED] >= 0) {
      buf_printf(&b, ", %s = ?", t->cols[t->ix[TC_DELETED]].q);
      ty[nt++] = col_ptype(w, (size_t)t->ix[TC_DELETED]);
    }
    where_key(w, &b, ty, &nt);
    buf_printf(&b, " AND %s", t->cur_pred);
    cur_param_type(w, ty, &nt);
  }
  w->slot_sql[SLOT_EXPIRE] = buf_steal(&b);

  for (int all = 0; all <= 1; all++) {
    int s = all ? SLOT_T1_ALL : SLOT_T1_CUR;
    buf_init(&b, 0);
    nt = 0;
    ty = w->slot_types[s];
    buf_printf(&b, "UPDATE %s SET ", t->table_q);
    set_list(w, &b, c->t1, c->nt1, ty, &nt);
    where_key(w, &b, ty, &nt);
    if (!all && t->spec->mode == MODE_SCD2) {
      buf_printf(&b, " AND %s", t->cur_pred);
      cur_param_type(w, ty, &nt);
    }
    w->slot_sql[s] = buf_steal(&b);
  }

  buf_init(&b, 0);
  nt = 0;
  ty = w->slot_types[SLOT_UPDATE];
  buf_printf(&b, "UPDATE %s SET ", t->table_q);
  set_list(w, &b, c->t2, c->nt2, ty, &nt);
  where_key(w, &b, ty, &nt);
  w->slot_sql[SLOT_UPDATE] = buf_steal(&b);

  buf_init(&b, 0);
  nt = 0;
  buf_printf(&b, "DELETE FROM %s", t->table_q);
  where_key(w, &b, w->slot_types[SLOT_REMOVE], &nt);
  w->slot_sql[SLOT_REMOVE] = buf_steal(&b);
  history_slots(w);
  for (int s = 0; s < NSLOTS; s++)
    if (!w->slot_sql[s])
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

int run_slot(writer *w, int slot, const dwl_value *params, size_t n, dwl_error *err)
{
  return run_sql(w, &w->slots[slot], w->slot_sql[slot], params, w->slot_types[slot], n, err);
}

