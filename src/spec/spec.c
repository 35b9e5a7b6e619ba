/* The job spec: reading the YAML job file, ${VAR} expansion, validation
 * with FILE:LINE:COL messages, defaults, and the dwl_spec it produces. */
#include "spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "buf.h"
#include "ts.h"

/* A job file is a page of YAML; the cap only stops `dwload /dev/zero`. */
#define SPEC_MAX_FILE ((size_t)16 << 20)
#define SPEC_MAX_JOB 64
/* Bounds recursion on ${A:-${B:-...}} so hostile input cannot blow the
 * stack; nobody nests defaults this deep on purpose. */
#define SPEC_MAX_NEST 32
/* A job file nests four levels deep (load.deletes.where ...); libyaml
 * takes time quadratic in the depth of flow collections ([[[[...), so a
 * file nested deeper than this is refused before it is loaded. */
#define SPEC_MAX_DEPTH 64
/* No list or mapping of a job needs more entries than a table has
 * columns (at most 4096); checks of entries against each other (duplicate
 * keys, names) are then bounded however hostile the file. */
#define SPEC_MAX_ENTRIES 4096

/* ---- ${VAR} expansion ---------------------------------------------------- */

enum { EXP_OK = 0, EXP_UNSET, EXP_SYNTAX, EXP_NOMEM };

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
  if (depth > SPEC_MAX_NEST)
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

static int expand(const char *in, char **res, char **bad_var)
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
static int expand_conn(const char *in, char **res, char **bad_var)
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
  expand(in, &res, bad_var);
  return res;
}

char *spec_expand_conn(const char *in, char **bad_var)
{
  char *res;
  expand_conn(in, &res, bad_var);
  return res;
}

/* ---- suggestions --------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  size_t *row = malloc((lb + 1) * sizeof *row);
  if (!row)
    return SIZE_MAX;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
      size_t best = diag + cost;
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  size_t d = row[lb];
  free(row);
  return d;
}

const char *spec_suggest(const char *word, const char *const *candidates)
{
  size_t wl = strlen(word);
  size_t limit = wl / 3 > 2 ? wl / 3 : 2;
  const char *best = NULL;
  size_t bestd = SIZE_MAX;
  for (size_t i = 0; candidates && candidates[i]; i++) {
    size_t d = edit_distance(word, candidates[i]);
    if (d < bestd) {
      bestd = d;
      best = candidates[i];
    }
  }
  if (!best || bestd > limit)
    return NULL;
  /* Rewriting every letter of a short word is not a typo. */
  size_t bl = strlen(best);
  if (bestd >= (wl > bl ? wl : bl))
    return NULL;
  return best;
}

/* ---- lookups ------------------------------------------------------------- */

int spec_key_pos(const dwl_spec *s, const char *key, int *line, int *col)
{
  for (size_t i = 0; s && i < s->npos; i++) {
    if (strcmp(s->pos[i].key, key) == 0) {
      *line = s->pos[i].line;
      *col = s->pos[i].col;
      return 0;
    }
  }
  *line = *col = 0;
  return -1;
}

const spec_opt *spec_source_opt(const dwl_spec *s, const char *name)
{
  for (size_t i = 0; s && i < s->n_source_opts; i++)
    if (s->source_opts[i].name && strcmp(s->source_opts[i].name, name) == 0)
      return &s->source_opts[i];
  return NULL;
}

static void list_free(spec_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

void spec_free(dwl_spec *s)
{
  if (!s)
    return;
  free(s->path);
  free(s->dir);
  free(s->job);
  free(s->source_plugin);
  for (size_t i = 0; i < s->n_source_opts; i++) {
    spec_opt *o = &s->source_opts[i];
    free(o->name);
    free(o->scalar);
    list_free(&o->list);
    list_free(&o->vals);
  }
  free(s->source_opts);
  free(s->target_connection);
  free(s->target_table);
  free(s->lmd);
  free(s->lmd_format);
  free(s->reject_file);
  list_free(&s->key);
  list_free(&s->type2);
  list_free(&s->type1);
  free(s->delete_column);
  list_free(&s->delete_values);
  free(s->surrogate_key);
  free(s->valid_from);
  free(s->valid_to);
  free(s->current);
  free(s->deleted);
  free(s->open_end);
  for (size_t i = 0; i < s->npos; i++)
    free(s->pos[i].key);
  free(s->pos);
  free(s);
}

/* ---- parsing context and errors ------------------------------------------ */

typedef struct pctx {
  const char *path;
  yaml_document_t *doc;
  dwl_error *err;
  dwl_spec *s;
  int conn;  /* the value being read is an ODBC connection string */
} pctx;

/* libyaml marks are 0-based; people count from 1. */
#define NPOS(n) (int)(n)->start_mark.line + 1, (int)(n)->start_mark.column + 1

static int perr(pctx *c, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(pctx *c, int line, int col, const char *fmt, ...)
{
  char msg[1800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return err_setc(c->err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: %s", c->path, line, col, msg);
}

static int oom(pctx *c)
{
  return err_set(c->err, DWL_EXIT_FAILED, "%s: out of memory", c->path);
}

static yaml_node_t *node_at(pctx *c, int id)
{
  return yaml_document_get_node(c->doc, id);
}

static const char *sval(const yaml_node_t *n)
{
  return (const char *)n->data.scalar.value;
}

/* YAML 1.2 core-schema null, but only when plain: a quoted "null" is text. */
static int is_null(const yaml_node_t *n)
{
  if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return 0;
  const char *v = sval(n);
  size_t l = n->data.scalar.length;
  return l == 0 || (l == 1 && v[0] == '~') ||
         (l == 4 && (!memcmp(v, "null", 4) || !memcmp(v, "Null", 4) || !memcmp(v, "NULL", 4)));
}

static const char *kind_name(const yaml_node_t *n)
{
  switch (n->type) {
  case YAML_SEQUENCE_NODE: return "a list";
  case YAML_MAPPING_NODE: return "a mapping";
  case YAML_SCALAR_NODE: return is_null(n) ? "null" : "a string";
  default: return "nothing";
  }
}

static int lookup(const char *const *names, const char *word)
{
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], word) == 0)
      return i;
  return -1;
}

static void join_names(const char *const *names, char *out, size_t cap)
{
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; names[i]; i++) {
    int n = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", names[i]);
    if (n < 0 || (size_t)n >= cap - used)
      return;
    used += (size_t)n;
  }
}

