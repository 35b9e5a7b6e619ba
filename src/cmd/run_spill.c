/* A delta larger than the memory budget (load.memory_budget,
 * --memory-budget): Grace hash partitioning by business key.  Once the
 * rows held pass the budget, every row past the checkpoint goes to one of
 * P partition files (rows/spill.h) by a hash of its key, so all of a key's
 * rows land in one partition; after the source, each partition in turn is
 * loaded into the memory engine, the current versions of exactly its keys
 * are read (keyed lookup, or a scan that keeps only its keys), and it is
 * computed and written through the same writer, inside the run's one
 * transaction.  A key's changes depend only on its own rows and versions,
 * so the results are those of one pass, row for row.  P comes from the
 * share of the source the budget took; a source that does not tell its
 * size gets 16, so a partition that passes the budget as it is read back
 * is split the same way by another hash of the key (up to RUN_SPILL_DEPTH
 * times; a single key's rows cannot be split, and only warn).
 *
 * Why partitions by hash and not sorted runs merged: the engine walks a
 * key's rows together, and a partition is a delta like any other, so the
 * whole engine (late rows, type 1, deletes column, ignore_null_updates,
 * upsert) runs unchanged on each.  deletes: absent spans every key: the
 * current versions' key map, read before the source as one pass reads it,
 * is kept while spilling; every row marks its key present there (and a
 * row of a key without a live version, however old, is spilled: it
 * revives the key), so once the source is read it names the absent keys,
 * whose rows are read again before the partitions write and deleted after
 * them, as one pass deletes after its walk; each partition takes its
 * keys' current versions from that key map rather than reading them.
 * truncate_values likewise: the truncate rows are held, the keys of
 * spilled rows marked (their walk, partition by partition, applies the
 * truncates), and the live keys without rows that a truncate reaches are
 * deleted after the partitions.  lookup: scan has read every current
 * version before the source too: its key map is kept the same way.
 * load.partition: every row marks its partition delivered, as one pass
 * does.  Only plan holds the delta. */
#include <stdlib.h>
#include <string.h>

#include "interrupt.h"
#include "log.h"
#include "plugin_host.h"
#include "progress.h"
#include "rules.h"
#include "run_impl.h"

#define MIB (1024.0 * 1024.0)
#define SPILL_MIN_PARTS 2
#define SPILL_MAX_PARTS 256  /* open files */
#define SPILL_UNKNOWN_PARTS 16  /* a source that does not tell its size */
#define SPILL_CHUNKS_OK ((size_t)2 << 20)

/* Every job spills; plan, which writes nothing, does not. */
const char *run_spill_refusal(const run_ctx *r)
{
  return r->o->plan ? "plan writes nothing, not even spill files" : NULL;
}

/* A streamed chunk is written against an empty table and takes only rows
 * past the checkpoint, where deletes: absent takes every row of a key
 * without a live version (it revives), and a truncate reaches the keys of
 * every chunk before it: such a load spills instead. */
const char *run_stream_job_refusal(const run_ctx *r)
{
  if (r->spec->deletes == DEL_ABSENT)
    return "deletes: absent takes every delivered row of a key without a live version";
  return r->spec->truncate_values.n ? "load.deletes.truncate_values reaches every key" : NULL;
}

const char *run_stream_refusal(const run_ctx *r)
{
  const char *why = run_stream_job_refusal(r);
  return why ? why : run_spill_refusal(r);
}

/* deletes: absent (load.partition with it) and truncate_values judge
 * every current version, and lookup: scan has read them all before the
 * source: their key map is kept while the delta spills (the partitions
 * take theirs from it). */
static int keeps_keys(const run_ctx *r)
{
  return engine_reads_all_current(r->spec) != NULL;
}

/* P: enough partitions that each holds about half the budget, from how
 * much of the source the budget's rows took; SPILL_UNKNOWN_PARTS when the
 * source does not tell its size. */
size_t run_spill_parts(const run_ctx *r)
{
  uint64_t done = 0, total = 0;
  if (!source_progress(r->src, &done, &total) || done == 0 || total < done)
    return SPILL_UNKNOWN_PARTS;
  double p = 2.0 * (double)total / (double)done + 1;
  return p < SPILL_MIN_PARTS ? SPILL_MIN_PARTS : p > SPILL_MAX_PARTS ? SPILL_MAX_PARTS : (size_t)p;
}

