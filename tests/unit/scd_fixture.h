/* The fixture of the change engine's unit tests (test_scd.c, test_scd_deletes.c):
 * a dwl_spec and source columns built by hand, current versions and source
 * rows fed in, and every operation scd_apply / scd_delete_absent emits
 * recorded by a capturing scd_sink as one line of text, then compared
 * exactly.  Included by each test program once; its helpers are static,
 * and a program that does not call one of them says nothing about it. */
#ifndef DWL_SCD_FIXTURE_H
#define DWL_SCD_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scd.h"
#include "spec.h"
#include "ts.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- fixture ------------------------------------------------------------- */

#define MAXOPS 64
#define NUL_ ((const char *)0) /* a NULL value in a row literal */

typedef struct capture {
  const scd_engine *e;
  char ops[MAXOPS][640];
  size_t n;
} capture;

typedef struct fx {
  dwl_spec spec;
  dwl_column cols[8];
  size_t ncols;
  scd_engine e;
  int have_engine;
  capture cap;
  scd_counts counts;
  dwl_error err;
  char *keyv[4], *t1v[4], *t2v[4], *delv[4];
} fx;

static fx F;

static void list_set(spec_list *l, char **store, const char *const *names)
{
  size_t n = 0;
  while (names && names[n]) {
    store[n] = (char *)names[n];
    n++;
  }
  l->v = store;
  l->n = n;
}

/* Columns are named by a NULL-terminated list; every one is TEXT. */
static void fx_setup(int mode, const char *const *colnames, const char *const *key, const char *lmd)
{
  memset(&F, 0, sizeof F);
  F.spec.path = "job.yaml";
  F.spec.job = "t";
  F.spec.target_table = "dim";
  F.spec.mode = mode;
  F.spec.lmd = (char *)lmd;
  list_set(&F.spec.key, F.keyv, key);
  for (F.ncols = 0; colnames[F.ncols]; F.ncols++) {
    F.cols[F.ncols].name = colnames[F.ncols];
    F.cols[F.ncols].type = DWL_TYPE_TEXT;
    F.cols[F.ncols].nullable = 1;
  }
  err_init(&F.err);
}

static void fx_type1(const char *const *t1, int scope)
{
  list_set(&F.spec.type1, F.t1v, t1);
  F.spec.type1_scope = scope;
}

static void fx_deletes_column(const char *col, const char *const *values)
{
  F.spec.deletes = DEL_COLUMN;
  F.spec.delete_column = (char *)col;
  list_set(&F.spec.delete_values, F.delv, values);
}

static dwl_ts ts(const char *s)
{
  dwl_ts t;
  ck_assert_msg(ts_parse(s, strlen(s), &t) == 0, "bad timestamp literal %s", s);
  return t;
}

static void fx_init(const char *run_ts)
{
  dwl_error err;
  err_init(&err);
  int rc = scd_init(&F.e, &F.spec, F.cols, F.ncols, ts(run_ts ? run_ts : "2030-01-01 12:00:00"), &err);
  ck_assert_msg(rc == 0, "scd_init: %s", err.msg);
  F.have_engine = 1;
  F.e.origin_name = "src.csv";
  F.cap.e = &F.e;
}

static void fx_teardown(void)
{
  if (F.have_engine)
    scd_free(&F.e);
  F.have_engine = 0;
}

static void to_values(const char *const *row, dwl_value *out)
{
  for (size_t i = 0; i < F.ncols; i++) {
    out[i].is_null = row[i] == NULL;
    out[i].data = row[i] ? row[i] : NULL;
    out[i].len = row[i] ? strlen(row[i]) : 0;
  }
}

/* A current version of the target: every column in source layout. */
static void current(const char *const *row, const char *valid_from, int tombstone)
{
  dwl_value v[8];
  to_values(row, v);
  dwl_ts vf = ts(valid_from);
  dwl_error err;
  err_init(&err);
  ck_assert_msg(scd_add_current(&F.e, v, &vf, tombstone, &err) == 0, "scd_add_current: %s", err.msg);
}

/* A source row, its lmd read from the lmd column (if any). */
static void source(const char *const *row, uint64_t origin, int past)
{
  dwl_value v[8];
  to_values(row, v);
  dwl_ts lmd = {0};
  const dwl_ts *lp = NULL;
  if (F.e.cols.lmd >= 0) {
    lmd = ts(row[F.e.cols.lmd]);
    lp = &lmd;
  }
  dwl_error err;
  err_init(&err);
  ck_assert_msg(scd_add_source(&F.e, v, origin, lp, past, &err) >= 0, "scd_add_source: %s", err.msg);
}

