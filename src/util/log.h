/* Logging to stderr: one line per message with a UTC timestamp, the level
 * and the job name, as text or as one JSON object per line. */
#ifndef DWL_LOG_H
#define DWL_LOG_H

#include <stdarg.h>

enum { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };
enum { LOG_TEXT = 0, LOG_JSON = 1 };

void log_set_level(int level);
int log_get_level(void);
void log_set_format(int format);     /* LOG_TEXT or LOG_JSON */
int log_get_format(void);
/* "error", "warn", "info", "debug" -> LOG_*; -1 for anything else. */
int log_parse_level(const char *name);
void log_set_job(const char *job);   /* copied; NULL clears */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as a JSON string (jansson's json_t); bytes a bad source's text may
 * hold that are not UTF-8 become '?', which jansson would refuse.  Also
 * for the OpenLineage events (cmd/lineage.c). */
struct json_t;
struct json_t *log_json_text(const char *s);

/* Extra members of a JSON log line; text lines leave them out, their
 * message says the same in words. */
typedef struct log_field {
  const char *key;
  const char *str;      /* a string, or NULL for the number */
  long long num;
} log_field;

/* A message with fields; `hint` (may be NULL) says what to do next: a
 * "hint" member in JSON, a second line in text. */
void log_fields(int level, const log_field *fields, int nfields, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
