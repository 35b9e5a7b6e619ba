/* URL work of the http_json plugin (see http_url.h).  URLs go through
 * libcurl's URL API (curl_url_*), dates through curl_getdate; only the
 * Link header grammar (RFC 8288) and the query filtering are hand-written,
 * as libcurl has no parser for either. */
#include "http_url.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static CURLU *parse(const char *url)
{
  CURLU *u = curl_url();
  if (u && curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
    curl_url_cleanup(u);
    u = NULL;
  }
  return u;
}

/* Moves a curl-allocated string into malloc'd memory, so callers free()
 * everything this file returns. */
static char *take(char *cs)
{
  char *s = cs ? strdup(cs) : NULL;
  curl_free(cs);
  return s;
}

static char *get_url(CURLU *u)
{
  char *s = NULL;
  if (curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK)
    return NULL;
  return take(s);
}

int hu_check(const char *url)
{
  CURLU *u = parse(url);
  char *scheme = NULL;
  int ok = u && curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
           (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0);
  curl_free(scheme);
  curl_url_cleanup(u);
  return ok ? 0 : -1;
}

/* The query without the parameters for which `drop` says yes, or with
 * their values replaced by `repl` when repl is not NULL.  NULL (and
 * *none = 1) when nothing is left. */
static char *filter_query(const char *q, int (*match)(const char *name, size_t len, const void *arg),
                          const void *arg, const char *repl, int *oom)
{
  size_t cap = strlen(q) + 1, n = 0;
  char *out = malloc(cap + (repl ? strlen(q) * strlen(repl) : 0));
  *oom = !out;
  if (!out)
    return NULL;
  const char *s = q;
  while (*s) {
    const char *amp = strchr(s, '&');
    size_t seg = amp ? (size_t)(amp - s) : strlen(s);
    const char *eq = memchr(s, '=', seg);
    size_t namelen = eq ? (size_t)(eq - s) : seg;
    int hit = match(s, namelen, arg);
    if (!hit || repl) {
      if (n)
        out[n++] = '&';
      size_t keep = hit ? namelen : seg;
      memcpy(out + n, s, keep);
      n += keep;
      if (hit) {
        out[n++] = '=';
        memcpy(out + n, repl, strlen(repl));
        n += strlen(repl);
      }
    }
    s += seg;
    if (*s == '&')
      s++;
  }
  out[n] = '\0';
  if (n == 0) {
    free(out);
    return NULL;
  }
  return out;
}

static int same_name(const char *name, size_t len, const void *arg)
{
  const char *want = arg;
  return strlen(want) == len && strncmp(name, want, len) == 0;
}

int hu_set_param(const char *url, const char *name, const char *value, char **out)
{
  *out = NULL;
  CURLU *u = parse(url);
  if (!u)
    return -1;
  int rc = -1, oom = 0;
  char *q = NULL, *kept = NULL, *pair = NULL;
  if (curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK) {
    kept = filter_query(q, same_name, name, NULL, &oom);
    if (oom || curl_url_set(u, CURLUPART_QUERY, kept, 0) != CURLUE_OK)
      goto done;
  }
  size_t plen = strlen(name) + strlen(value) + 2;
  if (!(pair = malloc(plen)))
    goto done;
  snprintf(pair, plen, "%s=%s", name, value);
  /* With APPENDQUERY, URLENCODE encodes name and value and keeps the '=' */
  if (curl_url_set(u, CURLUPART_QUERY, pair, CURLU_APPENDQUERY | CURLU_URLENCODE) != CURLUE_OK)
    goto done;
  if ((*out = get_url(u)))
    rc = 0;
done:
  curl_free(q);
  free(kept);
  free(pair);
  curl_url_cleanup(u);
  return rc;
}

int hu_resolve(const char *base, const char *ref, char **out)
{
  *out = NULL;
  CURLU *u = parse(base);
  if (!u)
    return -1;
  /* Setting a URL on a handle that holds one resolves it relative to it */
  if (curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK)
    *out = get_url(u);
  curl_url_cleanup(u);
  return *out && hu_check(*out) == 0 ? 0 : (free(*out), *out = NULL, -1);
}

int hu_same_origin(const char *a, const char *b)
{
  static const CURLUPart parts[] = {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT};
  CURLU *ua = parse(a), *ub = parse(b);
  int same = ua && ub;
  for (size_t i = 0; same && i < sizeof parts / sizeof parts[0]; i++) {
    char *pa = NULL, *pb = NULL;
    /* DEFAULT_PORT: http://h and http://h:80 are the same origin */
    unsigned fl = parts[i] == CURLUPART_PORT ? CURLU_DEFAULT_PORT : 0;
    same = curl_url_get(ua, parts[i], &pa, fl) == CURLUE_OK && curl_url_get(ub, parts[i], &pb, fl) == CURLUE_OK &&
           strcasecmp(pa, pb) == 0;
    curl_free(pa);
    curl_free(pb);
  }
  curl_url_cleanup(ua);
  curl_url_cleanup(ub);
  return same;
}

