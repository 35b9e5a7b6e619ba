/* The MariaDB dialect, through MariaDB Connector/ODBC: exact collations,
 * multi-table UPDATE/DELETE (no UPDATE ... FROM), DDL that commits at
 * once, whole-second lock timeouts, Spider tables and their prepared XA
 * transactions. */
#include <stdio.h>

#include "dialect_impl.h"

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

/* MariaDB's default collations ignore case and trailing spaces: 'a', 'A'
 * and 'a ' would be one key.  Keys and change detection need exact text. */
#define MARIA_EXACT " CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"
static const dialect_types maria_types = {
  "BIGINT", "DOUBLE", "BOOLEAN", "DATE", "DATETIME(6)", "DECIMAL", "DECIMAL(65,30)",
  "VARCHAR", 16383, MARIA_EXACT, "LONGTEXT" MARIA_EXACT,
};

/* The same, bare: a widened column keeps its own character set and
 * collation (column_limits_sql's declaration says them). */
static const dialect_types maria_bare_types = {
  "BIGINT", "DOUBLE", "BOOLEAN", "DATE", "DATETIME(6)", "DECIMAL", "DECIMAL(65,30)",
  "VARCHAR", 16383, "", "LONGTEXT",
};

static const char *maria_type_sql(const dwl_column *col, char *buf, size_t n)
{
  return dialect_type_sql(&maria_types, col, buf, n);
}

/* A stage column for a user's table's text column takes its character
 * set and collation: MariaDB refuses to compare text of two collations
 * ("Illegal mix of collations") and would convert the table's side of a
 * join of two character sets, which then uses no index. */
static const char *maria_stage_type_sql(const dwl_column *col, const char *collate, char *buf, size_t n)
{
  if (!collate || col->type != DWL_TYPE_TEXT)
    return maria_type_sql(col, buf, n);
  char ty[64];
  snprintf(buf, n, "%s%s", dialect_type_sql(&maria_bare_types, col, ty, sizeof ty), collate);
  return buf;
}

/* A stage's index, declared with the table: CREATE INDEX would commit the
 * run's transaction.  A text column is indexed by a prefix (a LONGTEXT
 * needs one; a key is at most 3072 bytes, a character up to 4): the text
 * columns share 600 characters (2,400 bytes; up to 15 numbers or times of
 * at most 30 bytes each fit beside).  Equal keys share their prefix, so
 * the index still finds them. */
static void maria_stage_index(dwl_buf *b, char *const *cols, const dwl_column *decl, const size_t *ix, size_t n)
{
  size_t ntext = 0;
  for (size_t i = 0; i < n; i++)
    ntext += decl[ix[i]].type == DWL_TYPE_TEXT;
  size_t prefix = ntext ? 600 / ntext : 0;
  if (prefix < 8)
    prefix = 8;
  buf_adds(b, ", INDEX (");
  for (size_t i = 0; i < n; i++) {
    buf_printf(b, "%s%s", i ? ", " : "", cols[ix[i]]);
    /* (a VARCHAR no longer than the prefix is indexed whole: MariaDB
     * refuses a prefix longer than its column) */
    const dwl_column *c = &decl[ix[i]];
    if (c->type == DWL_TYPE_TEXT && (c->precision <= 0 || (size_t)c->precision > prefix))
      buf_printf(b, "(%zu)", prefix);
  }
  buf_addc(b, ')');
}

/* Multi-table UPDATE: the join goes before SET, target columns named d.x. */
static void maria_update_begin(dwl_buf *b, const char *table, const char *stage, const char *on)
{
  buf_printf(b, "UPDATE %s AS d JOIN %s AS s ON %s SET ", table, stage, on);
}

static void maria_update_end(dwl_buf *b, const char *stage, const char *on)
{
  (void)b, (void)stage, (void)on;
}

static void maria_delete_matching(dwl_buf *b, const char *table, const char *stage, const char *on)
{
  buf_printf(b, "DELETE d FROM %s AS d JOIN %s AS s ON %s", table, stage, on);
}

