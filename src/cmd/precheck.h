/* Checks before work: what run and check can tell about a job without
 * the warehouse, done before they connect: the plugin loads and takes
 * the job's options, the columns and types the source's options declare
 * agree with the spec (precheck_types.c), and the reject file's folder
 * can be written. */
#ifndef DWL_PRECHECK_H
#define DWL_PRECHECK_H

#include <stddef.h>

#include "err.h"
#include "spec.h"

/* The plugin and its options: 0, writing "NAME VERSION (FILE)" into
 * about; -1 with err set (exit 2 for a misspelt, missing or mistyped
 * option, as source_open says). */
int precheck_plugin(const dwl_spec *spec, char *about, size_t n, dwl_error *err);
/* load.reject_file's folder exists and this user may create files in it:
 * 0 (also without load.reject_file), writing the path into about; -1 with
 * err set, exit 1, FILE:LINE:COL of the key. */
int precheck_rejects(const dwl_spec *spec, char *about, size_t n, dwl_error *err);
/* The source's declared columns (its `columns` list) and types (its
 * `types` mapping) against the spec: every type name parses, the lmd is
 * declared a date, a timestamp or text, every column the spec names is
 * declared, none has a bookkeeping column's name.  0, writing a summary
 * into about; -1 with err set, exit 2, FILE:LINE:COL of the entry. */
int precheck_types(const dwl_spec *spec, char *about, size_t n, dwl_error *err);
/* All three for run (writes: the reject folder only when the run writes the
 * reject file, not for plan): the first failure. */
int precheck_job(const dwl_spec *spec, int writes, dwl_error *err);

#endif
