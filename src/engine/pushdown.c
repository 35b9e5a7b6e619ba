/* The pushdown engine: the memory engine's semantics (scd.c) as set-based
 * SQL over a staged delta, per dialect.
 *
 * Each source row past the checkpoint is staged with what only the client
 * can compute cheaply and identically: its source order and line, its lmd
 * in microseconds (the ordering key), whether it is a delete, XXH3
 * fingerprints of its type 2, type 1 and whole values (comparisons inside
 * the delta), its valid_from and its close-rule valid_to as text, the open
 * end, and SHA-256 surrogate keys (SQLite has no sha256()).  The warehouse
 * then, in temporary tables of delta size (MariaDB cannot name a
 * temporary table twice in one statement, so each statement reads one):
 *
 *   a  the staged rows with their predecessor by (key, lmd, order): a row
 *      with the same lmd as its predecessor is an identical duplicate
 *      (dropped) or a conflict (the run fails naming both lines);
 *   b  the remaining rows joined with the key's current version: whether
 *      it is live or a tombstone, its valid_from, and NULL-safe equality of
 *      the type 2 and type 1 columns with it (late rows fail here);
 *   d  the walk of scd.c as window functions: the state before each row
 *      (none, live, tombstone) follows from its predecessor alone, so a row
 *      starts a version when the key is not live or its type 2 values
 *      differ from its predecessor's; a delete counts when the key is live;
 *      a running sum of these events numbers each version's span of rows;
 *   e  the events, each with the next event's close-rule time (LEAD) and
 *      the type 1 values its version carries (the span's last row, or with
 *      type1_scope: all the key's last row);
 *
 * and the changes are applied: type 1 overwrites of current versions, the
 * closing of current versions, the new versions (INSERT ... SELECT, with
 * sequence surrogate keys numbered in the memory engine's order), type 1
 * overwrites of every version.  upsert keeps the last row per key and
 * applies it with one MERGE (PostgreSQL) or DELETE/UPDATE/INSERT; with
 * deletes: absent every source key is staged too (dwl_pd_seen) and the
 * rows of the other keys are deleted, and the rows not past the checkpoint
 * (dwl_pd_old) bring back the keys the table no longer has. */
#include "pushdown.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "fingerprint.h"
#include "log.h"
#include "scd.h"
#include "target.h"
#include "writer.h"

/* Staged columns after the source's, in this order. */
enum {
  X_SEQ, X_ORIGIN, X_T, X_DEL, X_FP2, X_FP1, X_FPA, X_VF, X_VT, X_OE, X_SK, X_SKT, NX
};
static const char *const xname[NX] = {"dwl_seq", "dwl_origin", "dwl_t",  "dwl_del", "dwl_fp2", "dwl_fp1",
                                      "dwl_fpa", "dwl_vf",     "dwl_vt", "dwl_oe",  "dwl_sk",  "dwl_skt"};

struct pushdown {
  target *t;
  writer *w;
  const scd_engine *e;
  const dwl_spec *spec;
  writer_stage *st;
  writer_stage *seen;    /* upsert, deletes: absent: every source key */
  writer_stage *old;     /* upsert, deletes: absent: the rows not past the checkpoint */
  long long nold;
  long long nabsent;     /* the table's keys not in seen (pushdown_count_absent) */
  dwl_value *keyrow;     /* one staged key */
  size_t ncols;          /* source columns */
  const char **q;        /* quoted target name of each source column */
  dwl_value *row;        /* one staged row */
  long long n;           /* rows staged */
  int nullkeys;          /* a staged key has a NULL part: joins must be NULL-safe */
  char num[3][24];
  char fp[3][33];
  char vf[32], vt[32], sk[65], skt[65];
};

/* Its key messages fetch the key's values into fixed arrays. */
#define PD_MAX_KEY SPEC_PUSHDOWN_MAX_KEY

/* ---- SQL text helpers -------------------------------------------------------- */

static int is_tomb(const pushdown *p)
{
  return p->spec->delete_style == DELSTYLE_TOMBSTONE;
}

static const char *tq(const pushdown *p, int role)
{
  return p->t->cols[p->t->ix[role]].q;
}

/* "a.k1, a.k2" */
static void keys(const pushdown *p, dwl_buf *b, const char *a)
{
  for (size_t i = 0; i < p->e->cols.nkey; i++)
    buf_printf(b, "%s%s.%s", i ? ", " : "", a, p->q[p->e->cols.key[i]]);
}

/* a.c = b.c NULL-safely: the dialect's operator without its parameter. */
static void nseq(const pushdown *p, dwl_buf *b, const char *a, const char *c2, const char *col)
{
  const char *op = p->t->d->null_safe_eq;
  size_t oplen = strlen(op) - 1; /* drop the '?' */
  buf_printf(b, "%s.%s%.*s%s.%s", a, col, (int)oplen, op, c2, col);
}

/* Key equality; plain where no staged key has a NULL part, so joins can
 * use the key index (a NULL-safe comparison cannot be hashed). */
static void keyeq(const pushdown *p, dwl_buf *b, const char *a, const char *c2)
{
  for (size_t i = 0; i < p->e->cols.nkey; i++) {
    const char *col = p->q[p->e->cols.key[i]];
    if (i)
      buf_adds(b, " AND ");
    if (p->nullkeys)
      nseq(p, b, a, c2, col);
    else
      buf_printf(b, "%s.%s = %s.%s", a, col, c2, col);
  }
}

/* 1 when every column of idx[] is NULL-safely equal in a and c2, else 0. */
static void alleq(const pushdown *p, dwl_buf *b, const char *a, const char *c2, const size_t *idx, size_t n)
{
  buf_adds(b, "CASE WHEN ");
  for (size_t i = 0; i < n; i++) {
    if (i)
      buf_adds(b, " AND ");
    nseq(p, b, a, c2, p->q[idx[i]]);
  }
  buf_adds(b, n ? " THEN 1 ELSE 0 END" : "1 = 1 THEN 1 ELSE 0 END");
}

/* The current version of d; a holds the staged open end. */
static void curpred(const pushdown *p, dwl_buf *b, const char *d, const char *a)
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
static void over(const pushdown *p, dwl_buf *b, const char *a, const char *extra, const char *order)
{
  buf_adds(b, " OVER (PARTITION BY ");
  keys(p, b, a);
  if (extra)
    buf_printf(b, ", %s.%s", a, extra);
  buf_printf(b, " ORDER BY %s)", order);
}

/* Every staged column, prefixed. */
static void staged_cols(const pushdown *p, dwl_buf *b, const char *a)
{
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "%s%s.%s", i ? ", " : "", a, p->q[i]);
  for (int x = 0; x < NX; x++)
    buf_printf(b, ", %s.%s", a, xname[x]);
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs a statement that only builds temporary tables or reads; these run
 * in plan mode too. */
