/* Job state and the job's lock, kept in the target's dwload_state table. */
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

int state_exec(target *t, const char *sql, const dwl_value *p, size_t n, int *conflict, dwl_error *err)
{
  odbc_stmt *st;
  if (conflict)
    *conflict = 0;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  int rc = ostmt_execute(st, p, NULL, n, err);
  if (rc != 0 && conflict && t->d->lock_conflict && t->d->lock_conflict(st->state, st->native))
    *conflict = 1;
  ostmt_free(st);
  return rc;
}

/* One element of a composite checkpoint's text [b, e): a quoted point in
 * time (*time = 1) or an integer.  0, or -1. */
static int composite_elem(const char *b, const char *e, dwl_ts *v, int *time)
{
  while (b < e && *b == ' ')
    b++;
  while (e > b && e[-1] == ' ')
    e--;
  *time = e - b >= 2 && *b == '"' && e[-1] == '"';
  if (*time)
    return ts_parse(b + 1, (size_t)(e - b - 2), v);
  return ts_parse_seq(b, (size_t)(e - b), v);
}

/* ["c1",t1,...]: 2 to 1 + DWL_TS_TIES elements. */
static int composite_parse(const char *text, dwl_ts *cp, int *seq)
{
  size_t n = strlen(text);
  if (n < 2 || text[0] != '[' || text[n - 1] != ']')
    return -1;
  const char *p = text + 1, *end = text + n - 1;
  int k = -1;
  dwl_ts c1 = {0};
  while (p <= end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *e = comma ? comma : end;
    dwl_ts v;
    int time;
    if (k >= DWL_TS_TIES || composite_elem(p, e, &v, &time) != 0)
      return -1;
    if (k < 0) {
      c1 = v;
      *seq = !time;
    } else {
      c1.tie[k] = v.us;
      c1.tie_time |= (unsigned)time << k;
    }
    k++;
    p = e + 1;
  }
  if (k < 1)
    return -1;
  c1.nties = k;
  *cp = c1;
  return 0;
}

int state_checkpoint(const char *job, const char *text, dwl_ts *cp, int *seq, dwl_error *err)
{
  size_t n = strlen(text);
  if (text[0] == '[') {
    if (composite_parse(text, cp, seq) != 0)
      return err_set(err, DWL_EXIT_FAILED,
                     "stored checkpoint '%s' of job %s is not a composite lmd's (a JSON array of 2 to %d integers "
                     "or quoted timestamps)", text, job, 1 + DWL_TS_TIES);
    return 0;
  }
  *seq = ts_parse_seq(text, n, cp) == 0;
  if (!*seq && ts_parse(text, n, cp) != 0)
    return err_set(err, DWL_EXIT_FAILED, "stored checkpoint '%s' of job %s is neither a timestamp nor an integer",
                   text, job);
  return 0;
}

void state_checkpoint_compose(const char *c1, int seq, const dwl_ts *cp, char *out, size_t n)
{
  if (cp->nties == 0) {
    snprintf(out, n, "%s", c1);
    return;
  }
  size_t len = (size_t)snprintf(out, n, seq ? "[%s" : "[\"%s\"", c1);
  for (int k = 0; k < cp->nties && len < n; k++) {
    dwl_ts v = {.us = cp->tie[k]};
    char t[32];
    if ((cp->tie_time >> k) & 1)
      ts_format(&v, t);
    else
      ts_format_seq(&v, t);
    len += (size_t)snprintf(out + len, n - len, ((cp->tie_time >> k) & 1) ? ",\"%s\"" : ",%s", t);
  }
  if (len < n)
    snprintf(out + len, n - len, "]");
}

void state_checkpoint_text(const target *t, const dwl_ts *cp, char *out, size_t n)
{
  char c1[32];
  target_ts_text(t, cp, c1);
  state_checkpoint_compose(c1, t->vseq, cp, out, n);
}

int state_checkpoint_lowered(const dwl_ts *cp, int seq, long long lookback, char out[32])
{
  int64_t step = cp->nties == 0 ? 0 : seq ? 1 : cp->date_only ? DWL_US_PER_DAY : 1;
  if (lookback <= 0 && step == 0)
    return 0;
  dwl_ts t = ts_add_us(*cp, -lookback - step);
  seq ? ts_format_seq(&t, out) : ts_format(&t, out);
  return 1;
}

/* A checkpoint's shape: "a timestamp", "a composite of an integer
 * sequence and 1 tie-breaker (an integer)", ... */
