/* dwload asof: one row per key valid at a given time, as CSV.  The validity
 * test runs here rather than in SQL so that it means the same on every
 * warehouse, whatever each one does comparing date and timestamp text. */
#include "asof.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "odbc_conn.h"
#include "scd.h"
#include "target.h"
#include "ts.h"

/* Written by hand: libcsv's csv_fwrite quotes every field, which would
 * make NULL (empty) and "" (quoted) indistinguishable from plain text. */
void asof_csv_field(FILE *out, const char *data, size_t len, int is_null)
{
  if (is_null)
    return;
  int quote = len == 0 || data[0] == ' ' || data[len - 1] == ' ';
  for (size_t i = 0; i < len && !quote; i++)
    quote = data[i] == ',' || data[i] == '"' || data[i] == '\n' || data[i] == '\r';
  if (!quote) {
    fwrite(data, 1, len, out);
    return;
  }
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    if (data[i] == '"')
      fputc('"', out);
    fputc(data[i], out);
  }
  fputc('"', out);
}

static ssize_t find_col(char names[][256], size_t n, const char *want)
{
  if (!want)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(names[i], want) == 0)
      return (ssize_t)i;
  return -1;
}

/* Validity in sequence values (an integer lmd) is no point in time. */
static void asof_refuse_seq(const dwl_spec *spec, const char *col, dwl_error *err)
{
  err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
           "%s: the table's %s holds integer sequence values (load.lmd is an integer), not points in time; "
           "asof --at does not apply (dwload-job(5), SEQUENCES)",
           spec->path, col);
}

int asof_job(const dwl_spec *spec, const char *at_text, FILE *out, dwl_error *err)
{
  dwl_ts at;
  if (ts_parse(at_text, strlen(at_text), &at) != 0)
    return err_set(err, DWL_EXIT_USAGE, "--at '%s' is not an ISO 8601 date or timestamp", at_text);
  if (spec->mode != MODE_SCD2)
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s: asof needs a job in mode scd2 (this one is not)", spec->path);
  target *t;
  if (target_connect(spec, &t, err) != 0)
    return -1;
  int rc = -1;
  odbc_stmt *st = NULL;
  char (*names)[256] = NULL;
  SQLSMALLINT *types = NULL;
  dwl_buf sql;
  buf_init(&sql, 0);
  int ex = odbc_table_exists(t->c, t->schema, t->table, err);
  if (ex <= 0) {
    if (ex == 0)
      err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_NO_TABLE, "table %s does not exist yet; run the job first", spec->target_table);
    goto out;
  }
  buf_printf(&sql, "SELECT * FROM %s ORDER BY ", t->table_q);
  /* NULL key parts first on every warehouse (PostgreSQL sorts them last). */
  for (size_t i = 0; i < spec->key.n; i++) {
    dwl_buf k;
    buf_init(&k, 0);
    if (dialect_quote(t->d, spec->key.v[i], &k, "load.key", err) != 0) {
      buf_free(&k);
      goto out;
    }
    buf_printf(&sql, "%sCASE WHEN %s IS NULL THEN 0 ELSE 1 END, %s", i ? ", " : "", k.data, k.data);
    buf_free(&k);
  }
  buf_adds(&sql, ", ");
  if (dialect_quote(t->d, spec->valid_from, &sql, "dimension.valid_from", err) != 0)
    goto out;
  if (ostmt_prepare(t->c, sql.data, &st, err) != 0 || ostmt_execute(st, NULL, NULL, 0, err) != 0)
    goto out;
  SQLSMALLINT n = 0;
  SQLNumResultCols(st->h, &n);
  names = calloc(n ? (size_t)n : 1, sizeof *names);
  types = calloc(n ? (size_t)n : 1, sizeof *types);
  if (!names || !types) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto out;
  }
  for (SQLSMALLINT i = 0; i < n; i++) {
    SQLSMALLINT dig, nul;
    SQLULEN sz;
    ostmt_describe(st, (size_t)i, names[i], sizeof names[i], &types[i], &sz, &dig, &nul);
  }
  ssize_t vf = find_col(names, (size_t)n, spec->valid_from), vt = find_col(names, (size_t)n, spec->valid_to);
  ssize_t cur = find_col(names, (size_t)n, spec->current), del = find_col(names, (size_t)n, spec->deleted);
  if (vf < 0 || vt < 0) {
    err_set(err, DWL_EXIT_FAILED, "table %s has no %s column", spec->target_table, vf < 0 ? spec->valid_from : spec->valid_to);
    goto out;
  }
  /* Validity in sequence values (an integer lmd) is no point in time:
   * refused, before the header, rather than an empty answer.  The
   * column's type says so on every warehouse; the value check in the
   * loop below covers a SQLite column whose declared type says nothing. */
  if (types[vf] == SQL_BIGINT || types[vf] == SQL_INTEGER || types[vf] == SQL_SMALLINT) {
    asof_refuse_seq(spec, names[vf], err);
    goto out;
  }
  /* Tombstones mark a key as gone; expired-by-deletion versions were
   * still valid over their range. */
  int skip_tombstones = spec->delete_style == DELSTYLE_TOMBSTONE && del >= 0;
  int first = 1;
  for (SQLSMALLINT i = 0; i < n; i++) {
    if (i == cur || i == del)
      continue;
    if (!first)
      fputc(',', out);
    asof_csv_field(out, names[i], strlen(names[i]), 0);
    first = 0;
  }
  fputc('\n', out);
  const dwl_value *row;
  int f;
  while ((f = ostmt_fetch(st, &row, err)) == 1) {
    dwl_ts from, to;
    if (!row[vf].is_null && ts_parse_seq(row[vf].data, row[vf].len, &from) == 0) {
      asof_refuse_seq(spec, names[vf], err);
      f = -1;
      break;
    }
    if (row[vf].is_null || ts_parse(row[vf].data, row[vf].len, &from) != 0 || from.us > at.us)
      continue;
    if (!row[vt].is_null && ts_parse(row[vt].data, row[vt].len, &to) == 0) {
      /* Closed ranges (day_before, second_before) include their last
       * day or second. */
      if (spec->close == CLOSE_DAY_BEFORE)
        to = ts_add_us(to, DWL_US_PER_DAY);
      else if (spec->close == CLOSE_SECOND_BEFORE)
        to = ts_add_us(to, DWL_US_PER_SEC);
      if (at.us >= to.us)
        continue;
    }
    if (skip_tombstones && !row[del].is_null && !(row[del].len == 1 && row[del].data[0] == '0') &&
        strncasecmp(row[del].data, "f", 1) != 0)
      continue;
    first = 1;
    for (SQLSMALLINT i = 0; i < n; i++) {
      if (i == cur || i == del)
        continue;
      if (!first)
        fputc(',', out);
      first = 0;
      /* Points in time in their canonical text: drivers differ (MariaDB
       * prints DATETIME(6) with six zero decimals). */
      dwl_ts ts;
      char text[32];
      if (!row[i].is_null && (types[i] == SQL_TYPE_TIMESTAMP || types[i] == SQL_TYPE_DATE) &&
          ts_parse(row[i].data, row[i].len, &ts) == 0) {
        ts.date_only = types[i] == SQL_TYPE_DATE;
        size_t len = ts_format(&ts, text);
        asof_csv_field(out, text, len, 0);
        continue;
      }
      asof_csv_field(out, row[i].data, row[i].len, row[i].is_null);
    }
    fputc('\n', out);
  }
  rc = f < 0 ? -1 : 0;
out:
  free(names);
  free(types);
  buf_free(&sql);
  ostmt_free(st);
  target_free(t);
  return rc;
}
