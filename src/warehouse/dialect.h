/* Dialects: everything that differs between warehouses, behind one
 * interface: what a warehouse can do (capability flags), how it spells
 * things (quoting, column types, literals, NULL-safe equality, parameter
 * types, limits) and the SQL statements that differ (the builders).  One
 * file per warehouse implements it (dialect_sqlite.c, dialect_pg.c,
 * dialect_mariadb.c) and dialect.c chooses one from the DBMS name the
 * driver reports (SQLGetInfo SQL_DBMS_NAME).  No code outside
 * src/warehouse/ asks which warehouse it is: it asks the dialect
 * (tests/integration/arch.sh checks that). */
#ifndef DWL_DIALECT_H
#define DWL_DIALECT_H

#include <sql.h>
#include <sqlext.h>
#include <stddef.h>

#include "buf.h"
#include "dwload/plugin.h"
#include "err.h"

typedef struct dialect dialect;

struct dialect {
  const char *name;             /* "sqlite" */
  const char *dbms_prefix;      /* SQL_DBMS_NAME starts with this; how messages name the warehouse */

  /* ---- capabilities ---- */
  /* MERGE ... WHEN MATCHED ... DELETE/UPDATE ... WHEN NOT MATCHED INSERT:
   * pushdown applies an upsert delta in one statement. */
  int has_merge;
  /* One writer at a time for the whole database: parallel writers only
   * wait on each other (migrate copies tables one at a time). */
  int single_writer;
  /* Row locks: SELECT ... FOR UPDATE waits for the transaction that
   * changed the row (0: a database-wide write lock only). */
  int row_locks;

