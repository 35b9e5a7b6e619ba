/* dwload migrate's verification: a table's row count and checksum (the
 * sum of every row's hash over its canonical values) read back from the
 * target, in parallel over the key ranges between the copy's chunks when
 * they are known, against the count and checksum the copy took from the
 * source. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "log.h"
#include "migrate_impl.h"

/* A row's hash over its canonical values (NULL distinct from ''); the
 * table's checksum is their sum mod 2^64, so the two sides may be read in
 * any order, and a duplicated row changes it. */
int take_hash(tjob *j, const dwl_value *row, dwl_error *err)
{
  buf_reset(&j->hb);
  for (size_t i = 0; i < j->ncols; i++) {
    uint64_t len = row[i].is_null ? UINT64_MAX : (uint64_t)row[i].len;
    if (buf_add(&j->hb, &len, sizeof len) != 0 || (!row[i].is_null && buf_add(&j->hb, row[i].data, row[i].len) != 0))
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  j->sum += XXH3_64bits(j->hb.data, j->hb.len);
  return 0;
}

/* Readers of the target at once when the table's key ranges are known:
 * reading back is the server's output and the client's parsing, each on
 * one core; two readers put both cores to work. */
#define VERIFY_READERS 2

/* Starts the cursor after boundary b. */
static void cursor_use_key(cursor *c, const tjob *j, size_t b, dwl_error *err)
{
  buf_reset(&c->key);
  memcpy(c->klen, &j->blen[b * j->npk], j->npk * sizeof *c->klen);
  size_t len = 0;
  for (size_t k = 0; k < j->npk; k++)
    len += c->klen[k];
  if (buf_add(&c->key, j->bkeys.data + j->boff[b], len) != 0)
    err_set(err, DWL_EXIT_FAILED, "out of memory");
  c->have = 1;
}

/* Reads the target's rows in range r: after boundary r - 1 and up to
 * boundary r (the first and last ranges open), hashing them into j. */
static int checksum_range(tjob *j, side *s, size_t r, int packed, dwl_error *err)
{
  cursor c;
  if (cursor_init(&c, s, j->npk, err) != 0)
    return -1;
  c.packed = packed;
  if (r > 0)
    cursor_use_key(&c, j, r - 1, err);
  if (r < j->nb) {
    c.upper = j->bkeys.data + j->boff[r];
    c.uklen = &j->blen[r * j->npk];
  }
  int rc = err_isset(err) ? -1 : 0;
  for (long got = 0; rc == 0;) {
    if ((rc = stopped(j, err)) != 0 || (rc = cursor_chunk(j, &c, j->m->o->chunk, take_hash, &got, err)) != 0)
      break;
    if (got < j->m->o->chunk)
      break;
  }
  cursor_free(&c);
  return rc;
}

typedef struct vreader {
  tjob j;                /* the table's job, with its own connection and scratch */
  size_t *next;          /* the next range, shared */
  pthread_mutex_t *mu;
  int rc;
  dwl_error err;
} vreader;

static void *verify_reader(void *arg)
{
  vreader *v = arg;
  tjob *j = &v->j;
  err_init(&v->err);
  v->rc = side_open(&j->dst, j->m->o->to, j->mt->name, &v->err);
  if (v->rc == 0)
    v->rc = target_layout(j->dst.t, j->cols, j->ncols, &v->err);
  int packed = v->rc == 0 && j->dst.t->d->packed_select;
  while (v->rc == 0) {
    pthread_mutex_lock(v->mu);
    size_t r = (*v->next)++;
    pthread_mutex_unlock(v->mu);
    if (r > j->nb)
      break;
    v->rc = checksum_range(j, &j->dst, r, packed, &v->err);
  }
  /* The others stop at their next chunk. */
  if (v->rc != 0) {
    pthread_mutex_lock(v->mu);
    *v->next = j->nb + 1;
    pthread_mutex_unlock(v->mu);
  }
  side_close(&j->dst);
  return NULL;
}

/* The ranges between this run's chunk boundaries, read by VERIFY_READERS
 * threads with connections of their own. */
static int checksum_parallel(tjob *j, long long *rows, uint64_t *sum, dwl_error *err)
{
  vreader v[VERIFY_READERS];
  pthread_t th[VERIFY_READERS];
  int started[VERIFY_READERS] = {0};
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  size_t next = 0;
  int rc = 0;
  memset(v, 0, sizeof v);
  for (size_t i = 0; i < VERIFY_READERS; i++) {
    tjob *w = &v[i].j;
    *w = *j;
    memset(&w->src, 0, sizeof w->src);
    memset(&w->dst, 0, sizeof w->dst);
    w->n = 0;
    w->sum = 0;
    buf_init(&w->hb, 0);
    w->norm = calloc(j->ncols, sizeof *w->norm);
    w->row = calloc(j->ncols, sizeof *w->row);
    w->packed = calloc(j->ncols, sizeof *w->packed);
    v[i].next = &next;
    v[i].mu = &mu;
    if (!w->norm || !w->row || !w->packed) {
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    for (size_t c = 0; c < j->ncols; c++)
      buf_init(&w->norm[c], 0);
    if (pthread_create(&th[i], NULL, verify_reader, &v[i]) != 0) {
      rc = err_set(err, DWL_EXIT_FAILED, "cannot start a verification thread");
      break;
    }
    started[i] = 1;
  }
  if (rc != 0) {
    pthread_mutex_lock(&mu);
    next = j->nb + 1;
    pthread_mutex_unlock(&mu);
  }
  *rows = 0;
  *sum = 0;
  for (size_t i = 0; i < VERIFY_READERS; i++) {
    tjob *w = &v[i].j;
    if (started[i]) {
      pthread_join(th[i], NULL);
      if (v[i].rc != 0 && rc == 0) {
        *err = v[i].err;
        rc = -1;
      }
      *rows += w->n;
      *sum += w->sum;
    }
    for (size_t c = 0; w->norm && c < j->ncols; c++)
      buf_free(&w->norm[c]);
    free(w->norm);
    free(w->row);
    free(w->packed);
    buf_free(&w->hb);
  }
  return rc;
}

static int checksum(tjob *j, side *s, long long *rows, uint64_t *sum, dwl_error *err)
{
  if (j->npk > 0 && j->nb > 0)
    return checksum_parallel(j, rows, sum, err);
  cursor c;
  if (cursor_init(&c, s, j->npk, err) != 0)
    return -1;
  /* The checksum does not depend on the order: one plain scan, where the
   * driver streams it (elsewhere it reads in key chunks), or packed key
   * chunks where the dialect packs them. */
  if (s->t->d->stream_scan)
    c.whole = 1;
  if (s->t->d->packed_select && j->npk > 0) {
    c.whole = 0;
    c.packed = 1;
  }
  j->n = 0;
  j->sum = 0;
  int rc = 0;
  for (;;) {
    long got = 0;
    if ((rc = stopped(j, err)) != 0 || (rc = cursor_chunk(j, &c, j->m->o->chunk, take_hash, &got, err)) != 0)
      break;
    if (c.whole || got < j->m->o->chunk)
      break;
  }
  cursor_free(&c);
  *rows = j->n;
  *sum = j->sum;
  return rc;
}

/* The target's rows against the source's count and checksum taken
 * while copying. */
int verify_table(tjob *j, const progress *pr, dwl_error *err)
{
  long long nt;
  uint64_t ht;
  if (checksum(j, &j->dst, &nt, &ht, err) != 0) {
    err_prefix(err, "verifying %s", j->mt->name);
    return -1;
  }
  j->mt->rows = nt;
  if (pr->rows != nt)
    return err_set(err, DWL_EXIT_FAILED, "verification failed for table %s: %lld rows read from the source, %lld in "
                   "the target", j->mt->name, pr->rows, nt);
  if (pr->sum != ht)
    return err_set(err, DWL_EXIT_FAILED,
                   "verification failed for table %s: %lld rows on both sides, but their values differ "
                   "(checksum %016llx in the source, %016llx in the target)",
                   j->mt->name, nt, (unsigned long long)pr->sum, (unsigned long long)ht);
  log_msg(LOG_INFO, "table %s verified: %lld rows, checksum %016llx", j->mt->name, nt, (unsigned long long)ht);
  j->mt->verified = 1;
  return 0;
}
