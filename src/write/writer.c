/* Target writer: rows and engine operations to bound SQL statements.
 *
 * Inserts go out as multi-row INSERT ... VALUES statements.  Expires, type 1
 * updates, upsert updates, removals, and the history repair's reshapes and
 * drops of stored versions go one of two ways, by dialect:
 * per key through a prepared statement (SQLite, in-process and indexed), or
 * staged into temporary tables with the same batched inserts and applied
 * by one UPDATE ... FROM / UPDATE ... JOIN per kind at the end (PostgreSQL,
 * MariaDB), never one round trip per row.  Staged operations name the
 * version they change by key and valid_from, so inserts of new versions may
 * reach the table before them. */
#include "writer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fingerprint.h"
#include "keymap.h"

/* Rows per INSERT statement: hundreds amortise the per-statement cost of
 * the driver round trip; the dialect caps parameters per statement. */
#define WRITER_BATCH_ROWS 500
/* Rows per statement where a column's values go as one array parameter
 * (dialect array_types_sql), and the bytes that flush a batch sooner. */
#define WRITER_ARRAY_ROWS 10000
#define WRITER_ARRAY_BYTES (16u << 20)

enum { SLOT_EXPIRE, SLOT_T1_CUR, SLOT_T1_ALL, SLOT_UPDATE, SLOT_REMOVE, SLOT_DROP, SLOT_RESHAPE, NSLOTS };
/* Stages: one per slot, plus the keys of a keyed lookup. */
enum { STAGE_KEYS = NSLOTS, NSTAGES };

typedef struct pval {
  size_t off, len;
  int is_null;
} pval;

/* Multi-row inserts into one table, buffered. */
typedef struct ins_batch {
  const char *table_q;
  char **cols;             /* quoted column names (borrowed) */
  size_t ncols;
  SQLSMALLINT *ptypes;     /* ncols * rows_per */
  size_t rows_per;
  pval *pend;              /* rows_per * ncols pending values */
  size_t npend;
  dwl_buf arena;           /* their bytes */
  odbc_stmt *full;         /* arrays: prepared for any number of rows */
  odbc_stmt *bound;        /* otherwise: for rows_per rows, bound to its own buffers */
  long long rows;          /* rows sent so far */
  int arrays;              /* one array parameter per column, sent on a thread */
  dwl_buf *lit[2];         /* arrays: each column's literal, one set being sent */
  dwl_value *aparams[2];   /* and the parameters pointing at them */
  int cur;                 /* the set the next flush fills */
} ins_batch;

/* A staged kind of operation: its temporary table and the statement that
 * applies it. */
typedef struct stage {
  int used;
  char name[32];
  char **cols;             /* quoted stage column names */
  size_t ncols;
  dwl_column *decl;        /* their types */
  ins_batch b;
  char *apply_sql;
  long long applied;       /* rows of b already applied */
} stage;

struct writer {
  target *t;
  const scd_cols *cols;
  int plan;
  FILE *sqlout;
  ins_batch main;
  char **main_cols;
  char *what;              /* "inserting into TABLE", for errors of batches sent on their own */
  dwl_value *params;       /* scratch for binding */
  size_t nparams;          /* its capacity */
  dwl_value *row;          /* one row being built */
  unsigned char *from_t1;  /* per table column: a type 1 column (takes t1vals) */
  odbc_stmt *slots[NSLOTS];
  char *slot_sql[NSLOTS];
  SQLSMALLINT *slot_types[NSLOTS];
  stage stages[NSTAGES];
  int64_t next_sk;
  int staged_expire;       /* the last expire was staged, not yet applied: */
  fp128 staged_key;        /* its key */
  int64_t staged_vf;       /* and the valid_from of the version it closes */
  char vf[32], vt[32], sk[68], ovf[32];
  long *rs_what;           /* what a reshape sets (reshape_set) */
  size_t rs_n;
  int staged_t1;           /* a type 1 overwrite of a current version was staged: */
  fp128 t1_key;            /* its key */
};

static SQLSMALLINT col_ptype(const writer *w, size_t tc)
{
  const tcol *c = &w->t->cols[tc];
  int ty = c->role == TC_CURRENT || c->role == TC_DELETED ? DWL_TYPE_BOOLEAN : c->decl.type;
  return w->t->d->param_type(ty);
}

/* Target column of source column `src`. */
static size_t tcol_of(const writer *w, size_t src)
{
  return src + (w->t->ix[TC_SK] >= 0 ? 1 : 0);
}

/* ---- printing (plan --sql) ------------------------------------------------ */

static void print_value(FILE *f, const dwl_value *v)
{
  if (v->is_null) {
    fputs("NULL", f);
    return;
  }
  fputc('\'', f);
  for (size_t i = 0; i < v->len; i++) {
    if (v->data[i] == '\'')
      fputc('\'', f);
    fputc(v->data[i], f);
  }
  fputc('\'', f);
}

static void print_params(FILE *f, const dwl_value *p, size_t n)
{
  fputs("  -- (", f);
  for (size_t i = 0; i < n; i++) {
    if (i)
      fputs(", ", f);
    print_value(f, &p[i]);
  }
  fputs(")\n", f);
}

/* Runs (or in plan mode prints) one statement; `s` caches its preparation
 * when not NULL. */
