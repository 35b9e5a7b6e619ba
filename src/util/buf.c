/* Growable byte buffer with a hard cap.  A failed append poisons the
 * buffer (curl's dynbuf does the same): its memory is released, later
 * appends do nothing, and buf_steal returns NULL, so text missing a piece
 * in the middle can never be used as if it were whole. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_DEFAULT_MAX ((size_t)1 << 30)

void buf_init(dwl_buf *b, size_t max)
{
  b->data = NULL;
  b->len = b->cap = 0;
  b->max = max ? max : BUF_DEFAULT_MAX;
  b->failed = 0;
}

void buf_free(dwl_buf *b)
{
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}

void buf_reset(dwl_buf *b)
{
  b->len = 0;
  b->failed = 0;
  if (b->data)
    b->data[0] = '\0';
}

static int poison(dwl_buf *b, int why)
{
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->failed = why;
  return -1;
}

int buf_grow(dwl_buf *b, size_t extra)
{
  if (b->failed)
    return -1;
  if (extra > b->max || b->len > b->max - extra)
    return poison(b, BUF_TOOBIG);
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return 0;
  size_t ncap = b->cap ? b->cap : 64;
  while (ncap < need)
    ncap *= 2;
  char *p = realloc(b->data, ncap);
  if (!p)
    return poison(b, BUF_NOMEM);
  b->data = p;
  b->cap = ncap;
  return 0;
}

int buf_add(dwl_buf *b, const void *p, size_t n)
{
  if (buf_grow(b, n) != 0)
    return -1;
  if (n)
    memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

int buf_addc(dwl_buf *b, char c)
{
  return buf_add(b, &c, 1);
}

int buf_adds(dwl_buf *b, const char *s)
{
  return buf_add(b, s, strlen(s));
}

int buf_printf(dwl_buf *b, const char *fmt, ...)
{
  if (b->failed)
    return -1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return poison(b, BUF_NOMEM);
  if (buf_grow(b, (size_t)n) != 0)
    return -1;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

int buf_taint(dwl_buf *dst, const dwl_buf *src)
{
  if (src->failed && !dst->failed)
    poison(dst, src->failed);
  return dst->failed ? -1 : 0;
}

int buf_failed(const dwl_buf *b)
{
  return b->failed;
}

char *buf_steal(dwl_buf *b)
{
  if (b->failed) {
    b->failed = 0;
    return NULL;
  }
  char *p = b->data;
  if (!p) {
    p = malloc(1);
    if (p)
      p[0] = '\0';
  }
  b->data = NULL;
  b->len = b->cap = 0;
  return p;
}
