/* Dialect table: what differs between warehouses.  SQLite through the
 * libsqliteodbc driver is the embedded default; further warehouses add an
 * entry here and nowhere else. */
#include "dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "redact.h"

/* libsqliteodbc stores bound text as given; binding everything as text
 * keeps canonical forms ("2020-01-01") byte for byte. */
static SQLSMALLINT sqlite_param_type(int dwl_type)
{
  (void)dwl_type;
  return SQL_VARCHAR;
}

/* Timeout= (ms, driver default 100000) is how long a second run waits for
 * the write lock before giving up: 1 s keeps "another run holds the lock"
 * prompt while riding out short commits.  StepAPI=1 makes the driver step
 * through results instead of loading them whole (sqlite3_get_table). */
static void sqlite_conn_extra(const char *connstr, dwl_buf *out)
{
  if (!odbc_conn_has_attr(connstr, "timeout"))
    buf_printf(out, "%sTimeout=1000", out->len ? ";" : "");
  if (!odbc_conn_has_attr(connstr, "stepapi"))
    buf_printf(out, "%sStepAPI=1", out->len ? ";" : "");
}

/* The busy timeout: how long a statement waits for another connection's
 * lock (a writer's, or in rollback-journal mode readers' at a commit). */
static void sqlite_lock_timeout_sql(long long ms, char *buf, size_t n)
{
  snprintf(buf, n, "PRAGMA busy_timeout = %lld", ms);
}

/* SQLITE_BUSY (5) and SQLITE_LOCKED (6), as the driver reports them. */
static int sqlite_lock_conflict(const char *sqlstate, long native)
{
  (void)sqlstate;
  return native == 5 || native == 6;
}

/* ---- PostgreSQL through psqlODBC ---------------------------------------- */

/* psqlODBC sends a parameter with the type its SQL type names; text bound
 * as VARCHAR into a BIGINT column would be a type error, so say what the
 * column is. */
static SQLSMALLINT pg_param_type(int dwl_type)
{
  switch (dwl_type) {
  case DWL_TYPE_INTEGER:
    return SQL_BIGINT;
  case DWL_TYPE_NUMERIC:
    return SQL_NUMERIC;
  case DWL_TYPE_REAL:
    return SQL_DOUBLE;
  case DWL_TYPE_BOOLEAN:
    return SQL_BIT;
  case DWL_TYPE_DATE:
    return SQL_TYPE_DATE;
  case DWL_TYPE_TIMESTAMP:
    return SQL_TYPE_TIMESTAMP;
  default:
    return SQL_VARCHAR;
  }
}

/* 55P03 lock_not_available: lock_timeout expired or NOWAIT refused. */
static int pg_lock_conflict(const char *sqlstate, long native)
{
  (void)native;
  return strcmp(sqlstate, "55P03") == 0;
}

/* lock_timeout bounds every wait for a lock, row or table (0 would be
 * forever). */
static void pg_lock_timeout_sql(long long ms, char *buf, size_t n)
{
  snprintf(buf, n, "SET lock_timeout = %lld", ms);
}

/* UseDeclareFetch: results come through a cursor in batches of Fetch rows
 * instead of being read whole into memory.  pqopt hands libpq options
 * through: application_name names the run's sessions in pg_stat_activity,
 * so an operator (or a test) can tell a run's backend from others. */
static void pg_conn_extra(const char *connstr, dwl_buf *out)
{
  if (!odbc_conn_has_attr(connstr, "usedeclarefetch"))
    buf_printf(out, "%sUseDeclareFetch=1", out->len ? ";" : "");
  if (!odbc_conn_has_attr(connstr, "fetch"))
    buf_printf(out, "%sFetch=10000", out->len ? ";" : "");
  if (!odbc_conn_has_attr(connstr, "pqopt"))
    buf_printf(out, "%spqopt={application_name=dwload}", out->len ? ";" : "");
}

