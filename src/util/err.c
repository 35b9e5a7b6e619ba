/* The first-error-wins error record shared by every module of the host. */
#include "err.h"

#include <stdio.h>
#include <string.h>

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
  return -1;
}

int err_cause(dwl_error *e, int cause)
{
  if (e->code != 0 && e->cause == DWL_CAUSE_NONE)
    e->cause = cause;
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
