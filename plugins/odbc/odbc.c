/* ODBC source connector ("odbc"): reads a table or a query through any
 * ODBC driver.  Owns the option table, the connection (its secrets never
 * reach a message), the checkpoint pushdown (a bound parameter), block
 * fetches into bound column buffers with SQLGetData for values that
 * overflow their slot, the driver attributes that make results stream,
 * and the column types reported from SQLDescribeCol. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sql.h>
#include <sqlext.h>

#include "buf.h"
#include "dwload/plugin.h"
#include "redact.h"
#include "source_dialect.h"
#include "sqltype.h"

#define DEFAULT_BATCH_ROWS 1024
/* Bound buffers of one block stay below this; wide rows get fewer rows. */
#define BLOCK_BYTES_MAX ((size_t)4 << 20)
/* Slot of a column whose values have no useful length bound (long text). */
#define LONG_SLOT 256
/* Where a query's :checkpoint stands on the first run: before any date. */
#define EARLIEST "0001-01-01 00:00:00"
#define EARLIEST_SEQ "-9223372036854775808"

static const dwl_host *host;

/* The options, numbered: code reads them as OPT(ODBC_X), so a name is
 * written once, in the table. */
enum { ODBC_CONNECTION, ODBC_TABLE, ODBC_QUERY, ODBC_FETCH_ROWS, ODBC_NOPTS };
static const dwl_option odbc_options[] = {
  [ODBC_CONNECTION] = {"connection", DWL_OPT_STRING, 1, NULL,
                       "ODBC connection string or DSN=name; take secrets from ${VAR}"},
  [ODBC_TABLE] = {"table", DWL_OPT_STRING, 0, NULL,
                  "table to read, optionally schema.table (exactly one of table and query)"},
  [ODBC_QUERY] = {"query", DWL_OPT_STRING, 0, NULL, "SELECT to read; :checkpoint stands for the stored checkpoint"},
  [ODBC_FETCH_ROWS] = {"fetch_rows", DWL_OPT_INT, 0, "0", "rows per block fetch (0: the host's batch size)"},
  [ODBC_NOPTS] = {NULL, 0, 0, NULL, NULL},
};
DWL_OPTIONS_CHECK(odbc_options, ODBC_NOPTS);
#define OPT(i) DWL_OPT(odbc_options, i)

typedef struct odbc_src {
  dwl_ctx *ctx;
  SQLHENV env;
  SQLHDBC dbc;
  SQLHSTMT st;
  int connected;
  char *redacted;            /* the connection string for messages */
  char dbms[64];
  const source_dialect *sd;  /* what the DBMS means for reading it */

  dwl_column *cols;
  char **names;
  size_t ncols;
  size_t nlong;              /* columns whose values may overflow their slot */

  /* Block fetch: column-wise bound buffers, `rows` rows per fetch. */
  size_t rows;
  size_t *width;             /* slot bytes per column, terminator included */
  char **slot;               /* per column: rows * width bytes */
  SQLLEN **ind;              /* per column: rows indicators */
  SQLULEN fetched;
  int bound;                 /* columns bound (else every value by SQLGetData) */
  int positioned;            /* SQLSetPos picks a row of the block for SQLGetData */

  dwl_buf big;               /* values read by SQLGetData, this batch */
  size_t *bigoff;            /* per value: offset into big, or SIZE_MAX */
  dwl_value *vals;
  uint64_t *origin;
  uint64_t total;

  char cp[40];               /* the bound checkpoint */
  SQLLEN cp_ind;
  int done;
} odbc_src;

#define src_error(s, ...) dwl_plugin_error(host, (s)->ctx, NULL, __VA_ARGS__)

/* "what: driver message [SQLSTATE native]" for the handle's diagnostics. */
static int diag_error(odbc_src *s, SQLSMALLINT htype, SQLHANDLE h, const char *what)
{
  dwl_buf b;
  buf_init(&b, 4096);
  odbc_diag_text(htype, h, &b);
  src_error(s, "%s (%s): %s", what, s->redacted ? s->redacted : "", b.data ? b.data : "unknown ODBC error");
  buf_free(&b);
  return DWL_ERR;
}

/* ---- connection ------------------------------------------------------------ */

