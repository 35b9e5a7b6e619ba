/* Distributed target tables (MariaDB's Spider engine: a head whose table
 * keeps its rows on shard servers): telling one from a local table,
 * refusing it when its servers would not commit together, or the
 * checkpoint's table would commit apart from them (unless
 * target.accept_non_atomic), listing the prepared XA transactions that
 * hold locks the shards wait on, which the run's own lock wait does not
 * reach, and, after a failed commit, those decided to commit that a dead
 * server may still hold, and whether the run's rows commit apart from its
 * checkpoint (those, or foreign partitions).  What to ask comes from the
 * dialect. */
#include <string.h>

#include "log.h"
#include "state.h"
#include "target.h"

/* The first field of a one-row query's first row into out ("" when it
 * gave none), the query taking a schema (NULL: the connection's) and a
 * table's name when `table` is not NULL. */
static int first_value(target *t, const char *sql, const char *schema, const char *table, char *out, size_t n,
                       dwl_error *err)
{
  const dwl_value p[2] = {{schema, schema ? strlen(schema) : 0, !schema}, {table, table ? strlen(table) : 0, 0}};
  odbc_stmt *st;
  out[0] = '\0';
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  const dwl_value *r;
  int rc = ostmt_execute(st, table ? p : NULL, NULL, table ? 2 : 0, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1 && !r[0].is_null)
    snprintf(out, n, "%.*s", (int)r[0].len, r[0].data);
  ostmt_free(st);
  return rc < 0 ? -1 : 0;
}

/* The servers commit the rows together; the checkpoint must commit with
 * them.  dwload_state on the head is one more participant of the head's
 * own commit, which Spider ends apart from the shards' XA: a shard failing
 * at its XA COMMIT leaves the head's checkpoint advanced over rows that
 * never arrived (and reading it back would say "committed").  Behind the
 * same engine, its row is one more XA branch: prepared and committed with
 * the data's, or with them not. */
static int check_state_table(target *t, dwl_error *err)
{
  char engine[32];
  if (first_value(t, t->d->remote_table_sql, NULL, DWL_STATE_TABLE, engine, sizeof engine, err) != 0)
    return -1;
  if (engine[0]) {
    log_msg(LOG_INFO, DWL_STATE_TABLE " is a %s table too: the checkpoint commits with the rows", engine);
    return 0;
  }
  if (t->spec->accept_non_atomic) {
    t->remote_apart = "the checkpoint's table " DWL_STATE_TABLE " commits apart from the table's servers";
    log_msg(LOG_WARN,
            "table %s is a %s table but " DWL_STATE_TABLE " is not: a server that fails at the commit may leave "
            "the checkpoint committed without the rows (target.accept_non_atomic: true accepts that)",
            t->spec->target_table, t->remote);
    return 0;
  }
  return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_NON_ATOMIC,
                  "table %s is a %s table but the checkpoint's table " DWL_STATE_TABLE " is a table of this server: "
                  "it commits apart from the %s table's servers, so a server that fails at the commit would leave "
                  "the checkpoint advanced over rows that were not committed; make " DWL_STATE_TABLE " a %s table "
                  "on one of those servers (see DISTRIBUTED TARGETS in dwload-job(5))",
                  t->spec->target_table, t->remote, t->remote, t->remote);
}

int target_check_remote(target *t, dwl_error *err)
{
  const dialect *d = t->d;
  if (!d->remote_table_sql || !t->exists)
    return 0;
  if (first_value(t, d->remote_table_sql, t->schema, t->table, t->remote, sizeof t->remote, err) != 0)
    return -1;
  t->remote_apart = NULL;
  if (!t->remote[0])
    return 0;
  if (d->remote_session_sql) {
    if (odbc_exec(t->c, d->remote_session_sql, NULL, NULL, 0, err) != 0)
      return -1;
    log_msg(LOG_DEBUG, "table %s is a %s table: its statistics are fetched for each statement (%s)",
            t->spec->target_table, t->remote, d->remote_session_sql);
  }
  char atomic[8];
  if (first_value(t, d->remote_atomic_sql, NULL, NULL, atomic, sizeof atomic, err) != 0)
    return -1;
  if (strcmp(atomic, "1") == 0) {
    log_msg(LOG_INFO, "table %s is a %s table: its servers commit together (%s is on)", t->spec->target_table,
            t->remote, d->remote_atomic_name);
    return check_state_table(t, err);
  }
  if (t->spec->accept_non_atomic) {
    t->remote_apart = "its servers commit one after another";
    log_msg(LOG_WARN,
            "table %s is a %s table and %s is off: a server that fails at the commit may leave part of the run "
            "committed (target.accept_non_atomic: true accepts that)",
            t->spec->target_table, t->remote, d->remote_atomic_name);
    return 0;
  }
  return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_NON_ATOMIC,
                  "table %s is a %s table, whose rows live on other servers, and this session's %s is off: a server "
                  "that fails at the commit would leave part of the run committed while dwload reports a rollback",
                  t->spec->target_table, t->remote, d->remote_atomic_name);
}

