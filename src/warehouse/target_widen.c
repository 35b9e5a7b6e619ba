/* schema.widen: an existing table's column too narrow for the source's
 * values (text longer than its varchar(n), an integer beyond its range, a
 * decimal of more integer or fraction digits than its numeric(p,s)) gets
 * the smallest wider type that holds them, by the dialect's ALTER
 * (widen_column); never a narrower one.  The wider type is found from the
 * source's declared type (a varchar(n) or numeric(p,s) wider than the
 * column: before any row) and from the run's values (each one the column
 * could not take raises it: target_widen_value), and applied by
 * target_widen before the writes that need it: inside the run's
 * transaction where DDL is transactional (a failed run leaves the type as
 * it was), else on a connection of its own, committed at once (a wider
 * column is all a failed run leaves). */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "norm.h"

static tcol *src_col(target *t, size_t src)
{
  return &t->cols[src + (t->ix[TC_SK] >= 0 ? 1 : 0)];
}

/* How messages name a column's type: upper case, as SQL would. */
static void label(const target *t, const dwl_column *c, const tcol *range, char *out, size_t n)
{
  char ty[64];
  if (c->type == DWL_TYPE_TEXT && c->precision > 0) {
    const char *s = t->d->type_sql(c, ty, sizeof ty);
    if (strncmp(s, "VARCHAR", 7) == 0)
      snprintf(out, n, "VARCHAR(%d)", c->precision);
    else
      snprintf(out, n, "%.*s", (int)strcspn(s, " "), s);  /* TEXT, LONGTEXT */
  } else if (c->type == DWL_TYPE_TEXT) {
    snprintf(out, n, "TEXT");
  } else if (c->type == DWL_TYPE_NUMERIC && c->precision > 0) {
    snprintf(out, n, "NUMERIC(%d,%d)", c->precision, c->scale);
  } else if (c->type == DWL_TYPE_INTEGER && range && range->have_max_set) {
    if (range->have_max == 2147483647LL)
      snprintf(out, n, "INTEGER");
    else if (range->have_max == 32767)
      snprintf(out, n, "SMALLINT");
    else
      snprintf(out, n, "an integer from %lld to %lld", range->have_min, range->have_max);
  } else if (c->type == DWL_TYPE_INTEGER) {
    snprintf(out, n, "BIGINT");
  } else {
    snprintf(out, n, "%s", c->type == DWL_TYPE_REAL ? "REAL" : "NUMERIC");
  }
}

/* Digits before and after the point of a canonical number. */
static void digits(const char *v, size_t len, int *idig, int *fdig)
{
  size_t i = v[0] == '-' ? 1 : 0, dot = len;
  for (size_t k = i; k < len; k++)
    if (v[k] == '.')
      dot = k;
  *idig = (int)(dot - i);
  if (*idig == 1 && v[i] == '0')
    *idig = 0;
  *fdig = dot < len ? (int)(len - dot - 1) : 0;
}

/* The type of column c that would hold canonical value v too, from its
 * pending type (or its own): 1 found, 0 no widening holds it. */
static int wider(const target *t, const tcol *c, const char *v, size_t len, dwl_column *to)
{
  const dwl_column *from = c->want_set ? &c->want : &c->have;
  *to = *from;
  switch (c->have.type) {
  case DWL_TYPE_TEXT: {
    if (c->have.precision <= 0 || (t->d->text_no_nul && memchr(v, '\0', len)))
      return 0;
    int chars = 0;
    for (size_t i = 0; i < len; i++)
      chars += ((unsigned char)v[i] & 0xC0) != 0x80;
    if (chars > to->precision)
      to->precision = chars;
    return 1;
  }
  case DWL_TYPE_INTEGER:
    /* A canonical integer is within 64 bits: a BIGINT holds it. */
    to->precision = to->scale = 0;
    return c->have_min_set || c->have_max_set;
  case DWL_TYPE_NUMERIC: {
    if (c->have.precision <= 0)
      return 0;
    int idig, fdig;
    digits(v, len, &idig, &fdig);
    int ints = from->precision - from->scale, scale = from->scale;
    if (idig > ints)
      ints = idig;
    if (fdig > scale)
      scale = fdig;
    to->precision = ints + scale;
    to->scale = scale;
    return to->precision <= t->d->widen_max_precision && scale <= t->d->widen_max_scale;
  }
  }
  return 0;
}

