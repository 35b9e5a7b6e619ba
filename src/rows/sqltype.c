/* SQL type to dwload column type, and the text width of a value. */
#include "sqltype.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Text longer than this is not worth a fixed slot in every row of a block
 * fetch; it is fetched by SQLGetData when a value overflows its slot. */
#define TEXT_SLOT_MAX 1024

void sqltype_column(SQLSMALLINT sqltype, SQLULEN size, SQLSMALLINT digits, SQLSMALLINT nullable, dwl_column *col)
{
  col->precision = 0;
  col->scale = 0;
  col->nullable = nullable == SQL_NO_NULLS ? 0 : nullable == SQL_NULLABLE ? 1 : -1;
  switch (sqltype) {
  case SQL_BIGINT:
  case SQL_INTEGER:
  case SQL_SMALLINT:
  case SQL_TINYINT:
    col->type = DWL_TYPE_INTEGER;
    break;
  case SQL_DECIMAL:
  case SQL_NUMERIC:
    col->type = DWL_TYPE_NUMERIC;
    /* Drivers report a numeric without a declared precision with their own
     * maximum (psqlODBC 1000, MariaDB 65): those stay unconstrained. */
    if (size > 0 && size <= 38 && digits >= 0 && (SQLULEN)digits <= size) {
      col->precision = (int)size;
      col->scale = digits;
    }
    break;
  case SQL_REAL:
  case SQL_FLOAT:
  case SQL_DOUBLE:
    col->type = DWL_TYPE_REAL;
    break;
  case SQL_BIT:
    col->type = DWL_TYPE_BOOLEAN;
    break;
  case SQL_TYPE_DATE:
  case SQL_DATE:
    col->type = DWL_TYPE_DATE;
    break;
  case SQL_TYPE_TIMESTAMP:
  case SQL_TIMESTAMP:
    col->type = DWL_TYPE_TIMESTAMP;
    break;
  case SQL_CHAR:
  case SQL_VARCHAR:
  case SQL_WCHAR:
  case SQL_WVARCHAR:
    col->type = DWL_TYPE_TEXT;
    /* A declared length is kept; drivers report undeclared text lengths as
     * their buffer sizes (255, 8190, 65535...), which are not the column's. */
    if (size > 0 && size < 65535 && size != 255 && size != 8190)
      col->precision = (int)size;
    break;
  default:  /* long text, time of day, intervals, uuids, binary as text */
    col->type = DWL_TYPE_TEXT;
    break;
  }
}

void sqltype_pg_numeric(SQLSMALLINT sqltype, SQLULEN *size, SQLSMALLINT *digits)
{
  if ((sqltype == SQL_NUMERIC || sqltype == SQL_DECIMAL) && *size == 28 && *digits == 6) {
    *size = 0;
    *digits = 0;
  }
}

size_t sqltype_text_bytes(SQLSMALLINT sqltype, SQLULEN size, SQLSMALLINT digits)
{
  (void)digits;
  switch (sqltype) {
  case SQL_BIGINT:
  case SQL_INTEGER:
  case SQL_SMALLINT:
  case SQL_TINYINT:
    return 24;
  case SQL_DECIMAL:
  case SQL_NUMERIC:
    /* sign, point, a leading zero, terminator */
    return size > 0 && size < 1000 ? size + 4 : 0;
  case SQL_REAL:
  case SQL_FLOAT:
  case SQL_DOUBLE:
    return 32;
  case SQL_BIT:
    return 8;
  case SQL_TYPE_DATE:
  case SQL_DATE:
    return 16;
  case SQL_TYPE_TIMESTAMP:
  case SQL_TIMESTAMP:
  case SQL_TYPE_TIME:
  case SQL_TIME:
    return 40;
  case SQL_CHAR:
  case SQL_VARCHAR:
  case SQL_WCHAR:
  case SQL_WVARCHAR:
    /* size counts characters; UTF-8 takes up to 4 bytes each */
    return size > 0 && size * 4 < TEXT_SLOT_MAX ? size * 4 + 1 : 0;
  default:
    return 0;
  }
}

void sqltype_refine(const char *type_name, dwl_column *col)
{
  int p = 0, s = 0;
  char word[16];
  /* psqlODBC describes booleans as text unless BoolsAsChar=0. */
  if (type_name && (strcasecmp(type_name, "bool") == 0 || strcasecmp(type_name, "boolean") == 0)) {
    col->type = DWL_TYPE_BOOLEAN;
    col->precision = 0;
    return;
  }
  if (!type_name || sscanf(type_name, "%15[A-Za-z_] ( %d , %d )", word, &p, &s) != 3)
    return;
  /* DECIMAL_TEXT(p,s): how dwload declares a wide decimal on SQLite. */
  if ((strcasecmp(word, "numeric") == 0 || strcasecmp(word, "decimal") == 0 ||
       strcasecmp(word, "decimal_text") == 0) &&
      p > 0 && p <= 38 && s >= 0 && s <= p) {
    col->type = DWL_TYPE_NUMERIC;
    col->precision = p;
    col->scale = s;
  }
}

/* For a table, the catalog knows more than the result's descriptors:
 * the declared type (libsqliteodbc describes NUMERIC(12,2) as a double)
 * and NOT NULL (which it describes as nullable). */
int sqltype_refine_table(SQLHDBC dbc, const char *table, dwl_column *cols, size_t ncols)
{
  const char *dot = strchr(table, '.');
  char schema[256] = "";
  if (dot)
    snprintf(schema, sizeof schema, "%.*s", (int)(dot - table), table);
  const char *t = dot ? dot + 1 : table;
  SQLHSTMT h;
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, dbc, &h)))
    return -1;
  SQLCHAR cat[256] = "";
  SQLINTEGER catlen = 0;
  if (!SQL_SUCCEEDED(SQLGetConnectAttr(dbc, SQL_ATTR_CURRENT_CATALOG, cat, sizeof cat, &catlen)) || catlen <= 0)
    cat[0] = '\0';
  SQLRETURN rc = SQLColumns(h, cat[0] ? cat : NULL, cat[0] ? SQL_NTS : 0, dot ? (SQLCHAR *)schema : NULL,
                            dot ? SQL_NTS : 0, (SQLCHAR *)t, SQL_NTS, NULL, 0);
  if (SQL_SUCCEEDED(rc)) {
    char name[256], tname[128];
    SQLSMALLINT nullable = SQL_NULLABLE_UNKNOWN;
    SQLLEN i1, i2, i3;
    SQLBindCol(h, 4, SQL_C_CHAR, name, sizeof name, &i1);
    SQLBindCol(h, 6, SQL_C_CHAR, tname, sizeof tname, &i2);
    SQLBindCol(h, 11, SQL_C_SSHORT, &nullable, 0, &i3);
    while (SQL_SUCCEEDED(SQLFetch(h))) {
      if (i1 == SQL_NULL_DATA)
        continue;
      for (size_t c = 0; c < ncols; c++) {
        if (strcmp(cols[c].name, name) != 0)
          continue;
        if (i2 != SQL_NULL_DATA && cols[c].type != DWL_TYPE_NUMERIC)
          sqltype_refine(tname, &cols[c]);
        if (i3 != SQL_NULL_DATA && nullable == SQL_NO_NULLS)
          cols[c].nullable = 0;
      }
    }
  }
  SQLFreeHandle(SQL_HANDLE_STMT, h);
  return 0;
}
