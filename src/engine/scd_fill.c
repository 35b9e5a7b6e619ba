/* load.ignore_null_updates (AUTO CDC's partial updates) in the memory
 * engine: a NULL in a delivered row's column means "unchanged".  Before the
 * walk, each such NULL takes the value of the key's previous row: the one
 * before it in the batch (by lmd), else the key's current row in the
 * table, kept while the current versions are read (only for the keys
 * that need it when the delta is read first, else for every live key).
 * A delete row is not filled, and after it the key has no values to give;
 * a new key keeps its NULLs.  upsert rows older than the stored row's lmd
 * (late, never applied) neither take nor give values.  Fingerprints are
 * recomputed, so a row that only carried values over is unchanged. */
#include "scd_impl.h"

#include <stdlib.h>
#include <string.h>

static int listed(const size_t *set, size_t n, size_t ix)
{
  for (size_t i = 0; i < n; i++)
    if (set[i] == ix)
      return 1;
  return 0;
}

size_t scd_fill_columns(const scd_engine *e, size_t *out)
{
  size_t n = 0;
  for (int set = 0; set < 2; set++) {
    const size_t *c = set ? e->cols.t1 : e->cols.t2;
    size_t nc = set ? e->cols.nt1 : e->cols.nt2;
    for (size_t i = 0; i < nc; i++) {
      if ((ssize_t)c[i] == e->cols.lmd || (ssize_t)c[i] == e->cols.del)
        continue;
      if (e->spec->ignore_nulls == 2 && !listed(e->inu_req, e->ninu_req, c[i]))
        continue;
      out[n++] = c[i];
    }
  }
  return n;
}

/* The columns in effect (scd_fill_columns), once. */
static int fill_cols(scd_engine *e, dwl_error *err)
{
  if (e->inu_ready)
    return 0;
  e->inu = calloc(e->cols.nt2 + e->cols.nt1 + 1, sizeof *e->inu);
  if (!e->inu)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  e->inu_ready = 1;
  e->ninu = scd_fill_columns(e, e->inu);
  return 0;
}

static int has_null(const scd_engine *e, const dwl_value *row)
{
  for (size_t i = 0; i < e->ninu; i++)
    if (row[e->inu[i]].is_null)
      return 1;
  return 0;
}

/* The delta's keys with a NULL to fill; none read yet: every key. */
static int want_keys(scd_engine *e, dwl_error *err)
{
  e->want_ready = 1;
  if (e->delta.n == 0)
    return 0;
  e->want = malloc(e->delta.n * sizeof *e->want);
  if (!e->want)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < e->delta.n; i++)
    if (has_null(e, e->delta.rows[i].vals))
      e->want[e->nwant++] = e->delta.rows[i].key;
  qsort(e->want, e->nwant, sizeof *e->want, fp_cmp);
  return 0;
}

void scd_fill_later(scd_engine *e)
{
  rowset_free(&e->cur);
  rowset_init(&e->cur, e->ncols);
  e->fill_later = 1;
}

int fill_keep_current(scd_engine *e, const rs_row *key, const dwl_value *row, dwl_error *err)
{
  if (e->fill_later)
    return 0;
  if (fill_cols(e, err) != 0 || (!e->want_ready && want_keys(e, err) != 0))
    return -1;
  if (e->ninu == 0 || (e->want && !bsearch(&key->key, e->want, e->nwant, sizeof *e->want, fp_cmp)))
    return 0;
  rs_row *c = rowset_add(&e->cur, row, 0);
  if (!c)
    return err_set(err, DWL_EXIT_FAILED, "out of memory holding current rows (load.ignore_null_updates)");
  c->key = key->key;
  return 0;
}

/* The key's kept current row, by binary search over idx (sorted by key). */
static const dwl_value *current_of(const scd_engine *e, const size_t *idx, fp128 key)
{
  size_t lo = 0, hi = e->cur.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = fp_cmp(&e->cur.rows[idx[mid]].key, &key);
    if (c == 0)
      return e->cur.rows[idx[mid]].vals;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

int fill_nulls(scd_engine *e, dwl_error *err)
{
  if (fill_cols(e, err) != 0)
    return -1;
  size_t n = e->delta.n, nc = e->cur.n;
  if (e->ninu == 0 || n == 0)
    return 0;
  size_t *idx = malloc(n * sizeof *idx), *cidx = malloc((nc ? nc : 1) * sizeof *cidx);
  if (!idx || !cidx) {
    free(idx);
    free(cidx);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  for (size_t i = 0; i < nc; i++)
    cidx[i] = i;
  scd_sort_index(&e->delta, idx, n);
  scd_sort_index(&e->cur, cidx, nc);  /* one row a key: by key */
  const dwl_value *prev = NULL;
  int64_t stored = INT64_MIN;
  for (size_t i = 0; i < n; i++) {
    rs_row *r = &e->delta.rows[idx[i]];
    if (i == 0 || !fp_eq(e->delta.rows[idx[i - 1]].key, r->key)) {
      km_entry *m = keymap_get(&e->km, r->key);
      int live = m && (m->flags & KM_LIVE);
      prev = live ? current_of(e, cidx, r->key) : NULL;
      stored = live && (m->flags & KM_LMD) ? m->valid_from : INT64_MIN;
    }
    if (e->spec->mode == MODE_UPSERT && r->lmd.us < stored)
      continue;  /* late: never applied */
    if (is_delete_row(e, r->vals)) {
      prev = NULL;
      continue;
    }
    int filled = 0;
    for (size_t k = 0; prev && k < e->ninu; k++) {
      size_t c = e->inu[k];
      if (r->vals[c].is_null && !prev[c].is_null) {
        r->vals[c] = prev[c];  /* both rowsets live as long as the engine */
        filled = 1;
      }
    }
    if (filled) {
      r->fp2 = fp_tuple(r->vals, e->cols.t2, e->cols.nt2);
      r->fp1 = fp_tuple(r->vals, e->cols.t1, e->cols.nt1);
    }
    prev = r->vals;
  }
  free(idx);
  free(cidx);
  return 0;
}

void fill_free(scd_engine *e)
{
  free(e->inu_req);
  free(e->inu);
  free(e->want);
  rowset_free(&e->cur);
}
