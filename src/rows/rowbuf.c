/* Row buffer (rowbuf.h): cells of offsets into one dwl_buf. */
#include "rowbuf.h"

#include <stdint.h>
#include <stdlib.h>

void rowbuf_init(rowbuf *rb, size_t ncols)
{
  *rb = (rowbuf){.ncols = ncols};
  buf_init(&rb->bytes, 0);
}

void rowbuf_free(rowbuf *rb)
{
  free(rb->cells);
  buf_free(&rb->bytes);
  rowbuf_init(rb, rb->ncols);
}

int rowbuf_reserve(rowbuf *rb, size_t rows)
{
  if (rows <= rb->cap)
    return 0;
  size_t per = rb->ncols ? rb->ncols : 1;
  if (rows > SIZE_MAX / sizeof *rb->cells / per)
    return -1;
  rowbuf_cell *c = realloc(rb->cells, rows * per * sizeof *c);
  if (!c)
    return -1;
  rb->cells = c;
  rb->cap = rows;
  return 0;
}

int rowbuf_add(rowbuf *rb, const dwl_value *row)
{
  if (buf_failed(&rb->bytes) || (rb->n == rb->cap && rowbuf_reserve(rb, rb->cap ? rb->cap * 2 : 256) != 0))
    return -1;
  rowbuf_cell *c = &rb->cells[rb->n * rb->ncols];
  for (size_t i = 0; i < rb->ncols; i++) {
    c[i].is_null = row[i].is_null;
    c[i].len = row[i].is_null ? 0 : row[i].len;
    c[i].off = rb->bytes.len;
    if (!row[i].is_null && buf_add(&rb->bytes, row[i].data, row[i].len) != 0)
      return -1;
  }
  rb->n++;
  return 0;
}

int rowbuf_pop(rowbuf *rb)
{
  if (rb->n == 0)
    return 0;
  rb->n--;
  return 1;
}

dwl_value rowbuf_get(const rowbuf *rb, size_t row, size_t col)
{
  const rowbuf_cell *c = &rb->cells[row * rb->ncols + col];
  /* (a buffer of only empty values may have no bytes at all) */
  return (dwl_value){.data = c->is_null ? NULL : c->len ? rb->bytes.data + c->off : "",
                     .len = c->len, .is_null = c->is_null};
}

void rowbuf_reset(rowbuf *rb)
{
  rb->n = 0;
  buf_reset(&rb->bytes);
}
