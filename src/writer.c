/* Target writer: rows and engine operations to bound SQL statements. */
#include "writer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fingerprint.h"

/* Rows per INSERT statement: hundreds amortise the per-statement cost of
 * the driver round trip; the dialect caps parameters per statement. */
#define WRITER_BATCH_ROWS 500

enum { SLOT_EXPIRE, SLOT_T1_CUR, SLOT_T1_ALL, SLOT_UPDATE, SLOT_REMOVE, NSLOTS };

typedef struct pval {
  size_t off, len;
  int is_null;
} pval;

struct writer {
  target *t;
  const scd_cols *cols;
  int plan;
  FILE *sqlout;
  size_t batch_rows;
  pval *pend;              /* batch_rows * ncols pending insert values */
  size_t npend;            /* rows pending */
  dwl_buf arena;           /* their bytes */
  dwl_value *params;       /* scratch for binding */
  SQLSMALLINT *ptypes;     /* parameter SQL types of one full insert batch */
  odbc_stmt *ins_full;     /* prepared for batch_rows rows */
  odbc_stmt *slots[NSLOTS];
  char *slot_sql[NSLOTS];
  SQLSMALLINT *slot_types[NSLOTS];
  dwl_value *row;          /* one table row being built */
  int64_t next_sk;
  long long nstmts;
  char vf[32], vt[32], sk[68];
};

static SQLSMALLINT col_ptype(const writer *w, size_t tc)
{
  const tcol *c = &w->t->cols[tc];
  int ty = c->role == TC_CURRENT || c->role == TC_DELETED ? DWL_TYPE_BOOLEAN : c->decl.type;
  return w->t->d->param_type(ty);
}

/* "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)" for `rows` rows. */
static char *insert_sql(const writer *w, size_t rows)
{
  const target *t = w->t;
  dwl_buf b;
  buf_init(&b, 0);
  buf_printf(&b, "INSERT INTO %s (", t->table_q);
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", t->cols[i].q);
  buf_adds(&b, ") VALUES ");
  for (size_t r = 0; r < rows; r++) {
    buf_adds(&b, r ? ", (" : "(");
    for (size_t i = 0; i < t->ncols; i++)
      buf_adds(&b, i ? ", ?" : "?");
    buf_addc(&b, ')');
  }
  return buf_steal(&b);
}

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

/* Runs (or in plan mode prints) one statement of a slot. */
static int run_slot(writer *w, int slot, const dwl_value *params, size_t n, dwl_error *err)
{
  w->nstmts++;
  if (w->plan) {
    if (w->sqlout) {
      fprintf(w->sqlout, "%s;\n", w->slot_sql[slot]);
      print_params(w->sqlout, params, n);
    }
    return 0;
  }
  if (!w->slots[slot] && ostmt_prepare(w->t->c, w->slot_sql[slot], &w->slots[slot], err) != 0)
    return -1;
  if (ostmt_execute(w->slots[slot], params, w->slot_types[slot], n, err) != 0) {
    err_prefix(err, "writing %s", w->t->spec->target_table);
    return -1;
  }
  return 0;
}

/* Adds " WHERE k1 IS ? AND k2 IS ?" and the key columns' types. */
static void where_key(const writer *w, dwl_buf *b, SQLSMALLINT *types, size_t *nt)
{
  const target *t = w->t;
  size_t off = t->ix[TC_SK] >= 0 ? 1 : 0;
  buf_adds(b, " WHERE ");
  for (size_t i = 0; i < w->cols->nkey; i++) {
    size_t tc = w->cols->key[i] + off;
    if (i)
      buf_adds(b, " AND ");
    buf_printf(b, "%s%s", t->cols[tc].q, t->d->null_safe_eq);
    types[(*nt)++] = col_ptype(w, tc);
  }
}

