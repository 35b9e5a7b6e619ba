/* The target table itself: an existing table's columns, their declared
 * types and limits, and what they can take (target_value_fits), and the
 * foreign tables among its partitions (no global commit); or the table
 * created with the key index dwload's own lookups need (hash-partitioned
 * where target.partition_by asks); and the source's new columns added to
 * it (schema.new_columns: add). */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "log.h"
#include "norm.h"
#include "scd.h"
#include "sqltype.h"

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
  /* Where DDL commits by itself (MariaDB), reading the table inside the
   * run's transaction would hold a metadata lock on it to the end, and the
   * ALTER TABLE of a new column, on a connection of its own, would wait
   * for it: the columns are read on that other connection. */
  odbc_conn *conn = t->c, *own = NULL;
  if (!t->d->transactional_ddl && t->c->in_txn) {
    if (target_open_conn(t, &own, err) != 0)
      return -1;
    conn = own;
  }
  odbc_stmt *st;
  if (ostmt_prepare(conn, sql, &st, err) != 0) {
    odbc_close(own);
    return -1;
  }
  if (ostmt_execute(st, params, NULL, np, err) != 0) {
    ostmt_free(st);
    odbc_close(own);
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
  odbc_close(own);
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

/* Runs one of the dialect's catalog queries (parameters: schema, table)
 * and hands each row with a column name in its first value to `fn`; best
 * effort: a query that fails gives no rows. */
static void catalog_rows(target *t, const char *sql, void (*fn)(target *t, const dwl_value *r))
{
  odbc_stmt *st;
  dwl_error e2;
  err_init(&e2);
  const dwl_value p[2] = {{t->schema, t->schema ? strlen(t->schema) : 0, !t->schema}, {t->table, strlen(t->table), 0}};
  if (!sql || ostmt_prepare(t->c, sql, &st, &e2) != 0)
    return;
  const dwl_value *r;
  if (ostmt_execute(st, p, NULL, 2, &e2) == 0)
    while (ostmt_fetch(st, &r, &e2) == 1)
      if (!r[0].is_null)
        fn(t, r);
  ostmt_free(st);
}

static int named(const tcol *tc, const dwl_value *name)
{
  return strlen(tc->name) == name->len && strncasecmp(tc->name, name->data, name->len) == 0;
}

/* The declared limits of the existing table's columns (numeric(p,s),
 * varchar(n)) from the dialect's catalog query, into cols[].have; best
 * effort: without them, only the kind of value is checked. */
static void column_limits(target *t, const dwl_value *r)
{
  for (size_t c = 0; c < t->ncols; c++) {
    tcol *tc = &t->cols[c];
    if (!tc->have_known || !named(tc, &r[0]))
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
    if (!r[6].is_null && !tc->have_attrs)
      tc->have_attrs = strndup(r[6].data, r[6].len);
    if (tc->have.type == DWL_TYPE_TEXT && !r[7].is_null && !tc->have_collate) {
      tc->have_collate = strndup(r[7].data, r[7].len);
      tc->have_loose = !r[8].is_null && r[8].len == 1 && r[8].data[0] == '1';
    }
  }
}

/* A column a failed run added and could not fill (the dialect's mark):
 * cols[].marked. */
static void marked_column(target *t, const dwl_value *r)
{
  for (size_t c = 0; c < t->ncols; c++)
    if (t->cols[c].role == TC_SRC && named(&t->cols[c], &r[0]))
      t->cols[c].marked = 1;
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
  catalog_rows(t, t->d->column_limits_sql, column_limits);
  catalog_rows(t, t->d->marked_columns_sql, marked_column);
  for (size_t c = 0; c < t->ncols; c++) {
    int found = 0;
    for (size_t i = 0; i < n && !found; i++)
      found = have[i] && strcasecmp(have[i], t->cols[c].name) == 0;
    tcol *tc = &t->cols[c];
    if (found && t->d->real_digits && tc->role == TC_SRC && tc->decl.type == DWL_TYPE_NUMERIC && tc->have_type &&
        !sqlite_keeps_text(tc->have_type))
      tc->real_digits = t->d->real_digits;
    tc->have_check = found && needs_check(t, tc);
    /* schema.c judges every missing column, so check can name them all. */
    tc->not_in_table = !found;
  }
  /* The table's columns the layout has not: taken over for schema.c. */
  for (size_t i = 0; i < n; i++) {
    int known = 0;
    for (size_t c = 0; c < t->ncols && !known; c++)
      known = have[i] && strcasecmp(have[i], t->cols[c].name) == 0;
    if (known || !have[i]) {
      free(have[i]);
      continue;
    }
    have[t->nabsent++] = have[i];
  }
  t->absent = have;
  return 0;
}

int target_table_names(target *t, char *const **names, size_t *n, dwl_error *err)
{
  *names = NULL;
  *n = 0;
  if (t->spec->new_columns != NEW_IGNORE)
    return 0;
  int ex = odbc_table_exists(t->c, t->schema, t->table, err);
  if (ex <= 0)
    return ex;
  /* before the layout: no column of it to note types on */
  if (existing_columns(t, &t->table_names, &t->ntable_names, err) != 0)
    return -1;
  *names = t->table_names;
  *n = t->ntable_names;
  return 0;
}

int target_key_indexed(target *t, dwl_error *err)
{
  const dwl_spec *s = t->spec;
  /* A foreign table's indexes are its server's, which the catalog here
   * does not list (a partitioned table's index covers its local
   * partitions, and is listed). */
  if (!t->exists || !t->d->key_index_sql || s->key.n == 0 || (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT) ||
      t->foreign_self)
    return 2;
  const dwl_value p[2] = {{t->schema, t->schema ? strlen(t->schema) : 0, !t->schema}, {t->table, strlen(t->table), 0}};
  odbc_stmt *st;
  if (ostmt_prepare(t->c, t->d->key_index_sql, &st, err) != 0)
    return -1;
  int found = 0, f = 0;
  if (ostmt_execute(st, p, NULL, 2, err) != 0) {
    ostmt_free(st);
    return -1;
  }
  /* Rows come index by index, columns in order: the first key.n columns
   * of one index must each be a key column (an index lists a column once). */
  char index[256] = "";
  size_t at = 0, matched = 0;
  const dwl_value *r;
  while (!found && (f = ostmt_fetch(st, &r, err)) == 1) {
    if (r[0].is_null || r[1].is_null)
      continue;
    if (strlen(index) != r[0].len || strncmp(index, r[0].data, r[0].len) != 0) {
      snprintf(index, sizeof index, "%.*s", (int)r[0].len, r[0].data);
      at = matched = 0;
    }
    if (at++ >= s->key.n)
      continue;
    for (size_t k = 0; k < s->key.n; k++)
      if (strlen(s->key.v[k]) == r[1].len && strncasecmp(s->key.v[k], r[1].data, r[1].len) == 0) {
        matched++;
        break;
      }
    found = matched == s->key.n;
  }
  ostmt_free(st);
  return f < 0 ? -1 : found;
}

const tcol *target_loose_key(const target *t)
{
  for (size_t k = 0; k < t->spec->key.n; k++)
    for (size_t i = 0; i < t->ncols; i++)
      if (t->cols[i].role == TC_SRC && t->cols[i].have_loose && strcasecmp(t->cols[i].name, t->spec->key.v[k]) == 0)
        return &t->cols[i];
  return NULL;
}

/* DDL that would commit the run's transaction (MariaDB) runs on a
 * connection of its own; the lock stays held on the run's. */
int target_exec_ddl(target *t, const char *sql, dwl_error *err)
{
  if (t->d->transactional_ddl || !t->c->in_txn)
    return odbc_exec(t->c, sql, NULL, NULL, 0, err);
  odbc_conn *ddl;
  if (target_open_conn(t, &ddl, err) != 0)
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
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s: load.key: column '%s' is not in the source", s->path,
                      s->key.v[i]);
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

/* One statement of the table's DDL: executed, or for plan --sql printed
 * to `print` as the writes' statements are. */
static int ddl(target *t, const char *sql, FILE *print, dwl_error *err)
{
  if (!print)
    return target_exec_ddl(t, sql, err);
  fprintf(print, "%s;\n", sql);
  return 0;
}

/* target.partition_by's clause after CREATE TABLE's columns; and where
 * each partition is a table of its own (PostgreSQL), its `partitions`
 * CREATE TABLE ... PARTITION OF statements, run after it in the run's
 * transaction (that DDL is transactional). */
static int partition_clause(target *t, dwl_buf *sql, dwl_error *err)
{
  const spec_list *pb = &t->spec->partition_by;
  buf_printf(sql, " %s (", t->d->partition_by);
  for (size_t i = 0; i < pb->n; i++) {
    buf_adds(sql, i ? ", " : "");
    if (dialect_quote(t->d, pb->v[i], sql, "target.partition_by", err) != 0)
      return -1;
  }
  buf_adds(sql, ")");
  if (t->d->partition_count)
    buf_printf(sql, " PARTITIONS %lld", t->spec->partitions);
  return 0;
}

static int partition_tables(target *t, FILE *print, dwl_error *err)
{
  dwl_buf sql;
  buf_init(&sql, 0);
  int rc = 0;
  for (long long i = 0; rc == 0 && !t->d->partition_count && i < t->spec->partitions; i++) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "_p%lld", i);
    buf_reset(&sql);
    buf_adds(&sql, "CREATE TABLE ");
    /* the partitions go in the table's schema */
    if (t->schema && (dialect_quote(t->d, t->schema, &sql, "target.table", err) != 0 || buf_addc(&sql, '.') != 0))
      rc = -1;
    else if (dialect_quote_derived(t->d, t->table, suffix, &sql, err) != 0)
      rc = -1;
    if (rc == 0) {
      buf_printf(&sql, " PARTITION OF %s FOR VALUES WITH (MODULUS %lld, REMAINDER %lld)", t->table_q,
                 t->spec->partitions, i);
      rc = buf_failed(&sql) ? err_set(err, DWL_EXIT_FAILED, "out of memory") : ddl(t, sql.data, print, err);
    }
  }
  buf_free(&sql);
  return rc;
}

