/* Pushdown's SQL fragments: key lists and equalities (NULL-safe where a
 * staged key has a NULL part), the current-version predicate, window
 * clauses, the staged column list; and the updates and deletes of the
 * dimension from a stage (update_from, delete_from) and the delete of its
 * rows no staged row names (delete_unmatched), which run what they build:
 * in the dialect's syntax, or on a distributed table by the writer's key
 * lists. */
#include "pushdown_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pd_text(dwl_value *v, const char *s)
{
  v->data = s;
  v->len = s ? strlen(s) : 0;
  v->is_null = s == NULL;
}

void fp_hex(fp128 f, char out[33])
{
  snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, f.hi, f.lo);
}

int is_tomb(const pushdown *p)
{
  return p->spec->delete_style == DELSTYLE_TOMBSTONE;
}

const char *tq(const pushdown *p, int role)
{
  return p->t->cols[p->t->ix[role]].q;
}

/* "a.k1, a.k2" ("k1, k2" without a) */
void keys(const pushdown *p, dwl_buf *b, const char *a)
{
  for (size_t i = 0; i < p->e->cols.nkey; i++)
    buf_printf(b, "%s%s%s%s", i ? ", " : "", a ? a : "", a ? "." : "", p->q[p->e->cols.key[i]]);
}

/* a.c = b.c NULL-safely: the dialect's operator without its parameter;
 * `pre` before each side (exact_text, or ""). */
static void nseq(const pushdown *p, dwl_buf *b, const char *a, const char *c2, const char *col, const char *pre)
{
  const char *op = p->t->d->null_safe_eq;
  size_t oplen = strlen(op) - 1; /* drop the '?' */
  buf_printf(b, "%s%s.%s%.*s%s%s.%s", pre, a, col, (int)oplen, op, pre, c2, col);
}

/* Key equality; plain where no staged key has a NULL part, so joins can
 * use the key index (a NULL-safe comparison cannot be hashed). */
void keyeq(const pushdown *p, dwl_buf *b, const char *a, const char *c2)
{
  for (size_t i = 0; i < p->e->cols.nkey; i++) {
    const char *col = p->q[p->e->cols.key[i]];
    if (i)
      buf_adds(b, " AND ");
    if (p->nullkeys)
      nseq(p, b, a, c2, col, "");
    else
      buf_printf(b, "%s.%s = %s.%s", a, col, c2, col);
  }
}

/* load.partition: " AND EXISTS (...)": the row of `a` is of a partition
 * the source delivered rows of (dwl_pd_seen's rows with dwl_one 1). */
void in_partitions(const pushdown *p, dwl_buf *b, const char *a)
{
  const scd_cols *c = &p->e->cols;
  if (c->npart == 0)
    return;
  buf_adds(b, " AND EXISTS (SELECT 1 FROM dwl_pd_seen x WHERE x.dwl_one = 1");
  for (size_t i = 0; i < c->npart; i++) {
    buf_adds(b, " AND ");
    nseq(p, b, a, "x", p->q[c->part[i]], "");
  }
  buf_adds(b, ")");
}

/* Whether source column `src` is text of a collation that holds different
 * texts equal ('a' and 'A'), which change detection must not. */
static int loose_text(const pushdown *p, size_t src)
{
  for (size_t i = 0; i < p->t->ncols; i++)
    if (p->t->cols[i].role == TC_SRC && p->t->cols[i].src == src)
      return p->t->cols[i].have_loose;
  return 0;
}

/* 1 when every column of idx[] is NULL-safely equal in a and c2, else 0. */
void alleq(const pushdown *p, dwl_buf *b, const char *a, const char *c2, const size_t *idx, size_t n)
{
  const char *exact = p->t->d->exact_text;
  buf_adds(b, "CASE WHEN ");
  for (size_t i = 0; i < n; i++) {
    if (i)
      buf_adds(b, " AND ");
    /* the memory engine compares the values themselves: so here */
    nseq(p, b, a, c2, p->q[idx[i]], exact && loose_text(p, idx[i]) ? exact : "");
  }
  buf_adds(b, n ? " THEN 1 ELSE 0 END" : "1 = 1 THEN 1 ELSE 0 END");
}

/* The current version of d; a holds the staged open end. */
void curpred(const pushdown *p, dwl_buf *b, const char *d, const char *a)
{
  const target *t = p->t;
  if (t->ix[TC_CURRENT] >= 0)
    buf_printf(b, "%s.%s = %s", d, tq(p, TC_CURRENT), t->d->true_lit);
  else if (t->open_end[0])
    buf_printf(b, "%s.%s = %s.dwl_oe", d, tq(p, TC_VALID_TO), a);
  else
    buf_printf(b, "%s.%s IS NULL", d, tq(p, TC_VALID_TO));
}

