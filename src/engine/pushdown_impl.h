/* What pushdown's files share and nothing else uses: the pushdown
 * itself, the staged columns' names and the steps each file provides.
 * Private to src/engine/pushdown*.c; hidden from the executable's dynamic
 * symbols (dwload exports its own for plugins): these names are not part of
 * any interface.
 *
 *   pushdown.c        orchestration: running statements, the order of steps
 *   pushdown_sql.c    SQL fragments
 *   pushdown_stage.c  the staging tables and the temporary tables a, b, d, m, e
 *   pushdown_check.c  conflicts and what pushdown refuses
 *   pushdown_late.c   late rows: set apart, counted, rejected, or their
 *                     keys handed to the memory engine (repair)
 *   pushdown_apply.c  the changes applied, their counts
 *   pushdown_absent.c deletes: absent and truncates in scd2
 *   pushdown_old.c    deletes: absent: the rows not past the checkpoint
 *   pushdown_fill.c   load.ignore_null_updates (scd2) */
#ifndef DWL_PUSHDOWN_IMPL_H
#define DWL_PUSHDOWN_IMPL_H

#include "pushdown.h"

#include "buf.h"
#include "scd.h"
#include "spill.h"
#include "target.h"
#include "versions.h"
#include "writer.h"

#pragma GCC visibility push(hidden)

/* Staged columns after the source's, in this order. */
enum {
  X_SEQ, X_ORIGIN, X_T, X_DEL, X_FP2, X_FP1, X_FPA, X_VF, X_VT, X_OE, X_SK, X_SKT,
  X_DONLY,  /* the lmd's text had no time part: a rejected late row's message prints it so */
  X_TIES,   /* a composite load.lmd's tie-breakers, "n:mask:t0:t1:t2" (NULL without): the memory
               engine orders a key's rows at one instant by them (pushdown_take_late) */
  NX
};
extern const char *const xname[NX];

struct pushdown {
  target *t;
  writer *w;
  scd_engine *e;         /* the memory engine: holds the run's truncates (its truncs) and
                            takes the keys handed over */
  const dwl_spec *spec;
  writer_stage *st;
  writer_stage *seen;    /* upsert, deletes: absent: every source key */
  writer_stage *old;     /* upsert, deletes: absent: the rows not past the checkpoint that
                            may revive a key (old_stage) */
  long long nold;        /* rows not past the checkpoint, in oldf */
  spill oldf;            /* ... held in a local file until old_stage: their values (the
                            source's and hidden), then their dwl_seq */
  int oldf_open;
  int old_staged;        /* old_stage has run */
  long long nabsent;     /* the table's keys not in seen (pushdown_count_absent) */
  long long nt1;         /* keys staged for type 1 overwrites (stage_type1) */
  long long ntruncated;  /* the live keys a truncate reaches (truncate_count) */
  dwl_column *decl;      /* dwl_pd_src's columns' types (source columns, then the NX) */
  const char **coll;     /* ... and the source columns' collations */
  int keyed;             /* the delta is a small share of an indexed table: joins with it
                            probe the key index row by row (target_keyed) */
  int probe_gone;        /* a key's deleted versions are found by probing the key index
                            per staged row that needs them (target_probes_history) */
  dwl_value *keyrow;     /* one staged key (and load.partition's other columns) */
  size_t *seencol, nseen; /* seen's columns before dwl_one: source indexes */
  size_t ncols;          /* source columns the table holds */
  size_t nhid;           /* and those it does not (columns.exclude of the lmd or
                            deletes column), staged after the NX columns as
                            dwl_h0, ...: a rejected row's values */
  char (*hname)[32];
  const char **q;        /* quoted target name of each source column */
  dwl_value *row;        /* one staged row */
  long long n;           /* rows staged */
  long long nseq;        /* the next staged row's dwl_seq, in either stage: the source's order */
  long long nlate;       /* of them, late rows set apart in dwl_pd_l (pushdown_late.c) */
  int late_taken;        /* dwl_pd_l built and its rows handed over (pushdown_take_late) */
  int handed;            /* keys went to the memory engine out of the stage: dwl_pd_h */
  int revived;           /* scd2, deletes: absent: absent_revive has run ... */
  long long nrevived;    /* ... and joined this many rows to the delta */
  int keyed_known;       /* keyed decided (pushdown.c: decide_keyed) */
  int nullkeys;          /* a staged key has a NULL part: joins must be NULL-safe */
  char num[3][24];
  char fp[3][33];
  char vf[32], vt[32], sk[65], skt[65];
  char ties[96];
};

