/* Unit tests of the change engine (src/engine/scd.c) in isolation: a dwl_spec and
 * source columns built by hand, current versions and source rows fed in,
 * and every operation scd_apply / scd_delete_absent emits recorded by a
 * capturing scd_sink as one line of text, then compared exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "scd.h"
#include "spec.h"
#include "ts.h"

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
  dwl_ts lmd = {0, 0};
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

static void scd2_setup(void)
{
  fx_setup(MODE_SCD2, C4, K1, "lmd");
}

/* ---- scd_init --------------------------------------------------------------- */

START_TEST(init_default_tracked_set)
{
  static const char *const cols[] = {"id", "name", "city", "op", "lmd", NULL};
  fx_setup(MODE_SCD2, cols, K1, "lmd");
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_deletes_column("op", (const char *const[]){"D", NULL});
  fx_init(NULL);
  /* type 2 by default: neither the key, the lmd, type 1 nor the delete flag */
  ck_assert_uint_eq(F.e.cols.nt2, 1);
  ck_assert_uint_eq(F.e.cols.t2[0], 2);
  ck_assert_uint_eq(F.e.cols.nt1, 1);
  ck_assert_uint_eq(F.e.cols.t1[0], 1);
  ck_assert_int_eq(F.e.cols.lmd, 4);
  ck_assert_int_eq(F.e.cols.del, 3);
  fx_teardown();
}
END_TEST

