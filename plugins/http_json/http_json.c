/* HTTP JSON source connector ("http_json"): fetches the pages of a JSON
 * API with libcurl, one page in memory at a time (capped while it is
 * received), follows the pagination the job names (next link in the body,
 * Link header, page numbers or cursors), retries 429, 5xx and connection
 * errors with exponential backoff and jitter honouring Retry-After, and
 * hands each page's records to the host in batches.  Owns the option
 * table, the curl handle and its headers, and the paging; one page's GET
 * is http_fetch.c, page parsing json_page.c, URL handling http_url.c.
 * Header values (tokens) never reach a message, and every URL in a
 * message is redacted. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "http_src.h"
#include "http_url.h"
#include "types_opt.h"

#define DEFAULT_BATCH_ROWS 1024

const dwl_host *host;

/* The options, numbered: code reads them as OPT(HTTP_X), so a name is
 * written once, in the table. */
enum {
  HTTP_URL, HTTP_RECORDS, HTTP_FIELDS, HTTP_NEXT, HTTP_LINK_HEADER, HTTP_PAGE_PARAM, HTTP_PAGE_START,
  HTTP_PAGE_SIZE_PARAM, HTTP_PAGE_SIZE, HTTP_CURSOR_PARAM, HTTP_CURSOR, HTTP_TYPES, HTTP_SINCE_PARAM,
  HTTP_SINCE_FORMAT, HTTP_HEADERS, HTTP_TIMEOUT, HTTP_MAX_RETRIES, HTTP_BACKOFF_MS, HTTP_INSECURE,
  HTTP_CA_FILE, HTTP_MAX_PAGE_BYTES, HTTP_NOPTS
};
static const dwl_option http_options[] = {
  [HTTP_URL] = {"url", DWL_OPT_STRING, 1, NULL,
                "URL of the first page (http or https); ${VAR} keeps tokens out of the job"},
  [HTTP_RECORDS] = {"records", DWL_OPT_STRING, 0, "",
                    "dotted path of the records array in each page; \"\" for a top-level array"},
  [HTTP_FIELDS] = {"fields", DWL_OPT_MAP, 0, NULL,
                   "column -> dotted path inside a record; default: the top-level members of the first page's "
                   "records"},
  [HTTP_NEXT] = {"next", DWL_OPT_STRING, 0, NULL,
                 "pagination: dotted path of the next page's URL in the body (ends when missing "
                 "or null)"},
  [HTTP_LINK_HEADER] = {"link_header", DWL_OPT_BOOL, 0, "false",
                        "pagination: follow the Link header's rel=\"next\" (RFC 8288)"},
  [HTTP_PAGE_PARAM] = {"page_param", DWL_OPT_STRING, 0, NULL,
                       "pagination: query parameter of the page number (ends at an empty page)"},
  [HTTP_PAGE_START] = {"page_start", DWL_OPT_INT, 0, "1", "number of the first page, with page_param"},
  [HTTP_PAGE_SIZE_PARAM] = {"page_size_param", DWL_OPT_STRING, 0, NULL,
                            "query parameter of the page size, with page_param or cursor_param"},
  [HTTP_PAGE_SIZE] = {"page_size", DWL_OPT_INT, 0, "100", "records per page asked for in page_size_param"},
  [HTTP_CURSOR_PARAM] = {"cursor_param", DWL_OPT_STRING, 0, NULL,
                         "pagination: query parameter that receives the cursor (with cursor)"},
  [HTTP_CURSOR] = {"cursor", DWL_OPT_STRING, 0, NULL,
                   "dotted path of the next cursor in the body (ends when missing or null)"},
  [HTTP_TYPES] = {"types", DWL_OPT_MAP, 0, NULL,
                  "column -> type (integer, numeric(p,s), text, varchar(n), real, boolean, date, timestamp); "
                  "default text"},
  [HTTP_SINCE_PARAM] = {"since_param", DWL_OPT_STRING, 0, NULL,
                        "query parameter that receives the checkpoint (not sent on a first run)"},
  [HTTP_SINCE_FORMAT] = {"since_format", DWL_OPT_STRING, 0, "text",
                         "the checkpoint in since_param: text, iso8601, date or unix"},
  [HTTP_HEADERS] = {"headers", DWL_OPT_MAP, 0, NULL,
                    "request header -> value; values (tokens: use ${VAR}) never appear in messages"},
  [HTTP_TIMEOUT] = {"timeout", DWL_OPT_INT, 0, "60", "seconds one request may take"},
  [HTTP_MAX_RETRIES] = {"max_retries", DWL_OPT_INT, 0, "5",
                        "retries of a request after 429, 5xx or a connection error"},
  [HTTP_BACKOFF_MS] = {"backoff_ms", DWL_OPT_INT, 0, "1000",
                       "wait before the first retry in ms, doubling, with jitter; Retry-After wins"},
  [HTTP_INSECURE] = {"insecure", DWL_OPT_BOOL, 0, "false",
                     "skip TLS certificate and host name verification (logs a warning)"},
  [HTTP_CA_FILE] = {"ca_file", DWL_OPT_PATH, 0, NULL, "PEM file of the CA certificates that verify the server"},
  [HTTP_MAX_PAGE_BYTES] = {"max_page_bytes", DWL_OPT_INT, 0, "67108864",
                           "largest page body accepted, in bytes (enforced while receiving)"},
  [HTTP_NOPTS] = {NULL, 0, 0, NULL, NULL},
};
DWL_OPTIONS_CHECK(http_options, HTTP_NOPTS);
#define OPT(i) DWL_OPT(http_options, i)

