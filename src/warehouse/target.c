/* The target table: layout, creation, indexes, reading versions back, and
 * what an existing table's columns can take (target_value_fits). */
#include "target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "norm.h"
#include "scd.h"
#include "sqltype.h"

static char *conn_with_extra(const char *cs, const char *extra)
{
  size_t n = strlen(cs);
  char *out = malloc(n + strlen(extra) + 2);
  if (!out)
    return NULL;
  memcpy(out, cs, n);
  size_t k = n;
  if (n && cs[n - 1] != ';')
    out[k++] = ';';
  strcpy(out + k, extra);
  return out;
}

/* A connection as the run's others: same attributes, same session setup,
 * lock waits bounded.  SQLite's main connection (opened while t->c is
 * NULL) waits its driver's Timeout until it knows that no other writer
 * holds the database (state.c). */
static int session_setup(target *t, odbc_conn *c, int bound, dwl_error *err)
{
  if (t->d && t->d->session_sql && odbc_exec(c, t->d->session_sql, NULL, NULL, 0, err) != 0)
    return -1;
  return bound ? odbc_exec(c, t->lock_done_sql, NULL, NULL, 0, err) : 0;
}

static int open_conn(target *t, const char *connstr, odbc_conn **out, dwl_error *err)
{
  int bound = t->lock_done_sql[0] && !(t->d->writer_probe_sql && !t->c);
  if (odbc_connect(connstr, out, err) != 0)
    return -1;
  if (session_setup(t, *out, bound, err) != 0) {
    odbc_close(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

int target_open_conn(target *t, odbc_conn **out, dwl_error *err)
{
  return open_conn(t, t->connstr, out, err);
}

int target_connect(const dwl_spec *spec, target **out, dwl_error *err)
{
  *out = NULL;
  target *t = calloc(1, sizeof *t);
  if (!t)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  t->spec = spec;
  t->lmd = -1;
  for (int i = 0; i < TC_NROLES; i++)
    t->ix[i] = -1;
  if (odbc_connect(spec->target_connection, &t->c, err) != 0)
    goto fail;
  t->d = dialect_for_dbms(t->c->dbms, err);
  if (!t->d)
    goto fail;
  /* Some attributes only matter once the DBMS is known (SQLite's busy
   * timeout): reconnect with them. */
  dwl_buf extra;
  buf_init(&extra, 0);
  if (t->d->conn_extra)
    t->d->conn_extra(spec->target_connection, &extra);
  t->connstr = extra.len ? conn_with_extra(spec->target_connection, extra.data) : strdup(spec->target_connection);
  buf_free(&extra);
  if (!t->connstr) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto fail;
  }
  /* Every session of the run waits at most target.lock_timeout for a lock. */
  if (t->d->lock_timeout_sql)
    t->d->lock_timeout_sql(spec->lock_timeout_ms > 0 ? spec->lock_timeout_ms : DWL_LOCK_TIMEOUT_MS, t->lock_done_sql,
                           sizeof t->lock_done_sql);
  /* Only attributes need a new connection; session settings are made on
   * this one (a reconnect for them alone also cost MariaDB's client a
   * second handshake, and its plugins a load and unload). */
  if (strcmp(t->connstr, spec->target_connection) != 0) {
    odbc_close(t->c);
    t->c = NULL;
    if (open_conn(t, t->connstr, &t->c, err) != 0)
      goto fail;
  } else if (session_setup(t, t->c, t->lock_done_sql[0] && !t->d->writer_probe_sql, err) != 0) {
    goto fail;
  }
  if (dialect_split_table(spec->target_table, &t->schema, &t->table) != 0) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto fail;
  }
  dwl_buf q;
  buf_init(&q, 0);
  if (dialect_quote_table(t->d, spec->target_table, &q, err) != 0) {
    int line = 0, col = 0;
    spec_key_pos(spec, "target.table", &line, &col);
    err_prefix(err, "%s:%d:%d", spec->path, line, col);
    err_cause(err, DWL_CAUSE_SPEC);
    buf_free(&q);
    goto fail;
  }
  t->table_q = buf_steal(&q);
  *out = t;
  return 0;
fail:
  target_free(t);
  return -1;
}

void target_free(target *t)
{
  if (!t)
    return;
  for (size_t i = 0; i < t->ncols; i++) {
    free(t->cols[i].q);
    free(t->cols[i].have_type);
  }
  free(t->cols);
  free(t->cur_pred);
  free(t->connstr);
  odbc_close(t->reader);
  free(t->table_q);
  free(t->schema);
  free(t->table);
  odbc_close(t->c);
  free(t);
}

/* The names of the table's columns so far, by case-insensitive hash, so
 * that laying out n columns costs O(n), not O(n^2): a source with
 * thousands of columns is checked for clashes in an instant. */
typedef struct colset {
  size_t *slot;  /* index + 1 into t->cols; 0 is empty */
  size_t mask;
  size_t cap;    /* of t->cols */
} colset;

static size_t name_hash(const char *s)
{
  size_t h = 1469598103934665603ULL & SIZE_MAX;
  for (; *s; s++)
    h = (h ^ (size_t)tolower((unsigned char)*s)) * (1099511628211ULL & SIZE_MAX);
  return h;
}

static int colset_init(colset *cs, target *t, size_t n, dwl_error *err)
{
  size_t m = 16;
  while (m < 2 * n)
    m *= 2;
  cs->slot = calloc(m, sizeof *cs->slot);
  cs->mask = m - 1;
  cs->cap = n;
  free(t->cols);
  t->cols = calloc(n, sizeof *t->cols);
  t->ncols = 0;
  if (!cs->slot || !t->cols)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

static int add_col(target *t, colset *cs, const char *name, int role, size_t src, dwl_column decl, dwl_error *err)
{
  size_t h = name_hash(name) & cs->mask;
  for (; cs->slot[h]; h = (h + 1) & cs->mask) {
    size_t i = cs->slot[h] - 1;
    if (strcasecmp(t->cols[i].name, name) != 0)
      continue;
    /* Names are matched without regard to case, as SQL does unquoted. */
    if (role == TC_SRC && t->cols[i].role == TC_SRC)
      return err_set(err, DWL_EXIT_USAGE,
                     "the source has columns '%s' and '%s', whose names differ only in case; dwload matches column "
                     "names without regard to case, so rename one",
                     t->cols[i].name, name);
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                   "%s: dimension column '%s' has the name of a source column; rename it under dimension:",
                   t->spec->path, role == TC_SRC ? t->cols[i].name : name);
  }
  if (t->ncols == cs->cap)  /* colset_init reserved room for all */
    return err_set(err, DWL_EXIT_FAILED, "internal error: more columns than laid out");
  cs->slot[h] = t->ncols + 1;
  tcol *c = &t->cols[t->ncols];
  memset(c, 0, sizeof *c);
  c->name = name;
  c->role = role;
  c->src = src;
  c->decl = decl;
  c->decl.name = name;
  dwl_buf q;
  buf_init(&q, 0);
  if (dialect_quote(t->d, name, &q, "column name", err) != 0) {
    buf_free(&q);
    return -1;
  }
  c->q = buf_steal(&q);
  if (role != TC_SRC)
    t->ix[role] = (ssize_t)t->ncols;
  t->ncols++;
  return 0;
}

static int layout(target *t, colset *cs, const dwl_column *src, size_t nsrc, dwl_error *err);

/* A source that wide is not a dimension but a mistake or an attack; every
 * warehouse refuses fewer (each dialect's max_columns says how many). */
#define TARGET_MAX_COLUMNS 4096

int target_layout(target *t, const dwl_column *src, size_t nsrc, dwl_error *err)
{
  if (nsrc > TARGET_MAX_COLUMNS)
    return err_set(err, DWL_EXIT_FAILED, "the source has %zu columns; dwload loads at most %d", nsrc,
                   TARGET_MAX_COLUMNS);
  colset cs;
  int rc = colset_init(&cs, t, nsrc + 6, err);  /* and the bookkeeping columns */
  if (rc == 0)
    rc = layout(t, &cs, src, nsrc, err);
  free(cs.slot);
  if (rc == 0 && t->d->max_columns && t->ncols > (size_t)t->d->max_columns)
    rc = err_set(err, DWL_EXIT_FAILED,
                 "table %s would have %zu columns (%zu from the source, the rest dwload's bookkeeping); "
                 "%s tables hold at most %d",
                 t->spec->target_table, t->ncols, nsrc, t->d->dbms_prefix, t->d->max_columns);
  return rc;
}

static int layout(target *t, colset *cs, const dwl_column *src, size_t nsrc, dwl_error *err)
{
  const dwl_spec *s = t->spec;
  t->src = src;
  t->nsrc = nsrc;
  if (s->lmd)
    t->lmd = scd_col_index(src, nsrc, s->lmd);
  int scd2 = s->mode == MODE_SCD2;
  /* The lmd column's declared type decides how every point in time of the
   * dimension is stored, so all warehouses hold the same values. */
  t->vdate = t->lmd >= 0 && src[t->lmd].type == DWL_TYPE_DATE;
  int vtype = t->vdate ? DWL_TYPE_DATE : DWL_TYPE_TIMESTAMP;
  if (scd2 && t->vdate && s->close == CLOSE_SECOND_BEFORE) {
    int line = 0, col = 0;
    spec_key_pos(s, "dimension.close", &line, &col);
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                   "%s:%d:%d: dimension.close: second_before needs timestamps, but the lmd column '%s' is a date",
                   s->path, line, col, src[t->lmd].name);
  }
  dwl_column flag = {.type = DWL_TYPE_BOOLEAN, .nullable = 0};
  dwl_column tstamp = {.type = vtype, .nullable = 1};
  if (scd2 && s->surrogate_key) {
    dwl_column sk = {.type = s->sk_strategy == SK_HASH ? DWL_TYPE_TEXT : DWL_TYPE_INTEGER, .nullable = 0};
    if (add_col(t, cs, s->surrogate_key, TC_SK, 0, sk, err) != 0)
      return -1;
  }
  for (size_t i = 0; i < nsrc; i++) {
    dwl_column decl = src[i];
    if ((ssize_t)i == t->lmd)
      decl.type = vtype;  /* written in canonical form */
    if (add_col(t, cs, src[i].name, TC_SRC, i, decl, err) != 0)
      return -1;
  }
  if (!scd2)
    return 0;
  /* valid_from may be the lmd column itself (seed 001's ROW_EFF_DT). */
  if (t->lmd >= 0 && strcasecmp(s->valid_from, src[t->lmd].name) == 0)
    t->ix[TC_VALID_FROM] = (ssize_t)t->lmd + (s->surrogate_key ? 1 : 0);
  else if (add_col(t, cs, s->valid_from, TC_VALID_FROM, 0, tstamp, err) != 0)
    return -1;
  if (add_col(t, cs, s->valid_to, TC_VALID_TO, 0, tstamp, err) != 0)
    return -1;
  if (s->current && add_col(t, cs, s->current, TC_CURRENT, 0, flag, err) != 0)
    return -1;
  if (s->deleted && add_col(t, cs, s->deleted, TC_DELETED, 0, flag, err) != 0)
    return -1;

  dwl_buf p;
  buf_init(&p, 0);
  if (s->open_end) {
    dwl_ts oe;
    if (ts_parse(s->open_end, strlen(s->open_end), &oe) == 0) {
      if (t->vdate && oe.us % DWL_US_PER_DAY != 0) {
        int line = 0, col = 0;
        spec_key_pos(s, "dimension.open_end", &line, &col);
        buf_free(&p);
        return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                       "%s:%d:%d: dimension.open_end: '%s' has a time of day, but the lmd column '%s' is a date",
                       s->path, line, col, s->open_end, src[t->lmd].name);
      }
      target_ts_text(t, &oe, t->open_end);
    }
  }
  if (s->current)
    buf_printf(&p, "%s = %s", t->cols[t->ix[TC_CURRENT]].q, t->d->true_lit);
  else if (t->open_end[0])
    buf_printf(&p, "%s = ?", t->cols[t->ix[TC_VALID_TO]].q);
  else
    buf_printf(&p, "%s IS NULL", t->cols[t->ix[TC_VALID_TO]].q);
  t->cur_pred = buf_steal(&p);
  return t->cur_pred ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
}

