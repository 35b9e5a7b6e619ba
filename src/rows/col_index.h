/* The one rule by which a name finds a column: the exact name first, then
 * the name without regard to case.  Header-only, since both the engine
 * (scd_col_index) and the plugin host's column mapping (columns.c, which
 * tests/fuzz/fuzz_csv.c links without the engine) look columns up. */
#ifndef DWL_COL_INDEX_H
#define DWL_COL_INDEX_H

#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "dwload/plugin.h"

static inline ssize_t col_index(const dwl_column *cols, size_t ncols, const char *name)
{
  for (size_t i = 0; i < ncols; i++)
    if (strcmp(cols[i].name, name) == 0)
      return (ssize_t)i;
  for (size_t i = 0; i < ncols; i++)
    if (strcasecmp(cols[i].name, name) == 0)
      return (ssize_t)i;
  return -1;
}

#endif
