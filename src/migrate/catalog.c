/* dwload migrate's catalog: the source's tables (--all), a table's
 * columns and primary key as the source describes them, and the target's
 * DDL: CREATE TABLE with the dialect's types, NOT NULL and the primary
 * key, or the key added after the load where the dialect prefers that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "migrate_impl.h"
#include "sqltype.h"

/* Tables of the source, for --all: base tables of the connection's own
 * database, named as the dialect names them (catalog_name: system tables
 * are left out); the progress table is never copied. */
int list_tables(const char *conn, char ***out, size_t *n, dwl_error *err)
{
  side s;
  if (side_open(&s, conn, "x", err) != 0)
    return -1;
  odbc_stmt *st = NULL;
  int rc = ostmt_new(s.t->c, &st, err);
  SQLCHAR cat[256] = "";
  SQLINTEGER catlen = 0;
  if (rc == 0 && (!SQL_SUCCEEDED(SQLGetConnectAttr(s.t->c->dbc, SQL_ATTR_CURRENT_CATALOG, cat, sizeof cat, &catlen)) ||
                  catlen <= 0))
    cat[0] = '\0';
  if (rc == 0 && !SQL_SUCCEEDED(SQLTables(st->h, cat[0] ? cat : NULL, cat[0] ? SQL_NTS : 0, NULL, 0,
                                          (SQLCHAR *)"%", SQL_NTS, (SQLCHAR *)"TABLE", SQL_NTS)))
    rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, st->h, "cannot list the source's tables");
  const dwl_value *r;
  int f = 0;
  while (rc == 0 && (f = ostmt_fetch(st, &r, err)) == 1) {
    if (r[2].is_null || strcmp(r[2].data, PROGRESS_TABLE) == 0)
      continue;
    char name[600];
    if (!s.t->d->catalog_name(r[1].is_null ? "" : r[1].data, r[2].data, name, sizeof name))
      continue;
    char **nv = realloc(*out, (*n + 1) * sizeof *nv);
    if (!nv || !(nv[*n] = strdup(name))) {
      if (nv)
        *out = nv;
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    *out = nv;
    (*n)++;
  }
  if (f < 0)
    rc = -1;
  ostmt_free(st);
  side_close(&s);
  return rc;
}

/* Columns (SQLDescribeCol, refined from the catalog) and primary key. */
int read_meta(tjob *j, dwl_error *err)
{
  target *t = j->src.t;
  char sql[700];
  snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE 1 = 0", t->table_q);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  int rc = ostmt_execute(st, NULL, NULL, 0, err);
  SQLSMALLINT n = 0;
  if (rc == 0 && (!SQL_SUCCEEDED(SQLNumResultCols(st->h, &n)) || n <= 0))
    rc = err_set(err, DWL_EXIT_FAILED, "table %s: no columns", j->mt->name);
  if (rc == 0) {
    j->ncols = (size_t)n;
    j->cols = calloc(j->ncols, sizeof *j->cols);
    j->names = calloc(j->ncols, sizeof *j->names);
    if (!j->cols || !j->names)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  for (size_t i = 0; rc == 0 && i < j->ncols; i++) {
    char name[256];
    SQLSMALLINT type, digits, nullable;
    SQLULEN size;
    if (ostmt_describe(st, i, name, sizeof name, &type, &size, &digits, &nullable) != 0) {
      rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, st->h, "cannot describe a column");
      break;
    }
    j->names[i] = strdup(name);
    if (!j->names[i])
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    j->cols[i].name = j->names[i];
    if (t->d->describe_fixup)
      t->d->describe_fixup(type, &size, &digits);
    sqltype_column(type, size, digits, nullable, &j->cols[i]);
  }
  ostmt_free(st);
  if (rc != 0)
    return -1;
  if (sqltype_refine_table(t->c->dbc, j->mt->name, j->cols, j->ncols) != 0)
    return err_set(err, DWL_EXIT_FAILED, "table %s: cannot read its columns from the catalog", j->mt->name);

  /* The primary key, in KEY_SEQ order. */
  if (ostmt_new(t->c, &st, err) != 0)
    return -1;
  SQLCHAR cat[256] = "";
  SQLINTEGER catlen = 0;
  if (!SQL_SUCCEEDED(SQLGetConnectAttr(t->c->dbc, SQL_ATTR_CURRENT_CATALOG, cat, sizeof cat, &catlen)) || catlen <= 0)
    cat[0] = '\0';
  if (!SQL_SUCCEEDED(SQLPrimaryKeys(st->h, cat[0] ? cat : NULL, cat[0] ? SQL_NTS : 0, (SQLCHAR *)t->schema,
                                    t->schema ? SQL_NTS : 0, (SQLCHAR *)t->table, SQL_NTS))) {
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, st->h, "cannot read the primary key");
    ostmt_free(st);
    return -1;
  }
  j->pk = calloc(j->ncols, sizeof *j->pk);
  if (!j->pk) {
    ostmt_free(st);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(st, &r, err)) == 1) {
    if (r[3].is_null || r[4].is_null)
      continue;
    long seq = strtol(r[4].data, NULL, 10);
    for (size_t i = 0; i < j->ncols; i++)
      if (strcmp(j->names[i], r[3].data) == 0 && seq >= 1 && (size_t)seq <= j->ncols) {
        j->pk[seq - 1] = i;
        if ((size_t)seq > j->npk)
          j->npk = (size_t)seq;
      }
  }
  ostmt_free(st);
  if (f < 0)
    return -1;
  for (size_t k = 0; k < j->npk; k++)
    j->cols[j->pk[k]].nullable = 0;
  return 0;
}

