/* ODBC plumbing: connections, transactions, statements with bound text
 * parameters, text results.  Every error carries the driver's diagnostic
 * and never the connection string's secrets. */
#include "odbc_conn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <pthread.h>

#include "driver_logs.h"
#include "interrupt.h"

/* Connections are opened and closed one at a time.  Opening one loads
 * the driver and reads odbcinst.ini and the driver's own settings, and the
 * last close unloads it; neither unixODBC nor every driver promises that
 * this is safe from two threads at once, and migrate's workers and
 * verification readers connect in parallel.  A connect costs milliseconds
 * next to the copy it serves. */
static pthread_mutex_t connect_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the statement executing on its own thread ---------------------------- */

int odbc_sync(odbc_conn *c, dwl_error *err)
{
  if (!c)
    return 0;
  if (c->sending) {
    pthread_join(c->sender, NULL);
    c->sending = 0;
  }
  if (c->send_rc == 0)
    return 0;
  /* Reported once, to a caller that can fail with it. */
  if (!err)
    return -1;
  if (!err_isset(err))
    *err = c->send_err;
  c->send_rc = 0;
  return -1;
}

/* For the void functions: a failure stays with the connection until a
 * checked call reports it (a failed statement in a transaction must not
 * pass unnoticed to the commit). */
static void sync_quiet(odbc_conn *c)
{
  odbc_sync(c, NULL);
}

int odbc_fail(dwl_error *err, int code, SQLSMALLINT htype, SQLHANDLE h, const char *what)
{
  dwl_buf b;
  buf_init(&b, 4096);
  if (err && !err_isset(err)) {
    SQLINTEGER native = 0;
    SQLSMALLINT len;
    SQLCHAR msg[8];
    if (SQL_SUCCEEDED(SQLGetDiagRec(htype, h, 1, (SQLCHAR *)err->sqlstate, &native, msg, sizeof msg, &len)))
      err->native = native;
    else
      err->sqlstate[0] = '\0';
  }
  odbc_diag_text(htype, h, &b);
  err_set(err, code ? code : DWL_EXIT_FAILED, "%s: %s", what, b.data ? b.data : "unknown ODBC error");
  buf_free(&b);
  return -1;
}

/* SQL_DBMS_VER is "##.##.####" by the ODBC specification, padded with
 * zeros: MariaDB's 10.11.19 comes as 10.11.000019, and psqlODBC writes
 * PostgreSQL 15.18 (two parts since version 10) as 15.0.18.  The version
 * is shown as the server gives it: leading zeros dropped, and PostgreSQL
 * 10 and later as major.minor.  Anything but digits and dots stays as it
 * is. */
static void version_tidy(const char *dbms, char *ver)
{
  unsigned long part[3];
  int np = 0;
  const char *p = ver;
  if (strspn(ver, "0123456789.") != strlen(ver) || !*ver)
    return;
  while (*p && np < 3) {
    char *end;
    part[np++] = strtoul(p, &end, 10);
    if (end == p || (*end && *end != '.'))
      return;
    p = *end ? end + 1 : end;
  }
  if (*p)
    return;
  char out[64];
  if (strcmp(dbms, "PostgreSQL") == 0 && np == 3 && part[0] >= 10 && part[1] == 0)
    snprintf(out, sizeof out, "%lu.%lu", part[0], part[2]);
  else if (np == 3)
    snprintf(out, sizeof out, "%lu.%lu.%lu", part[0], part[1], part[2]);
  else if (np == 2)
    snprintf(out, sizeof out, "%lu.%lu", part[0], part[1]);
  else
    snprintf(out, sizeof out, "%lu", part[0]);
  snprintf(ver, 64, "%s", out);
}

