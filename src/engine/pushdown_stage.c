/* Pushdown's stages: the staging tables (the delta with what only the
 * client computes, every source key and the rows not past the checkpoint
 * for deletes: absent) and the temporary tables a, b, d, m and e computed from
 * them in the warehouse.  The walk (d) is generated from the version rules
 * (versions.h), the table the memory engine walks by. */
#include "pushdown_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fingerprint.h"

const char *const xname[NX] = {"dwl_seq", "dwl_origin", "dwl_t",  "dwl_del", "dwl_fp2", "dwl_fp1",
                               "dwl_fpa", "dwl_vf",     "dwl_vt", "dwl_oe",  "dwl_sk",  "dwl_skt",
                               "dwl_donly", "dwl_ties"};

int pushdown_open(target *t, writer *w, scd_engine *e, pushdown **out, dwl_error *err)
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
  p->nhid = e->ncols > p->ncols ? e->ncols - p->ncols : 0;
  size_t n = p->ncols + NX + p->nhid;
  p->hname = calloc(p->nhid ? p->nhid : 1, sizeof *p->hname);
  p->q = calloc(p->ncols ? p->ncols : 1, sizeof *p->q);
  p->row = calloc(n, sizeof *p->row);
  char **names = calloc(n, sizeof *names);
  dwl_column *decl = calloc(n, sizeof *decl);
  /* the table column's own character set and collation (tcol.have_collate) */
  const char **coll = calloc(n, sizeof *coll);
  int rc = p->q && p->row && p->hname && names && decl && coll ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
    const tcol *c = &t->cols[i];
    if (c->role != TC_SRC)
      continue;
    coll[c->src] = c->have_collate;
    p->q[c->src] = c->q;
    names[c->src] = c->q;
    decl[c->src] = tcol_stage_decl(c);
    /* The staged columns' own names start so: a source column may not. */
    if (strncasecmp(c->name, "dwl_", 4) == 0) {
      int line = 0, col = 0;
      const char *file = spec_key_at(p->spec, "load.engine", &line, &col);
      rc = err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                   "%s:%d:%d: load.engine: pushdown stages its own columns named dwl_*, and the source has a "
                   "column '%s'; rename it or use engine: memory",
                   file, line, col, c->name);
    }
  }
  dwl_column integer = {.type = DWL_TYPE_INTEGER, .nullable = 1};
  dwl_column when = {.type = t->vdate ? DWL_TYPE_DATE : t->vseq ? DWL_TYPE_INTEGER : DWL_TYPE_TIMESTAMP, .nullable = 1};
  /* Fingerprints and hash surrogate keys are hex of a known length: a
   * bounded type (VARCHAR, not MariaDB's LONGTEXT) keeps the window steps'
   * narrow rows in memory (build_d). */
  dwl_column fphex = {.type = DWL_TYPE_TEXT, .precision = (int)sizeof p->fp[0] - 1, .nullable = 1};
  dwl_column skhex = {.type = DWL_TYPE_TEXT, .precision = (int)sizeof p->sk - 1, .nullable = 1};
  dwl_column ties = {.type = DWL_TYPE_TEXT, .precision = (int)sizeof p->ties - 1, .nullable = 1};
  for (int x = 0; rc == 0 && x < NX; x++) {
    names[p->ncols + (size_t)x] = (char *)xname[x];
    decl[p->ncols + (size_t)x] = x <= X_DEL || x == X_DONLY ? integer
                                 : (x >= X_VF && x <= X_OE) ? when
                                 : x >= X_FP2 && x <= X_FPA ? fphex
                                 : x == X_TIES              ? ties
                                                            : skhex;  /* X_SK, X_SKT */
  }
  for (size_t k = 0; rc == 0 && k < p->nhid; k++) {
    snprintf(p->hname[k], sizeof p->hname[k], "dwl_h%zu", k);
    names[p->ncols + NX + k] = p->hname[k];
    decl[p->ncols + NX + k] = e->srccols[p->ncols + k];
  }
  /* The anti-joins of absence and truncates probe dwl_pd_src by key once
   * per current version (index_keys); where the index must be declared
   * with the table (MariaDB), it is. */
  size_t nix = !t->d->index_temp && (p->spec->mode == MODE_SCD2 &&
                                     (p->spec->deletes == DEL_ABSENT || p->spec->truncate_values.n))
                 ? e->cols.nkey : 0;
  if (rc == 0)
    rc = writer_stage_open_ix(w, "dwl_pd_src", names, decl, coll, n, e->cols.key, nix, &p->st, err);
  /* Absence is judged against every source key, past the checkpoint or
   * not; dwl_one tells a matched key from an unmatched one in a join. */
  if (rc == 0 && p->spec->deletes == DEL_ABSENT) {
    /* load.partition: the partition columns not in the key follow it. */
    const scd_cols *c = &e->cols;
    size_t ns = c->nkey + c->npart + 2;
    char **kn = calloc(ns, sizeof *kn);
    dwl_column *kd = calloc(ns, sizeof *kd);
    const char **kc = calloc(ns, sizeof *kc);
    p->keyrow = calloc(ns, sizeof *p->keyrow);
    p->seencol = calloc(ns, sizeof *p->seencol);
    rc = kn && kd && kc && p->keyrow && p->seencol ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < c->nkey; i++)
      p->seencol[p->nseen++] = c->key[i];
    for (size_t i = 0; rc == 0 && i < c->npart; i++) {
      size_t j = 0;
      while (j < p->nseen && p->seencol[j] != c->part[i])
        j++;
      if (j == p->nseen)
        p->seencol[p->nseen++] = c->part[i];
    }
    for (size_t i = 0; rc == 0 && i < p->nseen; i++) {
      kn[i] = names[p->seencol[i]];
      kd[i] = decl[p->seencol[i]];
      kc[i] = coll[p->seencol[i]];
    }
    if (rc == 0) {
      kn[p->nseen] = "dwl_one";
      kd[p->nseen] = integer;
      kn[p->nseen + 1] = "dwl_ref";  /* a row not past the checkpoint: its dwl_seq (old_stage) */
      kd[p->nseen + 1] = integer;
      /* (the key comes first: index_keys) */
      size_t kix[PD_MAX_KEY];
      for (size_t i = 0; i < c->nkey && i < PD_MAX_KEY; i++)
        kix[i] = i;
      rc = writer_stage_open_ix(w, "dwl_pd_seen", kn, kd, kc, p->nseen + 2, kix,
                                t->d->index_temp ? 0 : c->nkey, &p->seen, err);
    }
    free(kn);
    free(kd);
    free(kc);
    /* The extract says which keys exist: a key the table no longer has
     * comes back with its row, past the checkpoint or not (apply_revive;
     * scd2: absent_revive). */
    if (rc == 0)
      rc = writer_stage_open(w, "dwl_pd_old", names, decl, coll, n, &p->old, err);
  }
  free(names);
  /* (kept for the stages made later: pushdown_absent.c) */
  p->decl = decl;
  p->coll = coll;
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
  if (p->oldf_open)
    spill_close(&p->oldf);
  free(p->keyrow);
  free(p->seencol);
  free(p->decl);
  free(p->coll);
  free(p->q);
  free(p->hname);
  free(p->row);
  free(p);
}


