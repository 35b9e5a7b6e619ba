/* Page parsing of the http_json plugin: one response body in, rows of text
 * values, the next-page link or cursor and the unknown members out.  No
 * network and no host: the unit tests and the fuzzer call jp_parse on a
 * buffer.  (Not static because the plugin's files share it; the plugin
 * exports only dwl_plugin_entry.) */
#ifndef DWL_JSON_PAGE_H
#define DWL_JSON_PAGE_H

#include <stddef.h>

#include "buf.h"
#include "dwload/plugin.h"

/* The columns: fixed by the `fields` option, or inferred from the first
 * page with records (the union of their top-level members, in order of
 * first appearance). */
typedef struct jp_cols {
  char **names;
  char **paths;     /* dotted path inside a record; NULL: the member `names[i]` */
  size_t n;
  int fixed;        /* 1: from `fields`; 0: inferred (or not yet, while n == 0) */
} jp_cols;

typedef struct jp_page {
  size_t nrecords;
  size_t ncols;
  dwl_value *values;   /* nrecords * ncols, row-major; data points into `text` */
  size_t values_cap;
  dwl_buf text;        /* every value's bytes, each followed by a NUL */
  size_t *offs;        /* per value: offset into text while text may move */
  size_t offs_cap;
  char *next;          /* the next URL or cursor; NULL: missing, null or "" */
  char **unknown;      /* inferred columns only: member names that are not columns */
  size_t nunknown;
} jp_page;

void jp_cols_init(jp_cols *c);
void jp_cols_free(jp_cols *c);
/* Adds a fixed column (from `fields`).  0, or -1 out of memory. */
int jp_cols_add(jp_cols *c, const char *name, const char *path);

void jp_page_init(jp_page *p);
void jp_page_free(jp_page *p);

/* Parses one page body.  `records` is the dotted path of the records array
 * ("" for a top-level array); `next` the dotted path of the next URL or
 * cursor (NULL when pagination does not read the body).  When `cols` is
 * not fixed and still empty, the columns are inferred from this page (a
 * page without records leaves them empty).  Returns 0, or -1 with a
 * message in err (no URL in it: the caller adds URL and page). */
int jp_parse(jp_cols *cols, const char *records, const char *next, const char *body, size_t len, jp_page *out,
             char *err, size_t errlen);

#endif
