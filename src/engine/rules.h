/* The engine's rules, defined once for both engines (memory and
 * pushdown). */
#ifndef DWL_RULES_H
#define DWL_RULES_H

#include "spec.h"

/* Why load.engine: pushdown cannot run job `s` (the text follows
 * "pushdown " in the spec error), or NULL when pushdown can. */
const char *engine_pushdown_refusal(const dwl_spec *s);

/* Why load.engine: pushdown cannot run a backfill (run --backfill-from)
 * of job `s` (the text follows "pushdown "), or NULL when it can. */
const char *engine_pushdown_backfill_refusal(const dwl_spec *s);

/* Why pushdown cannot run this run of job `s` whatever its load.engine
 * (engine: auto asks): its spec's refusal, or a backfill's; NULL when it
 * can. */
const char *engine_pushdown_run_refusal(const dwl_spec *s, int backfill);

#endif
