/* The target table: connection, dialect, the table's column layout
 * (source columns plus the dimension's bookkeeping columns), creating it
 * with the indexes dwload's own lookups need, and reading its current
 * versions back in source-column layout.  One interface, five files:
 * target.c (connections), target_layout.c (columns and roles),
 * target_table.c (an existing table's columns, CREATE TABLE and the key
 * index), target_scan.c (reading versions, counting rows),
 * target_widen.c (schema.widen: columns too narrow for the source),
 * target_remote.c (distributed tables: Spider). */
#ifndef DWL_TARGET_H
#define DWL_TARGET_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "dialect.h"
#include "dwload/plugin.h"
#include "err.h"
#include "odbc_conn.h"
#include "spec.h"
#include "ts.h"

/* TC_RUN_ID (target.run_id_column) is always the last column: the source
 * columns keep their places after the surrogate key. */
enum tc_role { TC_SRC = 0, TC_SK, TC_VALID_FROM, TC_VALID_TO, TC_CURRENT, TC_DELETED, TC_RUN_ID, TC_NROLES };

/* The run id column's width: a run id is 36 characters (run_id.h); room
 * for ids of another form keeps existing tables usable. */
#define TARGET_RUN_ID_WIDTH 64

typedef struct tcol {
  const char *name;      /* borrowed from the spec or the source */
  char *q;               /* quoted identifier */
  int role;              /* enum tc_role */
  size_t src;            /* TC_SRC: source column index */
  dwl_column decl;       /* declared type for CREATE TABLE and binding */
  char *have_type;       /* an existing table's declared type (SQLite), or NULL */
  int real_digits;       /* numeric values beyond these digits would be rounded; 0: none */
  int have_known;        /* an existing table's column: have is its kind and limits (PostgreSQL, MariaDB) */
  dwl_column have;
  int have_check;        /* it may take less than the source holds: check values */
  int not_in_table;      /* a column of the layout the existing table has not (schema.c judges it);
                          * scans read NULL for it: the table has it only as this run's ALTER TABLE */
  int added;             /* not_in_table, and this run's ALTER TABLE added it */
  int marked;            /* added by a run that failed after its ALTER TABLE committed (MariaDB):
                          * still to be filled, as a new column is */
  int have_min_set, have_max_set;  /* an integer column narrower than 64 bits: its range */
  long long have_min, have_max;
  char *have_attrs;      /* the rest of its declaration a widening repeats (column_limits_sql), or NULL */
  char *have_collate;    /* text: its character set and collation, which stage columns for it take, or NULL */
  int have_loose;        /* text: that collation holds text equal that differs (case, trailing spaces) */
  dwl_column want;       /* schema.widen: the wider type the run's values need (target_widen.c) */
  int want_set;          /* want is pending: not the column's type yet */
  int widened;           /* this run widened it */
} tcol;

/* The type a stage column for `c` is declared with: its declared type,
 * except that text from the source (a CSV column without source.types)
 * for an existing table's column of another kind takes the table's kind:
 * the stage is joined to the table and sets its columns, and PostgreSQL
 * refuses `integer = text`.  Limits are left out: the values were checked
 * against the column's own per row (target_value_fits). */
static inline dwl_column tcol_stage_decl(const tcol *c)
{
  dwl_column d = c->decl;
  if (c->have_known && d.type == DWL_TYPE_TEXT && c->have.type != DWL_TYPE_TEXT) {
    d.type = c->have.type;
    d.precision = d.scale = 0;
  }
  return d;
}

