/* Row set: the delta held in memory between reading the source and
 * computing changes.  Rows are copied into an arena of fixed chunks so
 * pointers stay valid while the set grows; only rows past the checkpoint
 * land here, so memory follows the delta, not the dimension. */
#ifndef DWL_ROWSET_H
#define DWL_ROWSET_H

#include <stddef.h>
#include <stdint.h>

#include "dwload/plugin.h"
#include "fingerprint.h"
#include "ts.h"

typedef struct rs_row {
  dwl_value *vals;     /* ncols values, in source column order */
  uint64_t origin;     /* source line / page / row number */
  size_t seq;          /* arrival order */
  dwl_ts lmd;
  fp128 key;           /* business key */
  fp128 fp2;           /* type 2 values (upsert: all non-key values) */
  fp128 fp1;           /* type 1 values */
} rs_row;

typedef struct rs_chunk rs_chunk;

typedef struct rowset {
  size_t ncols;
  rs_row *rows;
  size_t n, cap;
  rs_chunk *chunks;    /* arena */
  size_t bytes;        /* bytes held, for reporting */
  size_t used;         /* bytes the rows take (their entries, values and text), not the spare room */
} rowset;

void rowset_init(rowset *r, size_t ncols);
void rowset_free(rowset *r);
/* Copies the values; returns the new row (valid until rowset_free) or NULL
 * on ENOMEM.  Row pointers stay valid; the rows array itself may move, so
 * keep indexes, not rs_row pointers, across adds. */
rs_row *rowset_add(rowset *r, const dwl_value *vals, uint64_t origin);

#endif