/* The table and its key index.  Where DDL commits by itself (MariaDB),
 * the index is declared inside CREATE TABLE: a run killed between two
 * statements would leave the table without it, and every later run would
 * find the table and read it by full scans. */
static int create_table(target *t, FILE *print, dwl_error *err)
{
  dwl_buf sql, idx;
  buf_init(&sql, 0);
  buf_init(&idx, 0);
  int rc = key_index(t, &idx, err);
  int part = t->spec->partition_by.n > 0 && t->d->partition_by;
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
    buf_printf(&sql, "%s%s %s%s%s", i ? ", " : "", c->q, type, c->role == TC_SK && !part ? " PRIMARY KEY" : "",
               c->role == TC_CURRENT || c->role == TC_DELETED ? " NOT NULL" : "");
  }
  /* Both warehouses require the partition columns in every unique key:
   * the surrogate key's primary key takes them (the key index is not
   * unique). */
  if (rc == 0 && part && t->ix[TC_SK] >= 0) {
    buf_printf(&sql, ", PRIMARY KEY (%s", t->cols[t->ix[TC_SK]].q);
    for (size_t i = 0; rc == 0 && i < t->spec->partition_by.n; i++) {
      buf_adds(&sql, ", ");
      rc = dialect_quote(t->d, t->spec->partition_by.v[i], &sql, "target.partition_by", err);
    }
    buf_adds(&sql, ")");
  }
  if (rc == 0 && idx.len && !t->d->transactional_ddl)
    buf_printf(&sql, ", INDEX %s", idx.data);
  buf_adds(&sql, ")");
  if (rc == 0 && part)
    rc = partition_clause(t, &sql, err);
  if (rc == 0 && buf_failed(&sql))
    rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0)
    rc = ddl(t, sql.data, print, err);
  if (rc == 0 && part)
    rc = partition_tables(t, print, err);
  if (rc == 0 && idx.len && t->d->transactional_ddl) {
    buf_reset(&sql);
    buf_printf(&sql, "CREATE INDEX %s", idx.data);
    rc = buf_failed(&sql) ? err_set(err, DWL_EXIT_FAILED, "out of memory") : ddl(t, sql.data, print, err);
  }
  buf_free(&sql);
  buf_free(&idx);
  return rc;
}

