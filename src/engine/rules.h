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
 * delta), or NULL when it reads only what the delta needs. */
const char *engine_reads_all_current(const dwl_spec *s);

/* For a job that reads every current version: why its key map cannot be
 * partitioned with the delta past the memory budget, or NULL when it can
 * (deletes: absent without truncate_values, load.partition or
 * ignore_null_updates: cmd/run_absent.c). */
const char *engine_key_parts_refusal(const dwl_spec *s);

#endif