size_t target_ts_text(const target *t, const dwl_ts *ts, char out[32])
{
  dwl_ts v = *ts;
  v.date_only = t->vdate;
  return ts_format(&v, out);
}

size_t target_cur_params(const target *t, dwl_value *out)
{
  if (t->spec->current || !t->open_end[0])
    return 0;
  out->data = t->open_end;
  out->len = strlen(t->open_end);
  out->is_null = 0;
  return 1;
}

/* The names of the existing table's columns: a malloc'd array of n
 * malloc'd names; where the dialect's columns_sql lists them, their
 * declared types go to the layout's columns of those names. */
static int existing_columns(target *t, char ***out, size_t *n, dwl_error *err)
{
  char sql[1024];
  const char *schema = t->schema ? t->schema : "main";  /* SQLite's name of the file itself */
  const dwl_value params[2] = {{t->table, strlen(t->table), 0}, {schema, strlen(schema), 0}};
  size_t np = 0;
  if (t->d->columns_sql) {
    snprintf(sql, sizeof sql, "%s", t->d->columns_sql);
    np = 2;
  } else {
    snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE 1 = 0", t->table_q);
  }
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  if (ostmt_execute(st, params, NULL, np, err) != 0) {
    ostmt_free(st);
    return -1;
  }
  *n = 0;
  *out = NULL;
  int rc = 0;
  if (t->d->columns_sql) {
    const dwl_value *row;
    int f;
    while ((f = ostmt_fetch(st, &row, err)) == 1) {
      char **nv = realloc(*out, (*n + 1) * sizeof *nv);
      if (!nv || !(nv[*n] = strndup(row[0].data ? row[0].data : "", row[0].len))) {
        if (nv)
          *out = nv;
        rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
        break;
      }
      *out = nv;
      (*n)++;
      for (size_t c = 0; row[1].data && !row[1].is_null && c < t->ncols; c++)
        if (strcasecmp(t->cols[c].name, nv[*n - 1]) == 0 && !t->cols[c].have_type)
          t->cols[c].have_type = strndup(row[1].data, row[1].len);
    }
    if (f < 0)
      rc = -1;
  } else {
    SQLSMALLINT nc = 0;
    SQLNumResultCols(st->h, &nc);
    *out = calloc(nc ? (size_t)nc : 1, sizeof **out);
    if (!*out)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (SQLSMALLINT i = 0; rc == 0 && i < nc; i++) {
      char name[256] = "";
      SQLSMALLINT ty, dig, nul;
      SQLULEN sz;
      ostmt_describe(st, (size_t)i, name, sizeof name, &ty, &sz, &dig, &nul);
      (*out)[(*n)++] = strdup(name);
      /* The kind of value the column takes; its limits come from the
       * catalog (column_limits): drivers describe an unconstrained
       * numeric with a precision of their own (psqlODBC: 28,6). */
      dwl_column have;
      sqltype_column(ty, sz, dig, nul, &have);
      have.precision = have.scale = 0;
      for (size_t c = 0; c < t->ncols; c++)
        if (t->cols[c].role == TC_SRC && strcasecmp(t->cols[c].name, name) == 0) {
          t->cols[c].have = have;
          t->cols[c].have_known = 1;
        }
    }
  }
  ostmt_free(st);
  return rc;
}