/* ---- paging ------------------------------------------------------------------ */

static int warn_unknown(http_src *st)
{
  for (size_t i = 0; i < st->pg.nunknown; i++) {
    const char *name = st->pg.unknown[i];
    size_t w = 0;
    while (w < st->nwarned && strcmp(st->warned[w], name) != 0)
      w++;
    if (w < st->nwarned)
      continue;
    char **nw = realloc(st->warned, (st->nwarned + 1) * sizeof *nw);
    if (!nw || !(nw[st->nwarned] = strdup(name)))
      return src_error(st, "out of memory");
    st->warned = nw;
    st->nwarned++;
    host->log(st->ctx, DWL_LOG_WARN, "page %" PRIu64 ": member '%s' is not one of the columns, which come from the "
              "first page's records; ignored (list the columns under fields to load it)", st->page, name);
  }
  return DWL_OK;
}

/* Works out the URL of the page after the one just parsed. */
static int plan_next(http_src *st)
{
  char *ref = NULL, *next = NULL;
  free(st->next_url);
  st->next_url = NULL;
  switch (st->paging) {
  case PAGE_NEXT:
  case PAGE_LINK:
    if (st->paging == PAGE_NEXT)
      ref = st->pg.next;
    else if (st->link.len && hu_link_next(st->link.data, &ref) != 0)
      return src_error(st, "out of memory");
    if (!ref)
      return DWL_OK;
    if (hu_resolve(st->url, ref, &next) != 0) {
      if (st->paging == PAGE_LINK)
        free(ref);
      return page_error(st, st->url, "the next-page link is not an http or https URL");
    }
    if (st->paging == PAGE_LINK)
      free(ref);
    if (!hu_same_origin(next, st->base)) {
      char *red = hu_redact(next);
      page_error(st, st->url, "the next-page link %s leaves the API's host; not following it with the job's headers",
                 red ? red : "?");
      free(red);
      free(next);
      return DWL_ERR;
    }
    if (strcmp(next, st->url) == 0) {
      free(next);
      return page_error(st, st->url, "the next-page link is the page itself: the pagination loops");
    }
    break;
  case PAGE_NUMBER: {
    if (st->pg.nrecords == 0)
      return DWL_OK;
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, ++st->page_no);
    if (hu_set_param(st->base, st->page_param, num, &next) != 0)
      return src_error(st, "out of memory");
    break;
  }
  case PAGE_CURSOR:
    if (!st->pg.next)
      return DWL_OK;
    if (st->cursor && strcmp(st->cursor, st->pg.next) == 0)
      return page_error(st, st->url, "the next cursor repeats the one sent: the pagination loops");
    free(st->cursor);
    if (!(st->cursor = strdup(st->pg.next)) || hu_set_param(st->base, st->cursor_param, st->cursor, &next) != 0)
      return src_error(st, "out of memory");
    break;
  default:
    return DWL_OK;
  }
  st->next_url = next;
  return DWL_OK;
}