static int exec(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n,
                dwl_error *err)
{
  if (!b->data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  double t0 = now_s();
  int rc = odbc_exec(p->t->c, b->data, params, types, n, err);
  log_msg(LOG_DEBUG, "pushdown: %.3fs: %s", now_s() - t0, b->data);
  if (rc != 0)
    err_prefix(err, "pushdown into %s", p->spec->target_table);
  buf_reset(b);
  return rc;
}

static int apply(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n,
                 dwl_error *err)
{
  if (!b->data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = writer_exec(p->w, b->data, params, types, n, err);
  buf_reset(b);
  return rc;
}

/* Fresh statistics for a temporary table (PostgreSQL), so joins with the
 * dimension probe its key index instead of scanning it. */
static int analyze(pushdown *p, const char *table, dwl_error *err)
{
  if (!p->t->d->analyze_sql)
    return 0;
  dwl_buf b;
  buf_init(&b, 0);
  buf_printf(&b, "%s %s", p->t->d->analyze_sql, table);
  int rc = exec(p, &b, NULL, NULL, 0, err);
  buf_free(&b);
  return rc;
}

/* The first row of a query into `out` (n text values, copied), 1 when
 * there is one, 0 when none, -1 on error. */
static int first_row(pushdown *p, dwl_buf *b, char out[][512], int *isnull, size_t n, dwl_error *err)
{
  odbc_stmt *s = NULL;
  int rc = b->data ? ostmt_prepare(p->t->c, b->data, &s, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_reset(b);
  const dwl_value *r;
  if (rc == 0)
    rc = ostmt_execute(s, NULL, NULL, 0, err);
  if (rc == 0)
    rc = ostmt_fetch(s, &r, err);
  if (rc == 1)
    for (size_t i = 0; i < n; i++) {
      isnull[i] = r[i].is_null;
      snprintf(out[i], 512, "%.*s", r[i].is_null ? 0 : (int)r[i].len, r[i].is_null ? "" : r[i].data);
    }
  ostmt_free(s);
  if (rc < 0)
    err_prefix(err, "pushdown into %s", p->spec->target_table);
  return rc;
}

/* ---- staging ---------------------------------------------------------------- */

int pushdown_open(target *t, writer *w, const scd_engine *e, pushdown **out, dwl_error *err)
{
  *out = NULL;
  pushdown *p = calloc(1, sizeof *p);
  if (!p)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  p->t = t;
  p->w = w;
  p->e = e;
  p->spec = t->spec;
  p->ncols = t->nsrc;
  size_t n = p->ncols + NX;
  p->q = calloc(p->ncols ? p->ncols : 1, sizeof *p->q);
  p->row = calloc(n, sizeof *p->row);
  char **names = calloc(n, sizeof *names);
  dwl_column *decl = calloc(n, sizeof *decl);
  int rc = p->q && p->row && names && decl ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
    const tcol *c = &t->cols[i];
    if (c->role != TC_SRC)
      continue;
    p->q[c->src] = c->q;
    names[c->src] = c->q;
    decl[c->src] = c->decl;
    /* The staged columns' own names start so: a source column may not. */
    if (strncasecmp(c->name, "dwl_", 4) == 0) {
      int line = 0, col = 0;
      spec_key_pos(p->spec, "load.engine", &line, &col);
      rc = err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                   "%s:%d:%d: load.engine: pushdown stages its own columns named dwl_*, and the source has a "
                   "column '%s'; rename it or use engine: memory",
                   p->spec->path, line, col, c->name);
    }
  }
  dwl_column integer = {.type = DWL_TYPE_INTEGER, .nullable = 1};
  dwl_column text = {.type = DWL_TYPE_TEXT, .nullable = 1};
  dwl_column when = {.type = t->vdate ? DWL_TYPE_DATE : DWL_TYPE_TIMESTAMP, .nullable = 1};
  for (int x = 0; rc == 0 && x < NX; x++) {
    names[p->ncols + (size_t)x] = (char *)xname[x];
    decl[p->ncols + (size_t)x] = x <= X_DEL ? integer : (x >= X_VF && x <= X_OE) ? when : text;
  }
  if (rc == 0)
    rc = writer_stage_open(w, "dwl_pd_src", names, decl, n, &p->st, err);
  /* Absence is judged against every source key, past the checkpoint or
   * not; dwl_one tells a matched key from an unmatched one in a join. */
  if (rc == 0 && p->spec->deletes == DEL_ABSENT) {
    const scd_cols *c = &e->cols;
    char **kn = calloc(c->nkey + 1, sizeof *kn);
    dwl_column *kd = calloc(c->nkey + 1, sizeof *kd);
    p->keyrow = calloc(c->nkey + 1, sizeof *p->keyrow);
    rc = kn && kd && p->keyrow ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < c->nkey; i++) {
      kn[i] = names[c->key[i]];
      kd[i] = decl[c->key[i]];
    }
    if (rc == 0) {
      kn[c->nkey] = "dwl_one";
      kd[c->nkey] = integer;
      rc = writer_stage_open(w, "dwl_pd_seen", kn, kd, c->nkey + 1, &p->seen, err);
    }
    free(kn);
    free(kd);
    /* The extract says which keys exist: a key the table no longer has
     * comes back with its row, past the checkpoint or not (apply_revive). */
    if (rc == 0 && p->spec->mode == MODE_UPSERT)
      rc = writer_stage_open(w, "dwl_pd_old", names, decl, n, &p->old, err);
  }
  free(names);
  free(decl);
  if (rc != 0) {
    pushdown_free(p);
    return -1;
  }
  *out = p;
  return 0;
}

void pushdown_free(pushdown *p)
{
  if (!p)
    return;
  writer_stage_free(p->st);
  writer_stage_free(p->seen);
  writer_stage_free(p->old);
  free(p->keyrow);
  free(p->q);
  free(p->row);
  free(p);
}

static void set_text(dwl_value *v, const char *s)
{
  v->data = s;
  v->len = s ? strlen(s) : 0;
  v->is_null = s == NULL;
}

static void fp_hex(fp128 f, char out[33])
{
  snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, f.hi, f.lo);
}

static int seen_key(pushdown *p, const dwl_value *row, dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  if (!p->seen)
    return 0;
  for (size_t i = 0; i < c->nkey; i++) {
    p->keyrow[i] = row[c->key[i]];
    p->nullkeys |= row[c->key[i]].is_null;
  }
  set_text(&p->keyrow[c->nkey], "1");
  return writer_stage_add(p->seen, p->keyrow, err);
}

