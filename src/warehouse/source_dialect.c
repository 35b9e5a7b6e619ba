/* The DBMSs an ODBC source may be, as data: one row each, with what the
 * odbc plugin needs to know to read it (source_dialect.h).  Adding a
 * source DBMS is adding a row here.
 *
 * The stream attributes make each driver stream a result instead of
 * reading it whole: psqlODBC reads through a cursor Fetch rows at a time
 * (and reports booleans as SQL_BIT, not as text); libsqliteodbc steps
 * through the result; MariaDB Connector/ODBC streams from 3.1.17 on with
 * NO_CACHE on a forward-only cursor (older versions ignore the attribute
 * and read the result whole). */
#include "source_dialect.h"

#include <string.h>
#include <strings.h>

#include "redact.h"

static const source_dialect dialects[] = {
  {
    .dbms = {"PostgreSQL"},
    .qopen = '"',
    .qclose = '"',
    .stream = {{"UseDeclareFetch", "1", NULL}, {"Fetch", NULL, NULL}, {"BoolsAsChar", "0", NULL}},
    .lmd_typed = 1,
    .text_len_enforced = 1,
    .numeric_unknown_28_6 = 1,
    .getdata_in_block = 1,
  },
  {
    .dbms = {"SQLite"},
    .qopen = '"',
    .qclose = '"',
    .stream = {{"StepAPI", "1", NULL}},
    .text_len_enforced = 0,  /* SQLite keeps any text in any column */
    .getdata_in_block = 1,
  },
  {
    /* Connector/ODBC reports a MySQL server as MySQL */
    .dbms = {"MariaDB", "MySQL"},
    .qopen = '`',
    .qclose = '`',
    .stream = {{"NO_CACHE", "1", "STREAMRS"}, {"FORWARDONLY", "1", NULL}},
    .text_len_enforced = 1,
    .getdata_in_block = 0,
  },
};

static const source_dialect neutral = {
    .qopen = '"',
  .qclose = '"',
  .text_len_enforced = 1,
  .getdata_in_block = 1,
};

const source_dialect *source_dialect_for(const char *dbms)
{
  for (size_t i = 0; dbms && i < sizeof dialects / sizeof dialects[0]; i++)
    for (const char *const *n = dialects[i].dbms; n < dialects[i].dbms + 2 && *n; n++)
      if (strncasecmp(dbms, *n, strlen(*n)) == 0)
        return &dialects[i];
  return &neutral;
}

void source_dialect_stream_attrs(const source_dialect *d, const char *cs, size_t rows, dwl_buf *out)
{
  for (const source_attr *a = d->stream; a->name; a++) {
    if (odbc_conn_has_attr(cs, a->name) || (a->unless && odbc_conn_has_attr(cs, a->unless)))
      continue;
    if (a->value)
      buf_printf(out, ";%s=%s", a->name, a->value);
    else
      buf_printf(out, ";%s=%zu", a->name, rows < 1000 ? (size_t)1000 : rows);
  }
}