/* Its key messages fetch the key's values into fixed arrays. */
#define PD_MAX_KEY SPEC_PUSHDOWN_MAX_KEY

#define ON(p) ((p)->e->origin_name ? (p)->e->origin_name : "source")

/* ---- pushdown.c: statements ------------------------------------------------ */

/* Runs a statement that only builds temporary tables or reads; these run
 * in plan mode too. */
int exec(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n,
         dwl_error *err);
/* Runs a statement that changes the dimension, through the writer (plan
 * mode prints it). */
int apply(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n,
          dwl_error *err);
/* Fresh statistics for a temporary table, where the dialect has them. */
int analyze(pushdown *p, const char *table, dwl_error *err);
/* The first row of a query into `out` (n text values, copied), 1 when
 * there is one, 0 when none, -1 on error. */
int first_row(pushdown *p, dwl_buf *b, char out[][512], int *isnull, size_t n, dwl_error *err);
long long count_of(pushdown *p, dwl_buf *b, const char *table, dwl_error *err);
/* Sets p->keyed and p->probe_gone (once): whether joins with the delta
 * probe the key index. */
int decide_keyed(pushdown *p, dwl_error *err);
/* Each row of a query (params bound) to fn, its values valid during the
 * call; fn returns 0 to go on, 1 to stop, -1 on error.  0 or -1. */
typedef int (*pd_row_fn)(void *ud, const dwl_value *row, dwl_error *err);
int each_row(pushdown *p, dwl_buf *b, const dwl_value *params, const SQLSMALLINT *types, size_t n, pd_row_fn fn,
             void *ud, dwl_error *err);

/* (pushdown_old.c) deletes: absent: the rows not past the checkpoint of
 * keys without a live version, from the local file into dwl_pd_old
 * (once). */
int old_stage(pushdown *p, dwl_error *err);
/* (pushdown_absent.c) "a.<current>", as curpred, with the open end bound
 * (*v) where a staged one is not at hand: 1 when it is. */
size_t cur_bound(const pushdown *p, dwl_buf *b, const char *a, dwl_value *v, SQLSMALLINT *ty);
/* (pushdown_stage.c) Fills p->row: a source row (its hidden values after
 * the table's), then what is staged with it; `seq` numbers it. */
void staged_row(pushdown *p, const dwl_value *row, long long seq, uint64_t origin, const dwl_ts *lmd);

/* ---- pushdown_sql.c: SQL fragments ------------------------------------------ */

/* v as the text s (NULL: SQL NULL), s not copied. */
void pd_text(dwl_value *v, const char *s);
/* A fingerprint as the 32 hex digits staged. */
void fp_hex(fp128 f, char out[33]);
int is_tomb(const pushdown *p);
const char *tq(const pushdown *p, int role);
void keys(const pushdown *p, dwl_buf *b, const char *a);
/* An index on a staged table's key columns (dwl_pd_seen, dwl_pd_src), which
 * the anti-joins of absence and truncates probe once per current version:
 * without one SQLite scans the stage for each (a 100k-row dimension's
 * absence took 332 s).  Where the dialect allows it in the run's
 * transaction (index_temp): not on MariaDB (dialect.h says why). */
