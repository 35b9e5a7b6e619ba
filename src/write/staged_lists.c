/* A distributed (Spider) table's staged operations (writer_impl.h),
 * applied by key lists instead of staged.c's joins.  Spider runs an
 * UPDATE ... JOIN against a head-side temporary table as a SELECT and an
 * UPDATE per staged row on the shard holding it (an expire of 6,000 rows:
 * 12,000 statements on the shards), where a single-table statement whose
 * condition and values it can print goes to each shard whole (a "direct
 * update"):
 *
 *   UPDATE t USE INDEX () SET c = CASE WHEN (k = ? AND vf = ?) THEN ? ...
 *     END, ... WHERE <current> AND ((k = ? AND vf = ?) OR ...)
 *   DELETE FROM t WHERE (k = ? AND vf = ?) OR ...
 *
 * up to LISTS_ROWS staged rows a statement, every value a bound parameter
 * (bench/RESULTS.md, "Key lists on Spider").  The rows are staged as for
 * a join, so the order of application across kinds stays stages_apply's,
 * and read back from the head's temporary table in pages by its serial
 * column: the client holds one page, never the whole stage.
 * writer_update_lists applies the same way the rows a caller (pushdown)
 * selects from temporary tables of its own. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "log.h"
#include "rowbuf.h"
#include "writer_impl.h"

/* Rows per statement: beyond a few hundred, each shard's CASE is longer to
 * evaluate per row than the round trips it saves (500 rows: 0.70 s for
 * 6,000 expires into 100k rows; 1,000: 0.84 s). */
#define LISTS_ROWS 500
/* Statements' worth of rows per page read back. */
#define LISTS_PAGE 20

/* Parameters one staged row takes: its match in each CASE and in the
 * WHERE, and its value for each SET column. */
static size_t params_per_row(const stage_lists *l)
{
  return l->nmatch * (l->nset + 1) + l->nset;
}

void stage_lists_free(stage_lists *l)
{
  if (!l)
    return;
  free(l->mcol);
  free(l->set);
  free(l->src);
  free(l->where);
  free(l->set_fixed);
  free(l->full_sql);
  ostmt_free(l->full);
  free(l);
}

/* The quoted name of the serial column: one no stage column has. */
static int serial_name(const writer *w, const stage *s, stage_lists *l, dwl_error *err)
{
  char name[40] = "dwl_stage_row";
  for (size_t n = strlen(name); n + 1 < sizeof name; name[n++] = '_', name[n] = '\0') {
    dwl_buf q;
    buf_init(&q, 0);
    if (dialect_quote(w->t->d, name, &q, "stage column", err) != 0) {
      buf_free(&q);
      return -1;
    }
    int taken = 0;
    for (size_t i = 0; i < s->ncols && !taken; i++)
      taken = strcasecmp(s->cols[i], q.data) == 0;
    if (!taken && q.len < sizeof l->serial) {
      memcpy(l->serial, q.data, q.len + 1);
      buf_free(&q);
      return 0;
    }
    buf_free(&q);
  }
  return err_set(err, DWL_EXIT_FAILED, "stage %s: no name left for its serial column", s->name);
}

int stage_lists_init(writer *w, stage *s, int del, const char *const *mcol, size_t nmatch, const char *const *set,
                     const size_t *src, size_t nset, const char *where, const char *set_fixed, dwl_error *err)
{
  /* MariaDB assigns a single-table UPDATE's SET pairs left to right, each
   * CASE seeing the values set before it (SIMULTANEOUS_ASSIGNMENT does not
   * reach the shards): a SET column that is also matched on (a history
   * repair's reshape moves valid_from and the deleted flag) would stop the
   * next CASE matching.  Such a stage keeps its join. */
  for (size_t j = 0; !del && j < nset; j++)
    for (size_t i = 0; i < nmatch; i++)
      if (strcmp(set[j], mcol[i]) == 0)
        return 0;
  stage_lists *l = calloc(1, sizeof *l);
  if (!l)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  l->del = del;
  l->nmatch = nmatch;
  l->nset = del ? 0 : nset;
  l->mcol = calloc(nmatch ? nmatch : 1, sizeof *l->mcol);
  l->set = calloc(nset ? nset : 1, sizeof *l->set);
  l->src = calloc(nset ? nset : 1, sizeof *l->src);
  if (where)
    l->where = strdup(where);
  if (set_fixed && !del)
    l->set_fixed = strdup(set_fixed);
  int ok = l->mcol && l->set && l->src && (!where || l->where) && (!set_fixed || del || l->set_fixed);
  int rc = ok ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < nmatch; i++)
    l->mcol[i] = mcol[i];
  for (size_t i = 0; rc == 0 && i < l->nset; i++) {
    l->set[i] = set[i];
    l->src[i] = src[i];
  }
  if (rc == 0)
    rc = serial_name(w, s, l, err);
  if (rc != 0) {
    stage_lists_free(l);
    return -1;
  }
  size_t per = params_per_row(l), cap = w->t->d->max_params / (per ? per : 1);
  l->rows = cap < 1 ? 1 : cap < LISTS_ROWS ? cap : LISTS_ROWS;
  s->lists = l;
  return 0;
}

