/* Growable byte buffer with a size cap (curl's dynbuf idea): an append
 * that fails (the cap, or no memory) poisons the buffer: its text is
 * dropped (data NULL, len 0), every later append fails without effect,
 * and buf_steal returns NULL.  Only buf_reset or buf_free start over.
 * So a statement missing a piece in the middle is never whole-looking:
 * checking the last append, or the result, is enough. */
#ifndef DWL_BUF_H
#define DWL_BUF_H

#include <stddef.h>

typedef struct dwl_buf {
  char *data;      /* always NUL-terminated when non-NULL */
  size_t len;
  size_t cap;
  size_t max;      /* hard cap on len; 0 = 1 GiB */
  int failed;      /* 0, or why an append failed: BUF_TOOBIG, BUF_NOMEM */
} dwl_buf;

enum { BUF_TOOBIG = 1, BUF_NOMEM = 2 };

void buf_init(dwl_buf *b, size_t max);
void buf_free(dwl_buf *b);
void buf_reset(dwl_buf *b);            /* len = 0, not failed; keeps memory */
int buf_add(dwl_buf *b, const void *p, size_t n);   /* 0 ok, -1 cap or ENOMEM */
/* Ensures room for `extra` more bytes plus the terminator: cap >= len+extra+1. */
int buf_grow(dwl_buf *b, size_t extra);
int buf_addc(dwl_buf *b, char c);
int buf_adds(dwl_buf *b, const char *s);
int buf_printf(dwl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0, or BUF_TOOBIG / BUF_NOMEM when an append failed since the last
 * buf_init, buf_reset or buf_free. */
int buf_failed(const dwl_buf *b);
/* Poisons dst when src failed: for text built in one buffer and then
 * printed into another with %s, where src's NULL data would otherwise
 * print as "(null)".  0, or -1 when dst has failed. */
int buf_taint(dwl_buf *dst, const dwl_buf *src);
/* Returns data (caller frees) and resets b; NULL when b failed (or no
 * memory for an empty string). */
char *buf_steal(dwl_buf *b);

#endif
