/* Bulk inserts (batch.h): rows buffered into one table and sent as
 * multi-row INSERT ... VALUES statements with bound parameters, or as the
 * dialect's array parameters.  Knows a connection, a dialect and the
 * table's quoted names only: nothing of the writer or the engine. */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "plan.h"
#include "rowbuf.h"

/* Rows per INSERT statement: hundreds amortise the per-statement cost of
 * the driver round trip; the dialect caps parameters per statement. */
#define WRITER_BATCH_ROWS 500
/* Rows per statement where a column's values go as one array parameter
 * (dialect array_types_sql), and the bytes that flush a batch sooner. */
#define WRITER_ARRAY_ROWS 10000
#define WRITER_ARRAY_BYTES (16u << 20)
/* Rows per parameter set (dialect param_sets): one bulk command each. */
#define WRITER_SET_ROWS 2000

/* Multi-row inserts into one table, buffered. */
struct batch {
  odbc_conn *c;
  const dialect *d;
  char *table_q;
  char **cols;             /* quoted column names */
  size_t ncols;
  SQLSMALLINT *ptypes;     /* ncols * rows_per */
  size_t rows_per;
  rowbuf pend;             /* the pending rows (not with row_array) */
  size_t lit_rows;         /* row_array: the rows in the literal being built */
  dwl_value *params;       /* rows_per * ncols: binding scratch of a flush, made at the first */
  odbc_stmt *full;         /* arrays: prepared for any number of rows */
  odbc_stmt *bound;        /* otherwise: for rows_per rows, bound to its own buffers */
  long long rows;          /* rows sent so far */
  int arrays;              /* one array parameter per column, sent on a thread */
  int row_array;           /* one array of the table's row type, sent on a thread */
  int sets;                /* a one-row INSERT executed for a parameter set of rows */
  dwl_buf *lit[2];         /* arrays: each column's literal (row_array: one), one set being sent */
  dwl_value *aparams[2];   /* and the parameters pointing at them */
  int cur;                 /* the set the next flush fills */
  int plan;                /* print instead of sending */
  FILE *sqlout;
  const char *what;        /* error prefix, or NULL */
};

/* "INSERT INTO t (a, b) " */
static void insert_head(const batch *b, dwl_buf *s)
{
  buf_printf(s, "INSERT INTO %s (", b->table_q);
  for (size_t i = 0; i < b->ncols; i++)
    buf_printf(s, "%s%s", i ? ", " : "", b->cols[i]);
  buf_adds(s, ") ");
}