/* A held row's lmd as spill_put takes it: none without an lmd column. */
static const dwl_ts *lmd_of(const run_ctx *r, const rs_row *d)
{
  return r->e.cols.lmd >= 0 || r->snapshot ? &d->lmd : NULL;
}

/* deletes: absent, truncate_values, lookup: scan: the key map of every
 * current version (read before the source, marked by the rows delivered
 * so far) outlives the delta held: the rest of the source marks it too,
 * and it judges absence, or what the truncates reach, after.  (The
 * truncates stay: the engine keeps them across resets.) */
/* Frees *to and moves *from there, leaving *from empty. */
static void km_move(keymap *to, keymap *from)
{
  keymap_free(to);
  *to = *from;
  memset(from, 0, sizeof *from);
}

static int reset_keeping_keys(run_ctx *r, dwl_error *err)
{
  keymap km = {0};
  size_t live = r->e.nlive;
  km_move(&km, &r->e.km);
  int rc = scd_reset(&r->e, err);
  km_move(&r->e.km, &km);
  r->e.nlive = live;
  return rc;
}

int run_spill_check(run_ctx *r, dwl_error *err)
{
  if (r->spilling || r->spill_refused)
    return 0;
  double mib = (double)r->engine.budget / MIB;
  const char *why = run_spill_refusal(r);
  if (why) {
    r->spill_refused = 1;
    log_msg(LOG_WARN, "the delta exceeds the memory budget %.3g MiB (%zu rows held), but cannot spill: %s; it is "
                      "held in memory", mib, r->e.delta.n, why);
    return 0;
  }
  size_t p = run_spill_parts(r);
  if (spill_open(&r->sp, p, r->e.ncols, err) != 0)
    return -1;
  log_msg(LOG_INFO, "delta exceeds the memory budget %.3g MiB: spilling to %zu partitions in %s", mib, p,
          r->sp.dir);
  r->spilling = 1;
  r->sum->spilled_partitions = (long long)p;
  /* the rows held so far, in arrival order, then memory is given back */
  for (size_t i = 0; i < r->e.delta.n; i++) {
    const rs_row *d = &r->e.delta.rows[i];
    if (spill_put(&r->sp, spill_part(&r->sp, d->key), d->vals, d->origin, lmd_of(r, d), err) != 0)
      return -1;
    r->spilled++;
    if (r->spec->truncate_values.n)
      scd_mark_walked(&r->e, d->key);
  }
  return keeps_keys(r) ? reset_keeping_keys(r, err) : scd_reset(&r->e, err);
}

int run_spill_take(run_ctx *r, fp128 key, const dwl_value *row, uint64_t origin, const dwl_ts *lmd,
                   dwl_error *err)
{
  r->spilled++;
  return spill_put(&r->sp, spill_part(&r->sp, key), row, origin, lmd, err);
}

/* Past the budget as it is read back (a source that does not tell its
 * size gets SPILL_UNKNOWN_PARTS partitions, too few for a large delta):
 * the partition is split by another hash of the key, as the delta was. */
static int over_budget(const run_ctx *r)
{
  /* (the row store takes memory by 1 MiB chunks) */
  return r->e.delta.bytes > (size_t)r->engine.budget && r->e.delta.bytes > SPILL_CHUNKS_OK;
}

/* The rest of the partition being read goes to n parts at a new level
 * of files (r->divert). */
static int split_open(run_ctx *r, size_t n, dwl_error *err)
{
  spill *sub = &r->sub[r->nsplit];
  if (spill_open(sub, n, r->e.ncols, err) != 0)
    return -1;
  sub->level = (unsigned)r->nsplit + 1;
  r->divert = sub;
  return 0;
}

/* The rows held go to a new level of files, and so will the rest of the
 * partition: enough parts that each holds about half the budget, from
 * how many of its rows the budget took. */
