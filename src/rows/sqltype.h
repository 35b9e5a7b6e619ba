/* ODBC SQL types as dwload column types: what SQLDescribeCol reports
 * (type, size, decimal digits, nullability) becomes a dwl_column, so a
 * numeric(12,2) read through any driver is declared numeric(12,2) again.
 * Compiled into the host and, as its own copy, into the odbc source
 * plugin (plugins link against no host symbol). */
#ifndef DWL_SQLTYPE_H
#define DWL_SQLTYPE_H

#include <sql.h>
#include <sqlext.h>
#include <stddef.h>

#include "dwload/plugin.h"

/* Fills type, precision, scale and nullable of *col (the name is left
 * alone). */
void sqltype_column(SQLSMALLINT sqltype, SQLULEN size, SQLSMALLINT digits, SQLSMALLINT nullable, dwl_column *col);

/* psqlODBC describes a numeric declared without a precision, in a result
 * and in SQLColumns, as numeric(28,6): its default for a size it does not
 * know (pgtypes.c, getNumericColumnSizeX and getNumericDecimalDigitsX),
 * which as a target's type would round away decimals past the sixth and
 * refuse more than 22 integer digits.  From a PostgreSQL source that size
 * means unknown: zeroed here, the column stays an unconstrained numeric
 * (exact on every warehouse) and its text has no bound.  A column really
 * declared numeric(28,6) cannot be told from it, and arrives wider. */
void sqltype_pg_numeric(SQLSMALLINT sqltype, SQLULEN *size, SQLSMALLINT *digits);

/* Bytes a bound SQL_C_CHAR buffer needs for a value of this type, the
 * terminator included, or 0 when the length has no useful bound (long
 * text): such values are read with SQLGetData. */
size_t sqltype_text_bytes(SQLSMALLINT sqltype, SQLULEN size, SQLSMALLINT digits);

/* Refines the columns of a result of `table` ("schema.table" or
 * "table") from SQLColumns: declared types by sqltype_refine, NOT NULL.
 * Columns match by name; a column the catalog does not list is left
 * alone.  Returns 0, or -1 when no statement could be allocated. */
int sqltype_refine_table(SQLHDBC dbc, const char *table, dwl_column *cols, size_t ncols);

#endif

/* Corrects *col from the column's declared type name where the driver
 * reports a looser SQL type: libsqliteodbc describes NUMERIC(12,2) as
 * SQL_DOUBLE, but SQL_DESC_TYPE_NAME still says "NUMERIC(12,2)". */
void sqltype_refine(const char *type_name, dwl_column *col);