/* ---- MariaDB through MariaDB Connector/ODBC ------------------------------ */

/* MariaDB converts bound text to the column's type itself. */
static SQLSMALLINT maria_param_type(int dwl_type)
{
  (void)dwl_type;
  return SQL_VARCHAR;
}

/* 1205 ER_LOCK_WAIT_TIMEOUT, 3572 ER_LOCK_NOWAIT. */
static int maria_lock_conflict(const char *sqlstate, long native)
{
  (void)sqlstate;
  return native == 1205 || native == 3572;
}

/* Row locks wait innodb_lock_wait_timeout, metadata (table) locks
 * lock_wait_timeout (a year by default); both in whole seconds. */
static void maria_lock_timeout_sql(long long ms, char *buf, size_t n)
{
  long long s = (ms + 999) / 1000;
  snprintf(buf, n, "SET SESSION innodb_lock_wait_timeout = %lld, SESSION lock_wait_timeout = %lld", s, s);
}

/* Column types per dialect, as data: one row per warehouse. */
typedef struct type_names {
  const char *integer, *real, *boolean, *date, *timestamp;
  const char *numeric;         /* name taking (precision,scale) */
  const char *numeric_any;     /* a numeric without a precision */
  const char *varchar;         /* name taking (length); NULL: always `text` */
  int varchar_max;             /* longest VARCHAR(n); longer is `text` */
  const char *varchar_suffix;  /* after VARCHAR(n) */
  const char *text;
} type_names;

/* SQLite keeps declared types as affinity hints; the real types are still
 * declared so the table reads well and migrates cleanly. */
static const type_names sqlite_types = {
  "INTEGER", "REAL", "BOOLEAN", "DATE", "TIMESTAMP", "NUMERIC", "DECIMAL_TEXT", NULL, 0, "", "TEXT",
};

static const char *type_sql(const type_names *tn, const dwl_column *col, char *buf, size_t n);

/* A NUMERIC column of SQLite turns text with more than 15 significant
 * digits into a REAL, rounded (1234567890123456.78 is kept as
 * 1.23456789012346e+15).  A decimal that may hold more is declared
 * DECIMAL_TEXT(p,s): the name holds TEXT, so the column has TEXT affinity
 * and keeps dwload's canonical text exactly, and the (p,s) still says what
 * it is (sqltype_refine reads it back as numeric(p,s)). */
static const char *sqlite_type_sql(const dwl_column *col, char *buf, size_t n)
{
  if (col->type == DWL_TYPE_NUMERIC && col->precision > 15) {
    snprintf(buf, n, "DECIMAL_TEXT(%d,%d)", col->precision, col->scale);
    return buf;
  }
  return type_sql(&sqlite_types, col, buf, n);
}

static const type_names pg_types = {
  "BIGINT", "DOUBLE PRECISION", "BOOLEAN", "DATE", "TIMESTAMP(6)", "NUMERIC", "NUMERIC",
  "VARCHAR", 10485760, "", "TEXT",
};

/* MariaDB's default collations ignore case and trailing spaces: 'a', 'A'
 * and 'a ' would be one key.  Keys and change detection need exact text. */
#define MARIA_EXACT " CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"
static const type_names maria_types = {
  "BIGINT", "DOUBLE", "BOOLEAN", "DATE", "DATETIME(6)", "DECIMAL", "DECIMAL(65,30)",
  "VARCHAR", 16383, MARIA_EXACT, "LONGTEXT" MARIA_EXACT,
};