int odbc_connect(const char *connstr, odbc_conn **out, dwl_error *err)
{
  *out = NULL;
  odbc_conn *c = calloc(1, sizeof *c);
  if (!c)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  c->redacted = odbc_redact(connstr);
  if (!c->redacted) {
    free(c);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  driver_logs_quiet();
  pthread_mutex_lock(&connect_mu);
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &c->env)) ||
      !SQL_SUCCEEDED(SQLSetEnvAttr(c->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0)) ||
      !SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, c->env, &c->dbc))) {
    pthread_mutex_unlock(&connect_mu);
    err_set(err, DWL_EXIT_FAILED, "cannot initialise ODBC (is unixODBC installed?)");
    odbc_close(c);
    return -1;
  }
  SQLRETURN rc = SQLDriverConnect(c->dbc, NULL, (SQLCHAR *)connstr, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
  pthread_mutex_unlock(&connect_mu);
  if (!SQL_SUCCEEDED(rc)) {
    char what[1200];
    snprintf(what, sizeof what, "cannot connect to %s", c->redacted);
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_DBC, c->dbc, what);
    err_cause(err, DWL_CAUSE_CONNECT);
    odbc_close(c);
    return -1;
  }
  SQLSMALLINT n;
  if (!SQL_SUCCEEDED(SQLGetInfo(c->dbc, SQL_DBMS_NAME, c->dbms, sizeof c->dbms, &n)))
    snprintf(c->dbms, sizeof c->dbms, "unknown");
  if (!SQL_SUCCEEDED(SQLGetInfo(c->dbc, SQL_DBMS_VER, c->dbms_ver, sizeof c->dbms_ver, &n)))
    c->dbms_ver[0] = '\0';
  version_tidy(c->dbms, c->dbms_ver);
  *out = c;
  return 0;
}

void odbc_close(odbc_conn *c)
{
  if (!c)
    return;
  sync_quiet(c);
  if (c->dbc) {
    if (c->in_txn)
      odbc_rollback(c);
  }
  pthread_mutex_lock(&connect_mu);
  if (c->dbc) {
    SQLDisconnect(c->dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, c->dbc);
  }
  if (c->env)
    SQLFreeHandle(SQL_HANDLE_ENV, c->env);
  pthread_mutex_unlock(&connect_mu);
  free(c->redacted);
  free(c);
}

int odbc_begin(odbc_conn *c, dwl_error *err)
{
  if (odbc_sync(c, err) != 0)
    return -1;
  SQLRETURN rc = SQLSetConnectAttr(c->dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0);
  if (!SQL_SUCCEEDED(rc))
    return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_DBC, c->dbc, "cannot start a transaction");
  c->in_txn = 1;
  return 0;
}

int odbc_commit(odbc_conn *c, dwl_error *err)
{
  if (odbc_sync(c, err) != 0) {
    odbc_rollback(c);
    return -1;
  }
  SQLRETURN rc = SQLEndTran(SQL_HANDLE_DBC, c->dbc, SQL_COMMIT);
  if (!SQL_SUCCEEDED(rc)) {
    /* The server may have committed before the failure reached us. */
    c->commit_failed = 1;
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_DBC, c->dbc, "commit failed");
    odbc_rollback(c);
    return -1;
  }
  c->in_txn = 0;
  SQLSetConnectAttr(c->dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_ON, 0);
  return 0;
}

void odbc_rollback(odbc_conn *c)
{
  /* What failed on its own thread is rolled back with the rest. */
  sync_quiet(c);
  c->send_rc = 0;
  SQLEndTran(SQL_HANDLE_DBC, c->dbc, SQL_ROLLBACK);
  c->in_txn = 0;
  SQLSetConnectAttr(c->dbc, SQL_ATTR_AUTOCOMMIT, (SQLPOINTER)SQL_AUTOCOMMIT_ON, 0);
}

/* ---- statements ---------------------------------------------------------- */

int odbc_lost(odbc_conn *c)
{
  SQLUINTEGER dead = SQL_CD_FALSE;
  if (!c || !c->dbc)
    return 0;
  sync_quiet(c);
  SQLRETURN rc = SQLGetConnectAttr(c->dbc, SQL_ATTR_CONNECTION_DEAD, &dead, 0, NULL);
  return SQL_SUCCEEDED(rc) && dead == SQL_CD_TRUE;
}