/* An anti-join: MariaDB runs NOT EXISTS as a subquery per row. */
static void maria_delete_unmatched(dwl_buf *b, const char *table, const char *stage, const char *on,
                                   const char *stage_col)
{
  buf_printf(b, "DELETE d FROM %s AS d LEFT JOIN %s AS s ON %s WHERE s.%s IS NULL", table, stage, on, stage_col);
}

/* schema.new_columns: add: ALTER TABLE commits at once, before the run
 * fills the column; the comment says it is not filled yet. */
#define FILL_MARK "dwload: new column, not filled yet"

static void maria_add_column(dwl_buf *b, const char *table_q, const char *col_q, const char *type)
{
  buf_printf(b, "ALTER TABLE %s ADD COLUMN %s %s COMMENT '" FILL_MARK "'", table_q, col_q, type);
}

static void maria_clear_mark(dwl_buf *b, const char *table_q, const char *col_q, const char *type)
{
  buf_printf(b, "ALTER TABLE %s MODIFY COLUMN %s %s COMMENT ''", table_q, col_q, type);
}

/* schema.widen: MODIFY COLUMN declares the column anew, so the rest of
 * its declaration (character set and collation, NOT NULL, default,
 * comment: column_limits_sql's last value) is repeated; it commits at
 * once, before the run's writes. */
static void maria_widen_column(dwl_buf *b, const char *table_q, const char *col_q, const dwl_column *to,
                               const char *attrs)
{
  char ty[64];
  buf_printf(b, "ALTER TABLE %s MODIFY COLUMN %s %s%s", table_q, col_q,
             dialect_type_sql(&maria_bare_types, to, ty, sizeof ty), attrs ? attrs : "");
}

