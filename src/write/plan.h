/* Plan mode's printing (dwload run --plan --sql): a statement's bound
 * parameters as SQL literals, on a comment line after the statement. */
#ifndef DWL_PLAN_H
#define DWL_PLAN_H

#include <stdio.h>

#include "dwload/plugin.h"

/* "  -- ('a', NULL)\n": n values, quoted as SQL strings, NULL bare. */
void print_params(FILE *f, const dwl_value *p, size_t n);

#endif
