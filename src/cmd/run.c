/* A run, end to end, in data-flow order: connect and lock, open the source,
 * feed its prepared rows (source/prepare.c) to the engine, write, commit. */
#include "run_impl.h"

#include <stdlib.h>
#include <string.h>

#include "choose.h"
#include "clock.h"
#include "run_id.h"
#include "guard.h"
#include "interrupt.h"
#include "log.h"
#include "plugin_host.h"
#include "precheck.h"
#include "prepare.h"
#include "progress.h"
#include "refresh.h"
#include "rules.h"
#include "reject.h"
#include "runs.h"
#include "pushdown.h"
#include "scd.h"
#include "schema.h"
#include "schema_keep.h"
#include "snapshot.h"
#include "state.h"
#include "table_lock.h"
#include "target.h"
#include "ts.h"
#include "writer.h"

const char *run_mode_name(int mode)
{
  static const char *const names[] = {"append", "replace", "scd2", "upsert"};
  return mode >= 0 && mode <= MODE_UPSERT ? names[mode] : "?";
}

/* ---- the run -------------------------------------------------------------- */


static void note_lmd(run_ctx *r, const dwl_ts *lmd)
{
  if (!r->have_max || ts_seq_cmp(lmd, &r->max) > 0) {
    r->max = *lmd;
    r->have_max = 1;
  }
}

/* Feeds every source row to `take`: normalized, lmd parsed, and marked
 * whether it lies past the checkpoint. */
typedef int (*take_fn)(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past,
                       dwl_error *err);

/* One bad row to the run's rejects, counted in the summary: a row that
 * failed conversion, one a plugin could not deliver, a rejected late row. */
static int set_aside(run_ctx *r, const char *name, uint64_t origin, const char *raw, size_t raw_len,
                     const dwl_value *vals, size_t nvals, const char *reason, dwl_error *err)
{
  if (rejects_add(&r->rj, name, origin, raw, raw_len, vals, nvals, reason, err) != 0)
    return -1;
  r->sum->rejected = r->rj.count;
  return 0;
}

/* deletes: absent: a rejected row was delivered, so its key is present;
 * without a readable key (a plugin may hand over only the raw text) it
 * may be any absent key, and the guard deletes none (guard_absence). */
static int reject_present(run_ctx *r, const char *name, uint64_t origin, const dwl_value *vals, size_t nvals,
                          dwl_error *err)
{
  if (r->spec->deletes != DEL_ABSENT)
    return 0;
  const scd_cols *c = &r->e.cols;
  int engine = r->engine.engine == ENGINE_PUSHDOWN ? r->pd != NULL : r->have_engine;
  if (engine && vals && r->src && nvals == r->src->ncols && prep_key(&r->p, c->key, c->nkey, vals) == 0) {
    if (r->pd)
      return pushdown_seen_key(r->pd, r->p.row, err);
    fp128 key = fp_tuple(r->p.row, c->key, c->nkey);
    if (r->kparts)
      return run_keyparts_mark(r, key, err);
    scd_mark_present(&r->e, key);
    return 0;
  }
  if (r->unreadable++ == 0)
    snprintf(r->first_unreadable, sizeof r->first_unreadable, "%s:%llu", name, (unsigned long long)origin);
  return 0;
}

/* load.future_tolerance: an lmd later than the run's clock by more than
 * the tolerance is a clock or data error, not a change: taken into the
 * checkpoint, it would make every later run skip every row.  Returns 1
 * (why filled) for such a row. */
static int too_far_ahead(const run_ctx *r, const dwl_value *raw, const dwl_ts *lmd, char *why, size_t n)
{
  long long tol = r->spec->future_tolerance_us;
  if (tol < 0 || r->t->vseq || lmd->us - r->started.us <= tol)  /* a sequence is no time */
    return 0;
  char now[32], span[32];
  ts_format(&r->started, now);
  ts_format_duration(tol, span);
  char what[160];
  snprintf(what, sizeof what, "is more than %s after the run's clock (%s UTC); see load.future_tolerance", span, now);
  return prep_bad_value(&r->p, (size_t)r->p.lmd, raw, what, why, n);
}