/* Expanded text of a scalar; NULL with the error recorded. */
static char *scalar_text(pctx *c, const yaml_node_t *n)
{
  if (memchr(sval(n), '\0', n->data.scalar.length)) {
    perr(c, NPOS(n), "value contains a NUL character");
    return NULL;
  }
  char *res, *bad = NULL;
  switch ((c->conn ? expand_conn : expand)(sval(n), &res, &bad)) {
  case EXP_OK:
    return res;
  case EXP_UNSET:
    perr(c, NPOS(n), "environment variable '%s' is not set", bad);
    free(bad);
    return NULL;
  case EXP_SYNTAX:
    /* The value itself is not quoted: it may hold a secret. */
    perr(c, NPOS(n), "malformed variable reference in this value "
         "(write ${NAME} or ${NAME:-default}; $$ is a literal $)");
    return NULL;
  default:
    oom(c);
    return NULL;
  }
}

static int add_pos(pctx *c, const char *sect, const char *key, const yaml_node_t *k)
{
  dwl_spec *s = c->s;
  dwl_buf b;
  buf_init(&b, 0);
  if ((sect ? buf_printf(&b, "%s.%s", sect, key) : buf_adds(&b, key)) != 0) {
    buf_free(&b);
    return oom(c);
  }
  spec_pos *np = realloc(s->pos, (s->npos + 1) * sizeof *np);
  if (!np) {
    buf_free(&b);
    return oom(c);
  }
  s->pos = np;
  np[s->npos].key = buf_steal(&b);
  np[s->npos].line = (int)k->start_mark.line + 1;
  np[s->npos].col = (int)k->start_mark.column + 1;
  s->npos++;
  return 0;
}

/* Position of a given key, else of `fallback`, else 1:1. */
static void key_pos(pctx *c, const char *key, const char *fallback, int *line, int *col)
{
  if (spec_key_pos(c->s, key, line, col) == 0)
    return;
  if (fallback && spec_key_pos(c->s, fallback, line, col) == 0)
    return;
  *line = *col = 1;
}

static int given(pctx *c, const char *key)
{
  int l, col;
  return spec_key_pos(c->s, key, &l, &col) == 0;
}

/* The key of a mapping pair: a string, not given earlier in the same
 * mapping (libyaml's document loader does not check that). */
static const char *pair_key(pctx *c, const yaml_node_t *map, const yaml_node_pair_t *p,
                            const char *where)
{
  const yaml_node_t *k = node_at(c, p->key);
  if (k->type != YAML_SCALAR_NODE) {
    perr(c, NPOS(k), "expected a string key %s, found %s", where, kind_name(k));
    return NULL;
  }
  if (memchr(sval(k), '\0', k->data.scalar.length)) {
    perr(c, NPOS(k), "key contains a NUL character");
    return NULL;
  }
  for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
    const yaml_node_t *k2 = node_at(c, q->key);
    if (k2->type == YAML_SCALAR_NODE && k2->data.scalar.length == k->data.scalar.length &&
        memcmp(sval(k2), sval(k), k->data.scalar.length) == 0) {
      perr(c, NPOS(k), "duplicate key '%s' %s (lines %d and %d)", sval(k), where,
           (int)k2->start_mark.line + 1, (int)k->start_mark.line + 1);
      return NULL;
    }
  }
  return sval(k);
}

static int unknown_key(pctx *c, const yaml_node_t *k, const char *where,
                       const char *const *known)
{
  char names[512];
  const char *sug = spec_suggest(sval(k), known);
  if (sug)
    return perr(c, NPOS(k), "unknown key '%s' %s; did you mean '%s'?", sval(k), where, sug);
  join_names(known, names, sizeof names);
  return perr(c, NPOS(k), "unknown key '%s' %s (valid keys: %s)", sval(k), where, names);
}

/* ---- typed values -------------------------------------------------------- */

enum { STR_NULLABLE = 1, STR_NONEMPTY = 2 };

/* Replaces *out (which may hold a default) with the value of `v`. */
static int get_str(pctx *c, const yaml_node_t *v, const char *name, int flags, char **out)
{
  if (is_null(v)) {
    if (!(flags & STR_NULLABLE))
      return perr(c, NPOS(v), "%s: expected a string, found null", name);
    free(*out);
    *out = NULL;
    return 0;
  }
  if (v->type != YAML_SCALAR_NODE)
    return perr(c, NPOS(v), "%s: expected a string%s, found %s", name,
                flags & STR_NULLABLE ? " or null" : "", kind_name(v));
  char *t = scalar_text(c, v);
  if (!t)
    return -1;
  if ((flags & STR_NONEMPTY) && !*t) {
    free(t);
    return perr(c, NPOS(v), "%s: must not be empty", name);
  }
  free(*out);
  *out = t;
  return 0;
}

static int get_enum(pctx *c, const yaml_node_t *v, const char *name,
                    const char *const *names, int *out)
{
  char *t = NULL;
  char all[256];
  if (get_str(c, v, name, 0, &t) != 0)
    return -1;
  int i = lookup(names, t);
  if (i >= 0) {
    free(t);
    *out = i;
    return 0;
  }
  join_names(names, all, sizeof all);
  const char *sug = spec_suggest(t, names);
  if (sug)
    perr(c, NPOS(v), "%s: '%s' is not one of %s; did you mean '%s'?", name, t, all, sug);
  else
    perr(c, NPOS(v), "%s: '%s' is not one of %s", name, t, all);
  free(t);
  return -1;
}

/* A duration such as 90s, 15m, 2h, 1d or 1h30m: whole numbers, each with a
 * unit (s, m, h, d), largest unit first; at most 366 days. */
static int get_duration(pctx *c, const yaml_node_t *v, const char *name, long long *out)
{
  char *t = NULL;
  if (get_str(c, v, name, STR_NONEMPTY, &t) != 0)
    return -1;
  static const struct { char unit; long long us; } units[] = {
    {'d', 86400000000LL}, {'h', 3600000000LL}, {'m', 60000000LL}, {'s', 1000000LL}};
  long long total = 0;
  size_t next_unit = 0;
  const char *p = strcmp(t, "0") == 0 ? "" : t;
  int ok = 1;
  while (ok && *p) {
    if (*p < '0' || *p > '9') {
      ok = 0;
      break;
    }
    long long n = 0;
    while (*p >= '0' && *p <= '9' && n <= 366LL * 86400)
      n = n * 10 + (*p++ - '0');
    size_t u = next_unit;
    while (u < sizeof units / sizeof units[0] && units[u].unit != *p)
      u++;
    if (u == sizeof units / sizeof units[0] || n > 366LL * 86400) {
      ok = 0;
      break;
    }
    total += n * units[u].us;
    next_unit = u + 1;
    p++;
  }
  if (ok && total > 366LL * 86400000000LL)
    ok = 0;
  int rc = 0;
  if (!ok)
    rc = perr(c, NPOS(v), "%s: '%s' is not a duration of at most 366 days (such as 90s, 15m, 2h, 1d or 1h30m)",
              name, t);
  else
    *out = total;
  free(t);
  return rc;
}