  char qopen, qclose;           /* identifier quotes */
  const char *true_lit, *false_lit;   /* flag values as SQL literals */
  const char *true_val, *false_val;   /* the same as bound text */
  int transactional_ddl;        /* CREATE TABLE can be rolled back */
  size_t max_params;            /* bound parameters per statement */
  /* Inserts go as one-row statements executed for a parameter set of
   * rows (SQL_ATTR_PARAMSET_SIZE), which the driver sends as one bulk
   * command, instead of multi-row VALUES lists. */
  int param_sets;
  const char *null_safe_eq;     /* after a column: NULL-safe "= ?" */
  const char *flag_type;        /* column type of a boolean flag */
  const char *sk_int_type;      /* sequence surrogate key column */
  const char *sk_hash_type;     /* hash surrogate key column */
  /* Column type for CREATE TABLE: the returned text, which is either buf
   * (filled) or a constant; use the return value, not buf. */
  const char *(*type_sql)(const dwl_column *col, char *buf, size_t n);
  /* schema.new_columns: add: the statement adding column col_q of type
   * `type` (type_sql's) to table_q, which existing rows hold NULL in. */
  void (*add_column)(dwl_buf *b, const char *table_q, const char *col_q, const char *type);
  /* Where DDL commits by itself: add_column marks the column as not yet
   * filled (its comment), this query (schema, table) lists the marked
   * columns, so a run after a failed one fills them as the failed run
   * would have, and clear_mark, after the commit, unmarks one.  NULL
   * where a failed run leaves no column. */
  const char *marked_columns_sql;
  /* schema.widen: the statement giving column col_q of table_q the wider
   * type `to` (a longer varchar or text, a bigint, a numeric of more
   * digits), keeping the rest of the column's declaration: `attrs`, the
   * text column_limits_sql gives for it (NULL: none).  NULL where the
   * warehouse's types are already wide (SQLite keeps any value whole). */
  void (*widen_column)(dwl_buf *b, const char *table_q, const char *col_q, const dwl_column *to, const char *attrs);
  /* The widest numeric(p,s) a widening can reach. */
  int widen_max_precision, widen_max_scale;
  void (*clear_mark)(dwl_buf *b, const char *table_q, const char *col_q, const char *type);
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
  /* target.partition_by on a table dwload creates: the clause after the
   * columns, "(cols)" following ("PARTITION BY HASH"); NULL: the
   * warehouse has no partitioning.  partition_count: the clause takes the
   * count (MariaDB's PARTITIONS n); else each partition is a table of its
   * own (PostgreSQL's PARTITION OF ... FOR VALUES WITH (MODULUS, REMAINDER)). */
  const char *partition_by;
  int partition_count;
  int index_schema_on_name;     /* CREATE INDEX s.i ON t, not i ON s.t (SQLite) */
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
  /* The foreign tables among a table and the partitions (or inheritance
   * children) under it, one parameter: the quoted table name; rows of the
   * foreign table's name, its server, its wrapper and its depth (0: the
   * table itself).  Their servers commit apart from the warehouse, and
   * MERGE cannot change them.  NULL: the warehouse has none. */
  const char *foreign_parts_sql;
  /* Peak RSS of the memory engine per current version a full scan reads
   * through this warehouse's driver, in bytes: load.engine: auto's
   * estimate (engine/choose.c says how it was measured). */
  int scan_row_bytes;
  /* The column names of a table, two parameters: the bare table name and
   * the schema; NULL: the names a SELECT * describes.  (libsqliteodbc
   * describes a column "a.b" as "b".) */
  const char *columns_sql;
  /* The declared limits of a table's columns, two parameters: the schema
   * (NULL: the connection's) and the bare table name; rows of name,
   * numeric precision and scale (NULL unless an exact numeric),
   * character length (NULL unless bounded), the least and greatest
   * integer (NULL unless narrower than 64 bits), the declaration after
   * the type a widen_column must repeat (NULL: none), the character set
   * and collation of a text column as a declaration says them (NULL:
   * none), and 1 where that collation holds text equal that is not the
   * same (case, accents, trailing spaces), else 0.  NULL: not known. */
  const char *column_limits_sql;
  /* The type of a stage column holding the values of an existing table's
   * column, declared `collate` (column_limits_sql's, NULL: none): text
   * takes the column's own character set and collation, so the stage's
   * joins and comparisons with the table mix none and the key index
   * serves them.  NULL: type_sql. */
  const char *(*stage_type_sql)(const dwl_column *col, const char *collate, char *buf, size_t n);
  /* Before both sides of a comparison of text that must tell any two
   * different values apart (change detection) whatever the column's
   * collation ("BINARY "); NULL: comparisons are exact already. */
  const char *exact_text;
  /* The indexes of a table, two parameters: the schema (NULL: the
   * connection's) and the bare table name; rows of index name and column
   * name, each index's columns in their order (check --connect looks for
   * one on the job's key).  NULL: not known, not checked. */
  const char *key_index_sql;
  /* Distributed tables (MariaDB's Spider engine), whose rows live on other
   * servers: the query giving one row, the engine's name, when the table
   * (two parameters: the schema, NULL: the connection's, and the bare
   * name) is one; NULL: the warehouse has none.  remote_atomic_sql gives
   * one row, 1 when this session commits such a table's writes on all its
   * servers or on none (two-phase), else 0; remote_atomic_name is the
   * setting that decides it, for messages. */
  const char *remote_table_sql;
  const char *remote_atomic_sql;
  const char *remote_atomic_name;
  /* Run on the session once the table is found to be a distributed one,
   * or NULL.  Spider keeps the shards' statistics for spider_sts_interval
   * and spider_crd_interval seconds (10 and 51 by default), and a plan made
   * with those of a table still empty when they were fetched scanned the
   * table once per staged row: an expire of 6,000 rows took 87 s instead
   * of 1.8 (bench/RESULTS.md, "MariaDB Spider").  0 fetches them for each
   * statement.  A join that reads such a table from a head-side table
   * (pushdown's) runs one query per row on the shard holding it, unless
   * the join may batch its keys (Batched Key Access, join_cache_level 5
   * and up; MariaDB's default is 2): then each shard takes one query per
   * join buffer of keys.  10k staged keys joined with 100k rows: 1.7 s a
   * row at a time, 0.08 s batched.  spider_bulk_size (16,000 bytes by
   * default) is what the head sends a shard of a multi-row INSERT at a
   * time: dwload's statements (about 45 KB on MariaDB) went as 2 to 4
   * INSERTs per shard; at 1 MiB each goes as one (a table's own bulk_size
   * parameter still wins). */
  const char *remote_session_sql;
  /* A distributed table's staged operations go as key lists, not joins
   * (src/write/staged_lists.c): the type of a column numbering a stage's
   * rows, by which they are read back in pages; and what follows the
   * table's name in such an UPDATE (MariaDB hands an UPDATE to the engine
   * whole, for Spider to send to each shard, only where it reads through
   * no index it changes: " USE INDEX ()"), or NULL. */
  const char *remote_stage_serial;
  const char *remote_update_hint;
  /* The XA transactions in a state (one parameter) that hold a
   * distributed table's rows, one row each: the xid as SQL (XA RECOVER
   * FORMAT='SQL' spells it so), and the servers of its branches (or
   * NULL); NULL: none known.  xa_prepared is the state of one prepared
   * and not decided, xa_decided of one decided to commit whose branches
   * may not all have committed. */
  const char *prepared_xa_sql;
  const char *xa_prepared;
  const char *xa_decided;
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