long long stage_lists_statements(const stage *s, long long rows)
{
  long long per = (long long)s->lists->rows;
  return (rows + per - 1) / per;
}

/* "(k1 = ? AND vf = ?)" */
static void match(const stage_lists *l, dwl_buf *b)
{
  buf_addc(b, '(');
  for (size_t i = 0; i < l->nmatch; i++)
    buf_printf(b, "%s%s = ?", i ? " AND " : "", l->mcol[i]);
  buf_addc(b, ')');
}

/* The statement for n staged rows. */
static char *lists_sql(const writer *w, const stage_lists *l, size_t n)
{
  const target *t = w->t;
  dwl_buf b;
  buf_init(&b, 0);
  if (l->del) {
    buf_printf(&b, "DELETE FROM %s WHERE ", t->table_q);
  } else {
    buf_printf(&b, "UPDATE %s%s SET ", t->table_q, t->d->remote_update_hint ? t->d->remote_update_hint : "");
    for (size_t j = 0; j < l->nset; j++) {
      buf_printf(&b, "%s%s = CASE", j ? ", " : "", l->set[j]);
      for (size_t r = 0; r < n; r++) {
        buf_adds(&b, " WHEN ");
        match(l, &b);
        buf_adds(&b, " THEN ?");
      }
      buf_adds(&b, " END");
    }
    if (l->set_fixed)
      buf_printf(&b, ", %s", l->set_fixed);
    buf_adds(&b, " WHERE ");
  }
  if (l->where)
    buf_printf(&b, "%s AND ", l->where);
  buf_addc(&b, '(');
  for (size_t r = 0; r < n; r++) {
    if (r)
      buf_adds(&b, " OR ");
    match(l, &b);
  }
  buf_addc(&b, ')');
  return buf_steal(&b);
}

/* A page read back: its rows (the stage's ncols values each). */
typedef struct page {
  rowbuf rows;
  char last[32];           /* the serial of its last row */
} page;

/* Reads the next page of s, after serial page->last, into page. */
static int read_page(writer *w, stage *s, size_t max, page *pg, dwl_error *err)
{
  stage_lists *l = s->lists;
  dwl_buf q;
  buf_init(&q, 0);
  buf_adds(&q, "SELECT ");
  for (size_t i = 0; i < s->ncols; i++)
    buf_printf(&q, "%s, ", s->cols[i]);
  buf_printf(&q, "%s FROM %s WHERE %s > ? ORDER BY %s LIMIT %zu", l->serial, s->name, l->serial, l->serial, max);
  char *sql = buf_steal(&q);
  if (!sql)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  odbc_stmt *st;
  int rc = ostmt_prepare(w->t->c, sql, &st, err);
  free(sql);
  if (rc != 0)
    return -1;
  dwl_value after;
  odbc_text(&after, pg->last);
  SQLSMALLINT bigint = SQL_BIGINT;
  rowbuf_reset(&pg->rows);
  rc = ostmt_execute(st, &after, &bigint, 1, err);
  const dwl_value *row;
  while (rc == 0 && (rc = ostmt_fetch(st, &row, err)) == 1) {
    rc = 0;
    if (rowbuf_add(&pg->rows, row) != 0) {
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    snprintf(pg->last, sizeof pg->last, "%.*s", (int)row[s->ncols].len, row[s->ncols].data);
  }
  ostmt_free(st);
  return rc < 0 ? -1 : 0;
}

/* Column col of the page's row `row` as parameter *k (and its type). */
static void put(const stage *s, const page *pg, size_t row, size_t col, dwl_value *p, SQLSMALLINT *ty, size_t *k)
{
  p[*k] = rowbuf_get(&pg->rows, row, col);
  ty[(*k)++] = s->types[col];
}

/* Rows [first, first + n) of the page as the statement's parameters, in
 * its order: each SET column's CASE, then the WHERE's matches. */
static void chunk_params(const stage *s, const page *pg, size_t first, size_t n, dwl_value *p, SQLSMALLINT *ty)
{
  const stage_lists *l = s->lists;
  size_t k = 0;
  for (size_t j = 0; j < l->nset; j++)
    for (size_t r = first; r < first + n; r++) {
      for (size_t m = 0; m < l->nmatch; m++)
        put(s, pg, r, m, p, ty, &k);
      put(s, pg, r, l->src[j], p, ty, &k);
    }
  for (size_t r = first; r < first + n; r++)
    for (size_t m = 0; m < l->nmatch; m++)
      put(s, pg, r, m, p, ty, &k);
}

/* Plan mode: nothing was staged to read back; what a run would do, with
 * the form of one row's statement. */
static int print_plan(writer *w, stage *s, long long *steps, dwl_error *err)
{
  const stage_lists *l = s->lists;
  long long rows = batch_sent(s->b) - s->applied;
  char *sql = lists_sql(w, l, 1);
  if (!sql)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (w->sqlout)
    fprintf(w->sqlout, "-- %s: its %lld rows read back in order of %s and applied %zu a statement, as:\n%s;\n",
            s->name, rows, l->serial, l->rows, sql);
  free(sql);
  for (long long i = stage_lists_statements(s, rows); i > 0; i--)
    stage_step(steps);
  return 0;
}

int stage_lists_apply(writer *w, stage *s, long long *steps, dwl_error *err)
{
  if (w->plan)
    return print_plan(w, s, steps, err);
  stage_lists *l = s->lists;
  size_t per = params_per_row(l), max = l->rows * LISTS_PAGE;
  page pg;
  rowbuf_init(&pg.rows, s->ncols);
  snprintf(pg.last, sizeof pg.last, "0");
  dwl_value *p = calloc(l->rows * per, sizeof *p);
  SQLSMALLINT *ty = calloc(l->rows * per, sizeof *ty);
  int rc = p && ty ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0 && !l->full_sql && !(l->full_sql = lists_sql(w, l, l->rows)))
    rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  long long rows = 0, statements = 0;
  do {
    if (rc != 0 || (rc = read_page(w, s, max, &pg, err)) != 0)
      break;
    for (size_t first = 0; rc == 0 && first < pg.rows.n; first += l->rows) {
      size_t n = pg.rows.n - first < l->rows ? pg.rows.n - first : l->rows;
      chunk_params(s, &pg, first, n, p, ty);
      if (n == l->rows) {
        rc = run_sql(w, &l->full, l->full_sql, p, ty, n * per, err);
      } else {
        char *sql = lists_sql(w, l, n);
        rc = run_sql(w, NULL, sql, p, ty, n * per, err);
        free(sql);
      }
      stage_step(steps);
      statements++;
    }
    rows += (long long)pg.rows.n;
  } while (rc == 0 && pg.rows.n == max);
  if (rc == 0)
    log_msg(LOG_DEBUG, "%s applied by key lists: %lld rows in %lld statements", s->name, rows, statements);
  rowbuf_free(&pg.rows);
  free(p);
  free(ty);
  return rc;
}