static int list_push(pctx *c, spec_list *l, char *str)
{
  char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);
  if (!nv) {
    free(str);
    return oom(c);
  }
  l->v = nv;
  l->v[l->n++] = str;
  return 0;
}

static const char *list_find(const spec_list *l, const char *name)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcasecmp(l->v[i], name) == 0)
      return l->v[i];
  return NULL;
}

/* A list of strings; a lone string is a one-element list.  Column lists
 * reject empty and repeated (case-insensitively, as SQL would) names. */
static int get_list(pctx *c, const yaml_node_t *v, const char *name, int columns, spec_list *out)
{
  list_free(out);
  if (v->type == YAML_SCALAR_NODE && !is_null(v)) {
    char *t = scalar_text(c, v);
    if (!t)
      return -1;
    if (columns && !*t) {
      free(t);
      return perr(c, NPOS(v), "%s: column names must not be empty", name);
    }
    return list_push(c, out, t);
  }
  if (v->type != YAML_SEQUENCE_NODE)
    return perr(c, NPOS(v), "%s: expected a list of strings, found %s", name, kind_name(v));
  size_t idx = 0;
  for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
       it++, idx++) {
    const yaml_node_t *item = node_at(c, *it);
    if (item->type != YAML_SCALAR_NODE || is_null(item))
      return perr(c, NPOS(item), "%s: item %zu: expected a string, found %s", name, idx + 1,
                  kind_name(item));
    char *t = scalar_text(c, item);
    if (!t)
      return -1;
    if (columns && !*t) {
      free(t);
      return perr(c, NPOS(item), "%s: item %zu: column names must not be empty", name, idx + 1);
    }
    if (columns && list_find(out, t)) {
      perr(c, NPOS(item), "%s: column '%s' is listed twice", name, t);
      free(t);
      return -1;
    }
    if (list_push(c, out, t) != 0)
      return -1;
  }
  return 0;
}

static int expect_mapping(pctx *c, const yaml_node_t *v, const char *name)
{
  if (v->type == YAML_MAPPING_NODE)
    return 0;
  return perr(c, NPOS(v), "%s: expected a mapping, found %s", name, kind_name(v));
}

/* ---- sections ------------------------------------------------------------ */

static const char *const top_keys[] = {"version", "job", "source", "target", "load",
                                       "dimension", NULL};
static const char *const target_keys[] = {"connection", "table", "lock_timeout", NULL};
static const char *const load_keys[] = {"mode", "lmd", "lmd_format", "key", "type2", "type1",
                                        "type1_scope", "deletes", "delete_style", "lookup",
                                        "max_rejects", "reject_file", "null_keys", "lookback", "late",
                                        "engine", "max_deletes", "allow_empty", "future_tolerance",
                                        NULL};
static const char *const deletes_keys[] = {"column", "values", NULL};
static const char *const dim_keys[] = {"surrogate_key", "surrogate_strategy", "valid_from",
                                       "valid_to", "current", "deleted", "open_end",
                                       "close", NULL};

/* Indexed by the enums in spec.h. */
static const char *const mode_names[] = {"append", "replace", "scd2", "upsert", NULL};
static const char *const t1scope_names[] = {"current", "all", NULL};
static const char *const delstyle_names[] = {"expire", "tombstone", NULL};
static const char *const sk_names[] = {"sequence", "hash", NULL};
static const char *const close_names[] = {"at_next", "day_before", "second_before", NULL};
static const char *const deletes_names[] = {"none", "absent", NULL};
static const char *const lookup_names[] = {"auto", "scan", "keys", NULL};
static const char *const null_keys_names[] = {"allow", "reject", NULL};

/* load.max_rejects: a count, 0 or more. */
static int get_count(pctx *c, const yaml_node_t *v, const char *name, long long *out)
{
  char *t = NULL;
  if (get_str(c, v, name, 0, &t) != 0)
    return -1;
  char *end;
  errno = 0;
  long long n = strtoll(t, &end, 10);
  int bad = errno || end == t || *end || n < 0 || t[0] == '-' || t[0] == '+' || t[0] == ' ';
  if (bad)
    perr(c, NPOS(v), "%s: expected a whole number of rows, 0 or more, found '%s'", name, t);
  free(t);
  *out = n;
  return bad ? -1 : 0;
}
static const char *const late_names[] = {"repair", "reject", "ignore", NULL};

/* load.future_tolerance: a duration, or off (-1): lmd values in the future
 * are then a documented business date, not a clock error. */
static int get_future_tolerance(pctx *c, const yaml_node_t *v, const char *name, long long *us)
{
  if (v->type == YAML_SCALAR_NODE && strcmp((const char *)v->data.scalar.value, "off") == 0) {
    *us = -1;
    return 0;
  }
  return get_duration(c, v, name, us);
}
static const char *const engine_names[] = {"memory", "pushdown", NULL};

int spec_parse_limit(const char *text, spec_limit *out)
{
  if (strcmp(text, "all") == 0) {
    *out = (spec_limit){LIMIT_ALL, 0};
    return 0;
  }
  /* Digits, an optional fraction for a percentage, nothing else: no sign,
   * space, exponent or hex, which strtod would take. */
  size_t len = strlen(text), digits = strspn(text, "0123456789");
  int pct = len > 0 && text[len - 1] == '%';
  size_t body = len - (size_t)pct;
  if (digits == 0 || (digits < body && !(pct && text[digits] == '.' && digits + 1 < body &&
                                         strspn(text + digits + 1, "0123456789") == body - digits - 1)))
    return -1;
  errno = 0;
  double v = strtod(text, NULL);
  if (errno || (pct && v > 100) || (!pct && v > 1e15))
    return -1;
  *out = (spec_limit){pct ? LIMIT_PERCENT : LIMIT_COUNT, v};
  return 0;
}

void spec_format_limit(const spec_limit *l, char *out, size_t n)
{
  if (l->kind == LIMIT_ALL)
    snprintf(out, n, "all");
  else
    snprintf(out, n, "%.15g%s", l->value, l->kind == LIMIT_PERCENT ? "%" : "");
}

/* load.max_deletes: a count, a percentage or all. */
static int get_limit(pctx *c, const yaml_node_t *v, const char *name, spec_limit *out)
{
  char *t = NULL;
  if (get_str(c, v, name, 0, &t) != 0)
    return -1;
  int rc = spec_parse_limit(t, out);
  if (rc != 0)
    perr(c, NPOS(v), "%s: expected a number of keys (1000), a percentage of the current keys from 0%% to 100%% "
         "(50%%) or all, found '%s'", name, t);
  free(t);
  return rc;
}

