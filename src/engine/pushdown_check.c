/* Pushdown's checks, before anything is written: two different rows of a
 * key at one lmd (as the memory engine), and what pushdown refuses where
 * the memory engine moves or replaces: rows before the key's current
 * version or its deletion, and events within the close step of the
 * version they close (versions.h: VW_REPLACE, VW_MOVE).  Each fails the
 * run naming the first offending row. */
#include "pushdown_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  dwl_ts t = {.us = strtoll(us, NULL, 10)};
  target_ts_text(p->t, &t, out);
}

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
int check_conflicts(pushdown *p, dwl_buf *b, dwl_error *err)
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
  return ver_err_conflict(err, k, p->e->cols.lmd < 0 ? NULL : when, ON(p), v[nk], v[nk + 1]);
}

/* Rows that cannot follow the key's history: before its current version,
 * or at a deletion, which the memory engine moves to the deletion time.
 * A safety net: the keys with such rows went to the memory engine, or
 * ignore and reject set such rows apart first (pushdown_late.c); one left
 * here fails the run rather than writing a wrong history. */
int check_late(pushdown *p, dwl_buf *b, dwl_error *err)
{
  size_t nk = p->e->cols.nkey;
  char v[PD_MAX_KEY + 5][512], k[512], when[32], cur[32] = "?";
  int isnull[PD_MAX_KEY + 5];
  /* A tombstone stamped by absence ends when the revival starts, at its
   * own start with the close rule at_next: absent_moves moved the rows
   * before it there (the memory engine's skip_before_deletion). */
  int absent = p->spec->deletes == DEL_ABSENT;
  char rest[600];
  snprintf(rest, sizeof rest,
           ", b.dwl_origin, b.dwl_t, b.dwl_ck, b.dwl_cvf, CASE WHEN b.dwl_vf = b.dwl_cvf THEN 1 ELSE 0 END FROM "
           "dwl_pd_b b WHERE (b.dwl_ck = 1 AND (b.dwl_vf < b.dwl_cvf OR (b.dwl_vf = b.dwl_cvf AND b.dwl_del = 0 "
           "AND b.dwl_ceq2 = 0))) OR (b.dwl_ck = 2 AND b.dwl_vf %s b.dwl_cvf) ORDER BY b.dwl_t, b.dwl_seq",
           absent ? "<" : "<=");
  int rc = offending_row(p, b, "b", rest, 5, 1, v, isnull, k, when, err);
  if (rc <= 0)
    return rc;
  dwl_ts cvf;
  if (target_ts_parse(p->t, v[nk + 3], strlen(v[nk + 3]), &cvf) == 0)
    target_ts_text(p->t, &cvf, cur);
  if (strcmp(v[nk + 2], "2") == 0)
    return err_set(err, DWL_EXIT_FAILED,
                   "%s:%s: key %s has lmd %s, not after its deletion (tombstone valid from %s); pushdown does "
                   "not move rows past a deletion, engine: memory does",
                   ON(p), v[nk], k, when, cur);
  if (strcmp(v[nk + 4], "1") == 0)
    return ver_err_same_start(err, ON(p), v[nk], k, when, 0);
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%s: key %s has lmd %s, before the key's current version (valid from %s); "
                 "this late row cannot be placed in the history",
                 ON(p), v[nk], k, when, cur);
}

/* Keys without a current version whose last version was deleted (expire
 * style): the memory engine moves rows dated before the deletion to it;
 * pushdown refuses them. */
int check_gone(pushdown *p, dwl_buf *b, dwl_error *err)
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
 * version or moves the deletion (dwload-job(5), close; versions.h: the
 * rules' VW_REPLACE and VW_MOVE), to which pushdown hands such keys
 * (pushdown_take_late); one left here fails the run, writing nothing.
 * A delete that leaves no version (VS_NONE) leaves nothing to close. */
int check_within_step(pushdown *p, dwl_buf *b, dwl_error *err)
{
  size_t nk = p->e->cols.nkey;
  char v[PD_MAX_KEY + 5][512], k[512], when[32];
  int isnull[PD_MAX_KEY + 5];
  int64_t gap = ver_close_gap(p->spec);
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
             gap, ver_next(VS_LIVE, VE_DELETE, is_tomb(p)) == VS_NONE ? " AND q.dwl_pedel = 0" : "");
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
