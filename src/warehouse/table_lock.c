/* The target table's lock (see table_lock.h): the dwload_lock table, the
 * table's identity, the mark and the row lock. */
#include "table_lock.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int lock_exec(target *t, const char *sql, const dwl_value *p, size_t n, int *conflict, dwl_error *err)
{
  odbc_stmt *st;
  *conflict = 0;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  int rc = ostmt_execute(st, p, NULL, n, err);
  if (rc != 0 && t->d->lock_conflict && t->d->lock_conflict(st->state, st->native))
    *conflict = 1;
  ostmt_free(st);
  return rc;
}

/* SQLite admits one writer per database: there is nothing to add. */
static int needed(const target *t)
{
  return t->d->writer_probe_sql == NULL;
}

int table_lock_ensure(target *t, dwl_error *err)
{
  if (!needed(t))
    return 0;
  int ex = odbc_table_exists(t->c, NULL, DWL_LOCK_TABLE, err);
  if (ex != 0)
    return ex < 0 ? -1 : 0;
  char kb[128], tb[128], bb[128], sql[1024];
  dwl_column ck = {.type = DWL_TYPE_TEXT, .precision = 300};
  dwl_column ct = {.type = DWL_TYPE_TEXT, .precision = 128};
  dwl_column cb = {.type = DWL_TYPE_INTEGER};
  const char *key = t->d->type_sql(&ck, kb, sizeof kb);
  const char *txt = t->d->type_sql(&ct, tb, sizeof tb);
  const char *big = t->d->type_sql(&cb, bb, sizeof bb);
  snprintf(sql, sizeof sql,
           "CREATE TABLE " DWL_LOCK_TABLE " (target_table %s PRIMARY KEY, job %s, running_since %s, "
           "running_host %s, running_pid %s)",
           key, txt, txt, txt, big);
  dwl_error e2;
  err_init(&e2);
  if (odbc_exec(t->c, sql, NULL, NULL, 0, &e2) != 0) {
    /* Two first runs at once: the other one created it. */
    if (odbc_table_exists(t->c, NULL, DWL_LOCK_TABLE, err) == 1)
      return 0;
    return err_set(err, e2.code, "%s", e2.msg);
  }
  return 0;
}

/* The table's identity: schema.table, the schema the session's default
 * when the spec names none (PostgreSQL's current_schema(), MariaDB's
 * database), so that dim and public.dim are one table.  Names keep their
 * case (dwload quotes them), except where the server folds table names
 * (MariaDB's lower_case_table_names). */
static int identity(target *t, dwl_error *err)
{
  odbc_stmt *s;
  const dwl_value *r;
  if (ostmt_prepare(t->c, t->d->current_schema_sql, &s, err) != 0)
    return -1;
  int rc = ostmt_execute(s, NULL, NULL, 0, err);
  if (rc == 0 && (rc = ostmt_fetch(s, &r, err)) == 1) {
    int fold = !r[1].is_null && strtol(r[1].data, NULL, 10) != 0;
    if (t->schema)
      snprintf(t->lock_id, sizeof t->lock_id, "%s.%s", t->schema, t->table);
    else
      snprintf(t->lock_id, sizeof t->lock_id, "%.*s.%s", r[0].is_null ? 0 : (int)r[0].len, r[0].data, t->table);
    for (char *p = t->lock_id; fold && *p; p++)
      *p = (char)tolower((unsigned char)*p);
    rc = 0;
  } else if (rc == 0) {
    rc = err_set(err, DWL_EXIT_FAILED, "cannot tell the session's schema");
  }
  ostmt_free(s);
  return rc < 0 ? -1 : 0;
}

/* Another run holds the table's row: who, as its committed mark says.
 * *own_job: that run is one of this job's (the job's lock then tells). */
static int held(target *t, const char *job, int *own_job, dwl_error *err)
{
  dwl_value p;
  odbc_text(&p, t->lock_id);
  odbc_stmt *s;
  const dwl_value *r;
  char other[130] = "", since[40] = "", host[130] = "", pid[32] = "";
  if (ostmt_prepare(t->c, "SELECT job, running_since, running_host, running_pid FROM " DWL_LOCK_TABLE
                          " WHERE target_table = ?", &s, err) != 0)
    return -1;
  if (ostmt_execute(s, &p, NULL, 1, err) == 0 && ostmt_fetch(s, &r, err) == 1) {
    char *dst[] = {other, since, host, pid};
    size_t len[] = {sizeof other, sizeof since, sizeof host, sizeof pid};
    for (int i = 0; i < 4; i++)
      snprintf(dst[i], len[i], "%.*s", r[i].is_null ? 0 : (int)r[i].len, r[i].data);
  }
  ostmt_free(s);
  err_init(err);
  if (own_job)
    *own_job = strcmp(other, job) == 0;
  /* The mark may be this run's own, when two runs marked at once. */
  if (!other[0] || (strcmp(host, t->lock_host) == 0 && strcmp(pid, t->lock_pid) == 0))
    return err_set(err, DWL_EXIT_LOCKED,
                   "table %s is locked: another run writes it; two writers of one table would corrupt it; try again "
                   "when it has finished (job '%s' not started)",
                   t->spec->target_table, job);
  return err_set(err, DWL_EXIT_LOCKED,
                 "table %s is locked: job '%s' writes it, running since %s (host %s, pid %s); two writers of one "
                 "table would corrupt it; try again when it has finished (job '%s' not started)",
                 t->spec->target_table, other, since, host[0] ? host : "?", pid[0] ? pid : "?", job);
}

