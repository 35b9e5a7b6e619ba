/* Dialect table: what differs between warehouses.  SQLite through the
 * libsqliteodbc driver is the embedded default; further warehouses add an
 * entry here and nowhere else. */
#include "dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* SQLite keeps declared types as affinity hints; we still declare real
 * types so the table reads well and migrates cleanly. */
static const char *sqlite_type_sql(const dwl_column *col, char *buf, size_t n)
{
  switch (col->type) {
  case DWL_TYPE_INTEGER:
    snprintf(buf, n, "INTEGER");
    break;
  case DWL_TYPE_NUMERIC:
    if (col->precision > 0)
      snprintf(buf, n, "NUMERIC(%d,%d)", col->precision, col->scale);
    else
      snprintf(buf, n, "NUMERIC");
    break;
  case DWL_TYPE_REAL:
    snprintf(buf, n, "REAL");
    break;
  case DWL_TYPE_BOOLEAN:
    snprintf(buf, n, "BOOLEAN");
    break;
  case DWL_TYPE_DATE:
    snprintf(buf, n, "DATE");
    break;
  case DWL_TYPE_TIMESTAMP:
    snprintf(buf, n, "TIMESTAMP");
    break;
  default:
    snprintf(buf, n, "TEXT");
    break;
  }
  return buf;
}

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
  if (!strcasestr(connstr, "timeout="))
    buf_printf(out, "%sTimeout=1000", out->len ? ";" : "");
  if (!strcasestr(connstr, "stepapi="))
    buf_printf(out, "%sStepAPI=1", out->len ? ";" : "");
}

/* SQLITE_BUSY (5) and SQLITE_LOCKED (6), as the driver reports them. */
static int sqlite_lock_conflict(const char *sqlstate, long native)
{
  (void)sqlstate;
  return native == 5 || native == 6;
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
    .max_params = 32000,
    .null_safe_eq = " IS ?",
    .flag_type = "INTEGER",
    .sk_int_type = "INTEGER",
    .sk_hash_type = "TEXT",
    .type_sql = sqlite_type_sql,
    .param_type = sqlite_param_type,
    .lock_conflict = sqlite_lock_conflict,
    .conn_extra = sqlite_conn_extra,
    .scan_separately = 1,
  },
};

const dialect *dialect_for_dbms(const char *dbms, dwl_error *err)
{
  for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
    if (strncasecmp(dbms, dialects[i].dbms_prefix, strlen(dialects[i].dbms_prefix)) == 0)
      return &dialects[i];
  err_set(err, DWL_EXIT_FAILED, "unsupported warehouse '%s' (dwload speaks: SQLite)", dbms);
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