static int read_source(run_ctx *r, take_fn take, dwl_error *err)
{
  dwl_batch b;
  int rc;
  progress_phase("read");
  while ((rc = source_next(r->src, &b, err)) == DWL_OK) {
    for (size_t i = 0; i < b.nrows; i++) {
      const dwl_value *in = &b.values[i * r->src->ncols];
      uint64_t origin = b.origin ? b.origin[i] : (uint64_t)r->sum->read + 1;
      dwl_ts lmd = {0};
      char why[512];
      r->sum->read++;
      int bad = prep_row(&r->p, in, &lmd, why, sizeof why, err);
      if (bad < 0) {
        err_prefix(err, "%s:%llu", r->p.origin_name, (unsigned long long)origin);
        return -1;
      }
      if (bad) {
        if (set_aside(r, r->p.origin_name, origin, NULL, 0, source_raw(r->src, i), r->src->nraw, why, err) != 0 ||
            reject_present(r, r->p.origin_name, origin, in, r->src->ncols, err) != 0)
          return -1;
        continue;
      }
      if (r->p.lmd >= 0 && too_far_ahead(r, &in[r->p.lmd], &lmd, why, sizeof why)) {
        /* set aside for its date, but delivered: its key is present */
        if (set_aside(r, r->p.origin_name, origin, NULL, 0, source_raw(r->src, i), r->src->nraw, why, err) != 0 ||
            reject_present(r, r->p.origin_name, origin, in, r->src->ncols, err) != 0)
          return -1;
        continue;
      }
      int past = 1;
      if (r->p.lmd >= 0) {
        note_lmd(r, &lmd);
        /* load.lookback rereads a window before the checkpoint: rows
         * already loaded there are no-ops, late ones are caught. */
        past = r->spec->watermark == WATERMARK_NONE || !r->have_cp || refresh_replays(r->o, &lmd) ||
               (r->spec->lookback_us > 0 ? lmd.us > r->cp.us - r->spec->lookback_us  /* (the first column's) */
                                         : ts_seq_cmp(&lmd, &r->cp) > 0);
      } else if (r->snapshot)
        lmd = r->load;
      if (take(r, r->p.row, origin, r->p.lmd >= 0 || r->snapshot ? &lmd : NULL, past, err) != 0)
        return -1;
    }
    progress_rows(r->sum->read);
    /* A signal: also a source that never blocks stops between batches. */
    if (interrupt_check(err) != 0)
      return -1;
  }
  return rc == DWL_EOF ? 0 : -1;
}

/* host->reject: a row the plugin could not deliver. */
static int on_plugin_reject(void *ud, uint64_t origin, const char *raw, size_t raw_len, const dwl_value *values,
                            size_t nvalues, const char *reason, dwl_error *err)
{
  run_ctx *r = ud;
  const char *name = r->src ? r->src->origin_name : "source";
  r->sum->read++;
  if (set_aside(r, name, origin, raw, raw_len, values, nvalues, reason, err) != 0)
    return -1;
  if (r->src)  /* its key, in the engine's layout as the source's other rows */
    values = source_row(r->src, values, &nvalues);
  return reject_present(r, name, origin, values, nvalues, err);
}

/* load.late: reject, with load.max_rejects: a late row set aside. */
static int on_late_reject(void *ud, const rs_row *row, const char *reason, dwl_error *err)
{
  run_ctx *r = ud;
  return set_aside(r, r->p.origin_name, row->origin, NULL, 0, row->vals, r->src->ncols, reason, err);
}

static int take_append(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past,
                       dwl_error *err)
{
  (void)origin;
  (void)lmd;
  /* replace loads every row: it rebuilds the table, whatever the checkpoint. */
  if (!past && r->spec->mode != MODE_REPLACE) {
    r->sum->skipped++;
    return 0;
  }
  /* schema.widen: before the row that needs it is queued */
  if (target_widen(r->t, r->o->plan, r->o->sqlout, err) < 0)
    return -1;
  /* replace empties the table at its first row to load (guard_replace
   * judges a source without one). */
  if (r->spec->mode == MODE_REPLACE && r->t->exists && !r->emptied) {
    if (writer_delete_all(r->w, err) != 0)
      return -1;
    r->emptied = 1;
  }
  r->sum->inserted++;
  return writer_insert_source(r->w, row, err);
}

