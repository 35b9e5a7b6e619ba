/* The first-error-wins error record shared by every module of the host,
 * and the one table that turns an error's cause into its exit code. */
#include "err.h"

#include <stdio.h>
#include <string.h>

/* Failures a retry cannot fix: the same job against the same table and
 * source fails the same way until someone changes one of them.  A
 * scheduler reads exit 4 as "fail now" and exit 1 as "retry": so a cause
 * goes here only when no retry could ever succeed without a person. */
static const struct {
  int cause;
  int code;
} cause_exit[] = {
  {DWL_CAUSE_SCHEMA, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_REJECTS, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_REJECT_FILE, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_GUARD, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_PLUGIN_NOT_FOUND, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_NOT_PLUGIN, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_PLUGIN_ABI, DWL_EXIT_PERMANENT},
  {DWL_CAUSE_NON_ATOMIC, DWL_EXIT_PERMANENT},
};

int err_exit_for(int cause, int code)
{
  for (size_t i = 0; i < sizeof cause_exit / sizeof cause_exit[0]; i++)
    if (cause_exit[i].cause == cause)
      return cause_exit[i].code;
  return code;
}

void err_init(dwl_error *e)
{
  e->code = 0;
  e->cause = DWL_CAUSE_NONE;
  e->msg[0] = '\0';
  e->sqlstate[0] = '\0';
  e->native = 0;
}

int err_vset(dwl_error *e, int code, const char *fmt, va_list ap)
{
  if (e->code != 0)
    return -1;  /* the root cause is already recorded */
  e->code = code ? code : DWL_EXIT_FAILED;
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  return -1;
}

int err_set(dwl_error *e, int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  err_vset(e, code, fmt, ap);
  va_end(ap);
  return -1;
}

int err_setc(dwl_error *e, int code, int cause, const char *fmt, ...)
{
  /* An error already recorded keeps its cause with its message. */
  if (e->code != 0)
    return -1;
  va_list ap;
  va_start(ap, fmt);
  err_vset(e, code, fmt, ap);
  va_end(ap);
  e->cause = cause;
  e->code = err_exit_for(cause, e->code);
  return -1;
}

int err_cause(dwl_error *e, int cause)
{
  if (e->code != 0 && e->cause == DWL_CAUSE_NONE) {
    e->cause = cause;
    e->code = err_exit_for(cause, e->code);
  }
  return -1;
}

void err_prefix(dwl_error *e, const char *fmt, ...)
{
  char head[512], old[sizeof e->msg];
  /* The root cause goes last and keeps most of the room. */
  va_list ap;
  if (e->code == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, e->msg, sizeof old);
  snprintf(e->msg, sizeof e->msg, "%.400s: %.1600s", head, old);
}

int err_isset(const dwl_error *e)
{
  return e->code != 0;
}

const char *err_quote(char *out, size_t n, const char *s, size_t len, size_t max)
{
  size_t o = 0, take = len > max ? max : len;
  if (n == 0)
    return out;
  for (size_t i = 0; i < take && o + 5 < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *e = c == 0 ? "\\0" : c == '\r' ? "\\r" : c == '\n' ? "\\n" : c == '\t' ? "\\t" : NULL;
    if (e) {
      memcpy(out + o, e, 2);
      o += 2;
    } else if (c < 0x20 || c == 0x7f) {
      o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
    } else {
      out[o++] = (char)c;
    }
  }
  if (take < len && o + 4 < n) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
  return out;
}
