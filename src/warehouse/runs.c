/* The run table dwload_runs: created on first use with the dialect's
 * types, one row inserted per run (in the run's transaction when it
 * commits, in one of its own after a failure, replacing any the run's
 * commit left), and read by `dwload runs`. */
#include "config.h"

#include "runs.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ts.h"

/* The columns, in the order of the INSERT and the SELECT; 'k' a key text,
 * 't' text, 'i' an integer, 'r' a real. */
static const struct {
  const char *name;
  char type;
} cols[] = {
  {"run_id", 'k'},          {"job", 'k'},         {"started_at", 't'},  {"ended_at", 't'},
  {"status", 't'},          {"mode", 't'},        {"rows_read", 'i'},   {"skipped", 'i'},
  {"inserted", 'i'},        {"expired", 'i'},     {"updated", 'i'},     {"deleted", 'i'},
  {"unchanged", 'i'},       {"rejected", 'i'},    {"checkpoint_before", 't'}, {"checkpoint_after", 't'},
  {"seconds", 'r'},         {"error", 't'},       {"host", 't'},        {"pid", 'i'},
  {"version", 't'},
};
enum { NCOLS = sizeof cols / sizeof cols[0] };

static const char *col_type(const target *t, char type, char *buf, size_t n)
{
  dwl_column c = {.type = type == 'i' ? DWL_TYPE_INTEGER : type == 'r' ? DWL_TYPE_REAL : DWL_TYPE_TEXT,
                  .precision = type == 'k' ? 128 : 1000};
  return t->d->type_sql(&c, buf, n);
}

int runs_ensure(target *t, dwl_error *err)
{
  int ex = odbc_table_exists(t->c, NULL, DWL_RUNS_TABLE, err);
  if (ex != 0)
    return ex < 0 ? -1 : 0;
  dwl_buf sql;
  buf_init(&sql, 0);
  buf_adds(&sql, "CREATE TABLE " DWL_RUNS_TABLE " (");
  for (size_t i = 0; i < NCOLS; i++) {
    char tb[128];
    buf_printf(&sql, "%s%s %s%s", i ? ", " : "", cols[i].name, col_type(t, cols[i].type, tb, sizeof tb),
               i == 0 ? " PRIMARY KEY" : "");
  }
  buf_adds(&sql, ")");
  char *s = buf_steal(&sql);
  if (!s)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  dwl_error e2;
  err_init(&e2);
  int rc = odbc_exec(t->c, s, NULL, NULL, 0, &e2);
  free(s);
  /* Two first runs at once: the other one created it. */
  if (rc != 0 && odbc_table_exists(t->c, NULL, DWL_RUNS_TABLE, err) != 1)
    return err_set(err, e2.code, "cannot create " DWL_RUNS_TABLE ": %s", e2.msg);
  return 0;
}

int runs_insert(target *t, const run_record *rec, dwl_error *err)
{
  const run_summary *s = rec->sum;
  char nums[10][32], ended[32], host[128] = "";
  /* to the microsecond (ts_now has whole seconds): runs in one second
   * still sort by their end */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  dwl_ts end = {.us = (int64_t)now.tv_sec * DWL_US_PER_SEC + now.tv_nsec / 1000};
  ts_format(&end, ended);
  gethostname(host, sizeof host - 1);
  long long v[8] = {s->read, s->skipped, s->inserted, s->expired, s->updated, s->deleted, s->unchanged, s->rejected};
  dwl_value p[NCOLS];
  size_t n = 0;
  odbc_text(&p[n++], s->run_id);
  odbc_text(&p[n++], s->job);
  odbc_text(&p[n++], rec->started);
  odbc_text(&p[n++], ended);
  odbc_text(&p[n++], rec->status);
  odbc_text(&p[n++], s->mode);
  for (int i = 0; i < 8; i++) {
    snprintf(nums[i], sizeof nums[i], "%lld", v[i]);
    odbc_text(&p[n++], nums[i]);
  }
  odbc_text(&p[n++], rec->cp_before && rec->cp_before[0] ? rec->cp_before : NULL);
  odbc_text(&p[n++], s->checkpoint[0] ? s->checkpoint : NULL);
  snprintf(nums[8], sizeof nums[8], "%.3f", s->seconds);
  odbc_text(&p[n++], nums[8]);
  /* (err messages are already redacted: no password reaches them) */
  char msg[1000];
  snprintf(msg, sizeof msg, "%s", rec->error ? rec->error : "");
  odbc_text(&p[n++], rec->error ? msg : NULL);
  odbc_text(&p[n++], host);
  snprintf(nums[9], sizeof nums[9], "%ld", (long)getpid());
  odbc_text(&p[n++], nums[9]);
  odbc_text(&p[n++], PACKAGE_VERSION);
  char sql[1024];
  size_t len = (size_t)snprintf(sql, sizeof sql, "INSERT INTO " DWL_RUNS_TABLE " (");
  for (size_t i = 0; i < NCOLS; i++)
    len += (size_t)snprintf(sql + len, sizeof sql - len, "%s%s", i ? ", " : "", cols[i].name);
  len += (size_t)snprintf(sql + len, sizeof sql - len, ") VALUES (");
  for (size_t i = 0; i < NCOLS; i++)
    len += (size_t)snprintf(sql + len, sizeof sql - len, "%s?", i ? ", " : "");
  snprintf(sql + len, sizeof sql - len, ")");
  return odbc_exec(t->c, sql, p, NULL, n, err);
}