static int take_engine(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past,
                       dwl_error *err)
{
  if (r->stream > 0) {  /* (streaming refuses deletes: absent, as spilling) */
    if (!past)
      r->sum->skipped++;
    return past ? run_stream_take(r, row, origin, lmd, err) : 0;
  }
  if (r->kparts)  /* (every row: run_absent.c) */
    return run_keyparts_take(r, row, origin, lmd, past, err);
  if (r->spilling) {
    /* truncate_values: a truncate row is every key's: held, not spilled
     * (scd_add_source keeps it); the keys of spilled rows are marked, as
     * those whose walk applies it */
    if (r->spec->truncate_values.n && scd_is_truncate(&r->e, row)) {
      if (!past)
        r->sum->skipped++;
      return scd_add_source(&r->e, row, origin, lmd, past, err) < 0 ? -1 : 0;
    }
    /* (the key's fingerprint, once per row: the marks and the partition) */
    fp128 key = fp_tuple(row, r->e.cols.key, r->e.cols.nkey);
    if (past && r->spec->truncate_values.n)
      scd_mark_walked(&r->e, key);
    /* deletes: absent: every row marks its key present in the current
     * versions' key map, which spilling keeps (and its load.partition
     * delivered), and a row of a key without a live version revives it
     * however old (as scd_add_source takes it) */
    if (scd_mark_partition(&r->e, row, err) != 0)
      return -1;
    int revive = r->spec->deletes == DEL_ABSENT && scd_mark_present(&r->e, key) && !past;
    if (!past && !revive)
      r->sum->skipped++;
    return past || revive ? run_spill_take(r, key, row, origin, lmd, err) : 0;
  }
  int rc = scd_add_source(&r->e, row, origin, lmd, past, err);
  if (rc < 0)
    return -1;
  if (!past && rc == 0)
    r->sum->skipped++;  /* (a revived key's row is not skipped) */
  /* (the row store takes memory by 1 MiB chunks: a budget below that is
   * passed at the first row) */
  if (r->stream == 0 && (r->e.delta.used > run_stream_chunk(r) || r->e.delta.bytes > (size_t)r->engine.budget) &&
      run_stream_check(r, err) != 0)
    return -1;
  if (r->stream > 0)
    return 0;
  return r->e.delta.bytes > (size_t)r->engine.budget ? run_spill_check(r, err) : 0;
}


void run_add_counts(run_ctx *r, const scd_counts *counts, int sign)
{
  r->sum->inserted += sign * counts->inserted;
  r->sum->expired += sign * counts->expired;
  r->sum->updated += sign * counts->updated;
  r->sum->deleted += sign * counts->deleted;
  r->sum->unchanged += sign * counts->unchanged;
  r->sum->late_repaired += sign * counts->late_repaired;
  r->sum->late_rejected += sign * counts->late_rejected;
  r->sum->late_ignored += sign * counts->late_ignored;
}

static void add_counts(run_ctx *r, const scd_counts *counts)
{
  run_add_counts(r, counts, 1);
}

static int take_pushdown(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past,
                         dwl_error *err)
{
  if (!past) {
    r->sum->skipped++;
    return pushdown_seen(r->pd, row, origin, lmd, err);
  }
  return pushdown_add(r->pd, row, origin, lmd, err);
}

/* A row of a key with late rows, from pushdown's stage: into the memory
 * engine's delta. */
static int take_late_row(void *ud, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  run_ctx *r = ud;
  return scd_add_source(&r->e, row, origin, lmd, 1, err) < 0 ? -1 : 0;
}

/* load.engine: pushdown: the delta goes to the warehouse, which computes
 * the changes (pushdown.c). */
