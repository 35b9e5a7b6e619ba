/* What the files of dwload migrate share: one table's job (tjob) with its
 * two sides and its key cursor, the run it belongs to (mig), the recorded
 * progress, and the functions each file offers the others:
 *   catalog.c  the source's tables, columns and key; the target's DDL
 *   cursor.c   reading a side in key chunks, packed or not
 *   insert.c   sending rows to the target (write/batch.c, whole rows)
 *   copy.c     the progress table, fresh or resumed start, the copy loop
 *   verify.c   row count and checksum of the target, in parallel ranges
 *   migrate.c  the per-table job, the workers, the summary */
#ifndef DWL_MIGRATE_IMPL_H
#define DWL_MIGRATE_IMPL_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "migrate.h"
#include "target.h"

/* One table's outcome. */
typedef struct mig_table {
  char *name;
  long long copied;      /* by this run */
  long long rows;        /* in the target at the end */
  int verified;
  int stopped;           /* gave up because another table failed */
  dwl_error err;
} mig_table;

typedef struct mig {
  const mig_opts *o;
  mig_table *t;
  size_t n;
  size_t next;           /* the next table a worker takes */
  int failed;            /* a table failed: the others stop at a chunk boundary */
  pthread_mutex_t mu;
} mig;

/* One side of a table: a connection and the table on it. */
typedef struct side {
  dwl_spec spec;         /* only what target.c reads: the connection and table */
  target *t;
} side;

/* Keyset cursor over a table in primary-key order, `limit` rows a chunk. */
typedef struct cursor {
  side *s;
  odbc_stmt *first, *next;
  int whole;             /* one read of the whole table, in any order */
  int packed;            /* each chunk arrives as one text value (packed_sql) */
  dwl_buf key;           /* the last row's key values, back to back */
  size_t *klen;
  int have;              /* key holds the last key read */
  const char *upper;     /* inclusive upper bound's key values, or NULL */
  const size_t *uklen;
} cursor;

typedef struct tjob {
  mig *m;
  mig_table *mt;
  side src, dst;
  dwl_column *cols;      /* the source's columns, by name */
  char **names;
  size_t ncols;
  size_t *pk;            /* column indexes of the primary key, in key order */
  size_t npk;
  dwl_buf *norm;         /* scratch per column */
  dwl_value *row;
  dwl_value *packed;     /* one row's fields of a packed chunk */
  struct batch *ins;     /* the target's inserts (insert.c, write/batch.c) */
  dwl_value *row_out;    /* a row in the target's column order */
  char what[300];        /* "inserting into T", the batch's error prefix */
  long long n;           /* rows of the current pass */
  uint64_t sum;          /* checksum of the current pass */
  dwl_buf hb;            /* bytes of the row being hashed */
  double t0;
  /* Where this run's chunks ended (and where it resumed): the
   * verification reads the ranges between them in parallel. */
  dwl_buf bkeys;         /* key values, back to back */
  size_t *blen;          /* npk lengths per boundary */
  size_t *boff;          /* offset of each boundary in bkeys */
  size_t nb, bcap;
} tjob;

typedef struct progress {
  int found, done;
  long long rows;
  uint64_t sum;          /* checksum of the source rows copied so far */
  json_t *key;           /* array of key texts, or NULL */
} progress;

typedef int (*row_fn)(tjob *j, const dwl_value *row, dwl_error *err);

/* dwload exports its symbols to the plugins it loads (-export-dynamic):
 * these plain names stay inside the binary, so a plugin's own function of
 * the same name is never bound to one of them. */
#pragma GCC visibility push(hidden)

/* migrate.c */
int side_open(side *s, const char *conn, const char *table, dwl_error *err);
void side_close(side *s);
/* Fails (and marks the table stopped) once another table has failed. */
int stopped(tjob *j, dwl_error *err);
/* The table's rows so far on the terminal; `end` keeps the line. */
void progress_line(tjob *j, long long rows, int end);

/* catalog.c */
int list_tables(const char *conn, char ***out, size_t *n, dwl_error *err);
int read_meta(tjob *j, dwl_error *err);
void key_text_share(tjob *j, size_t key_bytes);
int create_table(tjob *j, dwl_error *err);
int pk_deferred(const tjob *j);
int add_pk(tjob *j, dwl_error *err);

/* cursor.c */
int cursor_init(cursor *c, side *s, size_t npk, dwl_error *err);
void cursor_free(cursor *c);
int cursor_set_key(cursor *c, const tjob *j, json_t *key, dwl_error *err);
int record_bound(tjob *j, const cursor *c, dwl_error *err);
int cursor_chunk(tjob *j, cursor *c, long limit, row_fn fn, long *got, dwl_error *err);

/* insert.c: insert_open before a table's first chunk, take_insert for
 * each row, insert_finish at the end of each chunk (given the chunk's rc,
 * returns it or the first failure), insert_close after the last. */
int insert_open(tjob *j, dwl_error *err);
int take_insert(tjob *j, const dwl_value *row, dwl_error *err);
int insert_finish(tjob *j, int rc, dwl_error *err);
void insert_close(tjob *j);

/* copy.c */
int progress_ensure(const mig_opts *o, const char **one_writer, dwl_error *err);
int start_table(tjob *j, progress *pr, dwl_error *err);
int copy_table(tjob *j, progress *pr, dwl_error *err);

/* verify.c */
int take_hash(tjob *j, const dwl_value *row, dwl_error *err);
int verify_table(tjob *j, const progress *pr, dwl_error *err);

#pragma GCC visibility pop

#endif
