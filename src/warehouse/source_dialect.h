/* What the DBMS behind an ODBC source means for reading it: one row of
 * traits per DBMS (how its driver streams a result, how the checkpoint
 * compares with the lmd column, whether declared text lengths bound the
 * values, ...), so the odbc plugin asks for traits and never for a name.
 * The plugin compiles this file in (a plugin links no host symbol). */
#ifndef DWL_SOURCE_DIALECT_H
#define DWL_SOURCE_DIALECT_H

#include <stddef.h>

#include "buf.h"

/* A connection attribute that makes the driver stream a result. */
typedef struct source_attr {
  const char *name;     /* appended as ;NAME=VALUE unless the job sets it */
  const char *value;    /* NULL: the rows of one fetch (the batch, at least 1000) */
  const char *unless;   /* NULL, or another attribute that does the same */
} source_attr;

typedef struct source_dialect {
  const char *dbms[2];      /* SQL_DBMS_NAME starts with one of these, in any case */
  char qopen, qclose;       /* identifier quotes */
  source_attr stream[4];    /* ended by {NULL} */
  /* The checkpoint is bound with the lmd column's own SQL type (date and
   * timestamp become SQL_TYPE_TIMESTAMP): the driver sends parameters
   * typed, and a timestamp does not compare with varchar. */
  int lmd_typed;
  /* Declared text lengths bound the values, so a column's buffer slot can
   * be sized from them; else any text may be long. */
  int text_len_enforced;
  /* A NUMERIC described as numeric(28,6) means one declared without a
   * precision (sqltype_pg_numeric). */
  int numeric_unknown_28_6;
  /* SQLGetData on a row of a fetched block after SQLSetPos returns that
   * row (Connector/ODBC 3.1.15 answers with another one). */
  int getdata_in_block;
} source_dialect;

/* The traits of the DBMS whose SQL_DBMS_NAME is `dbms`; a DBMS without a
 * row gets neutral ones (double quotes, nothing to add, text lengths
 * enforced).  Never NULL. */
const source_dialect *source_dialect_for(const char *dbms);

/* Appends to `out` the stream attributes of `d` that the connection
 * string `cs` does not set; `rows` is the batch size. */
void source_dialect_stream_attrs(const source_dialect *d, const char *cs, size_t rows, dwl_buf *out);

#endif
