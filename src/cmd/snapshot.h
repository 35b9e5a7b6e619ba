/* Snapshot loads (snapshot.c): an scd2 job without load.lmd, dated by the
 * load (run --as-of TIMESTAMP, or the run's clock). */
#ifndef DWL_SNAPSHOT_H
#define DWL_SNAPSHOT_H

#include "err.h"
#include "run.h"
#include "spec.h"
#include "state.h"
#include "target.h"
#include "ts.h"

/* Is the job a snapshot load: mode scd2 without load.lmd? */
int snapshot_job(const dwl_spec *spec);

/* run --as-of against the job (exit 2 with why: not a snapshot load, not a
 * timestamp, later than the run's clock `now`), parsed into o->as_of_ts. */
int snapshot_check(const dwl_spec *spec, run_opts *o, dwl_ts now, dwl_error *err);

/* The load time of a snapshot run: --as-of, else `started` (the run's
 * clock, whole seconds); refused (exit 2) when it is before the load time
 * the job's state row keeps from its last run. */
int snapshot_load_time(const dwl_spec *spec, const run_opts *o, const job_state *st, dwl_ts started, dwl_ts *out,
                       dwl_error *err);

/* Once the table is known: refused (exit 2) when a version of it starts
 * after the load time, which would end versions before they start. */
int snapshot_check_table(target *t, const run_opts *o, const dwl_ts *load, dwl_error *err);

#endif