typedef struct target {
  odbc_conn *c;
  odbc_conn *reader;     /* scans, when the dialect wants them separate */
  char *connstr;         /* the connection string used, with dialect extras */
  const dialect *d;
  const dwl_spec *spec;
  const char *run_id;    /* this run's id, which every row it writes carries (TC_RUN_ID); NULL in plan mode */
  char *table_q;         /* quoted, possibly schema-qualified */
  char *schema, *table;  /* unquoted parts */
  tcol *cols;
  size_t ncols;
  ssize_t ix[TC_NROLES]; /* column index of each bookkeeping role, -1 absent */
  const dwl_column *src;
  size_t nsrc;
  /* Columns after the nsrc of src that the engine reads but the table has
   * not (columns.exclude of the lmd or deletes column): set before
   * target_layout; scans give rows of nsrc + nhidden values. */
  size_t nhidden;
  ssize_t lmd;           /* source index of the lmd column, -1 none (or hidden) */
  int exists;
  int created;
  /* The foreign tables among an existing table and its partitions
   * (postgres_fdw's, say: the dialect's foreign_parts_sql), "p (server s,
   * w)" each, comma-separated; NULL: none.  foreign_self: the table is
   * itself one.  Set by target_prepare_table. */
  char *foreign;
  int foreign_self;
  /* An existing table's columns that the layout has not (a column the
   * source no longer delivers): malloc'd names, for schema.c to judge. */
  char **absent;
  size_t nabsent;
  int vdate;             /* validity (and lmd) columns are DATE, not TIMESTAMP */
  /* The lmd is an integer sequence (a version number, a log sequence
   * number): dwl_ts.us holds the sequence itself, the validity columns are
   * integers, and no clock applies (dwload-job(5), SEQUENCES). */
  int vseq;
  char *cur_pred;        /* SQL predicate for current versions (scd2) */
  char open_end[32];     /* canonical open end, "" when NULL */
  char lock_done_sql[160]; /* bounds the session's lock waits (target.lock_timeout); "" none */
  int widened;           /* columns this run widened (schema.widen) */
  /* The run's transaction has read or written the table: where DDL is
   * not transactional (MariaDB) it holds a metadata lock that an ALTER on
   * another connection would wait for to the end of the run. */
  int touched;
  /* target_count's answer, asked once a run (engine: auto, the streamed
   * initial load, the lookup's choice each need it before the run writes;
   * a distributed table is counted on its servers): -1 not asked yet. */
  long long counted;
  /* target_key_indexed's answer for target_keyed: -1 not asked yet. */
  int key_indexed;
  /* The table is a distributed one (target_check_remote): its engine's
   * name ("SPIDER"), "" for a local table. */
  char remote[32];
  /* ... and its commit is not atomic, accepted (target.accept_non_atomic):
   * what commits apart, for target_commit_apart (NULL when atomic). */
  const char *remote_apart;
  char **table_names;    /* target_table_names */
  size_t ntable_names;
  int writer_probed;     /* SQLite: no other writer held the database at the job lock */
  /* table_lock.c: the table's identity and this run's mark */
  char lock_id[300], lock_host[128], lock_pid[32], lock_since[32];
  int lock_marked;
} target;

/* The table column of source column src: target_layout lays the source
 * columns out in order, after the surrogate key column when there is one
 * and before every other role's column. */
static inline size_t target_src_col(const target *t, size_t src)
{
  return src + (t->ix[TC_SK] >= 0 ? 1 : 0);
}

/* Connects (adding the dialect's connection attributes), detects the
 * dialect.  Does not touch any table. */
int target_connect(const dwl_spec *spec, target **out, dwl_error *err);

/* Another connection like the run's: the same attributes and session
 * setup, lock waits bounded by target.lock_timeout. */
int target_open_conn(target *t, odbc_conn **out, dwl_error *err);
void target_free(target *t);

/* After a commit that created the table or inserted many rows: the
 * dialect's ANALYZE, best effort (a warning when it fails). */
void target_analyze_after_load(target *t, long long inserted);

/* target.lock_timeout ran out: `err`, from a statement of `t` (NULL: none),
 * is the dialect's lock conflict, another session holding a lock the
 * statement needed.  It becomes exit 3, as for the job's lock: worth a
 * retry.  Any other error is left as it is. */
void target_lock_timed_out(target *t, dwl_error *err);