/* The dialect's INSERT of an array of the table's row type, prepared once. */
static int row_array_prepare(batch *b, dwl_error *err)
{
  dwl_buf l;
  buf_init(&l, 0);
  for (size_t i = 0; i < b->ncols; i++)
    buf_printf(&l, "%s%s", i ? ", " : "", b->cols[i]);
  dwl_buf ins;
  buf_init(&ins, 0);
  buf_taint(&ins, &l);
  b->d->row_array_insert(&ins, b->table_q, l.data);
  buf_free(&l);
  char *sql = buf_steal(&ins);
  int rc = sql ? ostmt_prepare(b->c, sql, &b->full, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  free(sql);
  return rc;
}

int batch_open(odbc_conn *c, const dialect *d, const char *table_q, char *const *cols, const SQLSMALLINT *types,
               size_t ncols, const batch_opts *o, batch **out, dwl_error *err)
{
  static const batch_opts none;
  if (!o)
    o = &none;
  *out = NULL;
  batch *b = calloc(1, sizeof *b);
  if (!b)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  b->c = c;
  b->d = d;
  b->plan = o->print;
  b->sqlout = o->sqlout;
  b->what = o->what;
  rowbuf_init(&b->pend, ncols);
  int rc = (b->table_q = strdup(table_q)) && (b->cols = calloc(ncols ? ncols : 1, sizeof *b->cols))
               ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < ncols; i++, b->ncols++)
    if (!(b->cols[i] = strdup(cols[i])))
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rows_only = o->rows_only || o->print;
  b->row_array = o->whole_rows && d->row_array_insert && !rows_only;
  b->arrays = d->array_types_sql && !rows_only && !b->row_array;
  b->sets = d->param_sets && !rows_only && !b->row_array && !b->arrays;
  b->rows_per = b->arrays || b->row_array ? WRITER_ARRAY_ROWS : b->sets ? WRITER_SET_ROWS : WRITER_BATCH_ROWS;
  if (!b->arrays && !b->row_array && !b->sets && b->rows_per * ncols > d->max_params)
    b->rows_per = d->max_params / ncols;
  if (b->rows_per == 0)
    b->rows_per = 1;
  size_t nlit = b->row_array ? 1 : ncols;
  for (int k = 0; rc == 0 && (b->arrays || b->row_array) && k < 2; k++) {
    b->lit[k] = calloc(nlit, sizeof *b->lit[k]);
    b->aparams[k] = calloc(nlit, sizeof *b->aparams[k]);
    if (!b->lit[k] || !b->aparams[k]) {
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    for (size_t i = 0; i < nlit; i++)
      buf_init(&b->lit[k][i], 0);
  }
  if (rc == 0 && !b->row_array) {
    b->ptypes = calloc(b->rows_per * ncols, sizeof *b->ptypes);
    if (rowbuf_reserve(&b->pend, b->rows_per) != 0 || !b->ptypes)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < b->rows_per * ncols; i++)
      b->ptypes[i] = types[i % ncols];
  }
  if (rc == 0 && b->row_array)
    rc = row_array_prepare(b, err);
  if (rc != 0) {
    batch_free(b);
    return -1;
  }
  *out = b;
  return 0;
}

void batch_free(batch *b)
{
  if (!b)
    return;
  ostmt_free(b->full);  /* first: it waits for a batch being sent */
  ostmt_free(b->bound);
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; b->lit[k] && i < (b->row_array ? 1 : b->ncols); i++)
      buf_free(&b->lit[k][i]);
    free(b->lit[k]);
    free(b->aparams[k]);
  }
  rowbuf_free(&b->pend);
  free(b->ptypes);
  free(b->params);
  for (size_t i = 0; b->cols && i < b->ncols; i++)
    free(b->cols[i]);
  free(b->cols);
  free(b->table_q);
  free(b);
}

size_t batch_pending(const batch *b)
{
  return b->row_array ? b->lit_rows : b->pend.n;
}

long long batch_sent(const batch *b)
{
  return b->rows;
}

int batch_unadd(batch *b)
{
  return b->row_array ? -1 : rowbuf_pop(&b->pend);
}

/* "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for `rows` rows. */
static char *insert_sql(const batch *b, size_t rows)
{
  dwl_buf s;
  buf_init(&s, 0);
  insert_head(b, &s);
  buf_adds(&s, "VALUES ");
  for (size_t r = 0; r < rows; r++) {
    buf_adds(&s, r ? ", (" : "(");
    for (size_t i = 0; i < b->ncols; i++)
      buf_adds(&s, i ? ", ?" : "?");
    buf_addc(&s, ')');
  }
  return buf_steal(&s);
}

/* Does quoted identifier q name `name` (dialect quotes, the closing one
 * doubled inside)? */
static int quoted_is(const dialect *d, const char *q, const char *name, size_t n)
{
  if (*q != d->qopen)
    return strlen(q) == n && memcmp(q, name, n) == 0;
  size_t k = 0;
  for (q++; *q; q++) {
    if (*q == d->qclose) {
      if (q[1] != d->qclose)
        break;
      q++;
    }
    if (k >= n || name[k] != *q)
      return 0;
    k++;
  }
  return k == n;
}

/* "INSERT INTO t (a, b) SELECT * FROM unnest(?::integer[], ?::text[])",
 * each array of its column's type as the catalog has it. */
