/* run --full-refresh and --backfill-from/--backfill-to (refresh.c): what
 * each means per mode, checked before the run, and the pieces of the run
 * that differ. */
#ifndef DWL_REFRESH_H
#define DWL_REFRESH_H

#include "err.h"
#include "run.h"
#include "spec.h"
#include "summary.h"
#include "target.h"
#include "ts.h"
#include "writer.h"

/* Checks the options against the job (exit 2 with why) and parses the
 * backfill range and --as-of (snapshot_check) into o.  A backfill repairs history as load.late: repair
 * does, whatever the job's load.late: *use is then copy, a copy of spec
 * that says so (it borrows spec's memory); else spec. */
int refresh_check(const dwl_spec *spec, run_opts *o, dwl_spec *copy, const dwl_spec **use, dwl_error *err);

/* --backfill-from: is a row of this lmd in the range replayed, whatever the
 * checkpoint? */
int refresh_replays(const run_opts *o, const dwl_ts *lmd);

/* --full-refresh of an append or upsert job whose table exists: empties it
 * first, in the run's transaction, counting its rows as deleted in sum;
 * *rows: how many it had (-1 when nothing was emptied), for refresh_guard. */
int refresh_begin(const dwl_spec *spec, const run_opts *o, target *t, writer *w, long long *rows, run_summary *sum,
                  dwl_error *err);

/* After the source is read: a full refresh that emptied rows and loads
 * none is taken for a failed source, as mode replace's guard does, unless
 * --allow-empty or load.allow_empty. */
int refresh_guard(const dwl_spec *spec, const run_opts *o, long long rows, const run_summary *sum, dwl_error *err);

#endif
