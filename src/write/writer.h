/* Target writer: turns rows and the change engine's operations into SQL
 * with bound parameters.  Inserts are batched as multi-row INSERT ...
 * VALUES statements (batch.h); expires, type 1 updates and removals are
 * staged and applied per kind where the dialect stages writes, else
 * prepared once and executed per key.  In plan mode nothing is executed;
 * with --sql each statement is printed with its parameters instead. */
#ifndef DWL_WRITER_H
#define DWL_WRITER_H

#include <stdio.h>

#include "scd.h"
#include "target.h"

typedef struct writer writer;

/* cols: the engine's column sets (NULL for append/replace).  sqlout: where
 * plan --sql prints (NULL: print nothing). */
int writer_open(target *t, const scd_cols *cols, int plan, FILE *sqlout, writer **out, dwl_error *err);
void writer_free(writer *w);

/* The value of the run id column (target.run_id_column) for this run's
 * rows: its id, or in plan mode a placeholder. */
const dwl_value *writer_run_id(const writer *w);

/* Inserts a source row as is (append, replace). */
int writer_insert_source(writer *w, const dwl_value *row, dwl_error *err);
/* Removes every row (replace), inside the run's transaction. */
int writer_delete_all(writer *w, dwl_error *err);
/* The statements writer_flush will run: the write phase's total, each of
 * them a step of its progress. */
long long writer_pending_statements(const writer *w);
/* Sends buffered inserts. */
int writer_flush(writer *w, dwl_error *err);
/* Stages the distinct keys of `rows` that have no NULL part in a temporary
 * table for a keyed lookup; sets *table to its name and *cols to its
 * quoted column names (owned by the writer).  Returns the number of keys
 * staged, or -1.  Rows whose key has a NULL part are left to the caller. */
long writer_stage_keys(writer *w, const rowset *rows, const char **table, char *const **cols, dwl_error *err);
/* The first row of each distinct key of `rows` that has no NULL part, in
 * the rows' order: what writer_stage_keys stages, for a caller that sends
 * the keys as lists instead.  An array the caller frees, its length in
 * *n; NULL (an error set) when out of memory. */
const dwl_value **writer_key_rows(const writer *w, const rowset *rows, size_t *n, dwl_error *err);
/* A temporary table of the caller's own, filled with the same batched
 * multi-row inserts (pushdown stages the delta so).  Created at open;
 * staged even in plan mode (a temporary table is no write).  cols are
 * quoted names, decl their types; both are copied.  collate (or NULL)
 * gives each column the table column's character set and collation
 * (tcol.have_collate, borrowed: it lives as long as the target). */
typedef struct writer_stage writer_stage;
int writer_stage_open(writer *w, const char *name, char *const *cols, const dwl_column *decl,
                      const char *const *collate, size_t ncols, writer_stage **out, dwl_error *err);
int writer_stage_add(writer_stage *s, const dwl_value *row, dwl_error *err);
int writer_stage_flush(writer_stage *s, dwl_error *err);
void writer_stage_free(writer_stage *s);
/* The same, with an index on columns ix[0..nix) declared in its CREATE
 * TEMPORARY TABLE, where the dialect declares one there (stage_index:
 * MariaDB, where CREATE INDEX would commit the run's transaction);
 * elsewhere the caller indexes it once filled, if at all. */
int writer_stage_open_ix(writer *w, const char *name, char *const *cols, const dwl_column *decl,
                         const char *const *collate, size_t ncols, const size_t *ix, size_t nix,
                         writer_stage **out, dwl_error *err);
/* After statements of the run's own (writer_exec) inserted versions: the
 * next sequence surrogate key follows the table's greatest, read on the
 * run's connection (pending rows are flushed first). */
int writer_reload_sk(writer *w, dwl_error *err);
/* Runs one statement that changes the target, or in plan mode prints it
 * (with --sql) instead. */
int writer_exec(writer *w, const char *sql, const dwl_value *params, const SQLSMALLINT *types, size_t n,
                dwl_error *err);
/* An update (nset > 0) or a delete (nset == 0) of a distributed (Spider)
 * table's rows, named by rows the caller selects on the head, by key
 * lists as the writer applies its own stages there (staged_lists.c),
 * where an UPDATE ... JOIN would run a SELECT and an UPDATE per row on
 * the shards.  exprs[] are nmatch + nset expressions over `from` ("FROM
 * stage s WHERE ..."; params bound): each row's values of table columns
 * match[] (by index), which name the rows it changes (with `where`, a
 * condition on the table alone, or NULL), then the values it sets into
 * table columns set[], if any.  They are evaluated once into a temporary
 * table, read back in pages.  Plan mode prints the form of the
 * statements.  1 when applied; 0 when the table is not a distributed
 * one, or a column set is matched on (the caller joins instead); -1 on
 * error. */
int writer_update_lists(writer *w, const char *const *exprs, const char *from, const dwl_value *params,
                        const SQLSMALLINT *ptypes, size_t np, const size_t *match, size_t nmatch, const size_t *set,
                        size_t nset, const char *where, dwl_error *err);
/* The engine's sink, bound to this writer. */
scd_sink writer_sink(writer *w);

#endif
