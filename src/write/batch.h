/* Bulk inserts into one table: the one bulk path.  Rows are buffered and
 * sent as multi-row INSERT ... VALUES statements with bound parameters,
 * as many rows per statement as the dialect's max_params allows; where
 * the dialect has arrays they go as one array parameter per column
 * (array_types_sql), or, for a whole table row, as one array of the
 * table's row type (row_array_*), sent on the connection's own thread.
 * A batch needs nothing but a connection, a dialect and a table: the
 * writer's inserts and stages use it, and so can any caller with rows. */
#ifndef DWL_BATCH_H
#define DWL_BATCH_H

#include <stdio.h>

#include "dialect.h"
#include "dwload/plugin.h"
#include "err.h"
#include "odbc_conn.h"

typedef struct batch batch;

typedef struct batch_opts {
  /* Prefixes a failure ("inserting into t"); borrowed, it must outlive the
   * batch.  NULL: no prefix. */
  const char *what;
  /* Rows go through bound parameters only, never an array form. */
  int rows_only;
  /* Plan mode: each statement is printed to sqlout (NULL: nowhere) with
   * one line of parameters per row instead of being sent; implies
   * rows_only. */
  int print;
  FILE *sqlout;
  /* The columns are all of the table's, in its order: where the dialect
   * has row arrays (row_array_insert), every batch is one array of the
   * table's row type, one text parameter (dwload migrate). */
  int whole_rows;
} batch_opts;

/* Opens a batch of inserts into table_q (quoted, possibly schema-qualified)
 * of columns cols (quoted names) bound as types; table_q, cols and types
 * are copied.  o may be NULL (defaults: all zero).  The connection must
 * outlive the batch.  No row is sent before a batch fills or is flushed. */
int batch_open(odbc_conn *c, const dialect *d, const char *table_q, char *const *cols, const SQLSMALLINT *types,
               size_t n, const batch_opts *o, batch **out, dwl_error *err);
/* Queues one row of n values (copied); sends a batch when it is full. */
int batch_add(batch *b, const dwl_value *row, dwl_error *err);
/* Sends what is queued.  An array batch is still executing on the
 * connection's thread when this returns: the connection's next use waits
 * for it and fails with its failure (odbc_sync waits for it alone). */
int batch_flush(batch *b, dwl_error *err);
/* Rows queued and not sent yet. */
size_t batch_pending(const batch *b);
/* Rows sent (or printed) so far. */
long long batch_sent(const batch *b);
/* Takes back the last queued row: 1 done, 0 nothing pending, -1 rows
 * going as one row array (whole_rows), which cannot take one back. */
int batch_unadd(batch *b);
/* Waits for a batch being sent, then frees.  NULL is fine. */
void batch_free(batch *b);

#endif
