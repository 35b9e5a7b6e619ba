/* run --metrics-file: the run's metrics in the Prometheus text exposition
 * format, for node_exporter's textfile collector.  The file is replaced
 * whole: written to a temporary file in its folder (a name that does not
 * end in .prom, which the collector skips), flushed to disk, then renamed
 * over the old one, so a scrape sees the last run or this one, never half
 * of one.  The time of the last successful run is carried over from the
 * old file when this run failed.  Best effort, as lineage: a failure is a
 * warning and changes neither the run's outcome nor its exit status. */
#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "state.h"
#include "ts.h"

#define LAST_SUCCESS "dwload_last_success_timestamp_seconds"

/* The job's label, "{job=\"NAME\"" without its closing brace (a sample may
 * add more labels); \, " and newline escaped, as the format wants
 * (a job name has none of them today; the format is not to depend on it). */
static void label(dwl_buf *b, const char *job)
{
  buf_adds(b, "{job=\"");
  for (const char *p = job; *p; p++) {
    if (*p == '\\' || *p == '"')
      buf_addc(b, '\\');
    if (*p == '\n')
      buf_adds(b, "\\n");
    else
      buf_addc(b, *p);
  }
  buf_adds(b, "\"");
}

/* The old file's last success time for the job's label; 0 when none. */
static double previous_success(const char *path, const char *lab)
{
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char line[1024];
  size_t n = strlen(LAST_SUCCESS), ln = strlen(lab);
  double v = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, LAST_SUCCESS, n) == 0 && strncmp(line + n, lab, ln) == 0 && line[n + ln] == '}' &&
        line[n + ln + 1] == ' ')
      v = strtod(line + n + ln + 2, NULL);
  fclose(f);
  return v;
}

static void metric(dwl_buf *b, const char *name, const char *help, const char *lab, const char *extra, double v)
{
  /* HELP and TYPE once per name: before its first sample */
  if (help)
    buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
  buf_printf(b, "%s%s%s%s} %.17g\n", name, lab, extra ? "," : "", extra ? extra : "", v);
}

/* The text of the file. */
static char *exposition(const char *lab, const run_summary *s, int exit_code, double end, double last_ok)
{
  dwl_buf b;
  buf_init(&b, 0);
  summary_count rows[SUMMARY_NCOUNTS];
  summary_counts(s, rows);
  for (size_t i = 0; i < SUMMARY_NCOUNTS; i++) {
    char kind[40];
    snprintf(kind, sizeof kind, "kind=\"%s\"", rows[i].name);
    metric(&b, "dwload_run_rows", i ? NULL : "Rows of the job's last run, by what the run did with them.", lab, kind,
           (double)rows[i].v);
  }
  metric(&b, "dwload_run_success", "1 when the job's last run committed, else 0.", lab, NULL, s->ok ? 1 : 0);
  metric(&b, "dwload_run_exit_code", "The exit status of the job's last run.", lab, NULL, exit_code);
  metric(&b, "dwload_run_duration_seconds", "How long the job's last run took.", lab, NULL, s->seconds);
  metric(&b, "dwload_run_timestamp_seconds", "When the job's last run ended, in Unix time.", lab, NULL, end);
  if (last_ok > 0)
    metric(&b, LAST_SUCCESS, "When a run of the job last committed, in Unix time.", lab, NULL, last_ok);
  /* a point in time (a composite's first column), not a sequence */
  dwl_ts cp;
  dwl_error e2;
  err_init(&e2);
  int seq = 1;
  if (s->checkpoint[0] && state_checkpoint("", s->checkpoint, &cp, &seq, &e2) == 0 && !seq) {
    double at = (double)cp.us / 1e6;
    metric(&b, "dwload_checkpoint_timestamp_seconds", "The job's stored checkpoint, in Unix time.", lab, NULL, at);
    metric(&b, "dwload_checkpoint_lag_seconds",
           "How far the stored checkpoint lies behind the end of the job's last run.", lab, NULL, end - at);
  }
  return buf_steal(&b);
}

/* Writes text to a temporary file beside path, then renames it over path. */
static int replace_file(const char *path, const char *text, char *why, size_t n)
{
  size_t len = strlen(path) + 8;
  char *tmp = malloc(len);
  if (!tmp)
    return snprintf(why, n, "out of memory"), -1;
  snprintf(tmp, len, "%s.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(why, n, "cannot create a temporary file beside it: %s", strerror(errno));
    free(tmp);
    return -1;
  }
  size_t tl = strlen(text);
  /* mkstemp makes it 0600: the collector may run as another user */
  int rc = fchmod(fd, 0644) == 0 && write(fd, text, tl) == (ssize_t)tl && fsync(fd) == 0 ? 0 : -1;
  int e = errno;
  if (close(fd) != 0 && rc == 0) {
    rc = -1;
    e = errno;
  }
  if (rc == 0 && rename(tmp, path) != 0) {
    rc = -1;
    e = errno;
  }
  if (rc != 0) {
    snprintf(why, n, "%s", strerror(e));
    unlink(tmp);
  }
  free(tmp);
  return rc;
}

void metrics_write(const char *path, const run_summary *s, int exit_code)
{
  if (!path || !s->job[0])
    return;
  dwl_buf lb;
  buf_init(&lb, 0);
  label(&lb, s->job);
  char *lab = buf_steal(&lb);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  double end = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
  char why[300] = "out of memory";
  char *text = lab ? exposition(lab, s, exit_code, end, s->ok ? end : previous_success(path, lab)) : NULL;
  if (!text || replace_file(path, text, why, sizeof why) != 0)
    log_msg(LOG_WARN, "could not write the metrics file %s: %s", path, why);
  else
    log_msg(LOG_DEBUG, "wrote the metrics file %s", path);
  free(text);
  free(lab);
}
