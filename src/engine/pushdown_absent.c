/* scd2 with deletes: absent in pushdown: what the memory engine does with
 * a key the extract no longer has, or has again (scd.c, scd_walk.c's
 * skip_before_deletion, scd_delete.c), in three steps around the walk:
 *
 *   absent_revive  rows not past the checkpoint of keys without a live
 *                  current version (deleted, or never loaded) join the
 *                  delta: the extract says the key exists;
 *   absent_moves   rows of a deleted key dated before its deletion (which
 *                  a run's clock stamped) are dropped but the last, which
 *                  takes effect at the deletion;
 *   absent_delete  the live keys the extract no longer has are closed at
 *                  the run's clock (and given a tombstone).
 *
 * A truncate row (load.deletes.truncate_values) is a deletion of every key
 * too, at its lmd (scd_delete.c's scd_truncate): truncate_rows gives each
 * key of the delta a delete row at each truncate after its history's end,
 * and absent_delete closes the other live keys at the first truncate
 * after their version's start.
 *
 * The instants of a move and of a deletion need the close rule's
 * arithmetic and, for hash surrogate keys, SHA-256 of the key with the
 * instant's text, which SQL cannot do alike on every warehouse: the
 * client reads the few rows concerned (the deleted keys' rows in the
 * delta; the absent keys, as the memory engine reads them again), computes
 * them with the memory engine's own functions and stages the results,
 * which the SQL applies by join. */
#include "pushdown_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "log.h"

void live_pred(const pushdown *p, dwl_buf *b, const char *a)
{
  if (is_tomb(p) && p->t->ix[TC_DELETED] >= 0)
    buf_printf(b, " AND NOT (%s.%s = %s)", a, tq(p, TC_DELETED), p->t->d->true_lit);
}

/* (The revived rows come after the others in dwl_seq: they keep the
 * source's order, as both stages number from one counter.) */
int absent_revive(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  if (p->revived || !p->old || p->nold == 0)
    return 0;
  p->revived = 1;
  if (old_stage(p, err) != 0)
    return -1;
  dwl_buf where;
  buf_init(&where, 0);
  buf_adds(&where, "dwl_pd_old o");
  if (t->exists) {
    buf_printf(&where, " WHERE NOT EXISTS (SELECT 1 FROM %s d WHERE ", t->table_q);
    keyeq(p, &where, "d", "o");
    buf_adds(&where, " AND ");
    curpred(p, &where, "d", "o");
    live_pred(p, &where, "d");
    buf_adds(&where, ")");
  }
  if (!where.data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  long long n = count_of(p, b, where.data, err);
  int rc = n < 0 ? -1 : 0;
  if (n > 0) {
    buf_printf(b, "INSERT INTO dwl_pd_src SELECT o.* FROM %s", where.data);
    rc = exec(p, b, NULL, NULL, 0, err);
    p->n += n;
    p->nrevived += n;
  }
  buf_free(&where);
  return rc;
}

/* ---- moves --------------------------------------------------------------- */

typedef struct mv_row {
  long long seq;
  int64_t t;
} mv_row;

typedef struct mv_ctx {
  pushdown *p;
  writer_stage *st;
  scd_counts *counts;
  size_t nk;
  dwl_buf key[PD_MAX_KEY];   /* the group's key, as fetched */
  int knull[PD_MAX_KEY];
  int have;                  /* a group is open */
  int64_t at;                /* its deletion instant */
  mv_row *rows;
  size_t n, cap;
  long long moved, dropped;
} mv_ctx;

/* The hash surrogate key of a version of key `kv` (its nkey values, as the
 * warehouse returned them) starting at `vf` (its text): SHA-256 of the key
 * and the text, with a marker for a tombstone, as staged_row and the
 * memory engine's sink compute it; the values are first normalized as the
 * memory engine normalizes stored ones (target_scan), which is the
 * source's canonical text. */
static int hash_key(const pushdown *p, const dwl_value *kv, const char *vf, int tomb, char out[65],
                    dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  dwl_value *kr = calloc(p->ncols ? p->ncols : 1, sizeof *kr);
  dwl_buf *nb = calloc(c->nkey ? c->nkey : 1, sizeof *nb);
  int rc = kr && nb ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t k = 0; rc == 0 && k < c->nkey; k++) {
    const char *why = NULL;
    buf_init(&nb[k], 0);
    if (target_norm_stored(p->t, c->key[k], &kv[k], &nb[k], &kr[c->key[k]], &why) != 0)
      rc = err_set(err, DWL_EXIT_FAILED, "pushdown into %s: a key value of column %s: %s", p->spec->target_table,
                   p->t->src[c->key[k]].name, why);
  }
  if (rc == 0) {
    char extra[48];
    int len = snprintf(extra, sizeof extra, "%s%s", vf, tomb ? "|tombstone" : "");
    fp_sha256_hex(kr, c->key, c->nkey, extra, (size_t)len, out);
  }
  for (size_t k = 0; nb && k < c->nkey; k++)
    buf_free(&nb[k]);
  free(nb);
  free(kr);
  return rc;
}