/* "OVER (PARTITION BY a.keys[, extra] ORDER BY a.dwl_t, a.dwl_seq)"; desc
 * orders from the last row. */
void over(const pushdown *p, dwl_buf *b, const char *a, const char *extra, const char *order)
{
  buf_adds(b, " OVER (PARTITION BY ");
  keys(p, b, a);
  if (extra)
    buf_printf(b, ", %s.%s", a, extra);
  buf_printf(b, " ORDER BY %s)", order);
}

/* "(SELECT 1 AS dwl_m, x.* FROM table x[ WHERE where])": the dimension,
 * with NULL for a column this run adds (plan runs before the ALTER
 * TABLE); without its parentheses when `where` is given (join_current's
 * keyed form encloses it). */
void table_rows(const pushdown *p, dwl_buf *b, const char *where)
{
  const target *t = p->t;
  buf_adds(b, where ? "SELECT 1 AS dwl_m, " : "(SELECT 1 AS dwl_m, ");
  for (size_t i = 0; i < t->ncols; i++)
    if (t->cols[i].not_in_table && !t->cols[i].added)
      buf_printf(b, "NULL AS %s, ", t->cols[i].q);
  buf_printf(b, "x.* FROM %s x", t->table_q);
  if (where)
    buf_printf(b, " WHERE %s", where);
  else
    buf_addc(b, ')');
}

void join_current(const pushdown *p, dwl_buf *b, const char *d, const char *a)
{
  const dialect *dl = p->t->d;
  /* keyed: "LATERAL (SELECT ... FROM table x WHERE <match> OFFSET 0) d
   * ON TRUE", probed per row of a */
  const char *x = p->keyed ? "x" : d;
  dwl_buf match;
  buf_init(&match, 0);
  keyeq(p, &match, x, a);
  if (p->spec->mode == MODE_SCD2) {
    buf_adds(&match, " AND ");
    curpred(p, &match, x, a);
  }
  buf_taint(b, &match);
  buf_adds(b, " LEFT JOIN ");
  if (p->keyed) {
    buf_adds(b, dl->join_keyed_begin);
    table_rows(p, b, match.data);
    buf_printf(b, "%s %s ON %s", dl->join_keyed_end, d, dl->true_lit);
  } else {
    table_rows(p, b, NULL);
    buf_printf(b, " %s ON %s", d, match.data ? match.data : "");
  }
  buf_free(&match);
}

/* Every staged column, prefixed. */
void staged_cols(const pushdown *p, dwl_buf *b, const char *a)
{
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "%s%s.%s", i ? ", " : "", a, p->q[i]);
  for (int x = 0; x < NX; x++)
    buf_printf(b, ", %s.%s", a, xname[x]);
  for (size_t k = 0; k < p->nhid; k++)
    buf_printf(b, ", %s.%s", a, p->hname[k]);
}

void temp_table(const pushdown *p, dwl_buf *b, const char *name, const char *indexed)
{
  buf_printf(b, "CREATE TEMPORARY TABLE %s", name);
  if (indexed && p->t->d->temp_index_begin)
    buf_printf(b, "%s%s%s", p->t->d->temp_index_begin, indexed, p->t->d->temp_index_end);
  buf_adds(b, " AS SELECT ");
}

size_t rid_param(const pushdown *p, dwl_value *v, SQLSMALLINT *ty)
{
  if (p->t->ix[TC_RUN_ID] < 0)
    return 0;
  *v = *writer_run_id(p->w);
  *ty = p->t->d->param_type(DWL_TYPE_TEXT);
  return 1;
}

/* "a.b", allocated (NULL when out of memory). */
static char *dotted(const char *a, const char *b)
{
  dwl_buf e;
  buf_init(&e, 0);
  buf_printf(&e, "%s.%s", a, b);
  return buf_steal(&e);
}

/* "d.k = s.k ...[ AND <the version>][ AND filter]": what m matches. */
static void match_on(const pushdown *p, dwl_buf *on, const pd_match *m)
{
  keyeq(p, on, "d", "s");
  if (m->version) {
    buf_printf(on, " AND d.%s = s.dwl_cvf AND ", tq(p, TC_VALID_FROM));
    curpred(p, on, "d", "s");
  }
  if (m->filter)
    buf_printf(on, " AND %s", m->filter);
}

