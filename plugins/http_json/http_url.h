/* URL work of the http_json plugin, on libcurl's URL API: query parameters
 * set or replaced, relative links resolved, secrets redacted for messages,
 * the RFC 8288 Link header's next link, Retry-After, and the checkpoint as
 * the API wants it.  No network: unit-tested on strings.  (Not static
 * because the plugin's files share it; the plugin exports only
 * dwl_plugin_entry.) */
#ifndef DWL_HTTP_URL_H
#define DWL_HTTP_URL_H

#include <stddef.h>
#include <time.h>

/* Checks that `url` is an absolute http or https URL.  0, or -1. */
int hu_check(const char *url);

/* *out = url with query parameter `name` set to `value` (URL-encoded),
 * replacing any occurrence of it.  0, or -1 (bad URL, out of memory). */
int hu_set_param(const char *url, const char *name, const char *value, char **out);

/* *out = `ref` resolved against `base` (ref may be absolute).  0, or -1. */
int hu_resolve(const char *base, const char *ref, char **out);

/* 1 when both URLs have the same scheme, host and port, else 0. */
int hu_same_origin(const char *a, const char *b);

/* 1 when a redirect from `from` to `to` may carry the job's headers: the
 * same host, and not from https down to http; else 0. */
int hu_redirect_safe(const char *from, const char *to);

/* A copy of `url` fit for messages: userinfo and the values of query
 * parameters whose names look like secrets (token, key, secret, password,
 * signature, auth, ...) become "***".  Never NULL unless out of memory. */
char *hu_redact(const char *url);

/* Appends to *list (*n entries, each malloc'd) the secrets `url` holds:
 * its user name and password, and the values of its query parameters whose
 * names look like secrets, both as written and decoded.  0, or -1 on out
 * of memory. */
int hu_url_secrets(const char *url, char ***list, size_t *n);

/* A one-line excerpt of a response body for a message: at most `max`
 * bytes (not cutting a UTF-8 character), control characters as spaces,
 * and every occurrence of one of the `n` secrets (those of 4 bytes or
 * more) as "***".  NULL on out of memory. */
char *hu_excerpt(const char *body, size_t len, size_t max, char *const *secrets, size_t n);

/* The target of the first rel="next" link in the value of a Link header
 * (several headers joined by ", ").  *out NULL when there is none.  0, or
 * -1 on out of memory. */
int hu_link_next(const char *link, char **out);

/* Seconds to wait from a Retry-After value (delay-seconds or an HTTP-date,
 * against `now`); 0 for a date in the past.  0, or -1 when unreadable. */
int hu_retry_after(const char *value, time_t now, long *secs);

/* Formats a checkpoint ("YYYY-MM-DD HH:MM:SS[.ffffff]") as `format`:
 * "text" (as stored), "iso8601" ("YYYY-MM-DDTHH:MM:SS[.ffffff]Z"), "date"
 * ("YYYY-MM-DD") or "unix" (whole seconds since 1970).  0, or -1 for an
 * unknown format or a checkpoint that is not in the canonical form. */
int hu_since_text(const char *checkpoint, const char *format, char *out, size_t cap);

#endif
