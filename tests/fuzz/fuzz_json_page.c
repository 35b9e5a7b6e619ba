/* libFuzzer target for the http_json page parser (plugins/http_json/
 * json_page.c): any bytes as a response body, parsed the ways a job can
 * ask for, twice in a row as consecutive pages so the inferred columns of
 * the first are applied to the second, and the Link header parser on the
 * same bytes.  Build: clang -fsanitize=fuzzer,address with
 * -Iinclude -Isrc/util -Iplugins/http_json, json_page.c, http_url.c,
 * src/util/buf.c, -ljansson -lcurl (scripts/fuzz reads the lines below).
 * fuzz-sources: plugins/http_json/json_page.c plugins/http_json/http_url.c src/util/buf.c
 * fuzz-packages: jansson libcurl
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/http_json/http_url.h"
#include "../../plugins/http_json/json_page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void two_pages(jp_cols *cols, const char *records, const char *next, const char *body, size_t size)
{
  jp_page page;
  char err[512];
  jp_page_init(&page);
  for (int i = 0; i < 2; i++) {
    if (jp_parse(cols, records, next, body, size, &page, err, sizeof err) == 0) {
      /* every value must be readable, with its stated length */
      for (size_t v = 0; v < page.nrecords * page.ncols; v++)
        if (!page.values[v].is_null && strlen(page.values[v].data) > page.values[v].len)
          abort();
    } else if (!err[0]) {
      abort();  /* a failure always says why */
    }
  }
  jp_page_free(&page);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *body = (const char *)data;
  jp_cols cols;

  jp_cols_init(&cols);
  two_pages(&cols, "", NULL, body, size);
  jp_cols_free(&cols);

  jp_cols_init(&cols);
  two_pages(&cols, "data", "next", body, size);
  jp_cols_free(&cols);

  jp_cols_init(&cols);
  if (jp_cols_add(&cols, "id", "id") == 0 && jp_cols_add(&cols, "city", "addr.city") == 0 &&
      jp_cols_add(&cols, "tag", "tags.0") == 0)
    two_pages(&cols, "result.rows", "meta.next_cursor", body, size);
  jp_cols_free(&cols);

  char *s = malloc(size + 1);
  if (s) {
    memcpy(s, data, size);
    s[size] = '\0';
    char *next = NULL;
    if (hu_link_next(s, &next) == 0)
      free(next);
    free(s);
  }
  return 0;
}
