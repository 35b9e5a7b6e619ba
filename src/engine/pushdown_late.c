/* Pushdown's late rows (load.late ignore and reject in scd2; every mode
 * of load.late in upsert, where the memory engine leaves them all out):
 * the staged rows dated before their key's stored history ends, set apart
 * into dwl_pd_l before anything else reads the delta, then counted or
 * handed to the run's rejects one by one, as late.c and scd.c do.  With
 * load.late: repair in scd2, every row of such a key goes to dwl_pd_l and
 * then to the memory engine, which repairs the key's history with late.c
 * itself (pushdown_take_late; run.c drives it).  With ignore and reject,
 * only keys with rows pushdown does not place (within a close step, at a
 * tombstone's instant) go so, through dwl_pd_h, and leave the stage.
 *
 * The memory engine classifies each late row on its own, before it drops
 * a key's identical duplicates or compares two rows at one instant (its
 * repair waits for the key's history; ignore and reject never compare the
 * late rows with one another), so dwl_pd_l is built from the staging table
 * itself and build_a reads only the rows it left. */
#include "pushdown_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "norm.h"

int pd_late_applies(const pushdown *p)
{
  if (!p->t->exists)
    return 0;
  if (p->spec->mode == MODE_UPSERT)
    return p->t->lmd >= 0;
  return p->spec->late != LATE_REPAIR || pd_repairs(p);
}

/* scd2, load.late: ignore or reject: a key with an event pushdown does
 * not place (pushdown_check.c: at its tombstone's instant, within a close
 * step of the version it closes; with a composite lmd, two rows at one
 * first value or a row at its current version's start) goes to the
 * memory engine whole, as under repair, its late rows with it; pushdown
 * sets the other keys' late rows apart itself.  Not with absence or
 * truncate rows (pd_hands_all).  With a composite lmd the keys with late
 * rows go too (pushdown_take_late): the memory engine orders them by
 * their tie-breakers against the history, which pushdown's set-apart
 * does not. */
static int pd_hands_within(const pushdown *p)
{
  const dwl_spec *s = p->spec;
  return p->t->exists && s->mode == MODE_SCD2 && s->late != LATE_REPAIR && s->deletes != DEL_ABSENT &&
         s->truncate_values.n == 0 && (ver_close_gap(s) > 0 || is_tomb(p) || s->lmd_ties.n > 0);
}

/* scd2: a staged row q before its key's stored history ends: its current
 * version's start, or the end of its last deleted version. */
static const char *late_test(const pushdown *p)
{
  return pd_may_be_gone(p) ? "q.dwl_vf < q.dwl_cvf OR q.dwl_vt < q.dwl_gvt" : "q.dwl_vf < q.dwl_cvf";
}

/* scd2, load.late: repair: the keys with late rows leave the delta whole
 * and the memory engine repairs their history (pushdown_take_late).  Not
 * with absence or truncate rows, whose steps read the stage: there
 * pd_hands_all takes the keys out of it.  ignore_null_updates' fill comes
 * after the hand-off and is per key: the memory engine fills the keys it
 * takes itself. */
int pd_repairs(const pushdown *p)
{
  const dwl_spec *s = p->spec;
  return p->t->exists && s->mode == MODE_SCD2 && s->late == LATE_REPAIR && s->deletes != DEL_ABSENT &&
         s->truncate_values.n == 0;
}

/* With absence or truncate rows the keys go under every load.late, and
 * leave the stage (dwl_pd_h) as pd_hands_within's: what pushdown's steps
 * for those do afterwards then never reads them (the moves of deleted
 * keys' rows; the truncates' delete rows, which the memory engine gives
 * them itself, scd_truncate_delta); the keys pushdown judges absent, or
 * reached by a truncate without a row in the delta, exclude them
 * (dwl_pd_seen keeps every source key; reached_keys reads dwl_pd_h).  The
 * memory engine classifies their late rows itself: a late row dated
 * before an earlier deletion by absence is ignored (late.c), under reject
 * too, which pushdown's own set-apart would not know.  The rows not past
 * the checkpoint that revive a key join the stage first (absent_revive),
 * so that a key goes whole. */
int pd_hands_all(const pushdown *p)
{
  const dwl_spec *s = p->spec;
  return p->t->exists && s->mode == MODE_SCD2 && (s->deletes == DEL_ABSENT || s->truncate_values.n > 0);
}