/* The foreign tables under the existing table (the dialect's
 * foreign_parts_sql), into t->foreign and t->foreign_self. */
static int foreign_parts(target *t, dwl_error *err)
{
  free(t->foreign);
  t->foreign = NULL;
  t->foreign_self = 0;
  if (!t->d->foreign_parts_sql)
    return 0;
  const dwl_value p[1] = {{t->table_q, strlen(t->table_q), 0}};
  odbc_stmt *st;
  if (ostmt_prepare(t->c, t->d->foreign_parts_sql, &st, err) != 0)
    return -1;
  if (ostmt_execute(st, p, NULL, 1, err) != 0) {
    ostmt_free(st);
    return -1;
  }
  dwl_buf b;
  buf_init(&b, 0);
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(st, &r, err)) == 1) {
    if (r[0].is_null)
      continue;
    buf_printf(&b, "%s%.*s (server %.*s, %.*s)", b.len ? ", " : "", (int)r[0].len, r[0].data, (int)r[1].len,
               r[1].is_null ? "" : r[1].data, (int)r[2].len, r[2].is_null ? "" : r[2].data);
    t->foreign_self |= !r[3].is_null && strtol(r[3].data, NULL, 10) == 0;
  }
  ostmt_free(st);
  if (f < 0 || buf_failed(&b)) {
    buf_free(&b);
    return f < 0 ? -1 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  t->foreign = b.len ? buf_steal(&b) : NULL;
  buf_free(&b);
  return 0;
}