static char *insert_arrays_sql(const batch *b, dwl_error *err)
{
  const dialect *d = b->d;
  char **types = calloc(b->ncols, sizeof *types);
  if (!types) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    return NULL;
  }
  odbc_stmt *st = NULL;
  dwl_value p = {b->table_q, strlen(b->table_q), 0};
  int rc = ostmt_prepare(b->c, d->array_types_sql, &st, err);
  if (rc == 0)
    rc = ostmt_execute(st, &p, NULL, 1, err);
  const dwl_value *r;
  int f = 0;
  while (rc == 0 && (f = ostmt_fetch(st, &r, err)) == 1)
    for (size_t i = 0; i < b->ncols; i++)
      if (!types[i] && !r[0].is_null && !r[1].is_null && quoted_is(d, b->cols[i], r[0].data, r[0].len) &&
          !(types[i] = strdup(r[1].data)))
        f = -1;
  ostmt_free(st);
  char *sql = NULL;
  if (rc == 0 && f == 0) {
    dwl_buf s;
    buf_init(&s, 0);
    insert_head(b, &s);
    buf_adds(&s, "SELECT * FROM unnest(");
    for (size_t i = 0; i < b->ncols; i++)
      buf_printf(&s, "%s?::%s[]", i ? ", " : "", types[i] ? types[i] : "text");
    buf_addc(&s, ')');
    sql = buf_steal(&s);
    if (!sql)
      err_set(err, DWL_EXIT_FAILED, "out of memory");
  } else if (!err_isset(err)) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  for (size_t i = 0; i < b->ncols; i++)
    free(types[i]);
  free(types);
  return sql;
}

/* A column's pending values as an array literal: every element quoted,
 * '"' and backslash escaped, NULL bare.  Hand-written: no library writes
 * PostgreSQL array literals. */
static int array_literal(const batch *b, size_t col, dwl_buf *out)
{
  buf_reset(out);
  if (buf_addc(out, '{') != 0)
    return -1;
  for (size_t r = 0; r < b->pend.n; r++) {
    dwl_value v = rowbuf_get(&b->pend, r, col);
    if (r && buf_addc(out, ',') != 0)
      return -1;
    if (v.is_null) {
      if (buf_add(out, "NULL", 4) != 0)
        return -1;
      continue;
    }
    const char *p = v.data;
    if (buf_grow(out, v.len + 2) != 0 || buf_addc(out, '"') != 0)
      return -1;
    size_t run = 0;
    for (size_t i = 0; i < v.len; i++) {
      if (p[i] != '"' && p[i] != '\\')
        continue;
      if (buf_add(out, p + run, i - run) != 0 || buf_addc(out, '\\') != 0 || buf_addc(out, p[i]) != 0)
        return -1;
      run = i + 1;
    }
    if (buf_add(out, p + run, v.len - run) != 0 || buf_addc(out, '"') != 0)
      return -1;
  }
  return buf_addc(out, '}');
}

/* Builds the literals into the free set and sends them on the
 * connection's own thread: the engine goes on with the next rows while
 * the server inserts these (the connection's next use waits for them).
 * The set sent two flushes ago is free: the last send waited for it. */