/* target_remote.c.  After finding the table exists: whether it is a
 * distributed table (t->remote), and if so whether its servers commit
 * together; when they would not, refuses it (exit 4,
 * DWL_CAUSE_NON_ATOMIC) unless target.accept_non_atomic, with a warning.
 * 0 or -1. */
int target_check_remote(target *t, dwl_error *err);
/* The prepared XA transactions holding a distributed table's rows, each
 * as "xid on host:port, ..." (the xid as SQL, the servers holding its
 * branches) appended to xids ("; "-separated), on a connection of its own.
 * Returns how many (0 where the dialect has none), -1 with err. */
int target_prepared_xa(target *t, const char *state, dwl_buf *xids, dwl_error *err);
/* A lock wait that ran out on a distributed table: when prepared XA
 * transactions exist, err names them (and gets DWL_CAUSE_PREPARED_XA for
 * its hint).  Best effort: a failure to list them is a warning. */
void target_name_prepared_xa(target *t, dwl_error *err);
/* After a failed commit call on a distributed table: the XA transactions
 * decided to commit whose branches some server (one that died at the
 * commit) may still hold prepared, logged with what ends them.  Best
 * effort. */
void target_warn_decided_xa(target *t);
/* Whether the run's rows commit apart from its checkpoint (foreign
 * partitions, or a distributed table accepted without an atomic commit):
 * then a failed commit call leaves part of the run committed or not
 * whatever the state row says.  When so, says what commits apart into b
 * and returns 1; else 0, b untouched. */
int target_commit_apart(const target *t, dwl_buf *b);

/* schema.new_columns: ignore, before the layout: the existing table's
 * column names into *names (kept in t; NULL when the table does not
 * exist, or with another setting), for the source to leave out the
 * columns the table has not (source_config's table_cols). */
int target_table_names(target *t, char *const **names, size_t *n, dwl_error *err);

/* Builds the column layout from the source columns. */
int target_layout(target *t, const dwl_column *src, size_t nsrc, dwl_error *err);

/* Checks whether the table exists and reads its columns (the layout's it
 * lacks are marked not_in_table, its own the layout lacks are t->absent:
 * schema.c judges both); when it is missing and `create` is set, creates
 * it (and its indexes). */
int target_prepare_table(target *t, int create, dwl_error *err);

/* The risk of a table with foreign partitions (t->foreign), into b: its
 * servers commit their part of a run apart from the warehouse, so there
 * is no global commit.  Returns 0 (b untouched) for a table without. */
int target_foreign_risk(const target *t, dwl_buf *b);
/* The same as a warning in the log (run and plan). */
void target_warn_foreign(const target *t);

/* Whether an index of the existing table begins with the job's key
 * columns (in any order), as the one dwload creates does: 1 yes, 0 no, 2
 * the job needs none (no key, or not mode scd2 or upsert) or the dialect
 * cannot tell (a foreign table: its server has the indexes), -1 with err
 * set.  After target_prepare_table. */
int target_key_indexed(target *t, dwl_error *err);
/* The first key column of the existing table whose collation holds
 * different texts equal (tcol.have_loose: case, accents, trailing
 * spaces), or NULL.  After target_prepare_table. */
const tcol *target_loose_key(const target *t);

/* plan --sql: prints to `out` the DDL a run would execute on the table
 * (CREATE TABLE and its key index when it does not exist yet; with
 * schema.new_columns: add, each new column's ALTER TABLE), each
 * statement followed by ";\n"; runs none.  After target_prepare_table. */
int target_plan_table(target *t, FILE *out, dwl_error *err);

/* schema.new_columns: add: adds each source column the existing table
 * has not (not_in_table), typed as CREATE TABLE would type it, by the
 * dialect's ALTER TABLE; existing rows hold NULL there.  Inside the run's
 * transaction where DDL is transactional; elsewhere (MariaDB) on a
 * connection of its own, committed at once.  With `print` (plan --sql)
 * the statements are printed instead.  Returns how many, or -1. */
int target_add_columns(target *t, FILE *print, dwl_error *err);

