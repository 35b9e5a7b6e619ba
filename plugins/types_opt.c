/* The plugins' `types` option (csv and http_json): a mapping of column
 * names to SQL type names, each parsed by the shared parser of
 * src/rows/coltype.c into the column's type, precision and scale.  The
 * messages name the option as the job writes it. */
#include "types_opt.h"

#include <stdio.h>
#include <string.h>

#include "coltype.h"

int types_opt_apply(const dwl_host *host, dwl_ctx *ctx, const char *name, dwl_column *cols, size_t ncols, char *err,
                    size_t errlen)
{
  size_t n = host->opt_map_len(ctx, name);
  for (size_t i = 0; i < n; i++) {
    const char *key = host->opt_map_key(ctx, name, i);
    const char *val = host->opt_map_value(ctx, name, i);
    if (!key || !val)
      continue;
    dwl_column *col = NULL;
    for (size_t c = 0; c < ncols && !col; c++)
      if (strcmp(cols[c].name, key) == 0)
        col = &cols[c];
    if (!col) {
      snprintf(err, errlen, "option %s names \"%s\", which is not a column", name, key);
      return -1;
    }
    const char *why;
    if (coltype_parse(val, col, &why) != 0) {
      snprintf(err, errlen, "option %s: \"%s\" for column \"%s\": %s%s", name, val, key, why,
               strcmp(why, "unknown type") == 0 ? " (known: text, varchar(n), integer, bigint, "
               "numeric(p,s), real, boolean, date, timestamp)" : "");
      return -1;
    }
  }
  return 0;
}