int target_widen_value(target *t, size_t src, const char *v, size_t len, int raise, char *need, char *have,
                       size_t n)
{
  tcol *c = src_col(t, src);
  if (!t->d->widen_column || !c->have_known || c->role != TC_SRC)
    return 0;
  dwl_buf scratch;
  buf_init(&scratch, 0);
  const char *o = v, *w;
  size_t ol = len;
  int ok = c->have.type == DWL_TYPE_TEXT || norm_value(c->have.type, v, len, &scratch, &o, &ol, &w) == 0;
  dwl_column to;
  ok = ok && wider(t, c, o, ol, &to);
  buf_free(&scratch);
  if (!ok)
    return 0;
  label(t, &to, NULL, need, n);
  label(t, &c->have, c, have, n);
  if (raise) {
    c->want = to;
    c->want_set = 1;
  }
  return 1;
}

void target_widen_declared(target *t)
{
  for (size_t i = 0; t->d->widen_column && i < t->ncols; i++) {
    tcol *c = &t->cols[i];
    const dwl_column *d = &c->decl, *h = &c->have;
    if (!c->have_known || c->role != TC_SRC || c->not_in_table || d->type != h->type || d->precision <= 0 ||
        h->precision <= 0)
      continue;
    if (d->type == DWL_TYPE_TEXT && d->precision > h->precision) {
      c->want = *h;
      c->want.precision = d->precision;
      c->want_set = 1;
    } else if (d->type == DWL_TYPE_NUMERIC && (d->scale > h->scale || d->precision - d->scale > h->precision - h->scale)) {
      int ints = d->precision - d->scale > h->precision - h->scale ? d->precision - d->scale : h->precision - h->scale;
      int scale = d->scale > h->scale ? d->scale : h->scale;
      if (ints + scale > t->d->widen_max_precision || scale > t->d->widen_max_scale)
        continue;  /* the values decide, each refused as it comes */
      c->want = *h;
      c->want.precision = ints + scale;
      c->want.scale = scale;
      c->want_set = 1;
    }
  }
}

int target_widen_pending(const target *t)
{
  for (size_t i = 0; i < t->ncols; i++)
    if (t->cols[i].want_set)
      return 1;
  return 0;
}

int target_widen(target *t, int plan, FILE *print, dwl_error *err)
{
  int n = 0;
  dwl_buf sql;
  buf_init(&sql, 0);
  for (size_t i = 0; i < t->ncols; i++) {
    tcol *c = &t->cols[i];
    if (!c->want_set)
      continue;
    char from[64], to[64];
    label(t, &c->have, c, from, sizeof from);
    label(t, &c->want, NULL, to, sizeof to);
    buf_reset(&sql);
    t->d->widen_column(&sql, t->table_q, c->q, &c->want, c->have_attrs);
    if (buf_failed(&sql)) {
      buf_free(&sql);
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    }
    if (plan && print)
      fprintf(print, "%s;\n", sql.data);
    if (!plan && !t->d->transactional_ddl && t->c->in_txn && t->touched) {
      err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA,
               "table %s: column '%s' is %s, and the source's values need %s; this run had already read or "
               "written the table when it found that, and %s commits an ALTER TABLE by itself, so it cannot "
               "widen the column inside the run (schema.widen: widen widens before the run's first read of the "
               "table where it can: not with load.deletes: absent, load.deletes.truncate_values, load.lookup: "
               "scan, schema.missing_columns: keep or --full-refresh, which read or empty the table first, nor "
               "after a replace's first row or an append's first batch): nothing was written; widen the column "
               "yourself (%s), or set schema.widen: fail",
               t->spec->target_table, c->name, from, to, t->d->dbms_prefix, sql.data);
      buf_free(&sql);
      return -1;
    }
    if (!plan && target_exec_ddl(t, sql.data, err) != 0) {
      err_prefix(err, "widening column %s of table %s from %s to %s", c->name, t->spec->target_table, from, to);
      buf_free(&sql);
      return -1;
    }
    log_msg(LOG_INFO, "%s %s.%s from %s to %s (schema.widen: widen)%s", plan ? "would widen" : "widened",
            t->spec->target_table, c->name, from, to,
            plan || t->d->transactional_ddl ? "" : ", committed at once: the warehouse's DDL is not transactional");
    /* The column is its new type from here on: later values are judged by it. */
    c->have = c->want;
    c->have_min_set = c->have_max_set = 0;
    c->have_check = c->have.type == DWL_TYPE_NUMERIC || (c->have.type == DWL_TYPE_TEXT && strncmp(to, "VARCHAR", 7) == 0) ||
                    (c->have.type == DWL_TYPE_INTEGER && c->decl.type == DWL_TYPE_TEXT);
    if (c->have.type == DWL_TYPE_TEXT && !c->have_check)
      c->have.precision = 0;
    c->want_set = 0;
    c->widened = 1;
    n++;
  }
  buf_free(&sql);
  t->widened += n;
  return n;
}