static void shape_words(int seq, const dwl_ts *s, char *out, size_t n)
{
  size_t len = (size_t)snprintf(out, n, "%s%s", s->nties ? "a composite of " : "",
                                seq ? "an integer sequence" : "a point in time");
  for (int k = 0; k < s->nties && len < n; k++)
    len += (size_t)snprintf(out + len, n - len, "%s%s", k ? ", " : " and tie-breakers: ",
                            ((s->tie_time >> k) & 1) ? "a point in time" : "an integer");
}

int state_checkpoint_fits(const target *t, const char *text, const dwl_ts *cp, int seq, const dwl_ts *shape,
                          dwl_error *err)
{
  if (seq == t->vseq && cp->nties == shape->nties && (cp->nties == 0 || cp->tie_time == shape->tie_time))
    return 0;
  char was[200], now[200];
  shape_words(seq, cp, was, sizeof was);
  shape_words(t->vseq, shape, now, sizeof now);
  int line = 0, col = 0;
  const char *file = spec_key_at(t->spec, "load.lmd", &line, &col);
  return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                  "%s:%d:%d: load.lmd: the stored checkpoint '%s' of job %s is %s, but the lmd column '%s' is now "
                  "%s; the lmd's type changed since the last run: set the checkpoint in the new type "
                  "(dwload state --set) or --reset it",
                  file, line, col, text, t->spec->job, was, t->spec->lmd, now);
}

int state_ensure(target *t, dwl_error *err)
{
  int ex = odbc_table_exists(t->c, NULL, DWL_STATE_TABLE, err);
  if (ex != 0)
    return ex < 0 ? -1 : 0;
  char kb[128], tb[128], bb[128], rb[128], sql[4096];
  dwl_column ck = {.type = DWL_TYPE_TEXT, .precision = 128};
  dwl_column ct = {.type = DWL_TYPE_TEXT, .precision = 1000};
  dwl_column cb = {.type = DWL_TYPE_INTEGER};
  dwl_column cr = {.type = DWL_TYPE_REAL};
  /* type_sql returns its text: in the buffer, or a constant. */
  const char *key = t->d->type_sql(&ck, kb, sizeof kb);
  const char *txt = t->d->type_sql(&ct, tb, sizeof tb);
  const char *big = t->d->type_sql(&cb, bb, sizeof bb);
  const char *real = t->d->type_sql(&cr, rb, sizeof rb);
  snprintf(sql, sizeof sql,
           "CREATE TABLE " DWL_STATE_TABLE " (job %s PRIMARY KEY, checkpoint %s, last_run_at %s, last_status %s, "
           "last_mode %s, rows_read %s, skipped %s, inserted %s, expired %s, updated %s, deleted %s, unchanged %s, "
           "rejected %s, seconds %s, running_since %s, running_host %s, running_pid %s, last_error %s, run_id %s)",
           key, txt, txt, txt, txt, big, big, big, big, big, big, big, big, real, txt, txt, big, txt, txt);
  dwl_error e2;
  err_init(&e2);
  if (odbc_exec(t->c, sql, NULL, NULL, 0, &e2) != 0) {
    /* Two first runs at once: the other one created it. */
    if (odbc_table_exists(t->c, NULL, DWL_STATE_TABLE, err) == 1)
      return 0;
    return err_set(err, e2.code, "%s", e2.msg);
  }
  return 0;
}

static void copy_text(char *dst, size_t n, const dwl_value *v)
{
  if (v->is_null) {
    dst[0] = '\0';
    return;
  }
  snprintf(dst, n, "%.*s", (int)v->len, v->data);
}

static long long num(const dwl_value *v)
{
  return v->is_null ? 0 : strtoll(v->data, NULL, 10);
}

