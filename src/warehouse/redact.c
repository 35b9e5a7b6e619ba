/* Text of messages about ODBC: connection strings with the values of PWD,
 * Password and similar attributes replaced by "***", and a handle's
 * diagnostics on one line; and whether a connection string sets an
 * attribute, by the same reading of its KEY=VALUE pairs.  Compiled into the host and into the odbc
 * source plugin. */
#include "redact.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "buf.h"

/* Attribute names that carry a secret, compared case-insensitively as
 * parts of the name: psqlODBC's Pwd and Password (and libpq's password
 * and sslpassword inside its pqopt), MariaDB Connector/ODBC's PWD and
 * PASSWORD (and key passwords such as TLSKeyPwd), the generic PWD the
 * SQLite driver ignores, and tokens and secrets of any driver. */
static const char *const secret_parts[] = {"PWD", "PASSW", "SECRET", "TOKEN", NULL};
static const char *const secret_keys[] = {"AUTHENTICATION", NULL};

/* Does the attribute name k[0..n), spaces around it aside, equal name? */
static int key_is(const char *k, size_t n, const char *name)
{
  while (n && isspace((unsigned char)k[n - 1]))
    n--;
  while (n && isspace((unsigned char)*k))
    k++, n--;
  return strlen(name) == n && strncasecmp(k, name, n) == 0;
}

static int is_secret_key(const char *k, size_t n)
{
  while (n && isspace((unsigned char)k[n - 1]))
    n--;
  while (n && isspace((unsigned char)*k))
    k++, n--;
  for (int i = 0; secret_keys[i]; i++)
    if (key_is(k, n, secret_keys[i]))
      return 1;
  for (int i = 0; secret_parts[i]; i++) {
    size_t m = strlen(secret_parts[i]);
    for (size_t j = 0; j + m <= n; j++)
      if (strncasecmp(k + j, secret_parts[i], m) == 0)
        return 1;
  }
  return 0;
}

/* Copies value text v[0..n) with the password of a URI in it
 * (scheme://user:PASSWORD@host, as libpq's dbname may be) masked. */
static void add_value(dwl_buf *out, const char *v, size_t n)
{
  const char *end = v + n, *p = v;
  while (p + 3 <= end) {
    const char *sch = memmem(p, (size_t)(end - p), "://", 3);
    if (!sch)
      break;
    const char *ui = sch + 3, *at = ui;
    while (at < end && *at != '@' && *at != '/' && !isspace((unsigned char)*at))
      at++;
    const char *colon = at < end && *at == '@' ? memchr(ui, ':', (size_t)(at - ui)) : NULL;
    if (colon) {
      buf_add(out, p, (size_t)(colon + 1 - p));
      buf_adds(out, "***");
      p = at;
    } else {
      buf_add(out, p, (size_t)(ui - p));
      p = ui;
    }
  }
  buf_add(out, p, (size_t)(end - p));
}

/* libpq's conninfo (psqlODBC's pqopt): "key = value ..." where a value is
 * a word or '...' with \' and \\ escapes; secret keys' values masked. */
static void add_conninfo(dwl_buf *out, const char *v, size_t n)
{
  const char *end = v + n, *p = v;
  while (p < end) {
    const char *k = p;
    while (p < end && *p != '=')
      p++;
    if (p == end) {
      buf_add(out, k, (size_t)(end - k));
      return;
    }
    int secret = is_secret_key(k, (size_t)(p - k));
    buf_add(out, k, (size_t)(p + 1 - k));
    const char *val = ++p;
    while (p < end && isspace((unsigned char)*p))
      p++;
    if (p < end && *p == '\'') {
      for (p++; p < end && *p != '\''; p++)
        if (*p == '\\' && p + 1 < end)
          p++;
      if (p < end)
        p++;
    } else {
      while (p < end && !isspace((unsigned char)*p))
        p++;
    }
    if (secret)
      buf_adds(out, "***");
    else
      add_value(out, val, (size_t)(p - val));
  }
}