static int run_pushdown(run_ctx *r, dwl_error *err)
{
  scd_counts counts = {0};
  if (pushdown_open(r->t, r->w, &r->e, &r->pd, err) != 0 || read_source(r, take_pushdown, err) != 0 ||
      target_widen(r->t, r->o->plan, r->o->sqlout, err) < 0)
    return -1;
  log_msg(LOG_INFO, "read %lld source rows; computing the changes in the warehouse", r->sum->read);
  int absent_ok = 1;
  if (r->spec->deletes == DEL_ABSENT) {
    long long current, absent;
    if (pushdown_count_absent(r->pd, &current, &absent, err) != 0)
      return -1;
    int g = guard_absence(r->spec, r->o, current, absent, r->sum->read, r->unreadable, r->first_unreadable, r->sum,
                          err);
    if (g < 0)
      return -1;
    absent_ok = g == 0;
  } else if (r->spec->truncate_values.n) {
    /* A truncate is judged by max_deletes on every live key it reaches. */
    long long current, reached;
    if (pushdown_count_truncate(r->pd, &current, &reached, err) != 0)
      return -1;
    int g = guard_absence(r->spec, r->o, current, reached, r->sum->read, 0, r->first_unreadable, r->sum, err);
    if (g < 0)
      return -1;
    absent_ok = g == 0;
  }
  /* load.late: repair: the keys with late rows go to the memory engine,
   * which holds their rows and histories.  Those are read before anything
   * is written (on SQLite a key with a NULL part is looked up on a second
   * connection, which the run's uncommitted writes would lock out); the
   * repair writes after pushdown's statements, so its sequence surrogate
   * keys follow theirs, as the memory engine numbers repaired keys after
   * all others. */
  long long nlate = 0;
  scd_counts mem = {0};
  scd_sink sink = writer_sink(r->w);
  if (pushdown_take_late(r->pd, take_late_row, r, &nlate, err) != 0)
    return -1;
  if (nlate > 0) {
    log_msg(LOG_INFO, "pushdown: %lld rows of keys with late rows (or rows pushdown does not place: at one "
            "instant, within a close step, at a tombstone's start) go to the memory engine", nlate);
    if (run_read_current(r, 1, err) != 0 || (r->e.ntrunc && scd_truncate_delta(&r->e, err) != 0) ||
        scd_apply(&r->e, &sink, &mem, err) != 0 ||
        (scd_deferred(&r->e) > 0 && run_read_history(r, err) != 0) || writer_flush(r->w, err) != 0)
      return -1;
  }
  progress_phase_total("apply", PUSHDOWN_APPLY_STEPS);
  int rc = pushdown_apply(r->pd, absent_ok, &counts, err);
  if (rc == 0 && scd_deferred(&r->e) > 0) {
    rc = writer_reload_sk(r->w, err);
    if (rc == 0)
      rc = scd_repair(&r->e, &sink, &mem, err);
    /* (a failed run counts only its rejected late rows, as run_engine's) */
    if (rc != 0)
      counts = (scd_counts){.late_rejected = mem.late_rejected};
  }
  add_counts(r, &counts);  /* (a failed run's: its rejected late rows, as run_engine's) */
  if (rc != 0)
    return -1;
  add_counts(r, &mem);
  r->sum->skipped -= counts.revived;
  return 0;
}

/* The delta's walk, and the keys with late rows after their history. */
static int scd_walk_delta(run_ctx *r, const scd_sink *sink, scd_counts *counts, dwl_error *err)
{
  if (scd_apply(&r->e, sink, counts, err) != 0)
    return -1;
  if (scd_deferred(&r->e) > 0 && run_read_history(r, err) != 0) {
    r->sum->late_rejected += counts->late_rejected;
    return -1;
  }
  if (scd_deferred(&r->e) > 0 && scd_repair(&r->e, sink, counts, err) != 0) {
    r->sum->late_rejected += counts->late_rejected;
    /* (the repair went on through its keys to count every late row: a
     * spilled run goes on through its partitions, run_spill.c) */
    r->late_failed = r->spec->late == LATE_REJECT && counts->late_rejected > 0;
    return -1;
  }
  return 0;
}

int run_apply_delta(run_ctx *r, dwl_error *err)
{
  scd_counts counts = {0};
  scd_sink sink = writer_sink(r->w);
  if (scd_walk_delta(r, &sink, &counts, err) != 0)
    return -1;
  add_counts(r, &counts);
  return 0;
}

