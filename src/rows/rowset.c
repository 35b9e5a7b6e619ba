/* Row set arena: rows copied into 1 MiB chunks (bigger for huge values). */
#include "rowset.h"

#include <stdlib.h>
#include <string.h>

#define RS_CHUNK ((size_t)1 << 20)

struct rs_chunk {
  rs_chunk *next;
  size_t used, cap;
  max_align_t data[];
};

void rowset_init(rowset *r, size_t ncols)
{
  memset(r, 0, sizeof *r);
  r->ncols = ncols;
}

void rowset_free(rowset *r)
{
  rs_chunk *c = r->chunks;
  while (c) {
    rs_chunk *n = c->next;
    free(c);
    c = n;
  }
  free(r->rows);
  memset(r, 0, sizeof *r);
}

static void *arena_alloc(rowset *r, size_t n)
{
  n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
  rs_chunk *c = r->chunks;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > RS_CHUNK ? n : RS_CHUNK;
    c = malloc(sizeof *c + cap);
    if (!c)
      return NULL;
    c->cap = cap;
    c->used = 0;
    c->next = r->chunks;
    r->chunks = c;
    r->bytes += sizeof *c + cap;
  }
  void *p = (char *)c->data + c->used;
  c->used += n;
  return p;
}

rs_row *rowset_add(rowset *r, const dwl_value *vals, uint64_t origin)
{
  if (r->n == r->cap) {
    size_t ncap = r->cap ? r->cap * 2 : 1024;
    rs_row *nr = realloc(r->rows, ncap * sizeof *nr);
    if (!nr)
      return NULL;
    r->bytes += (ncap - r->cap) * sizeof *nr;
    r->rows = nr;
    r->cap = ncap;
  }
  size_t text = 0;
  for (size_t i = 0; i < r->ncols; i++)
    if (!vals[i].is_null)
      text += vals[i].len + 1;
  dwl_value *v = arena_alloc(r, r->ncols * sizeof *v + text);
  if (!v)
    return NULL;
  char *p = (char *)(v + r->ncols);
  for (size_t i = 0; i < r->ncols; i++) {
    v[i].is_null = vals[i].is_null;
    v[i].len = vals[i].is_null ? 0 : vals[i].len;
    v[i].data = NULL;
    if (!vals[i].is_null) {
      if (vals[i].len)
        memcpy(p, vals[i].data, vals[i].len);
      p[vals[i].len] = '\0';
      v[i].data = p;
      p += vals[i].len + 1;
    }
  }
  rs_row *row = &r->rows[r->n];
  r->used += sizeof *row + r->ncols * sizeof *v + text;
  memset(row, 0, sizeof *row);
  row->vals = v;
  row->origin = origin;
  row->seq = r->n;
  r->n++;
  return row;
}
