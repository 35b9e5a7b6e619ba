/* Dialects: everything that differs between warehouses, in one place:
 * identifier quoting, column types for CREATE TABLE, boolean literals,
 * NULL-safe equality, parameter SQL types, limits.  Chosen from the DBMS
 * name the driver reports (SQLGetInfo SQL_DBMS_NAME). */
#ifndef DWL_DIALECT_H
#define DWL_DIALECT_H

#include <sql.h>
#include <sqlext.h>
#include <stddef.h>

#include "buf.h"
#include "dwload/plugin.h"
#include "err.h"

enum dialect_update {
  UPD_PER_ROW = 0,  /* one prepared statement per key (SQLite: cheap, in-process) */
  UPD_FROM,         /* UPDATE t SET .. FROM stage WHERE ..; DELETE .. USING (PostgreSQL) */
  UPD_JOIN          /* UPDATE t JOIN stage ON .. SET ..; DELETE t FROM t JOIN .. (MariaDB) */
};

typedef struct dialect {
  const char *name;             /* "sqlite" */
  const char *dbms_prefix;      /* SQL_DBMS_NAME starts with this */
  char qopen, qclose;           /* identifier quotes */
  const char *true_lit, *false_lit;   /* flag values as SQL literals */
  const char *true_val, *false_val;   /* the same as bound text */
  int transactional_ddl;        /* CREATE TABLE can be rolled back */
  size_t max_params;            /* bound parameters per statement */
  const char *null_safe_eq;     /* after a column: NULL-safe "= ?" */
  const char *flag_type;        /* column type of a boolean flag */
  const char *sk_int_type;      /* sequence surrogate key column */
  const char *sk_hash_type;     /* hash surrogate key column */
  /* Column type for CREATE TABLE: the returned text, which is either buf
   * (filled) or a constant; use the return value, not buf. */
  const char *(*type_sql)(const dwl_column *col, char *buf, size_t n);
  /* SQL type to bind a parameter of a column type with. */
  SQLSMALLINT (*param_type)(int dwl_type);
  /* Batched inserts as one array parameter per column
   * (INSERT ... SELECT * FROM unnest(?::T[], ...)), each cast to its table
   * column's type, which this query lists (name, type) for the quoted table
   * name; NULL where the dialect has no arrays. */
  const char *array_types_sql;
  /* Does a failed statement mean another transaction holds the lock? */
  int (*lock_conflict)(const char *sqlstate, long native);
  /* Appends connection attributes the user did not set ("A=1;B=2"). */
  void (*conn_extra)(const char *connstr, dwl_buf *out);
  /* Read current versions on a second, autocommit connection: the driver
   * streams results only outside a transaction, and the run's lock keeps
   * the committed state the state the run is changing. */
  int scan_separately;
  int partial_index;            /* CREATE INDEX ... WHERE is supported */
  int index_schema_on_name;     /* CREATE INDEX s.i ON t, not i ON s.t (SQLite) */
  int update_style;             /* enum dialect_update: how a staged set updates a table */
  int index_text_prefix;        /* TEXT columns need an index prefix length (0: no) */
  const char *session_sql;      /* run once per connection, or NULL */
  const char *lock_wait_sql;    /* before taking the job lock: wait briefly */
  /* The statement bounding every lock wait of a session to `ms`
   * (target.lock_timeout), into buf; once the job lock is held, it is
   * also how the session waits normally again. */
  void (*lock_timeout_sql)(long long ms, char *buf, size_t n);
  /* SQLite: takes the database's write lock and nothing else (readers do
   * not conflict), to tell another writer from readers; or NULL. */
  const char *writer_probe_sql;
  /* One row: the session's default schema and whether table names fold
   * to lower case (table_lock.c), where writer_probe_sql is NULL. */
  const char *current_schema_sql;
  const char *analyze_sql;      /* statement refreshing statistics, before a table name; or NULL */
  /* The catalog's row estimate of a table, one parameter: the quoted
   * (PostgreSQL) or bare (MariaDB) table name; NULL: count the rows. */
  const char *estimate_sql;
  int estimate_quoted;
  /* The column names of a table, two parameters: the bare table name and
   * the schema; NULL: the names a SELECT * describes.  (libsqliteodbc
   * describes a column "a.b" as "b".) */
  const char *columns_sql;
  /* The declared limits of a table's columns, two parameters: the schema
   * (NULL: the connection's) and the bare table name; rows of name,
   * numeric precision and scale (NULL unless an exact numeric),
   * character length (NULL unless bounded), and the least and greatest
   * integer (NULL unless narrower than 64 bits).  NULL: not known. */
  const char *column_limits_sql;
  /* What the warehouse's names can hold: longest name (bytes, or
   * characters with ident_chars), and whether a trailing blank and
   * characters outside the Basic Multilingual Plane are refused. */
  int max_ident;
  int ident_chars;
  int ident_no_trailing_blank;
  int ident_bmp_only;
  int text_no_nul;              /* text cannot hold a NUL byte (PostgreSQL) */
  /* Significant digits a numeric column of NUMERIC (not TEXT) affinity
   * keeps (SQLite: 15, a REAL); 0: numeric columns are exact. */
  int real_digits;
  /* The precision and scale of numeric_any (MariaDB: DECIMAL(65,30)),
   * which would round a value beyond them; 0: unbounded. */
  int numeric_any_precision, numeric_any_scale;
  /* Most columns a table can have (SQLite's SQLITE_MAX_COLUMN default,
   * PostgreSQL's 1600, InnoDB's 1017), bookkeeping included; 0: no cap. */
  int max_columns;
} dialect;

/* The dialect for a DBMS name, or NULL (with err) when unsupported. */
const dialect *dialect_for_dbms(const char *dbms, dwl_error *err);

/* Quotes one identifier into out.  Refuses empty names, names with NUL or
 * control characters, names longer than 128 bytes, and names the
 * warehouse cannot hold as given (longer than its limit, which PostgreSQL
 * would cut short without a word; MariaDB's trailing blanks and
 * characters outside the BMP), naming `what`, with exit status 2. */
int dialect_quote(const dialect *d, const char *name, dwl_buf *out, const char *what, dwl_error *err);

/* Quotes a name dwload derives, BASE followed by SUFFIX ("t" "_dwl_key"):
 * when that is too long for the warehouse, BASE is cut (at a character
 * boundary) and a hash of all of it keeps the name unique. */
int dialect_quote_derived(const dialect *d, const char *base, const char *suffix, dwl_buf *out, dwl_error *err);

/* Quotes a possibly schema-qualified table name "schema.table". */
int dialect_quote_table(const dialect *d, const char *name, dwl_buf *out, dwl_error *err);

/* Splits "schema.table" into its parts (schema NULL when absent); the
 * caller frees both. */
int dialect_split_table(const char *name, char **schema, char **table);

#endif