/* dwl_one is 1 for a row the source delivered, 2 for a rejected row's
 * key: only the first names a partition the extract holds (load.partition;
 * a rejected row's other values are not read).  dwl_ref is a row not past
 * the checkpoint's dwl_seq (ref, NULL when NULL). */
static int seen_key(pushdown *p, const dwl_value *row, int rejected, const char *ref, dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  if (!p->seen)
    return 0;
  for (size_t i = 0; i < p->nseen; i++) {
    p->keyrow[i] = row[p->seencol[i]];
    if (i < c->nkey)
      p->nullkeys |= row[c->key[i]].is_null;
    else if (rejected)
      pd_text(&p->keyrow[i], NULL);
  }
  pd_text(&p->keyrow[p->nseen], rejected ? "2" : "1");
  pd_text(&p->keyrow[p->nseen + 1], ref);
  return writer_stage_add(p->seen, p->keyrow, err);
}

/* Fills p->row: the row, then what is staged with it; `seq` numbers it. */
void staged_row(pushdown *p, const dwl_value *row, long long seq, uint64_t origin, const dwl_ts *lmd)
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
  pd_text(&x[X_SEQ], p->num[0]);
  pd_text(&x[X_ORIGIN], p->num[1]);
  pd_text(&x[X_T], p->num[2]);
  pd_text(&x[X_DEL], scd_is_delete(p->e, row) ? "1" : "0");
  pd_text(&x[X_DONLY], lmd && lmd->date_only ? "1" : "0");
  pd_text(&x[X_TIES], NULL);
  if (lmd && lmd->nties > 0) {
    int len = snprintf(p->ties, sizeof p->ties, "%d:%u", lmd->nties, lmd->tie_time);
    for (int i = 0; i < lmd->nties && i < DWL_TS_TIES; i++)
      len += snprintf(p->ties + len, sizeof p->ties - (size_t)len, ":%" PRId64, lmd->tie[i]);
    pd_text(&x[X_TIES], p->ties);
  }
  for (size_t k = 0; k < p->nhid; k++)
    x[NX + k] = row[p->ncols + k];
  fp_hex(fp_tuple(row, c->t2, c->nt2), p->fp[0]);
  fp_hex(fp_tuple(row, c->t1, c->nt1), p->fp[1]);
  fp_hex(fp_values(row, p->ncols), p->fp[2]);
  pd_text(&x[X_FP2], p->fp[0]);
  pd_text(&x[X_FP1], p->fp[1]);
  pd_text(&x[X_FPA], p->fp[2]);
  pd_text(&x[X_VF], NULL);
  pd_text(&x[X_VT], NULL);
  pd_text(&x[X_OE], p->t->open_end[0] ? p->t->open_end : NULL);
  pd_text(&x[X_SK], NULL);
  pd_text(&x[X_SKT], NULL);
  if (lmd && p->spec->mode == MODE_SCD2) {
    target_ts_text(p->t, lmd, p->vf);
    dwl_ts vt = scd_close_at(p->spec, *lmd);
    target_ts_text(p->t, &vt, p->vt);
    pd_text(&x[X_VF], p->vf);
    pd_text(&x[X_VT], p->vt);
    if (p->t->ix[TC_SK] >= 0 && p->spec->sk_strategy == SK_HASH) {
      /* The memory engine's hash (write/sink.c): key values and valid_from,
       * with a marker for tombstones. */
      char extra[48];
      int len = snprintf(extra, sizeof extra, "%s", p->vf);
      fp_sha256_hex(row, c->key, c->nkey, extra, (size_t)len, p->sk);
      len = snprintf(extra, sizeof extra, "%s|tombstone", p->vf);
      fp_sha256_hex(row, c->key, c->nkey, extra, (size_t)len, p->skt);
      pd_text(&x[X_SK], p->sk);
      pd_text(&x[X_SKT], p->skt);
    }
  }
}

