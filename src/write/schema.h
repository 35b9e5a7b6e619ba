/* Schema evolution (the spec's schema: section): what a run does when the
 * source's columns and the target table's differ. */
#ifndef DWL_SCHEMA_H
#define DWL_SCHEMA_H

#include <stdio.h>

#include "err.h"
#include "scd.h"
#include "target.h"

/* Judges how the existing table's columns differ from the source's
 * (target_prepare_table found out), naming `origin` (the source, as
 * messages name it).  A source column the table has not goes by
 * schema.new_columns: fail refuses the run, exit 4 and cause
 * DWL_CAUSE_SCHEMA; add (the default) lets schema_new_columns add it.  A table column the source does not
 * deliver goes by schema.missing_columns: fail (the default) refuses the
 * run in the same way; null lets new rows and versions hold NULL there,
 * and says so in the log; keep logs what the column gets
 * (schema_keep.c fills it in). */
int schema_check(const target *t, const char *origin, dwl_error *err);

/* schema.new_columns: add, after schema_check: the engine `e` (NULL for
 * modes without one) fills the new columns in place for this run
 * (scd_fill_column), and unless `plan` the table gets them
 * (target_add_columns). */
int schema_new_columns(target *t, scd_engine *e, int plan, dwl_error *err);

/* What a run does before its changes: schema_check, schema_new_columns,
 * with schema.widen: widen the widenings the source's declared types call
 * for (target_widen: in plan mode logged and printed to sqlout, NULL
 * none), and (unless `plan`) schema_keep_begin. */
int schema_prepare(target *t, scd_engine *e, const char *origin, int plan, FILE *sqlout, dwl_error *err);

/* Every difference check --connect reports, each one message to fn (which
 * returns non-zero to stop): the layout's columns the table lacks (a
 * source column only when schema.new_columns: add cannot take it), the
 * table's the source does not deliver (one each; none with
 * schema.missing_columns: null or keep), and the source's columns whose table
 * column is declared a type that cannot hold their values (an integer
 * column for a date).  Returns how many, -1 out of memory. */
typedef int (*schema_diff_fn)(void *ud, const char *msg);
int schema_diffs(const target *t, const char *origin, schema_diff_fn fn, void *ud);

#endif
