/* run --full-refresh and --backfill-from/--backfill-to: the per-mode
 * meaning (dwload(1), dwload-job(5) FULL REFRESH AND BACKFILL), checked
 * before the run, and the run's pieces that differ: the table emptied
 * first, the guard on an empty source, the range replayed past the
 * checkpoint.  run.c calls these; the rest of a run is unchanged. */
#include "refresh.h"

#include <string.h>

#include "log.h"
#include "snapshot.h"

/* A range's end, as the job's lmd is read: ISO 8601 or load.lmd_format. */
static int range_ts(const dwl_spec *spec, const char *opt, const char *v, dwl_ts *out, dwl_error *err)
{
  if (spec_parse_lmd_text(spec, v, out) == 0)
    return 0;
  return err_set(err, DWL_EXIT_USAGE, "%s '%s' is not a timestamp (YYYY-MM-DD[ HH:MM:SS]%s%s)", opt, v,
                 spec->lmd_format ? ", or as load.lmd_format says: " : "", spec->lmd_format ? spec->lmd_format : "");
}

static int check_backfill(const dwl_spec *spec, run_opts *o, dwl_error *err)
{
  if (spec->mode != MODE_SCD2)
    return err_set(err, DWL_EXIT_USAGE,
                   "job '%s' is in mode %s: --backfill-from replays a time range into scd2 history; to reload "
                   "this job's table from its source use --full-refresh",
                   spec->job, run_mode_name(spec->mode));
  if (!spec->lmd)
    return err_set(err, DWL_EXIT_USAGE, "job '%s' has no load.lmd: --backfill-from selects rows by their lmd",
                   spec->job);
  /* A replayed row's NULLs would take the current version's values. */
  if (spec->ignore_nulls)
    return err_set(err, DWL_EXIT_USAGE,
                   "job '%s': --backfill-from replays rows into the history, where load.ignore_null_updates would "
                   "give their NULLs the current version's values; not supported: remove the key for the backfill",
                   spec->job);
  if (range_ts(spec, "--backfill-from", o->backfill_from, &o->bf_from, err) != 0 ||
      (o->backfill_to && range_ts(spec, "--backfill-to", o->backfill_to, &o->bf_to, err) != 0))
    return -1;
  if (o->backfill_to && o->bf_to.us < o->bf_from.us)
    return err_set(err, DWL_EXIT_USAGE, "--backfill-to '%s' is before --backfill-from '%s'", o->backfill_to,
                   o->backfill_from);
  return 0;
}

int refresh_check(const dwl_spec *spec, run_opts *o, dwl_spec *copy, const dwl_spec **use, dwl_error *err)
{
  *use = spec;
  if (snapshot_check(spec, o, ts_now(), err) != 0)
    return -1;
  if (o->backfill_to && !o->backfill_from)
    return err_set(err, DWL_EXIT_USAGE, "--backfill-to goes with --backfill-from");
  if (o->full_refresh && o->backfill_from)
    return err_set(err, DWL_EXIT_USAGE, "--full-refresh and --backfill-from do not go together");
  /* dbt refuses a full refresh of a snapshot for the same reason: the
   * history is not in the source, and would be gone. */
  if (o->full_refresh && spec->mode == MODE_SCD2)
    return err_set(err, DWL_EXIT_USAGE,
                   "job '%s' is in mode scd2: --full-refresh would delete its history (the closed versions are "
                   "nowhere in the source); to replay a time range into the history use --backfill-from TIMESTAMP "
                   "[--backfill-to TIMESTAMP]",
                   spec->job);
  if (o->full_refresh) {
    log_msg(LOG_INFO, "--full-refresh: the checkpoint is ignored; every source row is loaded%s", spec->mode == MODE_REPLACE ? "" : " and replaces the table's rows");
    return 0;
  }
  if (!o->backfill_from)
    return 0;
  if (check_backfill(spec, o, err) != 0)
    return -1;
  char from[32], to[32] = "";
  ts_format(&o->bf_from, from);
  if (o->backfill_to)
    ts_format(&o->bf_to, to);
  log_msg(LOG_INFO, "--backfill-from: rows with lmd from %s%s%s are replayed into the history (late rows repaired)",
          from, to[0] ? " to " : " on", to);
  if (spec->late != LATE_REPAIR) {
    *copy = *spec;
    copy->late = LATE_REPAIR;
    *use = copy;
  }
  return 0;
}

int refresh_replays(const run_opts *o, const dwl_ts *lmd)
{
  return o->backfill_from && lmd->us >= o->bf_from.us && (!o->backfill_to || lmd->us <= o->bf_to.us);
}

int refresh_begin(const dwl_spec *spec, const run_opts *o, target *t, writer *w, long long *rows, run_summary *sum,
                  dwl_error *err)
{
  *rows = -1;
  /* A range of points in time selects nothing of a sequence. */
  if (o->backfill_from && t->vseq)
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                    "job '%s': --backfill-from replays a time range, and load.lmd '%s' is an integer sequence "
                    "(dwload-job(5), SEQUENCES)",
                    spec->job, spec->lmd);
  /* replace empties its table anyway, after its own guard */
  if (!o->full_refresh || spec->mode == MODE_REPLACE || !t->exists)
    return 0;
  long long n = target_rows(t, err);
  if (n < 0 || writer_delete_all(w, err) != 0)
    return -1;
  *rows = n;
  sum->deleted += n;
  log_msg(LOG_INFO, "--full-refresh: deleted the %lld rows of %s (in the run's transaction)", n, spec->target_table);
  return 0;
}

int refresh_guard(const dwl_spec *spec, const run_opts *o, long long rows, const run_summary *sum, dwl_error *err)
{
  if (rows <= 0 || sum->read - sum->rejected > 0 || spec->allow_empty || o->allow_empty)
    return 0;
  return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_GUARD,
                  "job %s: the source delivered no rows to load, and --full-refresh would empty %s (%lld row%s); "
                  "an empty extract is taken for a failed source.  If the source really is empty now, add "
                  "--allow-empty",
                  spec->job, spec->target_table, rows, rows == 1 ? "" : "s");
}