/* The primary key clause, ", PRIMARY KEY (a, b)", or "" without one. */
static void pk_clause(const tjob *j, dwl_buf *b)
{
  for (size_t k = 0; k < j->npk; k++)
    buf_printf(b, "%s%s", k ? ", " : ", PRIMARY KEY (", j->dst.t->cols[j->pk[k]].q);
  if (j->npk)
    buf_addc(b, ')');
}

/* Where the dialect builds a primary key index faster once than row by
 * row, it is added in the last chunk's transaction (copying needs no key
 * in the target: the progress row keeps chunks from being copied twice).
 * Elsewhere it is declared with the table (SQLite cannot add one later,
 * and InnoDB stores rows in key order anyway). */
int pk_deferred(const tjob *j)
{
  return j->npk && j->dst.t->d->pk_after_load;
}

int add_pk(tjob *j, dwl_error *err)
{
  dwl_buf sql;
  buf_init(&sql, 0);
  buf_printf(&sql, "ALTER TABLE %s ADD", j->dst.t->table_q);
  pk_clause(j, &sql);
  /* pk_clause starts with ", ": drop it after ADD. */
  char *p = sql.data ? strstr(sql.data, "ADD, ") : NULL;
  if (p)
    memmove(p + 3, p + 4, strlen(p + 4) + 1);
  int rc = sql.data ? odbc_exec(j->dst.t->c, sql.data, NULL, NULL, 0, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&sql);
  return rc;
}

/* CREATE TABLE with the source's columns as this dialect types them,
 * NOT NULL where the source has it, and the primary key (unless it is
 * added at the end). */
int create_table(tjob *j, dwl_error *err)
{
  target *t = j->dst.t;
  dwl_buf sql;
  buf_init(&sql, 0);
  buf_printf(&sql, "CREATE TABLE %s (", t->table_q);
  for (size_t i = 0; i < t->ncols; i++) {
    char ty[128];
    buf_printf(&sql, "%s%s %s%s", i ? ", " : "", t->cols[i].q, t->d->type_sql(&t->cols[i].decl, ty, sizeof ty),
               t->cols[i].decl.nullable == 0 ? " NOT NULL" : "");
  }
  if (!pk_deferred(j))
    pk_clause(j, &sql);
  buf_adds(&sql, ")");
  int rc = sql.data ? odbc_exec(t->c, sql.data, NULL, NULL, 0, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&sql);
  if (rc == 0)
    log_msg(LOG_INFO, "created table %s", j->mt->name);
  return rc;
}

/* Where keys hold bounded text only (the dialect's key_bytes), unbounded
 * text parts share what the other parts leave of the key's bytes (a
 * single text key of 3072 bytes gets 768 characters), and bounded ones
 * that would not fit are cut to that share too. */
void key_text_share(tjob *j, size_t key_bytes)
{
  size_t fixed = 0, ntext = 0;
  for (size_t k = 0; k < j->npk; k++) {
    const dwl_column *c = &j->cols[j->pk[k]];
    if (c->type == DWL_TYPE_TEXT)
      ntext++;
    else
      fixed += c->type == DWL_TYPE_NUMERIC ? 32 : 8;  /* DECIMAL(65) is 30 bytes */
  }
  if (ntext == 0 || fixed >= key_bytes)
    return;
  int share = (int)((key_bytes - fixed) / 4 / ntext);
  for (size_t k = 0; k < j->npk; k++) {
    dwl_column *c = &j->cols[j->pk[k]];
    if (c->type == DWL_TYPE_TEXT && (c->precision <= 0 || c->precision > share))
      c->precision = share;
  }
}
