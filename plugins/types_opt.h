/* The `types` option of the csv and http_json plugins (see types_opt.c).
 * Not static because two files of a plugin share it; plugins export only
 * dwl_plugin_entry. */
#ifndef DWL_TYPES_OPT_H
#define DWL_TYPES_OPT_H

#include <stddef.h>

#include "dwload/plugin.h"

/* Applies the mapping option `name` (column -> type, read through the
 * plugin's option table) to cols, matched by name, with coltype_parse.
 * 0, or -1 with the reason in err. */
int types_opt_apply(const dwl_host *host, dwl_ctx *ctx, const char *name, dwl_column *cols, size_t ncols, char *err,
                    size_t errlen);

#endif