static int run_engine(run_ctx *r, dwl_error *err)
{
  const dwl_spec *spec = r->spec;
  if (r->snapshot && snapshot_check_table(r->t, r->o, &r->load, err) != 0)
    return -1;
  /* (whether an initial load would stream; plan says what the run would
   * choose) */
  if (engine_choose(spec, r->o, r->t, r->src, run_stream_job_refusal(r) == NULL, &r->engine, err) != 0)
    return -1;
  summary_engine(r->sum, r->engine.engine == ENGINE_PUSHDOWN ? "pushdown" : "memory", r->engine.why);
  if (r->engine.engine == ENGINE_PUSHDOWN)
    return run_pushdown(r, err);
  /* Judging absence needs every current key, before the source is read
   * (rows not past the checkpoint only mark their key present).  Otherwise
   * the delta comes first, and its size decides how to read the current
   * versions.  plan stays with the scan: it creates nothing, not even the
   * temporary key table, unless lookup: keys asks for it. */
  int source_first = !engine_reads_all_current(spec) && (!r->o->plan || spec->lookup == LOOKUP_KEYS);
  int read = source_first ? 0 : run_keyparts_begin(r, err);
  if (read < 0 || (!source_first && !read && run_read_current(r, 0, err) != 0))
    return -1;
  if (read_source(r, take_engine, err) != 0 || target_widen(r->t, r->o->plan, r->o->sqlout, err) < 0)
    return -1;
  if (r->spilling)
    return run_spilled(r, err);
  if (r->stream > 0)
    return run_stream_finish(r, err);
  log_msg(LOG_INFO, "read %lld source rows, %zu past the checkpoint", r->sum->read, r->e.delta.n);
  if (source_first) {
    int keyed = spec->lookup == LOOKUP_KEYS;
    if (!keyed && r->e.delta.n > 0) {
      long long rows = target_count(r->t, err);
      if (rows < 0)
        return -1;
      keyed = (long long)r->e.delta.n * TARGET_KEYED_RATIO < rows;
    }
    if (r->e.delta.n > 0 && run_read_current(r, keyed, err) != 0)
      return -1;
  }

  scd_counts counts = {0};
  scd_sink sink = writer_sink(r->w);
  long long truncated = r->e.ntrunc ? scd_truncate(&r->e, err) : 0;
  if (truncated < 0)
    return -1;
  long long current = 0, absent = run_absent_mark(r, &current, err);
  if (absent < 0)
    return -1;
  progress_phase_total("apply", (long long)r->e.delta.n);
  if (scd_walk_delta(r, &sink, &counts, err) != 0)
    return -1;
  if (run_absent_apply(r, absent, current, truncated, &sink, &counts, err) != 0)
    return -1;
  add_counts(r, &counts);
  return 0;
}

static void run_free(run_ctx *r)
{
  pushdown_free(r->pd);
  writer_free(r->w);
  if (r->have_engine)
    scd_free(&r->e);
  rowset_free(&r->doomed);
  run_spill_free(r);
  run_stream_free(r);
  rejects_free(&r->rj);
  prep_free(&r->p);
  source_close(r->src);
  target_free(r->t);
  odbc_close(r->failed_conn);
}

/* Connects and makes sure the state table exists: nothing job-specific is
 * read before the run holds the job's lock. */
static int connect_target(run_ctx *r, dwl_error *err)
{
  if (target_connect(r->spec, &r->t, err) != 0)
    return -1;
  log_msg(LOG_INFO, "connected to %s %s (%s)", r->t->c->dbms, r->t->c->dbms_ver, r->t->c->redacted);
  if (r->o->plan)
    return 0;
  r->t->run_id = r->sum->run_id;  /* target.run_id_column's value */
  if (state_ensure(r->t, err) != 0 || state_ensure_run_id(r->t, err) != 0 || runs_ensure(r->t, err) != 0)
    return -1;
  return table_lock_ensure(r->t, err);
}

/* Reads the checkpoint (under the lock, so a run that waited for another
 * sees the checkpoint that one committed) and opens the source. */
static int open_source(run_ctx *r, dwl_error *err)
{
  const dwl_spec *spec = r->spec;
  job_state st;
  if (state_read(r->t, spec->job, &st, err) != 0)
    return -1;
  if (spec->lmd && st.checkpoint[0] && !r->o->full_refresh) {
    if (state_checkpoint(spec->job, st.checkpoint, &r->cp, &r->cp_seq, err) != 0)
      return -1;
    r->have_cp = 1;
    log_msg(LOG_INFO, "checkpoint %s", st.checkpoint);
  }
  r->snapshot = snapshot_job(spec);
  if (r->snapshot && snapshot_load_time(spec, r->o, &st, r->started, &r->load, err) != 0)
    return -1;
  /* A source may push the checkpoint down (read only later rows): not when
   * the run needs every row, to rebuild the table or to judge absence.  A
   * plugin that skips old rows itself must leave the lookback window. */
  int all_rows = spec->mode == MODE_REPLACE || spec->deletes == DEL_ABSENT || r->o->backfill_from ||
                 spec->watermark == WATERMARK_NONE;
  char low[32];
  int lowered = r->have_cp && state_checkpoint_lowered(&r->cp, r->cp_seq, spec->lookback_us, low);
  if (rejects_open(&r->rj, spec, !r->o->plan, err) != 0)
    return -1;
  source_config cfg = source_config_for(
    spec, !r->have_cp || all_rows ? NULL : lowered ? low : st.checkpoint);
  cfg.reject = on_plugin_reject;
  cfg.reject_ud = r;
  if (target_table_names(r->t, &cfg.table_cols, &cfg.ntable_cols, err) != 0)
    return -1;
  if (source_open(&cfg, &r->src, err) != 0)
    return -1;
  r->t->nhidden = r->src->ncols - r->src->nstored;
  if (prep_init(&r->p, spec, r->src, err) != 0 || target_layout(r->t, r->src->cols, r->src->nstored, err) != 0 ||
      (r->have_cp && state_checkpoint_fits(r->t, st.checkpoint, &r->cp, r->cp_seq,
                                           &(dwl_ts){.nties = r->p.nties, .tie_time = r->p.tie_time}, err) != 0))
    return -1;
  r->p.t = r->t;
  if (spec->mode == MODE_SCD2 || spec->mode == MODE_UPSERT) {
    r->have_engine = 1;
    /* Deletions by absence happen "today" in a dimension of dates. */
    dwl_ts at = r->snapshot ? r->load : r->started;
    if (r->t->vdate)
      at.us -= ((at.us % DWL_US_PER_DAY) + DWL_US_PER_DAY) % DWL_US_PER_DAY;
    if (scd_init(&r->e, spec, r->src->cols, r->src->ncols, at, err) != 0)
      return -1;
    scd_hide(&r->e, r->src->nstored);
    r->e.tick_us = r->t->vdate ? DWL_US_PER_DAY : 1;
    r->e.origin_name = r->p.origin_name;
    r->e.reject = on_late_reject;
    r->e.reject_ud = r;
    r->e.cp = r->have_cp ? &r->cp : NULL;
  }
  return 0;
}

