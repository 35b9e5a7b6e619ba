/* Pushdown's changes, applied from the temporary tables (pushdown_stage.c)
 * through the writer: type 1 overwrites, the closing of current versions,
 * the new versions and the counts (scd2); the upsert's last row per key
 * (one MERGE, or DELETE, UPDATE and INSERT where the dialect has no MERGE
 * or the table has foreign partitions); deletes by absence and the keys
 * that come back. */
#include "pushdown_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* type1_scope: all with expire-style deletes: the staged rows (dwl_seq)
 * of keys deleted without a tombstone, which have no current version but
 * stored ones (scd.c's KM_GONE: a deleted closed version, or any closed
 * version without a deleted flag, as target_scan reads them).  A revival
 * gives those versions its type 1 values (scd_walk.c); it is read before
 * the new versions exist, which would make a new key look the same. */
static int stage_gone(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  temp_table(p, b, "dwl_pd_g", "dwl_seq");
  buf_printf(b, "DISTINCT b.dwl_seq FROM dwl_pd_b b JOIN %s g ON ", t->table_q);
  keyeq(p, b, "g", "b");
  if (t->ix[TC_DELETED] >= 0)
    buf_printf(b, " AND g.%s = %s", tq(p, TC_DELETED), t->d->true_lit);
  buf_adds(b, " WHERE b.dwl_ck = 0");
  return exec(p, b, NULL, NULL, 0, err);
}

/* Whether stage_type1 reaches keys without a current version too. */
static int type1_gone(const pushdown *p)
{
  return p->spec->type1_scope == T1_ALL && p->spec->deletes != DEL_NONE && !is_tomb(p);
}

/* Type 1 overwrites, staged in dwl_pd_t1 (one row per key): of current
 * versions (the last row before the key's first event), or of every
 * version (the key's last row that is not a delete).  With scope all it
 * is staged before the expires and inserts and written after them
 * (write_type1), when the new versions carry the same values anyway. */
int stage_type1(pushdown *p, dwl_buf *b, scd_counts *counts, long long *t1_unchanged, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  *t1_unchanged = 0;
  p->nt1 = 0;
  if (c->nt1 == 0 || !t->exists)
    return 0;
  int all = p->spec->type1_scope == T1_ALL;
  int gone = all && type1_gone(p);
  if (gone && stage_gone(p, b, err) != 0)
    return -1;
  const char *ord = all ? "d.dwl_del, d.dwl_t DESC, d.dwl_seq DESC" : "d.dwl_t DESC, d.dwl_seq DESC";
  /* the key's row that gives the values (q.dwl_lseq) over the narrow rows
   * of d, its values from b */
  buf_adds(b, "CREATE TEMPORARY TABLE dwl_pd_t1 AS SELECT ");
  keys(p, b, "l");
  buf_adds(b, ", l.dwl_cvf, l.dwl_oe");
  for (size_t i = 0; i < c->nt1; i++)
    buf_printf(b, ", l.%s", p->q[c->t1[i]]);
  buf_adds(b, ", q.dwl_n FROM (SELECT FIRST_VALUE(d.dwl_seq)");
  over(p, b, "d", NULL, ord);
  buf_adds(b, " AS dwl_lseq, ROW_NUMBER()");
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
    buf_adds(b, ") AS dwl_nd FROM dwl_pd_d d WHERE d.dwl_ck <> 0");
    /* (a gone key's dwl_ceq1 is 0: its versions are always overwritten,
     * as scd_walk.c does, having no current values to compare) */
    if (gone)
      buf_adds(b, " OR d.dwl_seq IN (SELECT dwl_seq FROM dwl_pd_g)");
    buf_adds(b, ") q");
  } else {
    buf_adds(b, " FROM dwl_pd_d d WHERE d.dwl_span = 0 AND d.dwl_ck = 1) q");
  }
  buf_adds(b, " JOIN dwl_pd_b l ON l.dwl_seq = q.dwl_lseq WHERE q.dwl_r = 1 AND ");
  buf_adds(b, all ? "q.dwl_nd = 0 AND q.dwl_q = 0" : "q.dwl_n > 0");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  long long n = count_of(p, b, "dwl_pd_t1", err);
  if (n < 0)
    return -1;
  p->nt1 = n;
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
  return analyze(p, "dwl_pd_t1", err);
}

/* Writes what stage_type1 staged. */
int write_type1(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  int all = p->spec->type1_scope == T1_ALL;
  if (p->nt1 == 0)
    return 0;
  /* scope current: the current versions; all: every version of the key */
  return update_cols(p, b, "dwl_pd_t1", c->t1, c->nt1, &(pd_match){.version = !all}, !all, err);
}

/* Closing current versions: those of keys whose first event is in the
 * delta (a change, a revival or a delete). */
