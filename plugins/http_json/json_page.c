/* Page parsing of the http_json plugin (see json_page.h): jansson parses
 * the body; this file walks dotted paths, turns each record into a row of
 * text values, infers the columns from the first page when `fields` is not
 * given, and reads the next link or cursor. */
#include "json_page.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nested values become compact JSON text.  15 significant digits print
 * 0.1 as 0.1 rather than jansson's default 0.10000000000000001. */
#define NESTED_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15))

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

static const char *kind_name(const json_t *v)
{
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

/* ---- columns -------------------------------------------------------------- */

void jp_cols_init(jp_cols *c)
{
  memset(c, 0, sizeof *c);
}

void jp_cols_free(jp_cols *c)
{
  for (size_t i = 0; i < c->n; i++) {
    free(c->names[i]);
    free(c->paths[i]);
  }
  free(c->names);
  free(c->paths);
  jp_cols_init(c);
}

static int cols_push(jp_cols *c, const char *name, size_t namelen, const char *path)
{
  char **nn = realloc(c->names, (c->n + 1) * sizeof *nn);
  if (!nn)
    return -1;
  c->names = nn;
  char **np = realloc(c->paths, (c->n + 1) * sizeof *np);
  if (!np)
    return -1;
  c->paths = np;
  c->names[c->n] = strndup(name, namelen);
  c->paths[c->n] = path ? strdup(path) : NULL;
  if (!c->names[c->n] || (path && !c->paths[c->n])) {
    free(c->names[c->n]);
    free(c->paths[c->n]);
    return -1;
  }
  c->n++;
  return 0;
}

int jp_cols_add(jp_cols *c, const char *name, const char *path)
{
  c->fixed = 1;
  return cols_push(c, name, strlen(name), path);
}

/* Index of column `name`, starting the search at *hint (records of one API
 * nearly always list their members in the same order, so the hint makes
 * the usual lookup one comparison).  -1 when absent. */
static long cols_find(const jp_cols *c, const char *name, size_t *hint)
{
  for (size_t k = 0; k < c->n; k++) {
    size_t i = (*hint + k) % c->n;
    if (strcmp(c->names[i], name) == 0) {
      *hint = i + 1;
      return (long)i;
    }
  }
  return -1;
}

/* ---- page ----------------------------------------------------------------- */

void jp_page_init(jp_page *p)
{
  memset(p, 0, sizeof *p);
  buf_init(&p->text, 0);
}

static void page_reset(jp_page *p)
{
  p->nrecords = 0;
  buf_reset(&p->text);
  free(p->next);
  p->next = NULL;
  for (size_t i = 0; i < p->nunknown; i++)
    free(p->unknown[i]);
  p->nunknown = 0;
}

void jp_page_free(jp_page *p)
{
  page_reset(p);
  free(p->values);
  free(p->offs);
  free(p->unknown);
  buf_free(&p->text);
  memset(p, 0, sizeof *p);
}

static int note_unknown(jp_page *p, const char *name)
{
  for (size_t i = 0; i < p->nunknown; i++)
    if (strcmp(p->unknown[i], name) == 0)
      return 0;
  char **nu = realloc(p->unknown, (p->nunknown + 1) * sizeof *nu);
  if (!nu)
    return -1;
  p->unknown = nu;
  if (!(p->unknown[p->nunknown] = strdup(name)))
    return -1;
  p->nunknown++;
  return 0;
}

/* ---- values --------------------------------------------------------------- */

/* Follows a dotted path ("data.items", "owner.address.city", "tags.0").
 * A segment of digits indexes an array.  NULL when a step is missing. */
static json_t *walk(json_t *v, const char *path)
{
  const char *s = path;
  while (v && *s) {
    const char *dot = strchr(s, '.');
    size_t len = dot ? (size_t)(dot - s) : strlen(s);
    if (json_is_object(v)) {
      v = json_object_getn(v, s, len);
    } else if (json_is_array(v) && len > 0 && strspn(s, "0123456789") >= len) {
      size_t idx = 0;
      for (size_t i = 0; i < len && idx < ((size_t)1 << 40); i++)
        idx = idx * 10 + (size_t)(s[i] - '0');
      v = json_array_get(v, idx);
    } else {
      return NULL;
    }
    s = dot ? dot + 1 : s + len;
  }
  return v;
}

/* Shortest decimal text that reads back as the same double. */
static int real_text(double d, char *out, size_t cap)
{
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, cap, "%.*g", prec, d);
    if (strtod(out, NULL) == d)
      break;
  }
  return 0;
}

/* Appends one value's text (NUL-terminated) to the page; sets *is_null. */
static int add_value(jp_page *p, json_t *v, int *is_null, size_t *len)
{
  char num[40];
  const char *s = NULL;
  size_t n = 0;
  char *dump = NULL;
  *is_null = 0;
  switch (v ? json_typeof(v) : JSON_NULL) {
  case JSON_STRING:
    s = json_string_value(v);
    n = json_string_length(v);
    break;
  case JSON_INTEGER:
    n = (size_t)snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    s = num;
    break;
  case JSON_REAL:
    real_text(json_real_value(v), num, sizeof num);
    s = num;
    n = strlen(num);
    break;
  case JSON_TRUE:
    s = "true", n = 4;
    break;
  case JSON_FALSE:
    s = "false", n = 5;
    break;
  case JSON_OBJECT:
  case JSON_ARRAY:
    if (!(dump = json_dumps(v, NESTED_FLAGS)))
      return -1;
    s = dump;
    n = strlen(dump);
    break;
  default:
    *is_null = 1;
    *len = 0;
    return 0;
  }
  int rc = buf_add(&p->text, s, n) == 0 && buf_addc(&p->text, '\0') == 0 ? 0 : -1;
  free(dump);
  *len = n;
  return rc;
}

