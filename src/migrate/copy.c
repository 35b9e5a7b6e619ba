/* dwload migrate's copy of one table: the progress table in the target
 * (a row per table: the last key copied, the rows and the source's
 * checksum so far, done), the choice between a fresh start, a resumed one
 * and refusing, and the loop that copies chunk after chunk, each
 * committed with its progress row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "migrate_impl.h"

/* Creates the progress table if need be; *one_writer: the name of the
 * target's warehouse when it takes one writer at a time (else NULL), told
 * from the connected driver, however the connection string names it (a
 * DSN). */
int progress_ensure(const mig_opts *o, const char **one_writer, dwl_error *err)
{
  side s;
  if (side_open(&s, o->to, PROGRESS_TABLE, err) != 0)
    return -1;
  *one_writer = s.t->d->single_writer ? s.t->d->dbms_prefix : NULL;
  int rc = odbc_table_exists(s.t->c, NULL, PROGRESS_TABLE, err);
  if (rc == 0) {
    dwl_column name = {.type = DWL_TYPE_TEXT, .precision = 255};
    dwl_column text = {.type = DWL_TYPE_TEXT};
    dwl_column num = {.type = DWL_TYPE_INTEGER};
    char b1[128], b2[128], b3[128];
    char sql[1024];
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (table_name %s PRIMARY KEY, last_key %s, rows_copied %s NOT NULL, checksum %s, "
             "done %s NOT NULL, source %s, updated_at %s)",
             PROGRESS_TABLE, s.t->d->type_sql(&name, b1, sizeof b1), s.t->d->type_sql(&text, b2, sizeof b2),
             s.t->d->type_sql(&num, b3, sizeof b3), s.t->d->type_sql(&text, b2, sizeof b2), s.t->d->flag_type,
             s.t->d->type_sql(&text, b2, sizeof b2), s.t->d->type_sql(&text, b2, sizeof b2));
    rc = odbc_exec(s.t->c, sql, NULL, NULL, 0, err);
  }
  side_close(&s);
  return rc < 0 ? -1 : 0;
}

static int progress_read(tjob *j, progress *p, dwl_error *err)
{
  memset(p, 0, sizeof *p);
  odbc_stmt *st;
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT last_key, rows_copied, done, checksum FROM %s WHERE table_name = ?",
           PROGRESS_TABLE);
  if (ostmt_prepare(j->dst.t->c, sql, &st, err) != 0)
    return -1;
  dwl_value v = {j->mt->name, strlen(j->mt->name), 0};
  const dwl_value *r;
  int rc = ostmt_execute(st, &v, NULL, 1, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1) {
    p->found = 1;
    p->rows = r[1].is_null ? 0 : strtoll(r[1].data, NULL, 10);
    p->done = !r[2].is_null && (r[2].data[0] == '1' || r[2].data[0] == 't');
    p->sum = r[3].is_null ? 0 : strtoull(r[3].data, NULL, 16);
    if (!r[0].is_null) {
      json_error_t je;
      p->key = json_loadb(r[0].data, r[0].len, 0, &je);
      if (!json_is_array(p->key) || json_array_size(p->key) != j->npk)
        rc = err_set(err, DWL_EXIT_FAILED, "%s: the recorded position of table %s is not a key: %.*s",
                     PROGRESS_TABLE, j->mt->name, (int)(r[0].len > 80 ? 80 : r[0].len), r[0].data);
    }
  }
  ostmt_free(st);
  return rc < 0 ? -1 : 0;
}

/* Records the position after a chunk, inside the chunk's transaction. */
static int progress_write(tjob *j, const cursor *c, long long rows, int done, int insert, dwl_error *err)
{
  char *key = NULL;
  if (c && c->have) {
    json_t *a = json_array();
    size_t off = 0;
    for (size_t k = 0; k < j->npk; k++) {
      json_array_append_new(a, json_stringn(c->key.data + off, c->klen[k]));
      off += c->klen[k];
    }
    key = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!key)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  char rbuf[32], ts[32], hbuf[32];
  snprintf(rbuf, sizeof rbuf, "%lld", rows);
  snprintf(hbuf, sizeof hbuf, "%016llx", (unsigned long long)j->sum);
  dwl_ts now = ts_now();
  ts_format(&now, ts);
  const dialect *d = j->dst.t->d;
  dwl_value p[7] = {
    {key, key ? strlen(key) : 0, key == NULL},
    {rbuf, strlen(rbuf), 0},
    {hbuf, strlen(hbuf), 0},
    {done ? d->true_val : d->false_val, 1, 0},
    {ts, strlen(ts), 0},
    {j->mt->name, strlen(j->mt->name), 0},
    {j->src.t->c->redacted, strlen(j->src.t->c->redacted), 0},
  };
  SQLSMALLINT ty[7] = {SQL_VARCHAR, d->param_type(DWL_TYPE_INTEGER), SQL_VARCHAR, d->param_type(DWL_TYPE_BOOLEAN),
                       SQL_VARCHAR, SQL_VARCHAR, SQL_VARCHAR};
  char sql[400];
  int rc;
  if (insert) {
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (last_key, rows_copied, checksum, done, updated_at, table_name, source) "
             "VALUES (?, ?, ?, ?, ?, ?, ?)",
             PROGRESS_TABLE);
    rc = odbc_exec(j->dst.t->c, sql, p, ty, 7, err);
  } else {
    snprintf(sql, sizeof sql,
             "UPDATE %s SET last_key = ?, rows_copied = ?, checksum = ?, done = ?, updated_at = ? WHERE table_name = ?",
             PROGRESS_TABLE);
    rc = odbc_exec(j->dst.t->c, sql, p, ty, 6, err);
  }
  free(key);
  return rc;
}