/* Stages what becomes of row i of the group: dropped, or moved to m->at. */
static int stage_move(mv_ctx *m, size_t i, int drop, dwl_error *err)
{
  pushdown *p = m->p;
  char seq[24], t[24], vf[32] = "", vt[32] = "", sk[65] = "", skt[65] = "";
  dwl_value row[7];
  snprintf(seq, sizeof seq, "%lld", m->rows[i].seq);
  snprintf(t, sizeof t, "%lld", (long long)m->at);
  pd_text(&row[0], seq);
  pd_text(&row[1], drop ? "1" : "0");
  pd_text(&row[2], t);
  for (int k = 3; k < 7; k++)
    pd_text(&row[k], NULL);
  if (!drop) {
    dwl_ts at = {.us = m->at};
    dwl_ts end = scd_close_at(p->spec, at);
    target_ts_text(p->t, &at, vf);
    target_ts_text(p->t, &end, vt);
    pd_text(&row[3], vf);
    pd_text(&row[4], vt);
    if (p->t->ix[TC_SK] >= 0 && p->spec->sk_strategy == SK_HASH) {
      dwl_value kv[PD_MAX_KEY];
      for (size_t k = 0; k < m->nk; k++)
        kv[k] = (dwl_value){.data = m->key[k].data, .len = m->key[k].len, .is_null = m->knull[k]};
      if (hash_key(p, kv, vf, 0, sk, err) != 0 || hash_key(p, kv, vf, 1, skt, err) != 0)
        return -1;
      pd_text(&row[5], sk);
      pd_text(&row[6], skt);
    }
  }
  return writer_stage_add(m->st, row, err);
}

/* skip_before_deletion on the group's rows (by lmd, then source order):
 * those before the deletion are dropped, but the last of them, which takes
 * effect at it, unless a row is at the deletion itself. */
static int close_group(mv_ctx *m, dwl_error *err)
{
  size_t pre = 0;
  if (!m->have)
    return 0;
  m->have = 0;
  while (pre < m->n && m->rows[pre].t < m->at)
    pre++;
  if (pre == 0)
    return 0;
  size_t drop = pre < m->n && m->rows[pre].t == m->at ? pre : pre - 1;
  for (size_t i = 0; i < pre; i++)
    if (stage_move(m, i, i < drop ? 1 : 0, err) != 0)
      return -1;
  m->dropped += (long long)drop;
  m->moved += (long long)(pre - drop);
  m->counts->unchanged += (long long)drop;
  return 0;
}

static int same_key(const mv_ctx *m, const dwl_value *r)
{
  for (size_t k = 0; k < m->nk; k++) {
    if (r[k].is_null != m->knull[k])
      return 0;
    if (!r[k].is_null && (r[k].len != m->key[k].len || memcmp(r[k].data, m->key[k].data, r[k].len) != 0))
      return 0;
  }
  return 1;
}

