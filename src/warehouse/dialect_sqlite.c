/* The SQLite dialect, through the libsqliteodbc driver: the embedded
 * default warehouse.  One database file, one writer at a time, in-process
 * statements. */
#include <stdio.h>
#include <string.h>

#include "dialect_impl.h"
#include "redact.h"

/* Timeout= (ms, driver default 100000) is how long a second run waits for
 * the write lock before giving up: 1 s keeps "another run holds the lock"
 * prompt while riding out short commits.  StepAPI=1 makes the driver step
 * through results instead of loading them whole (sqlite3_get_table). */
static void sqlite_conn_extra(const char *connstr, dwl_buf *out)
{
  dialect_conn_default(connstr, "timeout", "Timeout=1000", out);
  dialect_conn_default(connstr, "stepapi", "StepAPI=1", out);
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

/* SQLite keeps declared types as affinity hints; the real types are still
 * declared so the table reads well and migrates cleanly. */
static const dialect_types sqlite_types = {
  "INTEGER", "REAL", "BOOLEAN", "DATE", "TIMESTAMP", "NUMERIC", "DECIMAL_TEXT", NULL, 0, "", "TEXT",
};

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
  return dialect_type_sql(&sqlite_types, col, buf, n);
}

/* sqlite_sequence, sqlite_stat1...: the database's own. */
static int sqlite_catalog_name(const char *schema, const char *table, char *out, size_t n)
{
  return strncmp(table, "sqlite_", 7) != 0 && dialect_catalog_plain(schema, table, out, n);
}

const dialect dialect_sqlite = {
  .name = "sqlite",
  .dbms_prefix = "SQLite",
  .single_writer = 1,
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
  .add_column = dialect_add_column,
  /* libsqliteodbc stores bound text as given; binding everything as text
   * keeps canonical forms ("2020-01-01") byte for byte. */
  .param_type = dialect_param_text,
  .lock_conflict = sqlite_lock_conflict,
  .lock_timeout_sql = sqlite_lock_timeout_sql,
  .writer_probe_sql = "BEGIN IMMEDIATE",
  .scan_row_bytes = 82,  /* 28,180 KiB at 100k current versions, 36,216 at 200k */
  .conn_extra = sqlite_conn_extra,
  .scan_separately = 1,
  .partial_index = 1,
  .index_schema_on_name = 1,
  .columns_sql = "SELECT name, type FROM pragma_table_info(?, ?) ORDER BY cid",
  /* An INTEGER PRIMARY KEY is the rowid, in no index_list: its column is
   * listed as an index of its own.  (pragma_index_info finds no row when
   * its schema comes from a join: the index name alone finds it.) */
  .key_index_sql = "WITH p AS (SELECT COALESCE(?, 'main') AS s, ? AS t) "
                   "SELECT n, c FROM (SELECT il.name AS n, ii.name AS c, ii.seqno AS o FROM p, "
                   "pragma_index_list(p.t, p.s) AS il, pragma_index_info(il.name) AS ii "
                   "UNION ALL SELECT ' primary key', ti.name, ti.pk FROM p, pragma_table_info(p.t, p.s) AS ti "
                   "WHERE ti.pk > 0) ORDER BY n, o",
  .real_digits = 15,
  .max_ident = 128,
  .max_columns = 2000,
  /* UPDATE ... FROM since SQLite 3.33; no DELETE ... USING. */
  .index_temp = 1,
  .update_begin = dialect_update_from_begin,
  .update_end = dialect_update_from_end,
  .set_prefix = "",
  .delete_matching = dialect_delete_exists,
  .delete_unmatched = dialect_delete_not_exists,
  .catalog_name = sqlite_catalog_name,
  .stream_scan = 1,
};