static char *part(const char *url, CURLUPart which)
{
  CURLU *u = parse(url);
  char *v = NULL;
  if (u && curl_url_get(u, which, &v, 0) != CURLUE_OK)
    v = NULL;
  curl_url_cleanup(u);
  return take(v);
}

int hu_redirect_safe(const char *from, const char *to)
{
  char *hf = part(from, CURLUPART_HOST), *ht = part(to, CURLUPART_HOST);
  char *sf = part(from, CURLUPART_SCHEME), *stp = part(to, CURLUPART_SCHEME);
  int ok = hf && ht && sf && stp && strcasecmp(hf, ht) == 0 &&
           !(strcmp(sf, "https") == 0 && strcmp(stp, "http") == 0) && hu_check(to) == 0;
  free(hf);
  free(ht);
  free(sf);
  free(stp);
  return ok;
}

/* Parameter names that carry credentials in the wild: token, access_token,
 * api_key, apikey, key, client_secret, password, sig, X-Amz-Signature, auth,
 * code (OAuth), session ids.  Redacting too much costs nothing. */
static int secret_name(const char *name, size_t len, const void *arg)
{
  static const char *const words[] = {"token", "key", "secret", "pass", "pwd", "sig", "auth", "cred",
                                      "session", "code", "jwt", "bearer"};
  (void)arg;
  for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
    size_t wl = strlen(words[w]);
    for (size_t i = 0; i + wl <= len; i++)
      if (strncasecmp(name + i, words[w], wl) == 0)
        return 1;
  }
  return 0;
}

char *hu_redact(const char *url)
{
  CURLU *u = parse(url);
  if (!u)
    return strdup("(an unparsable URL)");
  char *user = NULL, *q = NULL, *res = NULL, *red = NULL;
  int oom = 0;
  if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
    if (curl_url_set(u, CURLUPART_USER, "***", 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK)
      goto done;
  }
  if (curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK) {
    red = filter_query(q, secret_name, NULL, "***", &oom);
    if (oom || curl_url_set(u, CURLUPART_QUERY, red, 0) != CURLUE_OK)
      goto done;
  }
  res = get_url(u);
done:
  curl_free(user);
  curl_free(q);
  free(red);
  curl_url_cleanup(u);
  /* never fall back to the unredacted URL */
  return res ? res : strdup("(a URL that could not be redacted)");
}

static int push(char ***list, size_t *n, const char *s, size_t len)
{
  char **nl = realloc(*list, (*n + 1) * sizeof *nl);
  if (!nl)
    return -1;
  *list = nl;
  if (!(nl[*n] = strndup(s, len)))
    return -1;
  (*n)++;
  return 0;
}

int hu_url_secrets(const char *url, char ***list, size_t *n)
{
  static const CURLUPart who[] = {CURLUPART_USER, CURLUPART_PASSWORD};
  CURLU *u = parse(url);
  if (!u)
    return 0;
  int rc = 0;
  for (size_t i = 0; i < 2 && rc == 0; i++) {
    char *v = NULL;
    if (curl_url_get(u, who[i], &v, 0) == CURLUE_OK)
      rc = push(list, n, v, strlen(v));
    curl_free(v);
  }
  char *q = NULL;
  if (rc == 0 && curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK) {
    for (const char *s = q; *s && rc == 0;) {
      size_t seg = strcspn(s, "&");
      const char *eq = memchr(s, '=', seg);
      if (eq && secret_name(s, (size_t)(eq - s), NULL)) {
        size_t vlen = seg - (size_t)(eq + 1 - s);
        int dlen = 0;
        char *dec = curl_easy_unescape(NULL, eq + 1, (int)vlen, &dlen);
        rc = push(list, n, eq + 1, vlen);
        if (rc == 0 && dec)
          rc = push(list, n, dec, (size_t)dlen);
        curl_free(dec);
      }
      s += seg;
      if (*s == '&')
        s++;
    }
  }
  curl_free(q);
  curl_url_cleanup(u);
  return rc;
}

char *hu_excerpt(const char *body, size_t len, size_t max, char *const *secrets, size_t n)
{
  /* a secret that starts before the cut is scrubbed whole */
  size_t longest = 0;
  for (size_t i = 0; i < n; i++)
    if (strlen(secrets[i]) > longest)
      longest = strlen(secrets[i]);
  size_t take = len < max + longest ? len : max + longest;
  char *out = malloc(take * 3 + 1), *o = out;
  if (!out)
    return NULL;
  for (size_t i = 0; i < take;) {
    size_t hit = 0;
    for (size_t k = 0; k < n && !hit; k++) {
      size_t sl = strlen(secrets[k]);
      if (sl >= 4 && sl <= take - i && memcmp(body + i, secrets[k], sl) == 0)
        hit = sl;
    }
    if (hit) {
      memcpy(o, "***", 3);
      o += 3;
      i += hit;
      continue;
    }
    unsigned char c = (unsigned char)body[i++];
    *o++ = c < 0x20 || c == 0x7f ? ' ' : (char)c;
  }
  size_t used = (size_t)(o - out);
  if (used > max) {
    used = max;
    while (used > 0 && ((unsigned char)out[used] & 0xC0) == 0x80)
      used--;
  }
  out[used] = '\0';
  return out;
}