/* A YAML boolean, as the plugins' boolean options take them. */
static int get_bool(pctx *c, const yaml_node_t *v, const char *name, int *out)
{
  static const char *const yes[] = {"true", "yes", "on", "1", NULL};
  static const char *const no[] = {"false", "no", "off", "0", NULL};
  char *t = NULL;
  if (get_str(c, v, name, 0, &t) != 0)
    return -1;
  int rc = 0;
  if (lookup(yes, t) >= 0)
    *out = 1;
  else if (lookup(no, t) >= 0)
    *out = 0;
  else
    rc = perr(c, NPOS(v), "%s: expected true or false, found '%s'", name, t);
  free(t);
  return rc;
}

static int parse_version(pctx *c, const yaml_node_t *v)
{
  if (v->type != YAML_SCALAR_NODE || is_null(v))
    return perr(c, NPOS(v), "version: expected 1, found %s", kind_name(v));
  char *t = scalar_text(c, v);
  if (!t)
    return -1;
  int rc = 0;
  if (strcmp(t, "1") != 0)
    rc = perr(c, NPOS(v), "version: unsupported spec version '%s' (this dwload reads version 1)",
              t);
  free(t);
  return rc;
}

static int parse_job(pctx *c, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  if (get_str(c, v, "job", STR_NONEMPTY, &s->job) != 0)
    return -1;
  size_t len = strlen(s->job);
  if (len > SPEC_MAX_JOB)
    return perr(c, NPOS(v), "job: name is %zu characters long; at most %d are allowed", len,
                SPEC_MAX_JOB);
  for (size_t i = 0; i < len; i++) {
    char ch = s->job[i];
    if (!name_char(ch) && ch != '.' && ch != '-')
      return perr(c, NPOS(v), "job: '%s' may only contain A-Z, a-z, 0-9, '_', '.' and '-'",
                  s->job);
  }
  /* The job names files (checkpoint, lock): "." and ".." would not. */
  if (strcmp(s->job, ".") == 0 || strcmp(s->job, "..") == 0)
    return perr(c, NPOS(v), "job: '%s' is not a usable job name", s->job);
  return 0;
}

static int parse_opt(pctx *c, const char *key, const yaml_node_t *k, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  char dotted[300];
  snprintf(dotted, sizeof dotted, "source.%s", key);
  spec_opt *no = realloc(s->source_opts, (s->n_source_opts + 1) * sizeof *no);
  if (!no)
    return oom(c);
  s->source_opts = no;
  spec_opt *o = &no[s->n_source_opts++];
  memset(o, 0, sizeof *o);
  o->line = (int)k->start_mark.line + 1;
  o->col = (int)k->start_mark.column + 1;
  o->vline = (int)v->start_mark.line + 1;
  o->vcol = (int)v->start_mark.column + 1;
  if (!(o->name = strdup(key)))
    return oom(c);

  if (v->type == YAML_SCALAR_NODE) {
    if (is_null(v))
      return perr(c, NPOS(v), "%s: expected a value, found null", dotted);
    o->kind = SPEC_OPT_SCALAR;
    c->conn = strcmp(key, "connection") == 0;  /* the odbc plugin's */
    o->scalar = scalar_text(c, v);
    c->conn = 0;
    return o->scalar ? 0 : -1;
  }
  if (v->type == YAML_SEQUENCE_NODE) {
    o->kind = SPEC_OPT_LIST;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
      const yaml_node_t *item = node_at(c, *it);
      if (item->type != YAML_SCALAR_NODE || is_null(item))
        return perr(c, NPOS(item), "%s: list items must be scalars, found %s", dotted,
                    kind_name(item));
      char *t = scalar_text(c, item);
      if (!t || list_push(c, &o->list, t) != 0)
        return -1;
    }
    return 0;
  }
  if (v->type == YAML_MAPPING_NODE) {
    char where[320];
    snprintf(where, sizeof where, "in %s", dotted);
    o->kind = SPEC_OPT_MAP;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top;
         p++) {
      const char *mk = pair_key(c, v, p, where);
      if (!mk)
        return -1;
      const yaml_node_t *mv = node_at(c, p->value);
      if (mv->type != YAML_SCALAR_NODE || is_null(mv))
        return perr(c, NPOS(mv), "%s.%s: expected a scalar, found %s "
                    "(plugin option mappings hold scalars only)", dotted, mk, kind_name(mv));
      char *kc = strdup(mk);
      if (!kc)
        return oom(c);
      if (list_push(c, &o->list, kc) != 0)
        return -1;
      char *t = scalar_text(c, mv);
      if (!t || list_push(c, &o->vals, t) != 0)
        return -1;
    }
    return 0;
  }
  return perr(c, NPOS(v), "%s: unsupported value", dotted);
}

static int parse_source(pctx *c, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  if (expect_mapping(c, v, "source") != 0)
    return -1;
  s->source_line = (int)v->start_mark.line + 1;
  s->source_col = (int)v->start_mark.column + 1;
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, v, p, "in source");
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    if (add_pos(c, "source", key, k) != 0)
      return -1;
    /* Every key but plugin belongs to the plugin, which checks them later. */
    if (strcmp(key, "plugin") == 0) {
      if (get_str(c, val, "source.plugin", STR_NONEMPTY, &s->source_plugin) != 0)
        return -1;
    } else if (parse_opt(c, key, k, val) != 0) {
      return -1;
    }
  }
  if (!s->source_plugin)
    return perr(c, NPOS(v), "source: missing required key 'plugin'");
  return 0;
}

/* target.lock_timeout: a duration of at least one second (MariaDB counts
 * its lock waits in whole seconds). */
static int get_lock_timeout(pctx *c, const yaml_node_t *v, const char *name, long long *ms)
{
  long long us;
  if (get_duration(c, v, name, &us) != 0)
    return -1;
  if (us < DWL_US_PER_SEC)
    return perr(c, NPOS(v), "%s: expected at least 1s: every lock wait ends, and none can be shorter", name);
  *ms = us / 1000;
  return 0;
}

static int parse_target(pctx *c, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  if (expect_mapping(c, v, "target") != 0)
    return -1;
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, v, p, "in target");
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    int idx = lookup(target_keys, key);
    if (idx < 0)
      return unknown_key(c, k, "in target", target_keys);
    if (add_pos(c, "target", key, k) != 0)
      return -1;
    char dotted[32];
    snprintf(dotted, sizeof dotted, "target.%s", key);
    if (idx == 2) {
      if (get_lock_timeout(c, val, dotted, &s->lock_timeout_ms) != 0)
        return -1;
      continue;
    }
    char **dst = idx == 0 ? &s->target_connection : &s->target_table;
    c->conn = idx == 0;
    int rc = get_str(c, val, dotted, STR_NONEMPTY, dst);
    c->conn = 0;
    if (rc != 0)
      return -1;
  }
  for (int i = 0; i < 2; i++) {
    char *have = i == 0 ? s->target_connection : s->target_table;
    if (!have)
      return perr(c, NPOS(v), "target: missing required key '%s'", target_keys[i]);
  }
  return 0;
}