static int split(run_ctx *r, dwl_error *err)
{
  double k = 2.0 * (double)r->reading / (double)(r->e.delta.n ? r->e.delta.n : 1) + 1;
  size_t n = k < SPILL_MIN_PARTS ? SPILL_MIN_PARTS : k > RUN_SPLIT_PARTS ? RUN_SPLIT_PARTS : (size_t)k;
  if (split_open(r, n, err) != 0)
    return -1;
  for (size_t i = 0; i < r->e.delta.n; i++) {
    const rs_row *d = &r->e.delta.rows[i];
    if (spill_put(r->divert, spill_part(r->divert, d->key), d->vals, d->origin, lmd_of(r, d), err) != 0)
      return -1;
  }
  return scd_reset(&r->e, err);
}

static int take_back(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  run_ctx *r = ud;
  if (r->divert) {
    fp128 key = fp_tuple(vals, r->e.cols.key, r->e.cols.nkey);
    return spill_put_tag(r->divert, spill_part(r->divert, key), vals, origin, lmd, r->from->tag, err);
  }
  /* (a partitioned key map's rows not past the checkpoint: of a live key
   * it only marked it present; of any other key it revives it) */
  if (r->kparts && r->from->tag && run_keyparts_drop(r, fp_tuple(vals, r->e.cols.key, r->e.cols.nkey)))
    return 0;
  if (scd_add_source(&r->e, vals, origin, lmd, 1, err) < 0)
    return -1;
  /* (one key's rows, which no split divides, are held whole) */
  const rs_row *d = r->e.delta.rows;
  r->mixed |= r->e.delta.n > 1 && !fp_eq(d[r->e.delta.n - 1].key, d[0].key);
  return over_budget(r) && r->nsplit < RUN_SPILL_DEPTH && r->mixed ? split(r, err) : 0;
}

/* Is `key` not of the partition being computed? */
int run_spill_other_key(const run_ctx *r, fp128 key)
{
  if (spill_part(&r->sp, key) != (size_t)r->part)
    return 1;
  for (int l = 0; l < r->nsplit; l++)
    if (spill_part(&r->sub[l], key) != r->subpart[l])
      return 1;
  return 0;
}

int run_spill_other(const run_ctx *r, const dwl_value *row)
{
  return r->part >= 0 && run_spill_other_key(r, fp_tuple(row, r->e.cols.key, r->e.cols.nkey));
}

/* deletes: absent, truncate_values, lookup: scan: the current versions
 * read before the source (r->present) are those a lookup of the
 * partition's keys would read again: the partition takes its keys'
 * entries from there, as read (what this run marked on them cleared).
 * Not with ignore_null_updates, whose current values the key map does not
 * hold. */
static int take_present(run_ctx *r, dwl_error *err)
{
  const uint8_t kept = KM_LIVE | KM_TOMBSTONE | KM_GONE | KM_LMD;
  km_entry *p;
  size_t n = 0;
  for (size_t it = 0; (p = keymap_next(&r->present, &it));) {
    if (run_spill_other_key(r, p->key))
      continue;
    int created;
    km_entry *m = keymap_put(&r->e.km, p->key, &created);
    if (!m)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    *m = *p;
    m->group = 0;
    m->flags &= kept;
    r->e.nlive += (m->flags & KM_LIVE) != 0;
    n++;
  }
  log_msg(LOG_INFO, "took %zu current versions of the partition's keys from those read before the source", n);
  return 0;
}

void run_spill_free(run_ctx *r)
{
  keymap_free(&r->present);
  run_keyparts_free(r);
  spill_close(&r->sp);
  for (int l = 0; l < RUN_SPILL_DEPTH; l++)
    spill_close(&r->sub[l]);
}

/* "partition 3 of 16", "partition 3 of 16, part 2 of 5", ... */
static void part_name(const run_ctx *r, char *out, size_t n)
{
  int w = snprintf(out, n, "partition %ld of %zu", r->part + 1, r->sp.nparts);
  for (int l = 0; l < r->nsplit && w > 0 && (size_t)w < n; l++)
    w += snprintf(out + w, n - (size_t)w, ", part %zu of %zu", r->subpart[l] + 1, r->sub[l].nparts);
}

/* The current versions of the partition's keys: loaded with its rows
 * already (a partitioned key map: run_part), taken from the key map read
 * before the source, or read.  ignore_null_updates reads them for their
 * values, which neither the key files nor that key map hold. */