/* Fills p->row: the row, then what is staged with it; `seq` numbers it. */
static void staged_row(pushdown *p, const dwl_value *row, long long seq, uint64_t origin, const dwl_ts *lmd)
{
  const scd_cols *c = &p->e->cols;
  dwl_value *v = p->row;
  for (size_t i = 0; i < p->ncols; i++)
    v[i] = row[i];
  for (size_t i = 0; i < c->nkey; i++)
    p->nullkeys |= row[c->key[i]].is_null;
  dwl_value *x = &v[p->ncols];
  snprintf(p->num[0], sizeof p->num[0], "%lld", seq);
  snprintf(p->num[1], sizeof p->num[1], "%" PRIu64, origin);
  snprintf(p->num[2], sizeof p->num[2], "%" PRId64, lmd ? lmd->us : 0);
  set_text(&x[X_SEQ], p->num[0]);
  set_text(&x[X_ORIGIN], p->num[1]);
  set_text(&x[X_T], p->num[2]);
  set_text(&x[X_DEL], scd_is_delete(p->e, row) ? "1" : "0");
  fp_hex(fp_tuple(row, c->t2, c->nt2), p->fp[0]);
  fp_hex(fp_tuple(row, c->t1, c->nt1), p->fp[1]);
  fp_hex(fp_values(row, p->ncols), p->fp[2]);
  set_text(&x[X_FP2], p->fp[0]);
  set_text(&x[X_FP1], p->fp[1]);
  set_text(&x[X_FPA], p->fp[2]);
  set_text(&x[X_VF], NULL);
  set_text(&x[X_VT], NULL);
  set_text(&x[X_OE], p->t->open_end[0] ? p->t->open_end : NULL);
  set_text(&x[X_SK], NULL);
  set_text(&x[X_SKT], NULL);
  if (lmd && p->spec->mode == MODE_SCD2) {
    target_ts_text(p->t, lmd, p->vf);
    dwl_ts vt = scd_close_at(p->spec, *lmd);
    target_ts_text(p->t, &vt, p->vt);
    set_text(&x[X_VF], p->vf);
    set_text(&x[X_VT], p->vt);
    if (p->t->ix[TC_SK] >= 0 && p->spec->sk_strategy == SK_HASH) {
      /* The memory engine's hash (writer.c): key values and valid_from,
       * with a marker for tombstones. */
      char extra[48];
      int len = snprintf(extra, sizeof extra, "%s", p->vf);
      fp_sha256_hex(row, c->key, c->nkey, extra, (size_t)len, p->sk);
      len = snprintf(extra, sizeof extra, "%s|tombstone", p->vf);
      fp_sha256_hex(row, c->key, c->nkey, extra, (size_t)len, p->skt);
      set_text(&x[X_SK], p->sk);
      set_text(&x[X_SKT], p->skt);
    }
  }
}

int pushdown_add(pushdown *p, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  staged_row(p, row, p->n++, origin, lmd);
  if (seen_key(p, row, err) != 0)
    return -1;
  return writer_stage_add(p->st, p->row, err);
}

int pushdown_seen_key(pushdown *p, const dwl_value *row, dwl_error *err)
{
  return seen_key(p, row, err);
}

int pushdown_seen(pushdown *p, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  if (seen_key(p, row, err) != 0)
    return -1;
  if (!p->old)
    return 0;
  staged_row(p, row, p->nold++, origin, lmd);
  return writer_stage_add(p->old, p->row, err);
}

/* ---- checks: duplicates and late rows ------------------------------------- */

/* "(id='A1', region=NULL)" from the first nkey fetched values. */
static void describe(const pushdown *p, char vals[][512], const int *isnull, char *out, size_t n)
{
  dwl_value *kr = calloc(p->ncols ? p->ncols : 1, sizeof *kr);
  if (!kr) {
    snprintf(out, n, "(?)");
    return;
  }
  for (size_t i = 0; i < p->ncols; i++)
    kr[i].is_null = 1;
  for (size_t i = 0; i < p->e->cols.nkey; i++) {
    size_t k = p->e->cols.key[i];
    kr[k].is_null = isnull[i];
    kr[k].data = vals[i];
    kr[k].len = strlen(vals[i]);
  }
  scd_describe_key(p->e, kr, out, n);
  free(kr);
}

static void when_text(const pushdown *p, const char *us, char out[32])
{
  dwl_ts t = {strtoll(us, NULL, 10), 0};
  target_ts_text(p->t, &t, out);
}

#define ON(p) ((p)->e->origin_name ? (p)->e->origin_name : "source")

/* The first row of "SELECT <alias's key columns>, <rest>" (nrest more
 * values): the key described into k and the value at v[nkey + when_at]
 * (microseconds) formatted into when.  1 found, 0 none, -1 error. */
static int offending_row(pushdown *p, dwl_buf *b, const char *alias, const char *rest, size_t nrest,
                         size_t when_at, char v[][512], int *isnull, char k[512], char when[32], dwl_error *err)
{
  size_t nk = p->e->cols.nkey;
  buf_adds(b, "SELECT ");
  keys(p, b, alias);
  buf_adds(b, rest);
  int rc = first_row(p, b, v, isnull, nk + nrest, err);
  if (rc == 1) {
    describe(p, v, isnull, k, 512);
    when_text(p, v[nk + when_at], when);
  }
  return rc;
}

/* Two rows of a key with the same lmd must be identical (as scd.c). */
static int check_conflicts(pushdown *p, dwl_buf *b, dwl_error *err)
{
  size_t nk = p->e->cols.nkey;
  char v[PD_MAX_KEY + 5][512], k[512], when[32];
  int isnull[PD_MAX_KEY + 5];
  int rc = offending_row(p, b, "a",
                         ", a.dwl_porigin, a.dwl_origin, a.dwl_t FROM dwl_pd_a a WHERE a.dwl_pt = a.dwl_t AND "
                         "a.dwl_pfpa <> a.dwl_fpa ORDER BY a.dwl_seq",
                         3, 2, v, isnull, k, when, err);
  if (rc <= 0)
    return rc;
  if (p->e->cols.lmd < 0)
    return err_set(err, DWL_EXIT_FAILED,
                   "key %s has two different source rows (%s:%s and %s:%s) and no lmd to order them; "
                   "fix the source, dwload does not pick one",
                   k, ON(p), v[nk], ON(p), v[nk + 1]);
  return err_set(err, DWL_EXIT_FAILED,
                 "key %s has two different source rows with the same lmd %s (%s:%s and %s:%s); "
                 "fix the source or its lmd, dwload does not pick one",
                 k, when, ON(p), v[nk], ON(p), v[nk + 1]);
}

/* Rows that cannot follow the key's history: before its current version
 * (as the memory engine), or, pushdown only, at or before a deletion,
 * which the memory engine moves to the deletion time.  Kept in one place:
 * a repair of late rows would start here. */
static int check_late(pushdown *p, dwl_buf *b, dwl_error *err)
{
  size_t nk = p->e->cols.nkey;
  char v[PD_MAX_KEY + 5][512], k[512], when[32], cur[32] = "?";
  int isnull[PD_MAX_KEY + 5];
  int rc = offending_row(p, b, "b",
                         ", b.dwl_origin, b.dwl_t, b.dwl_ck, b.dwl_cvf, CASE WHEN b.dwl_vf = b.dwl_cvf THEN 1 "
                         "ELSE 0 END FROM dwl_pd_b b WHERE (b.dwl_ck = 1 AND (b.dwl_vf < b.dwl_cvf OR (b.dwl_vf = "
                         "b.dwl_cvf AND b.dwl_del = 0 AND b.dwl_ceq2 = 0))) OR (b.dwl_ck = 2 AND b.dwl_vf <= "
                         "b.dwl_cvf) ORDER BY b.dwl_t, b.dwl_seq",
                         5, 1, v, isnull, k, when, err);
  if (rc <= 0)
    return rc;
  dwl_ts cvf;
  if (ts_parse(v[nk + 3], strlen(v[nk + 3]), &cvf) == 0)
    target_ts_text(p->t, &cvf, cur);
  if (strcmp(v[nk + 2], "2") == 0)
    return err_set(err, DWL_EXIT_FAILED,
                   "%s:%s: key %s has lmd %s, not after its deletion (tombstone valid from %s); pushdown does "
                   "not move rows past a deletion, engine: memory does",
                   ON(p), v[nk], k, when, cur);
  if (strcmp(v[nk + 4], "1") == 0)
    return err_set(err, DWL_EXIT_FAILED,
                   "%s:%s: key %s has lmd %s, the same as the key's current version, but different "
                   "type 2 values; two versions cannot start at the same time",
                   ON(p), v[nk], k, when);
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%s: key %s has lmd %s, before the key's current version (valid from %s); "
                 "this late row cannot be placed in the history",
                 ON(p), v[nk], k, when, cur);
}