static void stmt_note_diag(odbc_stmt *s)
{
  SQLINTEGER native = 0;
  SQLSMALLINT len;
  SQLCHAR msg[8];
  s->state[0] = '\0';
  if (SQL_SUCCEEDED(SQLGetDiagRec(SQL_HANDLE_STMT, s->h, 1, (SQLCHAR *)s->state, &native, msg, sizeof msg, &len)) ||
      s->state[0])
    s->native = native;
}

int ostmt_new(odbc_conn *c, odbc_stmt **out, dwl_error *err)
{
  *out = NULL;
  if (odbc_sync(c, err) != 0)
    return -1;
  odbc_stmt *s = calloc(1, sizeof *s);
  if (!s)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  s->c = c;
  buf_init(&s->set, 0);
  if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, c->dbc, &s->h))) {
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_DBC, c->dbc, "cannot allocate a statement");
    free(s);
    return -1;
  }
  *out = s;
  return 0;
}

int ostmt_prepare(odbc_conn *c, const char *sql, odbc_stmt **out, dwl_error *err)
{
  /* NULL is what a statement whose building failed (a poisoned dwl_buf)
   * comes to: nothing of it may reach the server. */
  *out = NULL;
  if (!sql)
    return err_set(err, DWL_EXIT_FAILED, "a statement could not be built (out of memory or too long); "
                                         "nothing was executed");
  if (ostmt_new(c, out, err) != 0)
    return -1;
  odbc_stmt *s = *out;
  if (!SQL_SUCCEEDED(SQLPrepare(s->h, (SQLCHAR *)sql, SQL_NTS))) {
    stmt_note_diag(s);
    char what[300];
    snprintf(what, sizeof what, "cannot prepare \"%.200s%s\"", sql, strlen(sql) > 200 ? "..." : "");
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, what);
    ostmt_free(s);
    *out = NULL;
    return -1;
  }
  return 0;
}

static const char empty_text[] = "";

static int execute(odbc_stmt *s, const dwl_value *params, const SQLSMALLINT *types, size_t n, dwl_error *err);

void odbc_text(dwl_value *v, const char *s)
{
  v->data = s;
  v->len = s ? strlen(s) : 0;
  v->is_null = s == NULL;
}

int ostmt_execute(odbc_stmt *s, const dwl_value *params, const SQLSMALLINT *types, size_t n, dwl_error *err)
{
  if (odbc_sync(s->c, err) != 0)
    return -1;
  return execute(s, params, types, n, err);
}

static void *execute_thread(void *arg)
{
  odbc_conn *c = arg;
  c->send_rc = execute(c->send_st, c->send_p, NULL, c->send_n, &c->send_err);
  if (c->send_rc != 0 && c->send_what)
    err_prefix(&c->send_err, "%s", c->send_what);
  return NULL;
}

int ostmt_execute_async(odbc_stmt *s, const dwl_value *params, size_t n, const char *what, dwl_error *err)
{
  odbc_conn *c = s->c;
  if (odbc_sync(c, err) != 0)
    return -1;
  c->send_st = s;
  c->send_p = params;
  c->send_n = n;
  c->send_what = what;
  err_init(&c->send_err);
  if (pthread_create(&c->sender, NULL, execute_thread, c) != 0) {
    execute_thread(c);  /* no thread: the same work, waited for */
    return c->send_rc == 0 ? 0 : (*err = c->send_err, -1);
  }
  c->sending = 1;
  return 0;
}

/* ColumnSize and DecimalDigits for a text value of len bytes bound as t. */
static void param_size(SQLSMALLINT t, size_t len, SQLULEN *size, SQLSMALLINT *digits)
{
  *size = len == 0 ? 1 : len;
  *digits = 0;
  if (t == SQL_TYPE_TIMESTAMP) {
    *size = 26;
    *digits = 6;
  } else if (t == SQL_TYPE_DATE) {
    *size = 10;
  }
}