/* " v.valid_from <= q.dwl_vf AND (<v current> OR v.valid_to > q.dwl_vt)":
 * version v is in effect at q's lmd (valid_to after q's close-rule end is
 * the same as its end instant after q's lmd; see check_gone). */
static void covers(const pushdown *p, dwl_buf *b)
{
  buf_printf(b, " AND v.%s <= q.dwl_vf AND (", tq(p, TC_VALID_FROM));
  curpred(p, b, "v", "q");
  buf_printf(b, " OR v.%s > q.dwl_vt)", tq(p, TC_VALID_TO));
  if (is_tomb(p) && p->t->ix[TC_DELETED] >= 0)
    buf_printf(b, " AND NOT (v.%s = %s)", tq(p, TC_DELETED), p->t->d->true_lit);
}

/* late_noop (late.c) in SQL: a row the stored history already says, which
 * counts as unchanged: a version in effect at its lmd with its type 2
 * values, or, for a delete, none in effect.  The versions in effect at
 * the staged rows' lmds are found by one join (noop_join), not a lookup
 * per row: the key index holds current versions only (on SQLite a partial
 * index), so a lookup per row scanned the dimension (a reread of 40,000
 * late rows on 60,000 versions took 150 s). */
static void noop_case(dwl_buf *b)
{
  buf_adds(b, "CASE WHEN q.dwl_del = 0 AND nv.dwl_veq = 1 THEN 1 WHEN q.dwl_del = 1 AND nv.dwl_seq IS NULL THEN 1 "
              "ELSE 0 END");
}

/* " LEFT JOIN (...) nv ON nv.dwl_seq = q.dwl_seq": per staged row with a
 * version in effect at its lmd, whether one has its type 2 values. */
static void noop_join(const pushdown *p, dwl_buf *b)
{
  const scd_cols *c = &p->e->cols;
  buf_adds(b, " LEFT JOIN (SELECT q.dwl_seq, MAX(CASE WHEN ");
  alleq(p, b, "v", "q", c->t2, c->nt2);
  buf_adds(b, " = 1 THEN 1 ELSE 0 END) AS dwl_veq FROM dwl_pd_src q JOIN ");
  table_rows(p, b, NULL);
  buf_adds(b, " v ON ");
  keyeq(p, b, "v", "q");
  covers(p, b);
  buf_adds(b, " GROUP BY q.dwl_seq) nv ON nv.dwl_seq = q.dwl_seq");
}

/* (The end of such a key is its last deleted version's valid_to, as the
 * memory engine reads it, target_scan_deleted.) */
int pd_may_be_gone(const pushdown *p)
{
  return p->spec->mode == MODE_SCD2 && p->spec->deletes != DEL_NONE && !is_tomb(p);
}

/* " FROM table g WHERE <g is a deleted version>": a key's deleted
 * versions, as target_scan_deleted reads them.  The open end, where it
 * marks the current version, is bound into *v. */
static size_t gone_from(const pushdown *p, dwl_buf *b, dwl_value *v, SQLSMALLINT *ty)
{
  const target *t = p->t;
  buf_printf(b, " FROM %s g WHERE ", t->table_q);
  size_t np = 0;
  if (t->ix[TC_CURRENT] >= 0 || !t->open_end[0]) {
    buf_adds(b, "NOT (");
    curpred(p, b, "g", "g");  /* (neither form reads a staged open end) */
    buf_adds(b, ")");
  } else {
    buf_printf(b, "g.%s <> ?", tq(p, TC_VALID_TO));
    pd_text(v, t->open_end);
    *ty = SQL_VARCHAR;
    np = 1;
  }
  if (t->ix[TC_DELETED] >= 0)
    buf_printf(b, " AND g.%s = %s", tq(p, TC_DELETED), t->d->true_lit);
  return np;
}

/* The end of a staged row's key where it has no current version (only a
 * key without one can have been deleted), else NULL.  Where the key index
 * holds every version (p->probe_gone), probed for those rows alone;
 * otherwise from gone_join's group, a lookup per staged row, which a key
 * index of current versions only cannot serve, scanned the dimension for
 * each new key (27 s for 5,000 new keys into 100,000 on SQLite).  The
 * group reads every deleted version of the dimension: 0.36 s of a 2 s
 * run of 30,000 rows into 1M keys on MariaDB (bench/absent.sh column),
 * where the probes read the new keys' few index entries. */
