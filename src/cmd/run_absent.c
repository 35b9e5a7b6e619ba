/* A run's deletions by absence (load.deletes: absent, and the live keys
 * a truncate row reaches): the keys to delete marked once the source is
 * read, their rows read again before anything is written, the guards,
 * and the deletions; and, past the memory budget, the key map of every
 * current version partitioned with the delta, by key:
 *
 * Absence (and a truncate row) judges every current key, so the memory
 * engine reads every current version before the source, as it does for
 * lookup: scan (which has no first pass: nothing to judge); spilling the
 * delta alone (run_spill.c) keeps that key map whole, about 82 to 170
 * bytes a current version (choose.c): 8 GiB at 100M keys, whatever the
 * budget.  When the dimension's estimate passes the budget (or the
 * versions read pass it: an estimate may be stale), the key map is not
 * held: the scan of the current versions writes their entries (the
 * fingerprints and flags a version takes, keymap.h) to P files by the
 * hash of the key the delta's partitions use, and every delivered row
 * goes to its partition; with absence the rows not past the checkpoint
 * too (tagged): whether such a row revives its key or only marks it
 * present depends on the key's version, read later.  Truncate rows are
 * held, as the engine holds them.  A rejected row's key goes to a file
 * of its own (they are few), read with each partition: it marks its key
 * present, if the partition's, and nothing else.
 *
 * Once the source is read, a first pass over the partitions loads each
 * one's entries, marks its delivered keys present, and keeps only the
 * keys to delete: the guard's counts, and the rows the deletions need,
 * read in one scan before anything is written (SQLite's scan reads on a
 * second connection, which the run's writes lock out) into a file of
 * their own (with load.partition, only those of the partitions
 * delivered: the small map of partitions is held).  Then each partition
 * loads its entries again and is computed as run_spill.c computes one (a
 * tagged row of a live key is dropped; of any other key it revives it;
 * ignore_null_updates reads the keys' versions again for their values,
 * which the key files do not hold); after the last one, the guard and
 * the deletions, as one pass does after its walk.  A key's changes
 * depend only on its own rows and version, so the results are one
 * pass's, row for row.  Memory: a partition's entries and rows, and
 * until the deleted keys' rows are read, their fingerprints (16 bytes
 * each). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "interrupt.h"
#include "log.h"
#include "run_impl.h"

#define MIB (1024.0 * 1024.0)
#define KP_MIN_PARTS 2
#define KP_MAX_PARTS 256  /* open files: with the delta's 256 and its splits' (run_spill.c), within 1024 */

/* The memory an entry takes loaded: its own and its slots (keymap_bytes
 * counts whole chunks of 4,096 entries, more than a tiny budget). */
#define KP_ENTRY_HELD (sizeof(km_entry) + 2 * sizeof(uint64_t))

/* The entries held while the current versions are read are written out
 * in batches of this share of the budget. */
#define KP_FLUSH_SHARE 8
#define KP_FLUSH_MIN 64

/* The keys to delete are known once the source is read (the walk
 * touches only keys the source delivered).  Their versions are read
 * again now, before the walk writes: SQLite's scan reads on a second
 * connection, which the run's uncommitted writes lock out once they
 * spill from the page cache (100k keys with 1% changed and 1% absent
 * waited for the lock and failed, exit 3, on every rerun). */
long long run_absent_mark(run_ctx *r, long long *current, dwl_error *err)
{
  size_t absent = r->spec->deletes == DEL_ABSENT ? scd_mark_absent(&r->e) : r->e.ndelete;
  *current = (long long)r->e.nlive;
  if (absent > 0 && scd_collect_doomed(&r->e, r->t, &r->doomed, err) != 0)
    return -1;
  /* load.partition: the rows read again say which absent keys are of the
   * partitions the source delivered, before the guard counts them. */
  if (absent > 0 && r->e.cols.npart > 0) {
    absent = r->doomed.n;
    *current = scd_partition_live(&r->e);
  }
  return (long long)absent;
}

