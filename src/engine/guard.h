/* The guards of deletions by absence: a full extract that delivered no
 * rows, or that would delete more of the current keys than
 * load.max_deletes allows, fails the run instead of deleting; rejected
 * rows whose key cannot be read hold every deletion by absence back, since
 * any absent key may be one of them.  mode replace, which empties the
 * table before loading the source, has the empty-extract guard too. */
#ifndef DWL_GUARD_H
#define DWL_GUARD_H

#include "err.h"
#include "run.h"
#include "spec.h"
#include "summary.h"

/* Judges `absent` keys missing from the source out of `current` current
 * keys of the table, for a source that delivered `read` rows (rejected
 * ones included), `unreadable` of them rejected with a key that could not
 * be read (the first at `first`, "feed.csv:3").  Returns 0 when the run
 * deletes them, 1 when it deletes none of them (logged), -1 when it must
 * fail (err set, exit 1).  Records the count and the guard in sum. */
int guard_absence(const dwl_spec *spec, const run_opts *o, long long current, long long absent, long long read,
                  long long unreadable, const char *first, run_summary *sum, dwl_error *err);

/* mode replace with no row to load: 0 when it may empty the table's `rows`
 * rows, else -1 with err set (exit 1). */
int guard_replace(const dwl_spec *spec, const run_opts *o, long long rows, run_summary *sum, dwl_error *err);

#endif