/* Executes one DDL statement: on the run's connection where DDL is
 * transactional (or no transaction is open), else on a connection of its
 * own, committed at once, the job's lock staying held on the run's. */
int target_exec_ddl(target *t, const char *sql, dwl_error *err);

/* schema.widen (target_widen.c).  A value of source column src (its
 * canonical text) that target_value_fits found too long or too large for
 * the existing table's column: names the type that would hold it and the
 * column's own into need and have (n bytes each).  Returns 1 when a
 * wider column would hold it (with `raise`, the column's pending type
 * grows to hold it; target_widen applies it), 0 when none would (text
 * that is not a number for a number column, beyond the widest numeric,
 * SQLite, whose columns take any value). */
int target_widen_value(target *t, size_t src, const char *v, size_t len, int raise, char *need, char *have,
                       size_t n);
/* The source's declared types: a varchar(n) or numeric(p,s) wider than its
 * column makes the wider type pending, before any row. */
void target_widen_declared(target *t);
/* Whether a widening is pending. */
int target_widen_pending(const target *t);
/* Applies the pending widenings, each by the dialect's widen_column,
 * logged as "widened t.c from VARCHAR(20) to VARCHAR(64)"; never to a
 * narrower type.  With `plan` nothing is executed: the log says "would
 * widen" and `print` (plan --sql; NULL: none) gets each statement.
 * Returns how many, -1 with err. */
int target_widen(target *t, int plan, FILE *print, dwl_error *err);

/* After the commit, where the dialect marks added columns: unmarks those
 * this run filled (added or marked); best effort, a warning when it
 * fails (the next run fills them once more). */
void target_unmark_columns(target *t);

/* Current versions (scd2) or all rows (upsert), in source layout.  With
 * all_cols only the listed source columns are fetched (others NULL).
 * Values are normalized by their source column types. */
typedef int (*target_row_fn)(void *ud, const dwl_value *row, const dwl_ts *valid_from, int deleted,
                             dwl_error *err);
int target_scan(target *t, const size_t *cols, size_t ncols, int all_cols, target_row_fn fn, void *ud,
                dwl_error *err);
/* A stored value of source column `src` in the canonical text the source
 * side writes (what target_scan hands on): the lmd as the table's
 * timestamp text, others by norm_stored_col; *out may point into scratch.
 * -1 with *why when it cannot be read so. */
int target_norm_stored(const target *t, size_t src, const dwl_value *in, dwl_buf *scratch, dwl_value *out,
                       const char **why);
/* target_scan of every column, in the order of the surrogate key (where
 * the table has one): the same order on every warehouse. */
int target_scan_by_sk(target *t, target_row_fn fn, void *ud, dwl_error *err);
/* 1 when target_scan works after the run has written in its transaction;
 * 0 where the scan reads on a second connection (SQLite: the driver
 * streams results only outside a transaction), which the run's uncommitted
 * writes can lock out once they spill from the writer's page cache (a
 * spilled delta's second partition failed so, "database is locked", after
 * the first wrote 500k changes).  Such runs read through staged keys. */
int target_scan_after_writes(const target *t);
/* Deleted versions that are not current (scd2, expire style; without a
 * deleted column, every version of a key with no current one); the
 * callback's timestamp is the version's valid_to. */
int target_scan_deleted(target *t, const size_t *cols, size_t ncols, target_row_fn fn, void *ud, dwl_error *err);

/* The keys a keyed scan reads: a staged key table joined on the key
 * columns, or one key compared NULL-safely. */
typedef struct target_keys {
  const char *stage;            /* temporary table of keys, or NULL */
  char *const *stage_cols;      /* its quoted key column names */
  const dwl_value *keyrow;      /* or: one key, in source layout */
  /* or: a list of keys without a NULL part, each a row in source layout,
   * matched by an OR of equalities (a distributed table, which runs a
   * join with a stage of the head a row at a time: TARGET_KEY_LIST) */
  const dwl_value *const *keyrows;
  size_t nkeyrows;
  const size_t *key;            /* source indexes of the key columns */
  size_t nkey;
} target_keys;