static int table_empty(target *t, dwl_error *err)
{
  char sql[700];
  snprintf(sql, sizeof sql, "SELECT 1 FROM %s LIMIT 1", t->table_q);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  const dwl_value *r;
  int rc = ostmt_execute(st, NULL, NULL, 0, err);
  if (rc == 0)
    rc = ostmt_fetch(st, &r, err);
  ostmt_free(st);
  return rc < 0 ? -1 : rc == 0;
}

/* Decides between a fresh copy, a resumed one and refusing, and creates
 * the table with its progress row. */
int start_table(tjob *j, progress *pr, dwl_error *err)
{
  const mig_opts *o = j->m->o;
  target *t = j->dst.t;
  if (progress_read(j, pr, err) != 0)
    return -1;
  int exists = odbc_table_exists(t->c, t->schema, t->table, err);
  if (exists < 0)
    return -1;
  if (pr->found && !exists)
    return err_set(err, DWL_EXIT_FAILED, "table %s: %s records a migration, but the target has no such table; "
                                         "delete its row from %s to start over",
                   j->mt->name, PROGRESS_TABLE, PROGRESS_TABLE);
  if (pr->found && !o->resume)
    return err_set(err, DWL_EXIT_FAILED,
                   "table %s: an earlier migration of it is recorded in %s; continue it with --resume", j->mt->name,
                   PROGRESS_TABLE);
  if (pr->found)
    return 0;
  if (exists) {
    /* MariaDB commits DDL at once: a migration killed right after
     * CREATE TABLE leaves it empty and unrecorded. */
    int empty = o->resume ? table_empty(t, err) : 0;
    if (empty < 0)
      return -1;
    if (!empty)
      return err_set(err, DWL_EXIT_FAILED,
                     "table %s already exists in the target; drop it, or migrate into another database", j->mt->name);
  }
  if (odbc_begin(t->c, err) != 0)
    return -1;
  int rc = exists ? 0 : create_table(j, err);
  if (rc == 0)
    rc = progress_write(j, NULL, 0, 0, 1, err);
  if (rc == 0)
    rc = odbc_commit(t->c, err);
  else
    odbc_rollback(t->c);
  return rc;
}

int copy_table(tjob *j, progress *pr, dwl_error *err)
{
  const mig_opts *o = j->m->o;
  target *t = j->dst.t;
  cursor c;
  if (cursor_init(&c, &j->src, j->npk, err) != 0)
    return -1;
  int rc = 0;
  long long rows = pr->rows;
  if (pr->key)
    rc = cursor_set_key(&c, j, pr->key, err);
  if (rc == 0 && pr->key)
    rc = record_bound(j, &c, err);
  /* Each chunk commits its rows with its progress row, so a commit lost in
   * a server crash only means that chunk is copied again: no need to wait
   * for the WAL flush. */
  if (rc == 0 && t->d->bulk_session_sql)
    rc = odbc_exec(t->c, t->d->bulk_session_sql, NULL, NULL, 0, err);
  if (rc == 0)
    rc = insert_open(j, err);
  if (rc == 0 && pr->found)
    log_msg(LOG_INFO, "table %s: resuming after %lld rows", j->mt->name, rows);
  j->n = 0;
  j->sum = pr->sum;
  for (int done = 0; rc == 0 && !done;) {
    long got = 0;
    rc = stopped(j, err);
    if (rc == 0)
      rc = odbc_begin(t->c, err);
    /* Without a key the whole table is one chunk: a resumed copy starts over. */
    if (rc == 0 && j->npk == 0 && pr->found) {
      char sql[700];
      snprintf(sql, sizeof sql, "DELETE FROM %s", t->table_q);
      rc = odbc_exec(t->c, sql, NULL, NULL, 0, err);
      rows = 0;
      j->sum = 0;
    }
    if (rc == 0)
      rc = cursor_chunk(j, &c, o->chunk, take_insert, &got, err);
    rc = insert_finish(j, rc, err);
    done = j->npk == 0 || got < o->chunk;
    rows += got;
    if (rc == 0 && done && pk_deferred(j))
      rc = add_pk(j, err);
    if (rc == 0)
      rc = progress_write(j, &c, rows, done, 0, err);
    if (rc == 0)
      rc = odbc_commit(t->c, err);
    else if (t->c->in_txn)
      odbc_rollback(t->c);
    if (rc == 0)
      progress_line(j, rows, done);
    if (rc == 0 && !done)
      rc = record_bound(j, &c, err);
  }
  j->mt->copied = j->n;
  j->mt->rows = rows;
  pr->rows = rows;
  pr->sum = j->sum;
  insert_close(j);
  cursor_free(&c);
  if (rc != 0)
    err_prefix(err, "copying %s", j->mt->name);
  return rc;
}