static int driver_connect(odbc_src *s, const char *cs)
{
  SQLRETURN rc = SQLDriverConnect(s->dbc, NULL, (SQLCHAR *)cs, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
  if (!SQL_SUCCEEDED(rc))
    return diag_error(s, SQL_HANDLE_DBC, s->dbc, "cannot connect");
  s->connected = 1;
  return DWL_OK;
}

static int src_connect(odbc_src *s, const char *cs)
{
  s->redacted = odbc_redact(cs);
  if (!s->redacted)
    return src_error(s, "out of memory");
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &s->env)) ||
      !SQL_SUCCEEDED(SQLSetEnvAttr(s->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0)) ||
      !SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, s->env, &s->dbc)))
    return src_error(s, "cannot initialise ODBC (is unixODBC installed?)");
  if (driver_connect(s, cs) != DWL_OK)
    return DWL_ERR;
  SQLSMALLINT n;
  if (!SQL_SUCCEEDED(SQLGetInfo(s->dbc, SQL_DBMS_NAME, s->dbms, sizeof s->dbms, &n)))
    snprintf(s->dbms, sizeof s->dbms, "unknown");
  s->sd = source_dialect_for(s->dbms);
  /* The attributes depend on the driver, known only once connected. */
  dwl_buf cs2;
  buf_init(&cs2, 0);
  if (buf_adds(&cs2, cs) != 0)
    return src_error(s, "out of memory");
  while (cs2.len && cs2.data[cs2.len - 1] == ';')
    cs2.data[--cs2.len] = '\0';
  size_t base = cs2.len;
  source_dialect_stream_attrs(s->sd, cs, s->rows, &cs2);
  int rc = DWL_OK;
  if (cs2.len > base) {
    SQLDisconnect(s->dbc);
    s->connected = 0;
    rc = driver_connect(s, cs2.data);
    /* Messages show the attributes the driver got. */
    char *r = rc == DWL_OK ? odbc_redact(cs2.data) : NULL;
    if (r) {
      free(s->redacted);
      s->redacted = r;
    }
  }
  buf_free(&cs2);
  if (rc == DWL_OK)
    host->log(s->ctx, DWL_LOG_INFO, "connected to %s (%s)", s->dbms, s->redacted);
  return rc;
}

/* ---- the statement --------------------------------------------------------- */

/* Appends a quoted identifier; refuses what dialect_quote refuses in the
 * host (empty, control characters, longer than 128 bytes). */
static int add_ident(odbc_src *s, dwl_buf *b, const char *name, size_t n, const char *what)
{
  if (n == 0 || n > 128)
    return src_error(s, "%s: '%s' is not a valid name (1 to 128 bytes)", what, name);
  if (buf_addc(b, s->sd->qopen) != 0)
    return src_error(s, "out of memory");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c < 0x20 || c == 0x7f)
      return src_error(s, "%s: '%s' contains a control character", what, name);
    if ((name[i] == s->sd->qclose && buf_addc(b, s->sd->qclose) != 0) || buf_addc(b, name[i]) != 0)
      return src_error(s, "out of memory");
  }
  return buf_addc(b, s->sd->qclose) == 0 ? DWL_OK : src_error(s, "out of memory");
}

/* SELECT * FROM table [WHERE lmd > ? ORDER BY lmd]. */
static int table_sql(odbc_src *s, const char *table, const dwl_source_args *a, dwl_buf *sql, int *nparams)
{
  buf_adds(sql, "SELECT * FROM ");
  const char *dot = strchr(table, '.');
  if (dot && (add_ident(s, sql, table, (size_t)(dot - table), "table") != DWL_OK || buf_addc(sql, '.') != 0))
    return DWL_ERR;
  const char *t = dot ? dot + 1 : table;
  if (add_ident(s, sql, t, strlen(t), "table") != DWL_OK)
    return DWL_ERR;
  *nparams = 0;
  /* A composite load.lmd pushes down only its first column: the host tells
   * the value before the checkpoint's first (src/cmd/run.c), so `> ?`
   * reads every row at that value too, and dwload filters the
   * tie-breakers in memory; no (c1 > ? OR (c1 = ? AND c2 > ?)) here. */
  if (a->lmd_column && a->checkpoint) {
    dwl_buf q;
    buf_init(&q, 0);
    int rc = add_ident(s, &q, a->lmd_column, strlen(a->lmd_column), "load.lmd");
    if (rc == DWL_OK)
      buf_printf(sql, " WHERE %s > ? ORDER BY %s", q.data, q.data);
    buf_free(&q);
    if (rc != DWL_OK)
      return DWL_ERR;
    *nparams = 1;
  }
  return DWL_OK;
}

