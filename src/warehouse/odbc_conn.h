/* ODBC plumbing: connections (with passwords redacted from every message),
 * transactions, and statements with bound text parameters and text
 * results.  Nothing here knows about dimensions or dialects. */
#ifndef DWL_ODBC_CONN_H
#define DWL_ODBC_CONN_H

#include <pthread.h>
#include <sql.h>
#include <sqlext.h>
#include <stddef.h>

#include "buf.h"
#include "dwload/plugin.h"
#include "err.h"
#include "redact.h"

typedef struct odbc_conn {
  SQLHENV env;
  SQLHDBC dbc;
  char *redacted;        /* the connection string with secrets replaced */
  char dbms[64];         /* SQL_DBMS_NAME */
  char dbms_ver[64];     /* SQL_DBMS_VER */
  int in_txn;
  /* SQLEndTran(SQL_COMMIT) itself failed: whether the transaction was
   * committed is unknown until checked on another connection. */
  int commit_failed;
  /* A statement executing on a thread of its own (ostmt_execute_async);
   * every other use of the connection waits for it first. */
  int sending, send_rc;
  pthread_t sender;
  struct odbc_stmt *send_st;
  const dwl_value *send_p;
  size_t send_n;
  const char *send_what;
  dwl_error send_err;
} odbc_conn;


int odbc_connect(const char *connstr, odbc_conn **out, dwl_error *err);
void odbc_close(odbc_conn *c);

int odbc_begin(odbc_conn *c, dwl_error *err);      /* autocommit off */
int odbc_commit(odbc_conn *c, dwl_error *err);     /* and autocommit on; see commit_failed */
void odbc_rollback(odbc_conn *c);                  /* best effort, then autocommit on */
/* 1 when the driver says the connection is gone (the server ended the
 * session, the network failed): SQL_ATTR_CONNECTION_DEAD. */
int odbc_lost(odbc_conn *c);

/* Records "what: message [SQLSTATE native]" from the handle's diagnostics.
 * Returns -1. */
int odbc_fail(dwl_error *err, int code, SQLSMALLINT htype, SQLHANDLE h, const char *what);

typedef struct odbc_stmt {
  odbc_conn *c;
  SQLHSTMT h;
  SQLSMALLINT ncols;
  dwl_buf *cols;         /* fetch buffers, one per result column */
  dwl_value *row;        /* the fetched row */
  SQLLEN *ind;           /* parameter indicators */
  size_t nind;
  char state[6];         /* SQLSTATE of the last failure */
  long native;           /* native code of the last failure */
  /* Slots (ostmt_bind_slots): buffers the parameters stay bound to. */
  char **slot;
  size_t *slotcap;
  SQLSMALLINT *slottype;
  size_t nslots;
  dwl_buf set;           /* ostmt_execute_set: its column arrays */
} odbc_stmt;

int ostmt_new(odbc_conn *c, odbc_stmt **out, dwl_error *err);
int ostmt_prepare(odbc_conn *c, const char *sql, odbc_stmt **out, dwl_error *err);
/* Fills v as a text parameter holding s, or SQL NULL when s is NULL (s
 * must outlive the statement's execution). */
void odbc_text(dwl_value *v, const char *s);
/* Binds n text parameters (SQL types from `types`, NULL = SQL_VARCHAR) and
 * executes the prepared statement.  SQL_NO_DATA (an UPDATE that touched
 * nothing) is success. */
int ostmt_execute(odbc_stmt *s, const dwl_value *params, const SQLSMALLINT *types, size_t n, dwl_error *err);
/* Executes the prepared statement on a thread of its own and returns at
 * once: the client's next work overlaps the server's.  params must stay
 * valid until the connection's next use, which waits for it; its failure
 * (prefixed with `what`) becomes that use's error, or odbc_sync's. */
int ostmt_execute_async(odbc_stmt *s, const dwl_value *params, size_t n, const char *what, dwl_error *err);
/* Executes a prepared one-row statement once for nrows rows of ncols
 * text values (row-major), bound column-wise as a parameter set
 * (SQL_ATTR_PARAMSET_SIZE); a row that fails fails the set.  0 or -1. */
int ostmt_execute_set(odbc_stmt *s, const dwl_value *vals, const SQLSMALLINT *types, size_t ncols, size_t nrows,
                      dwl_error *err);
/* Waits for the statement executing on its own thread, if any; its error,
 * if it failed, becomes err (unless err holds one already).  0 or -1. */
int odbc_sync(odbc_conn *c, dwl_error *err);
/* Binds the statement's n parameters once, to buffers it owns (SQL types
 * from `types`), for statements executed many times: ostmt_set copies a
 * value into its slot (binding it again only when the value outgrows it),
 * and ostmt_execute or ostmt_execute_async with no parameters runs it.
 * Drivers spend more on binding thousands of parameters than on copying
 * their bytes. */
int ostmt_bind_slots(odbc_stmt *s, const SQLSMALLINT *types, size_t n, dwl_error *err);
int ostmt_set(odbc_stmt *s, size_t i, const dwl_value *v, dwl_error *err);
/* One-shot: prepare, execute, free. */
int odbc_exec(odbc_conn *c, const char *sql, const dwl_value *params, const SQLSMALLINT *types, size_t n,
              dwl_error *err);
/* Fetches the next row as text values: 1 a row, 0 the end, -1 an error.
 * The row stays valid until the next fetch. */
int ostmt_fetch(odbc_stmt *s, const dwl_value **row, dwl_error *err);
void ostmt_free(odbc_stmt *s);

/* Column names and SQL types of a prepared or executed result. */
int ostmt_describe(odbc_stmt *s, size_t col, char *name, size_t namelen, SQLSMALLINT *sqltype,
                   SQLULEN *size, SQLSMALLINT *digits, SQLSMALLINT *nullable);

/* Does table `table` (optionally in `schema`) exist? 1 yes, 0 no, -1 error. */
int odbc_table_exists(odbc_conn *c, const char *schema, const char *table, dwl_error *err);

#endif