/* One fetched row: the key, dwl_seq, dwl_t, the deletion's stored text. */
static int on_move_row(void *ud, const dwl_value *r, dwl_error *err)
{
  mv_ctx *m = ud;
  pushdown *p = m->p;
  size_t nk = m->nk;
  if (!m->have || !same_key(m, r)) {
    if (close_group(m, err) != 0)
      return -1;
    for (size_t k = 0; k < nk; k++) {
      m->knull[k] = r[k].is_null;
      buf_reset(&m->key[k]);
      if (!r[k].is_null && buf_add(&m->key[k], r[k].data, r[k].len) != 0)
        return err_set(err, DWL_EXIT_FAILED, "out of memory");
    }
    dwl_ts d;
    const dwl_value *dv = &r[nk + 2];
    if (dv->is_null || target_ts_parse(p->t, dv->data, dv->len, &d) != 0)
      return err_set(err, DWL_EXIT_FAILED, "pushdown into %s: cannot read the deletion time '%.*s' of a deleted key",
                     p->spec->target_table, dv->is_null ? 0 : (int)dv->len, dv->is_null ? "" : dv->data);
    /* a tombstone stamped by absence at t ends a close step later at the
     * earliest; an expire-style deletion at the end its valid_to says */
    m->at = is_tomb(p) ? d.us + ver_close_gap(p->spec) : ver_end_instant(p->spec, d.us);
    m->n = 0;
    m->have = 1;
  }
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    mv_row *nr = realloc(m->rows, cap * sizeof *nr);
    if (!nr)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    m->rows = nr;
    m->cap = cap;
  }
  m->rows[m->n].seq = strtoll(r[nk].data ? r[nk].data : "0", NULL, 10);
  m->rows[m->n].t = strtoll(r[nk + 1].data ? r[nk + 1].data : "0", NULL, 10);
  m->n++;
  return 0;
}

/* The delta's rows of keys deleted (by absence: the only deletes these jobs
 * have), with the deletion's stored text, by key, lmd and source order. */
static void deleted_rows(const pushdown *p, dwl_buf *b)
{
  const target *t = p->t;
  buf_adds(b, "SELECT ");
  keys(p, b, "s");
  if (is_tomb(p)) {
    /* the current version is the tombstone; its valid_from the deletion */
    buf_printf(b, ", s.dwl_seq, s.dwl_t, d.%s FROM dwl_pd_src s JOIN %s d ON ", tq(p, TC_VALID_FROM), t->table_q);
    keyeq(p, b, "d", "s");
    buf_adds(b, " AND ");
    curpred(p, b, "d", "s");
    buf_printf(b, " AND d.%s = %s", tq(p, TC_DELETED), t->d->true_lit);
  } else {
    /* no current version, and the last deleted one's end (as
     * target_scan_deleted reads it: any closed version without a flag) */
    buf_adds(b, ", s.dwl_seq, s.dwl_t, g.dwl_gvt FROM dwl_pd_src s JOIN (SELECT ");
    keys(p, b, "k");
    buf_printf(b, ", MAX(x.%s) AS dwl_gvt FROM (SELECT DISTINCT ", tq(p, TC_VALID_TO));
    keys(p, b, "s");
    buf_printf(b, ", s.dwl_oe FROM dwl_pd_src s) k JOIN %s x ON ", t->table_q);
    keyeq(p, b, "x", "k");
    if (t->ix[TC_DELETED] >= 0)
      buf_printf(b, " AND x.%s = %s", tq(p, TC_DELETED), t->d->true_lit);
    buf_adds(b, " AND NOT (");
    curpred(p, b, "x", "k");
    buf_adds(b, ") GROUP BY ");
    keys(p, b, "k");
    buf_adds(b, ") g ON ");
    keyeq(p, b, "g", "s");
    buf_printf(b, " WHERE NOT EXISTS (SELECT 1 FROM %s c WHERE ", t->table_q);
    keyeq(p, b, "c", "s");
    buf_adds(b, " AND ");
    curpred(p, b, "c", "s");
    buf_adds(b, ")");
  }
  buf_adds(b, " ORDER BY ");
  keys(p, b, "s");
  buf_adds(b, ", s.dwl_t, s.dwl_seq");
}

