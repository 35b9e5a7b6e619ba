/* The pushdown engine: the memory engine's semantics (scd.c) as set-based
 * SQL over a staged delta, per dialect.  This file runs the statements and
 * orders the steps; pushdown_impl.h lists the files that hold them.
 *
 * Each source row past the checkpoint is staged with what only the client
 * can compute cheaply and identically: its source order and line, its lmd
 * in microseconds (the ordering key), whether it is a delete, XXH3
 * fingerprints of its type 2, type 1 and whole values (comparisons inside
 * the delta), its valid_from and its close-rule valid_to as text, the open
 * end, and SHA-256 surrogate keys (SQLite has no sha256()).  The warehouse
 * then, in temporary tables of delta size (most statements read one
 * each: MariaDB before 10.2 could not name a temporary table twice in a
 * statement, MDEV-5535; absent_moves's reads dwl_pd_src twice):
 *
 *   a  the staged rows with their predecessor by (key, lmd, order): a row
 *      with the same lmd as its predecessor is an identical duplicate
 *      (dropped) or a conflict (the run fails naming both lines);
 *   b  the remaining rows joined with the key's current version: whether
 *      it is live or a tombstone, its valid_from, and NULL-safe equality of
 *      the type 2 and type 1 columns with it (late rows fail here);
 *   d  the walk of scd_walk.c as window functions, its CASE expressions
 *      generated from the version rules (versions.h): the state before each row
 *      (none, live, tombstone) follows from its predecessor alone, so a row
 *      starts a version when the key is not live or its type 2 values
 *      differ from its predecessor's; a delete counts when the key is live;
 *      a running sum of these events numbers each version's span of rows;
 *      d holds narrow rows (the key, the order, what the rules compare), so
 *      that its windows and m's sort little;
 *   m  the events, each with the next event's close-rule time (LEAD) and
 *      the row whose type 1 values its version carries (the span's last
 *      row, or with type1_scope: all the key's last row);
 *   e  m with the rest of each event's row from d and b (the later steps
 *      join b again by dwl_seq for the type 1 values);
 *
 * and the changes are applied: type 1 overwrites of current versions, the
 * closing of current versions, the new versions (INSERT ... SELECT, with
 * sequence surrogate keys numbered in the memory engine's order), type 1
 * overwrites of every version.  upsert keeps the last row per key and
 * applies it with one MERGE (PostgreSQL) or DELETE/UPDATE/INSERT; with
 * deletes: absent every source key is staged too (dwl_pd_seen), and of
 * the rows not past the checkpoint, held in a local file, those of keys
 * without a live version (dwl_pd_old, pushdown_old.c): upsert deletes the rows of
 * the other keys and brings back the keys the table no longer has; scd2
 * (pushdown_absent.c) takes the old rows of keys without a live version
 * into the delta before a, moves rows dated before a key's deletion to
 * it, and closes the live keys the extract no longer has; truncate rows
 * (scd2) give the delta's keys delete rows and close the others
 * (pushdown_absent.c); load.ignore_null_updates (scd2) fills the staged
 * rows' NULLs before a (pushdown_fill.c).  With load.late: repair (scd2)
 * the keys with late rows leave the stage for the memory engine first
 * (pushdown_take_late, pushdown_late.c). */
#include "pushdown_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "progress.h"

/* Runs a statement that only builds temporary tables or reads; these run
 * in plan mode too. */