int pushdown_add(pushdown *p, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  /* A truncate row joins no key's rows: it reaches them all.  The memory
   * engine holds it (its truncs, by lmd), for pushdown's truncate_rows and
   * absent_delete and for the keys handed to that engine alike. */
  if (p->spec->truncate_values.n && scd_is_truncate(p->e, row))
    return scd_add_source(p->e, row, origin, lmd, 1, err) < 0 ? -1 : 0;
  staged_row(p, row, p->nseq++, origin, lmd);
  p->n++;
  if (seen_key(p, row, 0, NULL, err) != 0)
    return -1;
  return writer_stage_add(p->st, p->row, err);
}

int pushdown_seen_key(pushdown *p, const dwl_value *row, dwl_error *err)
{
  return seen_key(p, row, 1, NULL, err);
}

/* A row not past the checkpoint only says that its key exists, unless
 * the table has no live version of the key: then it revives it.  A full
 * extract's are most of its rows, and few revive a key: they wait in a
 * local file, with their dwl_seq, and only the few are staged (old_stage)
 * instead of every one being sent to the warehouse twice. */
int pushdown_seen(pushdown *p, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  if (!p->old)
    return seen_key(p, row, 0, NULL, err);
  char seq[24];
  snprintf(seq, sizeof seq, "%lld", p->nseq++);
  if (seen_key(p, row, 0, seq, err) != 0)
    return -1;
  size_t n = p->ncols + p->nhid;
  if (!p->oldf_open) {
    p->oldf_open = 1;  /* (spill_close frees what a failed open made) */
    if (spill_open(&p->oldf, 1, n + 1, err) != 0)
      return -1;
    p->oldf.what = "pushdown's file of the rows not past the checkpoint";
    p->oldf.hint = "free space there, or point TMPDIR at a disk with room";
  }
  /* (p->row is free: staged_row fills it for each staged row alone) */
  for (size_t i = 0; i < n; i++)
    p->row[i] = row[i];
  pd_text(&p->row[n], seq);
  p->nold++;
  return spill_put(&p->oldf, 0, p->row, origin, lmd, err);
}

