/* A run's reads of the target's stored versions for the memory engine:
 * the current versions change detection needs (all, or the delta's keys
 * staged and joined, or listed for a distributed table) and the full
 * history of keys with late rows. */
#include <stdlib.h>

#include "clock.h"
#include "keymap.h"
#include "log.h"
#include "progress.h"
#include "run_impl.h"

static int on_current(void *ud, const dwl_value *row, const dwl_ts *vf, int deleted, dwl_error *err)
{
  run_ctx *r = ud;
  progress_step(++r->scanned);
  if (run_spill_other(r, row))  /* (another partition's key) */
    return 0;
  if (scd_add_current(&r->e, row, vf, deleted, err) != 0)
    return -1;
  return (r->kparts || r->kp_may) && r->part < 0 ? run_keyparts_check(r, err) : 0;
}

static int on_gone(void *ud, const dwl_value *row, const dwl_ts *valid_to, int deleted, dwl_error *err)
{
  run_ctx *r = ud;
  (void)deleted;
  progress_step(++r->scanned);
  if (run_spill_other(r, row))  /* (another partition's key) */
    return 0;
  if (scd_add_gone(&r->e, row, valid_to, err) != 0)
    return -1;
  return (r->kparts || r->kp_may) && r->part < 0 ? run_keyparts_check(r, err) : 0;
}

/* The scans of one list of keys (by_key_lists). */
typedef int (*list_fn)(run_ctx *r, const target_keys *k, void *arg, dwl_error *err);

/* A distributed table runs a join with a stage of the head a row at a
 * time (Spider: a SELECT per staged key on the shard holding it), where a
 * condition on the table alone goes to each shard whole: the keys of
 * `rows` go as lists (target_keys.keyrows), each key once, up to
 * TARGET_KEY_LIST a statement.  Keys with a NULL part are left to the
 * caller's NULL-safe lookups.  Returns the lists, or -1. */
static long by_key_lists(run_ctx *r, const rowset *rows, list_fn fn, void *arg, dwl_error *err)
{
  const scd_cols *c = &r->e.cols;
  size_t per = r->t->d->max_params / (c->nkey + 1);
  per = per < 1 ? 1 : per > TARGET_KEY_LIST ? TARGET_KEY_LIST : per;
  size_t nkeys;
  const dwl_value **keys = writer_key_rows(r->w, rows, &nkeys, err);
  if (!keys)
    return -1;
  target_keys k = {.key = c->key, .nkey = c->nkey};
  long lists = 0;
  int rc = 0;
  for (size_t first = 0; rc == 0 && first < nkeys; first += per, lists++) {
    k.keyrows = keys + first;
    k.nkeyrows = nkeys - first < per ? nkeys - first : per;
    rc = fn(r, &k, arg, err);
  }
  free(keys);
  return rc == 0 ? lists : -1;
}

typedef struct current_scan {
  const size_t *cols;
  size_t ncols;
  int gone;
} current_scan;

static int scan_current(run_ctx *r, const target_keys *k, void *arg, dwl_error *err)
{
  const current_scan *cs = arg;
  if (target_scan_keys(r->t, cs->cols, cs->ncols, 0, k, on_current, r, err) != 0)
    return -1;
  return cs->gone ? target_scan_keys(r->t, r->e.cols.key, r->e.cols.nkey, 1, k, on_gone, r, err) : 0;
}

/* Reads the current versions (and, for expire-style deletes, the last
 * deleted versions) that change detection needs: every one (full), or only
 * those of the delta's keys (keyed). */
