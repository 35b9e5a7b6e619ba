/* The streamed initial load: when the target holds no rows (a new table,
 * an empty one, --full-refresh), the memory engine writes the delta in
 * chunks while the source is still being read, so the client's reading
 * overlaps the warehouse's writing and memory stays at one chunk however
 * long the source is.
 *
 * A chunk is computed as one pass would compute it against an empty
 * dimension (nothing is read from the target: it has nothing).  That is
 * right for every key whose rows all fall in one chunk.  A key can come
 * back in a later chunk, though, and its versions depend on all of its
 * rows (order by lmd, no-op collapse, type 1 values, the close rule).  So
 * every written row is also kept in a partition file (`wrote`, by key, as
 * spill files are: rows/spill.h), the written keys are remembered in a
 * Bloom filter (rows/bloom.h), and a row whose key may have been written
 * goes to another partition file (`rep`) instead of the chunk.  After the
 * source, each partition of `rep` names the keys to rewrite: the versions
 * written for those that have rows in `wrote` are removed (all partitions
 * first, applied together), and the keys are computed again from all of
 * their rows (those of `wrote`, then those of `rep`: the source's order)
 * and written, in the run's one transaction.  A false "maybe written" from
 * the filter only sends a key this slower way, and removes nothing.  The result is one pass's, row
 * for row; only a sequence surrogate key numbers a rewritten key's
 * versions after the others (a hash one is the same).
 *
 * A source whose keys mostly come back (a feed sorted by date, each key
 * in every day) would be written twice: once more than half of a chunk's
 * rows are of written keys, the rest of the source goes to `rep` as well
 * and is computed partition by partition after it, as a spilled delta. */
#include <stdlib.h>

#include "choose.h"
#include "interrupt.h"
#include "log.h"
#include "plugin_host.h"
#include "progress.h"
#include "run_impl.h"

#define MIB (1024.0 * 1024.0)

/* Rows held before a chunk is written: large enough that a chunk's
 * statements amortise their round trips, small enough that the writes
 * start early and memory stays low (engine/choose.c sizes it, and the
 * Bloom filter, so that engine: auto estimates what streaming holds). */
size_t run_stream_chunk(const run_ctx *r)
{
  return engine_stream_chunk(r->engine.budget);
}

/* 1: this run streams; 0: it does not, *why says why; -1: error.  The
 * table is empty when dwload creates it, when --full-refresh emptied it,
 * or when it counts no row (target_count takes a catalog estimate only
 * when it is above 0, so 0 is counted). */
static int eligible(run_ctx *r, const char **why, dwl_error *err)
{
  if ((*why = run_stream_refusal(r)) != NULL)
    return 0;
  if (r->o->full_refresh || !r->t->exists)
    return 1;
  long long rows = target_count(r->t, err);
  if (rows < 0)
    return -1;
  *why = "the table holds rows";
  return rows == 0;
}

/* The delta held, written: each row kept in `wrote` and its key marked
 * written, then the engine's rows given back. */