static int parse_deletes(pctx *c, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  if (v->type == YAML_SCALAR_NODE && !is_null(v)) {
    char *t = scalar_text(c, v);
    if (!t)
      return -1;
    int i = lookup(deletes_names, t);
    if (i >= 0) {
      s->deletes = i == 0 ? DEL_NONE : DEL_ABSENT;
      free(t);
      return 0;
    }
    const char *sug = spec_suggest(t, deletes_names);
    perr(c, NPOS(v), "load.deletes: '%s' is not one of none, absent "
         "(or a mapping with column and values)%s%s%s", t,
         sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
    free(t);
    return -1;
  }
  if (v->type != YAML_MAPPING_NODE)
    return perr(c, NPOS(v), "load.deletes: expected none, absent or a mapping, found %s",
                kind_name(v));
  int have_values = 0;
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, v, p, "in load.deletes");
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    int idx = lookup(deletes_keys, key);
    if (idx < 0)
      return unknown_key(c, k, "in load.deletes", deletes_keys);
    if (add_pos(c, "load.deletes", key, k) != 0)
      return -1;
    if (idx == 0) {
      if (get_str(c, val, "load.deletes.column", STR_NONEMPTY, &s->delete_column) != 0)
        return -1;
    } else {
      if (get_list(c, val, "load.deletes.values", 0, &s->delete_values) != 0)
        return -1;
      if (s->delete_values.n == 0)
        return perr(c, NPOS(val), "load.deletes.values: expected at least one value");
      have_values = 1;
    }
  }
  if (!s->delete_column)
    return perr(c, NPOS(v), "load.deletes: missing required key 'column'");
  if (!have_values)
    return perr(c, NPOS(v), "load.deletes: missing required key 'values'");
  s->deletes = DEL_COLUMN;
  return 0;
}

static int parse_load(pctx *c, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  if (is_null(v))
    return 0;  /* `load:` with every key commented out */
  if (expect_mapping(c, v, "load") != 0)
    return -1;
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, v, p, "in load");
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    int idx = lookup(load_keys, key);
    if (idx < 0)
      return unknown_key(c, k, "in load", load_keys);
    if (add_pos(c, "load", key, k) != 0)
      return -1;
    char dotted[32];
    snprintf(dotted, sizeof dotted, "load.%s", key);
    int rc;
    switch (idx) {
    case 0: rc = get_enum(c, val, dotted, mode_names, &s->mode); break;
    case 1: rc = get_str(c, val, dotted, STR_NONEMPTY, &s->lmd); break;
    case 2: rc = get_str(c, val, dotted, STR_NONEMPTY, &s->lmd_format); break;
    case 3: rc = get_list(c, val, dotted, 1, &s->key); break;
    case 4:
      rc = get_list(c, val, dotted, 1, &s->type2);
      s->type2_given = 1;
      break;
    case 5: rc = get_list(c, val, dotted, 1, &s->type1); break;
    case 6: rc = get_enum(c, val, dotted, t1scope_names, &s->type1_scope); break;
    case 7: rc = parse_deletes(c, val); break;
    case 8: rc = get_enum(c, val, dotted, delstyle_names, &s->delete_style); break;
    case 9: rc = get_enum(c, val, dotted, lookup_names, &s->lookup); break;
    case 10: rc = get_count(c, val, dotted, &s->max_rejects); break;
    case 11: rc = get_str(c, val, dotted, STR_NONEMPTY, &s->reject_file); break;
    case 12: rc = get_enum(c, val, dotted, null_keys_names, &s->null_keys); break;
    case 13: rc = get_duration(c, val, dotted, &s->lookback_us); break;
    case 14: rc = get_enum(c, val, dotted, late_names, &s->late); break;
    case 15: rc = get_enum(c, val, dotted, engine_names, &s->engine); break;
    case 16: rc = get_limit(c, val, dotted, &s->max_deletes); break;
    case 17: rc = get_bool(c, val, dotted, &s->allow_empty); break;
    default: rc = get_future_tolerance(c, val, dotted, &s->future_tolerance_us); break;
    }
    if (rc != 0)
      return -1;
  }
  return 0;
}

static int parse_dimension(pctx *c, const yaml_node_t *v)
{
  dwl_spec *s = c->s;
  if (is_null(v))
    return 0;
  if (expect_mapping(c, v, "dimension") != 0)
    return -1;
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, v, p, "in dimension");
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    int idx = lookup(dim_keys, key);
    if (idx < 0)
      return unknown_key(c, k, "in dimension", dim_keys);
    if (add_pos(c, "dimension", key, k) != 0)
      return -1;
    char dotted[40];
    snprintf(dotted, sizeof dotted, "dimension.%s", key);
    const int opt = STR_NULLABLE | STR_NONEMPTY;
    int rc;
    switch (idx) {
    case 0: rc = get_str(c, val, dotted, opt, &s->surrogate_key); break;
    case 1: rc = get_enum(c, val, dotted, sk_names, &s->sk_strategy); break;
    case 2: rc = get_str(c, val, dotted, STR_NONEMPTY, &s->valid_from); break;
    case 3: rc = get_str(c, val, dotted, STR_NONEMPTY, &s->valid_to); break;
    case 4: rc = get_str(c, val, dotted, opt, &s->current); break;
    case 5: rc = get_str(c, val, dotted, opt, &s->deleted); break;
    case 6:
      rc = get_str(c, val, dotted, opt, &s->open_end);
      if (rc == 0 && s->open_end) {
        dwl_ts ts;
        if (ts_parse(s->open_end, strlen(s->open_end), &ts) != 0)
          rc = perr(c, NPOS(val), "dimension.open_end: '%s' is not a timestamp "
                    "(write e.g. 9999-12-31 or 9999-12-31 23:59:59)", s->open_end);
      }
      break;
    default: rc = get_enum(c, val, dotted, close_names, &s->close); break;
    }
    if (rc != 0)
      return -1;
  }
  return 0;
}

static int parse_root(pctx *c, const yaml_node_t *root)
{
  if (root->type != YAML_MAPPING_NODE)
    return perr(c, NPOS(root), "the job file must be a mapping (job, source, target, ...), "
                "found %s", kind_name(root));
  for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
       p < root->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, root, p, "at top level");
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    int idx = lookup(top_keys, key);
    if (idx < 0)
      return unknown_key(c, k, "at top level", top_keys);
    if (add_pos(c, NULL, key, k) != 0)
      return -1;
    int rc;
    switch (idx) {
    case 0: rc = parse_version(c, val); break;
    case 1: rc = parse_job(c, val); break;
    case 2: rc = parse_source(c, val); break;
    case 3: rc = parse_target(c, val); break;
    case 4: rc = parse_load(c, val); break;
    default: rc = parse_dimension(c, val); break;
    }
    if (rc != 0)
      return -1;
  }
  static const char *const required[] = {"job", "source", "target", NULL};
  for (int i = 0; required[i]; i++)
    if (!given(c, required[i]))
      return perr(c, NPOS(root), "missing required key '%s'", required[i]);
  return 0;
}