/* Connection strings are KEY=VALUE pairs separated by ';', where a value
 * may be wrapped in braces {..} to contain ';' ('}}' escapes a brace).
 * One attribute at p: its name k[0..klen) (klen = 0: text without '=',
 * copied through), its value's start v (after the '=' and spaces), the
 * '}' closing a braced value (NULL: none), and its end (at the ';' or the
 * string's end). */
typedef struct conn_attr {
  const char *k, *eq, *v, *vclose, *end;
  size_t klen;
} conn_attr;

static void conn_attr_at(const char *p, conn_attr *a)
{
  const char *eq = p, *end;
  while (*eq && *eq != '=' && *eq != ';')
    eq++;
  a->k = p;
  a->eq = eq;
  a->vclose = NULL;
  if (*eq != '=') {
    a->klen = 0;
    a->v = a->end = eq;
    return;
  }
  const char *v = eq + 1;
  while (*v == ' ')
    v++;
  if (*v == '{') {
    end = v + 1;
    while (*end && !a->vclose) {
      if (end[0] == '}' && end[1] == '}')
        end += 2;
      else if (end[0] == '}')
        a->vclose = end++;
      else
        end++;
    }
    while (*end && *end != ';')
      end++;
  } else {
    end = v;
    while (*end && *end != ';')
      end++;
  }
  a->klen = (size_t)(eq - p);
  a->v = v;
  a->end = end;
}

int odbc_conn_has_attr(const char *cs, const char *name)
{
  const char *p = cs ? cs : "";
  while (*p) {
    conn_attr a;
    conn_attr_at(p, &a);
    if (a.klen && key_is(a.k, a.klen, name))
      return 1;
    p = *a.end ? a.end + 1 : a.end;
  }
  return 0;
}

size_t odbc_conn_first_braced(const char *cs)
{
  const char *p = cs ? cs : "";
  while (*p) {
    conn_attr a;
    conn_attr_at(p, &a);
    if (a.klen && *a.v == '{')
      return (size_t)(p - cs);
    p = *a.end ? a.end + 1 : a.end;
  }
  return (size_t)(p - (cs ? cs : p));
}

char *odbc_redact(const char *cs)
{
  dwl_buf out;
  buf_init(&out, 0);
  const char *p = cs ? cs : "";
  while (*p) {
    conn_attr a;
    conn_attr_at(p, &a);
    const char *eq = a.eq, *v = a.v, *vclose = a.vclose, *end = a.end;
    if (*eq != '=') {  /* no value: copy through */
      end = *eq ? eq + 1 : eq;
      buf_add(&out, p, (size_t)(end - p));
      p = end;
      continue;
    }
    size_t klen = a.klen;
    buf_add(&out, p, klen + 1);
    if (is_secret_key(p, klen)) {
      buf_adds(&out, "***");
    } else if (key_is(p, klen, "pqopt")) {
      const char *in = vclose ? v + 1 : eq + 1, *stop = vclose ? vclose : end;
      buf_add(&out, eq + 1, (size_t)(in - (eq + 1)));
      add_conninfo(&out, in, (size_t)(stop - in));
      buf_add(&out, stop, (size_t)(end - stop));
    } else {
      add_value(&out, eq + 1, (size_t)(end - eq - 1));
    }
    if (*end == ';') {
      buf_addc(&out, ';');
      end++;
    }
    p = end;
  }
  return buf_steal(&out);
}

void odbc_diag_text(SQLSMALLINT htype, SQLHANDLE h, dwl_buf *b)
{
  SQLCHAR state[6] = "", msg[1024];
  SQLINTEGER native = 0;
  SQLSMALLINT len;
  for (SQLSMALLINT i = 1; i <= 3; i++) {
    if (!SQL_SUCCEEDED(SQLGetDiagRec(htype, h, i, state, &native, msg, sizeof msg, &len)))
      break;
    /* Drivers end messages with newlines; keep one line per diagnostic. */
    size_t n = strlen((char *)msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
      msg[--n] = '\0';
    buf_printf(b, "%s%s [%s %ld]", b->len ? "; " : "", (char *)msg, (char *)state, (long)native);
  }
  if (!b->data)
    buf_adds(b, "unknown ODBC error");
}