static int bind_slot(odbc_stmt *s, size_t i, dwl_error *err)
{
  SQLULEN size;
  SQLSMALLINT digits;
  param_size(s->slottype[i], s->slotcap[i] - 1, &size, &digits);
  SQLRETURN rc = SQLBindParameter(s->h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, SQL_C_CHAR, s->slottype[i], size,
                                  digits, s->slot[i], (SQLLEN)s->slotcap[i], &s->ind[i]);
  if (SQL_SUCCEEDED(rc))
    return 0;
  stmt_note_diag(s);
  return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot bind a parameter");
}

int ostmt_bind_slots(odbc_stmt *s, const SQLSMALLINT *types, size_t n, dwl_error *err)
{
  if (odbc_sync(s->c, err) != 0)
    return -1;
  s->slot = calloc(n ? n : 1, sizeof *s->slot);
  s->slotcap = calloc(n ? n : 1, sizeof *s->slotcap);
  s->slottype = calloc(n ? n : 1, sizeof *s->slottype);
  SQLLEN *ni = realloc(s->ind, (n ? n : 1) * sizeof *ni);
  if (ni)
    s->ind = ni;
  if (!s->slot || !s->slotcap || !s->slottype || !ni)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  s->nind = n;
  s->nslots = n;
  SQLFreeStmt(s->h, SQL_RESET_PARAMS);
  /* from the end, as bind_params */
  for (size_t i = n; i-- > 0;) {
    s->slotcap[i] = 32;
    s->slottype[i] = types ? types[i] : SQL_VARCHAR;
    s->ind[i] = SQL_NULL_DATA;
    if (!(s->slot[i] = calloc(1, s->slotcap[i])))
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    if (bind_slot(s, i, err) != 0)
      return -1;
  }
  return 0;
}

int ostmt_set(odbc_stmt *s, size_t i, const dwl_value *v, dwl_error *err)
{
  if (v->is_null) {
    s->ind[i] = SQL_NULL_DATA;
    return 0;
  }
  if (v->len + 1 > s->slotcap[i]) {
    size_t cap = s->slotcap[i] * 2 > v->len + 1 ? s->slotcap[i] * 2 : v->len + 1;
    char *p = realloc(s->slot[i], cap);
    if (!p)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    s->slot[i] = p;
    s->slotcap[i] = cap;
    /* Binding talks to the driver: not while the connection is busy. */
    if (odbc_sync(s->c, err) != 0 || bind_slot(s, i, err) != 0)
      return -1;
  }
  memcpy(s->slot[i], v->data, v->len);
  s->slot[i][v->len] = '\0';
  /* The slot is terminated: SQL_NTS spares libsqliteodbc a malloc, a copy
   * and a free of every parameter at every execution, which it makes for
   * a length (setupparam's needalloc).  A value holding a NUL byte keeps
   * its length. */
  s->ind[i] = memchr(v->data, '\0', v->len) ? (SQLLEN)v->len : SQL_NTS;
  return 0;
}

/* ---- parameter sets ---------------------------------------------------------- */

/* nrows rows of ncols text values (row-major, as vals holds them) bound
 * column-wise as arrays (SQL_ATTR_PARAMSET_SIZE) and executed once: the
 * driver may send the whole set as one bulk command (MariaDB
 * Connector/ODBC's COM_STMT_BULK_EXECUTE).  Each column's values are
 * copied into one array of its widest value; the arrays are the
 * statement's scratch (s->set), kept for the next set. */
