/* dwload migrate's reading of a side in primary-key order: a keyset
 * cursor that reads `limit` rows after the last key (and up to an upper
 * bound), whole tables without a key, chunks packed into one value where
 * the dialect packs them, each row normalized by the source's column
 * types; and the chunk boundaries the verification splits its ranges at. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "migrate_impl.h"
#include "norm.h"

/* "(a > ?) OR (a = ? AND b > ?)": the rows after a key, spelled out
 * because MariaDB uses the index only then. */
static void keyset_after(const tjob *j, const target *t, dwl_buf *b)
{
  for (size_t k = 0; k < j->npk; k++) {
    buf_adds(b, k ? " OR (" : "(");
    for (size_t e = 0; e < k; e++)
      buf_printf(b, "%s = ? AND ", t->cols[j->pk[e]].q);
    buf_printf(b, "%s > ?)", t->cols[j->pk[k]].q);
  }
}

/* The rows after the cursor's key (`after`) and up to its upper bound
 * (`upto`, inclusive), in key order, `limit` at a time. */
static char *select_sql(const tjob *j, const side *s, int whole, int after, int upto, long limit)
{
  const target *t = s->t;
  dwl_buf b;
  buf_init(&b, 0);
  buf_adds(&b, "SELECT ");
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", t->cols[i].q);
  buf_printf(&b, " FROM %s", t->table_q);
  if (whole)
    return buf_steal(&b);
  if (after || upto)
    buf_adds(&b, " WHERE ");
  if (after) {
    buf_addc(&b, '(');
    keyset_after(j, t, &b);
    buf_addc(&b, ')');
  }
  /* The first key part's bound lets the index stop the scan; NOT (...)
   * alone would be a filter read to the end of the table. */
  if (upto) {
    buf_printf(&b, "%s%s <= ? AND NOT (", after ? " AND " : "", t->cols[j->pk[0]].q);
    keyset_after(j, t, &b);
    buf_addc(&b, ')');
  }
  buf_adds(&b, " ORDER BY ");
  for (size_t k = 0; k < j->npk; k++)
    buf_printf(&b, "%s%s", k ? ", " : "", t->cols[j->pk[k]].q);
  buf_printf(&b, " LIMIT %ld", limit);
  return buf_steal(&b);
}

int cursor_init(cursor *c, side *s, size_t npk, dwl_error *err)
{
  memset(c, 0, sizeof *c);
  c->s = s;
  c->whole = npk == 0;
  buf_init(&c->key, 0);
  c->klen = calloc(npk ? npk : 1, sizeof *c->klen);
  return c->klen ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
}

void cursor_free(cursor *c)
{
  ostmt_free(c->first);
  ostmt_free(c->next);
  buf_free(&c->key);
  free(c->klen);
}