/* ---- cross-field checks -------------------------------------------------- */

/* Of two dotted keys, the one written later: that is the one that
 * contradicts what was already said.  Returns 0 for a, 1 for b. */
static int later_of(pctx *c, const char *a, const char *b, int *line, int *col)
{
  int la, ca, lb, cb;
  int ha = spec_key_pos(c->s, a, &la, &ca) == 0;
  int hb = spec_key_pos(c->s, b, &lb, &cb) == 0;
  if (hb && (!ha || lb > la || (lb == la && cb > ca))) {
    *line = lb;
    *col = cb;
    return 1;
  }
  key_pos(c, a, NULL, line, col);
  return 0;
}

typedef struct named_list {
  const char *name;       /* dotted key */
  const spec_list *l;
} named_list;

static int check_lists(pctx *c)
{
  dwl_spec *s = c->s;
  const named_list lists[3] = {{"load.key", &s->key}, {"load.type2", &s->type2},
                               {"load.type1", &s->type1}};
  int line, col;
  for (int a = 0; a < 3; a++) {
    for (int b = a + 1; b < 3; b++) {
      for (size_t i = 0; i < lists[a].l->n; i++) {
        const char *name = lists[a].l->v[i];
        const char *other = list_find(lists[b].l, name);
        if (!other)
          continue;
        int w = later_of(c, lists[a].name, lists[b].name, &line, &col);
        return perr(c, line, col, "%s: column '%s' is also in %s",
                    w ? lists[b].name : lists[a].name, w ? other : name,
                    w ? lists[a].name : lists[b].name);
      }
    }
  }
  if (s->lmd) {
    for (int a = 0; a < 3; a++) {
      if (!list_find(lists[a].l, s->lmd))
        continue;
      key_pos(c, lists[a].name, NULL, &line, &col);
      return perr(c, line, col, "%s: column '%s' is the lmd column (load.lmd) and cannot be "
                  "listed here", lists[a].name, s->lmd);
    }
  }
  if (s->delete_column && list_find(&s->key, s->delete_column)) {
    key_pos(c, "load.deletes.column", "load.deletes", &line, &col);
    return perr(c, line, col, "load.deletes.column: '%s' is a key column (load.key)",
                s->delete_column);
  }
  return 0;
}

static int check_bookkeeping(pctx *c)
{
  dwl_spec *s = c->s;
  const struct {
    const char *key;
    const char *val;
  } bk[5] = {{"dimension.surrogate_key", s->surrogate_key},
             {"dimension.valid_from", s->valid_from},
             {"dimension.valid_to", s->valid_to},
             {"dimension.current", s->current},
             {"dimension.deleted", s->deleted}};
  int line, col;
  for (int a = 0; a < 5; a++) {
    for (int b = a + 1; b < 5; b++) {
      if (!bk[a].val || !bk[b].val || strcasecmp(bk[a].val, bk[b].val) != 0)
        continue;
      int w = later_of(c, bk[a].key, bk[b].key, &line, &col);
      const char *other = w ? bk[a].key : bk[b].key;
      return perr(c, line, col, "%s: column name '%s' is also used by %s%s",
                  w ? bk[b].key : bk[a].key, w ? bk[b].val : bk[a].val, other,
                  given(c, other) ? "" : " (its default)");
    }
  }
  /* The bookkeeping columns only exist in an scd2 dimension. */
  if (s->mode != MODE_SCD2)
    return 0;
  const named_list lists[3] = {{"load.key", &s->key}, {"load.type2", &s->type2},
                               {"load.type1", &s->type1}};
  for (int a = 0; a < 5; a++) {
    if (!bk[a].val)
      continue;
    for (int b = 0; b < 3; b++) {
      if (!list_find(lists[b].l, bk[a].val))
        continue;
      int w = later_of(c, bk[a].key, lists[b].name, &line, &col);
      if (w)
        return perr(c, line, col, "%s: column '%s' is also the bookkeeping column %s%s",
                    lists[b].name, bk[a].val, bk[a].key,
                    given(c, bk[a].key) ? "" : " (its default; rename it in dimension)");
      return perr(c, line, col, "%s: '%s' is also a column in %s", bk[a].key, bk[a].val,
                  lists[b].name);
    }
    /* valid_from may be the lmd column itself: the source's own change time
     * then starts each version.  Any other bookkeeping column may not. */
    if (a != 1 && s->lmd && strcasecmp(s->lmd, bk[a].val) == 0) {
      int w = later_of(c, bk[a].key, "load.lmd", &line, &col);
      if (w)
        return perr(c, line, col, "load.lmd: column '%s' is also the bookkeeping column %s%s",
                    s->lmd, bk[a].key,
                    given(c, bk[a].key) ? "" : " (its default; rename it in dimension)");
      return perr(c, line, col, "%s: '%s' is also the lmd column (load.lmd)", bk[a].key,
                  bk[a].val);
    }
  }
  return 0;
}

/* What load.engine: pushdown cannot compute as the memory engine does
 * (src/engine/pushdown.c), refused when the spec is checked; NULL when none. */
static const char *pushdown_refusal(const dwl_spec *s)
{
  if (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT)
    return "applies only to modes scd2 and upsert";
  if (s->deletes == DEL_ABSENT && s->mode == MODE_SCD2)
    return "does not support deletes: absent in mode scd2 (a deletion stamped with the run's clock moves "
           "later rows in the memory engine); use engine: memory";
  /* Its messages name a key by values fetched into a fixed array. */
  if (s->key.n > SPEC_PUSHDOWN_MAX_KEY)
    return "supports keys of at most 16 columns";
  if (s->lookup != LOOKUP_AUTO)
    return "does not read current versions into memory, so load.lookup does not apply; remove it";
  /* The memory engine gives the closed versions of a key revived after an
   * expire-style deletion the revival's type 1 values; pushdown's SQL
   * only overwrites the key's versions it joins to the current one. */
  if (s->mode == MODE_SCD2 && s->type1_scope == T1_ALL && s->type1.n > 0 && s->deletes == DEL_COLUMN &&
      s->delete_style == DELSTYLE_EXPIRE)
    return "does not support type1_scope: all with deletes in delete_style: expire (a revival's type 1 "
           "values reach the closed versions only in engine: memory)";
  /* Late rows fail a pushdown run (check_late): it never repairs history. */
  if (s->lookback_us > 0)
    return "does not repair history, so load.lookback (which rereads late rows) needs engine: memory";
  if (s->late == LATE_IGNORE || (s->late == LATE_REJECT && s->max_rejects > 0))
    return "fails the run on a late row: load.late ignore, or reject into a reject file, needs engine: memory";
  return NULL;
}