int ostmt_execute_set(odbc_stmt *s, const dwl_value *vals, const SQLSMALLINT *types, size_t ncols, size_t nrows,
                      dwl_error *err)
{
  if (odbc_sync(s->c, err) != 0)
    return -1;
  size_t nind = ncols * nrows;
  if (nind > s->nind) {
    SQLLEN *ni = realloc(s->ind, nind * sizeof *ni);
    if (!ni)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    s->ind = ni;
    s->nind = nind;
  }
  SQLFreeStmt(s->h, SQL_RESET_PARAMS);
  size_t total = 0;
  size_t *width = calloc(ncols ? ncols : 1, sizeof *width);
  if (!width)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < ncols; i++) {
    for (size_t r = 0; r < nrows; r++) {
      const dwl_value *v = &vals[r * ncols + i];
      if (!v->is_null && v->len > width[i])
        width[i] = v->len;
    }
    width[i]++;  /* the terminator */
    total += width[i] * nrows;
  }
  buf_reset(&s->set);
  if (buf_grow(&s->set, total) != 0) {
    free(width);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  char *base = s->set.data;
  int rc = 0;
  for (size_t i = 0, off = 0; rc == 0 && i < ncols; off += width[i] * nrows, i++) {
    char *col = base + off;
    SQLLEN *ind = &s->ind[i * nrows];
    for (size_t r = 0; r < nrows; r++) {
      const dwl_value *v = &vals[r * ncols + i];
      char *cell = col + r * width[i];
      if (v->is_null) {
        ind[r] = SQL_NULL_DATA;
        cell[0] = '\0';
        continue;
      }
      if (v->len)
        memcpy(cell, v->data, v->len);
      cell[v->len] = '\0';
      ind[r] = (SQLLEN)v->len;
    }
    SQLSMALLINT t = types ? types[i] : SQL_VARCHAR;
    SQLULEN size;
    SQLSMALLINT digits;
    param_size(t, width[i] - 1, &size, &digits);  /* the widest value */
    if (!SQL_SUCCEEDED(SQLBindParameter(s->h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, SQL_C_CHAR, t, size, digits, col,
                                        (SQLLEN)width[i], ind))) {
      stmt_note_diag(s);
      rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot bind a parameter set");
    }
  }
  free(width);
  SQLUSMALLINT *status = rc == 0 ? calloc(nrows ? nrows : 1, sizeof *status) : NULL;
  if (rc == 0 && !status)
    rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0 &&
      (!SQL_SUCCEEDED(SQLSetStmtAttr(s->h, SQL_ATTR_PARAM_BIND_TYPE, (SQLPOINTER)SQL_PARAM_BIND_BY_COLUMN, 0)) ||
       !SQL_SUCCEEDED(SQLSetStmtAttr(s->h, SQL_ATTR_PARAMSET_SIZE, (SQLPOINTER)(uintptr_t)nrows, 0)) ||
       !SQL_SUCCEEDED(SQLSetStmtAttr(s->h, SQL_ATTR_PARAM_STATUS_PTR, status, 0)))) {
    stmt_note_diag(s);
    rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot set up a parameter set");
  }
  if (rc == 0) {
    SQLRETURN x = SQLExecute(s->h);
    /* A row that failed fails the set, even where the driver calls the
     * whole execution a success with information. */
    size_t bad = nrows;
    for (size_t r = 0; SQL_SUCCEEDED(x) && r < nrows && bad == nrows; r++)
      if (status[r] == SQL_PARAM_ERROR)
        bad = r;
    if (!SQL_SUCCEEDED(x) || bad < nrows) {
      stmt_note_diag(s);
      char what[80];
      if (bad < nrows)
        snprintf(what, sizeof what, "row %zu of a set of %zu failed", bad + 1, nrows);
      else
        snprintf(what, sizeof what, "a set of %zu rows failed", nrows);
      rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, what);
    }
  }
  /* Back to one row per execution for the statement's other uses. */
  SQLSetStmtAttr(s->h, SQL_ATTR_PARAM_STATUS_PTR, NULL, 0);
  SQLSetStmtAttr(s->h, SQL_ATTR_PARAMSET_SIZE, (SQLPOINTER)1, 0);
  free(status);
  return rc;
}