/* SQLite's affinity of a declared type (its rules, in their order): only
 * TEXT and BLOB affinity keep a decimal's text as given. */
static int sqlite_keeps_text(const char *type)
{
  if (strcasestr(type, "INT"))
    return 0;
  if (strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT"))
    return 1;
  return strcasestr(type, "BLOB") || !type[0];
}

int target_value_fits(const target *t, size_t src, const char *v, size_t len, const char **why, char *what,
                      size_t n)
{
  const tcol *c = &t->cols[src + (t->ix[TC_SK] >= 0 ? 1 : 0)];
  if (t->d->text_no_nul && memchr(v, '\0', len)) {
    snprintf(what, n, "holds a NUL byte, which %s text cannot hold", t->d->dbms_prefix);
    *why = what;
    return 1;
  }
  if (c->have_check) {
    dwl_buf scratch;
    const char *o, *w = NULL;
    size_t ol, chars = 0;
    buf_init(&scratch, 0);
    int bad = 0;
    if (c->have.type == DWL_TYPE_TEXT) {
      for (size_t i = 0; i < len; i++)
        chars += ((unsigned char)v[i] & 0xC0) != 0x80;
      bad = chars > (size_t)c->have.precision;
      w = "is too long";
    } else {
      /* the number with no trailing zeros, then within the column's (p,s) */
      bad = norm_value(c->have.type, v, len, &scratch, &o, &ol, &w) != 0 ||
            (c->have.type == DWL_TYPE_NUMERIC && c->have.precision > 0 &&
             norm_numeric_fits(o, ol, c->have.precision, c->have.scale, &w) != 0);
      if (!bad && c->have.type == DWL_TYPE_INTEGER) {
        long long x = strtoll(o, NULL, 10);  /* canonical and within 64 bits */
        bad = (c->have_min_set && x < c->have_min) || (c->have_max_set && x > c->have_max);
        w = "is out of range";
      }
    }
    buf_free(&scratch);
    if (bad) {
      char ty[64];
      if (c->have.type == DWL_TYPE_NUMERIC && c->have.precision > 0)
        snprintf(ty, sizeof ty, "numeric(%d,%d)", c->have.precision, c->have.scale);
      else if (c->have.type == DWL_TYPE_TEXT)
        snprintf(ty, sizeof ty, "varchar(%d)", c->have.precision);
      else if (c->have.type == DWL_TYPE_INTEGER && (c->have_min_set || c->have_max_set))
        snprintf(ty, sizeof ty, "an integer from %lld to %lld", c->have_min, c->have_max);
      else
        snprintf(ty, sizeof ty, "%s",
                 c->have.type == DWL_TYPE_INTEGER ? "integer" : c->have.type == DWL_TYPE_REAL ? "real" : "numeric");
      snprintf(what, n, "%s: column %s of table %s is %s", w, c->name, t->spec->target_table, ty);
      *why = what;
      return 1;
    }
  }
  if (c->real_digits && norm_sig_digits(v, len) > (size_t)c->real_digits) {
    *why = "has more significant digits than the column keeps";
    snprintf(what, n,
             "table %s declares column %s %s, which SQLite keeps as a REAL of %d significant digits: the value "
             "would be rounded; give the column TEXT affinity (a table dwload creates declares it "
             "DECIMAL_TEXT(p,s)), or keep such values out",
             t->spec->target_table, c->name, c->have_type, c->real_digits);
    return -1;
  }
  /* A table dwload made (or one whose column is that type): numeric_any. */
  int any = !c->have_known || (c->have.precision == t->d->numeric_any_precision &&
                               c->have.scale == t->d->numeric_any_scale);
  if (c->decl.type == DWL_TYPE_NUMERIC && c->decl.precision <= 0 && t->d->numeric_any_precision && any &&
      norm_numeric_fits(v, len, t->d->numeric_any_precision, t->d->numeric_any_scale, why) != 0) {
    snprintf(what, n,
             "a numeric without a precision is DECIMAL(%d,%d) on %s, which would round the value; declare the "
             "column's precision and scale in source.types",
             t->d->numeric_any_precision, t->d->numeric_any_scale, t->d->dbms_prefix);
    return -1;
  }
  return 0;
}

/* The declared limits of the existing table's columns (numeric(p,s),
 * varchar(n)) from the dialect's catalog query, into cols[].have; best
 * effort: without them, only the kind of value is checked. */
static void column_limits(target *t)
{
  odbc_stmt *st;
  dwl_error e2;
  err_init(&e2);
  const dwl_value p[2] = {{t->schema, t->schema ? strlen(t->schema) : 0, !t->schema}, {t->table, strlen(t->table), 0}};
  if (!t->d->column_limits_sql || ostmt_prepare(t->c, t->d->column_limits_sql, &st, &e2) != 0)
    return;
  const dwl_value *r;
  if (ostmt_execute(st, p, NULL, 2, &e2) == 0)
    while (ostmt_fetch(st, &r, &e2) == 1) {
      for (size_t c = 0; !r[0].is_null && c < t->ncols; c++) {
        tcol *tc = &t->cols[c];
        if (!tc->have_known || strlen(tc->name) != r[0].len || strncasecmp(tc->name, r[0].data, r[0].len) != 0)
          continue;
        long v1 = r[1].is_null ? 0 : strtol(r[1].data, NULL, 10), v2 = r[2].is_null ? 0 : strtol(r[2].data, NULL, 10);
        long v3 = r[3].is_null ? 0 : strtol(r[3].data, NULL, 10);
        if (tc->have.type == DWL_TYPE_NUMERIC && v1 > 0 && v1 <= 65 && v2 >= 0 && v2 <= v1) {
          tc->have.precision = (int)v1;
          tc->have.scale = (int)v2;
        } else if (tc->have.type == DWL_TYPE_TEXT && v3 > 0 && v3 < 65535) {
          tc->have.precision = (int)v3;
        } else if (tc->have.type == DWL_TYPE_INTEGER) {
          tc->have_min_set = !r[4].is_null;
          tc->have_min = tc->have_min_set ? strtoll(r[4].data, NULL, 10) : 0;
          tc->have_max_set = !r[5].is_null;
          tc->have_max = tc->have_max_set ? strtoll(r[5].data, NULL, 10) : 0;
        }
      }
    }
  ostmt_free(st);
}

/* Whether the source's values need checking against the existing
 * column: it may take less than the source holds (text that is not a
 * number for a number column, more digits than its numeric(p,s), more
 * characters than its varchar(n)).  Checked per row (target_value_fits),
 * so the row is named, not left to the server's error about a whole
 * batch, or to its rounding. */
static int needs_check(const target *t, const tcol *tc)
{
  const dwl_column *d = &tc->decl, *h = &tc->have;
  if (!tc->have_known || tc->role != TC_SRC || (ssize_t)tc->src == t->lmd)
    return 0;
  if (h->type == DWL_TYPE_INTEGER)
    return d->type == DWL_TYPE_TEXT || (d->type == DWL_TYPE_INTEGER && (tc->have_min_set || tc->have_max_set));
  if (h->type == DWL_TYPE_REAL)
    return d->type == DWL_TYPE_TEXT;
  if (h->type == DWL_TYPE_TEXT)
    return h->precision > 0 && d->type == DWL_TYPE_TEXT && (d->precision <= 0 || d->precision > h->precision);
  if (h->type != DWL_TYPE_NUMERIC)
    return 0;
  if (d->type == DWL_TYPE_TEXT)
    return 1;
  /* a numeric(p,s) of the source that fits the column needs no check, nor
   * one without precision in the dialect's own numeric_any */
  if (d->type == DWL_TYPE_NUMERIC && d->precision > 0 && h->precision > 0)
    return d->scale > h->scale || d->precision - d->scale > h->precision - h->scale;
  if (d->type == DWL_TYPE_NUMERIC && d->precision <= 0 && h->precision == t->d->numeric_any_precision &&
      h->scale == t->d->numeric_any_scale)
    return 0;
  return h->precision > 0;
}

/* Existing table: every column of the layout must be there. */
static int check_columns(target *t, dwl_error *err)
{
  char **have = NULL;
  size_t n = 0;
  if (existing_columns(t, &have, &n, err) != 0) {
    for (size_t i = 0; i < n; i++)
      free(have[i]);
    free(have);
    return -1;
  }
  column_limits(t);
  int rc = 0;
  for (size_t c = 0; c < t->ncols && rc == 0; c++) {
    int found = 0;
    for (size_t i = 0; i < n && !found; i++)
      found = have[i] && strcasecmp(have[i], t->cols[c].name) == 0;
    tcol *tc = &t->cols[c];
    if (found && t->d->real_digits && tc->role == TC_SRC && tc->decl.type == DWL_TYPE_NUMERIC && tc->have_type &&
        !sqlite_keeps_text(tc->have_type))
      tc->real_digits = t->d->real_digits;
    tc->have_check = found && needs_check(t, tc);
    if (!found)
      rc = err_set(err, DWL_EXIT_FAILED,
                   "table %s exists but has no column '%s'; add it, or point target.table at a new table and "
                   "dwload creates it",
                   t->spec->target_table, t->cols[c].name);
  }
  for (size_t i = 0; i < n; i++)
    free(have[i]);
  free(have);
  return rc;
}

/* DDL that would commit the run's transaction (MariaDB) runs on a
 * connection of its own; the lock stays held on the run's. */
static int exec_ddl(target *t, const char *sql, dwl_error *err)
{
  if (t->d->transactional_ddl || !t->c->in_txn)
    return odbc_exec(t->c, sql, NULL, NULL, 0, err);
  odbc_conn *ddl;
  if (open_conn(t, t->connstr, &ddl, err) != 0)
    return -1;
  int rc = odbc_exec(ddl, sql, NULL, NULL, 0, err);
  odbc_close(ddl);
  return rc;
}

/* The key index's name and columns, "name (a, b) WHERE ..."-style, for
 * CREATE INDEX or inside CREATE TABLE; empty when the table needs none. */
static int key_index(target *t, dwl_buf *idx, dwl_error *err)
{
  /* The business key among current versions is dwload's own lookup. */
  const dwl_spec *s = t->spec;
  if (s->key.n == 0 || (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT))
    return 0;
  dwl_buf iname;
  buf_init(&iname, 0);
  /* SQLite names the schema on the index, not on its table
   * (CREATE INDEX "main"."t_dwl_key" ON "t"); PostgreSQL puts an index in
   * its table's schema, MariaDB's is inside CREATE TABLE. */
  int schema_on_index = t->schema && t->d->index_schema_on_name;
  if ((schema_on_index && (dialect_quote(t->d, t->schema, &iname, "target.table", err) != 0 ||
                           buf_addc(&iname, '.') != 0)) ||
      dialect_quote_derived(t->d, t->table, "_dwl_key", &iname, err) != 0) {
    buf_free(&iname);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  buf_printf(idx, "%s ", iname.data);
  buf_free(&iname);
  if (schema_on_index) {
    buf_adds(idx, "ON ");
    if (dialect_quote(t->d, t->table, idx, "target.table", err) != 0)
      return -1;
    buf_addc(idx, ' ');
  } else if (t->d->transactional_ddl) {
    buf_printf(idx, "ON %s ", t->table_q);
  }
  buf_addc(idx, '(');
  for (size_t i = 0; i < s->key.n; i++) {
    ssize_t ci = scd_col_index(t->src, t->nsrc, s->key.v[i]);
    if (ci < 0)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s: load.key: column '%s' is not in the source", s->path, s->key.v[i]);
    const tcol *kc = &t->cols[(size_t)ci + (t->ix[TC_SK] >= 0 ? 1 : 0)];
    buf_printf(idx, "%s%s", i ? ", " : "", kc->q);
    if (t->d->index_text_prefix && kc->decl.type == DWL_TYPE_TEXT && kc->decl.precision <= 0)
      buf_printf(idx, "(%d)", t->d->index_text_prefix);
  }
  /* Current versions only: a partial index where the warehouse has them,
   * else the current flag as the last index column. */
  if (s->mode == MODE_SCD2 && s->current && t->d->partial_index)
    buf_printf(idx, ") WHERE %s", t->cur_pred);
  else if (s->mode == MODE_SCD2 && s->current)
    buf_printf(idx, ", %s)", t->cols[t->ix[TC_CURRENT]].q);
  else
    buf_adds(idx, ")");
  /* A failed index text is empty: without this the table would be made
   * without its key index, and every run would scan it. */
  return buf_failed(idx) ? err_set(err, DWL_EXIT_FAILED, "out of memory") : 0;
}

/* The table and its key index.  Where DDL commits by itself (MariaDB),
 * the index is declared inside CREATE TABLE: a run killed between two
 * statements would leave the table without it, and every later run would
 * find the table and read it by full scans. */
static int create_table(target *t, dwl_error *err)
{
  dwl_buf sql, idx;
  buf_init(&sql, 0);
  buf_init(&idx, 0);
  int rc = key_index(t, &idx, err);
  buf_printf(&sql, "CREATE TABLE %s (", t->table_q);
  for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
    const tcol *c = &t->cols[i];
    char ty[128];
    const char *type;
    if (c->role == TC_SK)
      type = c->decl.type == DWL_TYPE_INTEGER ? t->d->sk_int_type : t->d->sk_hash_type;
    else if (c->role == TC_CURRENT || c->role == TC_DELETED)
      type = t->d->flag_type;
    else
      type = t->d->type_sql(&c->decl, ty, sizeof ty);
    buf_printf(&sql, "%s%s %s%s%s", i ? ", " : "", c->q, type, c->role == TC_SK ? " PRIMARY KEY" : "",
               c->role == TC_CURRENT || c->role == TC_DELETED ? " NOT NULL" : "");
  }
  if (rc == 0 && idx.len && !t->d->transactional_ddl)
    buf_printf(&sql, ", INDEX %s", idx.data);
  buf_adds(&sql, ")");
  if (rc == 0)
    rc = exec_ddl(t, sql.data, err);
  if (rc == 0 && idx.len && t->d->transactional_ddl) {
    buf_reset(&sql);
    buf_printf(&sql, "CREATE INDEX %s", idx.data);
    rc = exec_ddl(t, sql.data, err);
  }
  buf_free(&sql);
  buf_free(&idx);
  return rc;
}

int target_prepare_table(target *t, int create, dwl_error *err)
{
  int ex = odbc_table_exists(t->c, t->schema, t->table, err);
  if (ex < 0)
    return -1;
  t->exists = ex;
  if (ex)
    return check_columns(t, err);
  if (!create)
    return 0;
  if (create_table(t, err) != 0)
    return -1;
  log_msg(LOG_INFO, "created table %s", t->spec->target_table);
  t->created = 1;
  t->exists = 1;
  return 0;
}

enum { SCAN_CURRENT, SCAN_DELETED, SCAN_HISTORY };

/* Which rows a scan reads beyond its kind: all, those whose key is in a
 * staged key table, or one key (NULL-safe, for keys with a NULL part). */
typedef struct scan_filter {
  const char *stage;            /* staged key table, or NULL */
  char *const *stage_cols;      /* its quoted key columns */
  const dwl_value *keyrow;      /* one key, source layout, or NULL */
  const size_t *key;            /* key column indexes */
  size_t nkey;
} scan_filter;

static int scan(target *t, const size_t *cols, size_t ncols, int all_cols, int which, const scan_filter *flt,
                target_row_fn fn, target_hist_fn hfn, void *ud, dwl_error *err)
{
  if (!t->exists)
    return 0;
  int scd2 = t->spec->mode == MODE_SCD2;
  size_t nsel = all_cols ? t->nsrc : ncols;
  size_t off = t->ix[TC_SK] >= 0 ? 1 : 0;
  size_t *map = calloc(nsel ? nsel : 1, sizeof *map);
  dwl_value *row = calloc(t->nsrc ? t->nsrc : 1, sizeof *row);
  dwl_buf *norm = calloc(nsel ? nsel : 1, sizeof *norm);
  dwl_value *p = calloc((flt ? flt->nkey : 0) + 2, sizeof *p);
  SQLSMALLINT *pt = calloc((flt ? flt->nkey : 0) + 2, sizeof *pt);
  dwl_buf sql;
  buf_init(&sql, 0);
  odbc_stmt *st = NULL;
  int rc = -1;
  if (!map || !row || !norm || !p || !pt) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < nsel; i++)
    buf_init(&norm[i], 0);
  /* The table is "d" throughout, so a staged key table may join it. */
  buf_adds(&sql, "SELECT ");
  for (size_t i = 0; i < nsel; i++) {
    map[i] = all_cols ? i : cols[i];
    buf_printf(&sql, "%sd.%s", i ? ", " : "", t->cols[map[i] + off].q);
  }
  if (scd2 && which == SCAN_DELETED)
    buf_printf(&sql, "%sd.%s, %s", nsel ? ", " : "", t->cols[t->ix[TC_VALID_TO]].q, t->d->true_lit);
  else if (scd2)
    buf_printf(&sql, "%sd.%s, %s%s", nsel ? ", " : "", t->cols[t->ix[TC_VALID_FROM]].q,
               t->ix[TC_DELETED] >= 0 ? "d." : "",
               t->ix[TC_DELETED] >= 0 ? t->cols[t->ix[TC_DELETED]].q : t->d->false_lit);
  if (which == SCAN_HISTORY)
    buf_printf(&sql, ", d.%s", t->cols[t->ix[TC_VALID_TO]].q);
  else if (!scd2 && nsel == 0)
    buf_adds(&sql, "1");
  buf_printf(&sql, " FROM %s AS d", t->table_q);
  if (flt && flt->stage) {
    buf_printf(&sql, " JOIN %s AS s ON ", flt->stage);
    for (size_t i = 0; i < flt->nkey; i++)
      buf_printf(&sql, "%sd.%s = s.%s", i ? " AND " : "", t->cols[flt->key[i] + off].q, flt->stage_cols[i]);
  }
  buf_adds(&sql, " WHERE 1 = 1");
  size_t np = 0;
  if (flt && flt->keyrow) {
    for (size_t i = 0; i < flt->nkey; i++) {
      buf_printf(&sql, " AND d.%s%s", t->cols[flt->key[i] + off].q, t->d->null_safe_eq);
      p[np] = flt->keyrow[flt->key[i]];
      pt[np++] = t->d->param_type(t->cols[flt->key[i] + off].decl.type);
    }
  }
  if (scd2 && which == SCAN_DELETED && t->ix[TC_DELETED] >= 0) {
    buf_printf(&sql, " AND d.%s = %s AND NOT (%s)", t->cols[t->ix[TC_DELETED]].q, t->d->true_lit, t->cur_pred);
  } else if (scd2 && which == SCAN_DELETED) {
    /* No deleted flag (dimension.deleted: null): a deleted key is one
     * without a current version; each closed version of it is read, and
     * the engine keeps the last end.  (cur_pred's bare names are c's.) */
    buf_printf(&sql, " AND NOT (%s) AND NOT EXISTS (SELECT 1 FROM %s AS c WHERE ", t->cur_pred, t->table_q);
    size_t nse = strlen(t->d->null_safe_eq) - 1;  /* without its "?" */
    for (size_t i = 0; i < nsel; i++)  /* a deleted scan selects the key */
      buf_printf(&sql, "c.%s%.*sd.%s AND ", t->cols[map[i] + off].q, (int)nse, t->d->null_safe_eq,
                 t->cols[map[i] + off].q);
    buf_printf(&sql, "%s)", t->cur_pred);
    if (target_cur_params(t, &p[np]))
      pt[np++] = SQL_VARCHAR;
  } else if (scd2 && which == SCAN_CURRENT) {
    buf_printf(&sql, " AND %s", t->cur_pred);
  }
  if (scd2 && which != SCAN_HISTORY && target_cur_params(t, &p[np]))
    pt[np++] = SQL_VARCHAR;
  /* A table created by this run's transaction is empty and invisible to
   * another connection; a staged key table lives on the run's own. */
  odbc_conn *conn = t->c;
  if (t->d->scan_separately && t->c->in_txn && !t->created && !(flt && flt->stage) && which != SCAN_HISTORY) {
    if (!t->reader && open_conn(t, t->connstr, &t->reader, err) != 0)
      goto out;
    conn = t->reader;
  }
  if (ostmt_prepare(conn, sql.data, &st, err) != 0 || ostmt_execute(st, p, pt, np, err) != 0)
    goto out;
  for (size_t i = 0; i < t->nsrc; i++)
    row[i].is_null = 1;
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(st, &r, err)) == 1) {
    for (size_t i = 0; i < nsel; i++) {
      const dwl_column *c = &t->src[map[i]];
      const char *why = "is not a timestamp";
      row[map[i]] = r[i];
      if (r[i].is_null)
        continue;
      int bad;
      if ((ssize_t)map[i] == t->lmd) {
        /* The same canonical form the source side writes (dates stay dates). */
        dwl_ts ts;
        bad = ts_parse(r[i].data, r[i].len, &ts) != 0 || buf_grow(&norm[i], 32) != 0;
        if (!bad) {
          norm[i].len = target_ts_text(t, &ts, norm[i].data);
          row[map[i]].data = norm[i].data;
          row[map[i]].len = norm[i].len;
        }
      } else {
        bad = norm_stored_col(c, r[i].data, r[i].len, &norm[i], &row[map[i]].data, &row[map[i]].len, &why) != 0;
      }
      if (bad) {
        char q[300];
        err_set(err, DWL_EXIT_FAILED, "table %s: column %s holds '%s': %s", t->spec->target_table, c->name,
                err_quote(q, sizeof q, r[i].data, r[i].len, 60), why);
        goto out;
      }
    }
    dwl_ts vf = {0, 0};
    int deleted = 0;
    if (scd2) {
      const dwl_value *v = &r[nsel];
      if (v->is_null || ts_parse(v->data, v->len, &vf) != 0) {
        err_set(err, DWL_EXIT_FAILED, "table %s: a %s version has %s '%.*s', not a timestamp", t->spec->target_table,
                which == SCAN_DELETED ? "deleted" : "current", which == SCAN_DELETED ? "valid_to" : "valid_from",
                (int)(v->is_null ? 4 : v->len), v->is_null ? "NULL" : v->data);
        goto out;
      }
      const dwl_value *d = &r[nsel + 1];
      deleted = !d->is_null && d->len > 0 && !(d->len == 1 && d->data[0] == '0') &&
                strncasecmp(d->data, "f", 1) != 0;
    }
    if (which == SCAN_HISTORY) {
      /* open: NULL, or the open end */
      const dwl_value *v = &r[nsel + 2];
      dwl_ts vt = {0, 0};
      int open = v->is_null;
      if (!open && ts_parse(v->data, v->len, &vt) != 0) {
        err_set(err, DWL_EXIT_FAILED, "table %s: a version has valid_to '%.*s', not a timestamp",
                t->spec->target_table, (int)v->len, v->data);
        goto out;
      }
      if (!open && t->open_end[0]) {
        char txt[32];
        target_ts_text(t, &vt, txt);
        open = strcmp(txt, t->open_end) == 0;
      }
      if (hfn(ud, row, &vf, open ? NULL : &vt, deleted, err) != 0)
        goto out;
    } else if (fn(ud, row, scd2 ? &vf : NULL, deleted, err) != 0) {
      goto out;
    }
  }
  rc = f < 0 ? -1 : 0;
