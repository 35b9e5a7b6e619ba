/* Snapshot loads (dwload-job(5), SNAPSHOT LOADS): an scd2 job without
 * load.lmd, whose source delivers the whole table each run with no change
 * time (dbt's check strategy, AUTO CDC FROM SNAPSHOT).  The load dates
 * it: a changed key's new version starts, and a key missing from the
 * snapshot ends, at the load time, which is run --as-of TIMESTAMP (a
 * backfill of old snapshots, each dated right) or the run's clock.  Every
 * row is compared with its key's current version by fingerprint; no
 * checkpoint skips any.  The state row keeps the load time, and a load
 * dated before the last one, or before a version of the table starts, is
 * refused: it would end versions before they start.  run.c calls these. */
#include "snapshot.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

int snapshot_job(const dwl_spec *spec)
{
  return spec->mode == MODE_SCD2 && !spec->lmd;
}

int snapshot_check(const dwl_spec *spec, run_opts *o, dwl_ts now, dwl_error *err)
{
  if (!o->as_of)
    return 0;
  if (spec->mode != MODE_SCD2)
    return err_set(err, DWL_EXIT_USAGE,
                   "job '%s' is in mode %s: --as-of dates the versions of a snapshot load (mode scd2 without "
                   "load.lmd), and this mode keeps none",
                   spec->job, run_mode_name(spec->mode));
  if (spec->lmd)
    return err_set(err, DWL_EXIT_USAGE,
                   "job '%s' has load.lmd: its versions start at each row's lmd, so --as-of does not apply (it "
                   "dates snapshot loads, mode scd2 without load.lmd); to replay old rows use --backfill-from",
                   spec->job);
  if (ts_parse(o->as_of, strlen(o->as_of), &o->as_of_ts) != 0)
    return err_set(err, DWL_EXIT_USAGE, "--as-of '%s' is not a timestamp (ISO 8601: YYYY-MM-DD[ HH:MM:SS], UTC)",
                   o->as_of);
  o->as_of_ts.date_only = 0;
  if (o->as_of_ts.us > now.us) {
    char t[32];
    ts_format(&now, t);
    return err_set(err, DWL_EXIT_USAGE,
                   "--as-of '%s' is later than the run's clock (%s UTC): a snapshot cannot be dated in the future",
                   o->as_of, t);
  }
  return 0;
}

/* The refusal of a load dated before `last`, what it is (`what`). */
static int out_of_order(const run_opts *o, const dwl_ts *load, const dwl_ts *last, const char *what,
                        dwl_error *err)
{
  char at[32], prev[32];
  ts_format(load, at);
  ts_format(last, prev);
  return err_set(err, DWL_EXIT_USAGE,
                 "the load time %s (%s) is before %s %s: a snapshot loaded out of order would end versions before "
                 "they start; load snapshots in time order (nothing was written)",
                 at, o->as_of ? "--as-of" : "the run's clock", what, prev);
}

int snapshot_load_time(const dwl_spec *spec, const run_opts *o, const job_state *st, dwl_ts started, dwl_ts *out,
                       dwl_error *err)
{
  *out = o->as_of ? o->as_of_ts : started;
  out->date_only = 0;
  dwl_ts last;
  if (st->found && st->checkpoint[0] && ts_parse(st->checkpoint, strlen(st->checkpoint), &last) == 0 &&
      out->us < last.us)
    return out_of_order(o, out, &last, "the job's last load", err);
  char at[32];
  ts_format(out, at);
  log_msg(LOG_INFO, "a snapshot load of %s (no load.lmd): versions start and deletions end at %s%s", spec->job, at,
          o->as_of ? " (--as-of)" : " (the run's clock)");
  return 0;
}

int snapshot_check_table(target *t, const run_opts *o, const dwl_ts *load, dwl_error *err)
{
  dwl_ts latest;
  int found = 0;
  if (target_latest_start(t, &latest, &found, err) != 0)
    return -1;
  if (found && load->us < latest.us)
    return out_of_order(o, load, &latest, "the latest valid_from in the table,", err);
  return 0;
}