static const char *type_sql(const type_names *tn, const dwl_column *col, char *buf, size_t n)
{
  switch (col->type) {
  case DWL_TYPE_INTEGER:
    return tn->integer;
  case DWL_TYPE_REAL:
    return tn->real;
  case DWL_TYPE_BOOLEAN:
    return tn->boolean;
  case DWL_TYPE_DATE:
    return tn->date;
  case DWL_TYPE_TIMESTAMP:
    return tn->timestamp;
  case DWL_TYPE_NUMERIC:
    if (col->precision <= 0)
      return tn->numeric_any;
    snprintf(buf, n, "%s(%d,%d)", tn->numeric, col->precision, col->scale);
    return buf;
  default:
    if (!tn->varchar || col->precision <= 0 || col->precision > tn->varchar_max)
      return tn->text;
    snprintf(buf, n, "%s(%d)%s", tn->varchar, col->precision, tn->varchar_suffix);
    return buf;
  }
}

static const char *pg_type_sql(const dwl_column *col, char *buf, size_t n)
{
  return type_sql(&pg_types, col, buf, n);
}

static const char *maria_type_sql(const dwl_column *col, char *buf, size_t n)
{
  return type_sql(&maria_types, col, buf, n);
}

static const dialect dialects[] = {
  {
    .name = "sqlite",
    .dbms_prefix = "SQLite",
    .qopen = '"',
    .qclose = '"',
    .true_lit = "1",
    .false_lit = "0",
    .true_val = "1",
    .false_val = "0",
    .transactional_ddl = 1,
    .max_params = 32000, /* SQLITE_MAX_VARIABLE_NUMBER is 32766 */
    .null_safe_eq = " IS ?",
    .flag_type = "INTEGER",
    .sk_int_type = "INTEGER",
    .sk_hash_type = "TEXT",
    .type_sql = sqlite_type_sql,
    .param_type = sqlite_param_type,
    .lock_conflict = sqlite_lock_conflict,
    .lock_timeout_sql = sqlite_lock_timeout_sql,
    .writer_probe_sql = "BEGIN IMMEDIATE",
    .conn_extra = sqlite_conn_extra,
    .scan_separately = 1,
    .partial_index = 1,
    .index_schema_on_name = 1,
    .columns_sql = "SELECT name, type FROM pragma_table_info(?, ?) ORDER BY cid",
    .real_digits = 15,
    .max_ident = 128,
    .max_columns = 2000,
  },
  {
    .name = "postgresql",
    .dbms_prefix = "PostgreSQL",
    .qopen = '"',
    .qclose = '"',
    .true_lit = "TRUE",
    .false_lit = "FALSE",
    .true_val = "1",
    .false_val = "0",
    .transactional_ddl = 1,
    .max_params = 7000, /* psqlODBC loses sync with the server above ~7450 */
    .null_safe_eq = " IS NOT DISTINCT FROM ?",
    .flag_type = "BOOLEAN",
    .sk_int_type = "BIGINT",
    .sk_hash_type = "CHAR(64)",
    .type_sql = pg_type_sql,
    .param_type = pg_param_type,
    /* psqlODBC converts every one of a multi-row INSERT's parameters (5000
     * for 500 rows of 10 columns) and the server binds each; one text
     * parameter per column holding an array literal, cast to the column's
     * type and unnested into rows, carries the same bound values for a
     * fraction of the client's and the server's work.  The column's own
     * type, not the source's: text goes into an integer column only by an
     * explicit cast.  Without its length (the insert checks that, as it
     * would a bound value), and character and bit as their unbounded
     * forms: a cast to a bare character(1) or bit(1) would cut values. */
    .array_types_sql = "SELECT attname, CASE atttypid WHEN 'pg_catalog.bpchar'::regtype THEN 'pg_catalog.bpchar' "
                       "WHEN 'pg_catalog.bit'::regtype THEN 'pg_catalog.varbit' "
                       "ELSE format_type(atttypid, NULL) END FROM pg_catalog.pg_attribute "
                       "WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped",
    .lock_conflict = pg_lock_conflict,
    .conn_extra = pg_conn_extra,
    .partial_index = 1,
    .update_style = UPD_FROM,
    .lock_wait_sql = "SET lock_timeout = '1s'",
    .lock_timeout_sql = pg_lock_timeout_sql,
    .current_schema_sql = "SELECT current_schema(), 0",
    .analyze_sql = "ANALYZE",
    .estimate_sql = "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(?)",
    .estimate_quoted = 1,
    .column_limits_sql = "SELECT column_name, CASE WHEN data_type = 'numeric' THEN numeric_precision END, "
                         "CASE WHEN data_type = 'numeric' THEN numeric_scale END, character_maximum_length, "
                         "CASE data_type WHEN 'smallint' THEN -32768 WHEN 'integer' THEN -2147483648 END, "
                         "CASE data_type WHEN 'smallint' THEN 32767 WHEN 'integer' THEN 2147483647 END "
                         "FROM information_schema.columns WHERE table_schema = COALESCE(?, current_schema()) "
                         "AND table_name = ?",
    .max_ident = 63, /* NAMEDATALEN - 1 */
    .text_no_nul = 1,
    .max_columns = 1600,
  },
  {
    .name = "mariadb",
    .dbms_prefix = "MariaDB",
    .qopen = '`',
    .qclose = '`',
    .true_lit = "1",
    .false_lit = "0",
    .true_val = "1",
    .false_val = "0",
    .transactional_ddl = 0,
    .max_params = 30000, /* Connector/ODBC fails above 32767 ("Memory allocation error") */
    .null_safe_eq = " <=> ?",
    .flag_type = "BOOLEAN",
    .sk_int_type = "BIGINT",
    .sk_hash_type = "CHAR(64)",
    .type_sql = maria_type_sql,
    .param_type = maria_param_type,
    .lock_conflict = maria_lock_conflict,
    .index_text_prefix = 255,
    .update_style = UPD_JOIN,
    .estimate_sql = "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
                    "AND TABLE_NAME = ?",
    .column_limits_sql = "SELECT column_name, CASE WHEN data_type = 'decimal' THEN numeric_precision END, "
                         "CASE WHEN data_type = 'decimal' THEN numeric_scale END, character_maximum_length, "
                         "CASE WHEN column_type LIKE '%unsigned%' THEN 0 ELSE CASE data_type "
                         "WHEN 'tinyint' THEN -128 WHEN 'smallint' THEN -32768 WHEN 'mediumint' THEN -8388608 "
                         "WHEN 'int' THEN -2147483648 END END, "
                         "CASE WHEN column_type LIKE '%unsigned%' THEN CASE data_type WHEN 'tinyint' THEN 255 "
                         "WHEN 'smallint' THEN 65535 WHEN 'mediumint' THEN 16777215 WHEN 'int' THEN 4294967295 END "
                         "ELSE CASE data_type WHEN 'tinyint' THEN 127 WHEN 'smallint' THEN 32767 "
                         "WHEN 'mediumint' THEN 8388607 WHEN 'int' THEN 2147483647 END END "
                         "FROM information_schema.columns WHERE table_schema = COALESCE(?, DATABASE()) "
                         "AND table_name = ?",
    /* Each statement sees what is committed when it starts: a table created
     * on another connection during the run is usable at once. */
    .session_sql = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    .lock_wait_sql = "SET SESSION innodb_lock_wait_timeout = 1",
    .lock_timeout_sql = maria_lock_timeout_sql,
    .current_schema_sql = "SELECT DATABASE(), @@lower_case_table_names",
    .max_ident = 64,
    .numeric_any_precision = 65,
    .numeric_any_scale = 30,
    .ident_chars = 1,
    .ident_no_trailing_blank = 1,
    .ident_bmp_only = 1,
    .max_columns = 1017,
  },
};