int absent_moves(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  if (!p->t->exists || p->n == 0)
    return 0;
  static char *const names[] = {"dwl_seq", "dwl_drop", "dwl_t", "dwl_vf", "dwl_vt", "dwl_sk", "dwl_skt"};
  dwl_column decl[7];
  for (int i = 0; i < 7; i++)
    decl[i] = p->decl[p->ncols + (size_t)(i < 3 ? X_SEQ : i == 3 ? X_VF : i == 4 ? X_VT : i == 5 ? X_SK : X_SKT)];
  mv_ctx m = {.p = p, .counts = counts, .nk = p->e->cols.nkey};
  for (size_t k = 0; k < m.nk; k++)
    buf_init(&m.key[k], 0);
  if (writer_stage_open(p->w, "dwl_pd_mv", names, decl, NULL, 7, &m.st, err) != 0)
    return -1;
  deleted_rows(p, b);
  int rc = each_row(p, b, NULL, NULL, 0, on_move_row, &m, err);
  if (rc == 0)
    rc = close_group(&m, err);
  if (rc == 0)
    rc = writer_stage_flush(m.st, err);
  free(m.rows);
  for (size_t k = 0; k < m.nk; k++)
    buf_free(&m.key[k]);
  if (rc == 0 && m.dropped > 0) {
    p->t->d->delete_matching(b, "dwl_pd_src", "dwl_pd_mv", "d.dwl_seq = s.dwl_seq AND s.dwl_drop = 1");
    rc = exec(p, b, NULL, NULL, 0, err);
    p->n -= m.dropped;
  }
  if (rc == 0 && m.moved > 0) {
    const dialect *d = p->t->d;
    const char *on = "d.dwl_seq = s.dwl_seq AND s.dwl_drop = 0";
    d->update_begin(b, "dwl_pd_src", "dwl_pd_mv", on);
    static const char *const set[] = {"dwl_t", "dwl_vf", "dwl_vt", "dwl_sk", "dwl_skt"};
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
      buf_printf(b, "%s%s = s.%s, ", d->set_prefix, set[i], set[i]);
    buf_printf(b, "%sdwl_donly = 0", d->set_prefix);
    d->update_end(b, "dwl_pd_mv", on);
    rc = exec(p, b, NULL, NULL, 0, err);
  }
  if (rc == 0 && (m.moved || m.dropped))
    log_msg(LOG_DEBUG, "pushdown: rows of keys deleted by absence dated before the deletion: %lld moved to it, %lld "
                       "dropped", m.moved, m.dropped);
  writer_stage_free(m.st);
  return rc;
}

/* ---- deletions ----------------------------------------------------------- */

/* "a.<current>", as curpred, with the open end bound (*v) where a staged
 * one is not at hand: 1 when it is. */
size_t cur_bound(const pushdown *p, dwl_buf *b, const char *a, dwl_value *v, SQLSMALLINT *ty)
{
  const target *t = p->t;
  if (p->spec->mode != MODE_SCD2) {
    buf_adds(b, "1 = 1");  /* upsert: every row is current */
    return 0;
  }
  if (t->ix[TC_CURRENT] >= 0 || !t->open_end[0]) {
    curpred(p, b, a, a);  /* (neither form reads a staged open end) */
    return 0;
  }
  buf_printf(b, "%s.%s = ?", a, tq(p, TC_VALID_TO));
  pd_text(v, t->open_end);
  *ty = SQL_VARCHAR;
  return 1;
}

/* The last truncate's valid_from text, into p->vf (the engine keeps
 * them by lmd). */
static const char *last_truncate(pushdown *p)
{
  target_ts_text(p->t, &p->e->truncs[p->e->ntrunc - 1].lmd, p->vf);
  return p->vf;
}

/* The stored column a truncate must come after to reach a key, as
 * scd_truncate's `from`: scd2, the current version's valid_from; upsert,
 * the stored lmd, NULL where the table does not hold it (every truncate
 * then reaches every row, as a stored row without an lmd). */
static const char *reach_col(const pushdown *p)
{
  if (p->spec->mode == MODE_SCD2)
    return tq(p, TC_VALID_FROM);
  return p->t->lmd >= 0 ? p->q[p->t->lmd] : NULL;
}

size_t reached_by_last(pushdown *p, dwl_buf *b, const char *a, dwl_value *v, SQLSMALLINT *ty)
{
  const char *col = reach_col(p);
  if (!col)
    return 0;
  if (p->spec->mode == MODE_SCD2)
    buf_printf(b, " AND %s.%s < ?", a, col);
  else
    buf_printf(b, " AND (%s.%s < ? OR %s.%s IS NULL)", a, col, a, col);
  pd_text(v, last_truncate(p));
  *ty = SQL_VARCHAR;
  return 1;
}

/* " FROM <table> d WHERE <current, live> [<partitions delivered>]": the
 * live current versions absence judges; the open end bound into *v. */
static size_t judged(pushdown *p, dwl_buf *b, dwl_value *v, SQLSMALLINT *ty)
{
  buf_printf(b, " FROM %s d WHERE ", p->t->table_q);
  size_t np = cur_bound(p, b, "d", v, ty);
  live_pred(p, b, "d");
  in_partitions(p, b, "d");  /* load.partition: its base is the partitions delivered */
  return np;
}

/* "SELECT <select> FROM <table> d WHERE ...": with truncates, the live
 * keys a truncate reaches that the delta has no row of (started before
 * the last truncate AND NOT EXISTS (<staged>), nor among the keys the
 * memory engine took, dwl_pd_h); the values bound into v[] (2 at most),
 * their number returned. */