int run_read_current(run_ctx *r, int keyed, dwl_error *err)
{
  const scd_cols *c = &r->e.cols;
  /* Only what change detection needs is read. */
  size_t nscan = 0;
  if (r->o->full_refresh)
    return 0;  /* the table was emptied first (refresh_begin) */
  size_t *scan = calloc(c->nkey + c->nt2 + c->nt1 + c->npart + 1, sizeof *scan);
  if (!scan)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  /* (an empty set may be a NULL pointer: no memcpy for it) */
  for (size_t i = 0; i < c->nkey; i++)
    scan[nscan++] = c->key[i];
  for (size_t i = 0; i < c->nt2; i++)
    scan[nscan++] = c->t2[i];
  for (size_t i = 0; i < c->nt1; i++)
    scan[nscan++] = c->t1[i];
  for (size_t i = 0; i < c->npart; i++)
    scan[nscan++] = c->part[i];  /* (a column read twice is harmless) */
  /* Keys deleted without a tombstone have no current version; their last
   * deleted version tells when a revival may start. */
  int gone = r->spec->deletes != DEL_NONE && r->spec->delete_style == DELSTYLE_EXPIRE;
  double t0 = now_s();
  int rc = 0;
  /* The line counts the rows the target really returns, not the delta. */
  r->scanned = 0;
  progress_phase_total("lookup", -1);
  if (!keyed) {
    rc = target_scan(r->t, scan, nscan, 0, on_current, r, err);
    if (rc == 0 && gone)
      rc = target_scan_deleted(r->t, c->key, c->nkey, on_gone, r, err);
  } else {
    target_keys k = {.key = c->key, .nkey = c->nkey};
    if (r->t->remote[0]) {
      current_scan cs = {scan, nscan, gone};
      long lists = by_key_lists(r, &r->e.delta, scan_current, &cs, err);
      rc = lists < 0 ? -1 : 0;
      if (rc == 0)
        log_msg(LOG_DEBUG, "the delta's keys read by key lists: %ld statements", lists * (gone ? 2 : 1));
    } else {
      long staged = writer_stage_keys(r->w, &r->e.delta, &k.stage, &k.stage_cols, err);
      rc = staged < 0 ? -1 : 0;
      if (rc == 0 && staged > 0)
        rc = scan_current(r, &k, &(current_scan){scan, nscan, gone}, err);
    }
    /* Keys with a NULL part are not in the stage (equality never matches
     * NULL): one NULL-safe lookup each; such keys are rare. */
    k.stage = NULL;
    for (size_t i = 0; rc == 0 && i < r->e.delta.n; i++) {
      const rs_row *d = &r->e.delta.rows[i];
      if (!scd_null_key(&r->e.cols, d->vals) || keymap_get(&r->e.km, d->key))
        continue;
      k.keyrow = d->vals;
      rc = target_scan_keys(r->t, scan, nscan, 0, &k, on_current, r, err);
      if (rc == 0 && gone)
        rc = target_scan_keys(r->t, c->key, c->nkey, 1, &k, on_gone, r, err);
    }
  }
  free(scan);
  if (rc != 0)
    return -1;
  if (r->kparts && r->part < 0)  /* (most went to the key files: run_absent.c says how many) */
    log_msg(LOG_INFO, "read the current versions (all) in %.2fs", now_s() - t0);
  else
    log_msg(LOG_INFO, "read %zu current versions (%s) in %.2fs (%zu KiB of fingerprints)", r->e.km.count,
            keyed ? "the delta's keys" : "all", now_s() - t0, keymap_bytes(&r->e.km) / 1024);
  return 0;
}

static int on_history(void *ud, const dwl_value *row, const dwl_ts *vf, const dwl_ts *vt, int deleted,
                      dwl_error *err)
{
  run_ctx *r = ud;
  return scd_add_history(&r->e, row, vf, vt, deleted, err);
}

static int scan_history(run_ctx *r, const target_keys *k, void *arg, dwl_error *err)
{
  (void)arg;
  return target_scan_history(r->t, k, on_history, r, err);
}

/* Every stored version of the keys with late rows, and only of them:
 * their keys staged and joined (or listed), as in a keyed lookup. */
int run_read_history(run_ctx *r, dwl_error *err)
{
  const scd_cols *c = &r->e.cols;
  const rowset *keys = &r->e.latekeys;
  target_keys k = {.key = c->key, .nkey = c->nkey};
  double t0 = now_s();
  /* plan creates no temporary table unless lookup: keys asks for it: one
   * lookup per key instead */
  int stage = !r->o->plan || r->spec->lookup == LOOKUP_KEYS || r->t->remote[0];
  int rc = 0;
  if (stage && r->t->remote[0]) {
    long lists = by_key_lists(r, keys, scan_history, NULL, err);
    rc = lists < 0 ? -1 : 0;
    if (rc == 0)
      log_msg(LOG_DEBUG, "the keys with late rows read by key lists: %ld statements", lists);
  } else if (stage) {
    long staged = writer_stage_keys(r->w, keys, &k.stage, &k.stage_cols, err);
    rc = staged < 0 ? -1 : 0;
    if (rc == 0 && staged > 0)
      rc = scan_history(r, &k, NULL, err);
  }
  k.stage = NULL;
  for (size_t i = 0; rc == 0 && i < keys->n; i++) {
    if (stage && !scd_null_key(&r->e.cols, keys->rows[i].vals))
      continue;
    k.keyrow = keys->rows[i].vals;
    rc = target_scan_history(r->t, &k, on_history, r, err);
  }
  if (rc == 0)
    log_msg(LOG_INFO, "read %zu stored versions of %zu keys with late rows in %.2fs", r->e.hist.n, keys->n,
            now_s() - t0);
  return rc;
}