static size_t gone_end(const pushdown *p, dwl_buf *b, dwl_value *v, SQLSMALLINT *ty)
{
  if (!pd_may_be_gone(p)) {
    buf_adds(b, "NULL");
    return 0;
  }
  if (!p->probe_gone) {
    buf_adds(b, "CASE WHEN c.dwl_m IS NULL THEN gx.dwl_gmax END");
    return 0;
  }
  buf_printf(b, "CASE WHEN c.dwl_m IS NULL THEN (SELECT MAX(g.%s)", tq(p, TC_VALID_TO));
  size_t np = gone_from(p, b, v, ty);
  buf_adds(b, " AND ");
  keyeq(p, b, "g", "s");
  buf_adds(b, ") END");
  return np;
}

/* " LEFT JOIN (...) gx ON <s's key>": each key's last deleted version's
 * valid_to (gone_end), grouped once. */
static size_t gone_join(const pushdown *p, dwl_buf *b, dwl_value *v, SQLSMALLINT *ty)
{
  if (!pd_may_be_gone(p) || p->probe_gone)
    return 0;
  buf_adds(b, " LEFT JOIN (SELECT ");
  keys(p, b, "g");
  buf_printf(b, ", MAX(g.%s) AS dwl_gmax", tq(p, TC_VALID_TO));
  size_t np = gone_from(p, b, v, ty);
  buf_adds(b, " GROUP BY ");
  keys(p, b, "g");
  buf_adds(b, ") gx ON ");
  keyeq(p, b, "gx", "s");
  return np;
}

/* load.late: repair: a key goes to the memory engine when one of its rows
 * is late (`late`: before its stored history ends, the memory engine's
 * own test, defer_late), and also where pushdown would refuse what the
 * memory engine does (pushdown_check.c): a row at its tombstone's instant
 * or within the close step after its current version's start or its own
 * previous row (VW_MOVE, VW_REPLACE).  The memory engine walks those
 * without waiting for their history. */
static void repair_test(const pushdown *p, dwl_buf *b, const char *late)
{
  int64_t gap = ver_close_gap(p->spec);
  if (!late) {
    /* ignore, reject (pd_hands_within): those events only; a late row is
     * pushdown's to set apart */
    buf_adds(b, "(q.dwl_ctomb = 1 AND q.dwl_vf = q.dwl_cvf)");
    if (gap > 0)
      buf_printf(b, " OR (q.dwl_vf >= q.dwl_cvf AND q.dwl_vt < q.dwl_cvf) OR q.dwl_t - q.dwl_plt < %" PRId64, gap);
    return;
  }
  buf_adds(b, late);
  /* (with absence every tombstone is a deletion by absence, whose rows
   * absent_moves moves as skip_before_deletion does: none is late) */
  if (p->spec->deletes != DEL_ABSENT)
    buf_adds(b, " OR (q.dwl_ctomb = 1 AND q.dwl_vf <= q.dwl_cvf)");
  if (gap > 0)
    buf_printf(b, " OR q.dwl_vt < q.dwl_cvf OR q.dwl_t - q.dwl_plt < %" PRId64, gap);
  /* A composite lmd: two rows at one instant follow their tie-breakers,
   * which pushdown's SQL does not order by, and a row at the instant the
   * current version started replaces it (a later tie-breaker: it is past
   * the checkpoint); the memory engine does both. */
  if (p->spec->lmd_ties.n > 0)
    buf_adds(b, " OR q.dwl_t = q.dwl_plt OR q.dwl_vf = q.dwl_cvf");
}

/* The first row's count into *(long long *)ud. */
static int count_one(void *ud, const dwl_value *r, dwl_error *err)
{
  (void)err;
  *(long long *)ud = r[0].is_null ? 0 : strtoll(r[0].data, NULL, 10);
  return 1;
}

/* "SELECT <s's columns>, ... FROM dwl_pd_src s LEFT JOIN <current> ...":
 * each staged row with its current version's start (dwl_cvf), its key's
 * end of a deletion (dwl_gvt) and, for repair, its previous row's lmd and
 * whether the current version is a tombstone.  narrow: the key and what
 * repair_test reads only (no dwl_kmin).  The values it binds go to *gv. */