int index_keys(pushdown *p, const char *table, dwl_error *err);
void keyeq(const pushdown *p, dwl_buf *b, const char *a, const char *c2);
void alleq(const pushdown *p, dwl_buf *b, const char *a, const char *c2, const size_t *idx, size_t n);
/* load.partition: " AND EXISTS (...)": `a`'s row is of a partition the
 * source delivered; nothing without load.partition. */
void in_partitions(const pushdown *p, dwl_buf *b, const char *a);
void curpred(const pushdown *p, dwl_buf *b, const char *d, const char *a);
void over(const pushdown *p, dwl_buf *b, const char *a, const char *extra, const char *order);
void staged_cols(const pushdown *p, dwl_buf *b, const char *a);
/* "CREATE TEMPORARY TABLE name AS SELECT ", with an index on the column
 * `indexed` where the dialect needs one to join by it (temp_index_begin). */
void temp_table(const pushdown *p, dwl_buf *b, const char *name, const char *indexed);
/* The dimension as a derived table, for a column this run adds. */
void table_rows(const pushdown *p, dwl_buf *b, const char *where);
/* " LEFT JOIN <the dimension> d ON <a's key>[ AND <d current>]" (scd2:
 * the key's current version; upsert: its row). */
void join_current(const pushdown *p, dwl_buf *b, const char *d, const char *a);
/* The run id column (target.run_id_column): 1 when the table has one,
 * with its value bound into *v and *ty; else 0. */
size_t rid_param(const pushdown *p, dwl_value *v, SQLSMALLINT *ty);
/* What an update of the dimension from stage s changes: the rows of each
 * staged row's key, and with `version` only its current version, the one
 * s.dwl_cvf names by its valid_from; `filter` (or NULL): a condition on
 * the staged rows alone. */
typedef struct pd_match {
  int version;
  const char *filter;
} pd_match;
/* An update of the dimension from a stage (m: which rows); `indexed`: the
 * key index serves the match (the key, and for scd2 the current
 * predicate), so it may be keyed (p->keyed).  On a distributed table by
 * key lists. */
int update_from(pushdown *p, dwl_buf *b, const char *stage, const size_t *tcols, const char *const *exprs,
                size_t n, const pd_match *m, int indexed, const dwl_value *params, const SQLSMALLINT *types,
                size_t np, dwl_error *err);
int update_cols(pushdown *p, dwl_buf *b, const char *stage, const size_t *idx, size_t n, const pd_match *m,
                int indexed, dwl_error *err);
/* A delete of the dimension's rows a stage's rows name (m), the same way. */
int delete_from(pushdown *p, dwl_buf *b, const char *stage, const pd_match *m, dwl_error *err);
/* A delete of the table's rows whose key no row of `stage` has (its column
 * scol NULL in a left join of the stage as s to the table as d) and that
 * meet cond (" AND ..." on d, params its parameters); on a distributed
 * table by key lists where its key columns hold no NULL. */
int delete_unmatched(pushdown *p, dwl_buf *b, const char *stage, const char *scol, const dwl_buf *cond,
                     const dwl_value *params, const SQLSMALLINT *types, size_t np, dwl_error *err);
void insert_cols(const pushdown *p, dwl_buf *b, const char *mid, const char *end);

/* ---- pushdown_stage.c: the temporary tables (open, free and staging are
 * pushdown.h's) -------------------------------------------------------------- */

int build_a(pushdown *p, dwl_buf *b, dwl_error *err);
int build_b(pushdown *p, dwl_buf *b, dwl_error *err);
int build_d(pushdown *p, dwl_buf *b, dwl_error *err);
int build_e(pushdown *p, dwl_buf *b, dwl_error *err);

/* ---- pushdown_check.c: 0, or the run fails naming the first offending row -- */

int check_conflicts(pushdown *p, dwl_buf *b, dwl_error *err);
int check_late(pushdown *p, dwl_buf *b, dwl_error *err);
int check_gone(pushdown *p, dwl_buf *b, dwl_error *err);
int check_within_step(pushdown *p, dwl_buf *b, dwl_error *err);