/* An update (n > 0) or delete (n == 0) of a distributed table's rows by
 * key lists (writer_update_lists): the rows whose key is a's key columns
 * in `from` ("FROM ... a ..."), and for a version (`version`) whose
 * valid_from is a.dwl_cvf, with the current flag or a NULL valid_to as a
 * condition on the table.  1 when so applied, 0 when not (a local
 * table). */
static int lists_apply(pushdown *p, const char *a, const char *from, int version, const size_t *tcols,
                       const char *const *exprs, size_t n, const dwl_value *params, const SQLSMALLINT *types,
                       size_t np, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  if (!t->remote[0])
    return 0;
  size_t max = c->nkey + 1 + n, nm = 0;
  size_t *idx = calloc(max, sizeof *idx);
  char **ex = calloc(max, sizeof *ex);
  dwl_buf where;
  buf_init(&where, 0);
  int rc = idx && ex ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < c->nkey; i++) {
    idx[nm] = target_src_col(t, c->key[i]);
    ex[nm++] = dotted(a, p->q[c->key[i]]);
  }
  if (rc == 0 && version) {
    idx[nm] = (size_t)t->ix[TC_VALID_FROM];
    ex[nm++] = dotted(a, "dwl_cvf");
    /* With an open end and no current flag, the key and valid_from name
     * the version, as the writer's key lists take them (staged.c): a
     * match on valid_to = the open end would match on the column an
     * expire sets, which a key list cannot (its CASE reads the column it
     * sets), and the open end would be a literal in the statement. */
    if (t->ix[TC_CURRENT] >= 0)
      buf_printf(&where, "%s = %s", tq(p, TC_CURRENT), t->d->true_lit);
    else if (!t->open_end[0])
      buf_printf(&where, "%s IS NULL", tq(p, TC_VALID_TO));
  }
  for (size_t j = 0; rc == 0 && j < n; j++) {
    idx[nm + j] = tcols[j];
    ex[nm + j] = strdup(exprs[j]);
  }
  for (size_t i = 0; rc == 0 && i < nm + n; i++)
    if (!ex[i])
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0 && buf_failed(&where))
    rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0)
    rc = writer_update_lists(p->w, (const char *const *)ex, from, params, types, np, idx, nm, idx + nm, n,
                             where.data, err);
  for (size_t i = 0; ex && i < max; i++)
    free(ex[i]);
  free(ex);
  free(idx);
  buf_free(&where);
  return rc;
}

/* lists_apply of the rows a stage's rows name (m).  0 as well when a
 * staged key has a NULL part: that needs the join's NULL-safe match. */
static int by_lists(pushdown *p, const char *stage, const pd_match *m, const size_t *tcols,
                    const char *const *exprs, size_t n, const dwl_value *params, const SQLSMALLINT *types, size_t np,
                    dwl_error *err)
{
  if (!p->t->remote[0] || p->nullkeys)
    return 0;
  dwl_buf from;
  buf_init(&from, 0);
  buf_printf(&from, "FROM %s s", stage);
  if (m->filter)
    buf_printf(&from, " WHERE %s", m->filter);
  int rc = from.data ? lists_apply(p, "s", from.data, m->version, tcols, exprs, n, params, types, np, err)
                     : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&from);
  return rc;
}

/* A delete of the table's rows whose key no row of `stage` has (its
 * column scol NULL in a left join), and `cond` (appended by the caller,
 * and its parameters): the dialect's anti-join, or on a distributed table
 * whose key columns hold no NULL, the anti-join's keys read on the head
 * and deleted by key lists (lists_apply).  Spider runs an anti-join
 * DELETE as a DELETE per row on the shards. */
int delete_unmatched(pushdown *p, dwl_buf *b, const char *stage, const char *scol, const dwl_buf *cond,
                     const dwl_value *params, const SQLSMALLINT *types, size_t np, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  int nonull = 1;
  for (size_t i = 0; i < c->nkey; i++) {
    const tcol *k = &t->cols[target_src_col(t, c->key[i])];
    nonull = nonull && k->have_known && k->have.nullable == 0;
  }
  const char *more = cond->data ? cond->data : "";
  dwl_buf on, from;
  buf_init(&on, 0);
  buf_init(&from, 0);
  keyeq(p, &on, "d", "s");
  buf_taint(&on, cond);
  int rc = on.data ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0 && t->remote[0] && nonull) {
    buf_printf(&from, "FROM %s d LEFT JOIN %s s ON %s WHERE s.%s IS NULL%s", t->table_q, stage, on.data, scol, more);
    rc = from.data ? lists_apply(p, "d", from.data, 0, NULL, NULL, 0, params, types, np, err)
                   : err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0) {
    t->d->delete_unmatched(b, t->table_q, stage, on.data, scol);
    buf_adds(b, more);
    rc = apply(p, b, params, types, np, err);
  }
  buf_free(&on);
  buf_free(&from);
  return rc < 0 ? -1 : 0;
}