/* a: staged rows with their predecessor. */
int build_a(pushdown *p, dwl_buf *b, dwl_error *err)
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
  /* (late rows set apart: pushdown_late.c; NOT IN, which SQLite and
   * PostgreSQL hash, where a correlated NOT EXISTS probed dwl_pd_l once
   * per row: a reread of 6,000 rows took 0.8 s) */
  if (pd_late_applies(p) && p->nlate > 0)  /* (repair builds no dwl_pd_l when it takes none) */
    buf_adds(b, " WHERE s.dwl_seq NOT IN (SELECT l.dwl_seq FROM dwl_pd_l l)");
  return exec(p, b, NULL, NULL, 0, err);
}

/* b: duplicates dropped, the current version joined. */
int build_b(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  int scd2 = p->spec->mode == MODE_SCD2;
  temp_table(p, b, "dwl_pd_b", "dwl_seq");  /* build_d and build_e join it by dwl_seq */
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
    /* plan before the ALTER TABLE of a column this run adds: it is NULL */
    buf_adds(b, " AS dwl_ceq1 FROM dwl_pd_a a");
    join_current(p, b, "d", "a");
  }
  buf_adds(b, " WHERE a.dwl_pt IS NULL OR a.dwl_pt <> a.dwl_t");
  return exec(p, b, NULL, NULL, 0, err);
}

/* The walk's rules as SQL: "CASE WHEN <every (state, event) of the version
 * rules whose action `pick` takes> THEN 1 ELSE 0 END AS <as>", over the
 * row's state before it (x.dwl_sb holds an enum ver_state) and its event
 * (x.dwl_del, and x.dwl_chg2 / x.dwl_chg1 against its predecessor or the
 * current version). */
static void rule_case(dwl_buf *b, int (*pick)(int action), const char *as)
{
  static const char *const event_sql[VE_N] = {
    [VE_SAME] = "x.dwl_del = 0 AND x.dwl_chg2 = 0 AND x.dwl_chg1 = 0",
    [VE_TYPE1] = "x.dwl_del = 0 AND x.dwl_chg2 = 0 AND x.dwl_chg1 = 1",
    [VE_CHANGE] = "x.dwl_del = 0 AND x.dwl_chg2 = 1",
    [VE_DELETE] = "x.dwl_del = 1",
  };
  int any = 0;
  buf_adds(b, "CASE WHEN ");
  for (int st = 0; st < VS_N; st++) {
    int sel[VE_N], n = 0;
    for (int ev = 0; ev < VE_N; ev++)
      n += sel[ev] = pick(ver_rule_at(st, ev)->action);
    if (n == 0)
      continue;
    buf_printf(b, "%s(x.dwl_sb = %d AND ", any++ ? " OR " : "", st);
    if (n == VE_N) {
      buf_adds(b, "1 = 1");
    } else if (n == VE_N - 1 && !sel[VE_DELETE]) {
      buf_adds(b, "x.dwl_del = 0");  /* every row but a delete */
    } else {
      buf_addc(b, '(');
      for (int ev = 0, k = 0; ev < VE_N; ev++)
        if (sel[ev])
          buf_printf(b, "%s(%s)", k++ ? " OR " : "", event_sql[ev]);
      buf_addc(b, ')');
    }
    buf_addc(b, ')');
  }
  buf_printf(b, "%s THEN 1 ELSE 0 END AS %s", any ? "" : "1 = 0", as);
}

static int starts(int action)
{
  return action == VA_START;
}

static int deletes(int action)
{
  return action == VA_DELETE;
}

static int overwrites_type1(int action)
{
  return action == VA_TYPE1;
}