static size_t late_rows(const pushdown *p, dwl_buf *b, int repair, int narrow, dwl_value *gv, SQLSMALLINT *gty)
{
  int scd2 = p->spec->mode == MODE_SCD2;
  buf_adds(b, "SELECT ");
  if (narrow) {
    keys(p, b, "s");
    buf_adds(b, ", s.dwl_t, s.dwl_vf, s.dwl_vt, ");
  } else {
    staged_cols(p, b, "s");
    buf_adds(b, ", MIN(s.dwl_seq)");
    over(p, b, "s", NULL, "s.dwl_seq");
    /* the key's first row in the delta: the memory engine's order of keys */
    buf_adds(b, " AS dwl_kmin, ");
  }
  if (repair) {
    /* (repair_test reads the previous row's lmd only with a close step
     * or a composite lmd: otherwise no window, and no sort, for it) */
    if (ver_close_gap(p->spec) > 0 || p->spec->lmd_ties.n > 0) {
      buf_adds(b, "LAG(s.dwl_t)");
      over(p, b, "s", NULL, "s.dwl_t, s.dwl_seq");
      buf_adds(b, " AS dwl_plt, ");
    } else {
      buf_adds(b, "NULL AS dwl_plt, ");
    }
    if (is_tomb(p) && p->t->ix[TC_DELETED] >= 0)
      buf_printf(b, "CASE WHEN c.%s = %s THEN 1 ELSE 0 END", tq(p, TC_DELETED), p->t->d->true_lit);
    else
      buf_adds(b, "0");
    buf_adds(b, " AS dwl_ctomb, ");
  }
  size_t np = 0;
  if (scd2) {
    buf_printf(b, "c.%s AS dwl_cvf, ", tq(p, TC_VALID_FROM));
    np = gone_end(p, b, gv, gty);
  } else {
    buf_printf(b, "c.%s AS dwl_cvf, NULL", p->q[p->t->lmd]);
  }
  buf_adds(b, " AS dwl_gvt FROM dwl_pd_src s");
  join_current(p, b, "c", "s");
  return scd2 ? np + gone_join(p, b, gv, gty) : 0;
}

/* repair: whether any key is to go to the memory engine, from narrow
 * rows (most runs have none: then dwl_pd_l is not built at all, which
 * with the whole rows cost a run of 10k rows into 100k keys a quarter of
 * its time).  1 yes, 0 no, -1 error. */
static int any_to_repair(pushdown *p, dwl_buf *b, const char *test, dwl_error *err)
{
  dwl_value gv;
  SQLSMALLINT gty;
  buf_adds(b, "SELECT COUNT(*) FROM (");
  size_t np = late_rows(p, b, 1, 1, &gv, &gty);
  buf_printf(b, ") q WHERE %s", test);
  long long n = 0;
  int rc = each_row(p, b, np ? &gv : NULL, np ? &gty : NULL, np, count_one, &n, err);
  return rc < 0 ? -1 : n > 0;
}

/* Temporary table `name` (indexed by dwl_seq: build_a and the fill look
 * rows up by it) of every staged row of the keys repair_test(late) takes,
 * after a narrow count says there are any.  1 built, 0 none, -1 error. */