/* The query with each :checkpoint outside quotes and comments replaced by
 * a parameter marker. */
static int query_sql(odbc_src *s, const char *query, dwl_buf *sql, int *nparams)
{
  static const char ph[] = ":checkpoint";
  const size_t phlen = sizeof ph - 1;
  *nparams = 0;
  char quote = 0;
  for (const char *p = query; *p; p++) {
    if (quote) {
      if (*p == quote)
        quote = 0;
    } else if (*p == '\'' || *p == '"' || *p == '`') {
      quote = *p;
    } else if (p[0] == '-' && p[1] == '-') {
      const char *e = strchr(p, '\n');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      buf_add(sql, p, n);
      p += n - 1;
      continue;
    } else if (strncasecmp(p, ph, phlen) == 0 && !(p[phlen] == '_' || (p[phlen] >= 'a' && p[phlen] <= 'z') ||
                                                   (p[phlen] >= 'A' && p[phlen] <= 'Z') ||
                                                   (p[phlen] >= '0' && p[phlen] <= '9'))) {
      buf_addc(sql, '?');
      (*nparams)++;
      p += phlen - 1;
      continue;
    }
    buf_addc(sql, *p);
  }
  if (!sql->data)
    return src_error(s, "query: empty");
  return DWL_OK;
}

/* The kind of the lmd column in the result: 'T' a date or timestamp, 'I'
 * an integer (a sequence), 0 else or not found. */
static int lmd_kind(odbc_src *s, const char *lmd)
{
  SQLSMALLINT n = 0;
  if (!lmd || !SQL_SUCCEEDED(SQLNumResultCols(s->st, &n)))
    return 0;
  for (SQLSMALLINT i = 1; i <= n; i++) {
    char name[256];
    SQLSMALLINT nlen, type, digits, nullable;
    SQLULEN size;
    if (SQL_SUCCEEDED(SQLDescribeCol(s->st, (SQLUSMALLINT)i, (SQLCHAR *)name, sizeof name, &nlen, &type, &size,
                                     &digits, &nullable)) &&
        strcasecmp(name, lmd) == 0)
      return type == SQL_TYPE_TIMESTAMP || type == SQL_TYPE_DATE ? 'T'
             : type == SQL_INTEGER || type == SQL_BIGINT || type == SQL_SMALLINT || type == SQL_TINYINT ? 'I'
                                                                                                         : 0;
  }
  return 0;
}

/* The SQL type the checkpoint is bound with: the lmd column's own kind
 * where the DBMS compares typed parameters (lmd_typed), text otherwise. */
static SQLSMALLINT checkpoint_type(odbc_src *s, int kind)
{
  if (!s->sd->lmd_typed)
    return SQL_VARCHAR;
  return kind == 'T' ? SQL_TYPE_TIMESTAMP : kind == 'I' ? SQL_BIGINT : SQL_VARCHAR;
}

