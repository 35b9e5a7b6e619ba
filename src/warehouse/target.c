/* The target: its connections (the dialect's attributes and session
 * settings, lock waits bounded by target.lock_timeout), the table's quoted
 * name, and freeing it all.  The table's layout is target_layout.c, its
 * columns and creation target_table.c, reading versions back
 * target_scan.c; the statistics refreshed after a large load. */
#include "target.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "clock.h"
#include "log.h"
#include "redact.h"

static char *conn_with_extra(const char *cs, const char *extra)
{
  /* Before the first braced value: libsqliteodbc reads no attribute past
   * one (after PWD={a;b} it dropped Timeout=1000 and waited its default
   * 100 s for every lock, a locked run taking minutes to say so). */
  size_t n = strlen(cs), at = odbc_conn_first_braced(cs), xl = strlen(extra);
  char *out = malloc(n + xl + 3);
  if (!out)
    return NULL;
  memcpy(out, cs, at);
  size_t k = at;
  if (at && cs[at - 1] != ';')
    out[k++] = ';';
  memcpy(out + k, extra, xl);
  k += xl;
  if (at < n)
    out[k++] = ';';
  strcpy(out + k, cs + at);
  return out;
}

/* A connection as the run's others: same attributes, same session setup,
 * lock waits bounded.  SQLite's main connection (opened while t->c is
 * NULL) waits its driver's Timeout until it knows that no other writer
 * holds the database (state.c). */
static int session_setup(target *t, odbc_conn *c, int bound, dwl_error *err)
{
  if (t->d && t->d->session_sql && odbc_exec(c, t->d->session_sql, NULL, NULL, 0, err) != 0)
    return -1;
  return bound ? odbc_exec(c, t->lock_done_sql, NULL, NULL, 0, err) : 0;
}

static int open_conn(target *t, const char *connstr, odbc_conn **out, dwl_error *err)
{
  int bound = t->lock_done_sql[0] && !(t->d->writer_probe_sql && !t->c);
  if (odbc_connect(connstr, out, err) != 0)
    return -1;
  if (session_setup(t, *out, bound, err) != 0) {
    odbc_close(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

int target_open_conn(target *t, odbc_conn **out, dwl_error *err)
{
  return open_conn(t, t->connstr, out, err);
}

int target_connect(const dwl_spec *spec, target **out, dwl_error *err)
{
  *out = NULL;
  target *t = calloc(1, sizeof *t);
  if (!t)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  t->spec = spec;
  t->lmd = -1;
  t->counted = -1;
  t->key_indexed = -1;
  for (int i = 0; i < TC_NROLES; i++)
    t->ix[i] = -1;
  if (odbc_connect(spec->target_connection, &t->c, err) != 0)
    goto fail;
  t->d = dialect_for_dbms(t->c->dbms, err);
  if (!t->d)
    goto fail;
  /* Some attributes only matter once the DBMS is known (SQLite's busy
   * timeout): reconnect with them. */
  dwl_buf extra;
  buf_init(&extra, 0);
  if (t->d->conn_extra)
    t->d->conn_extra(spec->target_connection, &extra);
  t->connstr = extra.len ? conn_with_extra(spec->target_connection, extra.data) : strdup(spec->target_connection);
  buf_free(&extra);
  if (!t->connstr) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto fail;
  }
  /* Every session of the run waits at most target.lock_timeout for a lock. */
  if (t->d->lock_timeout_sql)
    t->d->lock_timeout_sql(spec->lock_timeout_ms > 0 ? spec->lock_timeout_ms : DWL_LOCK_TIMEOUT_MS, t->lock_done_sql,
                           sizeof t->lock_done_sql);
  /* Only attributes need a new connection; session settings are made on
   * this one (a reconnect for them alone also cost MariaDB's client a
   * second handshake, and its plugins a load and unload). */
  if (strcmp(t->connstr, spec->target_connection) != 0) {
    odbc_close(t->c);
    t->c = NULL;
    if (open_conn(t, t->connstr, &t->c, err) != 0)
      goto fail;
  } else if (session_setup(t, t->c, t->lock_done_sql[0] && !t->d->writer_probe_sql, err) != 0) {
    goto fail;
  }
  if (dialect_split_table(spec->target_table, &t->schema, &t->table) != 0) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto fail;
  }
  dwl_buf q;
  buf_init(&q, 0);
  if (dialect_quote_table(t->d, spec->target_table, &q, err) != 0) {
    int line = 0, col = 0;
    const char *file = spec_key_at(spec, "target.table", &line, &col);
    err_prefix(err, "%s:%d:%d", file, line, col);
    err_cause(err, DWL_CAUSE_SPEC);
    buf_free(&q);
    goto fail;
  }
  t->table_q = buf_steal(&q);
  *out = t;
  return 0;
fail:
  target_free(t);
  return -1;
}

void target_free(target *t)
{
  if (!t)
    return;
  for (size_t i = 0; i < t->ncols; i++) {
    free(t->cols[i].q);
    free(t->cols[i].have_type);
    free(t->cols[i].have_attrs);
    free(t->cols[i].have_collate);
  }
  free(t->cols);
  for (size_t i = 0; i < t->ntable_names; i++)
    free(t->table_names[i]);
  free(t->table_names);
  for (size_t i = 0; i < t->nabsent; i++)
    free(t->absent[i]);
  free(t->absent);
  free(t->cur_pred);
  free(t->foreign);
  free(t->connstr);
  odbc_close(t->reader);
  free(t->table_q);
  free(t->schema);
  free(t->table);
  odbc_close(t->c);
  free(t);
}

void target_lock_timed_out(target *t, dwl_error *err)
{
  if (!t || err->code != DWL_EXIT_FAILED || !err->sqlstate[0] || !t->d->lock_conflict ||
      !t->d->lock_conflict(err->sqlstate, err->native))
    return;
  char span[32];
  ts_format_duration(t->spec->lock_timeout_ms * 1000, span);
  err->code = DWL_EXIT_LOCKED;
  /* A distributed table's servers wait on their own lock timeouts, and
   * a prepared XA transaction left by a crash holds its locks for good. */
  target_name_prepared_xa(t, err);
  err_prefix(err, "table %s: gave up after waiting %s (target.lock_timeout) for a lock another session holds",
             t->spec->target_table, span);
}

/* Rows this many or more loaded in a run, or a table the run created: the
 * planner's statistics are refreshed, as after any bulk load, so the next
 * run's keyed lookups and staged updates probe the key index.  After the
 * commit, and best effort: the data is already safe. */
#define ANALYZE_AFTER_ROWS 100000

void target_analyze_after_load(target *t, long long inserted)
{
  if (!t->d->analyze_sql || (!t->created && inserted < ANALYZE_AFTER_ROWS))
    return;
  char sql[700];
  snprintf(sql, sizeof sql, "%s %s", t->d->analyze_sql, t->table_q);
  dwl_error e2;
  err_init(&e2);
  double t0 = now_s();
  if (odbc_exec(t->c, sql, NULL, NULL, 0, &e2) != 0)
    log_msg(LOG_WARN, "could not refresh the statistics of %s: %s", t->spec->target_table, e2.msg);
  else
    log_msg(LOG_INFO, "refreshed the statistics of %s in %.2fs", t->spec->target_table, now_s() - t0);
}