/* The commit call failed on a table whose rows commit apart from the
 * checkpoint (target_commit_apart, in `apart`): the state row tells only
 * the checkpoint's fate, not theirs.  Exit 5 either way, saying which. */
static int commit_apart(run_ctx *r, const char *why, int committed, const char *apart, dwl_error *err)
{
  r->sum->status = "unknown";
  if (committed)
    return err_setc(err, DWL_EXIT_UNKNOWN, DWL_CAUSE_COMMIT_APART,
                    "the commit call failed (%s); the checkpoint committed (the state row holds this run's id %s), "
                    "but %s: rows a server failed to commit are missing, and the next run starts past them",
                    why, r->sum->run_id, apart);
  return err_setc(err, DWL_EXIT_UNKNOWN, DWL_CAUSE_COMMIT_APART,
                  "%s; the checkpoint was not committed (the state row does not hold this run's id %s), but %s: "
                  "what they committed before the failure stays, and the next run reads the same rows again",
                  why, r->sum->run_id, apart);
}

/* The commit call failed: the server may have committed all the same (a
 * connection that died after the server committed, before its answer
 * arrived).  The run's id in the state row tells, read on a new
 * connection, which then replaces the dead one.  Returns 0 when the
 * commit happened, else -1 with err: exit 1 when it did not, 5 when it
 * cannot be told, or when the table's rows commit apart from the state
 * row (commit_apart). */
static int commit_outcome(run_ctx *r, dwl_error *err)
{
  char why[sizeof err->msg];
  memcpy(why, err->msg, sizeof why);
  err_init(err);
  odbc_conn *c2;
  dwl_error e2;
  err_init(&e2);
  char id[40] = "";
  if (target_open_conn(r->t, &c2, &e2) != 0 ||
      state_read_run_id(c2, r->t->d, r->spec->job, 1, r->t->lock_done_sql, id, sizeof id, &e2) != 0) {
    odbc_close(c2);
    r->sum->status = "unknown";
    return err_set(err, DWL_EXIT_UNKNOWN,
                   "the commit's outcome is unknown: %s; checking it failed: %s; this run's id is %s", why, e2.msg,
                   r->sum->run_id);
  }
  r->failed_conn = r->t->c;
  r->t->c = c2;
  target_warn_decided_xa(r->t);
  dwl_buf apart;
  buf_init(&apart, 0);
  if (target_commit_apart(r->t, &apart)) {
    int rc = commit_apart(r, why, strcmp(id, r->sum->run_id) == 0, apart.data ? apart.data : "its servers commit "
                          "apart", err);
    buf_free(&apart);
    return rc;
  }
  if (strcmp(id, r->sum->run_id) == 0) {
    log_msg(LOG_WARN, "the commit call failed (%s), but the commit happened: the state row holds this run's id %s",
            why, id);
    return 0;
  }
  return err_set(err, DWL_EXIT_FAILED, "%s; not committed: the state row does not hold this run's id %s", why,
                 r->sum->run_id);
}