out:
  ostmt_free(st);
  /* Readers must be gone before the commit needs its exclusive lock. */
  odbc_close(t->reader);
  t->reader = NULL;
  free(p);
  free(pt);
  buf_free(&sql);
  for (size_t i = 0; norm && i < nsel; i++)
    buf_free(&norm[i]);
  free(norm);
  free(map);
  free(row);
  return rc;
}

int target_scan(target *t, const size_t *cols, size_t ncols, int all_cols, target_row_fn fn, void *ud,
                dwl_error *err)
{
  return scan(t, cols, ncols, all_cols, SCAN_CURRENT, NULL, fn, NULL, ud, err);
}

int target_scan_deleted(target *t, const size_t *cols, size_t ncols, target_row_fn fn, void *ud, dwl_error *err)
{
  if (t->spec->mode != MODE_SCD2)
    return 0;
  return scan(t, cols, ncols, 0, SCAN_DELETED, NULL, fn, NULL, ud, err);
}

static scan_filter filter_of(const target_keys *keys)
{
  scan_filter f = {
    .stage = keys->stage,
    .stage_cols = keys->stage_cols,
    .keyrow = keys->keyrow,
    .key = keys->key,
    .nkey = keys->nkey,
  };
  return f;
}

int target_scan_keys(target *t, const size_t *cols, size_t ncols, int deleted, const target_keys *keys,
                     target_row_fn fn, void *ud, dwl_error *err)
{
  if (deleted && t->spec->mode != MODE_SCD2)
    return 0;
  scan_filter f = filter_of(keys);
  return scan(t, cols, ncols, 0, deleted ? SCAN_DELETED : SCAN_CURRENT, &f, fn, NULL, ud, err);
}