static size_t reached_keys(pushdown *p, dwl_buf *b, const char *select, dwl_value *v, SQLSMALLINT *ty)
{
  buf_printf(b, "SELECT %s", select);
  size_t np = judged(p, b, v, ty);
  np += reached_by_last(p, b, "d", &v[np], &ty[np]);
  buf_adds(b, " AND NOT EXISTS (SELECT 1 FROM dwl_pd_src s WHERE ");
  keyeq(p, b, "d", "s");
  buf_adds(b, ")");
  if (p->handed) {
    buf_adds(b, " AND NOT EXISTS (SELECT 1 FROM dwl_pd_h h WHERE ");
    keyeq(p, b, "d", "h");
    buf_adds(b, ")");
  }
  return np;
}

typedef struct count_ctx {
  long long v[3];
} count_ctx;

/* The first row's three counts (NULL: 0). */
static int on_count3(void *ud, const dwl_value *r, dwl_error *err)
{
  (void)err;
  count_ctx *c = ud;
  for (int i = 0; i < 3; i++)
    c->v[i] = r[i].is_null ? 0 : strtoll(r[i].data, NULL, 10);
  return 1;
}

/* The absent keys are staged once, with their current version's start
 * (and surrogate key, their order), into dwl_pd_abk: stage_absent reads
 * them back after the delta's changes, which touch only delivered keys.
 * The anti-join of every current version with dwl_pd_seen ran twice
 * before, for the count and for the keys: 1.4 s each at 1M keys on
 * MariaDB (bench/RESULTS.md); counting the current versions alone is a
 * plain scan. */
int absent_count(pushdown *p, long long *current, long long *absent, dwl_error *err)
{
  const target *t = p->t;
  dwl_buf b;
  buf_init(&b, 0);
  dwl_value v;
  SQLSMALLINT ty;
  temp_table(p, &b, "dwl_pd_abk", NULL);
  keys(p, &b, "d");
  buf_printf(&b, ", d.%s AS dwl_cvf", tq(p, TC_VALID_FROM));
  if (t->ix[TC_SK] >= 0)
    buf_printf(&b, ", d.%s AS dwl_sk", tq(p, TC_SK));
  size_t np = judged(p, &b, &v, &ty);
  buf_adds(&b, " AND NOT EXISTS (SELECT 1 FROM dwl_pd_seen s WHERE ");
  keyeq(p, &b, "d", "s");
  buf_adds(&b, ")");
  int rc = exec(p, &b, np ? &v : NULL, np ? &ty : NULL, np, err);
  *absent = rc == 0 ? count_of(p, &b, "dwl_pd_abk", err) : -1;
  rc = *absent < 0 ? -1 : 0;
  count_ctx c = {{0, 0, 0}};
  if (rc == 0) {
    buf_adds(&b, "SELECT COUNT(*), 0, 0");
    np = judged(p, &b, &v, &ty);
    rc = each_row(p, &b, np ? &v : NULL, np ? &ty : NULL, np, on_count3, &c, err);
  }
  *current = c.v[0];
  buf_free(&b);
  return rc;
}

typedef struct ab_ctx {
  pushdown *p;
  writer_stage *st;
  dwl_value *row; /* the key, then dwl_cvf, dwl_oe, dwl_at, dwl_vt, dwl_skt, dwl_n */
  long long n;
} ab_ctx;

/* One absent key's current version: when it is deleted, as
 * scd_delete_absent stamps it: the run's clock, but never before the
 * least step after the version's start. */