static int batch_flush_arrays(batch *b, dwl_error *err)
{
  if (!b->full) {
    char *sql = insert_arrays_sql(b, err);
    int rc = sql ? ostmt_prepare(b->c, sql, &b->full, err) : -1;
    free(sql);
    if (rc != 0)
      return -1;
  }
  dwl_buf *lit = b->lit[b->cur];
  dwl_value *p = b->aparams[b->cur];
  for (size_t i = 0; i < b->ncols; i++) {
    if (array_literal(b, i, &lit[i]) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory buffering inserts");
    p[i].is_null = 0;
    p[i].data = lit[i].data;
    p[i].len = lit[i].len;
  }
  b->cur ^= 1;
  /* Text parameters: the statement casts each array. */
  return ostmt_execute_async(b->full, p, b->ncols, b->what, err);
}

/* The rows' literal, built as they came, closed and sent on the
 * connection's own thread while the next one is built (the connection's
 * next use waits for it, and fails with its failure).  The other literal
 * is free once the batch before is done. */
static int batch_flush_row_array(batch *b, dwl_error *err)
{
  dwl_buf *lit = b->lit[b->cur];
  dwl_value *p = b->aparams[b->cur];
  if (b->d->row_array_end(lit) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (odbc_sync(b->c, err) != 0)
    return -1;
  p->is_null = 0;
  p->data = lit->data;
  p->len = lit->len;
  b->cur ^= 1;
  buf_reset(b->lit[b->cur]);
  return ostmt_execute_async(b->full, p, 1, b->what, err);
}

static int batch_flush_rows(batch *b, dwl_error *err)
{
  size_t nc = b->ncols, n = b->pend.n * nc;
  if (!b->params && !(b->params = calloc(b->rows_per * nc, sizeof *b->params)))
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < n; i++)
    b->params[i] = rowbuf_get(&b->pend, i / nc, i % nc);
  int rc = 0;
  if (b->sets) {
    /* Any number of rows, one statement prepared for one row. */
    odbc_stmt **st = &b->bound;
    if (!*st) {
      char *sql = insert_sql(b, 1);
      rc = sql ? ostmt_prepare(b->c, sql, st, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
      free(sql);
    }
    if (rc == 0)
      rc = ostmt_execute_set(*st, b->params, b->ptypes, nc, b->pend.n, err);
  } else if (!b->plan && b->pend.n == b->rows_per) {
    /* A full batch: its values are copied into the buffers the statement
     * stays bound to.  (Sent synchronously: on a thread of its own it was
     * slower here, on SQLite and on MariaDB, where building a batch costs
     * little next to executing it.) */
    odbc_stmt **st = &b->bound;
    if (!*st) {
      char *sql = insert_sql(b, b->rows_per);
      rc = sql ? ostmt_prepare(b->c, sql, st, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
      free(sql);
      if (rc == 0)
        rc = ostmt_bind_slots(*st, b->ptypes, n, err);
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
      rc = ostmt_set(*st, i, &b->params[i], err);
    if (rc == 0)
      rc = ostmt_execute(*st, NULL, NULL, 0, err);
  } else if (b->plan) {
    /* One line of parameters per row; dwload sends them rows_per at a time. */
    if (b->sqlout) {
      char *sql = insert_sql(b, 1);
      fprintf(b->sqlout, "%s;\n", sql ? sql : "INSERT");
      free(sql);
      for (size_t r = 0; r < b->pend.n; r++)
        print_params(b->sqlout, &b->params[r * nc], nc);
    }
  } else {
    /* The last, partial batch: prepared once, used once. */
    char *sql = insert_sql(b, b->pend.n);
    rc = sql ? odbc_exec(b->c, sql, b->params, b->ptypes, n, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
    free(sql);
  }
  if (rc != 0 && b->what)
    err_prefix(err, "%s", b->what);
  return rc;
}

int batch_flush(batch *b, dwl_error *err)
{
  size_t n = batch_pending(b);
  if (n == 0)
    return 0;
  /* An arrays failure, here or of the batch sent before, names the table already. */
  int rc = b->row_array ? batch_flush_row_array(b, err)
           : b->arrays  ? batch_flush_arrays(b, err)
                        : batch_flush_rows(b, err);
  b->rows += (long long)n;
  b->lit_rows = 0;
  rowbuf_reset(&b->pend);
  return rc;
}

int batch_add(batch *b, const dwl_value *row, dwl_error *err)
{
  if (b->row_array) {
    if (b->d->row_array_add(b->lit[b->cur], b->lit_rows == 0, row, b->ncols) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    return ++b->lit_rows >= b->rows_per ? batch_flush(b, err) : 0;
  }
  if (rowbuf_add(&b->pend, row) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory buffering inserts");
  return b->pend.n == b->rows_per || (b->arrays && b->pend.bytes.len >= WRITER_ARRAY_BYTES) ? batch_flush(b, err) : 0;
}