int target_scan_history(target *t, const target_keys *keys, target_hist_fn fn, void *ud, dwl_error *err)
{
  scan_filter f = filter_of(keys);
  return scan(t, NULL, 0, 1, SCAN_HISTORY, &f, NULL, fn, ud, err);
}

/* The catalog's estimate, -1 when it has none (never analyzed), -2 on
 * error. */
static long long estimate_rows(target *t, dwl_error *err)
{
  if (!t->d->estimate_sql || (t->schema && !t->d->estimate_quoted))
    return -1;
  dwl_value p = {t->d->estimate_quoted ? t->table_q : t->table, 0, 0};
  p.len = strlen(p.data);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, t->d->estimate_sql, &st, err) != 0)
    return -2;
  const dwl_value *r;
  long long n = -1;
  int rc = ostmt_execute(st, &p, NULL, 1, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1 && !r[0].is_null)
    n = strtoll(r[0].data, NULL, 10);
  ostmt_free(st);
  return rc < 0 ? -2 : n;
}

long long target_count(target *t, dwl_error *err)
{
  if (!t->exists)
    return 0;
  /* No estimate, or 0 (statistics not gathered yet): count. */
  long long est = estimate_rows(t, err);
  if (est > 0 || est == -2)
    return est == -2 ? -1 : est;
  return target_rows(t, err);
}

long long target_rows(target *t, dwl_error *err)
{
  if (!t->exists)
    return 0;
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", t->table_q);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  const dwl_value *r;
  long long n = -1;
  if (ostmt_execute(st, NULL, NULL, 0, err) == 0 && ostmt_fetch(st, &r, err) == 1)
    n = r[0].is_null ? 0 : strtoll(r[0].data, NULL, 10);
  ostmt_free(st);
  return n;
}