int target_foreign_risk(const target *t, dwl_buf *b)
{
  if (!t->foreign)
    return 0;
  /* postgres_fdw commits each remote transaction just before the local
   * one (its pre-commit callback), without two-phase commit. */
  buf_printf(b,
             "table %s %s %s: their servers commit apart from the warehouse (postgres_fdw commits each remote "
             "transaction just before the local one, not atomically with it): a failure at the commit can leave "
             "a run's rows there committed while the rest of the run and its checkpoint roll back; there is no "
             "global commit (dwload-job(5), SHARDED AND FOREIGN TARGETS)",
             t->spec->target_table, t->foreign_self ? "is a foreign table:" : "has foreign partitions:", t->foreign);
  return 1;
}

void target_warn_foreign(const target *t)
{
  dwl_buf b;
  buf_init(&b, 0);
  if (target_foreign_risk(t, &b))
    log_msg(LOG_WARN, "%s", b.data ? b.data : "a table with foreign partitions: there is no global commit");
  buf_free(&b);
}

int target_prepare_table(target *t, int create, dwl_error *err)
{
  int ex = odbc_table_exists(t->c, t->schema, t->table, err);
  if (ex < 0)
    return -1;
  t->exists = ex;
  /* An existing table's layout is its owner's: partition_by shapes only
   * a table dwload creates (dwload-job(5), TABLE LAYOUT). */
  if (ex && t->spec->partition_by.n)
    log_msg(LOG_INFO, "table %s exists: target.partition_by applies only to a table dwload creates; it is left as "
            "it is", t->spec->target_table);
  if (ex)
    return foreign_parts(t, err) != 0 || target_check_remote(t, err) != 0 ? -1 : check_columns(t, err);
  if (!create)
    return 0;
  if (create_table(t, NULL, err) != 0)
    return -1;
  log_msg(LOG_INFO, "created table %s", t->spec->target_table);
  t->created = 1;
  t->exists = 1;
  return 0;
}

int target_add_columns(target *t, FILE *print, dwl_error *err)
{
  dwl_buf sql;
  buf_init(&sql, 0);
  int n = 0;
  for (size_t i = 0; i < t->ncols; i++) {
    tcol *c = &t->cols[i];
    if (!c->not_in_table || c->added || c->role != TC_SRC)
      continue;
    char ty[128];
    buf_reset(&sql);
    t->d->add_column(&sql, t->table_q, c->q, t->d->type_sql(&c->decl, ty, sizeof ty));
    if (buf_failed(&sql)) {
      buf_free(&sql);
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    }
    if (ddl(t, sql.data, print, err) != 0) {
      buf_free(&sql);
      return -1;
    }
    n++;
    if (print)
      continue;
    c->added = 1;
    log_msg(LOG_INFO, "added column %s to table %s (schema.new_columns: add)%s", c->name, t->spec->target_table,
            t->d->transactional_ddl ? "" : ", committed at once: the warehouse's DDL is not transactional");
  }
  buf_free(&sql);
  return n;
}

void target_unmark_columns(target *t)
{
  dwl_buf sql;
  buf_init(&sql, 0);
  for (size_t i = 0; t->d->clear_mark && i < t->ncols; i++) {
    const tcol *c = &t->cols[i];
    if (!c->added && !c->marked)
      continue;
    char ty[128];
    dwl_error e2;
    err_init(&e2);
    buf_reset(&sql);
    t->d->clear_mark(&sql, t->table_q, c->q, t->d->type_sql(&c->decl, ty, sizeof ty));
    if (buf_failed(&sql) || odbc_exec(t->c, sql.data, NULL, NULL, 0, &e2) != 0)
      log_msg(LOG_WARN, "could not mark column %s of table %s as filled (%s): the next run fills it once more",
              c->name, t->spec->target_table, buf_failed(&sql) ? "out of memory" : e2.msg);
  }
  buf_free(&sql);
}

int target_plan_table(target *t, FILE *out, dwl_error *err)
{
  if (!t->exists)
    return create_table(t, out, err);
  return t->spec->new_columns == NEW_ADD && target_add_columns(t, out, err) < 0 ? -1 : 0;
}