int apply_expires(pushdown *p, dwl_buf *b, dwl_error *err)
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
  size_t tc[3];
  const char *ex[3];
  char cur[128], del[128];
  size_t ns = 0;
  tc[ns] = (size_t)t->ix[TC_VALID_TO];
  ex[ns++] = "s.dwl_vt";
  if (t->ix[TC_CURRENT] >= 0) {
    snprintf(cur, sizeof cur, "%s", t->d->false_lit);
    tc[ns] = (size_t)t->ix[TC_CURRENT];
    ex[ns++] = cur;
  }
  if (t->ix[TC_DELETED] >= 0) {
    snprintf(del, sizeof del, "CASE WHEN s.dwl_xdel = 1 THEN %s ELSE %s END", t->d->true_lit, t->d->false_lit);
    tc[ns] = (size_t)t->ix[TC_DELETED];
    ex[ns++] = del;
  }
  /* Closing a version leaves its run id: the run changed none of its
   * values. */
  return update_from(p, b, "dwl_pd_x", tc, ex, ns, &(pd_match){.version = 1}, 1, NULL, NULL, 0, err);
}

/* Reads the greatest sequence surrogate key. */
int max_sk(pushdown *p, dwl_buf *b, long long *out, dwl_error *err)
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

int insert_head(pushdown *p, dwl_buf *b, insert_params *ip, dwl_error *err)
{
  const target *t = p->t;
  long long base = 0;
  ip->seq = t->ix[TC_SK] >= 0 && p->spec->sk_strategy == SK_SEQUENCE;
  if (ip->seq && max_sk(p, b, &base, err) != 0)
    return -1;
  snprintf(ip->base, sizeof ip->base, "%lld", base);
  /* the surrogate key's base (the first column), the run id (the last) */
  ip->param[0] = (dwl_value){.data = ip->base, .len = strlen(ip->base), .is_null = 0};
  ip->type[0] = t->d->param_type(DWL_TYPE_INTEGER);
  ip->n = ip->seq ? 1 : 0;
  ip->n += rid_param(p, &ip->param[ip->n], &ip->type[ip->n]);
  buf_printf(b, "INSERT INTO %s (", t->table_q);
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(b, "%s%s", i ? ", " : "", t->cols[i].q);
  buf_adds(b, ") SELECT ");
  return 0;
}

/* New versions: every event but an expire-style delete. */
int insert_versions(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  const scd_cols *c = &p->e->cols;
  insert_params ip;
  if (insert_head(p, b, &ip, err) != 0)
    return -1;
  int seq = ip.seq;
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
    case TC_RUN_ID: buf_adds(b, "?"); break;
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
      if (j < c->nt1)  /* the type 1 values of the version's row (build_e), most often its own */
        buf_printf(b, "CASE WHEN e.dwl_lseq = e.dwl_seq THEN e.%s ELSE (SELECT l.%s FROM dwl_pd_b l WHERE "
                      "l.dwl_seq = e.dwl_lseq) END", tc->q, tc->q);
      else
        buf_printf(b, "e.%s", tc->q);
    }
    }
  }
  buf_printf(b, " FROM dwl_pd_e e WHERE e.dwl_ev = 1%s", is_tomb(p) ? "" : " AND e.dwl_del = 0");
  return apply(p, b, ip.n ? ip.param : NULL, ip.n ? ip.type : NULL, ip.n, err);
}

int scd2_counts(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
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
  counts->unchanged += p->n - p->nlate - starts - dels;
  if (p->spec->type1_scope != T1_ALL) {
    counts->updated += t1rows;
    counts->unchanged -= t1rows;
  }
  return 0;
}

/* ---- upsert ---------------------------------------------------------------------- */

