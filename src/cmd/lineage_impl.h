/* Shared inside the lineage files: dataset names (lineage_names.c) and
 * the transports (lineage_send.c); lineage.c builds the events. */
#ifndef DWL_LINEAGE_IMPL_H
#define DWL_LINEAGE_IMPL_H

#include <limits.h>
#include <stddef.h>

#include "spec.h"

#pragma GCC visibility push(hidden)

typedef struct lineage_dataset {
  char ns[300];
  char name[PATH_MAX + 400];
} lineage_dataset;

/* The source's dataset and the target's, from the spec. */
void lineage_source(const dwl_spec *spec, lineage_dataset *d);
void lineage_target(const dwl_spec *spec, lineage_dataset *d);
/* A URL without what may be secret: origin "scheme://host[:port]" (no
 * user:password@) and path (no query or fragment; "/" when none; path may
 * be NULL). */
void lineage_url_parts(const char *url, char *origin, size_t on, char *path, size_t pn);

/* Appends line and a newline to file in one write (O_APPEND: lines of
 * runs that emit at once do not interleave).  Warns on failure. */
void lineage_append(const char *file, const char *line);
/* POSTs line as application/json to url; warns on a failure or an answer
 * other than 2xx.  Bounded: 5 s to connect, 10 s in all. */
void lineage_post(const char *url, const char *line);
void lineage_http_init(void);
void lineage_http_done(void);

#pragma GCC visibility pop

#endif