static int on_absent(void *ud, const dwl_value *r, dwl_error *err)
{
  ab_ctx *a = ud;
  pushdown *p = a->p;
  const scd_cols *c = &p->e->cols;
  size_t nk = c->nkey;
  dwl_ts vf;
  if (r[nk].is_null || target_ts_parse(p->t, r[nk].data, r[nk].len, &vf) != 0)
    return err_set(err, DWL_EXIT_FAILED, "pushdown into %s: cannot read the valid_from '%.*s' of a current version",
                   p->spec->target_table, r[nk].is_null ? 0 : (int)r[nk].len, r[nk].is_null ? "" : r[nk].data);
  dwl_ts at = p->e->run_ts;
  /* a truncate's deletion: at the first truncate after the version's
   * start (reached_keys read only versions one reaches) */
  for (size_t i = 0; i < p->e->ntrunc; i++)
    if (p->e->truncs[i].lmd.us > vf.us) {
      at = p->e->truncs[i].lmd;
      break;
    }
  int64_t gap = ver_close_gap(p->spec), step = gap > p->e->tick_us ? gap : p->e->tick_us;
  if (at.us < vf.us + step)
    at.us = vf.us + step;
  dwl_ts vt = scd_close_at(p->spec, at);
  char att[32], vtt[32], skt[65], num[24];
  target_ts_text(p->t, &at, att);
  target_ts_text(p->t, &vt, vtt);
  snprintf(num, sizeof num, "%lld", ++a->n);
  dwl_value *x = &a->row[nk];
  for (size_t k = 0; k < nk; k++) {
    a->row[k] = r[k];
    p->nullkeys |= r[k].is_null;  /* (the joins with dwl_pd_ab must be NULL-safe) */
  }
  x[0] = r[nk];
  pd_text(&x[1], p->t->open_end[0] ? p->t->open_end : NULL);
  pd_text(&x[2], att);
  pd_text(&x[3], vtt);
  pd_text(&x[4], NULL);
  pd_text(&x[5], num);
  if (is_tomb(p) && p->t->ix[TC_SK] >= 0 && p->spec->sk_strategy == SK_HASH) {
    if (hash_key(p, r, att, 1, skt, err) != 0)
      return -1;
    pd_text(&x[4], skt);
  }
  return writer_stage_add(a->st, a->row, err);
}

/* Stages the absent keys (dwl_pd_ab), in the order the tombstones'
 * sequence surrogate keys follow: their current versions'. */
static int stage_absent(pushdown *p, dwl_buf *b, ab_ctx *a, dwl_error *err)
{
  const scd_cols *c = &p->e->cols;
  size_t nk = c->nkey, n = nk + 6;
  static const char *const xn[] = {"dwl_cvf", "dwl_oe", "dwl_at", "dwl_vt", "dwl_skt", "dwl_n"};
  static const int xd[] = {X_VF, X_OE, X_VF, X_VT, X_SKT, X_SEQ};
  char **names = calloc(n, sizeof *names);
  dwl_column *decl = calloc(n, sizeof *decl);
  const char **coll = calloc(n, sizeof *coll);
  a->row = calloc(n, sizeof *a->row);
  int rc = names && decl && coll && a->row ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    names[i] = i < nk ? (char *)p->q[c->key[i]] : (char *)xn[i - nk];
    decl[i] = i < nk ? p->decl[c->key[i]] : p->decl[p->ncols + (size_t)xd[i - nk]];
    coll[i] = i < nk ? p->coll[c->key[i]] : NULL;
  }
  if (rc == 0)
    rc = writer_stage_open(p->w, "dwl_pd_ab", names, decl, coll, n, &a->st, err);
  dwl_buf sel;
  buf_init(&sel, 0);
  keys(p, &sel, "d");
  dwl_value v[2];
  SQLSMALLINT ty[2];
  size_t np = 0;
  if (p->e->ntrunc) {
    buf_printf(&sel, ", d.%s", tq(p, TC_VALID_FROM));
    np = rc == 0 && sel.data ? reached_keys(p, b, sel.data, v, ty) : 0;
  } else {
    /* (absence: the keys absent_count staged) */
    buf_printf(b, "SELECT %s, d.dwl_cvf FROM dwl_pd_abk d", sel.data ? sel.data : "");
  }
  if (rc == 0 && p->t->ix[TC_SK] >= 0)
    buf_printf(b, " ORDER BY d.%s", p->e->ntrunc ? tq(p, TC_SK) : "dwl_sk");
  if (rc == 0)
    rc = sel.data ? each_row(p, b, np ? v : NULL, np ? ty : NULL, np, on_absent, a, err)
                  : err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0)
    rc = writer_stage_flush(a->st, err);
  if (rc == 0)
    rc = analyze(p, "dwl_pd_ab", err);
  buf_reset(b);
  buf_free(&sel);
  free(names);
  free(decl);
  free(coll);
  return rc;
}

/* The tombstones of the absent keys: their current versions' values, from
 * the deletion on, current and deleted (before those are closed). */