/* The columns of the delta that build_d's windows read (the key, the
 * order, what the rules compare) and that build_e's read after them. */
static void narrow_cols(const pushdown *p, dwl_buf *b, const char *a)
{
  keys(p, b, a);
  static const char *const cols[] = {"dwl_seq", "dwl_t",    "dwl_del",  "dwl_fp2", "dwl_fp1",
                                     "dwl_ck",  "dwl_ceq2", "dwl_ceq1", "dwl_vt"};
  for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
    buf_printf(b, ", %s.%s", a, cols[i]);
}

/* What d keeps of the rows and the walk for the later steps (and the key,
 * and dwl_span). */
static const char *const walk_keep[] = {"dwl_seq",   "dwl_t",     "dwl_del",   "dwl_ck", "dwl_ceq1", "dwl_vt",
                                        "dwl_kseq",  "dwl_start", "dwl_evdel", "dwl_t1chg", "dwl_ev"};

/* What build_e takes of the walk into e, beside the rows of b. */
static const char *const walk_cols[] = {"dwl_kseq", "dwl_start", "dwl_evdel", "dwl_t1chg", "dwl_ev", "dwl_span"};

/* d: the walk.  sb is the key's state before the row (enum ver_state):
 * the stored current version's for the key's first row, else what the
 * rules leave after its predecessor.  Every row but a delete leaves the
 * key live, and a delete changes only a live key (test_versions pins
 * both), so the state follows from the predecessor and whether any row
 * before it was not a delete.
 *
 * d holds narrow rows (narrow_cols) and what the walk found: its windows
 * sort little, and the later steps join the rows of b by dwl_seq where
 * they need the source's values.  Sorting the whole rows cost SQLite about
 * twice as much and MariaDB, whose window steps hold rows with LONGTEXT
 * columns in on-disk temporary tables, three times (bench/RESULTS.md,
 * "Narrow window steps"). */
int build_d(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const char *ord = "b.dwl_t, b.dwl_seq";
  int tomb = is_tomb(p);
  temp_table(p, b, "dwl_pd_d", "dwl_seq");  /* build_e joins it by dwl_seq */
  keys(p, b, "y");
  for (size_t i = 0; i < sizeof walk_keep / sizeof *walk_keep; i++)
    buf_printf(b, ", y.%s", walk_keep[i]);
  buf_adds(b, ", SUM(y.dwl_ev)");
  over(p, b, "y", NULL, "y.dwl_t, y.dwl_seq ROWS UNBOUNDED PRECEDING");
  buf_adds(b, " AS dwl_span FROM (SELECT x.*, ");
  rule_case(b, starts, "dwl_start");
  buf_adds(b, ", ");
  rule_case(b, deletes, "dwl_evdel");
  buf_adds(b, ", ");
  rule_case(b, overwrites_type1, "dwl_t1chg");
  buf_adds(b, ", ");
  rule_case(b, ver_is_event, "dwl_ev");
  buf_adds(b, " FROM (SELECT w.*, ");
  buf_printf(b,
             "CASE WHEN w.dwl_rn = 1 THEN w.dwl_ck WHEN w.dwl_pdel = 0 THEN %d "
             "WHEN (CASE WHEN w.dwl_nnb > 0 THEN %d ELSE w.dwl_ck END) = %d THEN %d "
             "ELSE w.dwl_ck END AS dwl_sb, "
             "CASE WHEN w.dwl_rn = 1 THEN 1 - w.dwl_ceq2 WHEN w.dwl_fp2 <> w.dwl_pfp2 THEN 1 ELSE 0 END AS dwl_chg2, "
             "CASE WHEN w.dwl_rn = 1 THEN 1 - w.dwl_ceq1 WHEN w.dwl_fp1 <> w.dwl_pfp1 THEN 1 ELSE 0 END AS dwl_chg1 "
             "FROM (SELECT ",
             ver_next(VS_LIVE, VE_SAME, tomb), VS_LIVE, VS_LIVE, ver_next(VS_LIVE, VE_DELETE, tomb));
  narrow_cols(p, b, "b");
  buf_adds(b, ", ROW_NUMBER()");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_rn, LAG(b.dwl_del)");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_pdel, LAG(b.dwl_fp2)");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_pfp2, LAG(b.dwl_fp1)");
  over(p, b, "b", NULL, ord);
  buf_adds(b, " AS dwl_pfp1, COALESCE(SUM(1 - b.dwl_del)");
  over(p, b, "b", NULL, "b.dwl_t, b.dwl_seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING");
  buf_adds(b, ", 0) AS dwl_nnb, ");
  /* The memory engine's order of keys, which numbers sequence surrogate
   * keys: by first source row, keys with late rows (which wait for their
   * history, late.c) after every other.  (With repair those keys are not
   * in b: they went to the memory engine.) */
  int lk = pd_late_applies(p) && !pd_repairs(p);
  if (lk)
    buf_printf(b, "COALESCE(lk.dwl_lkmin + %lld, ", p->nseq);
  buf_adds(b, "MIN(b.dwl_seq) OVER (PARTITION BY ");
  keys(p, b, "b");
  buf_adds(b, lk ? ")) AS dwl_kseq FROM dwl_pd_b b" : ") AS dwl_kseq FROM dwl_pd_b b");
  if (lk) {
    /* (a join with the keys' first late rows, not a lookup per row) */
    buf_adds(b, " LEFT JOIN (SELECT ");
    keys(p, b, "l");
    buf_adds(b, ", MIN(l.dwl_kmin) AS dwl_lkmin FROM dwl_pd_l l GROUP BY ");
    keys(p, b, "l");
    buf_adds(b, ") lk ON ");
    keyeq(p, b, "lk", "b");
  }
  buf_adds(b, ") w) x) y");
  return exec(p, b, NULL, NULL, 0, err);
}

