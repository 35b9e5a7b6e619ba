/* The job spec: loading and parsing a job file into a dwl_spec (read.c
 * reads the YAML, keys.c walks the key table, cross.c checks the keys
 * against each other), its lookups, load.max_deletes limits, and
 * spec_free. */
#include "spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "buf.h"
#include "spec_keys.h"
#include "spec_read.h"
#include "ts.h"

/* A job file is a page of YAML; the cap only stops `dwload /dev/zero`. */
#define SPEC_MAX_FILE ((size_t)16 << 20)

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

const char *spec_key_at(const dwl_spec *s, const char *key, int *line, int *col)
{
  spec_key_pos(s, key, line, col);
  if (*line > SPEC_INCLUDE_LINE && s->include) {
    *line -= SPEC_INCLUDE_LINE;  /* given by the included file (include.c) */
    return s->include;
  }
  return s->path;
}

const spec_opt *spec_source_opt(const dwl_spec *s, const char *name)
{
  for (size_t i = 0; s && i < s->n_source_opts; i++)
    if (s->source_opts[i].name && strcmp(s->source_opts[i].name, name) == 0)
      return &s->source_opts[i];
  return NULL;
}

void spec_free(dwl_spec *s)
{
  if (!s)
    return;
  free(s->path);
  free(s->dir);
  free(s->include);
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
  free(s->run_id_column);
  free(s->lmd);
  free(s->lmd_format);
  free(s->reject_file);
  list_free(&s->key);
  list_free(&s->partition_by);
  list_free(&s->type2);
  list_free(&s->type1);
  list_free(&s->ignore_null_cols);
  list_free(&s->lmd_ties);
  free(s->delete_column);
  list_free(&s->delete_values);
  list_free(&s->truncate_values);
  list_free(&s->partition);
  list_free(&s->col_include);
  list_free(&s->col_exclude);
  list_free(&s->rename_from);
  list_free(&s->rename_to);
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

int spec_parse_size(const char *text, long long *out)
{
  static const struct { const char *unit; int shift; } units[] = {
    {"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
  /* Digits only before the unit: no sign, space or exponent. */
  size_t digits = strspn(text, "0123456789");
  if (digits == 0 || digits > 16)
    return -1;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(text + digits, units[i].unit) != 0)
      continue;
    long long n = strtoll(text, NULL, 10);
    if (n == 0 || n > (1LL << 50) >> units[i].shift)
      return -1;
    *out = n << units[i].shift;
    return 0;
  }
  return -1;
}

void spec_format_limit(const spec_limit *l, char *out, size_t n)
{
  if (l->kind == LIMIT_ALL)
    snprintf(out, n, "all");
  else
    snprintf(out, n, "%.15g%s", l->value, l->kind == LIMIT_PERCENT ? "%" : "");
}


/* ---- file handling ------------------------------------------------------- */

int spec_read_file(const char *path, const char *what, char **data, size_t *len, dwl_error *err)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return err_set(err, DWL_EXIT_USAGE, "%s: cannot open %s: %s", path, what, strerror(errno));
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
        return err_set(err, DWL_EXIT_USAGE, "%s: %s is larger than %zu bytes", path, what,
                       SPEC_MAX_FILE);
      return err_set(err, DWL_EXIT_FAILED, "%s: out of memory", path);
    }
  }
  if (ferror(f)) {
    int e = errno;
    buf_free(&b);
    fclose(f);
    return err_set(err, DWL_EXIT_USAGE, "%s: cannot read %s: %s", path, what, strerror(e));
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

/* The top-level job name of a document spec_parse refused: the first
 * document's `job`, given once, a valid name (keys.c's rules), or "". */
static void refused_job_name(yaml_document_t *doc, char *job, size_t n)
{
  yaml_node_t *root = yaml_document_get_root_node(doc);
  const char *name = NULL;
  int seen = 0;
  if (root && root->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
      yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
      if (!k || k->type != YAML_SCALAR_NODE || strcmp((const char *)k->data.scalar.value, "job") != 0)
        continue;
      seen++;  /* a repeated key is read.c's error: no name then */
      name = v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
    }
  }
  char why[256];
  if (seen == 1 && name && *name && strlen(name) < n && spec_job_name_check(name, why, sizeof why) == 0)
    snprintf(job, n, "%s", name);
}

static dwl_spec *parse(const char *path, const char *data, size_t len, char *job, size_t n, dwl_error *err)
{
  dwl_spec *s = calloc(1, sizeof *s);
  if (!s) {
    err_set(err, DWL_EXIT_FAILED, "%s: out of memory", path);
    return NULL;
  }
  /* Defaults: the key table's column names; zero for the rest (each
   * enum's first name) but these four.  tests/unit/test_spec_keys checks
   * that they are the defaults the table declares. */
  s->path = strdup(path);
  int failed = !s->path || spec_keys_defaults(s) != 0;
  s->max_deletes = (spec_limit){LIMIT_PERCENT, 50};
  s->future_tolerance_us = DWL_US_PER_DAY;
  s->lock_timeout_ms = DWL_LOCK_TIMEOUT_MS;
  s->partitions = 8;
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
    /* include: first; it adds nodes, so the root is read after it */
    yaml_node_t *root = include_merge(&c) == 0 ? yaml_document_get_root_node(&doc) : NULL;
    yaml_document_t more;
    if (err_isset(err)) {
      /* the included file is wrong where perr says */
    } else if (!root) {
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
    if (rc != 0 && job)
      refused_job_name(&doc, job, n);
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

dwl_spec *spec_parse(const char *path, const char *data, size_t len, dwl_error *err)
{
  return parse(path, data, len, NULL, 0, err);
}

dwl_spec *spec_load_job(const char *path, char *job, size_t n, dwl_error *err)
{
  if (job && n)
    job[0] = '\0';
  char *data = NULL;
  size_t len = 0;
  if (spec_read_file(path, "job file", &data, &len, err) != 0)
    return NULL;
  dwl_spec *s = parse(path, data, len, job && n ? job : NULL, n, err);
  free(data);
  return s;
}

dwl_spec *spec_load(const char *path, dwl_error *err)
{
  return spec_load_job(path, NULL, 0, err);
}

int spec_parse_lmd_text(const dwl_spec *s, const char *text, dwl_ts *out)
{
  size_t n = strlen(text);
  return ts_parse(text, n, out) == 0 || (s->lmd_format && ts_parse_format(text, n, s->lmd_format, out) == 0) ? 0 : -1;
}