static int insert_tombstones(pushdown *p, dwl_buf *b, dwl_error *err)
{
  const target *t = p->t;
  insert_params ip;
  if (insert_head(p, b, &ip, err) != 0)
    return -1;
  int seq = ip.seq;
  for (size_t i = 0; i < t->ncols; i++) {
    const tcol *tc = &t->cols[i];
    if (i)
      buf_adds(b, ", ");
    switch (tc->role) {
    case TC_SK: buf_adds(b, seq ? "? + s.dwl_n" : "s.dwl_skt"); break;
    case TC_VALID_FROM: buf_adds(b, "s.dwl_at"); break;
    case TC_RUN_ID: buf_adds(b, "?"); break;
    case TC_CURRENT:
    case TC_DELETED: buf_adds(b, t->d->true_lit); break;
    default: buf_printf(b, "d.%s", tc->q);  /* the open end too */
    }
  }
  buf_printf(b, " FROM dwl_pd_ab s JOIN %s d ON ", t->table_q);
  keyeq(p, b, "d", "s");
  buf_printf(b, " AND d.%s = s.dwl_cvf AND ", tq(p, TC_VALID_FROM));
  curpred(p, b, "d", "s");
  return apply(p, b, ip.n ? ip.param : NULL, ip.n ? ip.type : NULL, ip.n, err);
}

/* The live keys the extract no longer has (p->nabsent, counted before the
 * delta's changes by absent_count and judged by the guard), deleted as the
 * memory engine deletes them: closed at the run's clock, with the deleted
 * flag (expire) or a tombstone from then on. */
int absent_delete(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  const target *t = p->t;
  if (p->nabsent == 0 || !t->exists)
    return 0;
  ab_ctx a = {.p = p};
  int rc = stage_absent(p, b, &a, err);
  if (rc == 0 && is_tomb(p))
    rc = insert_tombstones(p, b, err);
  size_t tc[3];
  const char *ex[3];
  size_t ns = 0;
  tc[ns] = (size_t)t->ix[TC_VALID_TO];
  ex[ns++] = "s.dwl_vt";
  if (t->ix[TC_CURRENT] >= 0) {
    tc[ns] = (size_t)t->ix[TC_CURRENT];
    ex[ns++] = t->d->false_lit;
  }
  if (t->ix[TC_DELETED] >= 0) {
    tc[ns] = (size_t)t->ix[TC_DELETED];
    ex[ns++] = is_tomb(p) ? t->d->false_lit : t->d->true_lit;
  }
  /* Closing a version leaves its run id, as apply_expires. */
  if (rc == 0)
    rc = update_from(p, b, "dwl_pd_ab", tc, ex, ns, &(pd_match){.version = 1}, 1, NULL, NULL, 0, err);
  if (rc == 0) {
    counts->deleted += a.n;
    if (is_tomb(p))
      counts->inserted += a.n;
  }
  writer_stage_free(a.st);
  free(a.row);
  return rc;
}

/* ---- truncates ----------------------------------------------------------- */

int truncate_count(pushdown *p, long long *current, long long *reached, dwl_error *err)
{
  *current = *reached = p->nabsent = 0;
  if (p->e->ntrunc == 0 || !p->t->exists)
    return 0;
  if (writer_stage_flush(p->st, err) != 0 || index_keys(p, "dwl_pd_src", err) != 0)
    return -1;
  dwl_buf b;
  buf_init(&b, 0);
  dwl_value v[3];
  SQLSMALLINT ty[3];
  size_t np = 0;
  buf_adds(&b, "SELECT COUNT(*), SUM(CASE WHEN 1 = 1");
  np += reached_by_last(p, &b, "d", &v[np], &ty[np]);
  buf_adds(&b, " THEN 1 ELSE 0 END), SUM(CASE WHEN NOT EXISTS (SELECT 1 FROM dwl_pd_src s WHERE ");
  keyeq(p, &b, "d", "s");
  buf_adds(&b, ")");
  np += reached_by_last(p, &b, "d", &v[np], &ty[np]);
  buf_printf(&b, " THEN 1 ELSE 0 END) FROM %s d WHERE ", p->t->table_q);
  np += cur_bound(p, &b, "d", &v[np], &ty[np]);
  live_pred(p, &b, "d");
  count_ctx c = {{0, 0, 0}};
  int rc = each_row(p, &b, v, ty, np, on_count3, &c, err);
  buf_free(&b);
  *current = c.v[0];
  *reached = p->ntruncated = c.v[1];
  p->nabsent = c.v[2];
  return rc;
}