/* Fetches and parses the page at next_url; DWL_EOF when there is none. */
static int next_page(http_src *st)
{
  if (!st->next_url)
    return DWL_EOF;
  free(st->url);
  st->url = st->next_url;
  st->next_url = NULL;
  st->page++;
  st->pos = 0;
  if (fetch(st, st->url) != DWL_OK)
    return DWL_ERR;
  char why[512];
  if (jp_parse(&st->cols, st->records, st->body_path, st->body.data ? st->body.data : "", st->body.len, &st->pg, why,
               sizeof why) != 0)
    return page_error(st, st->url, "%s", why);
  /* An API that ignores the page or cursor parameter sends its first page
   * for ever; the run would only end when memory does.  The records are
   * compared, not the bodies, which often echo the request's URL. */
  if (st->pg.nrecords > 0) {
    uint64_t h = XXH3_64bits(st->pg.text.data, st->pg.text.len);
    if (st->prev_len == st->pg.nrecords && st->prev_hash == h && st->pg.text.len)
      return page_error(st, st->url, "the page repeats the one before: the pagination does not advance%s%s%s",
                        st->paging == PAGE_NUMBER ? " (does the API take the page number in '" : "",
                        st->paging == PAGE_NUMBER ? st->page_param : "", st->paging == PAGE_NUMBER ? "'?)" : "");
    st->prev_hash = h;
    st->prev_len = st->pg.nrecords;
  }
  char *red = hu_redact(st->url);
  /* the rows of a page follow every row of the pages before it */
  host->log(st->ctx, DWL_LOG_DEBUG, "page %" PRIu64 " (%s): %zu records (rows %" PRIu64 " to %" PRIu64 "), %zu bytes",
            st->page, red ? red : "?", st->pg.nrecords, st->rowno + 1, st->rowno + st->pg.nrecords, st->body.len);
  free(red);
  if (warn_unknown(st) != DWL_OK)
    return DWL_ERR;
  return plan_next(st);
}

/* ---- open -------------------------------------------------------------------- */

/* RFC 9110 token characters: what a header name may hold. */
static int token_char(unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

static int add_secret(http_src *st, const char *v)
{
  char **ns = realloc(st->secrets, (st->nsecrets + 1) * sizeof *ns);
  if (!ns || !(ns[st->nsecrets] = strdup(v)))
    return src_error(st, "out of memory");
  st->secrets = ns;
  st->nsecrets++;
  return DWL_OK;
}

static int build_headers(http_src *st)
{
  dwl_ctx *ctx = st->ctx;
  size_t n = host->opt_map_len(ctx, OPT(HTTP_HEADERS));
  int accept = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = host->opt_map_key(ctx, OPT(HTTP_HEADERS), i);
    const char *val = host->opt_map_value(ctx, OPT(HTTP_HEADERS), i);
    if (!name || !*name || !val)
      return src_error(st, "option headers: entry %zu has no name or no value", i + 1);
    for (const char *p = name; *p; p++)
      if (!token_char((unsigned char)*p))
        return src_error(st, "option headers: '%s' is not a valid header name", name);
    /* the value is a secret more often than not: say where, never what */
    if (strpbrk(val, "\r\n"))
      return src_error(st, "option headers: the value of %s contains a line break", name);
    if (strcasecmp(name, "Accept") == 0)
      accept = 1;
    st->custom_headers = 1;
    /* the whole value, and its last word: the token of "Bearer <token>" */
    const char *last = strrchr(val, ' ');
    if (add_secret(st, val) != DWL_OK || (last && add_secret(st, last + 1) != DWL_OK))
      return DWL_ERR;
    size_t len = strlen(name) + strlen(val) + 3;
    char *line = malloc(len);
    if (!line)
      return src_error(st, "out of memory");
    /* "Name;" is curl's way to send a header with an empty value */
    if (*val)
      snprintf(line, len, "%s: %s", name, val);
    else
      snprintf(line, len, "%s;", name);
    struct curl_slist *nl = curl_slist_append(st->headers, line);
    free(line);
    if (!nl)
      return src_error(st, "out of memory");
    st->headers = nl;
  }
  if (!accept) {
    struct curl_slist *nl = curl_slist_append(st->headers, "Accept: application/json");
    if (!nl)
      return src_error(st, "out of memory");
    st->headers = nl;
  }
  return DWL_OK;
}

static int positive(http_src *st, const char *name, int64_t v, int64_t lo, int64_t hi)
{
  if (v < lo || v > hi)
    return src_error(st, "option %s must be between %" PRId64 " and %" PRId64 ", got %" PRId64, name, lo, hi, v);
  return DWL_OK;
}