static int execute(odbc_src *s, const char *sql, int nparams, const dwl_source_args *a)
{
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, s->dbc, &s->st)))
    return diag_error(s, SQL_HANDLE_DBC, s->dbc, "cannot allocate a statement");
  SQLSetStmtAttr(s->st, SQL_ATTR_CURSOR_TYPE, (SQLPOINTER)SQL_CURSOR_FORWARD_ONLY, 0);
  SQLSetStmtAttr(s->st, SQL_ATTR_CONCURRENCY, (SQLPOINTER)SQL_CONCUR_READ_ONLY, 0);
  if (!SQL_SUCCEEDED(SQLPrepare(s->st, (SQLCHAR *)sql, SQL_NTS))) {
    char what[300];
    snprintf(what, sizeof what, "cannot prepare \"%.200s\"", sql);
    return diag_error(s, SQL_HANDLE_STMT, s->st, what);
  }
  if (nparams > 0) {
    int kind = lmd_kind(s, a->lmd_column);
    /* before any sequence value too: an integer never compares with a date */
    snprintf(s->cp, sizeof s->cp, "%s", a->checkpoint ? a->checkpoint : kind == 'I' ? EARLIEST_SEQ : EARLIEST);
    s->cp_ind = (SQLLEN)strlen(s->cp);
    SQLSMALLINT t = checkpoint_type(s, kind);
    for (int i = 0; i < nparams; i++) {
      SQLRETURN rc = SQLBindParameter(s->st, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, SQL_C_CHAR, t,
                                      t == SQL_TYPE_TIMESTAMP ? 26 : (SQLULEN)s->cp_ind,
                                      t == SQL_TYPE_TIMESTAMP ? 6 : 0, s->cp, (SQLLEN)sizeof s->cp, &s->cp_ind);
      if (!SQL_SUCCEEDED(rc))
        return diag_error(s, SQL_HANDLE_STMT, s->st, "cannot bind the checkpoint");
    }
    host->log(s->ctx, DWL_LOG_INFO, "reading rows with %s > %s", a->lmd_column, s->cp);
  }
  SQLRETURN rc = SQLExecute(s->st);
  if (!SQL_SUCCEEDED(rc) && rc != SQL_NO_DATA) {
    char what[300];
    snprintf(what, sizeof what, "query failed: \"%.200s\"", sql);
    return diag_error(s, SQL_HANDLE_STMT, s->st, what);
  }
  return DWL_OK;
}

/* Columns from SQLDescribeCol, and a buffer slot for each. */
static int describe(odbc_src *s)
{
  SQLSMALLINT n = 0;
  if (!SQL_SUCCEEDED(SQLNumResultCols(s->st, &n)))
    return diag_error(s, SQL_HANDLE_STMT, s->st, "cannot read the result's columns");
  if (n <= 0)
    return src_error(s, "the statement returns no columns");
  s->ncols = (size_t)n;
  s->cols = calloc(s->ncols, sizeof *s->cols);
  s->names = calloc(s->ncols, sizeof *s->names);
  s->width = calloc(s->ncols, sizeof *s->width);
  if (!s->cols || !s->names || !s->width)
    return src_error(s, "out of memory");
  for (size_t i = 0; i < s->ncols; i++) {
    char name[512];
    SQLSMALLINT nlen, type, digits, nullable;
    SQLULEN size;
    if (!SQL_SUCCEEDED(SQLDescribeCol(s->st, (SQLUSMALLINT)(i + 1), (SQLCHAR *)name, sizeof name, &nlen, &type,
                                      &size, &digits, &nullable)))
      return diag_error(s, SQL_HANDLE_STMT, s->st, "cannot describe a result column");
    for (size_t j = 0; j < i; j++)
      if (strcasecmp(s->names[j], name) == 0)
        return src_error(s, "the result has two columns named '%s'; give one an alias", name);
    s->names[i] = strdup(name);
    if (!s->names[i])
      return src_error(s, "out of memory");
    s->cols[i].name = s->names[i];
    if (s->sd->numeric_unknown_28_6)
      sqltype_pg_numeric(type, &size, &digits);
    sqltype_column(type, size, digits, nullable, &s->cols[i]);
    char tname[128] = "";
    if (SQL_SUCCEEDED(SQLColAttribute(s->st, (SQLUSMALLINT)(i + 1), SQL_DESC_TYPE_NAME, tname, sizeof tname, NULL,
                                      NULL)))
      sqltype_refine(tname, &s->cols[i]);
    size_t w = sqltype_text_bytes(type, size, digits);
    /* Where declared lengths are not enforced, any text may be long. */
    if (!s->sd->text_len_enforced && s->cols[i].type == DWL_TYPE_TEXT)
      w = 0;
    if (!w)
      s->nlong++;
    s->width[i] = w ? w : LONG_SLOT;
    host->log(s->ctx, DWL_LOG_DEBUG, "column %s: SQL type %d size %lu digits %d nullable %d", name, (int)type,
              (unsigned long)size, (int)digits, (int)nullable);
  }
  return DWL_OK;
}