/* ---- the capturing sink ---------------------------------------------------- */

static void join(char *out, size_t n, const dwl_value *vals, const dwl_value *t1vals, const scd_cols *c, size_t ncols)
{
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < ncols; i++) {
    int is_t1 = 0;
    for (size_t k = 0; t1vals && k < c->nt1; k++)
      is_t1 |= c->t1[k] == i;
    const dwl_value *v = is_t1 ? &t1vals[i] : &vals[i];
    o += (size_t)snprintf(out + o, n - o, "%s%s%.*s", i ? "," : "", v->is_null ? "~" : "",
                          v->is_null ? 0 : (int)v->len, v->is_null ? "" : v->data);
    if (o >= n)
      return;
  }
}

static void keyof(char *out, size_t n, const dwl_value *row, const scd_cols *c)
{
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < c->nkey; i++) {
    const dwl_value *v = &row[c->key[i]];
    o += (size_t)snprintf(out + o, n - o, "%s%s%.*s", i ? "," : "", v->is_null ? "~" : "",
                          v->is_null ? 0 : (int)v->len, v->is_null ? "" : v->data);
    if (o >= n)
      return;
  }
}

static char *next_op(capture *c)
{
  ck_assert_msg(c->n < MAXOPS, "too many operations");
  return c->ops[c->n++];
}

static int cap_insert(void *ud, const scd_version *v, dwl_error *err)
{
  (void)err;
  capture *c = ud;
  char vals[256], vf[32], vt[32];
  join(vals, sizeof vals, v->vals, v->t1vals, &c->e->cols, c->e->ncols);
  ts_format(&v->valid_from, vf);
  if (v->open)
    snprintf(vt, sizeof vt, "open");
  else
    ts_format(&v->valid_to, vt);
  if (c->e->spec->mode == MODE_UPSERT) /* no bookkeeping columns */
    snprintf(next_op(c), 512, "INS %s", vals);
  else
    snprintf(next_op(c), 512, "INS %s [%s .. %s] cur=%d del=%d", vals, vf, vt, v->current, v->deleted);
  return 0;
}

static int cap_expire(void *ud, const dwl_value *keyrow, const dwl_ts *valid_from, const dwl_ts *valid_to,
                      int deleted, dwl_error *err)
{
  (void)err;
  (void)valid_from;
  capture *c = ud;
  char k[128], vt[32];
  keyof(k, sizeof k, keyrow, &c->e->cols);
  ts_format(valid_to, vt);
  snprintf(next_op(c), 512, "EXP %s to=%s del=%d", k, vt, deleted);
  return 0;
}

static int cap_type1(void *ud, const dwl_value *row, const dwl_ts *valid_from, int all, dwl_error *err)
{
  (void)err;
  (void)valid_from;
  capture *c = ud;
  char vals[256];
  join(vals, sizeof vals, row, NULL, &c->e->cols, c->e->ncols);
  snprintf(next_op(c), 512, "T1 %s all=%d", vals, all);
  return 0;
}

static int cap_update(void *ud, const dwl_value *row, dwl_error *err)
{
  (void)err;
  capture *c = ud;
  char vals[256];
  join(vals, sizeof vals, row, NULL, &c->e->cols, c->e->ncols);
  snprintf(next_op(c), 512, "UPD %s", vals);
  return 0;
}

static int cap_remove(void *ud, const dwl_value *keyrow, dwl_error *err)
{
  (void)err;
  capture *c = ud;
  char k[128];
  keyof(k, sizeof k, keyrow, &c->e->cols);
  snprintf(next_op(c), 512, "REM %s", k);
  return 0;
}

static int cap_reshape(void *ud, const dwl_value *keyrow, const dwl_ts *old_vf, int old_deleted,
                       const scd_version *v, dwl_error *err)
{
  (void)err;
  capture *c = ud;
  char k[128], from[32], vals[256], vf[32], vt[32];
  keyof(k, sizeof k, keyrow, &c->e->cols);
  ts_format(old_vf, from);
  join(vals, sizeof vals, v->vals, v->t1vals, &c->e->cols, c->e->ncols);
  ts_format(&v->valid_from, vf);
  if (v->open)
    snprintf(vt, sizeof vt, "open");
  else
    ts_format(&v->valid_to, vt);
  snprintf(next_op(c), sizeof c->ops[0], "RESHAPE %s from=%s del=%d -> %s [%s .. %s] cur=%d del=%d", k, from, old_deleted, vals,
           vf, vt, v->current, v->deleted);
  return 0;
}