/* Binds n parameters to the caller's values, for one execution. */
static int bind_params(odbc_stmt *s, const dwl_value *params, const SQLSMALLINT *types, size_t n, dwl_error *err)
{
  if (n > s->nind) {
    SQLLEN *ni = realloc(s->ind, n * sizeof *ni);
    if (!ni)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    s->ind = ni;
    s->nind = n;
  }
  SQLFreeStmt(s->h, SQL_RESET_PARAMS);
  /* The last parameter first: libsqliteodbc and psqlODBC grow their
   * parameter array to the number bound, a realloc per call in order, so a
   * 30,000-parameter INSERT copied the array 30,000 times: minutes per
   * statement where realloc cannot grow in place (under ASan, the 300-row
   * 85-column load of scd2_dimension.sh took 300 s, 0.5 s bound from the
   * end).  ODBC sets no order. */
  for (size_t i = n; i-- > 0;) {
    const dwl_value *v = &params[i];
    SQLSMALLINT t = types ? types[i] : SQL_VARCHAR;
    SQLULEN size;
    SQLSMALLINT digits;
    param_size(t, v->is_null ? 0 : v->len, &size, &digits);
    s->ind[i] = v->is_null ? SQL_NULL_DATA : (SQLLEN)v->len;
    SQLPOINTER data = (SQLPOINTER)(v->is_null || !v->data ? empty_text : v->data);
    SQLRETURN rc = SQLBindParameter(s->h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, SQL_C_CHAR, t, size, digits, data,
                                    (SQLLEN)(v->is_null ? 0 : v->len), &s->ind[i]);
    if (!SQL_SUCCEEDED(rc)) {
      stmt_note_diag(s);
      return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot bind a parameter");
    }
  }
  return 0;
}

/* A statement bound to its slots runs with them. */
static int execute(odbc_stmt *s, const dwl_value *params, const SQLSMALLINT *types, size_t n, dwl_error *err)
{
  if (!s->slot && bind_params(s, params, types, n, err) != 0)
    return -1;
  if (interrupt_stmt_begin(s->h, err) != 0)
    return -1;
  SQLRETURN rc = SQLExecute(s->h);
  interrupt_stmt_end(s->h);
  if (rc == SQL_NO_DATA || SQL_SUCCEEDED(rc))
    return 0;
  stmt_note_diag(s);
  return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "statement failed");
}

int odbc_exec(odbc_conn *c, const char *sql, const dwl_value *params, const SQLSMALLINT *types, size_t n,
              dwl_error *err)
{
  odbc_stmt *s;
  if (ostmt_prepare(c, sql, &s, err) != 0)
    return -1;
  int rc = ostmt_execute(s, params, types, n, err);
  if (rc != 0)
    err_prefix(err, "%.200s", sql);
  ostmt_free(s);
  return rc;
}

static int stmt_setup_cols(odbc_stmt *s, dwl_error *err)
{
  SQLSMALLINT n = 0;
  if (!SQL_SUCCEEDED(SQLNumResultCols(s->h, &n)))
    return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot read result columns");
  s->ncols = n;
  s->cols = calloc(n ? (size_t)n : 1, sizeof *s->cols);
  s->row = calloc(n ? (size_t)n : 1, sizeof *s->row);
  if (!s->cols || !s->row)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (SQLSMALLINT i = 0; i < n; i++)
    buf_init(&s->cols[i], 0);
  return 0;
}

int ostmt_fetch(odbc_stmt *s, const dwl_value **row, dwl_error *err)
{
  if (odbc_sync(s->c, err) != 0)
    return -1;
  if (!s->cols && stmt_setup_cols(s, err) != 0)
    return -1;
  if (interrupt_stmt_begin(s->h, err) != 0)
    return -1;
  SQLRETURN rc = SQLFetch(s->h);
  interrupt_stmt_end(s->h);
  if (rc == SQL_NO_DATA)
    return 0;
  if (!SQL_SUCCEEDED(rc))
    return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "fetch failed");
  for (SQLSMALLINT i = 0; i < s->ncols; i++) {
    dwl_buf *b = &s->cols[i];
    buf_reset(b);
    if (buf_grow(b, 255) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    int isnull = 0;
    for (;;) {
      size_t room = b->cap - b->len;  /* includes the driver's terminator */
      SQLLEN ind = 0;
      rc = SQLGetData(s->h, (SQLUSMALLINT)(i + 1), SQL_C_CHAR, b->data + b->len, (SQLLEN)room, &ind);
      if (rc == SQL_NO_DATA)
        break;
      if (!SQL_SUCCEEDED(rc))
        return odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot read a column");
      if (ind == SQL_NULL_DATA) {
        isnull = 1;
        break;
      }
      if (rc == SQL_SUCCESS) {
        b->len += (size_t)ind;
        break;
      }
      /* Truncated (01004): room-1 bytes arrived; ask for the rest. */
      b->len += room - 1;
      size_t more = ind != SQL_NO_TOTAL && (size_t)ind > room - 1 ? (size_t)ind - (room - 1) : b->cap;
      if (buf_grow(b, more) != 0)
        return err_set(err, DWL_EXIT_FAILED, "value too large to read");
    }
    b->data[b->len] = '\0';
    s->row[i].is_null = isnull;
    s->row[i].data = b->data;
    s->row[i].len = isnull ? 0 : b->len;
  }
  *row = s->row;
  return 1;
}