/* The run's row in dwload_runs (runs.c): with err, inside the run's
 * transaction (committed with it); without, after a failure, best effort. */
static int record_run(run_ctx *r, const char *status, const char *error, dwl_error *err)
{
  char started[32], cp[128] = "";
  ts_format(&r->started, started);
  if (r->have_cp)
    state_checkpoint_text(r->t, &r->cp, cp, sizeof cp);
  run_record rec = {r->sum, status, started, cp, error};
  if (err)
    return runs_insert(r->t, &rec, err);
  runs_record_after(r->t, &rec);
  return 0;
}

int run_job(const dwl_spec *spec, const run_opts *o, run_summary *sum, dwl_error *err)
{
  double t0 = now_s();
  run_ctx r;
  memset(&r, 0, sizeof r);
  r.spec = spec;
  r.o = o;
  r.part = -1;
  r.sum = sum;
  summary_init(sum, spec->job, run_mode_name(spec->mode));
  log_set_job(spec->job);
  r.started = ts_now();
  if (!o->plan) {
    run_id_new(sum->run_id);
    log_msg(LOG_INFO, "run id %s", sum->run_id);
    if (o->on_start)
      o->on_start(o->start_ud, sum);
  }

  int rc = interrupt_check(err);
  if (rc == 0)
    rc = precheck_job(spec, !o->plan, err);  /* before connecting: precheck.h */
  if (rc == 0)
    rc = connect_target(&r, err);
  if (rc == 0 && !o->plan) {
    /* Everything from here to the commit is one transaction. */
    rc = table_lock_mark(r.t, spec->job, &r.started, err);
    if (rc == 0)
      rc = state_lock(r.t, spec->job, &r.started, err);
    r.locked = rc == 0;
    if (rc == 0)
      rc = table_lock_take(r.t, spec->job, err);
  }
  if (rc == 0)
    rc = open_source(&r, err);
  /* SQLite and PostgreSQL roll DDL back with the rest of a failed run. */
  if (rc == 0)
    rc = target_prepare_table(r.t, !o->plan, err);
  if (rc == 0)
    target_warn_foreign(r.t);  /* no global commit: said before any write */
  if (rc == 0)
    rc = schema_prepare(r.t, r.have_engine ? &r.e : NULL, r.p.origin_name, o->plan, o->sqlout, err);
  if (rc == 0 && o->plan && o->sqlout)
    rc = target_plan_table(r.t, o->sqlout, err);
  if (rc == 0)
    rc = writer_open(r.t, r.have_engine ? &r.e.cols : NULL, o->plan, o->sqlout, &r.w, err);
  if (rc == 0)
    rc = refresh_begin(spec, o, r.t, r.w, &r.refreshed, sum, err);
  if (rc == 0)
    rc = r.have_engine ? run_engine(&r, err) : read_source(&r, take_append, err);
  if (rc == 0)
    rc = refresh_guard(spec, o, r.refreshed, sum, err);
  if (rc == 0 && spec->mode == MODE_REPLACE && r.t->exists && !r.emptied) {
    long long rows = target_rows(r.t, err);
    rc = rows < 0 ? -1 : guard_replace(spec, o, rows, sum, err);
    if (rc == 0)
      rc = writer_delete_all(r.w, err);
  }
  if (rc == 0) {
    progress_phase_total("write", writer_pending_statements(r.w));
    rc = writer_flush(r.w, err);
  }
  if (rc == 0 && !o->plan)
    rc = schema_keep_end(r.t, err);
  if (spec->lmd) {
    dwl_ts cp = r.have_max && (!r.have_cp || ts_seq_cmp(&r.max, &r.cp) > 0) ? r.max : r.cp;
    if (r.have_max || r.have_cp)
      state_checkpoint_text(r.t, &cp, sum->checkpoint, sizeof sum->checkpoint);
  } else if (r.snapshot && rc == 0)
    target_ts_text(r.t, &r.load, sum->load_time);
  sum->seconds = now_s() - t0;
  sum->widened = r.t ? r.t->widened : 0;
  if (rc == 0 && !o->plan) {
    sum->ok = 1;
    progress_phase("commit");
    /* A signal now still rolls back: the last moment it can. */
    rc = interrupt_check(err);
    if (rc == 0)
      rc = rejects_flush(&r.rj, err);
    if (rc == 0)
      rc = state_save(r.t, sum, err);
    if (rc == 0)
      rc = record_run(&r, "committed", NULL, err);
    if (rc == 0)
      rc = table_lock_release(r.t, err);
    if (rc == 0)
      rc = odbc_commit(r.t->c, err);
    if (rc != 0 && r.t->c->commit_failed)
      rc = commit_outcome(&r, err);
    if (rc == 0) {
      rejects_publish(&r.rj);
      target_unmark_columns(r.t);
      target_analyze_after_load(r.t, r.sum->inserted);
    }
  }
  if (rc == 0) {
    sum->ok = 1;
    const log_field f[] = {{"read", NULL, sum->read},         {"skipped", NULL, sum->skipped},
                           {"inserted", NULL, sum->inserted}, {"expired", NULL, sum->expired},
                           {"updated", NULL, sum->updated},   {"deleted", NULL, sum->deleted},
                           {"unchanged", NULL, sum->unchanged}, {"rejected", NULL, sum->rejected}};
    log_fields(LOG_INFO, f, (int)(sizeof f / sizeof f[0]), NULL,
               "%s: read %lld, skipped %lld, inserted %lld, expired %lld, updated %lld, deleted %lld, "
               "unchanged %lld, rejected %lld in %.2fs",
               o->plan ? "plan" : "committed", sum->read, sum->skipped, sum->inserted, sum->expired, sum->updated,
               sum->deleted, sum->unchanged, sum->rejected, sum->seconds);
    if (interrupt_signal()) {
      interrupt_ack();
      log_msg(LOG_WARN, "a signal arrived after the commit: the run is complete");
    }
  } else {
    sum->ok = 0;
    rejects_abandon(&r.rj);
    /* Whatever failed after a signal failed because of it. */
    if (interrupt_signal())
      interrupt_ack();
    if (interrupt_signal() && err->code != DWL_EXIT_UNKNOWN) {
      log_msg(LOG_DEBUG, "after the signal: %s", err->msg);
      interrupt_err(err);
      sum->status = "interrupted";
    }
    /* The driver's own words for it vary with the moment (a FATAL, an
     * internal SAVEPOINT failing, ...): say plainly what happened. */
    int lost = r.t && odbc_lost(r.t->c);
    target_lock_timed_out(r.t, err);
    if (lost)
      err_prefix(err, "lost the connection to the warehouse (the server ended the session, or the network failed)");
    if (err->cause == DWL_CAUSE_COMMIT_APART) {
      /* The message says what committed; the state row, read on the
       * connection commit_outcome opened, takes it too. */
      state_record_failure(r.t, spec->job, "unknown", err->msg);
    } else if (err->code == DWL_EXIT_UNKNOWN) {
      log_msg(LOG_WARN, "the run may or may not have committed: `dwload state` shows the run id of the last "
                        "committed run; if it is %s, this run committed",
              sum->run_id);
    } else if (r.locked) {
      odbc_rollback(r.t->c);
      run_keyparts_name_dup(&r, err);
      if (!lost)
        state_record_failure(r.t, spec->job, sum->status ? sum->status : "failed", err->msg);
      log_msg(LOG_INFO, "rolled back: nothing was written");
    }
    if (!lost)
      table_lock_abandon(r.t);
    /* A failed run reports the checkpoint still stored, also when it
     * failed before reading it under the lock (locked out by another run,
     * say): then it is read now, outside any transaction. */
    sum->checkpoint[0] = '\0';
    if (r.have_cp)
      state_checkpoint_text(r.t, &r.cp, sum->checkpoint, sizeof sum->checkpoint);
    else if (spec->lmd && r.t && r.t->c && !lost)
      state_stored_checkpoint(r.t, spec->job, sum->checkpoint, sizeof sum->checkpoint);
    /* A run refused at the job's (or table's) lock never ran: it leaves
     * no row, and does not wait for the lock the other run holds (on
     * SQLite the database's write lock) just to fail writing one. */
    if (!o->plan && err->code == DWL_EXIT_LOCKED && !r.locked)
      log_msg(LOG_INFO, "run %s is not recorded in " DWL_RUNS_TABLE ": refused, another run holds the lock",
              sum->run_id);
    else if (!o->plan)
      record_run(&r, err->code == DWL_EXIT_UNKNOWN ? "unknown" : sum->status ? sum->status : r.locked ? "rolled back" : "failed",
                 err->msg, NULL);
  }
  sum->seconds = now_s() - t0;
  run_free(&r);
  return rc;
}