/* An update of the dimension from a stage, in the dialect's syntax, or
 * on a distributed table by key lists (by_lists).  set[] pairs target
 * columns with expressions over s (and params); m says which rows; no
 * pair: a delete of them. */
int update_from(pushdown *p, dwl_buf *b, const char *stage, const size_t *tcols, const char *const *exprs,
                size_t n, const pd_match *m, int indexed, const dwl_value *params, const SQLSMALLINT *types,
                size_t np, dwl_error *err)
{
  const dialect *d = p->t->d;
  int done = by_lists(p, stage, m, tcols, exprs, n, params, types, np, err);
  if (done != 0)
    return done < 0 ? -1 : 0;
  dwl_buf on;
  buf_init(&on, 0);
  match_on(p, &on, m);
  buf_taint(b, &on);
  if (n == 0) {
    d->delete_matching(b, p->t->table_q, stage, on.data);
  } else {
    d->update_begin(b, p->t->table_q, stage, on.data);
    for (size_t i = 0; i < n; i++)
      buf_printf(b, "%s%s%s = %s", i ? ", " : "", d->set_prefix, p->t->cols[tcols[i]].q, exprs[i]);
    if (indexed && p->keyed)
      d->update_keyed_end(b, p->t->table_q, stage, on.data);
    else
      d->update_end(b, stage, on.data);
  }
  buf_free(&on);
  return apply(p, b, params, types, np, err);
}

int delete_from(pushdown *p, dwl_buf *b, const char *stage, const pd_match *m, dwl_error *err)
{
  return update_from(p, b, stage, NULL, NULL, 0, m, 0, NULL, NULL, 0, err);
}

/* update_from setting the source columns idx[] from the stage's columns
 * of the same names, and the run id column: the run changes these rows'
 * values in place. */
int update_cols(pushdown *p, dwl_buf *b, const char *stage, const size_t *idx, size_t n, const pd_match *m,
                int indexed, dwl_error *err)
{
  size_t *tc = calloc(n + 1, sizeof *tc);
  char **ex = calloc(n + 1, sizeof *ex);
  int rc = tc && ex ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    tc[i] = target_src_col(p->t, idx[i]);
    dwl_buf e1;
    buf_init(&e1, 0);
    buf_printf(&e1, "s.%s", p->q[idx[i]]);
    if (!(ex[i] = buf_steal(&e1)))
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  dwl_value rid;
  SQLSMALLINT rty;
  size_t nset = n, np = rid_param(p, &rid, &rty);
  if (rc == 0 && np) {
    tc[nset] = (size_t)p->t->ix[TC_RUN_ID];
    if (!(ex[nset++] = strdup("?")))
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0)
    rc = update_from(p, b, stage, tc, (const char *const *)ex, nset, m, indexed, &rid, &rty, np, err);
  for (size_t i = 0; ex && i < nset; i++)
    free(ex[i]);
  free(ex);
  free(tc);
  return rc;
}

/* "(a, b)<mid>s.a, s.b<end>": an upsert's insert of the staged columns,
 * and of the run id column (its value a parameter: rid_param). */
void insert_cols(const pushdown *p, dwl_buf *b, const char *mid, const char *end)
{
  int rid = p->t->ix[TC_RUN_ID] >= 0;
  buf_addc(b, '(');
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "%s%s", i ? ", " : "", p->q[i]);
  if (rid)
    buf_printf(b, ", %s", tq(p, TC_RUN_ID));
  buf_printf(b, ")%s", mid);
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "%ss.%s", i ? ", " : "", p->q[i]);
  if (rid)
    buf_adds(b, ", ?");
  buf_adds(b, end);
}

int index_keys(pushdown *p, const char *table, dwl_error *err)
{
  if (!p->t->d->index_temp)
    return 0;
  dwl_buf b;
  buf_init(&b, 0);
  buf_printf(&b, "CREATE INDEX %s_k ON %s (", table, table);
  keys(p, &b, NULL);
  buf_addc(&b, ')');
  int rc = exec(p, &b, NULL, NULL, 0, err);
  buf_free(&b);
  return rc;
}
