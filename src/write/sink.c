/* The engine's sink (writer.h): the change engine's operations (insert a
 * version, expire, type 1 and upsert updates, removals, and the history
 * repair's reshapes and drops) as rows of the bulk inserts, staged rows,
 * or executions of the per-key statements. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "writer_impl.h"

/* ---- the engine's sink ---------------------------------------------------------- */

static void set_text(dwl_value *v, const char *s)
{
  v->data = s;
  v->len = s ? strlen(s) : 0;
  v->is_null = s == NULL;
}

/* Fills w->row with version v in table layout; `new_sk`: a sequence
 * surrogate key takes the next number (a reshaped version keeps its own). */
static void version_row(writer *w, const scd_version *v, int new_sk)
{
  const target *t = w->t;
  const scd_cols *c = w->cols;
  for (size_t i = 0; i < t->ncols; i++) {
    const tcol *tc = &t->cols[i];
    if (tc->role == TC_SRC)
      w->row[i] = (w->from_t1[i] ? v->t1vals : v->vals)[tc->src];
  }
  target_ts_text(t, &v->valid_from, w->vf);
  set_text(&w->row[t->ix[TC_VALID_FROM]], w->vf);
  if (v->open) {
    set_text(&w->row[t->ix[TC_VALID_TO]], t->open_end[0] ? t->open_end : NULL);
  } else {
    target_ts_text(t, &v->valid_to, w->vt);
    set_text(&w->row[t->ix[TC_VALID_TO]], w->vt);
  }
  if (t->ix[TC_CURRENT] >= 0)
    set_text(&w->row[t->ix[TC_CURRENT]], v->current ? t->d->true_val : t->d->false_val);
  if (t->ix[TC_DELETED] >= 0)
    set_text(&w->row[t->ix[TC_DELETED]], v->deleted ? t->d->true_val : t->d->false_val);
  if (t->ix[TC_SK] >= 0) {
    if (t->spec->sk_strategy == SK_HASH) {
      /* A key deleted and revived at the same instant has a tombstone and a
       * version with one valid_from: the marker keeps their keys apart. */
      char extra[48];
      int n = snprintf(extra, sizeof extra, "%s%s", w->vf, v->tombstone ? "|tombstone" : "");
      fp_sha256_hex(v->vals, c->key, c->nkey, extra, (size_t)n, w->sk);
    } else if (new_sk) {
      snprintf(w->sk, sizeof w->sk, "%" PRId64, w->next_sk++);
    }
    set_text(&w->row[t->ix[TC_SK]], w->sk);
  }
}

static int sink_insert(void *ud, const scd_version *v, dwl_error *err)
{
  writer *w = ud;
  const target *t = w->t;
  const scd_cols *c = w->cols;
  if (t->spec->mode != MODE_SCD2) {
    for (size_t i = 0; i < t->ncols; i++)
      if (t->cols[i].role == TC_SRC)
        w->row[i] = v->vals[t->cols[i].src];
    return batch_add(w->main, w->row, err);
  }
  /* A key revived at the instant it was deleted gets a version with the
   * tombstone's valid_from: the staged expire of the tombstone would match
   * it too, so it must reach the table first (and the insert after). */
  if (w->staged_expire && v->valid_from.us == w->staged_vf &&
      fp_eq(fp_tuple(v->vals, c->key, c->nkey), w->staged_key)) {
    if (stages_apply(w, NULL, err) != 0 || batch_flush(w->main, err) != 0)
      return -1;
    w->staged_expire = 0;
  }
  version_row(w, v, 1);
  return batch_add(w->main, w->row, err);
}

size_t key_params(const writer *w, const dwl_value *row, dwl_value *p)
{
  for (size_t i = 0; i < w->cols->nkey; i++)
    p[i] = row[w->cols->key[i]];
  return w->cols->nkey;
}

static int sink_expire(void *ud, const dwl_value *keyrow, const dwl_ts *valid_from, const dwl_ts *valid_to,
                       int deleted, dwl_error *err)
{
  writer *w = ud;
  const target *t = w->t;
  size_t n = 0;
  target_ts_text(t, valid_to, w->vt);
  if (staged_key(w, keyrow)) {
    n = key_params(w, keyrow, w->params);
    target_ts_text(t, valid_from, w->vf);
    set_text(&w->params[n++], w->vf);
    set_text(&w->params[n++], w->vt);
    if (t->ix[TC_DELETED] >= 0)
      set_text(&w->params[n++], deleted ? t->d->true_val : t->d->false_val);
    w->staged_expire = 1;
    w->staged_key = fp_tuple(keyrow, w->cols->key, w->cols->nkey);
    w->staged_vf = valid_from->us;
    return stage_add(w, SLOT_EXPIRE, w->params, err);
  }
  set_text(&w->params[n++], w->vt);
  if (t->ix[TC_DELETED] >= 0)
    set_text(&w->params[n++], deleted ? t->d->true_val : t->d->false_val);
  n += key_params(w, keyrow, &w->params[n]);
  n += target_cur_params(t, &w->params[n]);
  return run_slot(w, SLOT_EXPIRE, w->params, n, err);
}

