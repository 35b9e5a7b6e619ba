/* columns: of the job spec applied to a source's rows, whatever its
 * plugin: the columns kept (include or exclude), their names in the table
 * (rename), and the excluded columns the engine still reads (the lmd, the
 * deletes column), which follow the kept ones and never reach the table. */
#ifndef DWL_COLUMNS_H
#define DWL_COLUMNS_H

#include <stddef.h>

#include "dwload/plugin.h"
#include "err.h"
#include "spec.h"

typedef struct col_map col_map;

/* Checks columns: against the plugin's nraw columns (an entry naming a
 * column the source does not have, a new name that another column has:
 * exit 2, FILE:LINE:COL of the entry) and builds the map.  With
 * table_cols (schema.new_columns: ignore, an existing table's ntable
 * names), a column kept whose table name is not among them is left out
 * too, as if excluded, and logged once; not a column the job's load.key,
 * type1 or type2 names (schema.c refuses those).  *out is NULL when
 * nothing is left out or renamed (rows pass as they are). */
int columns_open(const dwl_spec *spec, const dwl_column *raw, size_t nraw, char *const *table_cols, size_t ntable,
                 col_map **out, dwl_error *err);
void columns_free(col_map *m);
/* The columns after the map: the kept ones (the table's, `*nstored`), then
 * the hidden ones; borrowed from the map. */
const dwl_column *columns_cols(const col_map *m, size_t *ncols, size_t *nstored);
/* nrows rows of the plugin's layout in the map's; the result is the map's
 * until the next call.  NULL when out of memory. */
const dwl_value *columns_rows(col_map *m, const dwl_value *in, size_t nrows);

/* The source name of column `name` as the job's load keys write it (the
 * table's name of a renamed column): what a plugin is told the lmd is. */
const char *columns_source_name(const dwl_spec *spec, const char *name);

#endif