/* Keys without a current version whose last version was deleted (expire
 * style): the memory engine moves rows dated before the deletion to it;
 * pushdown refuses them. */
static int check_gone(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  size_t nk = p->e->cols.nkey;
  char v[PD_MAX_KEY + 5][512], k[512], when[32];
  int isnull[PD_MAX_KEY + 5];
  if (p->spec->deletes == DEL_NONE || is_tomb(p) || t->ix[TC_DELETED] < 0 || !t->exists)
    return 0;
  if (analyze(p, "dwl_pd_b", err) != 0)
    return -1;
  dwl_buf rest;
  buf_init(&rest, 0);
  buf_printf(&rest, ", b.dwl_origin, b.dwl_t, d.%s FROM dwl_pd_b b JOIN %s d ON ", tq(p, TC_VALID_TO), t->table_q);
  keyeq(p, &rest, "d", "b");
  buf_printf(&rest, " AND d.%s = %s AND NOT (", tq(p, TC_DELETED), t->d->true_lit);
  curpred(p, &rest, "d", "b");
  buf_printf(&rest, ") WHERE b.dwl_ck = 0 AND b.dwl_vt < d.%s ORDER BY b.dwl_t, b.dwl_seq", tq(p, TC_VALID_TO));
  int rc = rest.data ? offending_row(p, b, "b", rest.data, 3, 1, v, isnull, k, when, err)
                     : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&rest);
  if (rc <= 0)
    return rc;
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%s: key %s has lmd %s, before its deletion (a version deleted up to %s); pushdown does "
                 "not move rows past a deletion, engine: memory does",
                 ON(p), v[nk], k, when, v[nk + 2]);
}

/* Events less than the close step after the start of the version they
 * close (the stored current one, or the key's previous event in the
 * delta, but for an expire-style delete, which leaves no version): their
 * valid_to would fall before that start.  The memory engine replaces the
 * version or moves the deletion (dwload-job(5), close); pushdown refuses
 * them, writing nothing. */
static int check_within_step(pushdown *p, dwl_buf *b, dwl_error *err)
{
  size_t nk = p->e->cols.nkey;
  char v[PD_MAX_KEY + 5][512], k[512], when[32];
  int isnull[PD_MAX_KEY + 5];
  int64_t gap = p->spec->close == CLOSE_DAY_BEFORE ? DWL_US_PER_DAY
                : p->spec->close == CLOSE_SECOND_BEFORE ? DWL_US_PER_SEC
                                                        : 0;
  if (gap == 0)
    return 0;
  dwl_buf rest;
  buf_init(&rest, 0);
  buf_adds(&rest, ", q.dwl_origin, q.dwl_t FROM (SELECT e.*, LAG(e.dwl_t)");
  over(p, &rest, "e", NULL, "e.dwl_t, e.dwl_seq");
  buf_adds(&rest, " AS dwl_pet, LAG(e.dwl_del)");
  over(p, &rest, "e", NULL, "e.dwl_t, e.dwl_seq");
  buf_printf(&rest,
             " AS dwl_pedel FROM dwl_pd_e e) q WHERE (q.dwl_pet IS NOT NULL AND q.dwl_t - q.dwl_pet < %" PRId64
             "%s)",
             gap, is_tomb(p) ? "" : " AND q.dwl_pedel = 0");
  if (p->t->exists)
    buf_adds(&rest, " OR (q.dwl_span = 1 AND q.dwl_ck <> 0 AND q.dwl_vt < q.dwl_cvf)");
  buf_adds(&rest, " ORDER BY q.dwl_t, q.dwl_seq");
  int rc = rest.data ? offending_row(p, b, "q", rest.data, 2, 1, v, isnull, k, when, err)
                     : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&rest);
  if (rc <= 0)
    return rc;
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%s: key %s has lmd %s, less than one close step (%s) after the start of the version it "
                 "would close, which would end before it starts; pushdown does not replace versions, "
                 "engine: memory does",
                 ON(p), v[nk], k, when, p->spec->close == CLOSE_DAY_BEFORE ? "day_before" : "second_before");
}

/* ---- the computation ------------------------------------------------------------ */

/* a: staged rows with their predecessor. */
static int build_a(pushdown *p, dwl_buf *b, dwl_error *err)
{
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_a AS SELECT ");
  staged_cols(p, b, "s");
  const char *lagcol[3][2] = {{"dwl_t", "dwl_pt"}, {"dwl_fpa", "dwl_pfpa"}, {"dwl_origin", "dwl_porigin"}};
  for (int i = 0; i < 3; i++) {
    buf_printf(b, ", LAG(s.%s)", lagcol[i][0]);
    over(p, b, "s", NULL, "s.dwl_t, s.dwl_seq");
    buf_printf(b, " AS %s", lagcol[i][1]);
  }
  buf_adds(b, " FROM dwl_pd_src s");
  return exec(p, b, NULL, NULL, 0, err);
}

/* b: duplicates dropped, the current version joined. */
static int build_b(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  int scd2 = p->spec->mode == MODE_SCD2;
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_b AS SELECT ");
  staged_cols(p, b, "a");
  if (!t->exists) {
    /* plan before the first run: no dimension yet */
    buf_adds(b, ", 0 AS dwl_ck, a.dwl_vf AS dwl_cvf, 0 AS dwl_ceq2, 0 AS dwl_ceq1 FROM dwl_pd_a a");
  } else {
    buf_adds(b, ", CASE WHEN d.dwl_m IS NULL THEN 0 ");
    if (scd2 && t->ix[TC_DELETED] >= 0)
      buf_printf(b, "WHEN d.%s = %s THEN 2 ", tq(p, TC_DELETED), t->d->true_lit);
    buf_adds(b, "ELSE 1 END AS dwl_ck, ");
    if (scd2)
      buf_printf(b, "d.%s AS dwl_cvf, ", tq(p, TC_VALID_FROM));
    else
      buf_adds(b, "a.dwl_vf AS dwl_cvf, ");
    alleq(p, b, "d", "a", c->t2, c->nt2);
    buf_adds(b, " AS dwl_ceq2, ");
    alleq(p, b, "d", "a", c->t1, c->nt1);
    buf_printf(b, " AS dwl_ceq1 FROM dwl_pd_a a LEFT JOIN (SELECT 1 AS dwl_m, x.* FROM %s x) d ON ", t->table_q);
    keyeq(p, b, "d", "a");
    if (scd2) {
      buf_adds(b, " AND ");
      curpred(p, b, "d", "a");
    }
  }
  buf_adds(b, " WHERE a.dwl_pt IS NULL OR a.dwl_pt <> a.dwl_t");
  return exec(p, b, NULL, NULL, 0, err);
}