int cursor_set_key(cursor *c, const tjob *j, json_t *key, dwl_error *err)
{
  buf_reset(&c->key);
  for (size_t k = 0; k < j->npk; k++) {
    const char *v = json_string_value(json_array_get(key, k));
    if (!v)
      return err_set(err, DWL_EXIT_FAILED, "%s: the recorded key of %s is not text", PROGRESS_TABLE, j->mt->name);
    c->klen[k] = strlen(v);
    if (buf_add(&c->key, v, c->klen[k]) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  c->have = 1;
  return 0;
}

/* Keeps the cursor's key as a boundary between verification ranges. */
int record_bound(tjob *j, const cursor *c, dwl_error *err)
{
  if (j->npk == 0 || !c->have)
    return 0;
  if (j->nb == j->bcap) {
    size_t ncap = j->bcap ? j->bcap * 2 : 64;
    size_t *nl = realloc(j->blen, ncap * j->npk * sizeof *nl);
    if (nl)
      j->blen = nl;
    size_t *no = realloc(j->boff, ncap * sizeof *no);
    if (no)
      j->boff = no;
    if (!nl || !no)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    j->bcap = ncap;
  }
  j->boff[j->nb] = j->bkeys.len;
  memcpy(&j->blen[j->nb * j->npk], c->klen, j->npk * sizeof *c->klen);
  if (buf_add(&j->bkeys, c->key.data, c->key.len) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  j->nb++;
  return 0;
}

/* A chunk as one value (the dialect's packed_select): every row's fields
 * back to back, each as LENGTH:TEXT, or a bare ':' for NULL: one call and
 * one conversion per chunk instead of per value.  Only the next chunk's
 * start depends on the order being kept: were it not, rows would be read
 * twice and the count would fail the verification, never pass it. */
static char *packed_sql(const side *s, const char *inner)
{
  const target *t = s->t;
  const char **q = calloc(t->ncols ? t->ncols : 1, sizeof *q);
  if (!q)
    return NULL;
  for (size_t i = 0; i < t->ncols; i++)
    q[i] = t->cols[i].q;
  dwl_buf b;
  buf_init(&b, 0);
  t->d->packed_select(&b, q, t->ncols, inner);
  free(q);
  return buf_steal(&b);
}

/* One row read from a side: normalized by the source's column types, fed
 * to fn, and its key kept for the next chunk. */
static int take_row(tjob *j, cursor *c, const dwl_value *r, row_fn fn, dwl_error *err)
{
  for (size_t i = 0; i < j->ncols; i++) {
    j->row[i] = r[i];
    const char *why = "";
    if (!r[i].is_null && norm_value_col(&j->cols[i], r[i].data, r[i].len, &j->norm[i], &j->row[i].data,
                                        &j->row[i].len, &why) != 0)
      return err_set(err, DWL_EXIT_FAILED, "table %s, row %lld: column %s holds '%.*s': %s", j->mt->name, j->n + 1,
                     j->names[i], (int)(r[i].len > 60 ? 60 : r[i].len), r[i].data, why);
  }
  if (fn(j, j->row, err) != 0)
    return -1;
  j->n++;
  if (c->whole)
    return 0;
  buf_reset(&c->key);
  for (size_t k = 0; k < j->npk; k++) {
    c->klen[k] = j->row[j->pk[k]].len;
    if (buf_add(&c->key, j->row[j->pk[k]].data, c->klen[k]) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  c->have = 1;
  return 0;
}

/* The rows of a packed chunk (see packed_sql). */
static int take_packed(tjob *j, cursor *c, const dwl_value *v, row_fn fn, long *got, dwl_error *err)
{
  if (v->is_null)
    return 0;  /* no rows */
  const char *p = v->data, *end = v->data + v->len;
  while (p < end) {
    for (size_t i = 0; i < j->ncols; i++) {
      dwl_value *f = &j->packed[i];
      if (p < end && *p == ':') {
        f->is_null = 1;
        f->data = NULL;
        f->len = 0;
        p++;
        continue;
      }
      size_t len = 0;
      const char *d = p;
      while (d < end && *d >= '0' && *d <= '9' && len < SIZE_MAX / 16)
        len = len * 10 + (size_t)(*d++ - '0');
      if (d == p || d >= end || *d != ':' || (size_t)(end - d - 1) < len)
        return err_set(err, DWL_EXIT_FAILED, "table %s: the target's packed rows are malformed at byte %zu",
                       j->mt->name, (size_t)(p - v->data));
      f->is_null = 0;
      f->data = d + 1;
      f->len = len;
      p = d + 1 + len;
    }
    if (take_row(j, c, j->packed, fn, err) != 0)
      return -1;
    (*got)++;
  }
  return 0;
}

/* Reads the next chunk (up to `limit` rows after the cursor's key; the
 * whole table when it has no primary key) and feeds each row, normalized
 * by the source's column types, to fn.  Sets *got to the rows read. */
int cursor_chunk(tjob *j, cursor *c, long limit, row_fn fn, long *got, dwl_error *err)
{
  *got = 0;
  target *t = c->s->t;
  odbc_stmt **st = c->have ? &c->next : &c->first;
  if (!*st) {
    char *sql = select_sql(j, c->s, c->whole, c->have, c->upper != NULL, limit);
    if (sql && c->packed) {
      char *outer = packed_sql(c->s, sql);
      free(sql);
      sql = outer;
    }
    int rc = sql ? ostmt_prepare(t->c, sql, st, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
    free(sql);
    if (rc != 0)
      return -1;
  }
  /* Parameters: for key part k, the parts before it (=) and itself (>);
   * for the lower bound, then the upper (after its first part, for <=). */
  size_t per = j->npk * (j->npk + 1) / 2;
  size_t np = (c->have ? per : 0) + (c->upper ? 1 + per : 0);
  dwl_value *p = calloc(np ? np : 1, sizeof *p);
  SQLSMALLINT *pt = calloc(np ? np : 1, sizeof *pt);
  size_t *koff = calloc(j->npk ? j->npk : 1, sizeof *koff);
  if (!p || !pt || !koff) {
    free(p);
    free(pt);
    free(koff);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  size_t n = 0;
  for (int bound = 0; bound < 2; bound++) {
    const char *kd = bound ? c->upper : c->key.data;
    const size_t *kl = bound ? c->uklen : c->klen;
    if (bound ? !c->upper : !c->have)
      continue;
    for (size_t k = 1; k < j->npk; k++)
      koff[k] = koff[k - 1] + kl[k - 1];
    if (bound) {
      p[n].data = kd;
      p[n].len = kl[0];
      pt[n++] = t->d->param_type(j->cols[j->pk[0]].type);
    }
    for (size_t k = 0; k < j->npk; k++)
      for (size_t e = 0; e <= k; e++) {
        p[n].data = kd + koff[e];
        p[n].len = kl[e];
        pt[n++] = t->d->param_type(j->cols[j->pk[e]].type);
      }
  }
  free(koff);
  int rc = ostmt_execute(*st, p, pt, np, err);
  free(p);
  free(pt);
  if (rc != 0)
    return -1;
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(*st, &r, err)) == 1) {
    if (c->packed ? take_packed(j, c, r, fn, got, err) != 0 : take_row(j, c, r, fn, err) != 0) {
      SQLCloseCursor((*st)->h);
      return -1;
    }
    if (!c->packed)
      (*got)++;
  }
  SQLCloseCursor((*st)->h);
  return f < 0 ? -1 : 0;
}