/* The truncates, staged: their lmd, its texts, their lines. */
static int stage_truncs(pushdown *p, dwl_error *err)
{
  static char *const names[] = {"dwl_t", "dwl_vf", "dwl_vt", "dwl_origin", "dwl_donly"};
  static const int xd[] = {X_T, X_VF, X_VT, X_ORIGIN, X_DONLY};
  dwl_column decl[5];
  for (int i = 0; i < 5; i++)
    decl[i] = p->decl[p->ncols + (size_t)xd[i]];
  writer_stage *st;
  if (writer_stage_open(p->w, "dwl_pd_tr", names, decl, NULL, 5, &st, err) != 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < p->e->ntrunc; i++) {
    char t[24], vf[32], vt[32], o[24];
    dwl_ts end = scd_close_at(p->spec, p->e->truncs[i].lmd);
    snprintf(t, sizeof t, "%lld", (long long)p->e->truncs[i].lmd.us);
    snprintf(o, sizeof o, "%llu", (unsigned long long)p->e->truncs[i].origin);
    target_ts_text(p->t, &p->e->truncs[i].lmd, vf);
    target_ts_text(p->t, &end, vt);
    dwl_value row[5];
    pd_text(&row[0], t);
    pd_text(&row[1], vf);
    pd_text(&row[2], vt);
    pd_text(&row[3], o);
    pd_text(&row[4], p->e->truncs[i].lmd.date_only ? "1" : "0");
    rc = writer_stage_add(st, row, err);
  }
  if (rc == 0)
    rc = writer_stage_flush(st, err);
  writer_stage_free(st);
  return rc;
}

/* Each key of the delta gets a delete row at each truncate after its
 * history's end: its current version's start, or (none live) its first
 * row's lmd.  Its values are the key's first row's, which a delete in
 * delete_style: expire (truncates' only style) never writes; dwl_fpa
 * marks it, so a row of the key at the truncate's very lmd is a conflict,
 * as with the memory engine.  Numbered after every staged row. */
int truncate_rows(pushdown *p, dwl_buf *b, dwl_error *err)
{
  if (p->e->ntrunc == 0)
    return 0;
  if (stage_truncs(p, err) != 0)
    return -1;
  if (p->n == 0)
    return 0;
  temp_table(p, b, "dwl_pd_td", NULL);
  for (size_t i = 0; i < p->ncols; i++)
    buf_printf(b, "f.%s, ", p->q[i]);
  buf_printf(b, "%lld + ROW_NUMBER() OVER (ORDER BY f.dwl_seq, tr.dwl_t) AS dwl_seq, tr.dwl_origin AS dwl_origin, "
                "tr.dwl_t AS dwl_t, 1 AS dwl_del, f.dwl_fp2 AS dwl_fp2, f.dwl_fp1 AS dwl_fp1, 'truncate' AS dwl_fpa, "
                "tr.dwl_vf AS dwl_vf, tr.dwl_vt AS dwl_vt, f.dwl_oe AS dwl_oe, f.dwl_sk AS dwl_sk, f.dwl_skt AS "
                "dwl_skt, tr.dwl_donly AS dwl_donly, NULL AS dwl_ties",
             p->nseq);
  for (size_t k = 0; k < p->nhid; k++)
    buf_printf(b, ", f.%s", p->hname[k]);
  buf_adds(b, " FROM (SELECT ");
  staged_cols(p, b, "s");
  buf_adds(b, ", ROW_NUMBER()");
  over(p, b, "s", NULL, "s.dwl_t, s.dwl_seq");
  buf_adds(b, " AS dwl_rn, MIN(s.dwl_t) OVER (PARTITION BY ");
  keys(p, b, "s");
  buf_adds(b, ") AS dwl_mint FROM dwl_pd_src s) f CROSS JOIN dwl_pd_tr tr");
  join_current(p, b, "c", "f");
  const char *col = reach_col(p);
  buf_adds(b, " WHERE f.dwl_rn = 1 AND ((c.dwl_m IS NULL AND tr.dwl_t > f.dwl_mint) OR (c.dwl_m IS NOT NULL");
  if (col && p->spec->mode == MODE_SCD2)
    buf_printf(b, " AND tr.dwl_vf > c.%s", col);
  else if (col)
    buf_printf(b, " AND (tr.dwl_vf > c.%s OR c.%s IS NULL)", col, col);
  buf_adds(b, "))");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  long long n = count_of(p, b, "dwl_pd_td", err);
  if (n <= 0)
    return n < 0 ? -1 : 0;
  buf_adds(b, "INSERT INTO dwl_pd_src SELECT * FROM dwl_pd_td");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  p->n += n;
  p->nseq += n;
  return 0;
}
