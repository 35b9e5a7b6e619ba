/* One page's GET for the http_json plugin: the response body (capped
 * while it is received) and its Link and Retry-After headers, redirects
 * followed by hand so the job's headers never go to another host, and
 * retries of 429, 5xx and connection errors with exponential backoff and
 * jitter honouring Retry-After.  Every URL in a message is redacted, and
 * the job's secrets are scrubbed from response excerpts. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_src.h"
#include "http_url.h"

#define MAX_REDIRECTS 10
/* A longer wait than this makes the run fail instead of sleeping: a job is
 * better retried by its scheduler than parked for hours. */
#define MAX_WAIT_S 600
#define EXCERPT_BYTES 200

int page_error(http_src *st, const char *url, const char *fmt, ...)
{
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char *red = hu_redact(url);
  int rc = src_error(st, "page %" PRIu64 " (%s): %s", st->page, red ? red : "?", msg);
  free(red);
  return rc;
}

/* ---- transfer --------------------------------------------------------------- */

size_t on_body(char *data, size_t size, size_t n, void *arg)
{
  http_src *st = arg;
  size_t len = size * n;
  if (len > st->max_page - st->body.len) {
    st->over_cap = 1;
    return 0;  /* aborts the transfer: CURLE_WRITE_ERROR */
  }
  return buf_add(&st->body, data, len) == 0 ? len : 0;
}

static int header_is(const char *line, size_t len, const char *name, const char **val, size_t *vlen)
{
  size_t nl = strlen(name);
  if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
    return 0;
  const char *v = line + nl + 1, *end = line + len;
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
    end--;
  *val = v;
  *vlen = (size_t)(end - v);
  return 1;
}

/* Called for every header line of every response, redirects included:
 * a status line starts a new response, so only the final one's count. */
size_t on_header(char *line, size_t size, size_t n, void *arg)
{
  http_src *st = arg;
  size_t len = size * n;
  const char *v;
  size_t vlen;
  if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
    buf_reset(&st->link);
    st->retry_after[0] = '\0';
  } else if (header_is(line, len, "Link", &v, &vlen)) {
    if ((st->link.len && buf_adds(&st->link, ", ") != 0) || buf_add(&st->link, v, vlen) != 0)
      return 0;
  } else if (header_is(line, len, "Retry-After", &v, &vlen)) {
    snprintf(st->retry_after, sizeof st->retry_after, "%.*s", (int)(vlen < 63 ? vlen : 63), v);
  }
  return len;
}

static int transient(CURLcode cc)
{
  switch (cc) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_PARTIAL_FILE:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
    return 1;
  default:
    return 0;
  }
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Exponential backoff with "equal jitter": half the step fixed, half
 * random, so retries of many clients spread out but never come early. */
static long backoff(http_src *st, long attempt)
{
  long step = st->backoff_ms;
  for (long i = 0; i < attempt && step < MAX_BACKOFF_MS; i++)
    step *= 2;
  if (step > MAX_BACKOFF_MS)
    step = MAX_BACKOFF_MS;
  return step / 2 + (step > 1 ? (long)(rand_r(&st->seed) % (step / 2 + 1)) : 0);
}

/* One GET of `url`, following redirects by hand: libcurl would pass the
 * job's headers (tokens) on to any host a redirect names, so a redirect
 * elsewhere is refused when the job has headers.  DWL_ERR only for such a
 * refusal; transfer errors come back in *cc and *status. */
static int get_once(http_src *st, const char *url, CURLcode *cc, long *status)
{
  char *cur = strdup(url);
  if (!cur)
    return src_error(st, "out of memory");
  for (int hops = 0;; hops++) {
    buf_reset(&st->body);
    buf_reset(&st->link);
    st->retry_after[0] = '\0';
    st->over_cap = 0;
    st->errbuf[0] = '\0';
    curl_easy_setopt(st->curl, CURLOPT_URL, cur);
    *cc = curl_easy_perform(st->curl);
    *status = 0;
    curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, status);
    char *loc = NULL;
    if (*cc != CURLE_OK || *status < 300 || *status > 399 ||
        curl_easy_getinfo(st->curl, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
      break;  /* a 3xx without Location stays a status */
    if (hops == MAX_REDIRECTS) {
      *cc = CURLE_TOO_MANY_REDIRECTS;
      break;
    }
    if (hu_check(loc) != 0 || (st->custom_headers && !hu_redirect_safe(cur, loc))) {
      char *red = hu_redact(loc);
      int rc = page_error(st, url, "redirected to %s, %s", red ? red : "?",
                          hu_check(loc) != 0 ? "which is not an http or https URL"
                                             : "another host or plain http: not following it with the job's headers");
      free(red);
      free(cur);
      return rc;
    }
    char *next = strdup(loc);
    free(cur);
    if (!(cur = next))
      return src_error(st, "out of memory");
  }
  free(cur);
  return DWL_OK;
}

/* GETs `url` into st->body, retrying what may pass.  DWL_OK only for a 2xx
 * response that arrived whole and within the cap. */
int fetch(http_src *st, const char *url)
{
  for (long attempt = 0;; attempt++) {
    CURLcode cc = CURLE_OK;
    long status = 0;
    if (get_once(st, url, &cc, &status) != DWL_OK)
      return DWL_ERR;
    if (cc == CURLE_OK && status >= 200 && status < 300)
      return DWL_OK;

    char why[512];
    int retry;
    long wait_ms = -1;
    if (st->over_cap || cc == CURLE_FILESIZE_EXCEEDED)
      return page_error(st, url, "the page is larger than max_page_bytes (%zu bytes)", st->max_page);
    if (cc == CURLE_TOO_MANY_REDIRECTS)
      return page_error(st, url, "redirect loop: more than %d redirects", MAX_REDIRECTS);
    if (cc != CURLE_OK) {
      snprintf(why, sizeof why, "%s", st->errbuf[0] ? st->errbuf : curl_easy_strerror(cc));
      retry = transient(cc);
    } else {
      snprintf(why, sizeof why, "HTTP status %ld", status);
      retry = status == 429 || status == 408 || status >= 500;
      long secs;
      if (retry && st->retry_after[0] && hu_retry_after(st->retry_after, time(NULL), &secs) == 0) {
        if (secs > MAX_WAIT_S)
          return page_error(st, url, "%s with Retry-After %ld s, longer than the %d s dwload waits", why, secs,
                            MAX_WAIT_S);
        wait_ms = secs * 1000;
      }
    }
    if (!retry || attempt >= st->max_retries) {
      char tries[64] = "";
      if (retry)
        snprintf(tries, sizeof tries, ", after %ld %s", attempt, attempt == 1 ? "retry" : "retries");
      /* what the server said about a status helps most; secrets the job
       * sent are scrubbed in case the server echoes them */
      char *ex = cc == CURLE_OK && st->body.len
                   ? hu_excerpt(st->body.data, st->body.len, EXCERPT_BYTES, st->secrets, st->nsecrets)
                   : NULL;
      int rc = page_error(st, url, "%s%s%s%s", why, tries, ex ? "; the response begins: " : "", ex ? ex : "");
      free(ex);
      return rc;
    }
    int honoured = wait_ms >= 0;
    if (!honoured)
      wait_ms = backoff(st, attempt);
    char *red = hu_redact(url);
    host->log(st->ctx, DWL_LOG_WARN, "page %" PRIu64 " (%s): %s; retry %ld of %ld in %ld ms%s", st->page,
              red ? red : "?", why, attempt + 1, st->max_retries, wait_ms, honoured ? " (Retry-After)" : "");
    free(red);
    sleep_ms(wait_ms);
  }
}
