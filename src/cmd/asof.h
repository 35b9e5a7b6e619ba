/* dwload asof: the dimension as it stood at a past time, answered from its
 * validity columns (seed 004's time travel), written as CSV. */
#ifndef DWL_ASOF_H
#define DWL_ASOF_H

#include <stdio.h>

#include "err.h"
#include "spec.h"

int asof_job(const dwl_spec *spec, const char *at, FILE *out, dwl_error *err);

/* Writes one CSV field: NULL as an empty field, text quoted only when it
 * must be (delimiter, quote, CR, LF, leading/trailing space, or empty). */
void asof_csv_field(FILE *out, const char *data, size_t len, int is_null);

#endif