/* Binds the columns for block fetches where the driver can re-read a
 * value of a fetched block with SQLGetData (SQL_GD_BLOCK | SQL_GD_BOUND),
 * one row per fetch where it can for the current row only; a driver that
 * can do neither gets every value by SQLGetData. */
static int bind_columns(odbc_src *s)
{
  SQLUINTEGER gd = 0;
  if (!SQL_SUCCEEDED(SQLGetInfo(s->dbc, SQL_GETDATA_EXTENSIONS, &gd, sizeof gd, NULL)))
    gd = 0;
  size_t rowbytes = 0;
  for (size_t i = 0; i < s->ncols; i++)
    rowbytes += s->width[i] + sizeof(SQLLEN);
  /* Connector/ODBC 3.1.15 answers SQLGetData after SQLSetPos with another
   * row of the block (tests/integration/odbcsrc.sh caught it). */
  int can_position = (gd & SQL_GD_BLOCK) && (gd & SQL_GD_BOUND) && s->sd->getdata_in_block;
  if (!(gd & SQL_GD_BOUND) || (s->nlong && !can_position)) {
    s->rows = 1;
  } else {
    s->positioned = s->nlong > 0;
    if (s->rows * rowbytes > BLOCK_BYTES_MAX)
      s->rows = BLOCK_BYTES_MAX / rowbytes ? BLOCK_BYTES_MAX / rowbytes : 1;
  }
  s->bound = (gd & SQL_GD_BOUND) != 0;
  s->vals = calloc(s->rows * s->ncols, sizeof *s->vals);
  s->bigoff = calloc(s->rows * s->ncols, sizeof *s->bigoff);
  s->origin = calloc(s->rows, sizeof *s->origin);
  s->slot = calloc(s->ncols, sizeof *s->slot);
  s->ind = calloc(s->ncols, sizeof *s->ind);
  if (!s->vals || !s->bigoff || !s->origin || !s->slot || !s->ind)
    return src_error(s, "out of memory");
  if (!s->bound) {
    host->log(s->ctx, DWL_LOG_INFO, "the driver reads bound columns only in order: one row per fetch");
    return DWL_OK;
  }
  if (s->rows > 1 &&
      (!SQL_SUCCEEDED(SQLSetStmtAttr(s->st, SQL_ATTR_ROW_BIND_TYPE, (SQLPOINTER)SQL_BIND_BY_COLUMN, 0)) ||
       !SQL_SUCCEEDED(SQLSetStmtAttr(s->st, SQL_ATTR_ROW_ARRAY_SIZE, (SQLPOINTER)(uintptr_t)s->rows, 0)))) {
    s->rows = 1;
    s->positioned = 0;
  }
  SQLSetStmtAttr(s->st, SQL_ATTR_ROWS_FETCHED_PTR, &s->fetched, 0);
  for (size_t i = 0; i < s->ncols; i++) {
    s->slot[i] = malloc(s->rows * s->width[i]);
    s->ind[i] = calloc(s->rows, sizeof **s->ind);
    if (!s->slot[i] || !s->ind[i])
      return src_error(s, "out of memory");
    if (!SQL_SUCCEEDED(SQLBindCol(s->st, (SQLUSMALLINT)(i + 1), SQL_C_CHAR, s->slot[i], (SQLLEN)s->width[i],
                                  s->ind[i])))
      return diag_error(s, SQL_HANDLE_STMT, s->st, "cannot bind a column");
  }
  host->log(s->ctx, DWL_LOG_DEBUG, "%zu rows per fetch, %zu bytes per row", s->rows, rowbytes);
  return DWL_OK;
}

/* ---- fetching ------------------------------------------------------------ */

