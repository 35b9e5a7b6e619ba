/* OpenLineage run events of `dwload run` (dwload(1), LINEAGE): START when
 * the run begins, COMPLETE after its commit, FAIL (ABORT after a signal)
 * after a failure, appended to a file as JSON lines and/or POSTed to an
 * OpenLineage HTTP endpoint.  Emitting is best effort: a failure is a
 * warning and never changes the run's outcome or exit status. */
#ifndef DWL_LINEAGE_H
#define DWL_LINEAGE_H

#include "err.h"
#include "spec.h"
#include "summary.h"

typedef struct lineage lineage;

/* The sinks: --lineage-file FILE, --lineage-url URL, else $OPENLINEAGE_URL
 * (either may be NULL).  NULL when there is none (or no memory: warned). */
lineage *lineage_open(const dwl_spec *spec, const char *file, const char *url);
/* run_opts.on_start: the START event (sum holds the run's id). */
void lineage_start(void *ud, const run_summary *sum);
/* The run's end: COMPLETE when rc is 0, else ABORT when interrupted,
 * FAIL otherwise, with the counts and err's message. */
void lineage_end(lineage *l, const run_summary *sum, int rc, const dwl_error *err);
void lineage_free(lineage *l);

#endif
