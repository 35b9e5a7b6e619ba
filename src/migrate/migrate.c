/* dwload migrate's run: the two sides of a table, one table's job from
 * its catalog to its verification, the workers that take the tables
 * (--jobs), the stop of the others when one fails, the progress line and
 * the summary.  Connections and dialects are the ones `run` uses
 * (target.c); rows are written by insert.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "migrate_impl.h"
#include "progress.h"
#include "summary.h"

int side_open(side *s, const char *conn, const char *table, dwl_error *err)
{
  memset(s, 0, sizeof *s);
  s->spec.path = (char *)"migrate";
  s->spec.job = (char *)"migrate";
  s->spec.target_connection = (char *)conn;
  s->spec.target_table = (char *)table;
  s->spec.mode = MODE_APPEND;
  return target_connect(&s->spec, &s->t, err);
}

void side_close(side *s)
{
  target_free(s->t);
  s->t = NULL;
}

void progress_line(tjob *j, long long rows, int end)
{
  progress_count("migrate", j->mt->name, rows, now_s() - j->t0, end);
}

int stopped(tjob *j, dwl_error *err)
{
  pthread_mutex_lock(&j->m->mu);
  int f = j->m->failed;
  pthread_mutex_unlock(&j->m->mu);
  if (!f)
    return 0;
  j->mt->stopped = 1;
  return err_set(err, DWL_EXIT_FAILED, "table %s: stopped, another table failed", j->mt->name);
}

static int migrate_table(mig *m, mig_table *mt, dwl_error *err)
{
  const mig_opts *o = m->o;
  tjob j;
  memset(&j, 0, sizeof j);
  j.m = m;
  j.mt = mt;
  j.t0 = now_s();
  buf_init(&j.hb, 0);
  buf_init(&j.bkeys, 0);
  progress pr = {0};
  int rc = side_open(&j.src, o->from, mt->name, err);
  if (rc == 0)
    rc = side_open(&j.dst, o->to, mt->name, err);
  if (rc == 0)
    rc = read_meta(&j, err);
  if (rc == 0) {
    if (j.dst.t->d->key_bytes)
      key_text_share(&j, j.dst.t->d->key_bytes);
    if (j.npk == 0)
      log_msg(LOG_WARN, "table %s has no primary key: it is copied in one transaction, and --resume starts it over",
              mt->name);
    j.norm = calloc(j.ncols, sizeof *j.norm);
    j.row = calloc(j.ncols, sizeof *j.row);
    j.packed = calloc(j.ncols, sizeof *j.packed);
    if (!j.norm || !j.row || !j.packed)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < j.ncols; i++)
      buf_init(&j.norm[i], 0);
  }
  if (rc == 0)
    rc = target_layout(j.src.t, j.cols, j.ncols, err);
  if (rc == 0)
    rc = target_layout(j.dst.t, j.cols, j.ncols, err);
  if (rc == 0)
    rc = start_table(&j, &pr, err);
  if (rc == 0 && !pr.done)
    rc = copy_table(&j, &pr, err);
  else if (rc == 0)
    log_msg(LOG_INFO, "table %s: copied by an earlier run", mt->name);
  if (rc == 0 && o->verify)
    rc = verify_table(&j, &pr, err);
  if (rc == 0)
    log_msg(LOG_INFO, "table %s: %lld rows copied, %.2fs", mt->name, mt->copied, now_s() - j.t0);
  json_decref(pr.key);
  for (size_t i = 0; j.norm && i < j.ncols; i++)
    buf_free(&j.norm[i]);
  free(j.norm);
  free(j.row);
  free(j.packed);
  buf_free(&j.hb);
  buf_free(&j.bkeys);
  free(j.blen);
  free(j.boff);
  for (size_t i = 0; j.names && i < j.ncols; i++)
    free(j.names[i]);
  free(j.names);
  free(j.cols);
  free(j.pk);
  side_close(&j.src);
  side_close(&j.dst);
  return rc;
}

static void *worker(void *arg)
{
  mig *m = arg;
  for (;;) {
    pthread_mutex_lock(&m->mu);
    size_t i = m->next < m->n && !m->failed ? m->next++ : m->n;
    pthread_mutex_unlock(&m->mu);
    if (i >= m->n)
      return NULL;
    if (migrate_table(m, &m->t[i], &m->t[i].err) != 0) {
      pthread_mutex_lock(&m->mu);
      m->failed = 1;
      pthread_mutex_unlock(&m->mu);
    }
  }
}

int migrate_run(const mig_opts *o)
{
  double t0 = now_s();
  migrate_summary sum = {0};
  dwl_error err;
  err_init(&err);
  mig m = {.o = o};
  pthread_mutex_init(&m.mu, NULL);
  int rc = 0;
  const char *one_writer = NULL;
  char **names = o->tables;
  size_t nnames = o->ntables;
  if (o->all) {
    names = NULL;
    nnames = 0;
    rc = list_tables(o->from, &names, &nnames, &err);
  }
  for (size_t i = 0; rc == 0 && i < nnames; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[i], names[k]) == 0)
        rc = err_set(&err, DWL_EXIT_USAGE, "table %s is given twice", names[i]);
  if (rc == 0)
    rc = progress_ensure(o, &one_writer, &err);
  if (rc == 0) {
    m.n = nnames;
    m.t = calloc(nnames ? nnames : 1, sizeof *m.t);
    if (!m.t)
      rc = err_set(&err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < nnames; i++) {
      m.t[i].name = names[i];
      err_init(&m.t[i].err);
    }
  }
  if (rc == 0) {
    long jobs = o->jobs < (long)nnames ? o->jobs : (long)(nnames ? nnames : 1);
    /* One writer at a time: parallel chunks would wait on it. */
    if (jobs > 1 && one_writer) {
      log_msg(LOG_INFO, "the target is %s: tables are copied one at a time", one_writer);
      jobs = 1;
    }
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    long started = 0;
    if (!th)
      rc = err_set(&err, DWL_EXIT_FAILED, "out of memory");
    for (long i = 1; rc == 0 && i < jobs; i++, started++)
      if (pthread_create(&th[i], NULL, worker, &m) != 0)
        break;
    if (rc == 0)
      worker(&m);
    for (long i = 1; i <= started; i++)
      pthread_join(th[i], NULL);
    free(th);
  }
  /* The table that failed first is named, not one stopped because of it. */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < m.n; i++)
      if (m.t[i].err.code && !err.code && (pass || !m.t[i].stopped)) {
        err = m.t[i].err;
        snprintf(sum.failed, sizeof sum.failed, "%s", m.t[i].name);
      }
  for (size_t i = 0; i < m.n; i++) {
    sum.copied += m.t[i].copied;
    sum.rows += m.t[i].rows;
    sum.verified += m.t[i].verified;
    if (!m.t[i].err.code && (m.t[i].verified || !o->verify))
      sum.tables++;
  }
  if (rc == 0 && err.code)
    rc = -1;
  if (rc != 0)
    log_msg(LOG_ERROR, "%s", err.msg);
  sum.ok = rc == 0;
  sum.seconds = now_s() - t0;
  migrate_summary_print(&sum, stdout);
  pthread_mutex_destroy(&m.mu);
  free(m.t);
  if (o->all) {
    for (size_t i = 0; i < nnames; i++)
      free(names[i]);
    free(names);
  }
  return rc == 0 ? DWL_EXIT_OK : err.code ? err.code : DWL_EXIT_FAILED;
}
