/* Column types of the plugins' `types` option (see coltype.c).  Not
 * static because two files of a plugin share it; plugins export only
 * dwl_plugin_entry. */
#ifndef DWL_COLTYPE_H
#define DWL_COLTYPE_H

#include <stddef.h>

#include "dwload/plugin.h"

/* Parses "numeric(12, 2)", "VARCHAR(40)", "double precision", ... into
 * col's type, precision and scale.  0, or -1 with *why set. */
int coltype_parse(const char *s, dwl_column *col, const char **why);

/* Applies the plugin's `types` option (column -> type) to cols, matched by
 * name.  0, or -1 with the reason in err. */
int coltype_apply(const dwl_host *host, dwl_ctx *ctx, dwl_column *cols, size_t ncols, char *err, size_t errlen);

#endif
