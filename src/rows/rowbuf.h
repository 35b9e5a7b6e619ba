/* Row buffer: rows of values copied into one growing byte buffer and read
 * back as dwl_values, for the writer's short-lived rows (a batch of
 * pending inserts in batch.c, a page of a stage read back in
 * staged_lists.c).  Offsets, not pointers, are kept while it fills, since
 * the bytes move as they grow; rowbuf_get's values are valid until the
 * next add, reset or free.  Lighter than rowset.h (no fingerprints, no
 * stable pointers): emptied and refilled, not kept. */
#ifndef DWL_ROWBUF_H
#define DWL_ROWBUF_H

#include <stddef.h>

#include "buf.h"
#include "dwload/plugin.h"

typedef struct rowbuf_cell {
  size_t off, len;
  int is_null;
} rowbuf_cell;

typedef struct rowbuf {
  size_t ncols;
  size_t n, cap;           /* rows held, rows there is room for */
  rowbuf_cell *cells;      /* cap * ncols */
  dwl_buf bytes;           /* the values' bytes */
} rowbuf;

void rowbuf_init(rowbuf *rb, size_t ncols);
void rowbuf_free(rowbuf *rb);
/* Room for `rows` rows in all without growing: 0, or -1 out of memory. */
int rowbuf_reserve(rowbuf *rb, size_t rows);
/* Copies the row's ncols values in: 0, or -1 out of memory, the row not
 * added.  Once the bytes failed, every later add fails too until
 * rowbuf_reset (buf.h): a row is never half there. */
int rowbuf_add(rowbuf *rb, const dwl_value *row);
/* Drops the last row (its bytes stay until rowbuf_reset): 1, or 0 when
 * there is none. */
int rowbuf_pop(rowbuf *rb);
/* Value col of row `row`: data NULL for a NULL, "" for an empty value. */
dwl_value rowbuf_get(const rowbuf *rb, size_t row, size_t col);
/* No rows; the memory is kept for the next fill. */
void rowbuf_reset(rowbuf *rb);

#endif