const dialect dialect_mariadb = {
  .name = "mariadb",
  .dbms_prefix = "MariaDB",
  .row_locks = 1,
  .qopen = '`',
  .qclose = '`',
  .true_lit = "1",
  .false_lit = "0",
  .true_val = "1",
  .false_val = "0",
  .partition_by = "PARTITION BY KEY",
  .partition_count = 1,
  .transactional_ddl = 0,
  .max_params = 30000, /* Connector/ODBC fails above 32767 ("Memory allocation error") */
  /* Connector/ODBC 3.1 sends a parameter set to MariaDB >= 10.2 as one
   * COM_STMT_BULK_EXECUTE: measured in bench/RESULTS.md against VALUES. */
  .param_sets = 1,
  .null_safe_eq = " <=> ?",
  .flag_type = "BOOLEAN",
  .sk_int_type = "BIGINT",
  .sk_hash_type = "CHAR(64)",
  .type_sql = maria_type_sql,
  .stage_type_sql = maria_stage_type_sql,
  .stage_index = maria_stage_index,
  /* change detection: text as its bytes, whatever the column's collation */
  .exact_text = "BINARY ",
  .add_column = maria_add_column,
  .marked_columns_sql = "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                        "COALESCE(?, DATABASE()) AND table_name = ? AND column_comment = '" FILL_MARK "'",
  .clear_mark = maria_clear_mark,
  .widen_column = maria_widen_column,
  .widen_max_precision = 65,
  .widen_max_scale = 30,
  /* MariaDB converts bound text to the column's type itself. */
  .param_type = dialect_param_text,
  .lock_conflict = maria_lock_conflict,
  .index_text_prefix = 255,
  .temp_index_begin = " (INDEX (",
  .temp_index_end = "))",
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
                       "WHEN 'mediumint' THEN 8388607 WHEN 'int' THEN 2147483647 END END, "
                       "CONCAT(IF(character_set_name IS NULL, '', CONCAT(' CHARACTER SET ', character_set_name, "
                       "' COLLATE ', collation_name)), IF(is_nullable = 'NO', ' NOT NULL', ''), "
                       "IF(column_default IS NULL OR column_default = 'NULL', '', CONCAT(' DEFAULT ', column_default)), "
                       "IF(column_comment = '', '', CONCAT(' COMMENT ', QUOTE(column_comment)))), "
                       "IF(character_set_name IS NULL, NULL, CONCAT(' CHARACTER SET ', character_set_name, "
                       "' COLLATE ', collation_name)), "
                       /* only binary and the NOPAD _bin collations tell every two texts apart:
                        * the others ignore case or accents, or pad with spaces */
                       "CASE WHEN collation_name IS NULL THEN NULL WHEN collation_name = 'binary' "
                       "OR RIGHT(collation_name, 10) = '_nopad_bin' THEN 0 ELSE 1 END "
                       "FROM information_schema.columns WHERE table_schema = COALESCE(?, DATABASE()) "
                       "AND table_name = ?",
  .key_index_sql = "SELECT index_name, column_name FROM information_schema.statistics "
                   "WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? "
                   "ORDER BY index_name, seq_in_index",
  /* Each statement sees what is committed when it starts: a table created
   * on another connection during the run is usable at once. */
  .session_sql = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
  .lock_wait_sql = "SET SESSION innodb_lock_wait_timeout = 1",
  .lock_timeout_sql = maria_lock_timeout_sql,
  .current_schema_sql = "SELECT DATABASE(), @@lower_case_table_names",
  /* A Spider table, partitioned over shards or not, has ENGINE SPIDER
   * (all of a table's partitions have one engine).  spider_internal_xa
   * (a session variable, OFF by default) makes Spider commit the shards
   * by XA; without it one shard may commit and another not. */
  .remote_table_sql = "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) "
                      "AND TABLE_NAME = ? AND ENGINE = 'SPIDER'",
  .remote_atomic_sql = "SELECT @@SESSION.spider_internal_xa",
  .remote_atomic_name = "spider_internal_xa",
  .remote_session_sql = "SET SESSION spider_sts_interval = 0, spider_crd_interval = 0, join_cache_level = 6, "
                        "spider_bulk_size = 1048576",
  .remote_stage_serial = "BIGINT AUTO_INCREMENT PRIMARY KEY",
  .remote_update_hint = " USE INDEX ()",
  /* XA RECOVER's rows do not come through Connector/ODBC 3.1 (it
   * prepares the statement and finds no result columns): Spider's own log
   * of the XA transactions through its tables lists the prepared ones,
   * with the shards holding their branches (mysql.spider_xa_member).  The
   * xid as XA RECOVER FORMAT='SQL' spells it. */
  .prepared_xa_sql = "SELECT IF(x.bqual_length = 0 AND x.format_id = 1, QUOTE(LEFT(x.data, x.gtrid_length)), "
                     "CONCAT(QUOTE(LEFT(x.data, x.gtrid_length)), ',', "
                     "QUOTE(SUBSTRING(x.data, x.gtrid_length + 1, x.bqual_length)), ',', x.format_id)), "
                     "(SELECT GROUP_CONCAT(DISTINCT CONCAT(m.host, ':', m.port) ORDER BY m.host, m.port "
                     "SEPARATOR ', ') FROM mysql.spider_xa_member m WHERE m.format_id = x.format_id "
                     "AND m.gtrid_length = x.gtrid_length AND m.bqual_length = x.bqual_length "
                     "AND m.data = x.data) "
                     "FROM mysql.spider_xa x WHERE x.status = ? ORDER BY 1",
  .xa_prepared = "PREPARED",
  /* Spider's own XA (spider_internal_xa) records its decision, then
   * commits the branches, and drops the row when all have: a row left
   * with COMMIT is a commit some server has not finished. */
  .xa_decided = "COMMIT",
  /* 28,872 KiB at 100k current versions, 45,444 at 200k: twice the
   * others', the driver's result buffers included */
  .scan_row_bytes = 170,
  .max_ident = 64,
  .numeric_any_precision = 65,
  .numeric_any_scale = 30,
  .ident_chars = 1,
  .ident_no_trailing_blank = 1,
  .ident_bmp_only = 1,
  .max_columns = 1017,
  .update_begin = maria_update_begin,
  .update_end = maria_update_end,
  .set_prefix = "d.",
  .delete_matching = maria_delete_matching,
  .delete_unmatched = maria_delete_unmatched,
  .catalog_name = dialect_catalog_plain,
  /* Connector/ODBC 3.1.15 would hold a whole table's result in memory. */
  .stream_scan = 0,
  /* InnoDB indexes at most 3072 bytes of a key. */
  .key_bytes = 3072,
};