static int run_sql(writer *w, odbc_stmt **s, const char *sql, const dwl_value *params, const SQLSMALLINT *types,
                   size_t n, dwl_error *err)
{
  if (!sql)  /* its building failed: neither shown nor run */
    return err_set(err, DWL_EXIT_FAILED, "a statement could not be built (out of memory or too long); "
                                         "nothing was executed");
  if (w->plan) {
    if (w->sqlout) {
      fprintf(w->sqlout, "%s;\n", sql);
      if (n)
        print_params(w->sqlout, params, n);
    }
    return 0;
  }
  int rc;
  if (s) {
    if (!*s && ostmt_prepare(w->t->c, sql, s, err) != 0)
      return -1;
    rc = ostmt_execute(*s, params, types, n, err);
  } else {
    rc = odbc_exec(w->t->c, sql, params, types, n, err);
  }
  if (rc != 0)
    err_prefix(err, "writing %s", w->t->spec->target_table);
  return rc;
}

/* ---- batched inserts -------------------------------------------------------- */

static int batch_init(writer *w, ins_batch *b, const char *table_q, char **cols, const SQLSMALLINT *types,
                      size_t ncols, dwl_error *err)
{
  memset(b, 0, sizeof *b);
  b->table_q = table_q;
  b->cols = cols;
  b->ncols = ncols;
  buf_init(&b->arena, 0);
  b->arrays = w->t->d->array_types_sql && !w->plan;
  b->rows_per = b->arrays ? WRITER_ARRAY_ROWS : WRITER_BATCH_ROWS;
  if (!b->arrays && b->rows_per * ncols > w->t->d->max_params)
    b->rows_per = w->t->d->max_params / ncols;
  if (b->rows_per == 0)
    b->rows_per = 1;
  for (int k = 0; b->arrays && k < 2; k++) {
    b->lit[k] = calloc(ncols, sizeof *b->lit[k]);
    b->aparams[k] = calloc(ncols, sizeof *b->aparams[k]);
    if (!b->lit[k] || !b->aparams[k])
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; i < ncols; i++)
      buf_init(&b->lit[k][i], 0);
  }
  b->pend = calloc(b->rows_per * ncols, sizeof *b->pend);
  b->ptypes = calloc(b->rows_per * ncols, sizeof *b->ptypes);
  if (!b->pend || !b->ptypes)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < b->rows_per * ncols; i++)
    b->ptypes[i] = types[i % ncols];
  return 0;
}

/* Binding scratch (writer.params) a flush of b needs: a full batch's
 * values, or none when they go as arrays. */
static size_t batch_params(const ins_batch *b)
{
  return b->arrays ? 0 : b->rows_per * b->ncols;
}

static void batch_free(ins_batch *b)
{
  ostmt_free(b->full);  /* first: it waits for a batch being sent */
  ostmt_free(b->bound);
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; b->lit[k] && i < b->ncols; i++)
      buf_free(&b->lit[k][i]);
    free(b->lit[k]);
    free(b->aparams[k]);
  }
  buf_free(&b->arena);
  free(b->pend);
  free(b->ptypes);
  memset(b, 0, sizeof *b);
}

/* "INSERT INTO t (a, b) " */
static void insert_head(const ins_batch *b, dwl_buf *s)
{
  buf_printf(s, "INSERT INTO %s (", b->table_q);
  for (size_t i = 0; i < b->ncols; i++)
    buf_printf(s, "%s%s", i ? ", " : "", b->cols[i]);
  buf_adds(s, ") ");
}

/* "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for `rows` rows. */
static char *insert_sql(const ins_batch *b, size_t rows)
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
static char *insert_arrays_sql(const writer *w, const ins_batch *b, dwl_error *err)
{
  const dialect *d = w->t->d;
  char **types = calloc(b->ncols, sizeof *types);
  if (!types) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    return NULL;
  }
  odbc_stmt *st = NULL;
  dwl_value p = {b->table_q, strlen(b->table_q), 0};
  int rc = ostmt_prepare(w->t->c, d->array_types_sql, &st, err);
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
static int array_literal(const ins_batch *b, size_t col, dwl_buf *out)
{
  buf_reset(out);
  if (buf_addc(out, '{') != 0)
    return -1;
  for (size_t r = 0; r < b->npend; r++) {
    const pval *v = &b->pend[r * b->ncols + col];
    if (r && buf_addc(out, ',') != 0)
      return -1;
    if (v->is_null) {
      if (buf_add(out, "NULL", 4) != 0)
        return -1;
      continue;
    }
    const char *p = b->arena.data + v->off;
    if (buf_grow(out, v->len + 2) != 0 || buf_addc(out, '"') != 0)
      return -1;
    size_t run = 0;
    for (size_t i = 0; i < v->len; i++) {
      if (p[i] != '"' && p[i] != '\\')
        continue;
      if (buf_add(out, p + run, i - run) != 0 || buf_addc(out, '\\') != 0 || buf_addc(out, p[i]) != 0)
        return -1;
      run = i + 1;
    }
    if (buf_add(out, p + run, v->len - run) != 0 || buf_addc(out, '"') != 0)
      return -1;
  }
  return buf_addc(out, '}');
}