static int hand_table(pushdown *p, dwl_buf *b, const char *name, const char *late, dwl_error *err)
{
  dwl_buf take;
  buf_init(&take, 0);
  repair_test(p, &take, late);
  int any = take.data ? any_to_repair(p, b, take.data, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (any > 0) {
    temp_table(p, b, name, "dwl_seq");
    buf_adds(b, "q.*, 0 AS dwl_noop FROM (SELECT q.*, MAX(CASE WHEN ");
    buf_taint(b, &take);
    buf_adds(b, take.data ? take.data : "");
    buf_adds(b, " THEN 1 ELSE 0 END) OVER (PARTITION BY ");
    keys(p, b, "q");
    buf_adds(b, ") AS dwl_lk FROM (");
    dwl_value gv;
    SQLSMALLINT gty;
    size_t np = late_rows(p, b, 1, 0, &gv, &gty);
    buf_adds(b, ") q) q WHERE q.dwl_lk = 1");
    any = exec(p, b, np ? &gv : NULL, np ? &gty : NULL, np, err) != 0 ? -1 : 1;
  }
  buf_free(&take);
  return any;
}

int build_late(pushdown *p, dwl_buf *b, dwl_error *err)
{
  int scd2 = p->spec->mode == MODE_SCD2;
  int repair = scd2 && pd_repairs(p);
  /* (scd2: the late rows; upsert: the row older than the stored one) */
  const char *late = scd2 ? late_test(p) : NULL;
  if (p->late_taken)
    return 0;  /* (pushdown_take_late built it) */
  if (repair) {
    int any = hand_table(p, b, "dwl_pd_l", late, err);
    if (any <= 0) {
      p->nlate = 0;
      return any;
    }
    p->nlate = count_of(p, b, "dwl_pd_l", err);
    return p->nlate < 0 ? -1 : 0;
  }
  temp_table(p, b, "dwl_pd_l", "dwl_seq");  /* (build_a and the fill look rows up by dwl_seq) */
  buf_adds(b, "q.*, ");
  if (scd2)
    noop_case(b);
  else
    buf_adds(b, "0");
  buf_adds(b, " AS dwl_noop FROM (");
  dwl_value gv;
  SQLSMALLINT gty;
  size_t np = late_rows(p, b, 0, 0, &gv, &gty);
  if (scd2) {
    buf_adds(b, ") q");
    noop_join(p, b);
    buf_printf(b, " WHERE %s", late);
  } else {
    buf_printf(b, ") q WHERE q.%s < q.dwl_cvf", p->q[p->t->lmd]);
  }
  if (exec(p, b, np ? &gv : NULL, np ? &gty : NULL, np, err) != 0)
    return -1;
  p->nlate = count_of(p, b, "dwl_pd_l", err);
  return p->nlate < 0 ? -1 : 0;
}

/* The instant the late row's key history ends, from dwl_cvf or dwl_gvt. */
static int64_t history_end_of(const pushdown *p, const dwl_value *cvf, const dwl_value *gvt)
{
  dwl_ts at = {0};
  if (!cvf->is_null && target_ts_parse(p->t, cvf->data, cvf->len, &at) == 0)
    return at.us;
  if (!gvt->is_null && target_ts_parse(p->t, gvt->data, gvt->len, &at) == 0)
    return ver_end_instant(p->spec, at.us);
  return 0;
}

/* A fetched integer (not NUL-terminated). */
static unsigned long long number(const dwl_value *v)
{
  char s[32];
  snprintf(s, sizeof s, "%.*s", v->is_null ? 0 : (int)v->len, v->is_null ? "" : v->data);
  return (unsigned long long)strtoll(s, NULL, 10);
}

/* Column i of a fetched late row as the memory engine holds it: the
 * canonical text of its staged type (norm.h), which the warehouse's own
 * text may not be (MariaDB prints a timestamp with six decimals).  That is
 * the source's text unless the source gave text for a column the table
 * holds in another type (the stage takes the table's: tcol_stage_decl):
 * then the value is written in that type's canonical text. */
static int source_value(const pushdown *p, const dwl_value *r, size_t i, dwl_buf *scratch, dwl_value *out,
                        dwl_error *err)
{
  const char *why = NULL;
  /* (a column the table does not hold is staged after the NX columns) */
  const dwl_value *v = i < p->ncols ? &r[i] : &r[NX + i];
  *out = (dwl_value){.is_null = 1};
  if (v->is_null)
    return 0;
  *out = *v;
  dwl_column decl = p->e->srccols[i];
  for (size_t k = 0; k < p->t->ncols; k++)
    if (p->t->cols[k].role == TC_SRC && p->t->cols[k].src == i)
      decl = tcol_stage_decl(&p->t->cols[k]);
  if (norm_stored_col(&decl, v->data, v->len, scratch, &out->data, &out->len, &why) != 0)
    return err_set(err, DWL_EXIT_FAILED, "pushdown into %s: a late row's %s reads back as '%.*s': %s",
                   p->spec->target_table, decl.name, (int)v->len, v->data, why);
  return 0;
}

/* A composite lmd's tie-breakers as staged (staged_row: "n:mask:t0:..."),
 * into lmd; 0, or -1 when the text is not that. */
static int ties_of(const dwl_value *v, dwl_ts *lmd)
{
  if (v->is_null)
    return 0;
  char s[96];
  snprintf(s, sizeof s, "%.*s", (int)v->len, v->data);
  char *p = s, *end;
  long n = strtol(p, &end, 10);
  if (end == p || *end != ':' || n < 1 || n > DWL_TS_TIES)
    return -1;
  unsigned long mask = strtoul(end + 1, &end, 10);
  for (long i = 0; i < n; i++) {
    if (*end != ':')
      return -1;
    p = end + 1;
    lmd->tie[i] = strtoll(p, &end, 10);
    if (end == p)
      return -1;
  }
  if (*end)
    return -1;
  lmd->nties = (int)n;
  lmd->tie_time = (unsigned)mask;
  return 0;
}

/* A fetched staged row (staged_cols) as the engine holds it: its values
 * (row, e->ncols of them, scratch space in norm), lmd and source line. */
static int engine_row(const pushdown *p, const dwl_value *r, dwl_value *row, dwl_buf *norm, dwl_ts *lmd,
                      uint64_t *origin, dwl_error *err)
{
  const dwl_value *x = &r[p->ncols];
  for (size_t i = 0; i < p->e->ncols; i++)
    if (source_value(p, r, i, &norm[i], &row[i], err) != 0)
      return -1;
  *lmd = (dwl_ts){.us = (int64_t)number(&x[X_T]), .date_only = number(&x[X_DONLY]) == 1};
  *origin = number(&x[X_ORIGIN]);
  return ties_of(&x[X_TIES], lmd) == 0
           ? 0
           : err_set(err, DWL_EXIT_FAILED, "pushdown into %s: a staged row's tie-breakers read back as '%.*s'",
                     p->spec->target_table, (int)x[X_TIES].len, x[X_TIES].data);
}

/* A row and its scratch space for engine_row. */
typedef struct late_take {
  pushdown *p;
  dwl_value *row;
  dwl_buf *norm;
  size_t n;
  pushdown_row_fn fn;
  void *ud;
} late_take;

static int late_take_open(late_take *lt, pushdown *p, dwl_error *err)
{
  /* A rejected row is written with every column the engine holds, those
   * the table has not (columns.exclude) too. */
  size_t nc = p->ncols;
  *lt = (late_take){.p = p, .n = p->e->ncols > nc ? p->e->ncols : nc ? nc : 1};
  lt->row = calloc(lt->n, sizeof *lt->row);
  lt->norm = calloc(lt->n, sizeof *lt->norm);
  for (size_t i = 0; lt->norm && i < lt->n; i++)
    buf_init(&lt->norm[i], 0);
  return lt->row && lt->norm ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
}

static void late_take_close(late_take *lt)
{
  for (size_t i = 0; lt->norm && i < lt->n; i++)
    buf_free(&lt->norm[i]);
  free(lt->norm);
  free(lt->row);
}

static int take_one(void *ud, const dwl_value *r, dwl_error *err)
{
  late_take *lt = ud;
  dwl_ts lmd;
  uint64_t origin;
  if (engine_row(lt->p, r, lt->row, lt->norm, &lmd, &origin, err) != 0)
    return -1;
  return lt->fn(lt->ud, lt->row, origin, &lmd, err) != 0 ? -1 : 0;
}

/* Every row of temporary table `name` to fn, in source order. */
static int hand_over(pushdown *p, dwl_buf *b, const char *name, pushdown_row_fn fn, void *ud, dwl_error *err)
{
  late_take lt;
  int rc = late_take_open(&lt, p, err);
  lt.fn = fn;
  lt.ud = ud;
  buf_printf(b, "SELECT ");
  staged_cols(p, b, "l");
  buf_printf(b, " FROM %s l ORDER BY l.dwl_seq", name);
  if (rc == 0)
    rc = each_row(p, b, NULL, NULL, 0, take_one, &lt, err);
  late_take_close(&lt);
  return rc;
}

/* ignore, reject (pd_hands_within; late NULL, or the late rows' test
 * with a composite lmd) and absence or truncates (pd_hands_all; `late`
 * its keys' late rows): the keys handed over leave the stage, so that
 * nothing of pushdown's (its own late rows included) reads them; *n:
 * their rows. */
static int take_keys(pushdown *p, dwl_buf *b, const char *late, pushdown_row_fn fn, void *ud, long long *n,
                     dwl_error *err)
{
  int any = hand_table(p, b, "dwl_pd_h", late, err);
  if (any <= 0)
    return any;
  *n = count_of(p, b, "dwl_pd_h", err);
  if (*n < 0 || hand_over(p, b, "dwl_pd_h", fn, ud, err) != 0)
    return -1;
  p->t->d->delete_matching(b, "dwl_pd_src", "dwl_pd_h", "d.dwl_seq = s.dwl_seq");
  if (exec(p, b, NULL, NULL, 0, err) != 0)
    return -1;
  p->n -= *n;
  p->handed = 1;
  return 0;
}

int pushdown_take_late(pushdown *p, pushdown_row_fn fn, void *ud, long long *n, dwl_error *err)
{
  *n = 0;
  int within = pd_hands_within(p), all = pd_hands_all(p), absent = all && p->spec->deletes == DEL_ABSENT;
  if ((!pd_repairs(p) && !within && !all) || p->late_taken)
    return 0;
  if (writer_stage_flush(p->st, err) != 0)
    return -1;
  dwl_buf b;
  buf_init(&b, 0);
  int rc = absent ? absent_revive(p, &b, err) : 0;
  if (rc != 0 || p->n == 0) {
    buf_free(&b);
    return rc;
  }
  rc = decide_keyed(p, err);
  if (rc == 0 && (within || all)) {
    /* (absence: a late row is one of a live key, history_end's; a
     * deleted key's rows before its deletion are absent_moves'.  Within:
     * the keys with late rows go too with a composite lmd) */
    const char *late = absent                             ? "(q.dwl_ctomb = 0 AND q.dwl_vf < q.dwl_cvf)"
                       : all || p->spec->lmd_ties.n > 0 ? late_test(p)
                                                          : NULL;
    rc = take_keys(p, &b, late, fn, ud, n, err);
    buf_free(&b);
    return rc;
  }
  if (rc == 0)
    rc = build_late(p, &b, err);
  p->late_taken = rc == 0;
  if (rc == 0 && p->nlate > 0)
    rc = hand_over(p, &b, "dwl_pd_l", fn, ud, err);
  buf_free(&b);
  if (rc == 0)
    *n = p->nlate;
  return rc;
}

int apply_late(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err)
{
  if (p->nlate == 0)
    return 0;
  /* scd2 repair: the memory engine has the keys' rows */
  if (p->spec->mode == MODE_SCD2 && pd_repairs(p))
    return p->late_taken ? 0
                         : err_set(err, DWL_EXIT_FAILED, "pushdown into %s: keys with late rows were not handed to the "
                                                         "memory engine (pushdown_take_late)",
                                   p->spec->target_table);
  const scd_engine *e = p->e;
  late_take lt;
  int rc = late_take_open(&lt, p, err);
  buf_adds(b, "SELECT ");
  staged_cols(p, b, "l");
  buf_adds(b, ", l.dwl_noop, l.dwl_cvf, l.dwl_gvt FROM dwl_pd_l l ORDER BY l.dwl_kmin, l.dwl_t, l.dwl_seq");
  odbc_stmt *s = NULL;
  if (rc == 0)
    rc = b->data ? ostmt_prepare(p->t->c, b->data, &s, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_reset(b);
  if (rc == 0)
    rc = ostmt_execute(s, NULL, NULL, 0, err);
  int failed = 0;
  const dwl_value *r;
  while (rc == 0 && (rc = ostmt_fetch(s, &r, err)) == 1) {
    rc = 0;
    const dwl_value *y = &r[p->ncols + NX + p->nhid];  /* dwl_noop, dwl_cvf, dwl_gvt */
    if (y[0].len == 1 && y[0].data[0] == '1') {
      counts->unchanged++;
    } else if (p->spec->late == LATE_IGNORE) {
      counts->late_ignored++;
    } else if (p->spec->late == LATE_REPAIR) {
      counts->late_repaired++;  /* upsert: the stored row is the newer state */
    } else {
      dwl_ts lmd;
      uint64_t origin;
      if ((rc = engine_row(p, r, lt.row, lt.norm, &lmd, &origin, err)) != 0)
        break;
      /* scd2 counts every late row before the run fails; upsert stops at
       * the first (late.c, scd.c) */
      if (scd_reject_late(e, lt.row, origin, &lmd, history_end_of(p, &y[1], &y[2]), counts, err) != 0) {
        failed = 1;
        if (p->spec->mode == MODE_UPSERT)
          break;
      }
    }
  }
  ostmt_free(s);
  late_take_close(&lt);
  if (rc < 0)
    err_prefix(err, "pushdown into %s", p->spec->target_table);
  return rc < 0 || failed ? -1 : 0;
}