static int check_cross(pctx *c)
{
  dwl_spec *s = c->s;
  int line, col;
  const char *mode = mode_names[s->mode];
  if ((s->mode == MODE_SCD2 || s->mode == MODE_UPSERT) && s->key.n == 0) {
    if (given(c, "load.key")) {
      key_pos(c, "load.key", NULL, &line, &col);
      return perr(c, line, col, "load.key: mode %s requires at least one key column", mode);
    }
    key_pos(c, "load.mode", "load", &line, &col);
    return perr(c, line, col, "load: mode %s requires key (the business key columns)", mode);
  }
  if (s->mode == MODE_SCD2 && !s->lmd) {
    key_pos(c, "load.mode", "load", &line, &col);
    return perr(c, line, col, "load: mode scd2 requires lmd (the last-modified column)");
  }
  if (s->lmd_format && !s->lmd) {
    key_pos(c, "load.lmd_format", NULL, &line, &col);
    return perr(c, line, col, "load.lmd_format requires load.lmd");
  }
  if (given(c, "load.future_tolerance") && !s->lmd) {
    key_pos(c, "load.future_tolerance", NULL, &line, &col);
    return perr(c, line, col, "load.future_tolerance requires load.lmd (it bounds the lmd's values)");
  }
  if (s->mode != MODE_SCD2) {
    static const char *const scd2_only[] = {"load.type2", "load.type1", "load.type1_scope",
                                            "load.delete_style", NULL};
    for (int i = 0; scd2_only[i]; i++) {
      if (!given(c, scd2_only[i]))
        continue;
      key_pos(c, scd2_only[i], NULL, &line, &col);
      return perr(c, line, col, "%s applies only to mode scd2 (mode is %s)", scd2_only[i],
                  mode);
    }
  }
  if (s->deletes != DEL_NONE && s->mode != MODE_SCD2 && s->mode != MODE_UPSERT) {
    key_pos(c, "load.deletes", NULL, &line, &col);
    return perr(c, line, col, "load.deletes applies only to modes scd2 and upsert (mode is %s)",
                mode);
  }
  if (s->lookup != LOOKUP_AUTO && s->mode != MODE_SCD2 && s->mode != MODE_UPSERT) {
    key_pos(c, "load.lookup", NULL, &line, &col);
    return perr(c, line, col, "load.lookup applies only to modes scd2 and upsert (mode is %s)", mode);
  }
  /* Judging absence needs every current key, so it cannot look up only some. */
  if (s->lookup == LOOKUP_KEYS && s->deletes == DEL_ABSENT) {
    key_pos(c, "load.lookup", NULL, &line, &col);
    return perr(c, line, col, "load.lookup: keys cannot judge deletes: absent (it needs every current key); use scan");
  }
  /* Rereading rows is safe only where rows already loaded are no-ops. */
  static const char *const scd2_history[] = {"load.lookback", "load.late", NULL};
  for (int i = 0; s->mode != MODE_SCD2 && scd2_history[i]; i++) {
    if (!given(c, scd2_history[i]))
      continue;
    key_pos(c, scd2_history[i], NULL, &line, &col);
    return perr(c, line, col, "%s applies only to mode scd2 (mode is %s)", scd2_history[i], mode);
  }
  /* A tombstone is told from a live version only by the deleted flag. */
  if (s->mode == MODE_SCD2 && s->delete_style == DELSTYLE_TOMBSTONE && !s->deleted) {
    key_pos(c, "load.delete_style", NULL, &line, &col);
    return perr(c, line, col, "load.delete_style: tombstone needs a deleted column (dimension.deleted is null)");
  }
  if (s->max_rejects > 0 && !s->reject_file) {
    key_pos(c, "load.max_rejects", NULL, &line, &col);
    return perr(c, line, col, "load.max_rejects: rejected rows need a place to go: set load.reject_file");
  }
  /* The guards of deletions by absence (guard.c): where nothing is deleted
   * for being missing from the source, they would guard nothing. */
  if (given(c, "load.max_deletes") && s->deletes != DEL_ABSENT) {
    key_pos(c, "load.max_deletes", NULL, &line, &col);
    return perr(c, line, col, "load.max_deletes applies only with deletes: absent");
  }
  if (given(c, "load.allow_empty") && s->deletes != DEL_ABSENT && s->mode != MODE_REPLACE) {
    key_pos(c, "load.allow_empty", NULL, &line, &col);
    return perr(c, line, col, "load.allow_empty applies only with deletes: absent or mode replace (mode is %s)",
                mode);
  }
  if (s->null_keys == NULLKEYS_REJECT && s->key.n == 0) {
    key_pos(c, "load.null_keys", NULL, &line, &col);
    return perr(c, line, col, "load.null_keys: reject needs load.key");
  }
  /* What pushdown cannot compute as the memory engine does is refused here,
   * never left to differ. */
  const char *why = s->engine == ENGINE_PUSHDOWN ? pushdown_refusal(s) : NULL;
  if (why) {
    key_pos(c, "load.engine", NULL, &line, &col);
    return perr(c, line, col, "load.engine: pushdown %s", why);
  }
  if (check_lists(c) != 0)
    return -1;
  return check_bookkeeping(c);
}

/* ---- file handling ------------------------------------------------------- */

static int read_all(const char *path, char **data, size_t *len, dwl_error *err)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return err_set(err, DWL_EXIT_USAGE, "%s: cannot open job file: %s", path, strerror(errno));
  dwl_buf b;
  char chunk[8192];
  size_t n;
  buf_init(&b, SPEC_MAX_FILE);
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (buf_add(&b, chunk, n) != 0) {
      int big = buf_failed(&b) == BUF_TOOBIG;
      buf_free(&b);
      fclose(f);
      if (big)
        return err_set(err, DWL_EXIT_USAGE, "%s: job file is larger than %zu bytes", path,
                       SPEC_MAX_FILE);
      return err_set(err, DWL_EXIT_FAILED, "%s: out of memory", path);
    }
  }
  if (ferror(f)) {
    int e = errno;
    buf_free(&b);
    fclose(f);
    return err_set(err, DWL_EXIT_USAGE, "%s: cannot read job file: %s", path, strerror(e));
  }
  fclose(f);
  *len = b.len;
  *data = buf_steal(&b);
  if (!*data)
    return err_set(err, DWL_EXIT_FAILED, "%s: out of memory", path);
  return 0;
}

/* The job file's folder as an absolute path, without resolving symlinks
 * (a job reached through a link keeps its relative files next to the
 * link); "." and empty components are dropped. */