static int reserve_rows(jp_page *p, size_t nrows, size_t ncols)
{
  if (ncols && nrows > ((size_t)-1) / sizeof(dwl_value) / ncols)
    return -1;
  size_t need = nrows * ncols;
  if (need > p->values_cap) {
    dwl_value *nv = realloc(p->values, need * sizeof *nv);
    if (!nv)
      return -1;
    p->values = nv;
    p->values_cap = need;
  }
  if (need > p->offs_cap) {
    size_t *no = realloc(p->offs, need * sizeof *no);
    if (!no)
      return -1;
    p->offs = no;
    p->offs_cap = need;
  }
  return 0;
}

static int infer_cols(jp_cols *cols, json_t *arr)
{
  size_t i;
  json_t *rec;
  json_array_foreach(arr, i, rec) {
    const char *key;
    size_t keylen;
    json_t *val;
    size_t hint = 0;
    json_object_keylen_foreach(rec, key, keylen, val) {
      (void)val;
      if (cols->n == 0 || cols_find(cols, key, &hint) < 0)
        if (cols_push(cols, key, keylen, NULL) != 0)
          return -1;
    }
  }
  return 0;
}

static int read_next(json_t *root, const char *path, jp_page *out, char *err, size_t errlen)
{
  json_t *v = walk(root, path);
  char num[40];
  const char *s;
  if (!v || json_is_null(v))
    return 0;
  if (json_is_string(v)) {
    s = json_string_value(v);
  } else if (json_is_integer(v)) {
    snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    s = num;
  } else {
    return fail(err, errlen, "the next-page path '%s' holds %s, not a string", path, kind_name(v));
  }
  if (!*s)
    return 0;
  if (!(out->next = strdup(s)))
    return fail(err, errlen, "out of memory");
  return 0;
}

static int html_like(const char *body, size_t len)
{
  size_t i = 0;
  while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
    i++;
  return i < len && body[i] == '<';
}

static int parse_error(const char *body, size_t len, const json_error_t *je, char *err, size_t errlen)
{
  if (len == 0)
    return fail(err, errlen, "empty response body, expected JSON");
  if (html_like(body, len))
    return fail(err, errlen, "the response is an HTML page, not JSON");
  /* jansson counts the end of input as one past the last byte */
  if (json_error_code(je) == json_error_premature_end_of_input)
    return fail(err, errlen, "truncated JSON: the body ends after %zu bytes inside a value (line %d, column %d)",
                len, je->line, je->column);
  return fail(err, errlen, "malformed JSON at line %d, column %d (byte %d): %s", je->line, je->column,
              je->position, je->text);
}

static int fill_rows(jp_cols *cols, json_t *arr, jp_page *out, char *err, size_t errlen)
{
  size_t nrec = json_array_size(arr);
  if (reserve_rows(out, nrec, cols->n) != 0)
    return fail(err, errlen, "out of memory");
  out->ncols = cols->n;
  size_t r;
  json_t *rec;
  json_array_foreach(arr, r, rec) {
    if (!json_is_object(rec))
      return fail(err, errlen, "record %zu is %s, not an object", r + 1, kind_name(rec));
    for (size_t c = 0; c < cols->n; c++) {
      json_t *v = cols->paths[c] ? walk(rec, cols->paths[c]) : json_object_get(rec, cols->names[c]);
      size_t at = r * cols->n + c, len;
      int is_null;
      out->offs[at] = out->text.len;
      if (add_value(out, v, &is_null, &len) != 0)
        return fail(err, errlen, "record %zu: the page's values exceed %zu bytes", r + 1, out->text.max);
      out->values[at].is_null = is_null;
      out->values[at].len = len;
    }
    if (!cols->fixed) {
      const char *key;
      json_t *val;
      size_t hint = 0;
      json_object_foreach(rec, key, val) {
        (void)val;
        if (cols_find(cols, key, &hint) < 0 && note_unknown(out, key) != 0)
          return fail(err, errlen, "out of memory");
      }
    }
  }
  out->nrecords = nrec;
  for (size_t i = 0; i < nrec * cols->n; i++)
    out->values[i].data = out->values[i].is_null ? NULL : out->text.data + out->offs[i];
  return 0;
}

int jp_parse(jp_cols *cols, const char *records, const char *next, const char *body, size_t len, jp_page *out,
             char *err, size_t errlen)
{
  page_reset(out);
  json_error_t je;
  json_t *root = json_loadb(body, len, 0, &je);
  if (!root)
    return parse_error(body, len, &je, err, errlen);

  int rc = -1;
  json_t *arr = records && *records ? walk(root, records) : root;
  if (!arr) {
    fail(err, errlen, "the records path '%s' is not in the response", records);
  } else if (!json_is_array(arr)) {
    if (records && *records)
      fail(err, errlen, "the records path '%s' holds %s, not an array", records, kind_name(arr));
    else
      fail(err, errlen, "the response is %s, not an array of records (set the records option to its path)",
           kind_name(arr));
  } else if (!cols->fixed && cols->n == 0 && infer_cols(cols, arr) != 0) {
    fail(err, errlen, "out of memory");
  } else if (fill_rows(cols, arr, out, err, errlen) == 0 && (!next || read_next(root, next, out, err, errlen) == 0)) {
    rc = 0;
  }
  json_decref(root);
  if (rc != 0)
    page_reset(out);
  return rc;
}
