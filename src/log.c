/* Logging to stderr.  Lines carry a UTC timestamp, the level and the job,
 * so interleaved scheduler logs stay readable. */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int log_level = LOG_INFO;
static char log_job[128];

void log_set_level(int level) { log_level = level; }

void log_set_job(const char *job)
{
  if (!job) {
    log_job[0] = '\0';
    return;
  }
  snprintf(log_job, sizeof log_job, "%s", job);
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
  static const char *const names[] = {"error", "warn", "info", "debug"};
  if (level > log_level)
    return;
  char when[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  char line[4096];
  vsnprintf(line, sizeof line, fmt, ap);
  if (log_job[0])
    fprintf(stderr, "%s dwload[%s] %s: %s\n", when, log_job, names[level < 0 ? 0 : level > 3 ? 3 : level], line);
  else
    fprintf(stderr, "%s dwload %s: %s\n", when, names[level < 0 ? 0 : level > 3 ? 3 : level], line);
}

void log_msg(int level, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  log_vmsg(level, fmt, ap);
  va_end(ap);
}