START_TEST(init_unknown_column)
{
  static const char *const key[] = {"nope", NULL};
  fx_setup(MODE_SCD2, C4, key, "lmd");
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(scd_init(&F.e, &F.spec, F.cols, F.ncols, ts("2030-01-01"), &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_msg(strstr(err.msg, "load.key: column 'nope' is not in the source (its columns: id, name, city, lmd)"),
                "message: %s", err.msg);
  scd_free(&F.e);
}
END_TEST

START_TEST(col_index_exact_then_caseless)
{
  dwl_column cols[] = {{.name = "Id"}, {.name = "id"}, {.name = "NAME"}};
  ck_assert_int_eq(scd_col_index(cols, 3, "id"), 1);
  ck_assert_int_eq(scd_col_index(cols, 3, "Id"), 0);
  ck_assert_int_eq(scd_col_index(cols, 3, "name"), 2);
  ck_assert_int_eq(scd_col_index(cols, 3, "other"), -1);
}
END_TEST

/* ---- scd_close_at ----------------------------------------------------------- */

START_TEST(close_at_rules)
{
  dwl_spec s;
  memset(&s, 0, sizeof s);
  char buf[32];
  dwl_ts next = ts("2024-03-01 00:00:00");
  s.close = CLOSE_AT_NEXT;
  dwl_ts r = scd_close_at(&s, next);
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2024-03-01 00:00:00");
  s.close = CLOSE_DAY_BEFORE;
  r = scd_close_at(&s, next);
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2024-02-29 00:00:00");
  s.close = CLOSE_SECOND_BEFORE;
  r = scd_close_at(&s, next);
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2024-02-29 23:59:59");
  /* a date stays a date */
  s.close = CLOSE_DAY_BEFORE;
  r = scd_close_at(&s, ts("2021-01-01"));
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2020-12-31");
}
END_TEST

/* ---- scd2: new keys, chains, collapse ---------------------------------------- */

START_TEST(new_key_inserts_open_version)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 10:00:00"), 2, 1);
  apply_ok();
  OPS("INS 1,Ann,Oslo,2024-01-01 10:00:00 [2024-01-01 10:00:00 .. open] cur=1 del=0");
  counts_are(1, 0, 0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(chain_ordered_by_lmd)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("K", "k", "Paris", "2024-03-01 00:00:00"), 2, 1);
  source(ROW("K", "k", "Berlin", "2024-01-01 00:00:00"), 3, 1);
  source(ROW("K", "k", "Rome", "2024-02-01 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS K,k,Berlin,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-02-01 00:00:00] cur=0 del=0",
      "INS K,k,Rome,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. 2024-03-01 00:00:00] cur=0 del=0",
      "INS K,k,Paris,2024-03-01 00:00:00 [2024-03-01 00:00:00 .. open] cur=1 del=0");
  counts_are(3, 0, 0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(chain_day_before)
{
  scd2_setup();
  F.spec.close = CLOSE_DAY_BEFORE;
  fx_init(NULL);
  source(ROW("K", "k", "a", "2024-01-01"), 2, 1);
  source(ROW("K", "k", "b", "2024-03-01"), 3, 1);
  apply_ok();
  OPS("INS K,k,a,2024-01-01 [2024-01-01 .. 2024-02-29] cur=0 del=0",
      "INS K,k,b,2024-03-01 [2024-03-01 .. open] cur=1 del=0");
  fx_teardown();
}
END_TEST

/* Versions exist at the close rule's step: a change within a day of the
 * version's start replaces it (dwload-job(5), close). */
START_TEST(within_step_change_replaces_pending)
{
  scd2_setup();
  F.spec.close = CLOSE_DAY_BEFORE;
  fx_init(NULL);
  source(ROW("K", "k", "Oslo", "2024-01-01 09:00:00"), 2, 1);
  source(ROW("K", "k", "Rome", "2024-01-01 17:00:00"), 3, 1);
  source(ROW("K", "k", "Lima", "2024-01-02 08:00:00"), 4, 1);
  source(ROW("K", "k", "Kyiv", "2024-01-02 10:00:00"), 5, 1);
  apply_ok();
  OPS("INS K,k,Lima,2024-01-02 08:00:00 [2024-01-01 09:00:00 .. 2024-01-01 10:00:00] cur=0 del=0",
      "INS K,k,Kyiv,2024-01-02 10:00:00 [2024-01-02 10:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 0, 2);
  fx_teardown();
}
END_TEST

START_TEST(within_step_change_reshapes_stored)
{
  scd2_setup();
  F.spec.close = CLOSE_SECOND_BEFORE;
  fx_init(NULL);
  current(ROW("K", "k", "Oslo", "2024-01-01 10:00:00.2"), "2024-01-01 10:00:00.2", 0);
  source(ROW("K", "k", "Rome", "2024-01-01 10:00:00.7"), 2, 1);
  source(ROW("K", "k", "Lima", "2024-01-01 10:00:01.5"), 3, 1);
  apply_ok();
  OPS("RESHAPE K from=2024-01-01 10:00:00.200000 del=0 -> K,k,Rome,2024-01-01 10:00:00.7 "
      "[2024-01-01 10:00:00.200000 .. 2024-01-01 10:00:00.500000] cur=0 del=0",
      "INS K,k,Lima,2024-01-01 10:00:01.5 [2024-01-01 10:00:01.500000 .. open] cur=1 del=0");
  counts_are(1, 1, 1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(collapse_consecutive_equal)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("A", "a", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("A", "a", "Oslo", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("A", "a", "Bergen", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS A,a,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-01-03 00:00:00] cur=0 del=0",
      "INS A,a,Bergen,2024-01-03 00:00:00 [2024-01-03 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(flip_flop_not_collapsed)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("A", "a", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("A", "a", "Bergen", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("A", "a", "Oslo", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  ck_assert_uint_eq(F.cap.n, 3);
  counts_are(3, 0, 0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(keys_emitted_in_source_order)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("z", "a", "x", "2024-01-05 00:00:00"), 2, 1);
  source(ROW("a", "a", "x", "2024-01-01 00:00:00"), 3, 1);
  source(ROW("m", "a", "x", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS z,a,x,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. open] cur=1 del=0",
      "INS a,a,x,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. open] cur=1 del=0",
      "INS m,a,x,2024-01-03 00:00:00 [2024-01-03 00:00:00 .. open] cur=1 del=0");
  fx_teardown();
}
END_TEST

START_TEST(noop_against_current)
{
  scd2_setup();
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "Oslo", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(type2_change_expires_current)
{
  scd2_setup();
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "Rome", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Ann,Rome,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(fingerprint_boundary_is_a_change)
{
  static const char *const cols[] = {"id", "a", "b", "lmd", NULL};
  fx_setup(MODE_SCD2, cols, K1, "lmd");
  fx_init(NULL);
  current(ROW("1", "ab", "c", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "a", "bc", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  counts_are(1, 1, 0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(null_vs_empty_is_a_change)
{
  scd2_setup();
  fx_init(NULL);
  current(ROW("1", "Ann", NUL_, "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("3", "Cy", NUL_, "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "", "2024-02-01 00:00:00"), 2, 1);
  source(ROW("2", "Bob", NUL_, "2024-02-01 00:00:00"), 3, 1);
  source(ROW("3", "Cy", NUL_, "2024-02-01 00:00:00"), 4, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Ann,,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0",
      "EXP 2 to=2024-02-01 00:00:00 del=0",
      "INS 2,Bob,~,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 2, 0, 0, 1);
  fx_teardown();
}
END_TEST

/* ---- type 1 ----------------------------------------------------------------- */

START_TEST(type1_scope_current_updates_in_place)
{
  scd2_setup();
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Anna", "Oslo", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("T1 1,Anna,Oslo,2024-02-01 00:00:00 all=0");
  counts_are(0, 0, 1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(type1_scope_all_updates_every_version)
{
  scd2_setup();
  fx_type1((const char *const[]){"name", NULL}, T1_ALL);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Anna", "Oslo", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("T1 1,Anna,Oslo,2024-02-01 00:00:00 all=1");
  /* One source row, one in-place change: updated, not also unchanged. */
  counts_are(0, 0, 1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(type1_and_type2_in_one_row)
{
  scd2_setup();
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Anne", "Lima", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Anne,Lima,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(type1_change_carried_into_pending_version)
{
  scd2_setup();
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "Anna", "Oslo", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("1", "Anna", "Rome", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  /* The first version is not written yet when the name changes: it is
   * written with the new name (type 1 overwrites the version in force). */
  OPS("INS 1,Anna,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-01-03 00:00:00] cur=0 del=0",
      "INS 1,Anna,Rome,2024-01-03 00:00:00 [2024-01-03 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(type1_scope_all_new_versions_carry_last_value)
{
  scd2_setup();
  fx_type1((const char *const[]){"name", NULL}, T1_ALL);
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "Ann", "Rome", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("1", "Anne", "Rome", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS 1,Anne,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-01-02 00:00:00] cur=0 del=0",
      "INS 1,Anne,Rome,2024-01-02 00:00:00 [2024-01-02 00:00:00 .. open] cur=1 del=0");
  fx_teardown();
}
END_TEST

/* ---- same-lmd duplicates and late rows --------------------------------------- */

START_TEST(identical_duplicates_count_once)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 3, 1);
  apply_ok();
  OPS("INS 1,Ann,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(conflicting_duplicates_fail)
{
  scd2_setup();
  fx_init(NULL);
  source(ROW("7", "Ann", "Oslo", "2024-01-05 00:00:00"), 2, 1);
  source(ROW("8", "Bob", "Oslo", "2024-01-05 00:00:00"), 3, 1);
  source(ROW("7", "Ann", "Rome", "2024-01-05 00:00:00"), 4, 1);
  ck_assert_int_eq(apply(), -1);
  ck_assert_int_eq(F.err.code, DWL_EXIT_FAILED);
  ck_assert_msg(strstr(F.err.msg, "key (id='7') has two different source rows with the same lmd "
                                  "2024-01-05 00:00:00 (src.csv:2 and src.csv:4)") != NULL,
                "message: %s", F.err.msg);
  fx_teardown();
}
END_TEST

/* Oslo from 01-01, Bergen from 01-10 (current); a late row. */
static void late_setup_close(int late, int close, const char *const *row)
{
  scd2_setup();
  F.spec.late = late;
  F.spec.close = close;
  fx_init(NULL);
  current(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(row, 9, 1);
  apply_ok();
  NO_OPS();  /* the key waits for its history */
  ck_assert_int_eq(scd_deferred(&F.e), 1);
  history(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00",
          close == CLOSE_DAY_BEFORE ? "2024-01-09 00:00:00" : "2024-01-10 00:00:00", 0);
  history(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", NULL, 0);
}

static void late_setup(int late, const char *const *row)
{
  late_setup_close(late, CLOSE_AT_NEXT, row);
}

START_TEST(late_row_spliced_into_history)
{
  late_setup(LATE_REPAIR, ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,Oslo,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "INS 1,Ann,Rome,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-10 00:00:00] cur=0 del=0");
  counts_are(1, 0, 1, 0, 0);
  late_counts_are(1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(late_row_merges_with_successor)
{
  late_setup(LATE_REPAIR, ROW("1", "Ann", "Bergen", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  /* Bergen now starts at 01-05: the current version grows back, no new one */
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,Oslo,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "RESHAPE 1 from=2024-01-10 00:00:00 del=0 -> 1,Ann,Bergen,2024-01-05 00:00:00 "
      "[2024-01-05 00:00:00 .. open] cur=1 del=0");
  counts_are(0, 0, 2, 0, 0);
  late_counts_are(1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(late_row_equal_to_its_version_is_noop)
{
  late_setup(LATE_REJECT, ROW("1", "Ann", "Oslo", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);  /* not late: a reread */
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
  late_counts_are(0, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(late_row_rejected_fails)
{
  late_setup(LATE_REJECT, ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"));
  ck_assert_int_eq(repair(), -1);
  ck_assert_int_eq(F.err.code, DWL_EXIT_FAILED);
  ck_assert_msg(strstr(F.err.msg, "src.csv:9: key (id='1') has lmd 2024-01-05 00:00:00, before the key's stored "
                                  "history ends (2024-01-10 00:00:00): a late row, and load.late is reject") != NULL,
                "message: %s", F.err.msg);
  NO_OPS();
  late_counts_are(0, 1, 0);
  fx_teardown();
}
END_TEST

START_TEST(late_row_ignored_rest_applied)
{
  scd2_setup();
  F.spec.late = LATE_IGNORE;
  fx_init(NULL);
  current(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"), 9, 1);
  source(ROW("1", "Ann", "Paris", "2024-01-20 00:00:00"), 10, 1);
  apply_ok();
  NO_OPS();
  history(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", NULL, 0);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("EXP 1 to=2024-01-20 00:00:00 del=0",
      "INS 1,Ann,Paris,2024-01-20 00:00:00 [2024-01-20 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
  late_counts_are(0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(late_row_day_before)
{
  late_setup_close(LATE_REPAIR, CLOSE_DAY_BEFORE, ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,Oslo,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-04 00:00:00] cur=0 del=0",
      "INS 1,Ann,Rome,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-09 00:00:00] cur=0 del=0");
  fx_teardown();
}
END_TEST

START_TEST(late_row_at_a_stored_start_other_values_fails)
{
  late_setup(LATE_REPAIR, ROW("1", "Ann", "Rome", "2024-01-01 00:00:00"));
  ck_assert_int_eq(repair(), -1);
  ck_assert_msg(strstr(F.err.msg, "src.csv:9: key (id='1') has lmd 2024-01-01 00:00:00, the same as a stored version "
                                  "of the key, but different type 2 values") != NULL,
                "message: %s", F.err.msg);
  NO_OPS();
  fx_teardown();
}
END_TEST

START_TEST(same_lmd_as_current_other_values_fails)
{
  scd2_setup();
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Ann", "Rome", "2024-01-10 00:00:00"), 3, 1);
  ck_assert_int_eq(apply(), -1);
  ck_assert_msg(strstr(F.err.msg, "the same as a stored version of the key") != NULL, "message: %s", F.err.msg);
  fx_teardown();
}
END_TEST

START_TEST(same_lmd_as_current_type1_only_is_fine)
{
  scd2_setup();
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Anna", "Oslo", "2024-01-10 00:00:00"), 3, 1);
  apply_ok();
  OPS("T1 1,Anna,Oslo,2024-01-10 00:00:00 all=0");
  fx_teardown();
}
END_TEST

/* ---- deletes ----------------------------------------------------------------- */

static const char *const C5[] = {"id", "name", "op", "lmd", NULL};

static void op_setup(int style)
{
  fx_setup(MODE_SCD2, C5, K1, "lmd");
  fx_deletes_column("op", (const char *const[]){"D", "X", NULL});
  F.spec.delete_style = style;
  fx_init(NULL);
}

START_TEST(delete_by_op_expires_as_of_lmd)
{
  op_setup(DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), 2, 1);
  source(ROW("2", "Bob", "X", "2024-02-02 00:00:00"), 3, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=1", "EXP 2 to=2024-02-02 00:00:00 del=1");
  counts_are(0, 0, 0, 2, 0);
  fx_teardown();
}
END_TEST

START_TEST(delete_and_reinsert_in_one_run)
{
  op_setup(DELSTYLE_EXPIRE);
  source(ROW("5", "Ed", "I", "2024-02-07 00:00:00"), 2, 1);
  source(ROW("5", "Ed", "D", "2024-02-08 00:00:00"), 3, 1);
  source(ROW("5", "Eddy", "I", "2024-02-09 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS 5,Ed,I,2024-02-07 00:00:00 [2024-02-07 00:00:00 .. 2024-02-08 00:00:00] cur=0 del=1",
      "INS 5,Eddy,I,2024-02-09 00:00:00 [2024-02-09 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 1, 0);
  fx_teardown();
}
END_TEST

START_TEST(delete_of_unknown_key_is_unchanged)
{
  op_setup(DELSTYLE_EXPIRE);
  source(ROW("9", "Zed", "D", "2024-02-04 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(op_column_alone_is_no_change)
{
  op_setup(DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "U", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(tombstone_by_op_column)
{
  op_setup(DELSTYLE_TOMBSTONE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Ann,D,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=1");
  counts_are(1, 0, 0, 1, 0);
  fx_teardown();
}
END_TEST

START_TEST(revival_closes_tombstone)
{
  op_setup(DELSTYLE_TOMBSTONE);
  current(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), "2024-02-01 00:00:00", 1);
  source(ROW("1", "Ann", "I", "2024-03-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-03-01 00:00:00 del=1",
      "INS 1,Ann,I,2024-03-01 00:00:00 [2024-03-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
  fx_teardown();
}
END_TEST

/* Ann from 01-01, Bob from 01-10 (current); a delete row of 01-05. */
static void late_delete_setup(int style)
{
  op_setup(style);
  current(ROW("1", "Bob", "I", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Ann", "D", "2024-01-05 00:00:00"), 2, 1);
  apply_ok();
  history(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", "2024-01-10 00:00:00", 0);
  history(ROW("1", "Bob", "I", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", NULL, 0);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
}

/* A delete row within a second of the version's start closes it at its
 * start; the tombstone, and a revival, follow one step apart. */
START_TEST(within_step_delete_tombstone)
{
  op_setup(DELSTYLE_TOMBSTONE);
  F.spec.close = CLOSE_SECOND_BEFORE;
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00.2"), "2024-01-01 00:00:00.2", 0);
  source(ROW("1", "Ann", "D", "2024-01-01 00:00:00.7"), 2, 1);
  source(ROW("1", "Bea", "I", "2024-01-01 00:00:00.9"), 3, 1);
  apply_ok();
  OPS("EXP 1 to=2024-01-01 00:00:00.200000 del=0",
      "INS 1,Ann,D,2024-01-01 00:00:00.7 [2024-01-01 00:00:01.200000 .. 2024-01-01 00:00:01.200000] cur=0 del=1",
      "INS 1,Bea,I,2024-01-01 00:00:00.9 [2024-01-01 00:00:02.200000 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 1, 0);
  fx_teardown();
}
END_TEST

START_TEST(within_step_delete_expire)
{
  op_setup(DELSTYLE_EXPIRE);
  F.spec.close = CLOSE_SECOND_BEFORE;
  source(ROW("1", "Ann", "I", "2024-01-01 00:00:00.2"), 2, 1);
  source(ROW("1", "Ann", "D", "2024-01-01 00:00:00.7"), 3, 1);
  source(ROW("1", "Bea", "I", "2024-01-01 00:00:00.9"), 4, 1);
  apply_ok();
  OPS("INS 1,Ann,I,2024-01-01 00:00:00.2 [2024-01-01 00:00:00.200000 .. 2024-01-01 00:00:00.200000] cur=0 del=1",
      "INS 1,Bea,I,2024-01-01 00:00:00.9 [2024-01-01 00:00:01.200000 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 1, 0);
  fx_teardown();
}
END_TEST

START_TEST(late_delete_expire_style)
{
  late_delete_setup(DELSTYLE_EXPIRE);
  /* closed and flagged at the deletion; the next version is now a revival */
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,I,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=1");
  late_counts_are(1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(late_delete_tombstone_style)
{
  late_delete_setup(DELSTYLE_TOMBSTONE);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,I,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "INS 1,Ann,D,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-10 00:00:00] cur=0 del=1");
  fx_teardown();
}
END_TEST

START_TEST(late_row_revives_before_a_deletion)
{
  /* deleted at 01-10 by a flagged row; a row of 01-05 arrives late: the
   * deletion now closes it */
  op_setup(DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  scd_free(&F.e);
  fx_init(NULL);
  dwl_value v[8];
  to_values(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), v);
  dwl_ts vt = ts("2024-01-10 00:00:00");
  dwl_error err;
  err_init(&err);
  ck_assert(scd_add_gone(&F.e, v, &vt, &err) == 0);
  source(ROW("1", "Bob", "I", "2024-01-05 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  history(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", "2024-01-10 00:00:00", 1);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=1 -> 1,Ann,I,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "INS 1,Bob,I,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-10 00:00:00] cur=0 del=1");
  fx_teardown();
}
END_TEST

START_TEST(revival_before_tombstone_starts_at_it)
{
  op_setup(DELSTYLE_TOMBSTONE);
  /* deleted by absence at the run's clock, later than the data's lmd: rows
   * dated before it cannot be ordered against it (not late rows) */
  F.spec.deletes = DEL_ABSENT;
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2026-06-01 12:00:00", 1);
  source(ROW("1", "Ann", "I", "2024-03-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2026-06-01 12:00:00 del=1",
      "INS 1,Ann,I,2024-03-01 00:00:00 [2026-06-01 12:00:00 .. open] cur=1 del=0");
  fx_teardown();
}
END_TEST

START_TEST(deleted_key_delete_again_is_unchanged)
{
  op_setup(DELSTYLE_TOMBSTONE);
  current(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), "2024-02-01 00:00:00", 1);
  source(ROW("1", "Ann", "D", "2024-03-01 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
  fx_teardown();
}
END_TEST

static void absent_setup(int mode, int style)
{
  fx_setup(mode, C4, K1, "lmd");
  F.spec.deletes = DEL_ABSENT;
  F.spec.delete_style = style;
  F.spec.close = CLOSE_AT_NEXT;
  fx_init("2026-11-30 08:00:00");
}

/* The run's second pass: emits deletes for the given current rows. */
static int delete_absent(const char *const *row)
{
  dwl_value v[8];
  to_values(row, v);
  err_init(&F.err);
  dwl_ts vf = {0, 0};
  return scd_delete_absent(&F.e, v, &vf, &SINK, &F.counts, &F.err);
}

START_TEST(absent_expire)
{
  absent_setup(MODE_SCD2, DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("3", "Cy", "Lima", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 1);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 0); /* not past the checkpoint: present */
  apply_ok();
  ck_assert_uint_eq(scd_mark_absent(&F.e), 1); /* 2 only: 3 is already a tombstone */
  ck_assert_int_eq(scd_marked(&F.e, (dwl_value[]){{"2", 1, 0}, {0}, {0}, {0}}), 1);
  ck_assert_int_eq(delete_absent(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00")), 0);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 1);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 0); /* once */
  OPS("EXP 2 to=2026-11-30 08:00:00 del=1");
  counts_are(0, 0, 0, 1, 0);
  fx_teardown();
}
END_TEST

START_TEST(absent_late_rows_before_the_deletion_ignored)
{
  /* Oslo from 01-01, deleted by absence at a run's clock (06-01), back as
   * Rome from then; rows dated before the deletion cannot be ordered
   * against it: ignored even with load.late: repair.  One after it is
   * spliced in. */
  absent_setup(MODE_SCD2, DELSTYLE_EXPIRE);
  F.spec.deleted = "is_deleted";  /* tells the deletion from the revival at its instant */
  current(ROW("1", "Ann", "Rome", "2024-05-01 00:00:00"), "2024-06-01 00:00:00", 0);
  source(ROW("1", "Ann", "Lima", "2024-03-01 00:00:00"), 2, 1);
  source(ROW("1", "Ann", "Kyiv", "2024-06-05 00:00:00"), 3, 1);
  source(ROW("1", "Ann", "Rome", "2024-06-09 00:00:00"), 4, 1);
  apply_ok();
  NO_OPS();
  history(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", "2024-06-01 00:00:00", 1);
  history(ROW("1", "Ann", "Rome", "2024-05-01 00:00:00"), "2024-06-01 00:00:00", NULL, 0);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-06-01 00:00:00 del=0 -> 1,Ann,Rome,2024-05-01 00:00:00 "
      "[2024-06-01 00:00:00 .. 2024-06-05 00:00:00] cur=0 del=0",
      "INS 1,Ann,Kyiv,2024-06-05 00:00:00 [2024-06-05 00:00:00 .. 2024-06-09 00:00:00] cur=0 del=0",
      "INS 1,Ann,Rome,2024-06-09 00:00:00 [2024-06-09 00:00:00 .. open] cur=1 del=0");
  late_counts_are(0, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(absent_tombstone)
{
  absent_setup(MODE_SCD2, DELSTYLE_TOMBSTONE);
  F.spec.close = CLOSE_SECOND_BEFORE;
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  apply_ok();
  ck_assert_uint_eq(scd_mark_absent(&F.e), 1);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 1);
  OPS("EXP 2 to=2026-11-30 07:59:59 del=0",
      "INS 2,Bob,Rome,2024-01-01 00:00:00 [2026-11-30 08:00:00 .. open] cur=1 del=1");
  counts_are(1, 0, 0, 1, 0);
  fx_teardown();
}
END_TEST

/* ---- upsert ------------------------------------------------------------------ */

START_TEST(upsert_insert_update_unchanged)
{
  fx_setup(MODE_UPSERT, C4, K1, "lmd");
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "Lima", "2024-02-01 00:00:00"), 2, 1);
  source(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), 3, 1);
  source(ROW("3", "Cy", "Kiev", "2024-02-01 00:00:00"), 4, 1);
  apply_ok();
  OPS("UPD 1,Ann,Lima,2024-02-01 00:00:00",
      "INS 3,Cy,Kiev,2024-02-01 00:00:00");
  counts_are(1, 0, 1, 0, 1);
  fx_teardown();
}
END_TEST

START_TEST(upsert_composite_key_null_safe)
{
  static const char *const cols[] = {"item", "ticket", "day", "profit", NULL};
  static const char *const key[] = {"item", "ticket", "day", NULL};
  fx_setup(MODE_UPSERT, cols, key, NULL);
  fx_init(NULL);
  current(ROW("12183", "82355", NUL_, NUL_), "1970-01-01", 0);
  current(ROW("12183", "82355", "2452252", "2"), "1970-01-01", 0);
  source(ROW("12183", "82355", NUL_, NUL_), 2, 1);        /* same: unchanged */
  source(ROW("12183", "82355", "2452252", "2"), 3, 1);    /* same: unchanged */
  source(ROW("12183", "82355", "", "5"), 4, 1);           /* "" is not NULL: new */
  source(ROW(NUL_, "82356", NUL_, "1"), 5, 1);            /* new */
  apply_ok();
  OPS("INS 12183,82355,,5", "INS ~,82356,~,1");
  counts_are(2, 0, 0, 0, 2);
  fx_teardown();
}
END_TEST

START_TEST(upsert_changed_null_key_row_updated)
{
  static const char *const cols[] = {"item", "ticket", "day", "profit", NULL};
  static const char *const key[] = {"item", "ticket", "day", NULL};
  fx_setup(MODE_UPSERT, cols, key, NULL);
  fx_init(NULL);
  current(ROW("12183", "82355", NUL_, NUL_), "1970-01-01", 0);
  source(ROW("12183", "82355", NUL_, "99"), 2, 1);
  apply_ok();
  OPS("UPD 12183,82355,~,99");
  counts_are(0, 0, 1, 0, 0);
  fx_teardown();
}
END_TEST

START_TEST(upsert_latest_lmd_wins)
{
  fx_setup(MODE_UPSERT, C4, K1, "lmd");
  fx_init(NULL);
  source(ROW("1", "a", "x", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "b", "x", "2024-01-03 00:00:00"), 3, 1);
  source(ROW("1", "c", "x", "2024-01-02 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS 1,b,x,2024-01-03 00:00:00");
  counts_are(1, 0, 0, 0, 2);
  fx_teardown();
}
END_TEST

START_TEST(upsert_conflict_fails)
{
  fx_setup(MODE_UPSERT, C4, K1, NULL);
  fx_init(NULL);
  source(ROW("1", "a", "x", "2024-01-01"), 2, 1);
  source(ROW("1", "b", "x", "2024-01-01"), 3, 1);
  ck_assert_int_eq(apply(), -1);
  ck_assert_msg(strstr(F.err.msg, "(src.csv:2 and src.csv:3)") != NULL, "message: %s", F.err.msg);
  NO_OPS();
  fx_teardown();
}
END_TEST

START_TEST(upsert_delete_by_op_removes)
{
  static const char *const cols[] = {"id", "name", "op", NULL};
  fx_setup(MODE_UPSERT, cols, K1, NULL);
  fx_deletes_column("op", (const char *const[]){"D", NULL});
  fx_init(NULL);
  current(ROW("1", "Ann", "I"), "1970-01-01", 0);
  source(ROW("1", "Ann", "D"), 2, 1);
  source(ROW("2", "Bob", "D"), 3, 1);
  apply_ok();
  OPS("REM 1");
  counts_are(0, 0, 0, 1, 1);
  fx_teardown();
}
END_TEST

START_TEST(upsert_absent_removes)
{
  absent_setup(MODE_UPSERT, DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "1970-01-01", 0);
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "1970-01-01", 0);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  apply_ok();
  ck_assert_uint_eq(scd_mark_absent(&F.e), 1);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 1);
  OPS("REM 2");
  counts_are(0, 0, 0, 1, 1);
  fx_teardown();
}
END_TEST

START_TEST(two_current_versions_refused)
{
  scd2_setup();
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  dwl_value v[4];
  to_values(ROW("1", "Ann", "Rome", "2024-02-01 00:00:00"), v);
  dwl_ts vf = ts("2024-02-01");
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(scd_add_current(&F.e, v, &vf, 0, &err), -1);
  ck_assert_msg(strstr(err.msg, "table dim has more than one current version of key (id='1')") != NULL, "message: %s",
                err.msg);
  fx_teardown();
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("scd");
  TCase *tc = tcase_create("scd");
  tcase_add_test(tc, init_default_tracked_set);
  tcase_add_test(tc, init_unknown_column);
  tcase_add_test(tc, col_index_exact_then_caseless);
  tcase_add_test(tc, close_at_rules);
  tcase_add_test(tc, new_key_inserts_open_version);
  tcase_add_test(tc, chain_ordered_by_lmd);
  tcase_add_test(tc, chain_day_before);
  tcase_add_test(tc, within_step_change_replaces_pending);
  tcase_add_test(tc, within_step_change_reshapes_stored);
  tcase_add_test(tc, collapse_consecutive_equal);
  tcase_add_test(tc, flip_flop_not_collapsed);
  tcase_add_test(tc, keys_emitted_in_source_order);
  tcase_add_test(tc, noop_against_current);
  tcase_add_test(tc, type2_change_expires_current);
  tcase_add_test(tc, fingerprint_boundary_is_a_change);
  tcase_add_test(tc, null_vs_empty_is_a_change);
  tcase_add_test(tc, type1_scope_current_updates_in_place);
  tcase_add_test(tc, type1_scope_all_updates_every_version);
  tcase_add_test(tc, type1_and_type2_in_one_row);
  tcase_add_test(tc, type1_change_carried_into_pending_version);
  tcase_add_test(tc, type1_scope_all_new_versions_carry_last_value);
  tcase_add_test(tc, identical_duplicates_count_once);
  tcase_add_test(tc, conflicting_duplicates_fail);
  tcase_add_test(tc, late_row_spliced_into_history);
  tcase_add_test(tc, late_row_merges_with_successor);
  tcase_add_test(tc, late_row_equal_to_its_version_is_noop);
  tcase_add_test(tc, late_row_rejected_fails);
  tcase_add_test(tc, late_row_ignored_rest_applied);
  tcase_add_test(tc, late_row_day_before);
  tcase_add_test(tc, late_row_at_a_stored_start_other_values_fails);
  tcase_add_test(tc, same_lmd_as_current_other_values_fails);
  tcase_add_test(tc, same_lmd_as_current_type1_only_is_fine);
  tcase_add_test(tc, delete_by_op_expires_as_of_lmd);
  tcase_add_test(tc, delete_and_reinsert_in_one_run);
  tcase_add_test(tc, delete_of_unknown_key_is_unchanged);
  tcase_add_test(tc, op_column_alone_is_no_change);
  tcase_add_test(tc, tombstone_by_op_column);
  tcase_add_test(tc, revival_closes_tombstone);
  tcase_add_test(tc, within_step_delete_tombstone);
  tcase_add_test(tc, within_step_delete_expire);
  tcase_add_test(tc, late_delete_expire_style);
  tcase_add_test(tc, late_delete_tombstone_style);
  tcase_add_test(tc, late_row_revives_before_a_deletion);
  tcase_add_test(tc, revival_before_tombstone_starts_at_it);
  tcase_add_test(tc, deleted_key_delete_again_is_unchanged);
  tcase_add_test(tc, absent_expire);
  tcase_add_test(tc, absent_late_rows_before_the_deletion_ignored);
  tcase_add_test(tc, absent_tombstone);
  tcase_add_test(tc, upsert_insert_update_unchanged);
  tcase_add_test(tc, upsert_composite_key_null_safe);
  tcase_add_test(tc, upsert_changed_null_key_row_updated);
  tcase_add_test(tc, upsert_latest_lmd_wins);
  tcase_add_test(tc, upsert_conflict_fails);
  tcase_add_test(tc, upsert_delete_by_op_removes);
  tcase_add_test(tc, upsert_absent_removes);
  tcase_add_test(tc, two_current_versions_refused);
  suite_add_tcase(s, tc);
  return s;
}