int ostmt_describe(odbc_stmt *s, size_t col, char *name, size_t namelen, SQLSMALLINT *sqltype, SQLULEN *size,
                   SQLSMALLINT *digits, SQLSMALLINT *nullable)
{
  sync_quiet(s->c);
  SQLSMALLINT nlen;
  return SQL_SUCCEEDED(SQLDescribeCol(s->h, (SQLUSMALLINT)(col + 1), (SQLCHAR *)name, (SQLSMALLINT)namelen, &nlen,
                                      sqltype, size, digits, nullable))
             ? 0
             : -1;
}

void ostmt_free(odbc_stmt *s)
{
  if (!s)
    return;
  sync_quiet(s->c);
  if (s->h)
    SQLFreeHandle(SQL_HANDLE_STMT, s->h);
  for (SQLSMALLINT i = 0; s->cols && i < s->ncols; i++)
    buf_free(&s->cols[i]);
  for (size_t i = 0; s->slot && i < s->nslots; i++)
    free(s->slot[i]);
  free(s->slot);
  free(s->slotcap);
  free(s->slottype);
  free(s->cols);
  free(s->row);
  free(s->ind);
  buf_free(&s->set);
  free(s);
}

int odbc_table_exists(odbc_conn *c, const char *schema, const char *table, dwl_error *err)
{
  odbc_stmt *s;
  if (ostmt_new(c, &s, err) != 0)
    return -1;
  /* Without a catalog some drivers (MariaDB) list every database's tables:
   * look in the connection's own. */
  SQLCHAR cat[256] = "";
  SQLINTEGER catlen = 0;
  if (!SQL_SUCCEEDED(SQLGetConnectAttr(c->dbc, SQL_ATTR_CURRENT_CATALOG, cat, sizeof cat, &catlen)) || catlen <= 0)
    cat[0] = '\0';
  /* Where the driver has no schemas (MariaDB: "db.table" names a
   * database), the name's first part is the catalog. */
  SQLUINTEGER usage = 0;
  if (schema && SQL_SUCCEEDED(SQLGetInfo(c->dbc, SQL_SCHEMA_USAGE, &usage, sizeof usage, NULL)) && usage == 0) {
    snprintf((char *)cat, sizeof cat, "%s", schema);
    schema = NULL;
  }
  SQLRETURN rc = SQLTables(s->h, cat[0] ? cat : NULL, cat[0] ? SQL_NTS : 0, (SQLCHAR *)schema, schema ? SQL_NTS : 0,
                           (SQLCHAR *)table, SQL_NTS, (SQLCHAR *)"TABLE", SQL_NTS);
  if (!SQL_SUCCEEDED(rc)) {
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, s->h, "cannot list tables");
    ostmt_free(s);
    return -1;
  }
  const dwl_value *row;
  int found = 0, r;
  while ((r = ostmt_fetch(s, &row, err)) == 1) {
    /* Column 3 is TABLE_NAME; drivers may match patterns ('_' is a
     * wildcard), so compare exactly. */
    if (!row[2].is_null && row[2].len == strlen(table) && memcmp(row[2].data, table, row[2].len) == 0)
      found = 1;
  }
  ostmt_free(s);
  return r < 0 ? -1 : found;
}