int target_prepared_xa(target *t, const char *state, dwl_buf *xids, dwl_error *err)
{
  dwl_value p;
  if (!t->d->prepared_xa_sql)
    return 0;
  /* On a connection of its own: the run's may be in a failed statement. */
  odbc_conn *c;
  if (target_open_conn(t, &c, err) != 0)
    return -1;
  odbc_stmt *st;
  int n = 0, f = -1;
  if (ostmt_prepare(c, t->d->prepared_xa_sql, &st, err) == 0) {
    const dwl_value *r;
    odbc_text(&p, state);
    if (ostmt_execute(st, &p, NULL, 1, err) == 0)
      while ((f = ostmt_fetch(st, &r, err)) == 1) {
        if (r[0].is_null)
          continue;
        buf_printf(xids, "%s%.*s", n++ ? "; " : "", (int)r[0].len, r[0].data);
        if (!r[1].is_null)
          buf_printf(xids, " on %.*s", (int)r[1].len, r[1].data);
      }
    ostmt_free(st);
  }
  odbc_close(c);
  return f < 0 ? -1 : n;
}

/* The XA transactions in `state` into xids (the caller frees it), for a
 * message: how many, 0 also when listing them failed (a warning: the
 * message they would go into matters more). */
static int list_xa(target *t, const char *state, dwl_buf *xids)
{
  buf_init(xids, 0);
  if (!t->remote[0])
    return 0;
  dwl_error e2;
  err_init(&e2);
  int n = target_prepared_xa(t, state, xids, &e2);
  if (n < 0)
    log_msg(LOG_WARN, "could not list the XA transactions Spider records (%s)", e2.msg);
  return n > 0 && !buf_failed(xids) ? n : 0;
}

void target_name_prepared_xa(target *t, dwl_error *err)
{
  dwl_buf xids;
  int n = list_xa(t, t->d->xa_prepared, &xids);
  if (n > 0) {
    err->cause = DWL_CAUSE_PREPARED_XA;
    err_prefix(err, "%d prepared XA transaction%s may hold the locks its servers wait on: %s", n, n > 1 ? "s" : "",
               xids.data);
  }
  buf_free(&xids);
}

void target_warn_decided_xa(target *t)
{
  dwl_buf xids;
  int n = list_xa(t, t->d->xa_decided, &xids);
  if (n > 0)
    log_msg(LOG_WARN,
            "%d XA transaction%s decided to commit may have branches left prepared on a server that failed at "
            "the commit: %s; once the server is back, XA RECOVER on it lists them: end each with XA COMMIT and "
            "its xid there",
            n, n > 1 ? "s" : "", xids.data);
  buf_free(&xids);
}

int target_commit_apart(const target *t, dwl_buf *b)
{
  if (t->foreign) {
    /* (postgres_fdw commits its servers before the warehouse) */
    buf_printf(b, "table %s %s %s, whose servers commit before the warehouse, without a global commit",
               t->spec->target_table, t->foreign_self ? "is a foreign table:" : "has foreign partitions:", t->foreign);
    return 1;
  }
  if (t->remote[0] && t->remote_apart) {
    buf_printf(b, "table %s is a %s table whose commit is not atomic (target.accept_non_atomic): %s",
               t->spec->target_table, t->remote, t->remote_apart);
    return 1;
  }
  return 0;
}
