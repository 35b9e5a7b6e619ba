/* The engine's rules, defined once for both engines (memory and
 * pushdown). */
#ifndef DWL_RULES_H
#define DWL_RULES_H

#include "spec.h"

/* Why load.engine: pushdown cannot run job `s` (the text follows
 * "pushdown " in the spec error), or NULL when pushdown can. */
const char *engine_pushdown_refusal(const dwl_spec *s);

#endif
