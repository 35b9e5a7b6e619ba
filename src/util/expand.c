/* ${VAR} expansion of job file values: ${NAME}, ${NAME:-default} (nested,
 * bounded), $$ for a literal $, and the variant for ODBC connection
 * strings that braces a substituted attribute value when it needs it. */
#include "expand.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* Bounds recursion on ${A:-${B:-...}} so hostile input cannot blow the
 * stack; nobody nests defaults this deep on purpose. */
#define EXPAND_MAX_NEST 32

static int name_start(char ch)
{
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

static int name_char(char ch)
{
  return name_start(ch) || (ch >= '0' && ch <= '9');
}

static int expand_part(const char *in, size_t *i, dwl_buf *out, int depth, char **bad_var);

/* Expands the one reference ${NAME} or ${NAME:-default} at in[*i] (which
 * is "${") into out and moves *i past it.  `out` NULL means "scan only":
 * a default that is not taken must still be well-formed, but its
 * variables are not looked up (as in the shell). */
static int expand_ref(const char *in, size_t *i, dwl_buf *out, int depth, char **bad_var)
{
  size_t start = *i + 2, j = start;
  if (!name_start(in[j]))
    return EXP_SYNTAX;
  while (name_char(in[j]))
    j++;
  if (in[j] != '}' && !(in[j] == ':' && in[j + 1] == '-'))
    return EXP_SYNTAX;
  char *name = strndup(in + start, j - start);
  if (!name)
    return EXP_NOMEM;
  const char *val = out ? getenv(name) : NULL;
  if (in[j] == '}') {
    if (out && !val) {
      if (bad_var)
        *bad_var = name;
      else
        free(name);
      return EXP_UNSET;
    }
    free(name);
    if (out && buf_adds(out, val) != 0)
      return EXP_NOMEM;
    *i = j + 1;
    return EXP_OK;
  }
  free(name);
  int take_default = out && (!val || !*val);
  if (out && !take_default && buf_adds(out, val) != 0)
    return EXP_NOMEM;
  *i = j + 2;
  int rc = expand_part(in, i, take_default ? out : NULL, depth + 1, bad_var);
  if (rc != EXP_OK)
    return rc;
  if (in[*i] != '}')
    return EXP_SYNTAX;
  (*i)++;
  return EXP_OK;
}

/* Expands from in[*i].  With `depth` > 0 it stops before the '}' that
 * closes the enclosing ${VAR:-...}. */
static int expand_part(const char *in, size_t *i, dwl_buf *out, int depth, char **bad_var)
{
  if (depth > EXPAND_MAX_NEST)
    return EXP_SYNTAX;
  while (in[*i]) {
    char ch = in[*i];
    if (ch == '}' && depth > 0)
      return EXP_OK;
    if (ch != '$' || (in[*i + 1] != '$' && in[*i + 1] != '{')) {
      if (out && buf_addc(out, ch) != 0)
        return EXP_NOMEM;
      (*i)++;
      continue;
    }
    if (in[*i + 1] == '$') {
      if (out && buf_addc(out, '$') != 0)
        return EXP_NOMEM;
      *i += 2;
      continue;
    }
    int rc = expand_ref(in, i, out, depth, bad_var);
    if (rc != EXP_OK)
      return rc;
  }
  return depth > 0 ? EXP_SYNTAX : EXP_OK;  /* unterminated default */
}

int expand_env(const char *in, char **res, char **bad_var)
{
  dwl_buf b;
  size_t i = 0;
  buf_init(&b, 0);
  *res = NULL;
  if (bad_var)
    *bad_var = NULL;
  int rc = expand_part(in, &i, &b, 0, bad_var);
  if (rc != EXP_OK) {
    buf_free(&b);
    return rc;
  }
  *res = buf_steal(&b);
  return *res ? EXP_OK : EXP_NOMEM;
}

/* Appends v as an ODBC attribute value: in braces, '}' doubled, when it
 * holds what would otherwise end or change it (';', a brace, spaces at
 * either end); as it is otherwise. */
static int add_conn_value(dwl_buf *out, const char *v, size_t n, int in_braces)
{
  int brace = !in_braces && n &&
              (memchr(v, ';', n) || memchr(v, '{', n) || memchr(v, '}', n) || v[0] == ' ' || v[n - 1] == ' ');
  if (!in_braces && !brace)
    return buf_add(out, v, n);
  if (brace)
    buf_addc(out, '{');
  for (size_t k = 0; k < n; k++)
    buf_add(out, v[k] == '}' ? "}}" : v + k, v[k] == '}' ? 2 : 1);
  if (brace)
    buf_addc(out, '}');
  return buf_failed(out) ? -1 : 0;  /* a failed append poisons the rest */
}

/* ${VAR} expansion of an ODBC connection string (KEY=VALUE;...): a
 * reference that is the whole value of an attribute (Pwd=${DW_PW}) is
 * braced when its value needs it, so the driver sees all of it and the
 * redaction of messages finds its end; one inside a braced value
 * (Pwd={${DW_PW}}) gets its '}' doubled; one that is only part of an
 * unbraced value, or stands for whole attributes, goes in as it is. */
int expand_conn_string(const char *in, char **res, char **bad_var)
{
  dwl_buf b, v;
  size_t i = 0;
  int rc = EXP_OK, in_key = 1, at_value = 0, in_braces = 0;
  buf_init(&b, 0);
  buf_init(&v, 0);
  *res = NULL;
  if (bad_var)
    *bad_var = NULL;
  while (in[i] && rc == EXP_OK) {
    char ch = in[i];
    if (ch == '$' && in[i + 1] == '{') {
      buf_reset(&v);
      rc = expand_ref(in, &i, &v, 0, bad_var);
      if (rc != EXP_OK)
        break;
      int whole = at_value && (in[i] == ';' || in[i] == '\0');
      const char *val = v.data ? v.data : "";
      if (in_braces || whole)
        rc = add_conn_value(&b, val, v.len, in_braces) != 0 ? EXP_NOMEM : EXP_OK;
      else
        rc = buf_add(&b, val, v.len) != 0 ? EXP_NOMEM : EXP_OK;
      at_value = 0;
      continue;
    }
    if (ch == '$' && in[i + 1] == '$') {
      rc = buf_addc(&b, '$') != 0 ? EXP_NOMEM : EXP_OK;
      i += 2;
      at_value = 0;
      continue;
    }
    /* Where the template's own text puts us: a key runs to its '=', a
     * value starts after it (spaces allowed), braces open at a value's
     * start and close at a single '}', and ';' ends the attribute. */
    if (in_braces) {
      if (ch == '}' && in[i + 1] == '}') {
        rc = buf_add(&b, "}}", 2) != 0 ? EXP_NOMEM : EXP_OK;
        i += 2;
        continue;
      }
      in_braces = ch != '}';
    } else if (in_key) {
      in_key = ch != '=';
      at_value = ch == '=';
    } else if (ch == ';') {
      in_key = 1;
      at_value = 0;
    } else if (ch == '{' && at_value) {
      in_braces = 1;
      at_value = 0;
    } else if (ch != ' ') {
      at_value = 0;
    }
    if (buf_addc(&b, ch) != 0)
      rc = EXP_NOMEM;
    i++;
  }
  buf_free(&v);
  if (rc == EXP_OK && !(*res = buf_steal(&b)))
    rc = EXP_NOMEM;
  buf_free(&b);
  return rc;
}

char *spec_expand_env(const char *in, char **bad_var)
{
  char *res;
  expand_env(in, &res, bad_var);
  return res;
}

char *spec_expand_conn(const char *in, char **bad_var)
{
  char *res;
  expand_conn_string(in, &res, bad_var);
  return res;
}
