/* The http_json plugin's state, shared by its files: http_json.c
 * (options, paging, open, batches) and http_fetch.c (one page's GET:
 * redirects, retries, the response in hand).  Not static because the
 * files share it; the plugin exports only dwl_plugin_entry. */
#ifndef DWL_HTTP_SRC_H
#define DWL_HTTP_SRC_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "dwload/plugin.h"
#include "json_page.h"

/* The longest wait between two tries of a request. */
#define MAX_BACKOFF_MS 60000

/* The one piece of global state: the host API is the same for every
 * instance of the plugin (set by dwl_plugin_entry in http_json.c). */
extern const dwl_host *host;

enum paging { PAGE_NONE, PAGE_NEXT, PAGE_LINK, PAGE_NUMBER, PAGE_CURSOR };

typedef struct http_src {
  dwl_ctx *ctx;
  int failed;
  int curl_ready;
  CURL *curl;
  struct curl_slist *headers;
  char errbuf[CURL_ERROR_SIZE];

  /* options */
  char *base;              /* `url` with since_param and page_size_param set */
  char *redacted_base;
  const char *records;
  const char *body_path;   /* `next` or `cursor`: what jp_parse reads */
  const char *page_param;
  const char *cursor_param;
  int paging;
  int custom_headers;      /* the job gives headers: redirects stay on the host */
  char **secrets;          /* header values and URL credentials, scrubbed from excerpts */
  size_t nsecrets;
  int64_t page_no;
  long max_retries;
  long backoff_ms;
  size_t max_page;
  unsigned seed;

  /* the response in hand */
  dwl_buf body;
  dwl_buf link;            /* Link header values of the final response */
  char retry_after[64];
  int over_cap;

  /* paging */
  char *url;               /* the current page's URL; NULL before the first */
  char *next_url;          /* NULL: no more pages */
  char *cursor;            /* the last cursor sent, to spot a loop */
  uint64_t page;           /* number of the page in hand, from 1 */
  uint64_t prev_hash;      /* of the values of the last page with records, to spot one that repeats */
  size_t prev_len;         /* its number of records */
  jp_cols cols;
  jp_page pg;
  size_t pos;              /* next record of pg to deliver */
  uint64_t rowno;          /* records delivered so far */
  char **warned;           /* unknown members already warned about */
  size_t nwarned;

  dwl_column *dcols;
  size_t cap;
  uint64_t *origin;
} http_src;

/* Only the first error is the root cause; later ones are consequences. */
#define src_error(st, ...) dwl_plugin_error(host, (st)->ctx, &(st)->failed, __VA_ARGS__)

/* http_fetch.c */
/* An error about the page being fetched: names its number and its URL,
 * redacted. */
int page_error(http_src *st, const char *url, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* libcurl's write callback: the body into st->body, up to max_page_bytes. */
size_t on_body(char *data, size_t size, size_t n, void *arg);
/* libcurl's header callback: the final response's Link and Retry-After. */
size_t on_header(char *line, size_t size, size_t n, void *arg);
/* GETs `url` into st->body, retrying what may pass.  DWL_OK only for a 2xx
 * response that arrived whole and within the cap. */
int fetch(http_src *st, const char *url);

#endif