const dialect *dialect_for_dbms(const char *dbms, dwl_error *err)
{
  for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
    if (strncasecmp(dbms, dialects[i].dbms_prefix, strlen(dialects[i].dbms_prefix)) == 0)
      return &dialects[i];
  err_set(err, DWL_EXIT_FAILED, "unsupported warehouse '%s' (dwload speaks: SQLite, PostgreSQL, MariaDB)", dbms);
  return NULL;
}

int dialect_quote(const dialect *d, const char *name, dwl_buf *out, const char *what, dwl_error *err)
{
  size_t n = strlen(name);
  if (n == 0)
    return err_set(err, DWL_EXIT_USAGE, "%s: empty identifier", what);
  if (n > 128)
    return err_set(err, DWL_EXIT_USAGE, "%s: identifier longer than 128 bytes: %.40s...", what, name);
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return err_set(err, DWL_EXIT_USAGE, "%s: identifier contains a control character: %.60s", what, name);
  size_t chars = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    chars += (*p & 0xC0) != 0x80;
    /* a 4-byte UTF-8 sequence is a character beyond U+FFFF */
    if (d->ident_bmp_only && *p >= 0xF0)
      return err_set(err, DWL_EXIT_USAGE,
                     "%s: '%s' has a character outside the Basic Multilingual Plane, which %s names cannot hold",
                     what, name, d->dbms_prefix);
  }
  if (d->max_ident && (d->ident_chars ? chars : n) > (size_t)d->max_ident)
    return err_set(err, DWL_EXIT_USAGE, "%s: '%.80s%s' is longer than %s's %d %s%s", what, name, n > 80 ? "..." : "",
                   d->dbms_prefix, d->max_ident, d->ident_chars ? "characters" : "bytes",
                   d->ident_chars ? "" : " (it would cut the name short)");
  if (d->ident_no_trailing_blank && name[n - 1] == ' ')
    return err_set(err, DWL_EXIT_USAGE, "%s: '%s' ends with a blank, which %s names cannot", what, name,
                   d->dbms_prefix);
  if (buf_addc(out, d->qopen) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (const char *p = name; *p; p++) {
    /* A closing quote inside the name is doubled, the standard escape. */
    if (*p == d->qclose && buf_addc(out, d->qclose) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    if (buf_addc(out, *p) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (buf_addc(out, d->qclose) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

int dialect_quote_derived(const dialect *d, const char *base, const char *suffix, dwl_buf *out, dwl_error *err)
{
  size_t bl = strlen(base), sl = strlen(suffix);
  /* Bytes are never fewer than characters: a byte limit fits both. */
  size_t max = d->max_ident ? (size_t)d->max_ident : 128;
  char name[300];
  if (bl + sl <= max) {
    snprintf(name, sizeof name, "%s%s", base, suffix);
  } else {
    uint32_t h = 2166136261u;  /* FNV-1a */
    for (size_t i = 0; i < bl; i++)
      h = (h ^ (unsigned char)base[i]) * 16777619u;
    size_t keep = max - sl - 9;
    while (keep > 0 && ((unsigned char)base[keep] & 0xC0) == 0x80)
      keep--;
    snprintf(name, sizeof name, "%.*s_%08x%s", (int)keep, base, (unsigned)h, suffix);
  }
  return dialect_quote(d, name, out, "derived name", err);
}

int dialect_split_table(const char *name, char **schema, char **table)
{
  const char *dot = strchr(name, '.');
  *schema = dot ? strndup(name, (size_t)(dot - name)) : NULL;
  *table = strdup(dot ? dot + 1 : name);
  if (!*table || (dot && !*schema)) {
    free(*schema);
    free(*table);
    return -1;
  }
  return 0;
}

int dialect_quote_table(const dialect *d, const char *name, dwl_buf *out, dwl_error *err)
{
  char *schema, *table;
  if (dialect_split_table(name, &schema, &table) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = 0;
  if (schema) {
    rc = dialect_quote(d, schema, out, "target.table", err);
    if (rc == 0 && buf_addc(out, '.') != 0)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (rc == 0)
    rc = dialect_quote(d, table, out, "target.table", err);
  free(schema);
  free(table);
  return rc;
}