/* SET list "a = ?, b = ?" over source columns idx[]. */
static void set_list(const writer *w, dwl_buf *b, const size_t *idx, size_t n, SQLSMALLINT *types, size_t *nt)
{
  size_t off = w->t->ix[TC_SK] >= 0 ? 1 : 0;
  for (size_t i = 0; i < n; i++) {
    buf_printf(b, "%s%s = ?", i ? ", " : "", w->t->cols[idx[i] + off].q);
    types[(*nt)++] = col_ptype(w, idx[i] + off);
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

  if (t->spec->mode == MODE_SCD2) {
    /* expire: close the key's current version */
    buf_init(&b, 0);
    nt = 0;
    ty = w->slot_types[SLOT_EXPIRE];
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
    if (!t->spec->current && t->open_end[0])
      ty[nt++] = SQL_VARCHAR;
    w->slot_sql[SLOT_EXPIRE] = buf_steal(&b);

    for (int all = 0; all <= 1; all++) {
      int s = all ? SLOT_T1_ALL : SLOT_T1_CUR;
      buf_init(&b, 0);
      nt = 0;
      ty = w->slot_types[s];
      buf_printf(&b, "UPDATE %s SET ", t->table_q);
      set_list(w, &b, c->t1, c->nt1, ty, &nt);
      where_key(w, &b, ty, &nt);
      if (!all) {
        buf_printf(&b, " AND %s", t->cur_pred);
        if (!t->spec->current && t->open_end[0])
          ty[nt++] = SQL_VARCHAR;
      }
      w->slot_sql[s] = buf_steal(&b);
    }
  } else {
    buf_init(&b, 0);
    nt = 0;
    ty = w->slot_types[SLOT_UPDATE];
    buf_printf(&b, "UPDATE %s SET ", t->table_q);
    set_list(w, &b, c->t2, c->nt2, ty, &nt);
    where_key(w, &b, ty, &nt);
    w->slot_sql[SLOT_UPDATE] = buf_steal(&b);
  }
  buf_init(&b, 0);
  nt = 0;
  buf_printf(&b, "DELETE FROM %s", t->table_q);
  where_key(w, &b, w->slot_types[SLOT_REMOVE], &nt);
  w->slot_sql[SLOT_REMOVE] = buf_steal(&b);
  for (int s = 0; s < NSLOTS; s++)
    if (t->spec->mode == MODE_SCD2 ? s != SLOT_UPDATE && !w->slot_sql[s] : (s == SLOT_UPDATE || s == SLOT_REMOVE) && !w->slot_sql[s])
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

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
  buf_init(&w->arena, 0);
  w->batch_rows = WRITER_BATCH_ROWS;
  if (w->batch_rows * t->ncols > t->d->max_params)
    w->batch_rows = t->d->max_params / t->ncols;
  if (w->batch_rows == 0)
    w->batch_rows = 1;
  size_t np = w->batch_rows * t->ncols;
  w->pend = calloc(np, sizeof *w->pend);
  w->params = calloc(np + t->ncols + 8, sizeof *w->params);
  w->ptypes = calloc(np, sizeof *w->ptypes);
  w->row = calloc(t->ncols, sizeof *w->row);
  if (!w->pend || !w->params || !w->ptypes || !w->row) {
    writer_free(w);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  for (size_t i = 0; i < np; i++)
    w->ptypes[i] = col_ptype(w, i % t->ncols);
  if ((cols && build_slots(w, err) != 0) || load_max_sk(w, err) != 0) {
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
  ostmt_free(w->ins_full);
  for (int s = 0; s < NSLOTS; s++) {
    ostmt_free(w->slots[s]);
    free(w->slot_sql[s]);
    free(w->slot_types[s]);
  }
  buf_free(&w->arena);
  free(w->pend);
  free(w->params);
  free(w->ptypes);
  free(w->row);
  free(w);
}

long long writer_statements(const writer *w)
{
  return w->nstmts;
}

int writer_flush(writer *w, dwl_error *err)
{
  if (w->npend == 0)
    return 0;
  size_t nc = w->t->ncols, n = w->npend * nc;
  for (size_t i = 0; i < n; i++) {
    w->params[i].is_null = w->pend[i].is_null;
    w->params[i].len = w->pend[i].len;
    w->params[i].data = w->pend[i].is_null ? NULL : w->arena.data + w->pend[i].off;
  }
  int rc = 0;
  w->nstmts++;
  if (w->plan) {
    if (w->sqlout) {
      char *sql = insert_sql(w, 1);
      fprintf(w->sqlout, "%s;\n", sql ? sql : "INSERT");
      free(sql);
      for (size_t r = 0; r < w->npend; r++)
        print_params(w->sqlout, &w->params[r * nc], nc);
    }
  } else if (w->npend == w->batch_rows) {
    if (!w->ins_full) {
      char *sql = insert_sql(w, w->batch_rows);
      rc = sql ? ostmt_prepare(w->t->c, sql, &w->ins_full, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
      free(sql);
    }
    if (rc == 0)
      rc = ostmt_execute(w->ins_full, w->params, w->ptypes, n, err);
  } else {
    /* The last, partial batch of a run: prepared once, used once. */
    char *sql = insert_sql(w, w->npend);
    rc = sql ? odbc_exec(w->t->c, sql, w->params, w->ptypes, n, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
    free(sql);
  }
  if (rc != 0)
    err_prefix(err, "inserting into %s", w->t->spec->target_table);
  w->npend = 0;
  buf_reset(&w->arena);
  return rc;
}

/* Queues w->row (t->ncols values) for insertion. */
static int queue_row(writer *w, dwl_error *err)
{
  size_t nc = w->t->ncols;
  pval *p = &w->pend[w->npend * nc];
  for (size_t i = 0; i < nc; i++) {
    p[i].is_null = w->row[i].is_null;
    p[i].len = w->row[i].is_null ? 0 : w->row[i].len;
    p[i].off = w->arena.len;
    if (!p[i].is_null && buf_add(&w->arena, w->row[i].data, w->row[i].len) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory buffering inserts");
  }
  w->npend++;
  return w->npend == w->batch_rows ? writer_flush(w, err) : 0;
}

int writer_insert_source(writer *w, const dwl_value *row, dwl_error *err)
{
  for (size_t i = 0; i < w->t->ncols; i++)
    w->row[i] = row[w->t->cols[i].src];
  return queue_row(w, err);
}

int writer_delete_all(writer *w, dwl_error *err)
{
  char sql[600];
  snprintf(sql, sizeof sql, "DELETE FROM %s", w->t->table_q);
  w->nstmts++;
  if (w->plan) {
    if (w->sqlout)
      fprintf(w->sqlout, "%s;\n", sql);
    return 0;
  }
  return odbc_exec(w->t->c, sql, NULL, NULL, 0, err);
}

static void set_text(dwl_value *v, const char *s)
{
  v->data = s;
  v->len = s ? strlen(s) : 0;
  v->is_null = s == NULL;
}

static int in_list(const size_t *set, size_t n, size_t ix)
{
  for (size_t i = 0; i < n; i++)
    if (set[i] == ix)
      return 1;
  return 0;
}

static int sink_insert(void *ud, const scd_version *v, dwl_error *err)
{
  writer *w = ud;
  const target *t = w->t;
  const scd_cols *c = w->cols;
  for (size_t i = 0; i < t->ncols; i++) {
    const tcol *tc = &t->cols[i];
    if (tc->role == TC_SRC)
      w->row[i] = (in_list(c->t1, c->nt1, tc->src) ? v->t1vals : v->vals)[tc->src];
  }
  if (t->spec->mode != MODE_SCD2)
    return queue_row(w, err);
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
    }
    else
      snprintf(w->sk, sizeof w->sk, "%" PRId64, w->next_sk++);
    set_text(&w->row[t->ix[TC_SK]], w->sk);
  }
  return queue_row(w, err);
}

static size_t key_params(const writer *w, const dwl_value *row, dwl_value *p)
{
  for (size_t i = 0; i < w->cols->nkey; i++)
    p[i] = row[w->cols->key[i]];
  return w->cols->nkey;
}

static int sink_expire(void *ud, const dwl_value *keyrow, const dwl_ts *valid_to, int deleted, dwl_error *err)
{
  writer *w = ud;
  const target *t = w->t;
  size_t n = 0;
  target_ts_text(t, valid_to, w->vt);
  set_text(&w->params[n++], w->vt);
  if (t->ix[TC_DELETED] >= 0)
    set_text(&w->params[n++], deleted ? t->d->true_val : t->d->false_val);
  n += key_params(w, keyrow, &w->params[n]);
  n += target_cur_params(t, &w->params[n]);
  return run_slot(w, SLOT_EXPIRE, w->params, n, err);
}

static int sink_set(writer *w, int slot, const size_t *idx, size_t nidx, const dwl_value *row, dwl_error *err)
{
  size_t n = 0;
  for (size_t i = 0; i < nidx; i++)
    w->params[n++] = row[idx[i]];
  n += key_params(w, row, &w->params[n]);
  if (slot == SLOT_T1_CUR)
    n += target_cur_params(w->t, &w->params[n]);
  return run_slot(w, slot, w->params, n, err);
}

static int sink_type1(void *ud, const dwl_value *row, int all, dwl_error *err)
{
  writer *w = ud;
  return sink_set(w, all ? SLOT_T1_ALL : SLOT_T1_CUR, w->cols->t1, w->cols->nt1, row, err);
}

static int sink_update(void *ud, const dwl_value *row, dwl_error *err)
{
  writer *w = ud;
  return sink_set(w, SLOT_UPDATE, w->cols->t2, w->cols->nt2, row, err);
}

static int sink_remove(void *ud, const dwl_value *keyrow, dwl_error *err)
{
  writer *w = ud;
  size_t n = key_params(w, keyrow, w->params);
  return run_slot(w, SLOT_REMOVE, w->params, n, err);
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
  };
  return s;
}