int run_upsert(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
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
  counts->unchanged += p->n - p->nlate - del - ins - upd;
  if (del + ins + upd == 0)
    return 0;
  if (analyze(p, "dwl_pd_u", err) != 0)
    return -1;
  dwl_buf on;
  buf_init(&on, 0);
  keyeq(p, &on, "d", "s");
  if (!on.data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = 0;
  /* MERGE cannot change a foreign table (a postgres_fdw partition): there
   * the three statements the other warehouses use, which it can. */
  if (t->d->has_merge && t->foreign)
    log_msg(LOG_INFO, "table %s %s: %s; MERGE cannot change a foreign table, so the upsert is applied as "
                      "DELETE, UPDATE ... FROM and INSERT ... SELECT", p->spec->target_table,
            t->foreign_self ? "is a foreign table" : "has foreign partitions", t->foreign);
  if (t->d->has_merge && !t->foreign) {
    /* One MERGE does all three. */
    buf_printf(b, "MERGE INTO %s AS d USING dwl_pd_u AS s ON (%s) WHEN MATCHED AND s.dwl_del = 1 THEN DELETE",
               t->table_q, on.data);
    /* the run id: of the rows it updates, then of those it inserts */
    dwl_value rid[2];
    SQLSMALLINT rty[2];
    size_t np = 0;
    if (c->nt2) {
      buf_adds(b, " WHEN MATCHED AND s.dwl_ceq2 = 0 THEN UPDATE SET ");
      for (size_t i = 0; i < c->nt2; i++)
        buf_printf(b, "%s%s = s.%s", i ? ", " : "", p->q[c->t2[i]], p->q[c->t2[i]]);
      if ((np += rid_param(p, &rid[np], &rty[np])))
        buf_printf(b, ", %s = ?", tq(p, TC_RUN_ID));
    }
    buf_adds(b, " WHEN NOT MATCHED AND s.dwl_del = 0 THEN INSERT ");
    insert_cols(p, b, " VALUES (", ")");
    np += rid_param(p, &rid[np], &rty[np]);
    rc = apply(p, b, np ? rid : NULL, np ? rty : NULL, np, err);
  } else {
    if (del)
      rc = delete_from(p, b, "dwl_pd_u", &(pd_match){.filter = "s.dwl_del = 1 AND s.dwl_ck = 1"}, err);
    if (rc == 0 && upd)
      rc = update_cols(p, b, "dwl_pd_u", c->t2, c->nt2,
                       &(pd_match){.filter = "s.dwl_del = 0 AND s.dwl_ck = 1 AND s.dwl_ceq2 = 0"}, 1, err);
    if (rc == 0 && ins) {
      buf_printf(b, "INSERT INTO %s ", t->table_q);
      insert_cols(p, b, " SELECT ", "");
      buf_adds(b, " FROM dwl_pd_u AS s WHERE s.dwl_del = 0 AND s.dwl_ck = 0");
      dwl_value rid;
      SQLSMALLINT rty;
      size_t np = rid_param(p, &rid, &rty);
      rc = apply(p, b, np ? &rid : NULL, np ? &rty : NULL, np, err);
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
  if (writer_stage_flush(p->seen, err) != 0 || index_keys(p, "dwl_pd_seen", err) != 0 ||
      analyze(p, "dwl_pd_seen", err) != 0)
    return -1;
  if (p->spec->mode == MODE_SCD2) {
    int rc = absent_count(p, current, absent, err);
    p->nabsent = *absent;
    return rc;
  }
  dwl_buf on, b;
  buf_init(&on, 0);
  buf_init(&b, 0);
  keyeq(p, &on, "d", "s");
  if (on.data)
    buf_printf(&b, "SELECT COUNT(*), SUM(CASE WHEN NOT EXISTS (SELECT 1 FROM dwl_pd_seen s WHERE %s) THEN 1 ELSE 0 END) "
               "FROM %s d WHERE 1 = 1", on.data, t->table_q);
  in_partitions(p, &b, "d");  /* load.partition: its base is the partitions delivered */
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

int pushdown_count_truncate(pushdown *p, long long *current, long long *reached, dwl_error *err)
{
  return truncate_count(p, current, reached, err);
}

/* upsert, deletes: absent: the rows of keys the source no longer has
 * (after the delta's changes, every key the source has is seen), of the
 * partitions it delivered (load.partition); or with truncate rows, those
 * a truncate reaches. */
int apply_absent(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  if (p->spec->mode == MODE_SCD2)
    return absent_delete(p, b, counts, err);
  if (p->nabsent == 0)
    return 0;
  counts->deleted += p->nabsent;
  /* truncates (truncate_count counted those): the rows stored before the
   * last truncate that the delta has no row of */
  dwl_value v;
  SQLSMALLINT ty;
  size_t np = 0;
  dwl_buf cond;
  buf_init(&cond, 0);
  if (p->e->ntrunc)
    np = reached_by_last(p, &cond, "d", &v, &ty);
  else
    in_partitions(p, &cond, "d");
  int rc = delete_unmatched(p, b, p->e->ntrunc ? "dwl_pd_src" : "dwl_pd_seen", p->e->ntrunc ? "dwl_seq" : "dwl_one",
                            &cond, np ? &v : NULL, np ? &ty : NULL, np, err);
  buf_free(&cond);
  return rc;
}

/* upsert, deletes: absent: the keys whose rows the checkpoint skipped but
 * the table no longer has (deleted by absence) come back: the last such
 * row of each key that has none past the checkpoint, unless a delete row.
 * They count as inserted and no longer as skipped. */
int apply_revive(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  const target *t = p->t;
  if (!p->old || p->nold == 0 || !t->exists || p->spec->mode != MODE_UPSERT)
    return 0;
  if (old_stage(p, err) != 0 || analyze(p, "dwl_pd_old", err) != 0)
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
    dwl_value rid;
    SQLSMALLINT rty;
    size_t np = rid_param(p, &rid, &rty);
    rc = apply(p, b, np ? &rid : NULL, np ? &rty : NULL, np, err);
  }
  buf_free(&from);
  return rc < 0 ? -1 : 0;
}
