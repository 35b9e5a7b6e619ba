/* What the writer's files share (private to src/write/): the writer's
 * state, its staged kinds of operation and the functions one file of it
 * calls in another.  writer.c opens and closes the writer; plan.c runs or
 * prints a statement; slots.c builds the per-key statements; staged.c the
 * stages and their applying (staged_lists.c a distributed table's); sink.c is the engine's sink; batch.c the
 * bulk inserts they all send rows through. */
#ifndef DWL_WRITER_IMPL_H
#define DWL_WRITER_IMPL_H

#include <stdint.h>

#include "batch.h"
#include "fingerprint.h"
#include "writer.h"

enum { SLOT_EXPIRE, SLOT_T1_CUR, SLOT_T1_ALL, SLOT_UPDATE, SLOT_REMOVE, SLOT_DROP, SLOT_RESHAPE, NSLOTS };
/* Stages: one per slot, plus the keys of a keyed lookup. */
enum { STAGE_KEYS = NSLOTS, NSTAGES };

/* What a stage column or a reshape's SET pair holds besides source
 * columns (which are their indexes, >= 0): the bookkeeping values. */
enum { SC_VF = -1, SC_VT = -2, SC_DEL = -3, SC_OLDVF = -4, SC_OLDDEL = -5, SC_CUR = -6, SC_SK = -7, SC_RUN = -8 };

/* The same application by key lists, for a remote (Spider) table
 * (staged_lists.c): the stage's first nmatch columns match table columns
 * mcol[]; SET pairs set table column set[i] from stage column src[i]. */
typedef struct stage_lists {
  int del;                 /* a DELETE (no SET pairs) */
  size_t nmatch;
  const char **mcol;       /* quoted table columns (borrowed from the target) */
  size_t nset;
  const char **set;        /* quoted table columns (borrowed) */
  size_t *src;             /* stage column indexes */
  char *where;             /* a condition without parameters ANDed to the matches, or NULL */
  char *set_fixed;         /* a SET pair without parameters, or NULL */
  char serial[64];         /* the quoted column numbering the stage's rows, read back by it */
  size_t rows;             /* staged rows per statement */
  char *full_sql;          /* the statement for `rows` rows */
  odbc_stmt *full;         /* and its preparation, made once */
} stage_lists;

/* A staged kind of operation: its temporary table and the statement that
 * applies it. */
typedef struct stage {
  int used;
  char name[32];
  char **cols;             /* quoted stage column names */
  size_t ncols;
  dwl_column *decl;        /* their types */
  const char **collate;    /* the table column's character set and collation each takes, or NULL
                            * (borrowed from the target's columns) */
  SQLSMALLINT *types;      /* their parameter types (stage_init's stages), or NULL */
  batch *b;
  char *apply_sql;
  char *apply_keyed_sql;   /* the same with the dialect's keyed statement, or NULL (apply_sql) */
  long long applied;       /* rows of b already applied */
  size_t *index;           /* columns indexed in its CREATE TEMPORARY TABLE (dialect stage_index) */
  size_t nindex;
  stage_lists *lists;      /* applied by key lists (a remote table), or NULL */
} stage;

struct writer {
  target *t;
  const scd_cols *cols;
  int plan;
  FILE *sqlout;
  batch *main;
  char *what;              /* "inserting into TABLE", for errors of batches sent on their own */
  dwl_value *params;       /* scratch for binding one row */
  dwl_value *row;          /* one row being built */
  dwl_value rid;           /* the run id column's value (target.run_id_column) */
  unsigned char *from_t1;  /* per table column: a type 1 column (takes t1vals) */
  odbc_stmt *slots[NSLOTS];
  char *slot_sql[NSLOTS];
  SQLSMALLINT *slot_types[NSLOTS];
  stage stages[NSTAGES];
  int64_t next_sk;
  int staged_expire;       /* the last expire was staged, not yet applied: */
  fp128 staged_key;        /* its key */
  int64_t staged_vf;       /* and the valid_from of the version it closes */
  char vf[32], vt[32], sk[68], ovf[32];
  long *rs_what;           /* what a reshape sets (reshape_set) */
  size_t rs_n;
  int staged_t1;           /* a type 1 overwrite of a current version was staged: */
  fp128 t1_key;            /* its key */
  int nlists;              /* writer_update_lists' stages made: the next one's number */
};

/* The functions the writer's files share: hidden, so that a plugin
 * (dwload links with -export-dynamic) never binds to run_sql or staged. */
#pragma GCC visibility push(hidden)

/* writer.c: the parameter type of table column tc; the table column of
 * source column src. */
SQLSMALLINT col_ptype(const writer *w, size_t tc);
size_t tcol_of(const writer *w, size_t src);
/* Whether the table has a run id column (target.run_id_column): the
 * updates that change a row's values then set it too. */
int has_run_id(const writer *w);
batch_opts writer_batch_opts(const writer *w, int print);

/* plan.c */
int run_sql(writer *w, odbc_stmt **s, const char *sql, const dwl_value *params, const SQLSMALLINT *types,
            size_t n, dwl_error *err);

/* slots.c: the per-key statements (every dialect builds them: a key with
 * a NULL part is never staged), and what the history repair touches. */
int build_slots(writer *w, dwl_error *err);
int run_slot(writer *w, int slot, const dwl_value *params, size_t n, dwl_error *err);
int stage_role(long what);
size_t what_tcol(const writer *w, long what);
size_t reshape_set(const writer *w, long *what);

/* staged.c */
int stage_init(writer *w, int kind, const char *name, const long *extra, size_t nextra, dwl_error *err);
int build_stages(writer *w, dwl_error *err);
void stage_free(stage *s);
int stage_add(writer *w, int kind, const dwl_value *vals, dwl_error *err);
int staged_key(const writer *w, const dwl_value *keyrow);
/* steps: counts each statement run into the write phase's progress, or
 * NULL; stages_pending: how many it will run. */
int stages_apply(writer *w, long long *steps, dwl_error *err);
long long stages_pending(const writer *w);
void stage_step(long long *steps);

/* staged_lists.c: a remote table's stages, applied by key lists.
 * stage_lists_init describes stage s's application (after stage_init
 * made its columns): match the first nmatch stage columns with table
 * columns mcol[], ANDed with `where` (or NULL); set table columns set[]
 * from stage columns src[], and `set_fixed` (or NULL); del: a DELETE.
 * A stage that sets a column it matches on keeps its join (s->lists
 * stays NULL). */
int stage_lists_init(writer *w, stage *s, int del, const char *const *mcol, size_t nmatch, const char *const *set,
                     const size_t *src, size_t nset, const char *where, const char *set_fixed, dwl_error *err);
/* The statements stage_lists_apply runs for `rows` staged rows. */
long long stage_lists_statements(const stage *s, long long rows);
/* Reads s back page by page and applies it; stage_step for each statement. */
int stage_lists_apply(writer *w, stage *s, long long *steps, dwl_error *err);
void stage_lists_free(stage_lists *l);

/* sink.c: the key's values of a source row into p; returns how many. */
size_t key_params(const writer *w, const dwl_value *row, dwl_value *p);

#pragma GCC visibility pop

#endif