/* The run's row, replacing one its commit left: a run whose commit call
 * failed on a table whose rows commit apart from the checkpoint may have
 * committed its "committed" row, where the truth is "unknown". */
static int replace_row(target *t, const run_record *rec, dwl_error *err)
{
  dwl_value id;
  odbc_text(&id, rec->sum->run_id);
  if (odbc_exec(t->c, "DELETE FROM " DWL_RUNS_TABLE " WHERE run_id = ?", &id, NULL, 1, err) != 0)
    return -1;
  return runs_insert(t, rec, err);
}

static void record_on(target *t, const run_record *rec)
{
  dwl_error e2;
  err_init(&e2);
  if (t->c->in_txn)
    odbc_rollback(t->c);
  int rc = runs_ensure(t, &e2);
  if (rc == 0)
    rc = odbc_begin(t->c, &e2);
  if (rc == 0 && (rc = replace_row(t, rec, &e2)) == 0)
    rc = odbc_commit(t->c, &e2);
  if (rc != 0) {
    if (t->c->in_txn)
      odbc_rollback(t->c);
    log_msg(LOG_WARN, "run %s (%s) is not recorded in " DWL_RUNS_TABLE ": %s", rec->sum->run_id, rec->status,
            e2.msg);
    return;
  }
  log_msg(LOG_INFO, "recorded run %s as %s in " DWL_RUNS_TABLE, rec->sum->run_id, rec->status);
}

void runs_record_after(target *t, const run_record *rec)
{
  if (!t) {
    log_msg(LOG_WARN, "run %s is not recorded in " DWL_RUNS_TABLE ": no connection to the warehouse",
            rec->sum->run_id);
    return;
  }
  if (!odbc_lost(t->c)) {
    record_on(t, rec);
    return;
  }
  /* The run's connection died: the row goes through a new one, which is
   * closed again; the dead one (its statements still open) stays the
   * run's, to be freed in order. */
  dwl_error e2;
  err_init(&e2);
  odbc_conn *c2;
  if (target_open_conn(t, &c2, &e2) != 0) {
    log_msg(LOG_WARN, "run %s is not recorded in " DWL_RUNS_TABLE ": the warehouse is unreachable: %s",
            rec->sum->run_id, e2.msg);
    return;
  }
  odbc_conn *dead = t->c;
  t->c = c2;
  record_on(t, rec);
  t->c = dead;
  odbc_close(c2);
}

static void print_json(const dwl_value *r, FILE *out)
{
  json_t *o = json_object();
  for (size_t i = 0; i < NCOLS; i++) {
    json_t *v;
    if (r[i].is_null)
      v = json_null();
    else if (cols[i].type == 'i')
      v = json_integer(strtoll(r[i].data, NULL, 10));
    else if (cols[i].type == 'r')
      v = json_real(strtod(r[i].data, NULL));
    else
      v = json_stringn(r[i].data, r[i].len);
    json_object_set_new(o, cols[i].name, v);
  }
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  if (line)
    fprintf(out, "%s\n", line);
  free(line);
  json_decref(o);
}

#define F(i) (r[i].is_null ? 1 : (int)r[i].len), (r[i].is_null ? "-" : r[i].data)

static void print_text(const dwl_value *r, FILE *out)
{
  fprintf(out, "%.*s  %.*s  %-11.*s  read %.*s, inserted %.*s, expired %.*s, updated %.*s, deleted %.*s, "
               "rejected %.*s  checkpoint %.*s -> %.*s",
          F(0), F(2), F(4), F(6), F(8), F(9), F(10), F(11), F(13), F(14), F(15));
  if (!r[17].is_null)
    fprintf(out, "  error: %.*s", F(17));
  fputc('\n', out);
}

int runs_print(target *t, const char *job, long limit, int json, FILE *out, dwl_error *err)
{
  int ex = odbc_table_exists(t->c, NULL, DWL_RUNS_TABLE, err);
  if (ex < 0)
    return -1;
  if (ex == 0) {
    if (!json)
      fprintf(out, "no runs recorded for job %s\n", job);
    return 0;
  }
  char sql[1024];
  size_t len = (size_t)snprintf(sql, sizeof sql, "SELECT ");
  for (size_t i = 0; i < NCOLS; i++)
    len += (size_t)snprintf(sql + len, sizeof sql - len, "%s%s", i ? ", " : "", cols[i].name);
  /* the limit is a parsed number, not text from outside */
  snprintf(sql + len, sizeof sql - len,
           " FROM " DWL_RUNS_TABLE " WHERE job = ? ORDER BY started_at DESC, ended_at DESC LIMIT %ld", limit);
  odbc_stmt *s;
  dwl_value p;
  odbc_text(&p, job);
  if (ostmt_prepare(t->c, sql, &s, err) != 0)
    return -1;
  const dwl_value *r;
  int rc = ostmt_execute(s, &p, NULL, 1, err);
  long rows = 0;
  while (rc == 0 && (rc = ostmt_fetch(s, &r, err)) == 1) {
    rc = 0;
    rows++;
    if (json)
      print_json(r, out);
    else
      print_text(r, out);
  }
  ostmt_free(s);
  if (rc < 0)
    return -1;
  if (rows == 0 && !json)
    fprintf(out, "no runs recorded for job %s\n", job);
  return 0;
}
