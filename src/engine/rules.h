/* The engine's rules, defined once for both engines (memory and
 * pushdown). */
#ifndef DWL_RULES_H
#define DWL_RULES_H

#include "spec.h"

/* Why load.engine: pushdown cannot run job `s` (the text follows
 * "pushdown " in the spec error), or NULL when pushdown can. */
const char *engine_pushdown_refusal(const dwl_spec *s);

/* Why the memory engine reads every current version of the dimension
 * before the source (its key map then holds them all, whatever the
 * delta, unless a run partitions it past the memory budget:
 * cmd/run_absent.c), or NULL when it reads only what the delta needs. */
const char *engine_reads_all_current(const dwl_spec *s);

#endif
