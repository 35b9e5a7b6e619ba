/* schema.missing_columns: keep in mode scd2 (schema_keep.c). */
#ifndef DWL_SCHEMA_KEEP_H
#define DWL_SCHEMA_KEEP_H

#include "err.h"
#include "target.h"

/* Before the engine writes: remembers each key's current version's values
 * of the columns the source no longer delivers (a temporary table of the
 * run's session).  Nothing unless keep, scd2 and such columns. */
int schema_keep_begin(target *t, dwl_error *err);

/* After the engine's writes, before the commit: the versions the run
 * opened after a key's current one take those values over. */
int schema_keep_end(target *t, dwl_error *err);

#endif