/* d: the walk.  sb is the key's state before the row: 0 none, 1 live,
 * 2 tombstone. */
static int build_d(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const char *ord = "b.dwl_t, b.dwl_seq";
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_d AS SELECT y.*, SUM(y.dwl_ev)");
  over(p, b, "y", NULL, "y.dwl_t, y.dwl_seq ROWS UNBOUNDED PRECEDING");
  buf_adds(b, " AS dwl_span FROM (SELECT x.*, "
              "CASE WHEN x.dwl_del = 0 AND (x.dwl_sb <> 1 OR x.dwl_chg2 = 1) THEN 1 ELSE 0 END AS dwl_start, "
              "CASE WHEN x.dwl_del = 1 AND x.dwl_sb = 1 THEN 1 ELSE 0 END AS dwl_evdel, "
              "CASE WHEN x.dwl_del = 0 AND x.dwl_sb = 1 AND x.dwl_chg2 = 0 AND x.dwl_chg1 = 1 THEN 1 ELSE 0 END "
              "AS dwl_t1chg, "
              "CASE WHEN (x.dwl_del = 0 AND (x.dwl_sb <> 1 OR x.dwl_chg2 = 1)) OR (x.dwl_del = 1 AND "
              "x.dwl_sb = 1) THEN 1 ELSE 0 END AS dwl_ev FROM (SELECT w.*, ");
  /* After a delete the key is live only if it was and deletes expire
   * nothing; a delete of a live key leaves none (expire) or a tombstone. */
  buf_printf(b,
             "CASE WHEN w.dwl_rn = 1 THEN w.dwl_ck WHEN w.dwl_pdel = 0 THEN 1 "
             "WHEN (CASE WHEN w.dwl_nnb > 0 THEN 1 ELSE w.dwl_ck END) = 1 THEN %d "
             "ELSE w.dwl_ck END AS dwl_sb, "
             "CASE WHEN w.dwl_rn = 1 THEN 1 - w.dwl_ceq2 WHEN w.dwl_fp2 <> w.dwl_pfp2 THEN 1 ELSE 0 END AS dwl_chg2, "
             "CASE WHEN w.dwl_rn = 1 THEN 1 - w.dwl_ceq1 WHEN w.dwl_fp1 <> w.dwl_pfp1 THEN 1 ELSE 0 END AS dwl_chg1 "
             "FROM (SELECT b.*, ROW_NUMBER()",
             is_tomb(p) ? 2 : 0);
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_rn, LAG(b.dwl_del)");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_pdel, LAG(b.dwl_fp2)");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_pfp2, LAG(b.dwl_fp1)");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_pfp1, COALESCE(SUM(1 - b.dwl_del)");
  over(p, b, "b", NULL, "b.dwl_t, b.dwl_seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING");
  buf_adds(b, ", 0) AS dwl_nnb, MIN(b.dwl_seq) OVER (PARTITION BY ");
  keys(p, b, "b");
  buf_adds(b, ") AS dwl_kseq FROM dwl_pd_b b) w) x) y");
  return exec(p, b, NULL, NULL, 0, err);
}

/* The type 1 value a new version carries, for source column `col`. */
static void t1_value(pushdown *p, dwl_buf *b, const char *col)
{
  if (p->spec->type1_scope == T1_ALL) {
    /* the key's last non-delete row, else the row itself */
    buf_adds(b, "CASE WHEN MIN(d.dwl_del) OVER (PARTITION BY ");
    keys(p, b, "d");
    buf_printf(b, ") = 0 THEN FIRST_VALUE(d.%s)", col);
    over(p, b, "d", NULL, "d.dwl_del, d.dwl_t DESC, d.dwl_seq DESC");
    buf_printf(b, " ELSE d.%s END", col);
  } else {
    /* the last row of the version's span; a tombstone keeps its own */
    buf_printf(b, "CASE WHEN d.dwl_del = 1 THEN d.%s ELSE FIRST_VALUE(d.%s)", col, col);
    over(p, b, "d", "dwl_span", "d.dwl_t DESC, d.dwl_seq DESC");
    buf_printf(b, " END");
  }
}

/* e: the events, the next event, the type 1 values of their versions. */
static int build_e(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_e AS SELECT z.*, LEAD(z.dwl_vt)");
  over(p, b, "z", NULL, "z.dwl_t, z.dwl_seq");
  buf_adds(b, " AS dwl_nvt, LEAD(z.dwl_del)");
  over(p, b, "z", NULL, "z.dwl_t, z.dwl_seq");
  buf_adds(b, " AS dwl_ndel FROM (SELECT d.*");
  for (size_t i = 0; i < c->nt1; i++) {
    buf_adds(b, ", ");
    t1_value(p, b, p->q[c->t1[i]]);
    buf_printf(b, " AS dwl_l%zu", i);
  }
  buf_adds(b, " FROM dwl_pd_d d) z WHERE z.dwl_ev = 1");
  return exec(p, b, NULL, NULL, 0, err);
}

/* An update of the dimension from a stage: MERGE (PostgreSQL), UPDATE ...
 * JOIN (MariaDB), UPDATE ... FROM (SQLite).  set[] pairs target columns
 * with expressions over s; `on` matches d and s. */
static int update_from(pushdown *p, dwl_buf *b, const char *stage, const char *const *tcols,
                       const char *const *exprs, size_t n, const char *on, dwl_error *err)
{
  const target *t = p->t;
  int maria = t->d->update_style == UPD_JOIN, pg = t->d->update_style == UPD_FROM;
  if (pg)
    buf_printf(b, "MERGE INTO %s AS d USING %s AS s ON (%s) WHEN MATCHED THEN UPDATE SET ", t->table_q, stage, on);
  else if (maria)
    buf_printf(b, "UPDATE %s AS d JOIN %s AS s ON %s SET ", t->table_q, stage, on);
  else
    buf_printf(b, "UPDATE %s AS d SET ", t->table_q);
  for (size_t i = 0; i < n; i++)
    buf_printf(b, "%s%s%s = %s", i ? ", " : "", maria ? "d." : "", tcols[i], exprs[i]);
  if (!pg && !maria)
    buf_printf(b, " FROM %s AS s WHERE %s", stage, on);
  return apply(p, b, NULL, NULL, 0, err);
}

/* update_from setting the source columns idx[] from the stage's columns
 * of the same names. */
static int update_cols(pushdown *p, dwl_buf *b, const char *stage, const size_t *idx, size_t n, const char *on,
                       dwl_error *err)
{
  const char **tc = calloc(n ? n : 1, sizeof *tc);
  char **ex = calloc(n ? n : 1, sizeof *ex);
  int rc = tc && ex ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    tc[i] = p->q[idx[i]];
    dwl_buf e1;
    buf_init(&e1, 0);
    buf_printf(&e1, "s.%s", tc[i]);
    if (!(ex[i] = buf_steal(&e1)))
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0)
    rc = update_from(p, b, stage, tc, (const char *const *)ex, n, on, err);
  for (size_t i = 0; ex && i < n; i++)
    free(ex[i]);
  free(ex);
  free(tc);
  return rc;
}