int state_read(target *t, const char *job, job_state *st, dwl_error *err)
{
  memset(st, 0, sizeof *st);
  int ex = odbc_table_exists(t->c, NULL, DWL_STATE_TABLE, err);
  if (ex <= 0)
    return ex;
  static const char sql[] =
      "SELECT checkpoint, last_run_at, last_status, last_mode, rows_read, skipped, inserted, expired, updated, "
      "deleted, unchanged, rejected, seconds, running_since, running_host, running_pid, last_error FROM " DWL_STATE_TABLE
      " WHERE job = ?";
  odbc_stmt *s;
  dwl_value p;
  odbc_text(&p, job);
  if (ostmt_prepare(t->c, sql, &s, err) != 0)
    return -1;
  const dwl_value *r;
  int rc = ostmt_execute(s, &p, NULL, 1, err);
  if (rc == 0 && (rc = ostmt_fetch(s, &r, err)) == 1) {
    st->found = 1;
    copy_text(st->checkpoint, sizeof st->checkpoint, &r[0]);
    copy_text(st->last_run_at, sizeof st->last_run_at, &r[1]);
    copy_text(st->last_status, sizeof st->last_status, &r[2]);
    copy_text(st->last_mode, sizeof st->last_mode, &r[3]);
    st->read = num(&r[4]);
    st->skipped = num(&r[5]);
    st->inserted = num(&r[6]);
    st->expired = num(&r[7]);
    st->updated = num(&r[8]);
    st->deleted = num(&r[9]);
    st->unchanged = num(&r[10]);
    st->rejected = num(&r[11]);
    st->seconds = r[12].is_null ? 0 : strtod(r[12].data, NULL);
    copy_text(st->running_since, sizeof st->running_since, &r[13]);
    copy_text(st->running_host, sizeof st->running_host, &r[14]);
    st->running_pid = num(&r[15]);
    copy_text(st->last_error, sizeof st->last_error, &r[16]);
    rc = 0;
  }
  ostmt_free(s);
  return rc < 0 ? -1 : 0;
}

/* SQLite: the database's write lock admits one writer for all its tables;
 * the latest other job marked running is most likely the writer. */
static int other_writer(target *t, const char *job, dwl_error *err)
{
  static const char sql[] = "SELECT job, running_since, running_host, running_pid FROM " DWL_STATE_TABLE
                            " WHERE running_since IS NOT NULL AND job <> ? ORDER BY running_since DESC";
  odbc_stmt *s;
  const dwl_value *r;
  dwl_value p;
  dwl_error e2;
  err_init(&e2);
  odbc_text(&p, job);
  if (!t->d->writer_probe_sql || ostmt_prepare(t->c, sql, &s, &e2) != 0)
    return 0;
  int found = ostmt_execute(s, &p, NULL, 1, &e2) == 0 && ostmt_fetch(s, &r, &e2) == 1;
  if (found)
    err_set(err, DWL_EXIT_LOCKED,
            "job '%s' is locked: another writer holds the SQLite database's write lock, which admits one writer "
            "for all its tables: job '%.*s' is running since %.*s (host %.*s, pid %.*s); try again when it has "
            "finished",
            job, (int)r[0].len, r[0].data, (int)r[1].len, r[1].data, r[2].is_null ? 1 : (int)r[2].len,
            r[2].is_null ? "?" : r[2].data, r[3].is_null ? 1 : (int)r[3].len, r[3].is_null ? "?" : r[3].data);
  ostmt_free(s);
  return found;
}

static int locked(target *t, const char *job, dwl_error *err)
{
  job_state st;
  dwl_error e2;
  err_init(&e2);
  if (state_read(t, job, &st, &e2) == 0 && st.running_since[0])
    return err_set(err, DWL_EXIT_LOCKED,
                   "job '%s' is locked: another run holds it, running since %s (host %s, pid %lld); try again "
                   "when it has finished",
                   job, st.running_since, st.running_host[0] ? st.running_host : "?", st.running_pid);
  if (!t->writer_probed && other_writer(t, job, err))
    return -1;
  if (t->writer_probed)
    return err_set(err, DWL_EXIT_LOCKED,
                   "job '%s': the SQLite database stayed busy for target.lock_timeout: no other writer holds it, "
                   "but other connections' read transactions kept the run from committing; try again later",
                   job);
  return err_set(err, DWL_EXIT_LOCKED,
                 "job '%s' is locked: another writer holds the warehouse's write lock; try again later", job);
}

int state_locked(target *t, const char *job, dwl_error *err)
{
  err_init(err);
  return locked(t, job, err);
}

/* SQLite: a reader's open transaction also makes a writer wait (in
 * rollback-journal mode, for its commit), so a busy database alone does not
 * mean another writer.  BEGIN IMMEDIATE takes only the write lock, waiting
 * the connection's Timeout (briefly, as for the job lock elsewhere); once
 * it was free, the run waits target.lock_timeout for readers. */
