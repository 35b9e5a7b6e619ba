/* dwload migrate's inserts into the target, the one place its rows are
 * written: through write/batch.c, the bulk path the writer uses too, with
 * whole table rows (where the dialect takes a batch as one array of the
 * table's row type, each batch is sent on the connection's own thread
 * while the next is read).  copy.c sees only insert_open, take_insert,
 * insert_finish and insert_close. */
#include <stdio.h>
#include <stdlib.h>

#include "batch.h"
#include "migrate_impl.h"

int insert_open(tjob *j, dwl_error *err)
{
  target *t = j->dst.t;
  char **cols = calloc(t->ncols ? t->ncols : 1, sizeof *cols);
  SQLSMALLINT *types = calloc(t->ncols ? t->ncols : 1, sizeof *types);
  j->row_out = calloc(t->ncols ? t->ncols : 1, sizeof *j->row_out);
  snprintf(j->what, sizeof j->what, "inserting into %s", j->mt->name);
  int rc = cols && types && j->row_out ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
    cols[i] = t->cols[i].q;
    types[i] = t->d->param_type(t->cols[i].decl.type);
  }
  batch_opts o = {.what = j->what, .whole_rows = 1};
  if (rc == 0)
    rc = batch_open(t->c, t->d, t->table_q, cols, types, t->ncols, &o, &j->ins, err);
  free(cols);
  free(types);
  return rc;
}

/* The source side's checksum is taken from the rows as they are copied,
 * and kept with the progress, so a resumed copy still covers every row. */
int take_insert(tjob *j, const dwl_value *row, dwl_error *err)
{
  if (take_hash(j, row, err) != 0)
    return -1;
  const target *t = j->dst.t;
  for (size_t i = 0; i < t->ncols; i++)
    j->row_out[i] = row[t->cols[i].src];
  return batch_add(j->ins, j->row_out, err);
}

/* Given the chunk's rc: after a failed chunk the batch still being sent
 * is waited for too.  The chunk's rows are all sent before its progress
 * is written. */
int insert_finish(tjob *j, int rc, dwl_error *err)
{
  if (rc == 0)
    rc = batch_flush(j->ins, err);
  if (odbc_sync(j->dst.t->c, err) != 0)
    rc = -1;
  return rc;
}

void insert_close(tjob *j)
{
  batch_free(j->ins);
  j->ins = NULL;
  free(j->row_out);
  j->row_out = NULL;
}
