/* dwload plugins: every plugin on the search path, with its options. */
#ifndef DWL_PLUGIN_LIST_H
#define DWL_PLUGIN_LIST_H

#include <stdio.h>

/* Lists the plugins found on the search path (plugin_host.h) on `out`, as
 * text or as one JSON document.  Returns 0, or 1 when a file named like a
 * plugin did not load (it is listed with the reason). */
int plugin_list(FILE *out, int json);

#endif