static int row_exists(target *t, dwl_error *err)
{
  dwl_value p;
  odbc_text(&p, t->lock_id);
  odbc_stmt *s;
  const dwl_value *r;
  if (ostmt_prepare(t->c, "SELECT 1 FROM " DWL_LOCK_TABLE " WHERE target_table = ?", &s, err) != 0)
    return -1;
  int rc = ostmt_execute(s, &p, NULL, 1, err);
  if (rc == 0)
    rc = ostmt_fetch(s, &r, err);
  ostmt_free(s);
  return rc;
}

static int wait_briefly(target *t, dwl_error *err)
{
  return t->d->lock_wait_sql ? odbc_exec(t->c, t->d->lock_wait_sql, NULL, NULL, 0, err) : 0;
}

static int wait_normally(target *t, dwl_error *err)
{
  return t->lock_done_sql[0] ? odbc_exec(t->c, t->lock_done_sql, NULL, NULL, 0, err) : 0;
}

int table_lock_mark(target *t, const char *job, const dwl_ts *started, dwl_error *err)
{
  if (!needed(t))
    return 0;
  if (identity(t, err) != 0 || wait_briefly(t, err) != 0)
    return -1;
  gethostname(t->lock_host, sizeof t->lock_host - 1);
  snprintf(t->lock_pid, sizeof t->lock_pid, "%ld", (long)getpid());
  ts_format(started, t->lock_since);
  dwl_value p[5];
  int conflict, own = 0;
  int ex = row_exists(t, err);
  if (ex < 0)
    return -1;
  odbc_text(&p[0], t->lock_id);
  dwl_error dup;
  err_init(&dup);
  /* A run starting at the same moment may insert the row first. */
  if (!ex && lock_exec(t, "INSERT INTO " DWL_LOCK_TABLE " (target_table) VALUES (?)", p, 1, &conflict, &dup) != 0) {
    if (conflict)
      return held(t, job, NULL, err);
    if ((ex = row_exists(t, err)) != 1)
      return ex < 0 ? -1 : err_set(err, dup.code, "%s", dup.msg);
  }
  odbc_text(&p[0], job);
  odbc_text(&p[1], t->lock_since);
  odbc_text(&p[2], t->lock_host);
  odbc_text(&p[3], t->lock_pid);
  odbc_text(&p[4], t->lock_id);
  if (lock_exec(t,
                "UPDATE " DWL_LOCK_TABLE " SET job = ?, running_since = ?, running_host = ?, running_pid = ? "
                "WHERE target_table = ?",
                p, 5, &conflict, err) != 0) {
    if (!conflict)
      return -1;
    int rc = held(t, job, &own, err);
    /* Another run of this job: its lock says so, in its own words. */
    if (own) {
      err_init(err);
      return wait_normally(t, err);
    }
    return rc;
  }
  t->lock_marked = 1;
  return wait_normally(t, err);
}

int table_lock_take(target *t, const char *job, dwl_error *err)
{
  if (!needed(t))
    return 0;
  if (wait_briefly(t, err) != 0)
    return -1;
  dwl_value p;
  int conflict;
  odbc_text(&p, t->lock_id);
  if (lock_exec(t, "UPDATE " DWL_LOCK_TABLE " SET running_pid = running_pid WHERE target_table = ?", &p, 1,
                &conflict, err) != 0)
    return conflict ? held(t, job, NULL, err) : -1;
  return wait_normally(t, err);
}

int table_lock_release(target *t, dwl_error *err)
{
  if (!needed(t))
    return 0;
  dwl_value p;
  int conflict;
  odbc_text(&p, t->lock_id);
  return lock_exec(t,
                   "UPDATE " DWL_LOCK_TABLE " SET job = NULL, running_since = NULL, running_host = NULL, "
                   "running_pid = NULL WHERE target_table = ?",
                   &p, 1, &conflict, err);
}

void table_lock_abandon(target *t)
{
  if (!t || !t->lock_marked)
    return;
  dwl_value p[3];
  int conflict;
  odbc_text(&p[0], t->lock_id);
  odbc_text(&p[1], t->lock_host);
  odbc_text(&p[2], t->lock_since);
  dwl_error e2;
  err_init(&e2);
  /* Only this run's mark: another run may have marked the table since. */
  if (lock_exec(t,
                "UPDATE " DWL_LOCK_TABLE " SET job = NULL, running_since = NULL, running_host = NULL, "
                "running_pid = NULL WHERE target_table = ? AND running_host = ? AND running_since = ?",
                p, 3, &conflict, &e2) != 0)
    log_msg(LOG_WARN, "could not clear the mark in " DWL_LOCK_TABLE ": %s", e2.msg);
}
