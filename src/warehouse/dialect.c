/* The dialect interface's shared half: choosing a warehouse's dialect
 * from the DBMS name its driver reports, quoting identifiers within what
 * that warehouse's names can hold, and the pieces of SQL more than one
 * dialect spells the same way.  Each warehouse's own half is one file:
 * dialect_sqlite.c (the embedded default), dialect_pg.c,
 * dialect_mariadb.c; a new warehouse adds a file and a row of
 * `dialects` below. */
#include "dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "dialect_impl.h"
#include "redact.h"

static const dialect *const dialects[] = {&dialect_sqlite, &dialect_pg, &dialect_mariadb};

const char *dialect_type_sql(const dialect_types *tn, const dwl_column *col, char *buf, size_t n)
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

void dialect_conn_default(const char *connstr, const char *attr, const char *setting, dwl_buf *out)
{
  if (!odbc_conn_has_attr(connstr, attr))
    buf_printf(out, "%s%s", out->len ? ";" : "", setting);
}

SQLSMALLINT dialect_param_text(int dwl_type)
{
  (void)dwl_type;
  return SQL_VARCHAR;
}

void dialect_add_column(dwl_buf *b, const char *table_q, const char *col_q, const char *type)
{
  buf_printf(b, "ALTER TABLE %s ADD COLUMN %s %s", table_q, col_q, type);
}

void dialect_update_from_begin(dwl_buf *b, const char *table, const char *stage, const char *on)
{
  (void)stage, (void)on;
  buf_printf(b, "UPDATE %s AS d SET ", table);
}

void dialect_update_from_end(dwl_buf *b, const char *stage, const char *on)
{
  buf_printf(b, " FROM %s AS s WHERE %s", stage, on);
}

void dialect_delete_exists(dwl_buf *b, const char *table, const char *stage, const char *on)
{
  buf_printf(b, "DELETE FROM %s AS d WHERE EXISTS (SELECT 1 FROM %s AS s WHERE %s)", table, stage, on);
}

void dialect_delete_not_exists(dwl_buf *b, const char *table, const char *stage, const char *on,
                               const char *stage_col)
{
  (void)stage_col;
  buf_printf(b, "DELETE FROM %s AS d WHERE NOT EXISTS (SELECT 1 FROM %s AS s WHERE %s)", table, stage, on);
}

void dialect_names(char *out, size_t n)
{
  size_t len = 0;
  out[0] = '\0';
  for (size_t i = 0; i < sizeof dialects / sizeof dialects[0] && len < n; i++)
    len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", dialects[i]->dbms_prefix);
}

int dialect_catalog_plain(const char *schema, const char *table, char *out, size_t n)
{
  (void)schema;
  snprintf(out, n, "%s", table);
  return 1;
}

const dialect *dialect_for_dbms(const char *dbms, dwl_error *err)
{
  for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
    if (strncasecmp(dbms, dialects[i]->dbms_prefix, strlen(dialects[i]->dbms_prefix)) == 0)
      return dialects[i];
  char names[200];
  dialect_names(names, sizeof names);
  err_set(err, DWL_EXIT_FAILED, "unsupported warehouse '%s' (dwload speaks: %s)", dbms, names);
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