/* ---- pushdown_late.c: late rows -------------------------------------------- */

/* Whether late rows are set apart (not failing the run in check_late). */
int pd_late_applies(const pushdown *p);
/* scd2, load.late: repair: keys with late rows go to the memory engine
 * (pushdown_take_late), without absence or truncate rows. */
int pd_repairs(const pushdown *p);
/* scd2, deletes: absent or truncate rows: keys with late rows, or rows
 * pushdown does not place, go to the memory engine whole under every
 * load.late, and leave the stage for dwl_pd_h (pushdown_take_late). */
int pd_hands_all(const pushdown *p);
/* scd2: whether a staged key without a current version may have been
 * deleted in expire style (its history's end is its last deleted
 * version's). */
int pd_may_be_gone(const pushdown *p);
int build_late(pushdown *p, dwl_buf *b, dwl_error *err);
/* Counts them; load.late: reject hands each to the run's rejects. */
int apply_late(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);

/* ---- pushdown_apply.c: the changes ------------------------------------------ */

int stage_type1(pushdown *p, dwl_buf *b, scd_counts *counts, long long *t1_unchanged, dwl_error *err);
int write_type1(pushdown *p, dwl_buf *b, dwl_error *err);
int apply_expires(pushdown *p, dwl_buf *b, dwl_error *err);
int insert_versions(pushdown *p, dwl_buf *b, dwl_error *err);
int scd2_counts(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);
int run_upsert(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);
int apply_absent(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);
int apply_revive(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);
/* The greatest sequence surrogate key (0: none, or no table). */
int max_sk(pushdown *p, dwl_buf *b, long long *out, dwl_error *err);
/* "INSERT INTO <the dimension> (<every column>) SELECT ", and the
 * parameters its column expressions bind: a sequence surrogate key's base
 * ("? + ..."; the key is the first column), then the run id ("?"). */
typedef struct insert_params {
  int seq;                /* the surrogate key is a sequence */
  char base[24];
  dwl_value param[2];
  SQLSMALLINT type[2];
  size_t n;
} insert_params;
int insert_head(pushdown *p, dwl_buf *b, insert_params *ip, dwl_error *err);

/* ---- pushdown_absent.c: scd2 with deletes: absent --------------------------- */

/* " AND NOT (a.deleted)" where tombstones are current versions: a live one. */
void live_pred(const pushdown *p, dwl_buf *b, const char *a);
/* Rows not past the checkpoint of keys without a live current version
 * join the delta (p->nrevived); once, before keys are handed to the
 * memory engine (pushdown_take_late), so that a key goes whole. */
int absent_revive(pushdown *p, dwl_buf *b, dwl_error *err);
int absent_moves(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);
int absent_delete(pushdown *p, dwl_buf *b, scd_counts *counts, dwl_error *err);
/* The live current versions [of the partitions delivered], and of them
 * those whose key the extract no longer has. */
int absent_count(pushdown *p, long long *current, long long *absent, dwl_error *err);
/* scd2, load.deletes.truncate_values: the truncate rows' delete rows of
 * the delta's keys (before a); the live keys a truncate reaches, and of
 * them those the delta has no row of, which absent_delete deletes. */
int truncate_rows(pushdown *p, dwl_buf *b, dwl_error *err);
int truncate_count(pushdown *p, long long *current, long long *reached, dwl_error *err);
/* " AND <a's row started before the last truncate>" (sorted by
 * truncate_count), its value bound into *v; the number bound (0 or 1). */
size_t reached_by_last(pushdown *p, dwl_buf *b, const char *a, dwl_value *v, SQLSMALLINT *ty);

/* ---- pushdown_fill.c: load.ignore_null_updates (scd2) ----------------------- */

/* The staged rows' NULLs filled, and their fingerprints (before a). */
int fill_nulls_pd(pushdown *p, dwl_buf *b, dwl_error *err);

#pragma GCC visibility pop

#endif