int run_absent_guard(run_ctx *r, long long absent, long long current, long long truncated, dwl_error *err)
{
  /* A truncate is judged by max_deletes on every live key it reaches. */
  return guard_absence(r->spec, r->o, current, r->e.ntrunc ? truncated : absent, r->sum->read,
                       r->e.ntrunc ? 0 : r->unreadable, r->first_unreadable, r->sum, err);
}

int run_absent_apply(run_ctx *r, long long absent, long long current, long long truncated, const scd_sink *sink,
                     scd_counts *counts, dwl_error *err)
{
  int g = run_absent_guard(r, absent, current, truncated, err);
  if (g < 0)
    return -1;
  for (size_t i = 0; g == 0 && absent > 0 && i < r->doomed.n; i++)
    if (scd_delete_absent(&r->e, r->doomed.rows[i].vals, &r->doomed.rows[i].lmd, sink, counts, err) < 0)
      return -1;
  return 0;
}

static size_t clamp_parts(double p)
{
  return p < KP_MIN_PARTS ? KP_MIN_PARTS : p > KP_MAX_PARTS ? KP_MAX_PARTS : (size_t)p + 1;
}

/* The files of a key map of `keys` bytes partitioned with the delta:
 * each partition's entries, and its share of the delta where the source
 * tells its size, about half the budget (a delta larger than that is
 * split as it is read back, run_spill.c); keys < 0: a size not known,
 * the most partitions. */
static int kp_open(run_ctx *r, double keys, dwl_error *err)
{
  double budget = (double)r->engine.budget;
  uint64_t done = 0, total = 0;
  double delta = source_progress(r->src, &done, &total) ? (double)total * ENGINE_DELTA_PER_SOURCE_BYTE : 0;
  size_t p = keys < 0 ? KP_MAX_PARTS : clamp_parts(2.0 * (keys > delta ? keys : delta) / budget);
  if (spill_open(&r->kf, p, 0, err) != 0 || spill_open(&r->kmarks, 1, 0, err) != 0 ||
      spill_open(&r->sp, p, r->e.ncols, err) != 0)
    return -1;
  r->kf.what = "the current versions' key files";
  r->kmarks.what = "the rejected rows' key file";
  r->kp_fp1 = fp_tuple(NULL, r->e.cols.t1, 0);  /* (entry_unpack) */
  buf_init(&r->kp_absent, SIZE_MAX / 2);
  r->kparts = 1;
  r->kp_may = 0;
  /* ignore_null_updates: the values come with each partition's keys */
  if (r->spec->ignore_nulls)
    scd_fill_later(&r->e);
  r->kp_flush = (size_t)(budget / KP_FLUSH_SHARE / (double)sizeof(km_entry));
  if (r->kp_flush < KP_FLUSH_MIN)
    r->kp_flush = KP_FLUSH_MIN;
  r->spilling = 1;
  r->sum->spilled_partitions = (long long)p;
  return 0;
}

int run_keyparts_begin(run_ctx *r, dwl_error *err)
{
  if (r->o->plan || !r->t->exists || r->o->full_refresh)
    return 0;
  long long rows = target_count(r->t, err);
  if (rows < 0)
    return -1;
  int per = engine_current_row_bytes(r->t);
  double keys = (double)rows * per, budget = (double)r->engine.budget;
  if (keys > budget) {
    if (kp_open(r, keys, err) != 0)
      return -1;
    log_msg(LOG_INFO, "the key map of every current version (~%lld rows x %d bytes = %.1f MiB) passes the memory "
            "budget %.3g MiB: the current versions and the source go to %zu partitions by key in %s", rows, per,
            keys / MIB, budget / MIB, r->sp.nparts, r->sp.dir);
  } else {
    r->kp_may = 1;  /* (an estimate may be stale: run_keyparts_check) */
    r->kp_rows = rows;
    r->kp_per = per;
    r->kp_switch = (size_t)(budget / per);
  }
  if (run_read_current(r, 0, err) != 0)
    return -1;
  r->kp_may = 0;
  if (!r->kparts)
    return 1;  /* held whole */
  if (run_keyparts_flush(r, err) != 0)
    return -1;
  r->kp_live = (long long)r->e.nlive;
  long long entries = 0;
  for (size_t p = 0; p < r->kf.nparts; p++)
    entries += r->kf.rows[p];
  log_msg(LOG_INFO, "wrote the entries of %lld current versions (%lld live) to the key files (%.1f MiB)", entries,
          r->kp_live, (double)r->kf.bytes / MIB);
  return scd_reset(&r->e, err) != 0 ? -1 : 1;
}