static int probe_writer(target *t, const char *job, dwl_error *err)
{
  int conflict;
  if (!t->d->writer_probe_sql)
    return 0;
  if (state_exec(t, t->d->writer_probe_sql, NULL, 0, &conflict, err) != 0)
    return conflict ? (err_init(err), locked(t, job, err)) : -1;
  if (state_exec(t, "ROLLBACK", NULL, 0, NULL, err) != 0)
    return -1;
  t->writer_probed = 1;
  return t->lock_done_sql[0] ? state_exec(t, t->lock_done_sql, NULL, 0, NULL, err) : 0;
}

int state_lock(target *t, const char *job, const dwl_ts *started, dwl_error *err)
{
  char since[32], host[128] = "", pid[32];
  ts_format(started, since);
  gethostname(host, sizeof host - 1);
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  dwl_value p[4];
  int conflict;
  if (probe_writer(t, job, err) != 0)
    return -1;
  /* Waiting for a lock is how a second run finds the first: only briefly. */
  if (t->d->lock_wait_sql && odbc_exec(t->c, t->d->lock_wait_sql, NULL, NULL, 0, err) != 0)
    return -1;
  job_state st;
  if (state_read(t, job, &st, err) != 0)
    return -1;
  odbc_text(&p[0], job);
  if (!st.found) {
    dwl_error dup;
    err_init(&dup);
    /* A run starting at the same moment may insert the row first. */
    if (state_exec(t, "INSERT INTO " DWL_STATE_TABLE " (job) VALUES (?)", p, 1, &conflict, &dup) != 0) {
      if (conflict)
        return locked(t, job, err);
      if (state_read(t, job, &st, err) != 0)
        return -1;
      if (!st.found)
        return err_set(err, dup.code, "%s", dup.msg);
    }
  }
  /* Committed at once, so a run that finds the lock taken can say by whom. */
  odbc_text(&p[0], since);
  odbc_text(&p[1], host);
  odbc_text(&p[2], pid);
  odbc_text(&p[3], job);
  if (state_exec(t, "UPDATE " DWL_STATE_TABLE " SET running_since = ?, running_host = ?, running_pid = ? WHERE job = ?",
                 p, 4, &conflict, err) != 0)
    return conflict ? (err_init(err), locked(t, job, err)) : -1;
  if (odbc_begin(t->c, err) != 0)
    return -1;
  /* The run's first write: it takes the lock its transaction keeps. */
  odbc_text(&p[0], job);
  if (state_exec(t, "UPDATE " DWL_STATE_TABLE " SET running_pid = running_pid WHERE job = ?", p, 1, &conflict,
                 err) != 0) {
    odbc_rollback(t->c);
    return conflict ? (err_init(err), locked(t, job, err)) : -1;
  }
  if (t->lock_done_sql[0] && odbc_exec(t->c, t->lock_done_sql, NULL, NULL, 0, err) != 0) {
    odbc_rollback(t->c);
    return -1;
  }
  return 0;
}

int state_save(target *t, const run_summary *s, dwl_error *err)
{
  char nums[9][32], when[32];
  dwl_ts now = ts_now();
  ts_format(&now, when);
  long long v[8] = {s->read, s->skipped, s->inserted, s->expired, s->updated, s->deleted, s->unchanged, s->rejected};
  dwl_value p[15];
  size_t n = 0;
  /* a snapshot load keeps its load time there (snapshot.c): no checkpoint */
  const char *cp = s->checkpoint[0] ? s->checkpoint : s->load_time;
  odbc_text(&p[n++], cp[0] ? cp : NULL);
  odbc_text(&p[n++], when);
  odbc_text(&p[n++], s->mode);
  for (int i = 0; i < 8; i++) {
    snprintf(nums[i], sizeof nums[i], "%lld", v[i]);
    odbc_text(&p[n++], nums[i]);
  }
  snprintf(nums[8], sizeof nums[8], "%.3f", s->seconds);
  odbc_text(&p[n++], nums[8]);
  odbc_text(&p[n++], s->run_id);
  odbc_text(&p[n++], s->job);
  return state_exec(t,
                    "UPDATE " DWL_STATE_TABLE " SET checkpoint = ?, last_run_at = ?, last_status = 'ok', last_mode = ?, "
                    "rows_read = ?, skipped = ?, inserted = ?, expired = ?, updated = ?, deleted = ?, unchanged = ?, "
                    "rejected = ?, seconds = ?, run_id = ?, running_since = NULL, running_host = NULL, "
                    "running_pid = NULL, last_error = NULL WHERE job = ?",
                    p, n, NULL, err);
}