static long long count_of(pushdown *p, dwl_buf *b, const char *table, dwl_error *err)
{
  char v[1][512];
  int isnull[1];
  buf_printf(b, "SELECT COUNT(*) FROM %s", table);
  int rc = first_row(p, b, v, isnull, 1, err);
  return rc < 0 ? -1 : rc == 0 ? 0 : strtoll(v[0], NULL, 10);
}

/* Type 1 overwrites: of current versions (the last row before the key's
 * first event), or of every version (the key's last row). */
static int apply_type1(pushdown *p, dwl_buf *b, scd_counts *counts, long long *t1_unchanged, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  *t1_unchanged = 0;
  if (c->nt1 == 0 || !t->exists)
    return 0;
  int all = p->spec->type1_scope == T1_ALL;
  const char *ord = all ? "d.dwl_del, d.dwl_t DESC, d.dwl_seq DESC" : "d.dwl_t DESC, d.dwl_seq DESC";
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_t1 AS SELECT q.* FROM (SELECT ");
  keys(p, b, "d");
  buf_adds(b, ", d.dwl_cvf, d.dwl_oe");
  for (size_t i = 0; i < c->nt1; i++) {
    buf_printf(b, ", FIRST_VALUE(d.%s)", p->q[c->t1[i]]);
    over(p, b, "d", NULL, ord);
    buf_printf(b, " AS %s", p->q[c->t1[i]]);
  }
  buf_adds(b, ", ROW_NUMBER()");
  over(p, b, "d", NULL, ord);
  buf_adds(b, " AS dwl_r, SUM(CASE WHEN d.dwl_span = 0 AND d.dwl_ck = 1 THEN d.dwl_t1chg ELSE 0 END) OVER "
              "(PARTITION BY ");
  keys(p, b, "d");
  buf_adds(b, ") AS dwl_n");
  if (all) {
    buf_adds(b, ", FIRST_VALUE(d.dwl_ceq1)");
    over(p, b, "d", NULL, ord);
    buf_adds(b, " AS dwl_q, MIN(d.dwl_del) OVER (PARTITION BY ");
    keys(p, b, "d");
    buf_adds(b, ") AS dwl_nd FROM dwl_pd_d d WHERE d.dwl_ck <> 0) q WHERE q.dwl_r = 1 AND q.dwl_nd = 0 AND "
                "q.dwl_q = 0");
  } else {
    buf_adds(b, " FROM dwl_pd_d d WHERE d.dwl_span = 0 AND d.dwl_ck = 1) q WHERE q.dwl_r = 1 AND q.dwl_n > 0");
  }
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  long long n = count_of(p, b, "dwl_pd_t1", err);
  if (n < 0)
    return -1;
  if (n == 0)
    return 0;
  if (all) {
    /* scd.c: one update per key; the rows that changed only type 1 values
     * before it count as unchanged but one */
    long long withrows = count_of(p, b, "dwl_pd_t1 WHERE dwl_n > 0", err);
    if (withrows < 0)
      return -1;
    counts->updated += n;
    *t1_unchanged = withrows;
  }
  if (analyze(p, "dwl_pd_t1", err) != 0)
    return -1;
  dwl_buf on;
  buf_init(&on, 0);
  keyeq(p, &on, "d", "s");
  if (!all) {
    buf_printf(&on, " AND d.%s = s.dwl_cvf AND ", tq(p, TC_VALID_FROM));
    curpred(p, &on, "d", "s");
  }
  int rc = on.data ? update_cols(p, b, "dwl_pd_t1", c->t1, c->nt1, on.data, err)
                   : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&on);
  return rc;
}

/* Closing current versions: those of keys whose first event is in the
 * delta (a change, a revival or a delete). */
static int apply_expires(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  if (!t->exists)
    return 0;
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_x AS SELECT ");
  keys(p, b, "e");
  buf_printf(b, ", e.dwl_cvf, e.dwl_oe, e.dwl_vt, CASE WHEN e.dwl_ck = 2 THEN 1 %s ELSE 0 END AS dwl_xdel "
                "FROM dwl_pd_e e WHERE e.dwl_span = 1 AND e.dwl_ck <> 0",
             is_tomb(p) ? "" : "WHEN e.dwl_del = 1 THEN 1");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  long long n = count_of(p, b, "dwl_pd_x", err);
  if (n <= 0)
    return (int)n;
  if (analyze(p, "dwl_pd_x", err) != 0)
    return -1;
  const char *tc[3];
  const char *ex[3];
  char cur[128], del[128];
  size_t ns = 0;
  tc[ns] = tq(p, TC_VALID_TO);
  ex[ns++] = "s.dwl_vt";
  if (t->ix[TC_CURRENT] >= 0) {
    snprintf(cur, sizeof cur, "%s", t->d->false_lit);
    tc[ns] = tq(p, TC_CURRENT);
    ex[ns++] = cur;
  }
  if (t->ix[TC_DELETED] >= 0) {
    snprintf(del, sizeof del, "CASE WHEN s.dwl_xdel = 1 THEN %s ELSE %s END", t->d->true_lit, t->d->false_lit);
    tc[ns] = tq(p, TC_DELETED);
    ex[ns++] = del;
  }
  dwl_buf on;
  buf_init(&on, 0);
  keyeq(p, &on, "d", "s");
  buf_printf(&on, " AND d.%s = s.dwl_cvf AND ", tq(p, TC_VALID_FROM));
  curpred(p, &on, "d", "s");
  int rc = on.data ? update_from(p, b, "dwl_pd_x", tc, ex, ns, on.data, err)
                   : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&on);
  return rc;
}

/* Reads the greatest sequence surrogate key. */
static int max_sk(pushdown *p, dwl_buf *b, long long *out, dwl_error *err)
{
  char v[1][512];
  int isnull[1];
  *out = 0;
  if (!p->t->exists)
    return 0;
  buf_printf(b, "SELECT MAX(%s) FROM %s", tq(p, TC_SK), p->t->table_q);
  int rc = first_row(p, b, v, isnull, 1, err);
  if (rc == 1 && !isnull[0])
    *out = strtoll(v[0], NULL, 10);
  return rc < 0 ? -1 : 0;
}

