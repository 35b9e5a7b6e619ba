/* The transports of OpenLineage events: a JSON-lines file, appended, and
 * an HTTP POST with libcurl.  Neither may fail a run: a problem is one
 * warning, and a slow endpoint is cut off (CURLOPT_TIMEOUT). */
#include "lineage_impl.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

void lineage_append(const char *file, const char *line)
{
  size_t n = strlen(line);
  char *rec = malloc(n + 1);
  if (!rec) {
    log_msg(LOG_WARN, "could not write an OpenLineage event to %s: out of memory", file);
    return;
  }
  memcpy(rec, line, n);
  rec[n] = '\n';
  int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  ssize_t w = fd < 0 ? -1 : write(fd, rec, n + 1);
  int e = errno;
  if (fd >= 0 && close(fd) != 0 && w >= 0) {
    e = errno;
    w = -1;
  }
  free(rec);
  if (w < 0)
    log_msg(LOG_WARN, "could not write an OpenLineage event to %s: %s", file, strerror(e));
  else if ((size_t)w != n + 1)
    log_msg(LOG_WARN, "could not write an OpenLineage event to %s: only %zd of %zu bytes written", file, w, n + 1);
}

void lineage_http_init(void)
{
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

void lineage_http_done(void)
{
  curl_global_cleanup();
}

/* The answer's body is not wanted. */
static size_t discard(char *p, size_t size, size_t n, void *ud)
{
  (void)p;
  (void)ud;
  return size * n;
}

void lineage_post(const char *url, const char *line)
{
  /* messages name the endpoint without user:password@ or a query */
  char origin[300], path[600];
  lineage_url_parts(url, origin, sizeof origin, path, sizeof path);
  CURL *h = curl_easy_init();
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  if (!h || !hdr) {
    log_msg(LOG_WARN, "could not send an OpenLineage event to %s%s: out of memory", origin, path);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return;
  }
  char why[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, line);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(line));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, why);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (rc != CURLE_OK)
    log_msg(LOG_WARN, "could not send an OpenLineage event to %s%s: %s", origin, path,
            why[0] ? why : curl_easy_strerror(rc));
  else if (status < 200 || status > 299)
    log_msg(LOG_WARN, "could not send an OpenLineage event to %s%s: the server answered HTTP %ld", origin, path,
            status);
  else
    log_msg(LOG_DEBUG, "sent an OpenLineage event to %s%s (HTTP %ld)", origin, path, status);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
}
