/* The PostgreSQL dialect, through psqlODBC: typed parameters, array
 * parameters for bulk inserts, MERGE, catalog estimates and limits, and
 * the foreign tables (postgres_fdw partitions) under a target. */
#include <stdio.h>
#include <string.h>

#include "dialect_impl.h"
#include "redact.h"
#include "sqltype.h"

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
  dialect_conn_default(connstr, "usedeclarefetch", "UseDeclareFetch=1", out);
  dialect_conn_default(connstr, "fetch", "Fetch=10000", out);
  dialect_conn_default(connstr, "pqopt", "pqopt={application_name=dwload}", out);
}

/* Each stage row finds its rows in a LATERAL subquery, through the key
 * index; OFFSET 0 keeps the subquery from being flattened into a join the
 * planner would hash, and the UPDATE reaches the rows by their ctid (a TID
 * scan per row).  A ctid is unique within one table only: in a
 * partitioned one each partition has its own, so the row's tableoid goes
 * with it.  Inside the subquery the table is d, as `on` expects; the
 * UPDATE's own d is only matched by those two. */
static void pg_update_keyed_end(dwl_buf *b, const char *table, const char *stage, const char *on)
{
  buf_printf(b,
             " FROM %s AS s CROSS JOIN LATERAL (SELECT d.tableoid AS dwl_toid, d.ctid AS dwl_tid FROM %s AS d "
             "WHERE %s OFFSET 0) AS dwl_k WHERE d.tableoid = dwl_k.dwl_toid AND d.ctid = dwl_k.dwl_tid",
             stage, table, on);
}

static const dialect_types pg_types = {
  "BIGINT", "DOUBLE PRECISION", "BOOLEAN", "DATE", "TIMESTAMP(6)", "NUMERIC", "NUMERIC",
  "VARCHAR", 10485760, "", "TEXT",
};

static const char *pg_type_sql(const dwl_column *col, char *buf, size_t n)
{
  return dialect_type_sql(&pg_types, col, buf, n);
}

/* schema.widen: ALTER COLUMN TYPE keeps the column's NULL-ness, default
 * and comment; inside the run's transaction, rolled back with it. */
static void pg_widen_column(dwl_buf *b, const char *table_q, const char *col_q, const dwl_column *to, const char *attrs)
{
  char ty[64];
  (void)attrs;
  buf_printf(b, "ALTER TABLE %s ALTER COLUMN %s TYPE %s", table_q, col_q, pg_type_sql(to, ty, sizeof ty));
}

/* DELETE ... USING: the planner joins as it would for a SELECT. */
static void pg_delete_matching(dwl_buf *b, const char *table, const char *stage, const char *on)
{
  buf_printf(b, "DELETE FROM %s AS d USING %s AS s WHERE %s", table, stage, on);
}

/* Every schema but the system's, qualified unless in public. */
static int pg_catalog_name(const char *schema, const char *table, char *out, size_t n)
{
  if (strcmp(schema, "pg_catalog") == 0 || strcmp(schema, "information_schema") == 0)
    return 0;
  if (schema[0] && strcmp(schema, "public") != 0)
    snprintf(out, n, "%s.%s", schema, table);
  else
    snprintf(out, n, "%s", table);
  return 1;
}

/* Reading back a table through psqlODBC costs a call per value and a
 * conversion in the driver; this is one value per chunk, and the server's
 * text of each value is what the driver would have returned.  The
 * aggregate takes the rows in the ordered subquery's order (PostgreSQL
 * keeps it when nothing else is joined or grouped). */
static void pg_packed_select(dwl_buf *b, const char *const *cols, size_t n, const char *inner)
{
  buf_adds(b, "SELECT string_agg(concat(");
  for (size_t i = 0; i < n; i++)
    buf_printf(b, "%soctet_length(s.%s::text), ':', s.%s::text", i ? ", " : "", cols[i], cols[i]);
  buf_printf(b, "), '') FROM (%s) AS s", inner);
}

/* psqlODBC spends most of a multi-row INSERT on its thousands of
 * parameters.  One text parameter per statement holding an array of the
 * table's own row type (INSERT ... SELECT * FROM unnest(?::t[])) moves the
 * same values, still bound, at a fraction of the cost; the server parses
 * each field with its column's input function, as COPY would.  Measured on
 * 100k rows: 132 ms against 225 ms for json_populate_recordset. */
static void pg_row_array_insert(dwl_buf *b, const char *table, const char *cols)
{
  buf_printf(b, "INSERT INTO %s (%s) SELECT * FROM unnest(?::%s[])", table, cols, table);
}

/* One field of a composite literal inside an array literal, hand-written
 * (no library builds PostgreSQL literals): quoted for the record, and the
 * record quoted again for the array, so a '"' becomes \\\" and a
 * backslash four.  NULL is an empty, unquoted field. */
static int pg_field(dwl_buf *b, const char *s, size_t n)
{
  if (buf_grow(b, n + 4) != 0 || buf_add(b, "\\\"", 2) != 0)
    return -1;
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '"' && s[i] != '\\')
      continue;
    if (buf_add(b, s + run, i - run) != 0 || buf_add(b, s[i] == '"' ? "\\\\\\\"" : "\\\\\\\\", 4) != 0)
      return -1;
    run = i + 1;
  }
  return buf_add(b, s + run, n - run) != 0 || buf_add(b, "\\\"", 2) != 0 ? -1 : 0;
}