/* New versions: every event but an expire-style delete. */
static int insert_versions(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  long long base = 0;
  int seq = t->ix[TC_SK] >= 0 && p->spec->sk_strategy == SK_SEQUENCE;
  if (seq && max_sk(p, b, &base, err) != 0)
    return -1;
  char basetxt[24];
  snprintf(basetxt, sizeof basetxt, "%lld", base);
  dwl_value param = {.data = basetxt, .len = strlen(basetxt), .is_null = 0};
  SQLSMALLINT ptype = t->d->param_type(DWL_TYPE_INTEGER);
  buf_printf(b, "INSERT INTO %s (", t->table_q);
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(b, "%s%s", i ? ", " : "", t->cols[i].q);
  buf_adds(b, ") SELECT ");
  for (size_t i = 0; i < t->ncols; i++) {
    const tcol *tc = &t->cols[i];
    if (i)
      buf_adds(b, ", ");
    switch (tc->role) {
    case TC_SK:
      if (seq)
        buf_adds(b, "? + ROW_NUMBER() OVER (ORDER BY e.dwl_kseq, e.dwl_t, e.dwl_seq)");
      else
        buf_adds(b, "CASE WHEN e.dwl_del = 1 THEN e.dwl_skt ELSE e.dwl_sk END");
      break;
    case TC_VALID_FROM: buf_adds(b, "e.dwl_vf"); break;
    case TC_VALID_TO: buf_adds(b, "COALESCE(e.dwl_nvt, e.dwl_oe)"); break;
    case TC_CURRENT:
      buf_printf(b, "CASE WHEN e.dwl_nvt IS NULL THEN %s ELSE %s END", t->d->true_lit, t->d->false_lit);
      break;
    case TC_DELETED:
      buf_printf(b, "CASE WHEN e.dwl_del = 1 %s THEN %s ELSE %s END",
                 is_tomb(p) ? "" : "OR (e.dwl_nvt IS NOT NULL AND e.dwl_ndel = 1)", t->d->true_lit,
                 t->d->false_lit);
      break;
    default: {
      size_t j = 0;
      while (j < c->nt1 && c->t1[j] != tc->src)
        j++;
      if (j < c->nt1)
        buf_printf(b, "e.dwl_l%zu", j);
      else
        buf_printf(b, "e.%s", tc->q);
    }
    }
  }
  buf_printf(b, " FROM dwl_pd_e e WHERE e.dwl_ev = 1%s", is_tomb(p) ? "" : " AND e.dwl_del = 0");
  return apply(p, b, seq ? &param : NULL, seq ? &ptype : NULL, seq ? 1 : 0, err);
}

static int scd2_counts(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  char v[5][512];
  int isnull[5];
  buf_printf(b,
             "SELECT COALESCE(SUM(dwl_start), 0), COALESCE(SUM(dwl_evdel), 0), "
             "COALESCE(SUM(CASE WHEN dwl_ev = 1%s THEN 1 ELSE 0 END), 0), "
             "COALESCE(SUM(CASE WHEN dwl_span = 1 AND dwl_ev = 1 AND dwl_ck <> 0 AND dwl_del = 0 THEN 1 ELSE 0 END), 0), "
             "COALESCE(SUM(CASE WHEN dwl_span = 0 AND dwl_ck = 1 THEN dwl_t1chg ELSE 0 END), 0) FROM dwl_pd_d",
             is_tomb(p) ? "" : " AND dwl_del = 0");
  if (first_row(p, b, v, isnull, 5, err) < 0)
    return -1;
  long long starts = strtoll(v[0], NULL, 10), dels = strtoll(v[1], NULL, 10), t1rows = strtoll(v[4], NULL, 10);
  counts->inserted += strtoll(v[2], NULL, 10);
  counts->expired += strtoll(v[3], NULL, 10);
  counts->deleted += dels;
  counts->unchanged += p->n - starts - dels;
  if (p->spec->type1_scope != T1_ALL) {
    counts->updated += t1rows;
    counts->unchanged -= t1rows;
  }
  return 0;
}

static int run_scd2(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  if (check_late(p, b, err) != 0 || check_gone(p, b, err) != 0)
    return -1;
  if (build_d(p, b, err) != 0 || build_e(p, b, err) != 0 || check_within_step(p, b, err) != 0 ||
      scd2_counts(p, b, counts, err) != 0)
    return -1;
  long long t1u = 0;
  /* Type 1 on current versions before they are closed; every version's
   * after the new ones exist (they carry the same values anyway). */
  if (p->spec->type1_scope != T1_ALL && apply_type1(p, b, counts, &t1u, err) != 0)
    return -1;
  if (apply_expires(p, b, err) != 0 || insert_versions(p, b, err) != 0)
    return -1;
  if (p->spec->type1_scope == T1_ALL) {
    if (apply_type1(p, b, counts, &t1u, err) != 0)
      return -1;
    counts->unchanged -= t1u;
  }
  return 0;
}

/* "(a, b)<mid>s.a, s.b<end>": an upsert's insert of the staged columns. */
static void insert_cols(const pushdown *p, dwl_buf *b, const char *mid, const char *end)
{
  buf_addc(b, '(');
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "%s%s", i ? ", " : "", p->q[i]);
  buf_printf(b, ")%s", mid);
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "%ss.%s", i ? ", " : "", p->q[i]);
  buf_adds(b, end);
}

/* ---- upsert ---------------------------------------------------------------------- */