/* Keys a list holds at most (fewer where the dialect's max_params is
 * lower): a few hundred, as the writer's key lists (staged_lists.c). */
#define TARGET_KEY_LIST 500

/* Like target_scan (deleted = 0) or target_scan_deleted (deleted = 1), for
 * the given keys only: the cost follows the delta, not the dimension. */
int target_scan_keys(target *t, const size_t *cols, size_t ncols, int deleted, const target_keys *keys,
                     target_row_fn fn, void *ud, dwl_error *err);

/* Every version (scd2) of the given keys, every column, in source layout:
 * valid_to NULL for an open version. */
typedef int (*target_hist_fn)(void *ud, const dwl_value *row, const dwl_ts *valid_from, const dwl_ts *valid_to,
                              int deleted, dwl_error *err);
int target_scan_history(target *t, const target_keys *keys, target_hist_fn fn, void *ud, dwl_error *err);

/* Rows in the table (0 when it does not exist), to choose between a full
 * scan and a keyed lookup: the catalog's estimate where the warehouse
 * keeps one (PostgreSQL, MariaDB) and it is above 0, else a count.  Asked
 * once: later calls answer the same (the callers ask before the run
 * writes). */
long long target_count(target *t, dwl_error *err);
/* Rows looked up by key pay off while they are few beside the table: one
 * tenth is where staging keys and joining stops beating one scan (lookup:
 * auto, and the keyed statements below). */
#define TARGET_KEYED_RATIO 10
/* Whether the writes of `rows` staged rows should find theirs through the
 * key index with the dialect's keyed statements (dialect.h,
 * update_keyed_end): the dialect has them, the table has the key index,
 * and rows * TARGET_KEYED_RATIO is below its target_count.  1 yes, 0 no,
 * -1 with err set. */
int target_keyed(target *t, long long rows, dwl_error *err);
/* Whether a key's past versions are best found by probing the key index
 * once per staged row that needs them: the index holds every version
 * (a dialect without partial indexes), the table is a local one, and
 * rows * TARGET_KEYED_RATIO is below its target_count.  1 yes, 0 no, -1
 * with err set. */
int target_probes_history(target *t, long long rows, dwl_error *err);
/* Rows in the table, counted (0 when it does not exist). */
long long target_rows(target *t, dwl_error *err);
/* scd2: the latest valid_from in the table into out, *found = 1; *found =
 * 0 when the table has no version. */
int target_latest_start(target *t, dwl_ts *out, int *found, dwl_error *err);

/* Checks a source column's canonical value against what the table's
 * column can take.  Returns 1 for a value the warehouse would refuse
 * without saying which row, or round (a NUL byte in PostgreSQL text; for
 * an existing table's column: text that is not a number for a number
 * column, a number beyond its numeric(p,s), text longer than its
 * varchar(n)): *why says why, the row is bad.  Returns -1 for a value the column would keep rounded
 * (an existing SQLite column of NUMERIC affinity: 15 significant digits;
 * MariaDB's DECIMAL(65,30) for a numeric without a precision): the run
 * fails, *why says why and what/n what to do about it.  Else 0. */
int target_value_fits(const target *t, size_t src, const char *v, size_t len, const char **why, char *what,
                      size_t n);

/* Canonical text of a validity or lmd value in this table: a date when the
 * lmd column is declared date, the integer of a sequence (vseq), else a
 * full timestamp.  Returns the length. */
size_t target_ts_text(const target *t, const dwl_ts *ts, char out[32]);

/* Reads a validity or lmd value as the table holds it: an integer of a
 * sequence (vseq), else a timestamp.  0, or -1. */
int target_ts_parse(const target *t, const char *s, size_t len, dwl_ts *out);

/* Parameters of cur_pred (0 or 1 values: the open end). */
size_t target_cur_params(const target *t, dwl_value *out);

#endif
