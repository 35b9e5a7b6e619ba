/* load.ignore_null_updates in pushdown: the fill of scd_fill.c on the
 * staged rows, before anything else reads them (in upsert, after its late
 * rows are set apart: they neither take nor give values).  A NULL in one of the
 * columns scd_fill_columns names takes the value of the key's previous
 * row in lmd order (itself filled), else, when no delete row came before
 * it in the batch, the key's live current version's; a delete row is not
 * filled and gives nothing; a new key keeps its NULLs.
 *
 * In SQL, per column: the rows of a key are cut into segments by the
 * delete rows (a running sum), a running count of the non-NULL values of
 * rows that are not deletes groups each row with the last such value
 * before it, whose FIRST_VALUE fills it (dwl_pd_f; a group of none falls
 * back on the current version in the first segment).
 *
 * The filled rows' fingerprints, which the walk compares row to row, are
 * the client's to compute: it reads those rows back (values normalized as
 * the memory engine normalizes stored ones, target_scan), hashes them as
 * staged_row does, and stages the results (dwl_pd_fp). */
#include "pushdown_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"

/* " AND <c is live>": a tombstone (scd2) or, in upsert, a row marked
 * deleted gives no values. */
static void fill_live(const pushdown *p, dwl_buf *b, const char *c)
{
  if (p->spec->mode == MODE_UPSERT && p->t->ix[TC_DELETED] >= 0)
    buf_printf(b, " AND NOT (%s.%s = %s)", c, tq(p, TC_DELETED), p->t->d->true_lit);
  else
    live_pred(p, b, c);
}

/* dwl_pd_f: each row with a NULL to fill (not a delete), its values filled. */
static int build_fill(pushdown *p, dwl_buf *b, const size_t *inu, size_t n, dwl_error *err)
{
  temp_table(p, b, "dwl_pd_f", "dwl_seq");
  buf_adds(b, "w.dwl_seq");
  for (size_t k = 0; k < n; k++) {
    const char *q = p->q[inu[k]];
    buf_printf(b, ", CASE WHEN w.%s IS NOT NULL THEN w.%s ELSE COALESCE(w.dwl_fv%zu, CASE WHEN w.dwl_seg = 0 AND "
                  "c.dwl_m IS NOT NULL", q, q, k);
    fill_live(p, b, "c");
    buf_printf(b, " THEN c.%s END) END AS %s", q, q);
  }
  buf_adds(b, " FROM (SELECT v.*");
  for (size_t k = 0; k < n; k++) {
    buf_printf(b, ", FIRST_VALUE(v.dwl_cv%zu) OVER (PARTITION BY ", k);
    keys(p, b, "v");
    buf_printf(b, ", v.dwl_seg, v.dwl_g%zu ORDER BY v.dwl_t, v.dwl_seq) AS dwl_fv%zu", k, k);
  }
  buf_adds(b, " FROM (SELECT u.*");
  for (size_t k = 0; k < n; k++) {
    buf_printf(b, ", COUNT(u.dwl_cv%zu) OVER (PARTITION BY ", k);
    keys(p, b, "u");
    buf_printf(b, ", u.dwl_seg ORDER BY u.dwl_t, u.dwl_seq ROWS UNBOUNDED PRECEDING) AS dwl_g%zu", k);
  }
  buf_adds(b, " FROM (SELECT ");
  keys(p, b, "s");
  buf_adds(b, ", s.dwl_seq, s.dwl_t, s.dwl_del, s.dwl_oe");
  for (size_t k = 0; k < n; k++)
    buf_printf(b, ", s.%s, CASE WHEN s.dwl_del = 0 THEN s.%s END AS dwl_cv%zu", p->q[inu[k]], p->q[inu[k]], k);
  buf_adds(b, ", SUM(s.dwl_del)");
  over(p, b, "s", NULL, "s.dwl_t, s.dwl_seq ROWS UNBOUNDED PRECEDING");
  buf_adds(b, " AS dwl_seg FROM dwl_pd_src s");
  /* upsert: rows older than the stored row (late, never applied) neither
   * take nor give values (build_late set them apart first) */
  if (p->spec->mode == MODE_UPSERT && pd_late_applies(p))
    buf_adds(b, " WHERE s.dwl_seq NOT IN (SELECT l.dwl_seq FROM dwl_pd_l l)");
  buf_adds(b, ") u) v) w");
  join_current(p, b, "c", "w");
  buf_adds(b, " WHERE w.dwl_del = 0 AND (");
  for (size_t k = 0; k < n; k++)
    buf_printf(b, "%sw.%s IS NULL", k ? " OR " : "", p->q[inu[k]]);
  buf_adds(b, ")");
  return exec(p, b, NULL, NULL, 0, err);
}