static int write_chunk(run_ctx *r, dwl_error *err)
{
  size_t n = r->e.delta.n;
  if (n == 0)
    return 0;
  if (target_widen(r->t, 0, r->o->sqlout, err) < 0)
    return -1;
  int with_lmd = r->e.cols.lmd >= 0 || r->snapshot;
  for (size_t i = 0; i < n; i++) {
    const rs_row *d = &r->e.delta.rows[i];
    if (spill_put(&r->wrote, spill_part(&r->wrote, d->key), d->vals, d->origin, with_lmd ? &d->lmd : NULL,
                  err) != 0)
      return -1;
  }
  progress_phase_total("apply", (long long)n);
  if (run_apply_delta(r, err) != 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    bloom_add(&r->seen, r->e.delta.rows[i].key);
  r->sum->streamed_chunks++;
  log_msg(LOG_DEBUG, "streamed chunk %lld: %zu rows written, %lld of written keys set aside",
          r->sum->streamed_chunks, n, r->chunk_repeats);
  /* (the chunk's rows: those it wrote and those it set aside) */
  if (!r->stream_stopped && r->chunk_repeats > (long long)n) {
    r->stream_stopped = 1;
    log_msg(LOG_INFO, "most rows are of keys already written (%lld of the last %lld): the rest of the source is "
                      "computed after it, partition by partition", r->chunk_repeats, r->chunk_repeats + (long long)n);
  }
  r->chunk_repeats = 0;
  progress_phase("read");
  return scd_reset(&r->e, err);
}

int run_stream_check(run_ctx *r, dwl_error *err)
{
  const char *why = NULL;
  int ok = eligible(r, &why, err);
  if (ok < 0)
    return -1;
  if (!ok) {
    r->stream = -1;
    log_msg(LOG_DEBUG, "not streamed: %s", why);
    return 0;
  }
  size_t p = run_spill_parts(r);
  size_t bb = engine_stream_bloom(r->engine.budget);
  if (spill_open(&r->wrote, p, r->e.ncols, err) != 0 || spill_open(&r->rep, p, r->e.ncols, err) != 0 ||
      bloom_init(&r->seen, bb) != 0)
    return err->code ? -1 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  r->stream = 1;
  log_msg(LOG_INFO, "an initial load: writing while the source is read, in chunks of %.3g MiB (%zu partitions in "
                    "%s for keys that come back)", (double)run_stream_chunk(r) / MIB, p, r->wrote.dir);
  return write_chunk(r, err);
}

int run_stream_take(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  fp128 key = fp_tuple(row, r->e.cols.key, r->e.cols.nkey);
  if (r->stream_stopped || bloom_has(&r->seen, key)) {
    r->repeats++;
    r->chunk_repeats++;
    return spill_put(&r->rep, spill_part(&r->rep, key), row, origin, lmd, err);
  }
  if (scd_add_source(&r->e, row, origin, lmd, 1, err) < 0)
    return -1;
  return r->e.delta.used > run_stream_chunk(r) ? write_chunk(r, err) : 0;
}

/* ---- the keys that came back ---------------------------------------------------- */

typedef struct rewrite {
  run_ctx *r;
  keymap keys;     /* this partition's keys of rep */
  keymap gone;     /* those of them the chunks wrote, their versions removed */
  scd_sink sink;
  int first;       /* the first reading of each file: rep's names the keys, wrote's removes */
} rewrite;

static int take_rep(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  rewrite *w = ud;
  if (w->first) {
    int created = 0;
    return keymap_put(&w->keys, fp_tuple(vals, w->r->e.cols.key, w->r->e.cols.nkey), &created)
               ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  return scd_add_source(&w->r->e, vals, origin, lmd, 1, err) < 0 ? -1 : 0;
}

/* A written row of a key to rewrite joins the engine's delta; at the
 * first reading its key's written versions are removed, once.  A key the
 * filter only took for written has no row here and is removed nowhere. */
static int take_wrote(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  rewrite *w = ud;
  fp128 key = fp_tuple(vals, w->r->e.cols.key, w->r->e.cols.nkey);
  if (!keymap_get(&w->keys, key))
    return 0;
  int created = 0;
  if (w->first && !keymap_put(&w->gone, key, &created))
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (created && w->sink.remove(w->sink.ud, vals, err) != 0)
    return -1;
  return scd_add_source(&w->r->e, vals, origin, lmd, 1, err) < 0 ? -1 : 0;
}

/* The walk that counts what the chunks wrote for these keys, writing
 * nothing: the summary takes it back, as the rows are removed.  (Against
 * no stored version the engine only inserts; the others are there so
 * that no operation can reach a NULL.) */
static int none_insert(void *ud, const scd_version *v, dwl_error *err)
{
  (void)ud, (void)v, (void)err;
  return 0;
}
static int none_expire(void *ud, const dwl_value *k, const dwl_ts *vf, const dwl_ts *vt, int d, dwl_error *err)
{
  (void)ud, (void)k, (void)vf, (void)vt, (void)d, (void)err;
  return 0;
}
static int none_type1(void *ud, const dwl_value *row, const dwl_ts *vf, int all, dwl_error *err)
{
  (void)ud, (void)row, (void)vf, (void)all, (void)err;
  return 0;
}
static int none_row(void *ud, const dwl_value *row, dwl_error *err)
{
  (void)ud, (void)row, (void)err;
  return 0;
}
static int none_reshape(void *ud, const dwl_value *k, const dwl_ts *vf, int d, const scd_version *v, dwl_error *err)
{
  (void)ud, (void)k, (void)vf, (void)d, (void)v, (void)err;
  return 0;
}
static int none_drop(void *ud, const dwl_value *k, const dwl_ts *vf, int d, dwl_error *err)
{
  (void)ud, (void)k, (void)vf, (void)d, (void)err;
  return 0;
}
static const scd_sink count_only = {
    .insert = none_insert, .expire = none_expire, .type1 = none_type1, .update = none_row,
    .remove = none_row, .reshape = none_reshape, .drop = none_drop};

/* One partition of rep, in two passes over all of them: the first
 * (`first`) removes the versions the chunks wrote for its keys and takes
 * their counts back from the summary; then one writer_flush applies every
 * removal (a staged DELETE joins the table once, not once a partition);
 * the second computes the keys from all of their rows, in the source's
 * order, and writes them. */
static int rewrite_part(run_ctx *r, size_t p, int first, dwl_error *err)
{
  rewrite w = {.r = r, .sink = writer_sink(r->w), .first = 1};
  size_t n = (size_t)r->rep.rows[p];
  int rc = keymap_init(&w.keys, n) == 0 && keymap_init(&w.gone, n) == 0 ? 0
                                                                        : err_set(err, DWL_EXIT_FAILED, "out of memory");
  /* the keys */
  if (rc == 0)
    rc = scd_reset(&r->e, err) != 0 || spill_reread(&r->rep, p, take_rep, &w, err) != 0 ? -1 : 0;
  w.first = first;
  if (rc == 0 && first) {
    /* what the chunks wrote for them: removed, counted again, taken back */
    scd_counts old = {0};
    rc = spill_reread(&r->wrote, p, take_wrote, &w, err) != 0 || scd_apply(&r->e, &count_only, &old, err) != 0
             ? -1 : 0;
    run_add_counts(r, &old, -1);
  } else if (rc == 0) {
    rc = spill_read(&r->wrote, p, take_wrote, &w, err) != 0 || spill_read(&r->rep, p, take_rep, &w, err) != 0
             ? -1 : 0;
    if (rc == 0 && r->e.delta.n > 0) {
      progress_phase_total("apply", (long long)r->e.delta.n);
      rc = run_apply_delta(r, err);
      log_msg(LOG_DEBUG, "partition %zu of %zu: %zu keys rewritten from %zu rows", p + 1, r->rep.nparts,
              w.keys.count, r->e.delta.n);
    }
  }
  keymap_free(&w.keys);
  keymap_free(&w.gone);
  return rc;
}

int run_stream_finish(run_ctx *r, dwl_error *err)
{
  if (write_chunk(r, err) != 0)
    return -1;
  log_msg(LOG_INFO, "read %lld source rows; wrote them in %lld chunks while reading, %lld rows of keys that came "
                    "back", r->sum->read, r->sum->streamed_chunks, r->repeats);
  if (r->repeats > 0) {
    /* the chunks' last inserts reach the table before their removal */
    if (writer_flush(r->w, err) != 0)
      return -1;
    for (int first = 1; first >= 0; first--) {
      for (size_t p = 0; p < r->rep.nparts; p++)
        if (r->rep.rows[p] > 0 && (interrupt_check(err) != 0 || rewrite_part(r, p, first, err) != 0))
          return -1;
      /* the removals, before the rewrite's inserts */
      if (first && writer_flush(r->w, err) != 0)
        return -1;
    }
  }
  run_stream_free(r);
  return 0;
}

void run_stream_free(run_ctx *r)
{
  spill_close(&r->wrote);
  spill_close(&r->rep);
  bloom_free(&r->seen);
}
