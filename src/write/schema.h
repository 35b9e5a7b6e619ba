/* Schema evolution (the spec's schema: section): what a run does when the
 * source's columns and the target table's differ. */
#ifndef DWL_SCHEMA_H
#define DWL_SCHEMA_H

#include "err.h"
#include "target.h"

/* Judges the existing table's columns the source does not deliver
 * (target_prepare_table found them) by schema.missing_columns: fail (the
 * default) refuses the run, exit 1 and cause DWL_CAUSE_SCHEMA, naming the
 * column and `origin` (the source, as messages name it); null lets new
 * rows and versions hold NULL there, and says so in the log. */
int schema_check_missing(const target *t, const char *origin, dwl_error *err);

#endif