/* Reads value (row r, column c) whole by SQLGetData into `big`. */
static int get_long(odbc_src *s, size_t r, size_t c, int *isnull, size_t *off, size_t *len)
{
  if (s->positioned && !SQL_SUCCEEDED(SQLSetPos(s->st, (SQLSETPOSIROW)(r + 1), SQL_POSITION, SQL_LOCK_NO_CHANGE)))
    return diag_error(s, SQL_HANDLE_STMT, s->st, "cannot position on a row to read a long value");
  *off = s->big.len;
  *isnull = 0;
  for (;;) {
    if (buf_grow(&s->big, s->big.cap - s->big.len > 4096 ? 0 : 65536) != 0)
      return src_error(s, "column %s: value too large to read", s->names[c]);
    size_t room = s->big.cap - s->big.len;
    SQLLEN ind = 0;
    SQLRETURN rc = SQLGetData(s->st, (SQLUSMALLINT)(c + 1), SQL_C_CHAR, s->big.data + s->big.len, (SQLLEN)room, &ind);
    if (rc == SQL_NO_DATA)
      break;
    if (!SQL_SUCCEEDED(rc))
      return diag_error(s, SQL_HANDLE_STMT, s->st, "cannot read a column");
    if (ind == SQL_NULL_DATA) {
      *isnull = 1;
      break;
    }
    if (rc == SQL_SUCCESS) {
      s->big.len += (size_t)ind;
      break;
    }
    /* Truncated (01004): room - 1 bytes arrived; ask for the rest. */
    s->big.len += room - 1;
    size_t more = ind != SQL_NO_TOTAL && (size_t)ind > room - 1 ? (size_t)ind - (room - 1) : s->big.cap;
    if (buf_grow(&s->big, more) != 0)
      return src_error(s, "column %s: value too large to read", s->names[c]);
  }
  *len = s->big.len - *off;
  return DWL_OK;
}

static int odbc_next_batch(void *handle, dwl_batch *batch)
{
  odbc_src *s = handle;
  if (s->done)
    return DWL_EOF;
  buf_reset(&s->big);
  size_t got = 0;
  /* Fill a host batch of up to `rows` rows: one block, or rows one by one. */
  while (got < s->rows) {
    s->fetched = 0;
    SQLRETURN rc = SQLFetch(s->st);
    if (rc == SQL_NO_DATA) {
      s->done = 1;
      break;
    }
    if (!SQL_SUCCEEDED(rc))
      return diag_error(s, SQL_HANDLE_STMT, s->st, "fetch failed");
    size_t n = s->bound ? (size_t)s->fetched : 1;
    if (!s->bound || s->rows == 1)
      n = 1;
    for (size_t r = 0; r < n; r++) {
      size_t row = got + r;
      for (size_t c = 0; c < s->ncols; c++) {
        dwl_value *v = &s->vals[row * s->ncols + c];
        s->bigoff[row * s->ncols + c] = SIZE_MAX;
        SQLLEN ind = s->bound ? s->ind[c][s->rows == 1 ? 0 : r] : 0;
        if (s->bound && ind == SQL_NULL_DATA) {
          v->is_null = 1;
          v->data = NULL;
          v->len = 0;
        } else if (s->bound && ind != SQL_NO_TOTAL && ind >= 0 && (size_t)ind < s->width[c]) {
          v->is_null = 0;
          v->data = s->slot[c] + (s->rows == 1 ? 0 : r) * s->width[c];
          v->len = (size_t)ind;
        } else if (s->bound && s->rows > 1 && !s->positioned) {
          return src_error(s, "row %" PRIu64 ", column %s: the driver returned a value longer than the column's "
                           "declared size", s->total + r + 1, s->names[c]);
        } else {
          int isnull;
          size_t off = 0, len = 0;
          if (get_long(s, s->rows == 1 ? 0 : r, c, &isnull, &off, &len) != DWL_OK)
            return DWL_ERR;
          v->is_null = isnull;
          v->len = len;
          s->bigoff[row * s->ncols + c] = off;
        }
      }
      s->origin[row] = ++s->total;
    }
    got += n;
    if (s->rows > 1)
      break;  /* one block is one batch */
  }
  if (got == 0)
    return DWL_EOF;
  /* `big` may have moved while it grew: point into it only now. */
  for (size_t i = 0; i < got * s->ncols; i++)
    if (s->bigoff[i] != SIZE_MAX)
      s->vals[i].data = s->vals[i].is_null ? NULL : s->big.data + s->bigoff[i];
  batch->nrows = got;
  batch->values = s->vals;
  batch->origin = s->origin;
  return DWL_OK;
}

/* ---- open / close ------------------------------------------------------------ */

