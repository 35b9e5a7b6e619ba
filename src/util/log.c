/* Logging to stderr.  Lines carry a UTC timestamp, the level and the job,
 * so interleaved scheduler logs stay readable; --log-format json makes
 * each line one JSON object for log collectors.  A live progress line on
 * the terminal is cleared before each line is written (progress.c). */
#include "log.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "err.h"
#include "progress.h"

static int log_level = LOG_INFO;
static int log_format = LOG_TEXT;
static char log_job[128];

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(int level) { log_level = level; }
int log_get_level(void) { return log_level; }
void log_set_format(int format) { log_format = format; }
int log_get_format(void) { return log_format; }

int log_parse_level(const char *name)
{
  for (int i = 0; i < 4; i++)
    if (strcasecmp(name, level_names[i]) == 0)
      return i;
  return -1;
}

void log_set_job(const char *job)
{
  if (!job) {
    log_job[0] = '\0';
    return;
  }
  snprintf(log_job, sizeof log_job, "%s", job);
}

/* jansson refuses strings that are not UTF-8, and messages may quote bytes
 * of a bad source file: those bytes become '?'. */
json_t *log_json_text(const char *s)
{
  json_t *j = json_string(s);
  if (j)
    return j;
  char *copy = strdup(s);
  if (!copy)
    return json_string("?");
  for (char *p = copy; *p; p++)
    if ((unsigned char)*p >= 0x80)
      *p = '?';
  j = json_string(copy);
  free(copy);
  return j;
}

static void emit_json(FILE *out, const char *when, const char *level, const log_field *f, int nf,
                      const char *hint, const char *msg)
{
  json_t *o = json_object();
  json_object_set_new(o, "ts", json_string(when));
  json_object_set_new(o, "level", json_string(level));
  json_object_set_new(o, "job", log_job[0] ? log_json_text(log_job) : json_null());
  json_object_set_new(o, "msg", log_json_text(msg));
  for (int i = 0; i < nf; i++)
    json_object_set_new(o, f[i].key, f[i].str ? log_json_text(f[i].str) : json_integer(f[i].num));
  if (hint)
    json_object_set_new(o, "hint", log_json_text(hint));
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (line) {
    fprintf(out, "%s\n", line);
    free(line);
  }
  json_decref(o);
}

/* A text line shows every byte and stays one line: a CR or an ESC in a
 * message (a driver's words, a name from a source) would rewrite the
 * terminal's line, and a line feed (drivers end or fold their messages
 * with one) would split one log line into two for whatever reads the log
 * line by line.  Trailing line feeds are dropped, inner ones written as
 * \n like the other control bytes; tabs stay. */
static const char *visible(const char *msg, char *out, size_t n)
{
  size_t o = 0, len = strlen(msg);
  while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
    len--;
  for (const char *p = msg; p < msg + len && o + 5 < n; p++) {
    unsigned char c = (unsigned char)*p;
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      char e[8];
      size_t k = strlen(err_quote(e, sizeof e, p, 1, 1));
      memcpy(out + o, e, k);
      o += k;
    } else {
      out[o++] = *p;
    }
  }
  out[o] = '\0';
  return out;
}

static void emit_text(FILE *out, const char *when, const char *level, const log_field *f, int nf,
                      const char *hint, const char *msg)
{
  char shown[4096 * 2];
  msg = visible(msg, shown, sizeof shown);
  char who[160];
  if (log_job[0])
    snprintf(who, sizeof who, "dwload[%s]", log_job);
  else
    snprintf(who, sizeof who, "dwload");
  (void)f;
  (void)nf;
  fprintf(out, "%s %s %s: %s\n", when, who, level, msg);
  if (hint)
    fprintf(out, "%s %s hint: %s\n", when, who, visible(hint, shown, sizeof shown));
}

static void emit(int level, const log_field *f, int nf, const char *hint, const char *fmt, va_list ap)
{
  if (level > log_level)
    return;
  char when[40];
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm tm;
  gmtime_r(&now.tv_sec, &tm);
  size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  /* Milliseconds in JSON, where collectors order lines by time. */
  if (log_format == LOG_JSON)
    snprintf(when + n, sizeof when - n, ".%03dZ", (int)(now.tv_nsec / 1000000));
  else
    snprintf(when + n, sizeof when - n, "Z");
  char msg[4096];
  vsnprintf(msg, sizeof msg, fmt, ap);
  const char *name = level_names[level < 0 ? 0 : level > 3 ? 3 : level];
  progress_hold();
  if (log_format == LOG_JSON)
    emit_json(stderr, when, name, f, nf, hint, msg);
  else
    emit_text(stderr, when, name, f, nf, hint, msg);
  fflush(stderr);
  progress_release();
}

void log_msg(int level, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  emit(level, NULL, 0, NULL, fmt, ap);
  va_end(ap);
}

void log_fields(int level, const log_field *fields, int nfields, const char *hint, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  emit(level, fields, nfields, hint, fmt, ap);
  va_end(ap);
}