static int part_versions(run_ctx *r, long long rows, dwl_error *err)
{
  if (r->kparts) {
    if (!r->spec->ignore_nulls)
      return 0;
    /* (the entries loaded judged the rows not past the checkpoint) */
    if (scd_forget_current(&r->e, err) != 0)
      return -1;
  }
  if (r->present.count > 0 && !r->spec->ignore_nulls)
    return take_present(r, err);
  if (rows == 0)
    return 0;
  /* The lookup as one pass would choose it for this partition's delta:
   * a scan keeps the partition's share of every current version, so
   * choosing from the whole delta read a 10M-row dimension's 3.3M
   * versions for each of 3 partitions of a 1M-row delta (274 MiB of
   * fingerprints, 1.2 GiB peak RSS on MariaDB against a 256 MiB budget),
   * where its 333k keys, staged, read only theirs.  Where a scan cannot
   * follow the run's writes (SQLite), every partition reads so. */
  int keyed = r->spec->lookup == LOOKUP_KEYS || (long long)r->e.delta.n * TARGET_KEYED_RATIO < rows ||
              !target_scan_after_writes(r->t);
  return run_read_current(r, keyed, err);
}

/* One partition's delta, held: its keys' current versions and changes. */
static int compute(run_ctx *r, long long rows, dwl_error *err)
{
  char name[200];
  part_name(r, name, sizeof name);
  if (over_budget(r))  /* one key's rows, or splits RUN_SPILL_DEPTH deep */
    log_msg(LOG_WARN, "%s holds %.1f MiB of rows, more than the memory budget", name,
            (double)r->e.delta.bytes / MIB);
  if (r->e.delta.n == 0)
    return 0;
  if (part_versions(r, rows, err) != 0)
    return -1;
  /* truncate_values: the delete rows of this partition's keys */
  if (r->e.ntrunc && scd_truncate_delta(&r->e, err) != 0)
    return -1;
  progress_phase_total("apply", (long long)r->e.delta.n);
  if (run_apply_delta(r, err) != 0)
    return -1;
  log_msg(LOG_DEBUG, "%s: %zu rows, %zu current versions", name, r->e.delta.n, r->e.km.count);
  return 0;
}

static int run_part(run_ctx *r, spill *s, size_t p, long long rows, dwl_error *err);

/* run_part, after `failed` earlier partitions failed: then into an error
 * of its own, so that err keeps the first (late.c's first late row),
 * unless a signal stops the run meanwhile: that is what it reports. */
static int run_part_once(run_ctx *r, spill *s, size_t p, long long rows, int failed, dwl_error *err)
{
  dwl_error more = {0};
  r->late_failed = 0;
  int rc = run_part(r, s, p, rows, failed ? &more : err);
  if (rc != 0 && failed && more.cause == DWL_CAUSE_INTERRUPTED)
    *err = more;
  return rc;
}

/* Whether the partitions stop after one returned rc: at any failure but
 * one on its late rows under load.late: reject, where one pass counts
 * every late row of the run before it fails (late.c), so the partitions
 * after it are computed for theirs (what they write goes with the run's
 * rollback).  *failed: one has failed. */
static int part_failed(const run_ctx *r, int rc, int *failed)
{
  if (rc == 0)
    return 0;
  *failed = 1;
  return !r->late_failed;
}

/* Partition p of s (r->sp, or the split at level l + 1, r->sub[l]) read
 * back and computed, or split and each part computed in turn. */