void state_record_failure(target *t, const char *job, const char *status, const char *msg)
{
  /* The counts and last_run_at stay those of the last successful run. */
  char when[32], m[1000];
  dwl_ts now = ts_now();
  ts_format(&now, when);
  snprintf(m, sizeof m, "%s: %s", when, msg);
  dwl_value p[3];
  odbc_text(&p[0], status);
  odbc_text(&p[1], m);
  odbc_text(&p[2], job);
  dwl_error e2;
  err_init(&e2);
  if (state_exec(t,
                 "UPDATE " DWL_STATE_TABLE " SET last_status = ?, last_error = ?, running_since = NULL, "
                 "running_host = NULL, running_pid = NULL WHERE job = ?",
                 p, 3, NULL, &e2) != 0)
    log_msg(LOG_WARN, "could not record the failure in " DWL_STATE_TABLE ": %s", e2.msg);
}

/* ---- the run id ------------------------------------------------------------ */

/* Does the state table have the run_id column? 1 yes, 0 no (a table an
 * older dwload created), -1 an error. */
static int has_run_id(odbc_conn *c, dwl_error *err)
{
  odbc_stmt *st;
  dwl_error e2;
  err_init(&e2);
  if (ostmt_prepare(c, "SELECT run_id FROM " DWL_STATE_TABLE " WHERE 1 = 0", &st, &e2) != 0)
    return odbc_lost(c) ? err_set(err, e2.code, "%s", e2.msg) : 0;
  int rc = ostmt_execute(st, NULL, NULL, 0, &e2);
  ostmt_free(st);
  if (rc != 0)
    return odbc_lost(c) ? err_set(err, e2.code, "%s", e2.msg) : 0;
  return 1;
}

int state_ensure_run_id(target *t, dwl_error *err)
{
  int has = has_run_id(t->c, err);
  if (has != 0)
    return has < 0 ? -1 : 0;
  char tb[128], sql[256];
  dwl_column ct = {.type = DWL_TYPE_TEXT, .precision = 1000};
  snprintf(sql, sizeof sql, "ALTER TABLE " DWL_STATE_TABLE " ADD COLUMN run_id %s",
           t->d->type_sql(&ct, tb, sizeof tb));
  dwl_error e2;
  err_init(&e2);
  if (odbc_exec(t->c, sql, NULL, NULL, 0, &e2) != 0) {
    /* Two runs at once: the other one added it. */
    if (has_run_id(t->c, err) == 1)
      return 0;
    return err_set(err, e2.code, "cannot add the run_id column to " DWL_STATE_TABLE ": %s", e2.msg);
  }
  log_msg(LOG_INFO, "added the run_id column to " DWL_STATE_TABLE);
  return 0;
}

int state_read_run_id(odbc_conn *c, const dialect *d, const char *job, int wait, const char *restore_sql,
                      char *out, size_t n, dwl_error *err)
{
  out[0] = '\0';
  /* Without row locks (and FOR UPDATE) a commit is done when the call
   * returns, or not at all: nothing to wait for. */
  int lock = wait && d->row_locks;
  if (lock && (odbc_begin(c, err) != 0 || (d->lock_wait_sql && odbc_exec(c, d->lock_wait_sql, NULL, NULL, 0, err) != 0)))
    return -1;
  odbc_stmt *s;
  dwl_value p;
  odbc_text(&p, job);
  const dwl_value *r;
  int rc = ostmt_prepare(c, lock ? "SELECT run_id FROM " DWL_STATE_TABLE " WHERE job = ? FOR UPDATE"
                                 : "SELECT run_id FROM " DWL_STATE_TABLE " WHERE job = ?",
                         &s, err);
  if (rc == 0) {
    rc = ostmt_execute(s, &p, NULL, 1, err);
    if (rc == 0 && (rc = ostmt_fetch(s, &r, err)) == 1) {
      copy_text(out, n, &r[0]);
      rc = 0;
    }
    ostmt_free(s);
  }
  if (lock) {
    odbc_rollback(c);
    /* the connection goes on with the run: waiting normally again */
    dwl_error e2;
    err_init(&e2);
    if (restore_sql && restore_sql[0])
      odbc_exec(c, restore_sql, NULL, NULL, 0, &e2);
  }
  return rc < 0 ? -1 : 0;
}

void state_stored_checkpoint(target *t, const char *job, char *out, size_t n)
{
  job_state st;
  dwl_error e2;
  err_init(&e2);
  if (t->c->in_txn)
    odbc_rollback(t->c);
  if (state_read(t, job, &st, &e2) == 0)
    snprintf(out, n, "%s", st.checkpoint);
}
