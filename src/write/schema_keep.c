/* schema.missing_columns: keep, mode scd2.  A column of the table that the
 * source no longer delivers keeps, in the versions a run opens after a
 * key's current one (valid_from later), the value that version has: the engines (memory and pushdown alike)
 * write the delivered columns only, so the column is NULL in the new
 * versions until the step after their writes fills it in, from a copy of
 * the current versions taken before them, in the run's transaction.  The
 * engines compare delivered columns only, so the column never makes a
 * change.  A key with no current version keeps NULL.  Upserts need none of
 * this: an update sets the delivered columns only. */
#include "schema_keep.h"

#include <strings.h>

#include "buf.h"

#define KEEP_STAGE "dwl_keep"

static int active(const target *t)
{
  const dwl_spec *s = t->spec;
  return s->missing_columns == MISSING_KEEP && s->mode == MODE_SCD2 && t->exists && t->nabsent > 0 &&
         t->ix[TC_VALID_FROM] >= 0;
}

static const tcol *key_col(const target *t, const char *name)
{
  for (size_t c = 0; c < t->ncols; c++)
    if (t->cols[c].role == TC_SRC && strcasecmp(t->cols[c].name, name) == 0)
      return &t->cols[c];
  return NULL;
}

/* The absent columns, quoted, as "q, q" with each prefixed by pre. */
static int absent_list(const target *t, dwl_buf *b, const char *pre, dwl_error *err)
{
  for (size_t i = 0; i < t->nabsent; i++) {
    dwl_buf q;
    buf_init(&q, 0);
    if (dialect_quote(t->d, t->absent[i], &q, "column", err) != 0) {
      buf_free(&q);
      return -1;
    }
    buf_printf(b, "%s%s%s", i ? ", " : "", pre, q.data);
    buf_free(&q);
  }
  return 0;
}

static int run_sql(target *t, dwl_buf *b, dwl_error *err)
{
  if (buf_failed(b)) {
    buf_free(b);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  int rc = odbc_exec(t->c, b->data, NULL, NULL, 0, err);
  buf_free(b);
  return rc;
}

int schema_keep_begin(target *t, dwl_error *err)
{
  if (!active(t))
    return 0;
  const dwl_spec *s = t->spec;
  dwl_buf b;
  buf_init(&b, 512);
  buf_adds(&b, "CREATE TEMPORARY TABLE " KEEP_STAGE " AS SELECT ");
  for (size_t i = 0; i < s->key.n; i++) {
    const tcol *k = key_col(t, s->key.v[i]);
    if (!k) {
      buf_free(&b);
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s: load.key: column '%s' is not in the source", s->path,
                      s->key.v[i]);
    }
    buf_printf(&b, "%s, ", k->q);
  }
  buf_printf(&b, "%s AS dwl_vf, ", t->cols[t->ix[TC_VALID_FROM]].q);
  if (absent_list(t, &b, "", err) != 0) {
    buf_free(&b);
    return -1;
  }
  buf_printf(&b, " FROM %s WHERE %s", t->table_q, t->cur_pred);
  /* The copy reads the table in the run's transaction: where DDL commits
   * by itself, a widening after it must refuse (target_widen) rather than
   * wait for this very transaction's metadata lock. */
  t->touched |= t->c->in_txn;
  return run_sql(t, &b, err);
}

int schema_keep_end(target *t, dwl_error *err)
{
  if (!active(t))
    return 0;
  const dwl_spec *s = t->spec;
  const dialect *d = t->d;
  /* The versions after the current one of the copy: the run's. */
  dwl_buf on;
  buf_init(&on, 256);
  for (size_t i = 0; i < s->key.n; i++) {
    const tcol *k = key_col(t, s->key.v[i]);
    if (k) /* schema_keep_begin has found each */
      buf_printf(&on, "d.%s = s.%s AND ", k->q, k->q);
  }
  buf_printf(&on, "d.%s > s.dwl_vf", t->cols[t->ix[TC_VALID_FROM]].q);
  if (buf_failed(&on)) {
    buf_free(&on);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  dwl_buf b;
  buf_init(&b, 512);
  d->update_begin(&b, t->table_q, KEEP_STAGE, on.data);
  int rc = 0;
  for (size_t i = 0; i < t->nabsent && rc == 0; i++) {
    dwl_buf q;
    buf_init(&q, 0);
    rc = dialect_quote(d, t->absent[i], &q, "column", err);
    if (rc == 0)
      buf_printf(&b, "%s%s%s = s.%s", i ? ", " : "", d->set_prefix, q.data, q.data);
    buf_free(&q);
  }
  d->update_end(&b, KEEP_STAGE, on.data);
  buf_free(&on);
  if (rc != 0) {
    buf_free(&b);
    return -1;
  }
  return run_sql(t, &b, err);
}
