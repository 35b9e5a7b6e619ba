/* Reading the job file's YAML: errors with FILE:LINE:COL, node helpers,
 * the positions of the keys given, the readers of typed values (strings,
 * enums, durations, lists, counts, limits, booleans), and the checks of
 * the file's shape before libyaml loads it. */
#include "spec_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "expand.h"
#include "suggest.h"

/* A job file nests four levels deep (load.deletes.where ...); libyaml
 * takes time quadratic in the depth of flow collections ([[[[...), so a
 * file nested deeper than this is refused before it is loaded. */
#define SPEC_MAX_DEPTH 64
/* No list or mapping of a job needs more entries than a table has
 * columns (at most 4096); checks of entries against each other (duplicate
 * keys, names) are then bounded however hostile the file. */
#define SPEC_MAX_ENTRIES 4096

/* ---- errors ---------------------------------------------------------------- */

int perr(pctx *c, int line, int col, const char *fmt, ...)
{
  char msg[1800];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *path = c->path;
  if (line > SPEC_INCLUDE_LINE && c->s && c->s->include) {
    path = c->s->include;  /* a node copied from the included file */
    line -= SPEC_INCLUDE_LINE;
  }
  return err_setc(c->err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: %s", path, line, col, msg);
}

int oom(pctx *c)
{
  return err_set(c->err, DWL_EXIT_FAILED, "%s: out of memory", c->path);
}

yaml_node_t *node_at(pctx *c, int id)
{
  return yaml_document_get_node(c->doc, id);
}

const char *sval(const yaml_node_t *n)
{
  return (const char *)n->data.scalar.value;
}

/* YAML 1.2 core-schema null, but only when plain: a quoted "null" is text. */
int is_null(const yaml_node_t *n)
{
  if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return 0;
  const char *v = sval(n);
  size_t l = n->data.scalar.length;
  return l == 0 || (l == 1 && v[0] == '~') ||
         (l == 4 && (!memcmp(v, "null", 4) || !memcmp(v, "Null", 4) || !memcmp(v, "NULL", 4)));
}

const char *kind_name(const yaml_node_t *n)
{
  switch (n->type) {
  case YAML_SEQUENCE_NODE: return "a list";
  case YAML_MAPPING_NODE: return "a mapping";
  case YAML_SCALAR_NODE: return is_null(n) ? "null" : "a string";
  default: return "nothing";
  }
}

int lookup(const char *const *names, const char *word)
{
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], word) == 0)
      return i;
  return -1;
}

void join_names(const char *const *names, char *out, size_t cap)
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
char *scalar_text(pctx *c, const yaml_node_t *n)
{
  if (memchr(sval(n), '\0', n->data.scalar.length)) {
    perr(c, NPOS(n), "value contains a NUL character");
    return NULL;
  }
  char *res, *bad = NULL;
  switch ((c->conn ? expand_conn_string : expand_env)(sval(n), &res, &bad)) {
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

int add_pos(pctx *c, const char *sect, const char *key, const yaml_node_t *k)
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

/* The position of one column of a list, or of one key of a plugin
 * option's mapping, as "NAME[ITEM]" (spec_key_at finds it): checks made
 * later against the source's declared columns point at the entry itself. */
int add_item_pos(pctx *c, const char *name, const char *item, const yaml_node_t *k)
{
  dwl_buf b;
  buf_init(&b, 0);
  if (buf_printf(&b, "%s[%s]", name, item) != 0) {
    buf_free(&b);
    return oom(c);
  }
  int rc = add_pos(c, NULL, b.data, k);
  buf_free(&b);
  return rc;
}

/* Position of a given key, else of `fallback`, else 1:1. */
void key_pos(pctx *c, const char *key, const char *fallback, int *line, int *col)
{
  if (spec_key_pos(c->s, key, line, col) == 0)
    return;
  if (fallback && spec_key_pos(c->s, fallback, line, col) == 0)
    return;
  *line = *col = 1;
}

int given(pctx *c, const char *key)
{
  int l, col;
  return spec_key_pos(c->s, key, &l, &col) == 0;
}

/* The key of a mapping pair: a string, not given earlier in the same
 * mapping (libyaml's document loader does not check that). */
const char *pair_key(pctx *c, const yaml_node_t *map, const yaml_node_pair_t *p,
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

int unknown_key(pctx *c, const yaml_node_t *k, const char *where,
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

/* Replaces *out (which may hold a default) with the value of `v`. */
int get_str(pctx *c, const yaml_node_t *v, const char *name, int flags, char **out)
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

int get_enum(pctx *c, const yaml_node_t *v, const char *name,
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
int get_duration(pctx *c, const yaml_node_t *v, const char *name, long long *out)
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

void list_free(spec_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

int list_push(pctx *c, spec_list *l, char *str)
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

const char *list_find(const spec_list *l, const char *name)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcasecmp(l->v[i], name) == 0)
      return l->v[i];
  return NULL;
}

/* A list of strings; a lone string is a one-element list.  Column lists
 * reject empty and repeated (case-insensitively, as SQL would) names. */
int get_list(pctx *c, const yaml_node_t *v, const char *name, int columns, spec_list *out)
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
    if (columns && add_item_pos(c, name, t, v) != 0) {
      free(t);
      return -1;
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
    if (columns && add_item_pos(c, name, t, item) != 0) {
      free(t);
      return -1;
    }
    if (list_push(c, out, t) != 0)
      return -1;
  }
  return 0;
}

int expect_mapping(pctx *c, const yaml_node_t *v, const char *name)
{
  if (v->type == YAML_MAPPING_NODE)
    return 0;
  return perr(c, NPOS(v), "%s: expected a mapping, found %s", name, kind_name(v));
}

/* load.max_rejects: a count, 0 or more. */
int get_count(pctx *c, const yaml_node_t *v, const char *name, long long *out)
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

/* load.max_deletes: a count, a percentage or all. */
int get_limit(pctx *c, const yaml_node_t *v, const char *name, spec_limit *out)
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

/* load.memory_budget: a size (spec_parse_size). */
int get_size(pctx *c, const yaml_node_t *v, const char *name, long long *out)
{
  char *t = NULL;
  if (get_str(c, v, name, STR_NONEMPTY, &t) != 0)
    return -1;
  int rc = spec_parse_size(t, out);
  if (rc != 0)
    perr(c, NPOS(v), "%s: expected " SPEC_SIZE_FORMS ", more than 0 and at most 1 PiB, found '%s'", name, t);
  free(t);
  return rc;
}

/* A YAML boolean, as the plugins' boolean options take them. */
int get_bool(pctx *c, const yaml_node_t *v, const char *name, int *out)
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

int yaml_error(pctx *c, const yaml_parser_t *p, const char *data, size_t len)
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
int check_shape(pctx *c, const char *data, size_t len)
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
