/* Target writer: rows and engine operations to bound SQL statements.
 *
 * Inserts go out as multi-row INSERT ... VALUES statements.  Expires, type 1
 * updates, upsert updates, removals, and the history repair's reshapes and
 * drops of stored versions go one of two ways, by dialect:
 * per key through a prepared statement (SQLite, in-process and indexed), or
 * staged into temporary tables with the same batched inserts and applied
 * by one UPDATE ... FROM / UPDATE ... JOIN per kind at the end (PostgreSQL,
 * MariaDB), never one round trip per row.  Staged operations name the
 * version they change by key and valid_from, so inserts of new versions may
 * reach the table before them.
 *
 * This file opens and closes the writer and holds the calls of a run that
 * are not the engine's; batch.c, plan.c, slots.c, staged.c and sink.c
 * hold the rest (writer_impl.h). */
#include "writer.h"

#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "writer_impl.h"

SQLSMALLINT col_ptype(const writer *w, size_t tc)
{
  const tcol *c = &w->t->cols[tc];
  int ty = c->role == TC_CURRENT || c->role == TC_DELETED ? DWL_TYPE_BOOLEAN : c->decl.type;
  return w->t->d->param_type(ty);
}

/* Target column of source column `src`. */
size_t tcol_of(const writer *w, size_t src)
{
  return target_src_col(w->t, src);
}

int has_run_id(const writer *w)
{
  return w->t->ix[TC_RUN_ID] >= 0;
}

const dwl_value *writer_run_id(const writer *w)
{
  return &w->rid;
}

/* The writer's batches: in plan mode every row goes through bound
 * parameters, and is printed unless `print` is 0 (a stage the run reads
 * through is filled even then: a temporary table is no write). */
batch_opts writer_batch_opts(const writer *w, int print)
{
  batch_opts o = {.what = w->what, .rows_only = w->plan, .print = w->plan && print, .sqlout = w->sqlout};
  return o;
}

/* ---- setup ------------------------------------------------------------------ */

/* `same`: on the run's own connection, which sees what the run wrote */
static int load_max_sk(writer *w, int same, dwl_error *err)
{
  target *t = w->t;
  w->next_sk = 1;
  if (!t->exists || t->ix[TC_SK] < 0 || t->spec->sk_strategy != SK_SEQUENCE)
    return 0;
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT MAX(%s) FROM %s", t->cols[t->ix[TC_SK]].q, t->table_q);
  /* Where DDL commits by itself (MariaDB), a read inside the run's
   * transaction would hold a metadata lock on the table to its end, which
   * a widening's ALTER TABLE (schema.widen), on a connection of its own,
   * would wait for: read on another one (the job's lock keeps other runs
   * out, and the run's transaction reads committed rows alike). */
  odbc_conn *own = NULL;
  if (!same && !t->d->transactional_ddl && t->c->in_txn && target_open_conn(t, &own, err) != 0)
    return -1;
  odbc_stmt *st;
  if (ostmt_prepare(own ? own : t->c, sql, &st, err) != 0) {
    odbc_close(own);
    return -1;
  }
  const dwl_value *r;
  int rc = ostmt_execute(st, NULL, NULL, 0, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1) {
    rc = 0;
    if (!r[0].is_null) {
      char *end;
      long long v = strtoll(r[0].data, &end, 10);
      if (end == r[0].data || *end)
        rc = err_set(err, DWL_EXIT_FAILED, "table %s: surrogate key column %s holds '%s', not an integer",
                     t->spec->target_table, t->cols[t->ix[TC_SK]].name, r[0].data);
      w->next_sk = v + 1;
    }
  }
  ostmt_free(st);
  odbc_close(own);
  return rc < 0 ? -1 : 0;
}