static int pg_row_array_add(dwl_buf *b, int first, const dwl_value *row, size_t n)
{
  if (buf_add(b, first ? "{\"(" : ",\"(", 3) != 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    if ((i && buf_addc(b, ',') != 0) || (!row[i].is_null && pg_field(b, row[i].data, row[i].len) != 0))
      return -1;
  return buf_add(b, ")\"", 2);
}

static int pg_row_array_end(dwl_buf *b)
{
  return buf_addc(b, '}');
}

const dialect dialect_pg = {
  .name = "postgresql",
  .dbms_prefix = "PostgreSQL",
  .row_locks = 1,
  .has_merge = 1,
  .qopen = '"',
  .qclose = '"',
  .true_lit = "TRUE",
  .false_lit = "FALSE",
  .true_val = "1",
  .false_val = "0",
  .partition_by = "PARTITION BY HASH",
  .transactional_ddl = 1,
  .max_params = 7000, /* psqlODBC loses sync with the server above ~7450 */
  .null_safe_eq = " IS NOT DISTINCT FROM ?",
  .flag_type = "BOOLEAN",
  .sk_int_type = "BIGINT",
  .sk_hash_type = "CHAR(64)",
  .type_sql = pg_type_sql,
  .add_column = dialect_add_column,
  .widen_column = pg_widen_column,
  .widen_max_precision = 1000,
  .widen_max_scale = 1000,
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
  .lock_wait_sql = "SET lock_timeout = '1s'",
  .lock_timeout_sql = pg_lock_timeout_sql,
  .current_schema_sql = "SELECT current_schema(), 0",
  .analyze_sql = "ANALYZE",
  .index_temp = 1,
  .estimate_sql = "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(?)",
  .scan_row_bytes = 90,  /* 25,364 KiB at 100k current versions, 34,164 at 200k */
  .estimate_quoted = 1,
  /* postgres_fdw partitions (and any other wrapper's): down pg_inherits
   * from the table, which may itself be a foreign table; partitions of
   * partitions too. */
  .foreign_parts_sql = "WITH RECURSIVE tree(oid, depth) AS (SELECT to_regclass(?)::oid, 0 UNION ALL "
                       "SELECT i.inhrelid, tree.depth + 1 FROM pg_catalog.pg_inherits i JOIN tree "
                       "ON i.inhparent = tree.oid) "
                       "SELECT c.oid::regclass::text, s.srvname, w.fdwname, tree.depth FROM tree "
                       "JOIN pg_catalog.pg_class c ON c.oid = tree.oid "
                       "JOIN pg_catalog.pg_foreign_table f ON f.ftrelid = c.oid "
                       "JOIN pg_catalog.pg_foreign_server s ON s.oid = f.ftserver "
                       "JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid = s.srvfdw "
                       "WHERE c.relkind = 'f' ORDER BY tree.depth, 1",
  .column_limits_sql = "SELECT column_name, CASE WHEN data_type = 'numeric' THEN numeric_precision END, "
                       "CASE WHEN data_type = 'numeric' THEN numeric_scale END, character_maximum_length, "
                       "CASE data_type WHEN 'smallint' THEN -32768 WHEN 'integer' THEN -2147483648 END, "
                       "CASE data_type WHEN 'smallint' THEN 32767 WHEN 'integer' THEN 2147483647 END, NULL, NULL, NULL "
                       "FROM information_schema.columns WHERE table_schema = COALESCE(?, current_schema()) "
                       "AND table_name = ?",
  .key_index_sql = "SELECT i.relname, a.attname FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid "
                   "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_class i ON i.oid = x.indexrelid "
                   "CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord) "
                   "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
                   "WHERE n.nspname = COALESCE(?, current_schema()) AND c.relname = ? ORDER BY i.relname, k.ord",
  .max_ident = 63, /* NAMEDATALEN - 1 */
  .text_no_nul = 1,
  .max_columns = 1600,
  .update_begin = dialect_update_from_begin,
  .update_end = dialect_update_from_end,
  .set_prefix = "",
  .update_keyed_end = pg_update_keyed_end,
  .join_keyed_begin = "LATERAL (",
  .join_keyed_end = " OFFSET 0)",
  .delete_matching = pg_delete_matching,
  .delete_unmatched = dialect_delete_not_exists,
  .catalog_name = pg_catalog_name,
  .describe_fixup = sqltype_pg_numeric,
  /* A primary key index is built faster once than row by row. */
  .pk_after_load = 1,
  .stream_scan = 1,
  /* A commit lost in a server crash only means that chunk is copied
   * again: no need to wait for the WAL flush. */
  .bulk_session_sql = "SET synchronous_commit = off",
  .packed_select = pg_packed_select,
  .row_array_insert = pg_row_array_insert,
  .row_array_add = pg_row_array_add,
  .row_array_end = pg_row_array_end,
};