/* A catalog's estimate that was too low (statistics not gathered since
 * the table grew), or the values ignore_null_updates keeps, which it does
 * not count, let the key map be held: once the versions read (and those
 * values) pass the budget, the rest goes to key files.  How many versions
 * there are is not known (an estimate that said 1 row of a table of 8,000
 * keys chose 5 partitions from twice the versions read, each past the
 * budget): the most partitions, whose cost is a file each. */
int run_keyparts_check(run_ctx *r, dwl_error *err)
{
  if (r->kp_may) {
    /* (ignore_null_updates keeps each live key's values meanwhile,
     * which the estimate does not count: in versions' worth; no division
     * per version for the other jobs, which keep none) */
    size_t held = r->e.cur.bytes ? r->e.cur.bytes / (size_t)r->kp_per : 0;
    if (r->e.km.count + held <= r->kp_switch)
      return 0;
    long long seen = (long long)r->e.km.count;
    char values[100] = "";
    if (r->e.cur.bytes > 0)
      snprintf(values, sizeof values, ", and %.1f MiB of the values ignore_null_updates keeps",
               (double)r->e.cur.bytes / MIB);
    if (kp_open(r, -1, err) != 0)  /* (drops those values) */
      return -1;
    log_msg(LOG_INFO, "the key map of the current versions passes the memory budget %.3g MiB at %lld versions read "
            "(x %d bytes%s; the table's estimate was ~%lld rows): the current versions and the source go to %zu "
            "partitions by key in %s", (double)r->engine.budget / MIB, seen, r->kp_per, values, r->kp_rows,
            r->sp.nparts, r->sp.dir);
  }
  return r->e.km.count >= r->kp_flush ? run_keyparts_flush(r, err) : 0;
}

/* A key file's record: what an entry read from the table holds (not its
 * group, the walk's), the type 1 fingerprint only where there are type 1
 * columns: 41 bytes, or 57, where the entry takes 64. */
static size_t entry_size(const run_ctx *r)
{
  return 3 * sizeof(fp128) + sizeof(int64_t) + 1 - (r->e.cols.nt1 ? 0 : sizeof(fp128));
}

static void entry_pack(const run_ctx *r, const km_entry *m, unsigned char *rec)
{
  unsigned char *p = rec;
  memcpy(p, &m->key, sizeof m->key), p += sizeof m->key;
  memcpy(p, &m->fp2, sizeof m->fp2), p += sizeof m->fp2;
  if (r->e.cols.nt1)
    memcpy(p, &m->fp1, sizeof m->fp1), p += sizeof m->fp1;
  memcpy(p, &m->valid_from, sizeof m->valid_from), p += sizeof m->valid_from;
  *p = m->flags;
}

static void entry_unpack(const run_ctx *r, const unsigned char *rec, km_entry *m)
{
  memset(m, 0, sizeof *m);
  memcpy(&m->key, rec, sizeof m->key), rec += sizeof m->key;
  memcpy(&m->fp2, rec, sizeof m->fp2), rec += sizeof m->fp2;
  if (r->e.cols.nt1)
    memcpy(&m->fp1, rec, sizeof m->fp1), rec += sizeof m->fp1;
  else
    m->fp1 = r->kp_fp1;  /* (that of no columns, as every row's) */
  memcpy(&m->valid_from, rec, sizeof m->valid_from), rec += sizeof m->valid_from;
  m->flags = *rec;
}

/* The entries read so far, to their partitions' key files; the engine's
 * count of live keys goes on (the run's total). */