int writer_update_lists(writer *w, const char *const *exprs, const char *from, const dwl_value *params,
                        const SQLSMALLINT *ptypes, size_t np, const size_t *match, size_t nmatch, const size_t *set,
                        size_t nset, const char *where, dwl_error *err)
{
  const target *t = w->t;
  if (!t->remote[0] || !t->d->remote_stage_serial || nmatch == 0)
    return 0;
  size_t n = nmatch + nset;
  stage s = {0};
  snprintf(s.name, sizeof s.name, "dwl_lists_%d", w->nlists++);
  char(*names)[24] = calloc(n, sizeof *names);
  s.cols = calloc(n, sizeof *s.cols);
  s.types = calloc(n, sizeof *s.types);
  const char **mcol = calloc(nmatch, sizeof *mcol), **scol = calloc(nset + 1, sizeof *scol);
  size_t *src = calloc(nset + 1, sizeof *src);
  int rc = names && s.cols && s.types && mcol && scol && src ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    size_t tc = i < nmatch ? match[i] : set[i - nmatch];
    snprintf(names[i], sizeof names[i], "dwl_l%zu", i);
    s.cols[i] = names[i];
    s.types[i] = col_ptype(w, tc);
    if (i < nmatch) {
      mcol[i] = t->cols[tc].q;
    } else {
      scol[i - nmatch] = t->cols[tc].q;
      src[i - nmatch] = i;
    }
  }
  s.ncols = n;
  if (rc == 0)
    rc = stage_lists_init(w, &s, nset == 0, mcol, nmatch, scol, src, nset, where, NULL, err);
  int done = rc == 0 && s.lists;  /* (none when a column set is matched on) */
  if (done && w->plan) {
    char *sql = lists_sql(w, s.lists, 1);
    if (!sql)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    else if (w->sqlout)
      fprintf(w->sqlout, "-- the rows of SELECT ... %s, applied %zu a statement, as:\n%s;\n", from, s.lists->rows,
              sql);
    free(sql);
  } else if (done) {
    /* The values to match and set, evaluated once on the head into a
     * stage numbered as the writer's own, then applied as those are. */
    dwl_buf b;
    buf_init(&b, 0);
    buf_printf(&b, "CREATE TEMPORARY TABLE %s (%s %s) AS SELECT ", s.name, s.lists->serial,
               t->d->remote_stage_serial);
    for (size_t i = 0; i < n; i++)
      buf_printf(&b, "%s%s AS %s", i ? ", " : "", exprs[i], names[i]);
    buf_printf(&b, " %s", from);
    rc = b.data ? odbc_exec(t->c, b.data, params, ptypes, np, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
    buf_free(&b);
    log_msg(LOG_DEBUG, "%s: the rows of SELECT ... %s", s.name, from);
    if (rc == 0)
      rc = stage_lists_apply(w, &s, NULL, err);
  }
  stage_lists_free(s.lists);
  free(src);
  free(scol);
  free(mcol);
  free(s.types);
  free(s.cols);
  free(names);
  return rc != 0 ? -1 : done;
}
