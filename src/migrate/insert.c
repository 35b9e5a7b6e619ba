/* dwload migrate's inserts into the target, the one place its rows are
 * written: through the writer's batched inserts (writer.c), or, where
 * the dialect takes a whole batch as one array parameter (row_array_*),
 * as such arrays sent on the connection's own thread.  copy.c sees only
 * insert_open, take_insert, insert_finish and insert_close. */
#include <stdlib.h>

#include "migrate_impl.h"

#define ARRAY_ROWS 10000

static int rows_array_init(tjob *j, dwl_error *err)
{
  target *t = j->dst.t;
  buf_init(&j->js, 0);
  buf_init(&j->jsend, 0);
  dwl_buf b;
  buf_init(&b, 0);
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", t->cols[i].q);
  dwl_buf ins;
  buf_init(&ins, 0);
  buf_taint(&ins, &b);
  t->d->row_array_insert(&ins, t->table_q, b.data);
  buf_free(&b);
  char *sql = buf_steal(&ins);
  int rc = sql ? ostmt_prepare(t->c, sql, &j->rows_insert, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  free(sql);
  return rc;
}

static void rows_array_free(tjob *j)
{
  ostmt_free(j->rows_insert);  /* first: it waits for the batch being sent */
  j->rows_insert = NULL;
  buf_free(&j->js);
  buf_free(&j->jsend);
}

/* A batch is sent on the connection's own thread while the next one is
 * read and built: the server's work overlaps the client's (the
 * connection's next use waits for it, and fails with its failure). */
static int rows_array_flush(tjob *j, dwl_error *err)
{
  if (j->nrows_pend == 0)
    return 0;
  if (j->dst.t->d->row_array_end(&j->js) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  /* jsend is free once the batch before is done. */
  if (odbc_sync(j->dst.t->c, err) != 0)
    return -1;
  dwl_buf full = j->js;
  j->js = j->jsend;
  j->jsend = full;
  buf_reset(&j->js);
  j->nrows_pend = 0;
  j->jsparam = (dwl_value){j->jsend.data, j->jsend.len, 0};
  return ostmt_execute_async(j->rows_insert, &j->jsparam, 1, NULL, err);
}

static int rows_array_add(tjob *j, const dwl_value *row, dwl_error *err)
{
  if (j->dst.t->d->row_array_add(&j->js, j->nrows_pend == 0, row, j->ncols) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return ++j->nrows_pend >= ARRAY_ROWS ? rows_array_flush(j, err) : 0;
}

/* The source side's checksum is taken from the rows as they are copied,
 * and kept with the progress, so a resumed copy still covers every row. */
int take_insert(tjob *j, const dwl_value *row, dwl_error *err)
{
  if (take_hash(j, row, err) != 0)
    return -1;
  return j->arrays ? rows_array_add(j, row, err) : writer_insert_source(j->w, row, err);
}

int insert_open(tjob *j, dwl_error *err)
{
  target *t = j->dst.t;
  j->arrays = t->d->row_array_insert != NULL;
  return j->arrays ? rows_array_init(j, err) : writer_open(t, NULL, 0, NULL, &j->w, err);
}

/* Given the chunk's rc: after a failed chunk the batch still being sent
 * is waited for too. */
int insert_finish(tjob *j, int rc, dwl_error *err)
{
  if (rc == 0)
    rc = j->arrays ? rows_array_flush(j, err) : writer_flush(j->w, err);
  /* The chunk's rows are all sent before its progress is written. */
  if (j->arrays && odbc_sync(j->dst.t->c, err) != 0)
    rc = -1;
  return rc;
}

void insert_close(tjob *j)
{
  writer_free(j->w);
  j->w = NULL;
  if (j->arrays)
    rows_array_free(j);
}