/* The row (its dwl_seq) whose type 1 values a new version carries. */
static void t1_row(pushdown *p, dwl_buf *b)
{
  if (p->spec->type1_scope == T1_ALL) {
    /* the key's last non-delete row, else the row itself */
    buf_adds(b, "CASE WHEN MIN(d.dwl_del) OVER (PARTITION BY ");
    keys(p, b, "d");
    buf_adds(b, ") = 0 THEN FIRST_VALUE(d.dwl_seq)");
    over(p, b, "d", NULL, "d.dwl_del, d.dwl_t DESC, d.dwl_seq DESC");
    buf_adds(b, " ELSE d.dwl_seq END");
  } else {
    /* the last row of the version's span; a tombstone keeps its own */
    buf_adds(b, "CASE WHEN d.dwl_del = 1 THEN d.dwl_seq ELSE FIRST_VALUE(d.dwl_seq)");
    over(p, b, "d", "dwl_span", "d.dwl_t DESC, d.dwl_seq DESC");
    buf_adds(b, " END");
  }
}

/* e: the events, the next event, and the row whose type 1 values their
 * version carries (dwl_lseq, a row of b: insert_versions reads it); the
 * windows over the narrow rows of d into m, joined with the rest of the
 * events' rows from d and b. */
int build_e(pushdown *p, dwl_buf *b, dwl_error *err)
{
  temp_table(p, b, "dwl_pd_m", NULL);
  buf_adds(b, "z.dwl_seq, z.dwl_lseq, LEAD(z.dwl_vt)");
  over(p, b, "z", NULL, "z.dwl_t, z.dwl_seq");
  buf_adds(b, " AS dwl_nvt, LEAD(z.dwl_del)");
  over(p, b, "z", NULL, "z.dwl_t, z.dwl_seq");
  buf_adds(b, " AS dwl_ndel FROM (SELECT d.*, ");
  t1_row(p, b);
  buf_adds(b, " AS dwl_lseq FROM dwl_pd_d d) z WHERE z.dwl_ev = 1");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  temp_table(p, b, "dwl_pd_e", NULL);
  buf_adds(b, "b.*");
  for (size_t i = 0; i < sizeof walk_cols / sizeof *walk_cols; i++)
    buf_printf(b, ", d.%s", walk_cols[i]);
  buf_adds(b, ", m.dwl_lseq, m.dwl_nvt, m.dwl_ndel FROM dwl_pd_m m JOIN dwl_pd_d d ON d.dwl_seq = m.dwl_seq "
              "JOIN dwl_pd_b b ON b.dwl_seq = m.dwl_seq");
  return exec(p, b, NULL, NULL, 0, err);
}