static int read_paging(http_src *st)
{
  dwl_ctx *ctx = st->ctx;
  const char *chosen = NULL;
  static const struct {
    int opt;
    int style;
  } styles[] = {{HTTP_NEXT, PAGE_NEXT}, {HTTP_LINK_HEADER, PAGE_LINK}, {HTTP_PAGE_PARAM, PAGE_NUMBER},
                {HTTP_CURSOR_PARAM, PAGE_CURSOR}};
  for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++) {
    const char *opt = OPT(styles[i].opt);
    int on = styles[i].style == PAGE_LINK ? host->opt_bool(ctx, opt) : host->opt_isset(ctx, opt);
    if (!on)
      continue;
    if (chosen)
      return src_error(st, "options %s and %s are two pagination styles; give one", chosen, opt);
    chosen = opt;
    st->paging = styles[i].style;
    if (styles[i].style != PAGE_LINK) {
      const char *v = host->opt_string(ctx, opt);
      if (!v || !*v)
        return src_error(st, "option %s is empty", opt);
    }
  }
  int has_cursor = host->opt_isset(ctx, OPT(HTTP_CURSOR));
  if (st->paging == PAGE_CURSOR && (!has_cursor || !*host->opt_string(ctx, OPT(HTTP_CURSOR))))
    return src_error(st, "option cursor_param needs cursor, the dotted path of the next cursor in the body");
  if (st->paging != PAGE_CURSOR && has_cursor)
    return src_error(st, "option cursor needs cursor_param, the query parameter that receives it");
  if (host->opt_isset(ctx, OPT(HTTP_PAGE_SIZE_PARAM)) && st->paging != PAGE_NUMBER && st->paging != PAGE_CURSOR)
    return src_error(st, "option page_size_param goes with page_param or cursor_param");
  if (host->opt_isset(ctx, OPT(HTTP_PAGE_START)) && st->paging != PAGE_NUMBER)
    return src_error(st, "option page_start goes with page_param");
  st->body_path = st->paging == PAGE_NEXT ? host->opt_string(ctx, OPT(HTTP_NEXT))
                  : st->paging == PAGE_CURSOR ? host->opt_string(ctx, OPT(HTTP_CURSOR)) : NULL;
  st->page_param = host->opt_string(ctx, OPT(HTTP_PAGE_PARAM));
  st->cursor_param = host->opt_string(ctx, OPT(HTTP_CURSOR_PARAM));
  st->page_no = host->opt_int(ctx, OPT(HTTP_PAGE_START));
  return positive(st, "page_start", st->page_no, 0, INT32_MAX);
}

static int base_param(http_src *st, const char *name, const char *value)
{
  char *u;
  if (hu_set_param(st->base, name, value, &u) != 0)
    return src_error(st, "out of memory");
  free(st->base);
  st->base = u;
  return DWL_OK;
}

/* The URL every page starts from: `url` plus the checkpoint and the page
 * size. */
static int build_base(http_src *st, const dwl_source_args *args)
{
  dwl_ctx *ctx = st->ctx;
  const char *url = host->opt_string(ctx, OPT(HTTP_URL));
  if (!url || hu_check(url) != 0) {
    char *red = url ? hu_redact(url) : NULL;
    src_error(st, "option url: %s is not an http or https URL", red ? red : "(none)");
    free(red);
    return DWL_ERR;
  }
  if (!(st->base = strdup(url)) || hu_url_secrets(url, &st->secrets, &st->nsecrets) != 0)
    return src_error(st, "out of memory");
  const char *cp = DWL_ARGS_HAS(args, checkpoint) ? args->checkpoint : NULL;
  const char *fmt = host->opt_string(ctx, OPT(HTTP_SINCE_FORMAT));
  char since[64];
  if (host->opt_isset(ctx, OPT(HTTP_SINCE_FORMAT)) && hu_since_text("2000-01-01", fmt, since, sizeof since) != 0)
    return src_error(st, "option since_format: '%s' is not one of text, iso8601, date, unix", fmt);
  if (host->opt_isset(ctx, OPT(HTTP_SINCE_PARAM)) && cp) {
    if (hu_since_text(cp, fmt, since, sizeof since) != 0)
      return src_error(st, "the checkpoint '%s' cannot be written as since_format %s", cp, fmt);
    if (base_param(st, host->opt_string(ctx, OPT(HTTP_SINCE_PARAM)), since) != DWL_OK)
      return DWL_ERR;
  }
  if (host->opt_isset(ctx, OPT(HTTP_PAGE_SIZE_PARAM))) {
    int64_t ps = host->opt_int(ctx, OPT(HTTP_PAGE_SIZE));
    if (positive(st, "page_size", ps, 1, INT32_MAX) != DWL_OK)
      return DWL_ERR;
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, ps);
    if (base_param(st, host->opt_string(ctx, OPT(HTTP_PAGE_SIZE_PARAM)), num) != DWL_OK)
      return DWL_ERR;
  }
  return DWL_OK;
}