static void odbc_close_src(void *handle)
{
  odbc_src *s = handle;
  if (!s)
    return;
  if (s->st)
    SQLFreeHandle(SQL_HANDLE_STMT, s->st);
  if (s->connected)
    SQLDisconnect(s->dbc);
  if (s->dbc)
    SQLFreeHandle(SQL_HANDLE_DBC, s->dbc);
  if (s->env)
    SQLFreeHandle(SQL_HANDLE_ENV, s->env);
  for (size_t i = 0; i < s->ncols; i++) {
    if (s->names)
      free(s->names[i]);
    if (s->slot)
      free(s->slot[i]);
    if (s->ind)
      free(s->ind[i]);
  }
  free(s->names);
  free(s->cols);
  free(s->width);
  free(s->slot);
  free(s->ind);
  free(s->vals);
  free(s->bigoff);
  free(s->origin);
  buf_free(&s->big);
  free(s->redacted);
  free(s);
}

static int odbc_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **cols,
                     size_t *ncols)
{
  *handle = NULL;
  *cols = NULL;
  *ncols = 0;
  odbc_src *s = calloc(1, sizeof *s);
  if (!s) {
    host->error(ctx, "odbc: out of memory");
    return DWL_ERR;
  }
  s->ctx = ctx;
  buf_init(&s->big, 0);
  s->rows = DEFAULT_BATCH_ROWS;
  if (DWL_ARGS_HAS(args, batch_rows) && args->batch_rows)
    s->rows = args->batch_rows;
  int64_t fr = host->opt_int(ctx, OPT(ODBC_FETCH_ROWS));
  if (fr < 0 || fr > 1000000) {
    src_error(s, "fetch_rows: %" PRId64 " is not between 0 and 1000000", fr);
    goto fail;
  }
  if (fr > 0)
    s->rows = (size_t)fr;

  const char *table = host->opt_isset(ctx, OPT(ODBC_TABLE)) ? host->opt_string(ctx, OPT(ODBC_TABLE)) : NULL;
  const char *query = host->opt_isset(ctx, OPT(ODBC_QUERY)) ? host->opt_string(ctx, OPT(ODBC_QUERY)) : NULL;
  if (!table == !query) {
    src_error(s, "give exactly one of table and query");
    goto fail;
  }
  dwl_source_args a = {0};
  if (args)
    memcpy(&a, args, args->size < sizeof a ? args->size : sizeof a);
  if (src_connect(s, host->opt_string(ctx, OPT(ODBC_CONNECTION))) != DWL_OK)
    goto fail;
  dwl_buf sql;
  buf_init(&sql, 0);
  int nparams = 0;
  int rc = table ? table_sql(s, table, &a, &sql, &nparams) : query_sql(s, query, &sql, &nparams);
  if (rc == DWL_OK && nparams > 0 && !a.lmd_column)
    rc = src_error(s, "query: :checkpoint needs load.lmd in the job");
  if (rc == DWL_OK && query && a.checkpoint && nparams == 0)
    host->log(ctx, DWL_LOG_INFO, "the query has no :checkpoint; every row is read and checked");
  if (rc == DWL_OK)
    host->log(ctx, DWL_LOG_DEBUG, "%s", sql.data);
  if (rc == DWL_OK)
    rc = execute(s, sql.data, nparams, &a);
  buf_free(&sql);
  if (rc != DWL_OK || describe(s) != DWL_OK || (table && sqltype_refine_table(s->dbc, table, s->cols, s->ncols) != 0 &&
                   diag_error(s, SQL_HANDLE_DBC, s->dbc, "cannot read the table's columns") != DWL_OK) ||
      bind_columns(s) != DWL_OK)
    goto fail;
  *handle = s;
  *cols = s->cols;
  *ncols = s->ncols;
  return DWL_OK;
fail:
  odbc_close_src(s);
  return DWL_ERR;
}

static const dwl_plugin odbc_plugin = {
  DWL_SOURCE_PLUGIN,
  .name = "odbc",
  .version = "1.0.0",
  .description = "tables and queries of any ODBC data source, block-fetched and streamed, checkpoint pushed down",
  .options = odbc_options,
  .open = odbc_open,
  .next_batch = odbc_next_batch,
  .close = odbc_close_src,
};

DWL_PLUGIN_ENTRY(host, odbc_plugin)