static int run_part(run_ctx *r, spill *s, size_t p, long long rows, dwl_error *err)
{
  if (interrupt_check(err) != 0 || scd_reset(&r->e, err) != 0)
    return -1;
  if (s == &r->sp) {
    r->part = (long)p;
    r->nsplit = 0;
  } else {
    int l = (int)(s - r->sub);
    r->subpart[l] = p;
    r->nsplit = l + 1;
  }
  r->divert = NULL;
  r->from = s;
  r->mixed = 0;
  r->reading = s->rows[p];
  /* A partitioned key map's partition whose entries alone pass the
   * budget (more than KP_MAX_PARTS partitions' worth: run_absent.c) is
   * split before its rows are read: each part loads only its keys'. */
  size_t slices = r->kparts && s == &r->sp ? run_keyparts_slices(r, p) : 1;
  if (slices > 1 ? split_open(r, slices, err) != 0 : r->kparts && run_keyparts_load(r, err) != 0)
    return -1;
  if (spill_read(s, p, take_back, r, err) != 0)
    return -1;
  if (!r->divert)
    return compute(r, rows, err);
  spill *sub = r->divert;
  r->divert = NULL;
  char name[200];
  part_name(r, name, sizeof name);
  if (slices > 1)
    log_msg(LOG_INFO, "%s's %lld current versions pass the memory budget: its %lld rows split into %zu parts, each "
            "with its own keys' versions", name, r->kf.rows[p], s->rows[p], sub->nparts);
  else
    log_msg(LOG_INFO, "%s passed the memory budget as it was read back: its %lld rows split into %zu parts", name,
            s->rows[p], sub->nparts);
  r->sum->spilled_partitions += (long long)sub->nparts;
  int nsplit = r->nsplit;
  int failed = 0, stop = 0;
  for (size_t q = 0; q < sub->nparts && !stop; q++) {
    r->nsplit = nsplit;
    stop = part_failed(r, run_part_once(r, sub, q, rows, failed, err), &failed);
  }
  if (failed) {
    r->late_failed = !stop;  /* (every part's failure was its late rows) */
    return -1;
  }
  spill_close(sub);
  return 0;
}

/* The summary's counts of changes (not its rejected late rows). */
static scd_counts changes_of(const run_summary *s)
{
  return (scd_counts){.inserted = s->inserted, .expired = s->expired, .updated = s->updated, .deleted = s->deleted,
                      .unchanged = s->unchanged, .late_repaired = s->late_repaired, .late_ignored = s->late_ignored};
}

int run_spilled(run_ctx *r, dwl_error *err)
{
  log_msg(LOG_INFO, "read %lld source rows, %lld %s, spilled to %zu partitions (%.1f MiB)", r->sum->read, r->spilled,
          r->kparts ? "delivered (those not past the checkpoint too)" : "past the checkpoint", r->sp.nparts,
          (double)r->sp.bytes / MIB);
  long long rows = r->t->exists ? target_count(r->t, err) : 0;
  if (rows < 0)
    return -1;
  /* deletes: absent, truncate_values (lookup: scan: none to delete):
   * every key is delivered or not by now; the keys to delete and their
   * rows are read before any partition writes (as one pass reads them
   * before its walk), and the key map that marks them is kept aside while
   * the partitions use the engine's own */
  long long current = 0, absent = 0, truncated = 0;
  if (r->kparts) {
    absent = run_keyparts_absent(r, &current, err);
    if (absent < 0)
      return -1;
  } else if (keeps_keys(r)) {
    truncated = r->e.ntrunc ? scd_truncate_rest(&r->e) : 0;
    absent = run_absent_mark(r, &current, err);
    if (absent < 0)
      return -1;
    km_move(&r->present, &r->e.km);
  }
  /* A failed run counts, as one pass does, only its rejected late rows
   * (all of them, every partition's: part_failed): the changes of the
   * partitions walked go from the summary, as they go from the table. */
  const scd_counts before = changes_of(r->sum);
  int failed = 0;
  for (size_t p = 0; p < r->sp.nparts; p++)
    if (part_failed(r, run_part_once(r, &r->sp, p, rows, failed, err), &failed))
      break;
  if (failed) {
    scd_counts walked = changes_of(r->sum);
    run_add_counts(r, &walked, -1);
    run_add_counts(r, &before, 1);
    return -1;
  }
  r->part = -1;
  r->nsplit = 0;
  spill_close(&r->sp);
  if (!keeps_keys(r))
    return 0;
  /* then the guard and the deletions, as one pass after its walk */
  if (scd_reset(&r->e, err) != 0)
    return -1;
  scd_counts counts = {0};
  scd_sink sink = writer_sink(r->w);
  if (r->kparts) {
    if (run_keyparts_apply(r, absent, current, &sink, &counts, err) != 0)
      return -1;
  } else {
    km_move(&r->e.km, &r->present);
    if (run_absent_apply(r, absent, current, truncated, &sink, &counts, err) != 0)
      return -1;
  }
  run_add_counts(r, &counts, 1);
  return 0;
}