  /* ---- SQL builders: the statements whose syntax differs ----
   * Each appends to b (a failed buffer stays failed).  The target table
   * is aliased d and the stage s; `on` is the condition matching them. */
  /* UPDATE d from s: begin appends up to the first SET pair, end the rest;
   * set_prefix goes before each target column of a SET pair ("d." where
   * the UPDATE joins, "" where it names the table alone). */
  void (*update_begin)(dwl_buf *b, const char *table, const char *stage, const char *on);
  void (*update_end)(dwl_buf *b, const char *stage, const char *on);
  const char *set_prefix;
  /* Keyed statements, or NULL where the warehouse's planner already probes
   * the key index for a stage that is small beside the table (MariaDB,
   * SQLite).  PostgreSQL's, at its default random_page_cost, hashes a few
   * thousand staged rows against a seq scan of every row of a large table
   * (bench/RESULTS.md, "Keyed statements").  Used only where `on` is
   * served by the key index and the stage is a small share of the table
   * (target_keyed).  update_keyed_end ends an UPDATE begun by update_begin
   * so that each stage row finds its rows through the index;
   * join_keyed_begin/join_keyed_end enclose "SELECT ... FROM table x WHERE
   * <match>", a row source joined with LEFT JOIN so that each outer row
   * probes it (the caller writes "LEFT JOIN", the subquery and "ON ..."
   * after begin, end and the alias). */
  void (*update_keyed_end)(dwl_buf *b, const char *table, const char *stage, const char *on);
  const char *join_keyed_begin;
  const char *join_keyed_end;
  /* DELETE the rows of d that match a row of s. */
  void (*delete_matching)(dwl_buf *b, const char *table, const char *stage, const char *on);
  /* DELETE the rows of d that match no row of s; stage_col is a column of
   * s that is never NULL (for an anti-join). */
  void (*delete_unmatched)(dwl_buf *b, const char *table, const char *stage, const char *on, const char *stage_col);
  /* What encloses a column after a temporary table's name in CREATE
   * TEMPORARY TABLE ... AS SELECT to index it, or NULL.  MariaDB joins two
   * temporary tables of a few thousand rows by block nested loops unless
   * one has an index; PostgreSQL hashes them and SQLite builds an
   * automatic index. */
  const char *temp_index_begin;
  const char *temp_index_end;
  /* 1 where CREATE INDEX on a temporary table stays in the transaction and
   * takes any column: PostgreSQL and SQLite.  MariaDB refuses a TEXT
   * column without a prefix length, and lists CREATE INDEX among the
   * statements that commit a transaction implicitly. */
  int index_temp;
  /* ", INDEX (...)" on columns ix[0..n) of a temporary table being
   * created (CREATE TEMPORARY TABLE t (cols<here>)), or NULL: where
   * index_temp is not set, a stage's index is declared with it. */
  void (*stage_index)(dwl_buf *b, char *const *cols, const dwl_column *decl, const size_t *ix, size_t n);

  /* ---- whole-table copies (dwload migrate) ---- */
  /* How a job names a table the catalog lists (SQLTables' schema, which
   * may be "", and name), into out; 0: a system table, not copied. */
  int (*catalog_name)(const char *schema, const char *table, char *out, size_t n);
  /* Corrects what SQLDescribeCol reports of a column, or NULL. */
  void (*describe_fixup)(SQLSMALLINT type, SQLULEN *size, SQLSMALLINT *digits);
  int pk_after_load;            /* a primary key is built faster once, after the rows */
  int stream_scan;              /* the driver streams a whole-table scan (0: it would hold it: read in key chunks) */
  size_t key_bytes;             /* most bytes a primary key holds, 4 per character of text (0: no limit) */
  const char *bulk_session_sql; /* before a bulk copy's chunks (each commits with its progress), or NULL */
  /* A query's rows as one text value, each field LENGTH:TEXT or a bare
   * ':' for NULL, in the query's order; cols are the quoted columns of
   * `inner`.  NULL: rows are read one by one. */
  void (*packed_select)(dwl_buf *b, const char *const *cols, size_t n, const char *inner);
  /* Rows as one array parameter: the INSERT taking it (cols: the quoted
   * column list "a, b"), a row appended to the array literal (`first`:
   * the literal is empty), and the literal's end.  NULL: no arrays. */
  void (*row_array_insert)(dwl_buf *b, const char *table, const char *cols);
  int (*row_array_add)(dwl_buf *b, int first, const dwl_value *row, size_t n);
  int (*row_array_end)(dwl_buf *b);
};

/* The warehouses dwload speaks, for messages, into out: "SQLite,
 * PostgreSQL, MariaDB".  (Into the caller's buffer: migrate's threads
 * connect at once, so no shared static.) */
void dialect_names(char *out, size_t n);

/* The built-in dialects, one per file. */
extern const dialect dialect_sqlite, dialect_pg, dialect_mariadb;

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
