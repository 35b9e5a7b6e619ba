/* Growable byte buffer with a size cap (curl's dynbuf idea): every append
 * either succeeds or leaves the buffer unchanged and reports failure. */
#ifndef DWL_BUF_H
#define DWL_BUF_H

#include <stddef.h>

typedef struct dwl_buf {
  char *data;      /* always NUL-terminated when non-NULL */
  size_t len;
  size_t cap;
  size_t max;      /* hard cap on len; 0 = 1 GiB */
} dwl_buf;

void buf_init(dwl_buf *b, size_t max);
void buf_free(dwl_buf *b);
void buf_reset(dwl_buf *b);            /* len = 0, keeps memory */
int buf_add(dwl_buf *b, const void *p, size_t n);   /* 0 ok, -1 cap or ENOMEM */
/* Ensures room for `extra` more bytes plus the terminator: cap >= len+extra+1. */
int buf_grow(dwl_buf *b, size_t extra);
int buf_addc(dwl_buf *b, char c);
int buf_adds(dwl_buf *b, const char *s);
int buf_printf(dwl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *buf_steal(dwl_buf *b);           /* returns data (caller frees), resets b */

#endif