int writer_open(target *t, const scd_cols *cols, int plan, FILE *sqlout, writer **out, dwl_error *err)
{
  *out = NULL;
  writer *w = calloc(1, sizeof *w);
  if (!w)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  w->t = t;
  w->cols = cols;
  w->plan = plan;
  w->sqlout = sqlout;
  char **main_cols = calloc(t->ncols, sizeof *main_cols);
  SQLSMALLINT *types = calloc(t->ncols, sizeof *types);
  w->row = calloc(t->ncols, sizeof *w->row);
  size_t wl = strlen(t->spec->target_table) + 32;
  w->what = malloc(wl);
  if (w->what)
    snprintf(w->what, wl, "inserting into %s", t->spec->target_table);
  int rc = main_cols && types && w->row && w->what ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
    main_cols[i] = t->cols[i].q;
    types[i] = col_ptype(w, i);
  }
  batch_opts o = writer_batch_opts(w, 1);
  /* Spider runs a parameter set (MariaDB's bulk command) one row at a
   * time, an INSERT per row sent to a shard; a multi-row INSERT ... VALUES
   * reaches each shard as a few bulk inserts (bench/RESULTS.md, "MariaDB
   * Spider"). */
  if (t->remote[0])
    o.rows_only = 1;
  if (rc == 0)
    rc = batch_open(t->c, t->d, t->table_q, main_cols, types, t->ncols, &o, &w->main, err);
  free(types);
  free(main_cols);
  /* Every row the run writes carries its id; plan mode has no run, and
   * shows where the id goes. */
  const char *rid = t->run_id ? t->run_id : "<run id>";
  w->rid = (dwl_value){.data = rid, .len = strlen(rid), .is_null = 0};
  if (rc == 0 && has_run_id(w))
    w->row[t->ix[TC_RUN_ID]] = w->rid;
  if (rc == 0 && cols) {
    w->from_t1 = calloc(t->ncols, 1);
    if (!w->from_t1)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t j = 0; rc == 0 && j < cols->nt1; j++)
      w->from_t1[tcol_of(w, cols->t1[j])] = 1;
  }
  if (rc == 0 && cols) {
    rc = build_slots(w, err);
    if (rc == 0)
      rc = build_stages(w, err);
  }
  /* Scratch for binding one row of a per-key statement or a stage (the
   * batches bind from scratch of their own). */
  if (rc == 0) {
    w->params = calloc(t->ncols + (cols ? cols->nkey : 0) + 8, sizeof *w->params);
    if (!w->params)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0)
    rc = load_max_sk(w, 0, err);
  if (rc != 0) {
    writer_free(w);
    return -1;
  }
  *out = w;
  return 0;
}

void writer_free(writer *w)
{
  if (!w)
    return;
  batch_free(w->main);
  for (int s = 0; s < NSTAGES; s++) {
    if (s < NSLOTS) {
      ostmt_free(w->slots[s]);
      free(w->slot_sql[s]);
      free(w->slot_types[s]);
    }
    stage_free(&w->stages[s]);
  }
  free(w->what);
  free(w->params);
  free(w->row);
  free(w->from_t1);
  free(w->rs_what);
  free(w);
}

long long writer_pending_statements(const writer *w)
{
  return stages_pending(w) + (batch_pending(w->main) > 0);
}

int writer_flush(writer *w, dwl_error *err)
{
  long long steps = 0;
  if (stages_apply(w, &steps, err) != 0)
    return -1;
  if (batch_pending(w->main) == 0)
    return 0;
  int rc = batch_flush(w->main, err);
  progress_step(++steps);
  return rc;
}

int writer_insert_source(writer *w, const dwl_value *row, dwl_error *err)
{
  for (size_t i = 0; i < w->t->ncols; i++)
    if (w->t->cols[i].role == TC_SRC)
      w->row[i] = row[w->t->cols[i].src];
  int rc = batch_add(w->main, w->row, err);
  w->t->touched |= batch_sent(w->main) > 0;
  return rc;
}

int writer_delete_all(writer *w, dwl_error *err)
{
  w->t->touched = 1;
  char sql[600];
  snprintf(sql, sizeof sql, "DELETE FROM %s", w->t->table_q);
  return run_sql(w, NULL, sql, NULL, NULL, 0, err);
}

int writer_reload_sk(writer *w, dwl_error *err)
{
  /* (after the run's own statements wrote: they hold the table's
   * metadata lock already, and another connection would not see them) */
  if (writer_flush(w, err) != 0)
    return -1;
  return w->plan ? 0 : load_max_sk(w, 1, err);
}

int writer_exec(writer *w, const char *sql, const dwl_value *params, const SQLSMALLINT *types, size_t n,
                dwl_error *err)
{
  return run_sql(w, NULL, sql, params, types, n, err);
}