static int run_upsert(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_u AS SELECT q.* FROM (SELECT b.*, ROW_NUMBER()");
  over(p, b, "b", NULL, "b.dwl_t DESC, b.dwl_seq DESC");
  buf_adds(b, " AS dwl_r FROM dwl_pd_b b) q WHERE q.dwl_r = 1");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  char v[3][512];
  int isnull[3];
  buf_adds(b, "SELECT COALESCE(SUM(CASE WHEN dwl_del = 1 AND dwl_ck = 1 THEN 1 ELSE 0 END), 0), "
              "COALESCE(SUM(CASE WHEN dwl_del = 0 AND dwl_ck = 0 THEN 1 ELSE 0 END), 0), "
              "COALESCE(SUM(CASE WHEN dwl_del = 0 AND dwl_ck = 1 AND dwl_ceq2 = 0 THEN 1 ELSE 0 END), 0) "
              "FROM dwl_pd_u");
  if (first_row(p, b, v, isnull, 3, err) < 0)
    return -1;
  long long del = strtoll(v[0], NULL, 10), ins = strtoll(v[1], NULL, 10), upd = strtoll(v[2], NULL, 10);
  counts->deleted += del;
  counts->inserted += ins;
  counts->updated += upd;
  counts->unchanged += p->n - del - ins - upd;
  if (del + ins + upd == 0)
    return 0;
  if (analyze(p, "dwl_pd_u", err) != 0)
    return -1;
  dwl_buf on;
  buf_init(&on, 0);
  keyeq(p, &on, "d", "s");
  if (!on.data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int style = t->d->update_style;
  int rc = 0;
  if (style == UPD_FROM) {
    /* PostgreSQL: one MERGE does all three. */
    buf_printf(b, "MERGE INTO %s AS d USING dwl_pd_u AS s ON (%s) WHEN MATCHED AND s.dwl_del = 1 THEN DELETE",
               t->table_q, on.data);
    if (c->nt2) {
      buf_adds(b, " WHEN MATCHED AND s.dwl_ceq2 = 0 THEN UPDATE SET ");
      for (size_t i = 0; i < c->nt2; i++)
        buf_printf(b, "%s%s = s.%s", i ? ", " : "", p->q[c->t2[i]], p->q[c->t2[i]]);
    }
    buf_adds(b, " WHEN NOT MATCHED AND s.dwl_del = 0 THEN INSERT ");
    insert_cols(p, b, " VALUES (", ")");
    rc = apply(p, b, NULL, NULL, 0, err);
  } else {
    if (del) {
      if (style == UPD_JOIN)
        buf_printf(b, "DELETE d FROM %s AS d JOIN dwl_pd_u AS s ON %s WHERE s.dwl_del = 1", t->table_q, on.data);
      else
        buf_printf(b, "DELETE FROM %s AS d WHERE EXISTS (SELECT 1 FROM dwl_pd_u AS s WHERE s.dwl_del = 1 AND %s)",
                   t->table_q, on.data);
      rc = apply(p, b, NULL, NULL, 0, err);
    }
    if (rc == 0 && upd) {
      buf_adds(&on, " AND s.dwl_del = 0 AND s.dwl_ceq2 = 0");
      rc = on.data ? update_cols(p, b, "dwl_pd_u", c->t2, c->nt2, on.data, err)
                   : err_set(err, DWL_EXIT_FAILED, "out of memory");
    }
    if (rc == 0 && ins) {
      buf_printf(b, "INSERT INTO %s ", t->table_q);
      insert_cols(p, b, " SELECT ", "");
      buf_adds(b, " FROM dwl_pd_u AS s WHERE s.dwl_del = 0 AND s.dwl_ck = 0");
      rc = apply(p, b, NULL, NULL, 0, err);
    }
  }
  buf_free(&on);
  return rc;
}

/* upsert, deletes: absent: the table's rows and those of keys the source
 * no longer has.  The delta's changes touch only keys the source has, so
 * counting before them counts what apply_absent deletes after them. */
int pushdown_count_absent(pushdown *p, long long *current, long long *absent, dwl_error *err)
{
  const target *t = p->t;
  *current = *absent = p->nabsent = 0;
  if (!p->seen || !t->exists)
    return 0;
  if (writer_stage_flush(p->seen, err) != 0 || analyze(p, "dwl_pd_seen", err) != 0)
    return -1;
  dwl_buf on, b;
  buf_init(&on, 0);
  buf_init(&b, 0);
  keyeq(p, &on, "d", "s");
  if (on.data)
    buf_printf(&b, "SELECT COUNT(*), SUM(CASE WHEN NOT EXISTS (SELECT 1 FROM dwl_pd_seen s WHERE %s) THEN 1 ELSE 0 END) "
               "FROM %s d", on.data, t->table_q);
  char v[2][512];
  int isnull[2];
  int rc = on.data ? first_row(p, &b, v, isnull, 2, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 1) {
    *current = strtoll(v[0], NULL, 10);
    *absent = p->nabsent = isnull[1] ? 0 : strtoll(v[1], NULL, 10);
  }
  buf_free(&on);
  buf_free(&b);
  return rc < 0 ? -1 : 0;
}

/* upsert, deletes: absent: the rows of keys the source no longer has
 * (after the delta's changes, every key the source has is seen). */
static int apply_absent(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  const target *t = p->t;
  if (p->nabsent == 0)
    return 0;
  dwl_buf on;
  buf_init(&on, 0);
  keyeq(p, &on, "d", "s");
  if (!on.data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  counts->deleted += p->nabsent;
  if (t->d->update_style == UPD_JOIN)
    buf_printf(b, "DELETE d FROM %s AS d LEFT JOIN dwl_pd_seen AS s ON %s WHERE s.dwl_one IS NULL", t->table_q,
               on.data);
  else
    buf_printf(b, "DELETE FROM %s AS d WHERE NOT EXISTS (SELECT 1 FROM dwl_pd_seen AS s WHERE %s)", t->table_q,
               on.data);
  int rc = apply(p, b, NULL, NULL, 0, err);
  buf_free(&on);
  return rc < 0 ? -1 : 0;
}

/* upsert, deletes: absent: the keys whose rows the checkpoint skipped but
 * the table no longer has (deleted by absence) come back: the last such
 * row of each key that has none past the checkpoint, unless a delete row.
 * They count as inserted and no longer as skipped. */
static int apply_revive(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  const target *t = p->t;
  if (!p->old || p->nold == 0 || !t->exists)
    return 0;
  if (writer_stage_flush(p->old, err) != 0 || analyze(p, "dwl_pd_old", err) != 0)
    return -1;
  dwl_buf from;
  buf_init(&from, 0);
  buf_adds(&from, " FROM (SELECT o.*, ROW_NUMBER()");
  over(p, &from, "o", NULL, "o.dwl_t DESC, o.dwl_seq DESC");
  buf_printf(&from, " AS dwl_r FROM dwl_pd_old o) s WHERE s.dwl_r = 1 AND s.dwl_del = 0 AND NOT EXISTS "
                    "(SELECT 1 FROM %s d WHERE ", t->table_q);
  keyeq(p, &from, "d", "s");
  buf_adds(&from, ")");
  if (p->n > 0) {
    buf_adds(&from, " AND NOT EXISTS (SELECT 1 FROM dwl_pd_src a WHERE ");
    keyeq(p, &from, "a", "s");
    buf_adds(&from, ")");
  }
  if (!from.data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  char v[1][512];
  int isnull[1];
  buf_printf(b, "SELECT COUNT(*)%s", from.data);
  int rc = first_row(p, b, v, isnull, 1, err);
  long long n = rc == 1 ? strtoll(v[0], NULL, 10) : 0;
  if (rc >= 0 && n > 0) {
    counts->inserted += n;
    counts->revived += n;
    buf_printf(b, "INSERT INTO %s ", t->table_q);
    insert_cols(p, b, " SELECT ", from.data);
    rc = apply(p, b, NULL, NULL, 0, err);
  }
  buf_free(&from);
  return rc < 0 ? -1 : 0;
}

int pushdown_apply(pushdown *p, int delete_absent, scd_counts *counts, dwl_error *err)
{
  if (writer_stage_flush(p->st, err) != 0)
    return -1;
  if (!delete_absent)
    p->nabsent = 0;
  if (p->n == 0) {
    dwl_buf b;
    buf_init(&b, 0);
    int rc = apply_revive(p, &b, counts, err);
    if (rc == 0)
      rc = apply_absent(p, &b, counts, err);
    buf_free(&b);
    return rc;
  }
  dwl_buf b;
  buf_init(&b, 0);
  double t0 = now_s();
  int rc = build_a(p, &b, err);
  if (rc == 0)
    rc = analyze(p, "dwl_pd_a", err);
  if (rc == 0)
    rc = check_conflicts(p, &b, err);
  if (rc == 0)
    rc = build_b(p, &b, err);
  if (rc == 0)
    rc = p->spec->mode == MODE_SCD2 ? run_scd2(p, &b, counts, err) : run_upsert(p, &b, counts, err);
  if (rc == 0)
    rc = apply_revive(p, &b, counts, err);
  if (rc == 0)
    rc = apply_absent(p, &b, counts, err);
  buf_free(&b);
  if (rc == 0)
    log_msg(LOG_INFO, "pushdown: %lld rows staged; changes computed and applied in the warehouse in %.2fs", p->n,
            now_s() - t0);
  return rc;
}