typedef struct fp_ctx {
  pushdown *p;
  writer_stage *st;
  dwl_value *row;
  dwl_buf *norm;
} fp_ctx;

/* A filled row read back (dwl_seq, then the source columns): its
 * fingerprints, staged. */
static int on_filled(void *ud, const dwl_value *r, dwl_error *err)
{
  fp_ctx *f = ud;
  pushdown *p = f->p;
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  for (size_t i = 0; i < p->ncols; i++) {
    const char *why = NULL;
    if (target_norm_stored(t, i, &r[i + 1], &f->norm[i], &f->row[i], &why) != 0)
      return err_set(err, DWL_EXIT_FAILED, "pushdown into %s: a filled value of column %s: %s",
                     p->spec->target_table, t->src[i].name, why);
  }
  char fp[3][33];
  fp128 h[3] = {fp_tuple(f->row, c->t2, c->nt2), fp_tuple(f->row, c->t1, c->nt1), fp_values(f->row, p->ncols)};
  dwl_value out[4] = {r[0]};
  for (int k = 0; k < 3; k++) {
    fp_hex(h[k], fp[k]);
    pd_text(&out[k + 1], fp[k]);
  }
  return writer_stage_add(f->st, out, err);
}

/* dwl_pd_src's filled rows: their values, then their fingerprints. */
static int apply_fill(pushdown *p, dwl_buf *b, const size_t *inu, size_t n, dwl_error *err)
{
  const dialect *d = p->t->d;
  const char *on = "d.dwl_seq = s.dwl_seq";
  d->update_begin(b, "dwl_pd_src", "dwl_pd_f", on);
  for (size_t k = 0; k < n; k++)
    buf_printf(b, "%s%s%s = s.%s", k ? ", " : "", d->set_prefix, p->q[inu[k]], p->q[inu[k]]);
  d->update_end(b, "dwl_pd_f", on);
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  static char *const names[] = {"dwl_seq", "dwl_fp2", "dwl_fp1", "dwl_fpa"};
  dwl_column decl[4] = {p->decl[p->ncols + X_SEQ], p->decl[p->ncols + X_FP2], p->decl[p->ncols + X_FP1],
                        p->decl[p->ncols + X_FPA]};
  fp_ctx f = {.p = p};
  f.row = calloc(p->ncols + 1, sizeof *f.row);
  f.norm = calloc(p->ncols + 1, sizeof *f.norm);
  int rc = f.row && f.norm ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; f.norm && i < p->ncols; i++)
    buf_init(&f.norm[i], 0);
  if (rc == 0)
    rc = writer_stage_open(p->w, "dwl_pd_fp", names, decl, NULL, 4, &f.st, err);
  if (rc == 0) {
    buf_adds(b, "SELECT d.dwl_seq");
    for (size_t i = 0; i < p->ncols; i++)
      buf_printf(b, ", d.%s", p->q[i]);
    buf_adds(b, " FROM dwl_pd_src d JOIN dwl_pd_f s ON d.dwl_seq = s.dwl_seq");
    rc = each_row(p, b, NULL, NULL, 0, on_filled, &f, err);
  }
  if (rc == 0)
    rc = writer_stage_flush(f.st, err);
  if (rc == 0) {
    d->update_begin(b, "dwl_pd_src", "dwl_pd_fp", on);
    buf_printf(b, "%sdwl_fp2 = s.dwl_fp2, %sdwl_fp1 = s.dwl_fp1, %sdwl_fpa = s.dwl_fpa", d->set_prefix,
               d->set_prefix, d->set_prefix);
    d->update_end(b, "dwl_pd_fp", on);
    rc = exec(p, b, NULL, NULL, 0, err);
  }
  writer_stage_free(f.st);
  for (size_t i = 0; f.norm && i < p->ncols; i++)
    buf_free(&f.norm[i]);
  free(f.norm);
  free(f.row);
  return rc;
}

int fill_nulls_pd(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  if (!p->spec->ignore_nulls || p->n == 0)
    return 0;
  size_t *inu = calloc(c->nt2 + c->nt1 + 1, sizeof *inu);
  if (!inu)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  size_t n = scd_fill_columns(p->e, inu);
  int rc = 0;
  if (n > 0) {
    rc = build_fill(p, b, inu, n, err);
    long long filled = rc == 0 ? count_of(p, b, "dwl_pd_f", err) : -1;
    if (filled < 0)
      rc = -1;
    else if (filled > 0)
      rc = apply_fill(p, b, inu, n, err);
  }
  free(inu);
  return rc;
}
