/* The one parser of SQL type names (see coltype.c), for the host and the
 * plugins.  In a plugin it is not static because the plugin's files share
 * it; plugins export only dwl_plugin_entry. */
#ifndef DWL_COLTYPE_H
#define DWL_COLTYPE_H

#include <stddef.h>

#include "dwload/plugin.h"

/* Parses "numeric(12, 2)", "VARCHAR(40)", "double precision", ... into
 * col's type, precision and scale.  0, or -1 with *why set. */
int coltype_parse(const char *s, dwl_column *col, const char **why);

#endif