/* ---- Link: <...>; rel="next" ---------------------------------------------- */

static const char *skip_ws(const char *s)
{
  while (*s == ' ' || *s == '\t')
    s++;
  return s;
}

/* Does a rel value (space-separated relation types) include "next"? */
static int rel_has_next(const char *v, size_t len)
{
  size_t i = 0;
  while (i < len) {
    while (i < len && (v[i] == ' ' || v[i] == '\t'))
      i++;
    size_t st = i;
    while (i < len && v[i] != ' ' && v[i] != '\t')
      i++;
    if (i - st == 4 && strncasecmp(v + st, "next", 4) == 0)
      return 1;
  }
  return 0;
}

int hu_link_next(const char *link, char **out)
{
  *out = NULL;
  const char *s = link;
  while (s && *s) {
    s = skip_ws(s);
    if (*s == ',') {
      s++;
      continue;
    }
    if (*s != '<')
      return 0;  /* not a link-value: give up rather than guess */
    const char *ref = s + 1, *gt = strchr(ref, '>');
    if (!gt)
      return 0;
    size_t reflen = (size_t)(gt - ref);
    s = gt + 1;
    int next = 0;
    /* link-params: ; name [= token / quoted-string] */
    for (;;) {
      s = skip_ws(s);
      if (*s != ';')
        break;
      s = skip_ws(s + 1);
      const char *name = s;
      while (*s && *s != '=' && *s != ';' && *s != ',' && *s != ' ' && *s != '\t')
        s++;
      size_t namelen = (size_t)(s - name);
      s = skip_ws(s);
      const char *val = s;
      size_t vallen = 0;
      if (*s == '=') {
        s = skip_ws(s + 1);
        if (*s == '"') {
          val = ++s;
          while (*s && *s != '"') {
            if (*s == '\\' && s[1])
              s++;
            s++;
          }
          vallen = (size_t)(s - val);
          if (*s == '"')
            s++;
        } else {
          val = s;
          while (*s && *s != ';' && *s != ',' && *s != ' ' && *s != '\t')
            s++;
          vallen = (size_t)(s - val);
        }
      }
      if (namelen == 3 && strncasecmp(name, "rel", 3) == 0 && rel_has_next(val, vallen))
        next = 1;
    }
    if (next) {
      *out = strndup(ref, reflen);
      return *out ? 0 : -1;
    }
    while (*s && *s != ',')
      s++;
  }
  return 0;
}

/* ---- Retry-After and the checkpoint ---------------------------------------- */

int hu_retry_after(const char *value, time_t now, long *secs)
{
  const char *s = value;
  while (*s == ' ' || *s == '\t')
    s++;
  if (*s >= '0' && *s <= '9') {
    long v = 0;
    while (*s >= '0' && *s <= '9') {
      if (v > 100000000)
        return -1;
      v = v * 10 + (*s++ - '0');
    }
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
      s++;
    if (*s)
      return -1;
    *secs = v;
    return 0;
  }
  time_t t = curl_getdate(s, NULL);
  if (t == (time_t)-1)
    return -1;
  *secs = t > now ? (long)(t - now) : 0;
  return 0;
}

static int digits(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return 0;
  return 1;
}

int hu_since_text(const char *cp, const char *format, char *out, size_t cap)
{
  size_t len = strlen(cp);
  if (strcmp(format, "text") == 0)
    return (size_t)snprintf(out, cap, "%s", cp) < cap ? 0 : -1;
  /* canonical: YYYY-MM-DD[ HH:MM:SS[.f...]] */
  int ok = len >= 10 && digits(cp, 4) && cp[4] == '-' && digits(cp + 5, 2) && cp[7] == '-' && digits(cp + 8, 2);
  int has_time = len >= 19 && cp[10] == ' ' && digits(cp + 11, 2) && cp[13] == ':' && digits(cp + 14, 2) &&
                 cp[16] == ':' && digits(cp + 17, 2);
  size_t frac = has_time && len > 19 && cp[19] == '.' ? len - 20 : 0;
  if (!ok || !(len == 10 || (has_time && (len == 19 || (frac && digits(cp + 20, frac))))))
    return -1;
  int n;
  if (strcmp(format, "date") == 0) {
    n = snprintf(out, cap, "%.10s", cp);
  } else if (strcmp(format, "iso8601") == 0) {
    n = has_time ? snprintf(out, cap, "%.10sT%sZ", cp, cp + 11) : snprintf(out, cap, "%.10sT00:00:00Z", cp);
  } else if (strcmp(format, "unix") == 0) {
    struct tm tm = {0};
    tm.tm_year = atoi(cp) - 1900;
    tm.tm_mon = atoi(cp + 5) - 1;
    tm.tm_mday = atoi(cp + 8);
    if (has_time) {
      tm.tm_hour = atoi(cp + 11);
      tm.tm_min = atoi(cp + 14);
      tm.tm_sec = atoi(cp + 17);
    }
    n = snprintf(out, cap, "%lld", (long long)timegm(&tm));
  } else {
    return -1;
  }
  return n >= 0 && (size_t)n < cap ? 0 : -1;
}
