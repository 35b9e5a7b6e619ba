/* What the dialect files share and nothing else uses: the column type
 * table every warehouse fills in, and the SQL builders more than one
 * warehouse spells the same way (standard SQL).  Private to
 * src/warehouse/dialect*.c. */
#ifndef DWL_DIALECT_IMPL_H
#define DWL_DIALECT_IMPL_H

#include "dialect.h"

/* Column types per dialect, as data: one row per warehouse. */
typedef struct dialect_types {
  const char *integer, *real, *boolean, *date, *timestamp;
  const char *numeric;         /* name taking (precision,scale) */
  const char *numeric_any;     /* a numeric without a precision */
  const char *varchar;         /* name taking (length); NULL: always `text` */
  int varchar_max;             /* longest VARCHAR(n); longer is `text` */
  const char *varchar_suffix;  /* after VARCHAR(n) */
  const char *text;
} dialect_types;

/* The CREATE TABLE type of a column from a dialect's type table (see
 * dialect.h's type_sql). */
const char *dialect_type_sql(const dialect_types *tn, const dwl_column *col, char *buf, size_t n);

/* Appends "A=1" (after a ';' unless out is empty) unless the connection
 * string already sets the attribute `attr` (case-insensitive). */
void dialect_conn_default(const char *connstr, const char *attr, const char *setting, dwl_buf *out);

/* Binds every value as text: drivers that convert text to the column's
 * type themselves. */
SQLSMALLINT dialect_param_text(int dwl_type);

/* Standard SQL: ALTER TABLE t ADD COLUMN c type (all three warehouses). */
void dialect_add_column(dwl_buf *b, const char *table_q, const char *col_q, const char *type);

/* Standard SQL: UPDATE d SET ... FROM s WHERE on (PostgreSQL, SQLite 3.33). */
void dialect_update_from_begin(dwl_buf *b, const char *table, const char *stage, const char *on);
void dialect_update_from_end(dwl_buf *b, const char *stage, const char *on);
/* DELETE FROM d WHERE [NOT] EXISTS (SELECT 1 FROM s WHERE on). */
void dialect_delete_exists(dwl_buf *b, const char *table, const char *stage, const char *on);
void dialect_delete_not_exists(dwl_buf *b, const char *table, const char *stage, const char *on,
                               const char *stage_col);

/* A catalog's table as it is named, in every schema it lists. */
int dialect_catalog_plain(const char *schema, const char *table, char *out, size_t n);

#endif