static int read_fields(http_src *st)
{
  dwl_ctx *ctx = st->ctx;
  size_t n = host->opt_map_len(ctx, OPT(HTTP_FIELDS));
  if (host->opt_isset(ctx, OPT(HTTP_FIELDS)) && n == 0)
    return src_error(st, "option fields is empty");
  for (size_t i = 0; i < n; i++) {
    const char *name = host->opt_map_key(ctx, OPT(HTTP_FIELDS), i);
    const char *path = host->opt_map_value(ctx, OPT(HTTP_FIELDS), i);
    if (!name || !*name || !path || !*path)
      return src_error(st, "option fields: entry %zu needs a column name and a path", i + 1);
    for (size_t j = 0; j < st->cols.n; j++)
      if (strcmp(st->cols.names[j], name) == 0)
        return src_error(st, "option fields: column '%s' is listed twice", name);
    if (jp_cols_add(&st->cols, name, path) != 0)
      return src_error(st, "out of memory");
  }
  return DWL_OK;
}

static int setup_curl(http_src *st)
{
  dwl_ctx *ctx = st->ctx;
  int64_t timeout = host->opt_int(ctx, OPT(HTTP_TIMEOUT));
  int64_t retries = host->opt_int(ctx, OPT(HTTP_MAX_RETRIES));
  int64_t backoff_ms = host->opt_int(ctx, OPT(HTTP_BACKOFF_MS));
  int64_t max_page = host->opt_int(ctx, OPT(HTTP_MAX_PAGE_BYTES));
  if (positive(st, "timeout", timeout, 1, 86400) != DWL_OK || positive(st, "max_retries", retries, 0, 100) != DWL_OK ||
      positive(st, "backoff_ms", backoff_ms, 0, MAX_BACKOFF_MS) != DWL_OK ||
      positive(st, "max_page_bytes", max_page, 1, (int64_t)1 << 40) != DWL_OK)
    return DWL_ERR;
  st->max_retries = (long)retries;
  st->backoff_ms = (long)backoff_ms;
  st->max_page = (size_t)max_page;
  buf_init(&st->body, st->max_page);

  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return src_error(st, "cannot initialize libcurl");
  st->curl_ready = 1;
  if (!(st->curl = curl_easy_init()))
    return src_error(st, "cannot initialize libcurl");
  CURL *c = st->curl;
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, st->errbuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "dwload-http_json/1.0");
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  /* redirects are followed by get_once */
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)timeout);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(timeout < 30 ? timeout : 30));
  /* compressed pages are welcome; the cap applies to what they inflate to */
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)st->max_page);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, st);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, st);
  if (build_headers(st) != DWL_OK)
    return DWL_ERR;
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, st->headers);
  if (host->opt_bool(ctx, OPT(HTTP_INSECURE))) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    host->log(ctx, DWL_LOG_WARN, "insecure: true: TLS certificates and host names are not verified; anyone on the "
              "path can read and change the data, and the request headers");
  }
  if (host->opt_isset(ctx, OPT(HTTP_CA_FILE)))
    curl_easy_setopt(c, CURLOPT_CAINFO, host->opt_string(ctx, OPT(HTTP_CA_FILE)));
  return DWL_OK;
}

static int first_url(http_src *st)
{
  if (st->paging != PAGE_NUMBER)
    return (st->next_url = strdup(st->base)) ? DWL_OK : src_error(st, "out of memory");
  char num[32];
  snprintf(num, sizeof num, "%" PRId64, st->page_no);
  return hu_set_param(st->base, st->page_param, num, &st->next_url) == 0 ? DWL_OK : src_error(st, "out of memory");
}

/* The columns are known once `fields` is given or a page had records, so
 * open reads pages until then. */
static int find_columns(http_src *st)
{
  for (;;) {
    int rc = next_page(st);
    if (rc == DWL_ERR)
      return DWL_ERR;
    if (st->cols.n > 0)
      break;
    if (rc == DWL_EOF || !st->next_url)
      return src_error(st, "%s: no page had records, so the columns are unknown; list them under fields (which "
                       "incremental jobs with since_param need, as a run may find nothing new)", st->redacted_base);
  }
  st->dcols = calloc(st->cols.n, sizeof *st->dcols);
  if (!st->dcols)
    return src_error(st, "out of memory");
  for (size_t i = 0; i < st->cols.n; i++) {
    st->dcols[i].name = st->cols.names[i];
    st->dcols[i].type = DWL_TYPE_TEXT;
    st->dcols[i].nullable = -1;
  }
  char why[512];
  if (types_opt_apply(host, st->ctx, OPT(HTTP_TYPES), st->dcols, st->cols.n, why, sizeof why) != 0)
    return src_error(st, "%s", why);
  return DWL_OK;
}