/* Builds the literals into the free set and sends them on the
 * connection's own thread: the engine goes on with the next rows while
 * the server inserts these (the connection's next use waits for them).
 * The set sent two flushes ago is free: the last send waited for it. */
static int batch_flush_arrays(writer *w, ins_batch *b, dwl_error *err)
{
  if (!b->full) {
    char *sql = insert_arrays_sql(w, b, err);
    int rc = sql ? ostmt_prepare(w->t->c, sql, &b->full, err) : -1;
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
  return ostmt_execute_async(b->full, p, b->ncols, w->what, err);
}

static int batch_flush_rows(writer *w, ins_batch *b, dwl_error *err)
{
  size_t nc = b->ncols, n = b->npend * nc;
  for (size_t i = 0; i < n; i++) {
    w->params[i].is_null = b->pend[i].is_null;
    w->params[i].len = b->pend[i].len;
    w->params[i].data = b->pend[i].is_null ? NULL : b->arena.data + b->pend[i].off;
  }
  int rc = 0;
  if (!w->plan && b->npend == b->rows_per) {
    /* A full batch: its values are copied into the buffers the statement
     * stays bound to.  (Sent synchronously: on a thread of its own it was
     * slower here, on SQLite and on MariaDB, where building a batch costs
     * little next to executing it.) */
    odbc_stmt **st = &b->bound;
    if (!*st) {
      char *sql = insert_sql(b, b->rows_per);
      rc = sql ? ostmt_prepare(w->t->c, sql, st, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
      free(sql);
      if (rc == 0)
        rc = ostmt_bind_slots(*st, b->ptypes, n, err);
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
      rc = ostmt_set(*st, i, &w->params[i], err);
    if (rc == 0)
      rc = ostmt_execute(*st, NULL, NULL, 0, err);
  } else if (w->plan) {
    /* One line of parameters per row; dwload sends them rows_per at a time. */
    if (w->sqlout) {
      char *sql = insert_sql(b, 1);
      fprintf(w->sqlout, "%s;\n", sql ? sql : "INSERT");
      free(sql);
      for (size_t r = 0; r < b->npend; r++)
        print_params(w->sqlout, &w->params[r * nc], nc);
    }
  } else {
    /* The last, partial batch: prepared once, used once. */
    char *sql = insert_sql(b, b->npend);
    rc = sql ? odbc_exec(w->t->c, sql, w->params, b->ptypes, n, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
    free(sql);
  }
  if (rc != 0)
    err_prefix(err, "%s", w->what);
  return rc;
}

static int batch_flush(writer *w, ins_batch *b, dwl_error *err)
{
  if (b->npend == 0)
    return 0;
  /* An arrays failure, here or of the batch sent before, names the table already. */
  int rc = b->arrays ? batch_flush_arrays(w, b, err) : batch_flush_rows(w, b, err);
  b->rows += (long long)b->npend;
  b->npend = 0;
  buf_reset(&b->arena);
  return rc;
}

static int stages_apply(writer *w, dwl_error *err);

static int batch_add(writer *w, ins_batch *b, const dwl_value *row, dwl_error *err)
{
  pval *p = &b->pend[b->npend * b->ncols];
  for (size_t i = 0; i < b->ncols; i++) {
    p[i].is_null = row[i].is_null;
    p[i].len = row[i].is_null ? 0 : row[i].len;
    p[i].off = b->arena.len;
    if (!p[i].is_null && buf_add(&b->arena, row[i].data, row[i].len) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory buffering inserts");
  }
  b->npend++;
  return b->npend == b->rows_per || (b->arrays && b->arena.len >= WRITER_ARRAY_BYTES) ? batch_flush(w, b, err) : 0;
}

/* ---- per-key statements (SQLite) ------------------------------------------- */

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

/* SET list "a = ?, b = ?" over source columns idx[]. */
static void set_list(const writer *w, dwl_buf *b, const size_t *idx, size_t n, SQLSMALLINT *types, size_t *nt)
{
  for (size_t i = 0; i < n; i++) {
    size_t tc = tcol_of(w, idx[i]);
    buf_printf(b, "%s%s = ?", i ? ", " : "", w->t->cols[tc].q);
    types[(*nt)++] = col_ptype(w, tc);
  }
}

static void cur_param_type(const writer *w, SQLSMALLINT *types, size_t *nt)
{
  if (!w->t->spec->current && w->t->open_end[0])
    types[(*nt)++] = col_ptype(w, (size_t)w->t->ix[TC_VALID_TO]);
}

/* ---- history repair: what reshape and drop touch ------------------------- */

enum { SC_VF = -1, SC_VT = -2, SC_DEL = -3, SC_OLDVF = -4, SC_OLDDEL = -5, SC_CUR = -6, SC_SK = -7 };

/* The bookkeeping column an SC_* value belongs to. */
static int stage_role(long what)
{
  switch (what) {
  case SC_VF:
  case SC_OLDVF: return TC_VALID_FROM;
  case SC_VT: return TC_VALID_TO;
  case SC_CUR: return TC_CURRENT;
  case SC_SK: return TC_SK;
  default: return TC_DELETED;
  }
}

static size_t what_tcol(const writer *w, long what)
{
  return what < 0 ? (size_t)w->t->ix[stage_role(what)] : tcol_of(w, (size_t)what);
}

/* What a reshape sets (SC_* values or source indexes): the bookkeeping
 * columns, every non-key source column, and a hash surrogate key, which
 * follows valid_from (a sequence one stays). */
static size_t reshape_set(const writer *w, long *what)
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

static int build_slots(writer *w, dwl_error *err)
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

static int run_slot(writer *w, int slot, const dwl_value *params, size_t n, dwl_error *err)
{
  return run_sql(w, &w->slots[slot], w->slot_sql[slot], params, w->slot_types[slot], n, err);
}

static size_t key_params(const writer *w, const dwl_value *row, dwl_value *p);

/* ---- staged operations (PostgreSQL, MariaDB) ------------------------------ */

/* Quoted name of a stage column: source columns keep their names; the
 * bookkeeping values get names of their own. */
static char *stage_col_name(const writer *w, long what, dwl_error *err)
{
  static const char *const names[] = {"dwl_valid_from", "dwl_valid_to", "dwl_deleted", "dwl_old_valid_from",
                                      "dwl_old_deleted", "dwl_current", "dwl_sk"};
  const char *name = what < 0 ? names[-what - 1] : w->t->cols[tcol_of(w, (size_t)what)].name;
  dwl_buf q;
  buf_init(&q, 0);
  if (dialect_quote(w->t->d, name, &q, "stage column", err) != 0) {
    buf_free(&q);
    return NULL;
  }
  return buf_steal(&q);
}

/* Stage columns: the key, then `extra` (source indexes or SC_* values). */
static int stage_init(writer *w, int kind, const char *name, const long *extra, size_t nextra, dwl_error *err)
{
  stage *s = &w->stages[kind];
  const target *t = w->t;
  size_t n = w->cols->nkey + nextra;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->cols = calloc(n, sizeof *s->cols);
  s->decl = calloc(n, sizeof *s->decl);
  SQLSMALLINT *types = calloc(n, sizeof *types);
  if (!s->cols || !s->decl || !types) {
    free(types);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  s->ncols = n;
  for (size_t i = 0; i < n; i++) {
    long what = i < w->cols->nkey ? (long)w->cols->key[i] : extra[i - w->cols->nkey];
    size_t tc = what < 0 ? (size_t)t->ix[stage_role(what)] : tcol_of(w, (size_t)what);
    s->cols[i] = stage_col_name(w, what, err);
    if (!s->cols[i]) {
      free(types);
      return -1;
    }
    s->decl[i] = t->cols[tc].decl;
    if (t->cols[tc].role == TC_CURRENT || t->cols[tc].role == TC_DELETED)
      s->decl[i].type = DWL_TYPE_BOOLEAN;
    types[i] = col_ptype(w, tc);
  }
  int rc = batch_init(w, &s->b, s->name, s->cols, types, n, err);
  free(types);
  return rc;
}

/* "d.k1 = s.k1 AND d.k2 = s.k2" (keys with a NULL never reach a stage). */
static void join_keys(const writer *w, const stage *s, dwl_buf *b)
{
  for (size_t i = 0; i < w->cols->nkey; i++)
    buf_printf(b, "%sd.%s = s.%s", i ? " AND " : "", w->t->cols[tcol_of(w, w->cols->key[i])].q, s->cols[i]);
}

/* The statement applying a stage: SET pairs are (target column, stage
 * column); with_vf adds the version's valid_from to the join. */
static char *apply_sql(const writer *w, int kind, const char *const *tset, const char *const *sset, size_t nset,
                       const char *extra_set, int with_vf)
{
  const target *t = w->t;
  const dialect *d = t->d;
  const stage *s = &w->stages[kind];
  dwl_buf on, b;
  buf_init(&on, 0);
  buf_init(&b, 0);
  join_keys(w, s, &on);
  /* Operations on a current version repeat the current predicate: it is
   * what lets the key index (partial, on current versions) serve the join. */
  if (kind != SLOT_REMOVE && with_vf) {
    buf_printf(&on, " AND d.%s = s.%s", t->cols[t->ix[TC_VALID_FROM]].q, s->cols[w->cols->nkey]);
    if (t->ix[TC_CURRENT] >= 0)
      buf_printf(&on, " AND d.%s = %s", t->cols[t->ix[TC_CURRENT]].q, d->true_lit);
  }
  buf_taint(&b, &on);  /* no statement around a join condition that failed */
  if (kind == SLOT_REMOVE) {
    d->delete_matching(&b, t->table_q, s->name, on.data);
  } else {
    d->update_begin(&b, t->table_q, s->name, on.data);
    for (size_t i = 0; i < nset; i++)
      buf_printf(&b, "%s%s%s = s.%s", i ? ", " : "", d->set_prefix, tset[i], sset[i]);
    if (extra_set)
      buf_printf(&b, ", %s%s", d->set_prefix, extra_set);
    d->update_end(&b, s->name, on.data);
  }
  buf_free(&on);
  return buf_steal(&b);
}

/* SET pairs for source columns idx[], whose stage columns start at `off`. */
static char *apply_set(const writer *w, int kind, const size_t *idx, size_t n, size_t off, const char *extra,
                       int with_vf)
{
  const char **tset = calloc(n ? n : 1, sizeof *tset), **sset = calloc(n ? n : 1, sizeof *sset);
  char *sql = NULL;
  if (tset && sset) {
    for (size_t i = 0; i < n; i++) {
      tset[i] = w->t->cols[tcol_of(w, idx[i])].q;
      sset[i] = w->stages[kind].cols[off + i];
    }
    sql = apply_sql(w, kind, tset, sset, n, extra, with_vf);
  }
  free(tset);
  free(sset);
  return sql;
}

/* Staged drop and reshape: key, valid_from [, deleted] of the stored
 * version, then (reshape) what it becomes; applied by one DELETE or UPDATE
 * joined on those.  Staged on SQLite too (UPDATE ... FROM, SQLite 3.33):
 * the key index covers current versions only, so a statement per closed
 * version would scan the table each time. */
static int history_stages(writer *w, dwl_error *err)
{
  const target *t = w->t;
  size_t nk = w->cols->nkey;
  int del = t->ix[TC_DELETED] >= 0;
  long *extra = calloc(t->ncols + 6, sizeof *extra);
  if (!extra)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = 0;
  for (int slot = SLOT_DROP; rc == 0 && slot <= SLOT_RESHAPE; slot++) {
    size_t ne = 0;
    extra[ne++] = slot == SLOT_DROP ? SC_VF : SC_OLDVF;
    if (del)
      extra[ne++] = slot == SLOT_DROP ? SC_DEL : SC_OLDDEL;
    size_t nset = slot == SLOT_RESHAPE ? reshape_set(w, extra + ne) : 0;
    rc = stage_init(w, slot, slot == SLOT_DROP ? "dwl_stage_drop" : "dwl_stage_reshape", extra, ne + nset, err);
    if (rc != 0)
      break;
    const stage *s = &w->stages[slot];
    dwl_buf on, b;
    buf_init(&on, 0);
    buf_init(&b, 0);
    join_keys(w, s, &on);
    buf_printf(&on, " AND d.%s = s.%s", t->cols[t->ix[TC_VALID_FROM]].q, s->cols[nk]);
    if (del)
      buf_printf(&on, " AND d.%s = s.%s", t->cols[t->ix[TC_DELETED]].q, s->cols[nk + 1]);
    buf_taint(&b, &on);  /* no statement around a join condition that failed */
    if (slot == SLOT_DROP) {
      t->d->delete_matching(&b, t->table_q, s->name, on.data);
    } else {
      t->d->update_begin(&b, t->table_q, s->name, on.data);
      for (size_t i = 0; i < nset; i++)
        buf_printf(&b, "%s%s%s = s.%s", i ? ", " : "", t->d->set_prefix, t->cols[what_tcol(w, extra[ne + i])].q,
                   s->cols[nk + ne + i]);
      t->d->update_end(&b, s->name, on.data);
    }
    buf_free(&on);
    w->stages[slot].apply_sql = buf_steal(&b);
  }
  free(extra);
  return rc;
}

static int build_stages(writer *w, dwl_error *err)
{
  const target *t = w->t;
  const scd_cols *c = w->cols;
  size_t nk = c->nkey;
  long *extra = calloc(t->ncols + 4, sizeof *extra);
  if (!extra)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = 0;
  size_t ne;
  if (t->spec->mode == MODE_SCD2) {
    /* expire: key, valid_from, valid_to [, deleted] */
    ne = 0;
    extra[ne++] = SC_VF;
    extra[ne++] = SC_VT;
    if (t->ix[TC_DELETED] >= 0)
      extra[ne++] = SC_DEL;
    rc = stage_init(w, SLOT_EXPIRE, "dwl_stage_expire", extra, ne, err);
    if (rc == 0) {
      stage *s = &w->stages[SLOT_EXPIRE];
      const char *tset[2] = {t->cols[t->ix[TC_VALID_TO]].q, NULL};
      const char *sset[2] = {s->cols[nk + 1], NULL};
      size_t nset = 1;
      if (t->ix[TC_DELETED] >= 0) {
        tset[nset] = t->cols[t->ix[TC_DELETED]].q;
        sset[nset++] = s->cols[nk + 2];
      }
      char cur[300] = "";
      if (t->ix[TC_CURRENT] >= 0)
        snprintf(cur, sizeof cur, "%s = %s", t->cols[t->ix[TC_CURRENT]].q, t->d->false_lit);
      s->apply_sql = apply_sql(w, SLOT_EXPIRE, tset, sset, nset, cur[0] ? cur : NULL, 1);
    }
    /* type 1, current version: key, valid_from, t1...; every version: key, t1... */
    if (rc == 0 && c->nt1) {
      ne = 0;
      extra[ne++] = SC_VF;
      for (size_t i = 0; i < c->nt1; i++)
        extra[ne++] = (long)c->t1[i];
      rc = stage_init(w, SLOT_T1_CUR, "dwl_stage_type1", extra, ne, err);
      if (rc == 0)
        w->stages[SLOT_T1_CUR].apply_sql = apply_set(w, SLOT_T1_CUR, c->t1, c->nt1, nk + 1, NULL, 1);
      if (rc == 0)
        rc = stage_init(w, SLOT_T1_ALL, "dwl_stage_type1_all", extra + 1, ne - 1, err);
      if (rc == 0)
        w->stages[SLOT_T1_ALL].apply_sql = apply_set(w, SLOT_T1_ALL, c->t1, c->nt1, nk, NULL, 0);
    }
    if (rc == 0)
      rc = history_stages(w, err);
  } else {
    ne = 0;
    for (size_t i = 0; i < c->nt2; i++)
      extra[ne++] = (long)c->t2[i];
    rc = stage_init(w, SLOT_UPDATE, "dwl_stage_update", extra, ne, err);
    if (rc == 0)
      w->stages[SLOT_UPDATE].apply_sql = apply_set(w, SLOT_UPDATE, c->t2, c->nt2, nk, NULL, 0);
  }
  if (rc == 0)
    rc = stage_init(w, SLOT_REMOVE, "dwl_stage_remove", extra, 0, err);
  if (rc == 0)
    rc = stage_init(w, STAGE_KEYS, "dwl_stage_keys", extra, 0, err);
  if (rc == 0)
    w->stages[SLOT_REMOVE].apply_sql = apply_sql(w, SLOT_REMOVE, NULL, NULL, 0, NULL, 0);
  free(extra);
  for (int k = 0; rc == 0 && k < NSLOTS; k++)
    if (w->stages[k].ncols && !w->stages[k].apply_sql)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  return rc;
}

static int stage_create(writer *w, stage *s, dwl_error *err)
{
  dwl_buf b;
  buf_init(&b, 0);
  buf_printf(&b, "CREATE TEMPORARY TABLE %s (", s->name);
  for (size_t i = 0; i < s->ncols; i++) {
    char ty[128];
    const char *type = s->decl[i].type == DWL_TYPE_BOOLEAN ? w->t->d->flag_type
                                                            : w->t->d->type_sql(&s->decl[i], ty, sizeof ty);
    buf_printf(&b, "%s%s %s", i ? ", " : "", s->cols[i], type);
  }
  buf_addc(&b, ')');
  int rc = b.data ? run_sql(w, NULL, b.data, NULL, NULL, 0, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&b);
  return rc;
}

/* Queues one staged operation; the temporary table is made on first use. */
static int stage_add(writer *w, int kind, const dwl_value *vals, dwl_error *err)
{
  stage *s = &w->stages[kind];
  if (!s->used) {
    if (stage_create(w, s, err) != 0)
      return -1;
    s->used = 1;
  }
  return batch_add(w, &s->b, vals, err);
}

/* Equality joins find keys through the index; a NULL key part needs a
 * NULL-safe per-key statement instead. */
static int staged_key(const writer *w, const dwl_value *keyrow)
{
  for (size_t i = 0; i < w->cols->nkey; i++)
    if (keyrow[w->cols->key[i]].is_null)
      return 0;
  return 1;
}

static int staged(const writer *w, const dwl_value *keyrow)
{
  return w->t->d->stages_writes && staged_key(w, keyrow);
}

/* Applies what is staged.  Staged operations name the version they change
 * by key and valid_from, so they commute with inserts of later versions and
 * can wait for the end; see sink_insert for the one exception. */
static int stages_apply(writer *w, dwl_error *err)
{
  /* Type 1 overwrites of a current version come before its expire: they
   * find it by the current predicate, and the engine emits them first. */
  static const int order[NSLOTS] = {SLOT_T1_CUR, SLOT_EXPIRE, SLOT_T1_ALL, SLOT_UPDATE,
                                     SLOT_REMOVE, SLOT_DROP, SLOT_RESHAPE};
  _Static_assert(NSLOTS == 7, "every slot has its place in the order");
  for (int i = 0; i < NSLOTS; i++) {
    int k = order[i];
    stage *s = &w->stages[k];
    if (!s->used || (s->b.npend == 0 && s->b.rows == s->applied))
      continue;
    if (batch_flush(w, &s->b, err) != 0)
      return -1;
    /* Fresh statistics let the planner probe the key index per staged row
     * instead of hashing the whole table. */
    if (w->t->d->analyze_sql) {
      char sql[96];
      snprintf(sql, sizeof sql, "%s %s", w->t->d->analyze_sql, s->name);
      if (run_sql(w, NULL, sql, NULL, NULL, 0, err) != 0)
        return -1;
    }
    if (run_sql(w, NULL, s->apply_sql, NULL, NULL, 0, err) != 0)
      return -1;
    /* Emptied, so the next application only carries what came since. */
    char sql[80];
    snprintf(sql, sizeof sql, "DELETE FROM %s", s->name);
    if (run_sql(w, NULL, sql, NULL, NULL, 0, err) != 0)
      return -1;
    s->applied = s->b.rows;
  }
  return 0;
}

/* ---- setup ------------------------------------------------------------------ */

static int load_max_sk(writer *w, dwl_error *err)
{
  const target *t = w->t;
  w->next_sk = 1;
  if (!t->exists || t->ix[TC_SK] < 0 || t->spec->sk_strategy != SK_SEQUENCE)
    return 0;
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT MAX(%s) FROM %s", t->cols[t->ix[TC_SK]].q, t->table_q);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  const dwl_value *r;
  int rc = ostmt_execute(st, NULL, NULL, 0, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1) {
    rc = 0;
    if (!r[0].is_null) {
      char *end;
      long long v = strtoll(r[0].data, &end, 10);
      if (end == r[0].data || *end)
        rc = err_set(err, DWL_EXIT_FAILED, "table %s: surrogate key column %s holds '%s', not an integer",
                     t->spec->target_table, t->cols[t->ix[TC_SK]].name, r[0].data);
      w->next_sk = v + 1;
    }
  }
  ostmt_free(st);
  return rc < 0 ? -1 : 0;
}

int writer_open(target *t, const scd_cols *cols, int plan, FILE *sqlout, writer **out, dwl_error *err)
{
  *out = NULL;
  writer *w = calloc(1, sizeof *w);
  if (!w)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  w->t = t;
  w->cols = cols;
  w->plan = plan;
  w->sqlout = sqlout;
  w->main_cols = calloc(t->ncols, sizeof *w->main_cols);
  SQLSMALLINT *types = calloc(t->ncols, sizeof *types);
  w->row = calloc(t->ncols, sizeof *w->row);
  size_t wl = strlen(t->spec->target_table) + 32;
  w->what = malloc(wl);
  if (w->what)
    snprintf(w->what, wl, "inserting into %s", t->spec->target_table);
  int rc = w->main_cols && types && w->row && w->what ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
    w->main_cols[i] = t->cols[i].q;
    types[i] = col_ptype(w, i);
  }
  if (rc == 0)
    rc = batch_init(w, &w->main, t->table_q, w->main_cols, types, t->ncols, err);
  free(types);
  if (rc == 0 && cols) {
    w->from_t1 = calloc(t->ncols, 1);
    if (!w->from_t1)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t j = 0; rc == 0 && j < cols->nt1; j++)
      w->from_t1[tcol_of(w, cols->t1[j])] = 1;
  }
  if (rc == 0 && cols) {
    rc = build_slots(w, err);
    if (rc == 0 && t->d->stages_writes)
      rc = build_stages(w, err);
    else if (rc == 0)
      rc = stage_init(w, STAGE_KEYS, "dwl_stage_keys", NULL, 0, err);
    if (rc == 0 && !t->d->stages_writes && t->spec->mode == MODE_SCD2)
      rc = history_stages(w, err);
  }
  /* Scratch for binding: a full batch of the widest table, or one row of a
   * per-key statement. */
  if (rc == 0) {
    size_t most = batch_params(&w->main);
    for (int k = 0; k < NSTAGES; k++)
      if (batch_params(&w->stages[k].b) > most)
        most = batch_params(&w->stages[k].b);
    w->nparams = most + t->ncols + (cols ? cols->nkey : 0) + 8;
    w->params = calloc(w->nparams, sizeof *w->params);
    if (!w->params)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0)
    rc = load_max_sk(w, err);
  if (rc != 0) {
    writer_free(w);
    return -1;
  }
  *out = w;
  return 0;
}

void writer_free(writer *w)
{
  if (!w)
    return;
  batch_free(&w->main);
  for (int s = 0; s < NSTAGES; s++) {
    if (s < NSLOTS) {
      ostmt_free(w->slots[s]);
      free(w->slot_sql[s]);
      free(w->slot_types[s]);
    }
    stage *st = &w->stages[s];
    batch_free(&st->b);
    for (size_t i = 0; st->cols && i < st->ncols; i++)
      free(st->cols[i]);
    free(st->cols);
    free(st->decl);
    free(st->apply_sql);
  }
  free(w->main_cols);
  free(w->what);
  free(w->params);
  free(w->row);
  free(w->from_t1);
  free(w->rs_what);
  free(w);
}

int writer_flush(writer *w, dwl_error *err)
{
  if (stages_apply(w, err) != 0)
    return -1;
  return batch_flush(w, &w->main, err);
}

int writer_insert_source(writer *w, const dwl_value *row, dwl_error *err)
{
  for (size_t i = 0; i < w->t->ncols; i++)
    w->row[i] = row[w->t->cols[i].src];
  return batch_add(w, &w->main, w->row, err);
}

int writer_delete_all(writer *w, dwl_error *err)
{
  char sql[600];
  snprintf(sql, sizeof sql, "DELETE FROM %s", w->t->table_q);
  return run_sql(w, NULL, sql, NULL, NULL, 0, err);
}

long writer_stage_keys(writer *w, const rowset *rows, const char **table, char *const **cols, dwl_error *err)
{
  stage *s = &w->stages[STAGE_KEYS];
  keymap seen;
  if (keymap_init(&seen, rows->n) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  long n = 0;
  int rc = 0;
  /* Staged even in plan mode: the lookup reads through it, and a temporary
   * table is no write to the warehouse. */
  int plan = w->plan;
  w->plan = 0;
  if (s->used && s->b.rows > 0) {
    /* a second lookup in the run (the history of keys with late rows) */
    char sql[80];
    snprintf(sql, sizeof sql, "DELETE FROM %s", s->name);
    rc = run_sql(w, NULL, sql, NULL, NULL, 0, err);
    s->b.rows = 0;
  }
  for (size_t i = 0; rc == 0 && i < rows->n; i++) {
    const rs_row *r = &rows->rows[i];
    if (!staged_key(w, r->vals))
      continue;
    int created;
    if (!keymap_put(&seen, r->key, &created)) {
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    if (!created)
      continue;
    key_params(w, r->vals, w->row);
    rc = stage_add(w, STAGE_KEYS, w->row, err);
    n++;
  }
  if (rc == 0 && s->used)
    rc = batch_flush(w, &s->b, err);
  w->plan = plan;
  keymap_free(&seen);
  *table = s->name;
  *cols = s->cols;
  return rc == 0 ? n : -1;
}

/* ---- stages of the caller's own (pushdown) ----------------------------------- */

struct writer_stage {
  writer *w;
  stage s;
};

int writer_stage_open(writer *w, const char *name, char *const *cols, const dwl_column *decl, size_t ncols,
                      writer_stage **out, dwl_error *err)
{
  *out = NULL;
  writer_stage *ws = calloc(1, sizeof *ws);
  SQLSMALLINT *types = calloc(ncols ? ncols : 1, sizeof *types);
  if (!ws || !types) {
    free(ws);
    free(types);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  ws->w = w;
  stage *s = &ws->s;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->cols = calloc(ncols ? ncols : 1, sizeof *s->cols);
  s->decl = calloc(ncols ? ncols : 1, sizeof *s->decl);
  int rc = s->cols && s->decl ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < ncols; i++) {
    s->ncols++;
    s->decl[i] = decl[i];
    types[i] = w->t->d->param_type(decl[i].type);
    if (!(s->cols[i] = strdup(cols[i])))
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0)
    rc = batch_init(w, &s->b, s->name, s->cols, types, ncols, err);
  free(types);
  /* The binding scratch must hold a full batch of this stage too. */
  size_t need = batch_params(&s->b) + 8;
  if (rc == 0 && need > w->nparams) {
    dwl_value *p = realloc(w->params, need * sizeof *p);
    if (!p)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    else {
      w->params = p;
      w->nparams = need;
    }
  }
  int plan = w->plan;
  w->plan = 0;
  if (rc == 0)
    rc = stage_create(w, s, err);
  w->plan = plan;
  s->used = rc == 0;
  if (rc != 0) {
    writer_stage_free(ws);
    return -1;
  }
  *out = ws;
  return 0;
}

int writer_stage_add(writer_stage *ws, const dwl_value *row, dwl_error *err)
{
  int plan = ws->w->plan;
  ws->w->plan = 0;
  int rc = batch_add(ws->w, &ws->s.b, row, err);
  ws->w->plan = plan;
  return rc;
}

int writer_stage_flush(writer_stage *ws, dwl_error *err)
{
  int plan = ws->w->plan;
  ws->w->plan = 0;
  int rc = batch_flush(ws->w, &ws->s.b, err);
  ws->w->plan = plan;
  return rc;
}

void writer_stage_free(writer_stage *ws)
{
  if (!ws)
    return;
  stage *s = &ws->s;
  batch_free(&s->b);
  for (size_t i = 0; s->cols && i < s->ncols; i++)
    free(s->cols[i]);
  free(s->cols);
  free(s->decl);
  free(ws);
}

int writer_exec(writer *w, const char *sql, const dwl_value *params, const SQLSMALLINT *types, size_t n,
                dwl_error *err)
{
  return run_sql(w, NULL, sql, params, types, n, err);
}

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
    return batch_add(w, &w->main, w->row, err);
  }
  /* A key revived at the instant it was deleted gets a version with the
   * tombstone's valid_from: the staged expire of the tombstone would match
   * it too, so it must reach the table first (and the insert after). */
  if (w->staged_expire && v->valid_from.us == w->staged_vf &&
      fp_eq(fp_tuple(v->vals, c->key, c->nkey), w->staged_key)) {
    if (stages_apply(w, err) != 0 || batch_flush(w, &w->main, err) != 0)
      return -1;
    w->staged_expire = 0;
  }
  version_row(w, v, 1);
  return batch_add(w, &w->main, w->row, err);
}

static size_t key_params(const writer *w, const dwl_value *row, dwl_value *p)
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
  if (staged(w, keyrow)) {
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

/* Type 1 or upsert update: values of idx[] from `row`. */
static int sink_set(writer *w, int slot, const size_t *idx, size_t nidx, const dwl_value *row,
                    const dwl_ts *valid_from, dwl_error *err)
{
  size_t n = 0;
  if (staged(w, row)) {
    /* Several overwrites of one current version in a run: one UPDATE ...
     * FROM/JOIN would apply an arbitrary one of them, so the last replaces
     * the previous while that is still pending, else follows its applying.
     * The engine emits a key's operations together. */
    if (slot == SLOT_T1_CUR) {
      fp128 k = fp_tuple(row, w->cols->key, w->cols->nkey);
      if (w->staged_t1 && fp_eq(k, w->t1_key)) {
        if (w->stages[slot].b.npend > 0)
          w->stages[slot].b.npend--;
        else if (stages_apply(w, err) != 0)
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
    return stage_add(w, slot, w->params, err);
  }
  for (size_t i = 0; i < nidx; i++)
    w->params[n++] = row[idx[i]];
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
  if (staged(w, keyrow))
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