int exec(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n,
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

int apply(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n,
                 dwl_error *err)
{
  if (!b->data)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  double t0 = now_s();
  int rc = writer_exec(p->w, b->data, params, types, n, err);
  log_msg(LOG_DEBUG, "pushdown: %.3fs: %s", now_s() - t0, b->data);
  buf_reset(b);
  return rc;
}

/* Fresh statistics for a temporary table (PostgreSQL), so joins with the
 * dimension probe its key index instead of scanning it. */
int analyze(pushdown *p, const char *table, dwl_error *err)
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
int first_row(pushdown *p, dwl_buf *b, char out[][512], int *isnull, size_t n, dwl_error *err)
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

int each_row(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n, pd_row_fn fn,
             void *ud, dwl_error *err)
{
  odbc_stmt *s = NULL;
  int rc = b->data ? ostmt_prepare(p->t->c, b->data, &s, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  /* (timed as exec's statements are, the rows fetched included; the text
   * is kept only for the debug line) */
  char *sql = log_get_level() >= LOG_DEBUG && b->data ? strdup(b->data) : NULL;
  double t0 = now_s();
  long long rows = 0;
  buf_reset(b);
  if (rc == 0)
    rc = ostmt_execute(s, params, types, n, err);
  const dwl_value *r;
  while (rc == 0 && (rc = ostmt_fetch(s, &r, err)) == 1) {
    rows++;
    rc = fn(ud, r, err);
  }
  ostmt_free(s);
  log_msg(LOG_DEBUG, "pushdown: %.3fs: reads %lld row%s: %s", now_s() - t0, rows, rows == 1 ? "" : "s",
          sql ? sql : "");
  free(sql);
  if (rc < 0)
    err_prefix(err, "pushdown into %s", p->spec->target_table);
  return rc < 0 ? -1 : 0;
}

long long count_of(pushdown *p, dwl_buf *b, const char *table, dwl_error *err)
{
  char v[1][512];
  int isnull[1];
  buf_printf(b, "SELECT COUNT(*) FROM %s", table);
  int rc = first_row(p, b, v, isnull, 1, err);
  return rc < 0 ? -1 : rc == 0 ? 0 : strtoll(v[0], NULL, 10);
}

/* A delta that is a small share of the table reaches its versions
 * through the key index, row by row, where the dialect has keyed
 * statements (target_keyed).  Decided once, on the rows staged. */
int decide_keyed(pushdown *p, dwl_error *err)
{
  if (p->keyed_known)
    return 0;
  int keyed = target_keyed(p->t, p->n, err);
  int probe = keyed < 0 ? -1 : pd_may_be_gone(p) ? target_probes_history(p->t, p->n, err) : 0;
  if (probe < 0)
    return -1;
  p->keyed = keyed;
  p->probe_gone = probe;
  p->keyed_known = 1;
  if (keyed)
    log_msg(LOG_DEBUG, "pushdown: %lld staged rows against ~%lld in the table: keyed joins", p->n, p->t->counted);
  if (probe)
    log_msg(LOG_DEBUG, "pushdown: %lld staged rows against ~%lld in the table: deleted versions probed by key",
            p->n, p->t->counted);
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
   * after the new ones exist (they carry the same values anyway), which
   * versions staged before, while only the stored ones exist. */
  if (stage_type1(p, b, counts, &t1u, err) != 0)
    return -1;
  if (p->spec->type1_scope != T1_ALL && write_type1(p, b, err) != 0)
    return -1;
  if (apply_expires(p, b, err) != 0 || insert_versions(p, b, err) != 0)
    return -1;
  if (p->spec->type1_scope == T1_ALL) {
    if (write_type1(p, b, err) != 0)
      return -1;
    counts->unchanged -= t1u;
  }
  return 0;
}

int pushdown_apply(pushdown *p, int delete_absent, scd_counts *counts, dwl_error *err)
{
  if (writer_stage_flush(p->st, err) != 0)
    return -1;
  if (!delete_absent)
    p->nabsent = 0;
  /* scd2, deletes: absent: rows not past the checkpoint of keys deleted
   * (or unknown) join the delta first */
  if (p->spec->mode == MODE_SCD2 && p->old) {
    dwl_buf b;
    buf_init(&b, 0);
    int rc = absent_revive(p, &b, err);
    buf_free(&b);
    if (rc != 0)
      return -1;
    counts->revived += p->nrevived;
  }
  if (p->n == 0) {
    dwl_buf b;
    buf_init(&b, 0);
    int rc = apply_revive(p, &b, counts, err);
    if (rc == 0)
      rc = apply_absent(p, &b, counts, err);
    buf_free(&b);
    progress_step(PUSHDOWN_APPLY_STEPS);
    return rc;
  }
  if (decide_keyed(p, err) != 0)
    return -1;
  dwl_buf b;
  buf_init(&b, 0);
  double t0 = now_s();
  /* Each step (a statement or a few) one of PUSHDOWN_APPLY_STEPS. */
  int rc = p->spec->mode == MODE_SCD2 && p->old ? absent_moves(p, &b, counts, err) : 0;
  if (rc == 0)
    rc = truncate_rows(p, &b, err);
  /* (upsert's late rows neither take nor give values: set apart before
   * the fill; scd2's take part in it, as in the memory engine) */
  int late_first = p->spec->mode == MODE_UPSERT;
  if (rc == 0 && late_first && pd_late_applies(p))
    rc = build_late(p, &b, err);
  if (rc == 0)
    rc = fill_nulls_pd(p, &b, err);
  if (rc == 0 && !late_first && pd_late_applies(p))
    rc = build_late(p, &b, err);
  if (rc == 0)
    rc = build_a(p, &b, err);
  progress_step(1);
  /* (the statistics are for the planner's choice of join: a keyed one has
   * none to make) */
  if (rc == 0 && !p->keyed)
    rc = analyze(p, "dwl_pd_a", err);
  progress_step(2);
  if (rc == 0)
    rc = check_conflicts(p, &b, err);
  progress_step(3);
  if (rc == 0)
    rc = build_b(p, &b, err);
  if (rc == 0)
    rc = apply_late(p, &b, counts, err);
  progress_step(4);
  if (rc == 0)
    rc = p->spec->mode == MODE_SCD2 ? run_scd2(p, &b, counts, err) : run_upsert(p, &b, counts, err);
  progress_step(5);
  if (rc == 0)
    rc = apply_revive(p, &b, counts, err);
  progress_step(6);
  if (rc == 0)
    rc = apply_absent(p, &b, counts, err);
  progress_step(PUSHDOWN_APPLY_STEPS);
  buf_free(&b);
  /* A failed run counts, as the memory engine's, only scd2's rejected late
   * rows (it counts every one before failing; upsert stops at the first). */
  if (rc != 0)
    *counts = (scd_counts){.late_rejected = p->spec->mode == MODE_SCD2 ? counts->late_rejected : 0};
  if (rc == 0)
    log_msg(LOG_INFO, "pushdown: %lld rows staged; changes computed and applied in the warehouse in %.2fs", p->n,
            now_s() - t0);
  return rc;
}