static void http_close(void *handle);

static int http_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **cols,
                     size_t *ncols)
{
  *handle = NULL;
  *cols = NULL;
  *ncols = 0;
  http_src *st = calloc(1, sizeof *st);
  if (!st) {
    host->error(ctx, "http_json: out of memory");
    return DWL_ERR;
  }
  st->ctx = ctx;
  jp_cols_init(&st->cols);
  jp_page_init(&st->pg);
  buf_init(&st->body, 0);
  buf_init(&st->link, 64 * 1024);
  st->seed = (unsigned)time(NULL) ^ (unsigned)getpid();
  st->cap = DEFAULT_BATCH_ROWS;
  if (DWL_ARGS_HAS(args, batch_rows) && args->batch_rows)
    st->cap = args->batch_rows;
  st->records = host->opt_string(ctx, OPT(HTTP_RECORDS));
  if (!st->records)
    st->records = "";

  if (read_paging(st) != DWL_OK || build_base(st, args) != DWL_OK || read_fields(st) != DWL_OK ||
      setup_curl(st) != DWL_OK)
    goto fail;
  if (!(st->redacted_base = hu_redact(st->base)) || !(st->origin = calloc(st->cap, sizeof *st->origin))) {
    src_error(st, "out of memory");
    goto fail;
  }
  if (first_url(st) != DWL_OK || find_columns(st) != DWL_OK)
    goto fail;
  *handle = st;
  *cols = st->dcols;
  *ncols = st->cols.n;
  return DWL_OK;
fail:
  http_close(st);
  return DWL_ERR;
}

/* ---- batches ----------------------------------------------------------------- */

static int http_next_batch(void *handle, dwl_batch *batch)
{
  http_src *st = handle;
  batch->nrows = 0;
  batch->values = NULL;
  batch->origin = NULL;
  if (st->failed) {
    host->error(st->ctx, "%s: the source already failed", st->redacted_base);
    return DWL_ERR;
  }
  while (st->pos >= st->pg.nrecords) {
    int rc = next_page(st);
    if (rc != DWL_OK) {
      if (rc == DWL_EOF)
        host->log(st->ctx, DWL_LOG_INFO, "%" PRIu64 " records from %" PRIu64 " pages", st->rowno, st->page);
      return rc;
    }
  }
  size_t n = st->pg.nrecords - st->pos;
  if (n > st->cap)
    n = st->cap;
  /* Rows are numbered across pages; the page of a row is in the debug log. */
  for (size_t i = 0; i < n; i++)
    st->origin[i] = st->rowno + i + 1;
  batch->nrows = n;
  batch->values = st->pg.values + st->pos * st->cols.n;
  batch->origin = st->origin;
  st->pos += n;
  st->rowno += n;
  return DWL_OK;
}

static void http_close(void *handle)
{
  http_src *st = handle;
  if (!st)
    return;
  if (st->curl)
    curl_easy_cleanup(st->curl);
  curl_slist_free_all(st->headers);
  if (st->curl_ready)
    curl_global_cleanup();
  free(st->base);
  free(st->redacted_base);
  buf_free(&st->body);
  buf_free(&st->link);
  free(st->url);
  free(st->next_url);
  free(st->cursor);
  jp_cols_free(&st->cols);
  jp_page_free(&st->pg);
  for (size_t i = 0; i < st->nwarned; i++)
    free(st->warned[i]);
  free(st->warned);
  for (size_t i = 0; i < st->nsecrets; i++)
    free(st->secrets[i]);
  free(st->secrets);
  free(st->dcols);
  free(st->origin);
  free(st);
}

static const dwl_plugin http_plugin = {
  DWL_SOURCE_PLUGIN,
  .name = "http_json",
  .version = "1.0.0",
  .description = "paginated JSON APIs over HTTP(S): next links, Link headers, page numbers, cursors; retries",
  .options = http_options,
  .open = http_open,
  .next_batch = http_next_batch,
  .close = http_close,
};

DWL_PLUGIN_ENTRY(host, http_plugin)
