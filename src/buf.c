/* Growable byte buffer with a hard cap. */
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
}

void buf_free(dwl_buf *b)
{
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

void buf_reset(dwl_buf *b)
{
  b->len = 0;
  if (b->data)
    b->data[0] = '\0';
}

int buf_grow(dwl_buf *b, size_t extra)
{
  if (extra > b->max || b->len > b->max - extra)
    return -1;
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return 0;
  size_t ncap = b->cap ? b->cap : 64;
  while (ncap < need)
    ncap *= 2;
  char *p = realloc(b->data, ncap);
  if (!p)
    return -1;
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
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || buf_grow(b, (size_t)n) != 0)
    return -1;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

char *buf_steal(dwl_buf *b)
{
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