/* Type 1 or upsert update: values of idx[] from `row`, and the run id:
 * a row whose values the run changes in place is the run's. */
static int sink_set(writer *w, int slot, const size_t *idx, size_t nidx, const dwl_value *row,
                    const dwl_ts *valid_from, dwl_error *err)
{
  size_t n = 0;
  if (staged_key(w, row)) {
    /* Several overwrites of one current version in a run: one UPDATE ...
     * FROM/JOIN would apply an arbitrary one of them, so the last replaces
     * the previous while that is still pending, else follows its applying.
     * The engine emits a key's operations together. */
    if (slot == SLOT_T1_CUR) {
      fp128 k = fp_tuple(row, w->cols->key, w->cols->nkey);
      if (w->staged_t1 && fp_eq(k, w->t1_key)) {
        if (!batch_unadd(w->stages[slot].b) && stages_apply(w, NULL, err) != 0)
          return -1;
      }
      w->staged_t1 = 1;
      w->t1_key = k;
    }
    n = key_params(w, row, w->params);
    if (slot == SLOT_T1_CUR) {
      target_ts_text(w->t, valid_from, w->vf);
      set_text(&w->params[n++], w->vf);
    }
    for (size_t i = 0; i < nidx; i++)
      w->params[n++] = row[idx[i]];
    if (has_run_id(w))
      w->params[n++] = w->rid;
    return stage_add(w, slot, w->params, err);
  }
  for (size_t i = 0; i < nidx; i++)
    w->params[n++] = row[idx[i]];
  if (has_run_id(w))
    w->params[n++] = w->rid;
  n += key_params(w, row, &w->params[n]);
  if (slot == SLOT_T1_CUR)
    n += target_cur_params(w->t, &w->params[n]);
  return run_slot(w, slot, w->params, n, err);
}

static int sink_type1(void *ud, const dwl_value *row, const dwl_ts *valid_from, int all, dwl_error *err)
{
  writer *w = ud;
  return sink_set(w, all ? SLOT_T1_ALL : SLOT_T1_CUR, w->cols->t1, w->cols->nt1, row, valid_from, err);
}

static int sink_update(void *ud, const dwl_value *row, dwl_error *err)
{
  writer *w = ud;
  return sink_set(w, SLOT_UPDATE, w->cols->t2, w->cols->nt2, row, NULL, err);
}

static int sink_remove(void *ud, const dwl_value *keyrow, dwl_error *err)
{
  writer *w = ud;
  size_t n = key_params(w, keyrow, w->params);
  if (staged_key(w, keyrow))
    return stage_add(w, SLOT_REMOVE, w->params, err);
  return run_slot(w, SLOT_REMOVE, w->params, n, err);
}

/* key, valid_from [, deleted]: the stored version an operation names. */
static size_t version_params(writer *w, const dwl_value *keyrow, const dwl_ts *vf, int deleted, dwl_value *p)
{
  const target *t = w->t;
  size_t n = key_params(w, keyrow, p);
  target_ts_text(t, vf, w->ovf);
  set_text(&p[n++], w->ovf);
  if (t->ix[TC_DELETED] >= 0)
    set_text(&p[n++], deleted ? t->d->true_val : t->d->false_val);
  return n;
}

static int sink_drop(void *ud, const dwl_value *keyrow, const dwl_ts *vf, int deleted, dwl_error *err)
{
  writer *w = ud;
  size_t n = version_params(w, keyrow, vf, deleted, w->params);
  if (staged_key(w, keyrow))
    return stage_add(w, SLOT_DROP, w->params, err);
  return run_slot(w, SLOT_DROP, w->params, n, err);
}

static int sink_reshape(void *ud, const dwl_value *keyrow, const dwl_ts *old_vf, int old_deleted,
                        const scd_version *v, dwl_error *err)
{
  writer *w = ud;
  const long *what = w->rs_what;
  size_t nset = w->rs_n;
  version_row(w, v, 0);
  if (staged_key(w, keyrow)) {
    size_t n = version_params(w, keyrow, old_vf, old_deleted, w->params);
    for (size_t i = 0; i < nset; i++)
      w->params[n++] = w->row[what_tcol(w, what[i])];
    return stage_add(w, SLOT_RESHAPE, w->params, err);
  }
  for (size_t i = 0; i < nset; i++)
    w->params[i] = w->row[what_tcol(w, what[i])];
  size_t n = nset + version_params(w, keyrow, old_vf, old_deleted, w->params + nset);
  return run_slot(w, SLOT_RESHAPE, w->params, n, err);
}

scd_sink writer_sink(writer *w)
{
  scd_sink s = {
    .ud = w,
    .insert = sink_insert,
    .expire = sink_expire,
    .type1 = sink_type1,
    .update = sink_update,
    .remove = sink_remove,
    .reshape = sink_reshape,
    .drop = sink_drop,
  };
  return s;
}
