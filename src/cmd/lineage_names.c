/* The OpenLineage names of a run's datasets, from the job spec alone (the
 * START event goes out before anything is opened): the source by what its
 * options say it reads (a file path, a URL, an ODBC table), the target by
 * the parts of its connection string that name a place (server, port,
 * database or DSN).  Only those parts are read, so a password or a token
 * in a connection string or a URL never reaches an event. */
#include "lineage_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The value of key `key` (any case) in an ODBC connection string
 * "K=V;K={V;W}", braces taken off, into out; 0 when found. */
static int conn_value(const char *conn, const char *key, char *out, size_t n)
{
  size_t klen = strlen(key);
  const char *p = conn;
  while (p && *p) {
    while (*p == ' ' || *p == ';')
      p++;
    const char *eq = strchr(p, '=');
    if (!eq)
      return -1;
    const char *v = eq + 1, *end;
    size_t vlen;
    if (*v == '{') {
      v++;
      end = strchr(v, '}');
      vlen = end ? (size_t)(end - v) : strlen(v);
      end = end ? strchr(end, ';') : NULL;
    } else {
      end = strchr(v, ';');
      vlen = end ? (size_t)(end - v) : strlen(v);
    }
    size_t plen = (size_t)(eq - p);
    while (plen > 0 && p[plen - 1] == ' ')
      plen--;
    if (plen == klen && strncasecmp(p, key, klen) == 0 && vlen > 0) {
      snprintf(out, n, "%.*s", (int)vlen, v);
      return 0;
    }
    p = end;
  }
  return -1;
}

/* The first of keys (NULL-terminated) that conn gives. */
static int conn_any(const char *conn, const char *const *keys, char *out, size_t n)
{
  for (size_t i = 0; keys[i]; i++)
    if (conn_value(conn, keys[i], out, n) == 0)
      return 0;
  return -1;
}

/* A table reached through an ODBC connection string: namespace
 * odbc://SERVER[:PORT] (odbc://localhost for a local or file database),
 * name DATABASE.TABLE (the DSN when no database is named). */
static void odbc_dataset(const char *conn, const char *table, lineage_dataset *d)
{
  static const char *const server_keys[] = {"Server", "Servername", "Host", NULL};
  static const char *const db_keys[] = {"Database", "DB", "DSN", NULL};
  char host[200] = "localhost", port[32] = "", db[400] = "";
  conn_any(conn, server_keys, host, sizeof host);
  conn_value(conn, "Port", port, sizeof port);
  conn_any(conn, db_keys, db, sizeof db);
  snprintf(d->ns, sizeof d->ns, "odbc://%s%s%s", host, port[0] ? ":" : "", port);
  snprintf(d->name, sizeof d->name, "%s%s%s", db, db[0] ? "." : "", table);
}

void lineage_url_parts(const char *url, char *origin, size_t on, char *path, size_t pn)
{
  const char *scheme_end = strstr(url, "://");
  const char *host = scheme_end ? scheme_end + 3 : url;
  const char *host_end = host + strcspn(host, "/?#");
  /* user:password@ is no part of the name */
  const char *at = memchr(host, '@', (size_t)(host_end - host));
  const char *h = at ? at + 1 : host;
  snprintf(origin, on, "%.*s%.*s", scheme_end ? (int)(host - url) : 0, url, (int)(host_end - h), h);
  if (path) {
    size_t plen = strcspn(host_end, "?#");
    snprintf(path, pn, "%.*s", (int)plen, plen ? host_end : "/");
  }
}

void lineage_target(const dwl_spec *spec, lineage_dataset *d)
{
  odbc_dataset(spec->target_connection, spec->target_table, d);
}

/* A path option as the plugin host resolves it: relative to the job's folder. */
static void file_dataset(const dwl_spec *spec, const char *p, lineage_dataset *d)
{
  char joined[PATH_MAX], real[PATH_MAX];
  if (p[0] == '/' || !spec->dir)
    snprintf(joined, sizeof joined, "%s", p);
  else
    snprintf(joined, sizeof joined, "%s/%s", spec->dir, p);
  snprintf(d->ns, sizeof d->ns, "file");
  snprintf(d->name, sizeof d->name, "%s", realpath(joined, real) ? real : joined);
}

void lineage_source(const dwl_spec *spec, lineage_dataset *d)
{
  const spec_opt *o;
  if ((o = spec_source_opt(spec, "path")) && o->kind == SPEC_OPT_SCALAR) {
    file_dataset(spec, o->scalar, d);
  } else if ((o = spec_source_opt(spec, "url")) && o->kind == SPEC_OPT_SCALAR) {
    lineage_url_parts(o->scalar, d->ns, sizeof d->ns, d->name, sizeof d->name);
  } else if ((o = spec_source_opt(spec, "connection")) && o->kind == SPEC_OPT_SCALAR) {
    const spec_opt *t = spec_source_opt(spec, "table");
    odbc_dataset(o->scalar, t && t->kind == SPEC_OPT_SCALAR ? t->scalar : "query", d);
  } else {
    /* a plugin that names no place: the plugin itself */
    snprintf(d->ns, sizeof d->ns, "dwload-plugin");
    snprintf(d->name, sizeof d->name, "%s", spec->source_plugin);
  }
}
