/* Logging to stderr: one line per message, with level and job name. */
#ifndef DWL_LOG_H
#define DWL_LOG_H

#include <stdarg.h>

enum { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

void log_set_level(int level);
void log_set_job(const char *job);   /* copied; NULL clears */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap);

#endif