static char *abs_dir(const char *path)
{
  dwl_buf raw, out;
  buf_init(&raw, 0);
  buf_init(&out, 0);
  if (path[0] != '/') {
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
      return NULL;
    int rc = buf_adds(&raw, cwd);
    free(cwd);
    if (rc != 0 || buf_addc(&raw, '/') != 0)
      goto fail;
  }
  const char *slash = strrchr(path, '/');
  if (slash && buf_add(&raw, path, (size_t)(slash - path) + 1) != 0)
    goto fail;
  const char *p = raw.data ? raw.data : "/";
  while (*p) {
    while (*p == '/')
      p++;
    const char *e = p;
    while (*e && *e != '/')
      e++;
    size_t n = (size_t)(e - p);
    if (n > 0 && !(n == 1 && p[0] == '.')) {
      if (buf_addc(&out, '/') != 0 || buf_add(&out, p, n) != 0)
        goto fail;
    }
    p = e;
  }
  if (out.len == 0 && buf_addc(&out, '/') != 0)
    goto fail;
  buf_free(&raw);
  return buf_steal(&out);
fail:
  buf_free(&raw);
  buf_free(&out);
  return NULL;
}

static void offset_pos(const char *data, size_t len, size_t off, int *line, int *col)
{
  *line = *col = 1;
  for (size_t i = 0; i < off && i < len; i++) {
    if (data[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

static int yaml_error(pctx *c, const yaml_parser_t *p, const char *data, size_t len)
{
  int line, col;
  switch (p->error) {
  case YAML_MEMORY_ERROR:
    return oom(c);
  case YAML_READER_ERROR:
    offset_pos(data, len, p->problem_offset, &line, &col);
    return perr(c, line, col, "cannot read YAML: %s", p->problem ? p->problem : "bad input");
  default:
    line = (int)p->problem_mark.line + 1;
    col = (int)p->problem_mark.column + 1;
    if (p->context)
      return perr(c, line, col, "YAML syntax error: %s (%s at line %d column %d)",
                  p->problem ? p->problem : "invalid YAML", p->context,
                  (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
    return perr(c, line, col, "YAML syntax error: %s", p->problem ? p->problem : "invalid YAML");
  }
}

/* Refuses collections nested deeper than SPEC_MAX_DEPTH or holding more
 * than SPEC_MAX_ENTRIES entries, reading events only up to the first such
 * one.  A syntax error is left to the loader, which reports it. */
static int check_shape(pctx *c, const char *data, size_t len)
{
  yaml_parser_t p;
  yaml_event_t ev;
  if (!yaml_parser_initialize(&p))
    return oom(c);
  yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
  /* events[d]: the child events of the collection open at depth d (a
   * mapping's are its keys and values, two per entry); maps[d]: it is one */
  size_t events[SPEC_MAX_DEPTH + 1] = {0};
  int maps[SPEC_MAX_DEPTH + 1] = {0};
  int depth = 0, rc = 0;
  while (rc == 0 && yaml_parser_parse(&p, &ev)) {
    yaml_event_type_t t = ev.type;
    int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
    int opens = t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT;
    if (depth > 0 && (opens || t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT) &&
        ++events[depth] > (size_t)SPEC_MAX_ENTRIES * (maps[depth] ? 2 : 1))
      rc = perr(c, line, col, "a %s in the job file has more than %d entries",
                maps[depth] ? "mapping" : "list", SPEC_MAX_ENTRIES);
    else if (opens && depth == SPEC_MAX_DEPTH)
      rc = perr(c, line, col, "the job file nests collections more than %d levels deep", SPEC_MAX_DEPTH);
    else if (opens) {
      depth++;
      events[depth] = 0;
      maps[depth] = t == YAML_MAPPING_START_EVENT;
    } else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT)
      depth--;
    yaml_event_delete(&ev);
    if (t == YAML_STREAM_END_EVENT)
      break;
  }
  yaml_parser_delete(&p);
  return rc;
}

static char *dup_or_null(const char *v, int *failed)
{
  char *d = strdup(v);
  if (!d)
    *failed = 1;
  return d;
}

dwl_spec *spec_parse(const char *path, const char *data, size_t len, dwl_error *err)
{
  dwl_spec *s = calloc(1, sizeof *s);
  if (!s) {
    err_set(err, DWL_EXIT_FAILED, "%s: out of memory", path);
    return NULL;
  }
  int failed = 0;
  s->path = dup_or_null(path, &failed);
  s->surrogate_key = dup_or_null("dim_id", &failed);
  s->valid_from = dup_or_null("valid_from", &failed);
  s->valid_to = dup_or_null("valid_to", &failed);
  s->current = dup_or_null("is_current", &failed);
  s->deleted = dup_or_null("is_deleted", &failed);
  s->max_deletes = (spec_limit){LIMIT_PERCENT, 50};
  s->future_tolerance_us = DWL_US_PER_DAY;
  s->lock_timeout_ms = DWL_LOCK_TIMEOUT_MS;
  if (failed) {
    err_set(err, DWL_EXIT_FAILED, "%s: out of memory", path);
    spec_free(s);
    return NULL;
  }

  if (!(s->dir = abs_dir(path))) {
    err_set(err, DWL_EXIT_FAILED, "%s: cannot determine the job file's folder: %s", path,
            strerror(errno));
    spec_free(s);
    return NULL;
  }

  yaml_parser_t parser;
  yaml_document_t doc;
  pctx c = {path, &doc, err, s, 0};
  int rc = -1;
  if (!yaml_parser_initialize(&parser)) {
    oom(&c);
    spec_free(s);
    return NULL;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
  if (check_shape(&c, data, len) != 0) {
    /* refused before loading */
  } else if (!yaml_parser_load(&parser, &doc)) {
    yaml_error(&c, &parser, data, len);
  } else {
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_document_t more;
    if (!root) {
      perr(&c, 1, 1, "the job file is empty (expected a mapping with job, source and target)");
    } else if (!yaml_parser_load(&parser, &more)) {
      yaml_error(&c, &parser, data, len);
    } else {
      /* A second document is most likely a paste error; refusing it beats
       * silently ignoring half of what the user wrote. */
      yaml_node_t *root2 = yaml_document_get_root_node(&more);
      if (root2)
        perr(&c, (int)more.start_mark.line + 1, (int)more.start_mark.column + 1,
             "the job file holds more than one YAML document");
      else
        rc = parse_root(&c, root) == 0 ? check_cross(&c) : -1;
      yaml_document_delete(&more);
    }
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  if (rc != 0) {
    if (!err_isset(err))
      err_set(err, DWL_EXIT_USAGE, "%s: invalid job file", path);
    spec_free(s);
    return NULL;
  }
  return s;
}

dwl_spec *spec_load(const char *path, dwl_error *err)
{
  char *data = NULL;
  size_t len = 0;
  if (read_all(path, &data, &len, err) != 0)
    return NULL;
  dwl_spec *s = spec_parse(path, data, len, err);
  free(data);
  return s;
}
