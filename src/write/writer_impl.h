/* What the writer's files share (private to src/write/): the writer's
 * state, its staged kinds of operation and the functions one file of it
 * calls in another.  writer.c opens and closes the writer; plan.c runs or
 * prints a statement; slots.c builds the per-key statements; staged.c the
 * stages and their applying; sink.c is the engine's sink; batch.c the
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
  batch *b;
  char *apply_sql;
  char *apply_keyed_sql;   /* the same with the dialect's keyed statement, or NULL (apply_sql) */
  long long applied;       /* rows of b already applied */
  size_t *index;           /* columns indexed in its CREATE TEMPORARY TABLE (dialect stage_index) */
  size_t nindex;
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

/* sink.c: the key's values of a source row into p; returns how many. */
size_t key_params(const writer *w, const dwl_value *row, dwl_value *p);

#pragma GCC visibility pop

#endif