static int cap_drop(void *ud, const dwl_value *keyrow, const dwl_ts *vf, int deleted, dwl_error *err)
{
  (void)err;
  capture *c = ud;
  char k[128], at[32];
  keyof(k, sizeof k, keyrow, &c->e->cols);
  ts_format(vf, at);
  snprintf(next_op(c), 512, "DROP %s from=%s del=%d", k, at, deleted);
  return 0;
}

static const scd_sink SINK = {
  .reshape = cap_reshape,
  .drop = cap_drop,
  .ud = &F.cap,
  .insert = cap_insert,
  .expire = cap_expire,
  .type1 = cap_type1,
  .update = cap_update,
  .remove = cap_remove,
};

static int apply(void)
{
  err_init(&F.err);
  return scd_apply(&F.e, &SINK, &F.counts, &F.err);
}

/* A stored version of a key with late rows; valid_to NULL: open. */
static void history(const char *const *row, const char *valid_from, const char *valid_to, int deleted)
{
  dwl_value v[8];
  to_values(row, v);
  dwl_ts vf = ts(valid_from), vt = valid_to ? ts(valid_to) : vf;
  dwl_error err;
  err_init(&err);
  ck_assert_msg(scd_add_history(&F.e, v, &vf, valid_to ? &vt : NULL, deleted, &err) == 0, "scd_add_history: %s",
                err.msg);
}

static int repair(void)
{
  err_init(&F.err);
  return scd_repair(&F.e, &SINK, &F.counts, &F.err);
}

static void late_counts_are(long long repaired, long long rejected, long long ignored)
{
  const scd_counts *c = &F.counts;
  ck_assert_msg(c->late_repaired == repaired && c->late_rejected == rejected && c->late_ignored == ignored,
                "late counts repaired %lld rejected %lld ignored %lld, expected %lld %lld %lld", c->late_repaired,
                c->late_rejected, c->late_ignored, repaired, rejected, ignored);
}

static void apply_ok(void)
{
  ck_assert_msg(apply() == 0, "scd_apply failed: %s", F.err.msg);
}

/* Compares the recorded operations with the expected lines (NULL-terminated). */
static void ops_are(const char *const *want)
{
  size_t n = 0;
  while (want[n])
    n++;
  char got[4096] = "";
  size_t o = 0;
  for (size_t i = 0; i < F.cap.n && o < sizeof got; i++)
    o += (size_t)snprintf(got + o, sizeof got - o, "\n  %s", F.cap.ops[i]);
  ck_assert_msg(F.cap.n == n, "%zu operations, expected %zu:%s", F.cap.n, n, got);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(strcmp(F.cap.ops[i], want[i]) == 0, "operation %zu:\n  got  %s\n  want %s\nall:%s", i,
                  F.cap.ops[i], want[i], got);
}

static void counts_are(long long ins, long long exp, long long upd, long long del, long long unch)
{
  const scd_counts *c = &F.counts;
  ck_assert_msg(c->inserted == ins && c->expired == exp && c->updated == upd && c->deleted == del &&
                    c->unchanged == unch,
                "counts inserted %lld expired %lld updated %lld deleted %lld unchanged %lld, expected %lld %lld "
                "%lld %lld %lld",
                c->inserted, c->expired, c->updated, c->deleted, c->unchanged, ins, exp, upd, del, unch);
}

#define ROW(...) ((const char *const[]){__VA_ARGS__})
#define OPS(...) ops_are((const char *const[]){__VA_ARGS__, NULL})
#define NO_OPS() ops_are((const char *const[]){NULL})

static const char *const C4[] = {"id", "name", "city", "lmd", NULL};
static const char *const K1[] = {"id", NULL};

/* The checked fixture (make_suite): every test starts from an scd2 job of
 * C4 keyed on id, and a test of another shape calls fx_setup (or a
 * helper that does) again; the teardown frees the engine a test
 * initialised. */
static void scd2_setup(void)
{
  fx_setup(MODE_SCD2, C4, K1, "lmd");
}

#pragma GCC diagnostic pop

#endif