int run_keyparts_flush(run_ctx *r, dwl_error *err)
{
  km_entry *m;
  unsigned char rec[sizeof(km_entry)];
  for (size_t it = 0; (m = keymap_next(&r->e.km, &it));) {
    entry_pack(r, m, rec);
    if (spill_put_raw(&r->kf, spill_part(&r->sp, m->key), rec, entry_size(r), err) != 0)
      return -1;
  }
  keymap_free(&r->e.km);
  if (keymap_init(&r->e.km, 1024) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

int run_keyparts_take(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past,
                      dwl_error *err)
{
  /* A truncate row is every key's: held (scd_add_source keeps it, and
   * the engine keeps it across resets).  Without deletes: absent a row
   * not past the checkpoint is skipped, as ever. */
  int trunc = r->spec->truncate_values.n && scd_is_truncate(&r->e, row);
  if (trunc || (!past && r->spec->deletes != DEL_ABSENT)) {
    r->sum->skipped += !past;
    return trunc && scd_add_source(&r->e, row, origin, lmd, past, err) < 0 ? -1 : 0;
  }
  /* load.partition: its partition was delivered (e->parts, small, is
   * held: the live keys a partition has, and whether it was delivered) */
  if (scd_mark_partition(&r->e, row, err) != 0)
    return -1;
  r->spilled++;
  fp128 key = fp_tuple(row, r->e.cols.key, r->e.cols.nkey);
  return spill_put_tag(&r->sp, spill_part(&r->sp, key), row, origin, lmd, !past, err);
}

int run_keyparts_mark(run_ctx *r, fp128 key, dwl_error *err)
{
  return spill_put_raw(&r->kmarks, 0, &key, sizeof key, err);
}

/* One entry back into the engine's key map, unless another partition's
 * (a split's part).  The scan's batches may hold a key's current version
 * and its deleted versions apart: merged as scd_add_gone merges them. */
static int load_entry(void *ud, const void *rec, dwl_error *err)
{
  run_ctx *r = ud;
  km_entry in;
  entry_unpack(r, rec, &in);
  if (r->part >= 0 ? run_spill_other_key(r, in.key)
                   : r->kp_slices > 1 && spill_slice(in.key, 1, r->kp_slices) != r->kp_slice)
    return 0;
  int created;
  km_entry *m = keymap_put(&r->e.km, in.key, &created);
  if (!m)
    return err_set(err, DWL_EXIT_FAILED, "out of memory loading a partition's current versions");
  if (created) {
    *m = in;
    r->e.nlive += (m->flags & KM_LIVE) != 0;
    return 0;
  }
  int gone = (m->flags & KM_GONE) != 0, in_gone = (in.flags & KM_GONE) != 0;
  if (gone && in_gone) {
    if (in.valid_from > m->valid_from)
      m->valid_from = in.valid_from;
  } else if (gone) {  /* (the scan reads current versions first: not seen) */
    *m = in;
    r->e.nlive += (m->flags & KM_LIVE) != 0;
  } else if (!in_gone) {
    r->kp_dup = 1;
    r->kp_dup_key = in.key;
    return err_set(err, DWL_EXIT_FAILED, "table %s has more than one current version of a key; repair the table "
                   "before loading", r->spec->target_table);
  }
  return 0;
}

/* Partition p's entries (with r->part and the split path set: only the
 * part's) into the engine's key map, which scd_reset emptied. */
static int load_part(run_ctx *r, size_t p, dwl_error *err)
{
  if (spill_read_raw(&r->kf, p, entry_size(r), 1, load_entry, r, err) != 0)
    return -1;
  double held = (double)r->e.km.count * KP_ENTRY_HELD;
  if (held > (double)r->engine.budget && !r->kp_warned) {
    r->kp_warned = 1;
    log_msg(LOG_WARN, "partition %zu's %zu current versions loaded take about %.1f MiB, more than the memory budget "
            "%.3g MiB: at most %d partitions of %d parts keep a dimension's key map within it (each about half the "
            "budget)", p + 1, r->e.km.count, held / MIB, (double)r->engine.budget / MIB, KP_MAX_PARTS,
            RUN_SPLIT_PARTS);
  }
  return 0;
}

size_t run_keyparts_slices(const run_ctx *r, size_t p)
{
  double held = (double)r->kf.rows[p] * KP_ENTRY_HELD, budget = (double)r->engine.budget;
  if (held <= budget)
    return 1;
  double k = 2.0 * held / budget + 1;
  return k > RUN_SPLIT_PARTS ? RUN_SPLIT_PARTS : (size_t)k;
}

int run_keyparts_load(run_ctx *r, dwl_error *err)
{
  if (load_part(r, (size_t)r->part, err) != 0)
    return -1;
  log_msg(LOG_DEBUG, "loaded %zu current versions of the partition's keys", r->e.km.count);
  return 0;
}

/* The first pass: a delivered row marks its key present; one not past
 * the checkpoint of a live key is skipped (one of any other key revives
 * it: the second pass takes it).  With truncate rows: the row's key has
 * rows, so its walk applies the truncates. */
static int mark_row(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  run_ctx *r = ud;
  (void)origin, (void)lmd, (void)err;
  if (r->spec->deletes != DEL_ABSENT) {
    scd_mark_walked(&r->e, fp_tuple(vals, r->e.cols.key, r->e.cols.nkey));
    return 0;
  }
  int revive = scd_mark_present(&r->e, fp_tuple(vals, r->e.cols.key, r->e.cols.nkey));
  if (r->sp.tag && !revive)
    r->sum->skipped++;
  return 0;
}

static int mark_key(void *ud, const void *rec, dwl_error *err)
{
  run_ctx *r = ud;
  (void)err;
  fp128 key;
  memcpy(&key, rec, sizeof key);
  scd_mark_present(&r->e, key);
  return 0;
}

/* The keys to delete of the partition loaded (absent, or live without
 * rows and reached by a truncate: r->kp_truncated counts every live key
 * one reaches, for the guard), to r->kp_absent: their fingerprints alone,
 * 16 bytes each (an entry of the key map takes 64 and a slot: 110 MiB for
 * 1.45M absent keys of 10M). */
static int keep_absent(run_ctx *r, dwl_error *err)
{
  if (r->spec->deletes == DEL_ABSENT)
    scd_mark_absent(&r->e);
  else
    r->kp_truncated += r->e.ntrunc ? scd_truncate_rest(&r->e) : 0;
  km_entry *m;
  for (size_t it = 0; (m = keymap_next(&r->e.km, &it));) {
    if ((m->flags & KM_DELETE) && buf_add(&r->kp_absent, &m->key, sizeof m->key) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory holding the keys to delete");
  }
  return 0;
}

/* A row of a key to delete, with its version's valid_from, to the file
 * the deletions read after the partitions (one pass holds them: here
 * they would take their share of the budget all along). */
static int put_doomed(void *ud, const dwl_value *row, const dwl_ts *valid_from, dwl_error *err)
{
  run_ctx *r = ud;
  fp128 key = fp_tuple(row, r->e.cols.key, r->e.cols.nkey);
  if (!bsearch(&key, r->kp_absent.data, r->kp_absent.len / sizeof key, sizeof key, fp_cmp) ||
      !scd_partition_judged(&r->e, row))  /* (load.partition: one delivered) */
    return 0;
  return spill_put(&r->kdoomed, 0, row, 0, valid_from, err);
}

long long run_keyparts_absent(run_ctx *r, long long *current, dwl_error *err)
{
  *current = r->kp_live;
  if (r->spec->deletes != DEL_ABSENT && !r->spec->truncate_values.n)
    return 0;  /* lookup: scan alone: nothing to judge, no first pass */
  /* (a partition whose entries pass the budget, slice by slice: the
   * rows mark only the keys loaded, and each live key is in one slice) */
  for (size_t p = 0; p < r->sp.nparts; p++) {
    r->kp_slices = run_keyparts_slices(r, p);
    for (r->kp_slice = 0; r->kp_slice < r->kp_slices; r->kp_slice++) {
      if (interrupt_check(err) != 0 || scd_reset(&r->e, err) != 0 || load_part(r, p, err) != 0 ||
          spill_read_raw(&r->kmarks, 0, sizeof(fp128), 1, mark_key, r, err) != 0 ||
          spill_reread(&r->sp, p, mark_row, r, err) != 0 || keep_absent(r, err) != 0)
        return -1;
    }
  }
  r->kp_slices = 0;
  size_t n = r->kp_absent.len / sizeof(fp128);
  /* their rows, read before any partition writes; with load.partition
   * only those of the partitions delivered are absent, as the rows say */
  if (scd_reset(&r->e, err) != 0)
    return -1;
  if (n > 1)  /* (none: no array at all) */
    qsort(r->kp_absent.data, n, sizeof(fp128), fp_cmp);
  int rc = n > 0 ? spill_open(&r->kdoomed, 1, r->t->nsrc, err) : 0;
  if (rc == 0 && n > 0) {
    r->kdoomed.what = "the spill file of the rows to delete";
    rc = scd_each_current(&r->e, r->t, put_doomed, r, err);
  }
  buf_free(&r->kp_absent);
  if (rc != 0)
    return -1;
  long long absent = n > 0 ? r->kdoomed.rows[0] : 0;
  if (r->e.cols.npart > 0) {
    *current = scd_partition_live(&r->e);
    log_msg(LOG_INFO, "%lld of %lld live keys of the partitions delivered absent, judged partition by partition",
            absent, *current);
  } else if (r->spec->deletes == DEL_ABSENT) {
    log_msg(LOG_INFO, "%lld of %lld live keys absent, judged partition by partition", absent, *current);
  } else {
    log_msg(LOG_INFO, "%lld of %lld live keys reached by a truncate, %lld of them without rows, judged partition by "
            "partition", r->kp_truncated, *current, absent);
  }
  return absent;
}

typedef struct apply_ctx {
  run_ctx *r;
  const scd_sink *sink;
  scd_counts *counts;
} apply_ctx;

static int delete_doomed(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  apply_ctx *a = ud;
  (void)origin;
  dwl_ts vf = lmd ? *lmd : (dwl_ts){0};
  return scd_delete_row(&a->r->e, vals, &vf, a->sink, a->counts, err) < 0 ? -1 : 0;
}

int run_keyparts_apply(run_ctx *r, long long absent, long long current, const scd_sink *sink, scd_counts *counts,
                       dwl_error *err)
{
  int g = run_absent_guard(r, absent, current, r->kp_truncated, err);
  if (g != 0 || absent == 0)
    return g < 0 ? -1 : 0;
  apply_ctx a = {r, sink, counts};
  return spill_read(&r->kdoomed, 0, delete_doomed, &a, err);
}

int run_keyparts_drop(run_ctx *r, fp128 key)
{
  km_entry *m = keymap_get(&r->e.km, key);
  return m && (m->flags & KM_LIVE);
}

typedef struct dup_ctx {
  run_ctx *r;
  char key[512];
} dup_ctx;

static int find_dup(void *ud, const dwl_value *row, const dwl_ts *valid_from, dwl_error *err)
{
  dup_ctx *d = ud;
  (void)valid_from, (void)err;
  if (!d->key[0] && fp_eq(fp_tuple(row, d->r->e.cols.key, d->r->e.cols.nkey), d->r->kp_dup_key))
    scd_describe_key(&d->r->e, row, d->key, sizeof d->key);
  return 0;
}

void run_keyparts_name_dup(run_ctx *r, dwl_error *err)
{
  if (!r->kp_dup)
    return;
  dup_ctx d = {r, ""};
  dwl_error scan = {0};
  if (scd_each_current(&r->e, r->t, find_dup, &d, &scan) != 0 || !d.key[0]) {
    log_msg(LOG_WARN, "could not name the key with more than one current version: %s",
            scan.msg[0] ? scan.msg : "no current version has its fingerprint");
    return;
  }
  /* (in the message as it stands: a prefix stays; another error, a
   * signal's say, is left alone) */
  static const char what[] = "more than one current version of a key";
  char *at = strstr(err->msg, what);
  if (!at)
    return;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%.*smore than one current version of key %s%s", (int)(at - err->msg), err->msg, d.key,
           at + sizeof what - 1);
  memcpy(err->msg, msg, sizeof msg);
}

void run_keyparts_free(run_ctx *r)
{
  spill_close(&r->kf);
  spill_close(&r->kmarks);
  spill_close(&r->kdoomed);
  buf_free(&r->kp_absent);
}
