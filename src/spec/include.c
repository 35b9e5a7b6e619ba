/* A job file's top-level `include: FILE`: the settings shared by several
 * jobs, from one YAML file (its path relative to the job file's folder),
 * merged under the job's own before the job is read: a key of the
 * included file that the job does not give is added to the job's
 * document; where both give a mapping the two are merged the same way, a
 * level down; everywhere else the job's value wins.  The nodes copied in
 * keep their line and column in the included file, marked by
 * SPEC_INCLUDE_LINE added to the line, so perr (read.c) names that file. */
#include "spec_read.h"

#include <stdlib.h>
#include <string.h>

/* Copied nodes at most: aliases let a small file name a huge tree, which
 * the copy would write out in full. */
#define INCLUDE_MAX_NODES 100000

typedef struct merge {
  pctx *job;                /* the job's context and document */
  pctx inc;                 /* the included file's (its path, its document) */
  long copied;
} merge;

/* The value of `key` in mapping map of doc, or 0. */
static int map_get(yaml_document_t *doc, int map, const char *key)
{
  yaml_node_t *m = yaml_document_get_node(doc, map);
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(doc, p->key);
    if (k->type == YAML_SCALAR_NODE && strcmp(sval(k), key) == 0)
      return p->value;
  }
  return 0;
}

/* Copies node id of the included document into the job's; its new id, or
 * 0 with the error recorded.  The job's nodes move when it grows: they
 * are named by id only. */
static int copy_node(merge *m, int id)
{
  yaml_document_t *dst = m->job->doc;
  yaml_node_t *n = yaml_document_get_node(m->inc.doc, id);
  if (++m->copied > INCLUDE_MAX_NODES) {
    perr(&m->inc, NPOS(n), "the included file expands to more than %d values", INCLUDE_MAX_NODES);
    return 0;
  }
  int out;
  const yaml_char_t *tag = n->tag;
  switch (n->type) {
  case YAML_SCALAR_NODE:
    out = yaml_document_add_scalar(dst, tag, n->data.scalar.value, (int)n->data.scalar.length, n->data.scalar.style);
    break;
  case YAML_SEQUENCE_NODE:
    out = yaml_document_add_sequence(dst, tag, n->data.sequence.style);
    for (int i = 0; out && n->data.sequence.items.start + i < n->data.sequence.items.top; i++) {
      int item = copy_node(m, n->data.sequence.items.start[i]);
      if (!item || !yaml_document_append_sequence_item(dst, out, item))
        return item ? oom(m->job), 0 : 0;
    }
    break;
  case YAML_MAPPING_NODE:
    out = yaml_document_add_mapping(dst, tag, n->data.mapping.style);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; out && p < n->data.mapping.pairs.top; p++) {
      int k = copy_node(m, p->key), v = k ? copy_node(m, p->value) : 0;
      if (!v || !yaml_document_append_mapping_pair(dst, out, k, v))
        return v ? oom(m->job), 0 : 0;
    }
    break;
  default:
    out = 0;
  }
  if (!out) {
    if (!err_isset(m->job->err))
      oom(m->job);
    return 0;
  }
  yaml_node_t *o = yaml_document_get_node(dst, out);
  o->start_mark = n->start_mark;
  o->start_mark.line += SPEC_INCLUDE_LINE;
  o->end_mark = o->start_mark;
  return out;
}

/* Merges the included mapping src under the job's mapping dst. */
static int merge_map(merge *m, int dst, int src, int top)
{
  yaml_node_t *s = yaml_document_get_node(m->inc.doc, src);
  for (yaml_node_pair_t *p = s->data.mapping.pairs.start; p < s->data.mapping.pairs.top; p++) {
    /* pair_key refuses a key that is not a string or given twice there */
    const char *key = pair_key(&m->inc, s, p, "in the included file");
    if (!key)
      return -1;
    if (top && strcmp(key, "include") == 0)
      return perr(&m->inc, NPOS(yaml_document_get_node(m->inc.doc, p->key)),
                  "an included file cannot include another");
    int have = map_get(m->job->doc, dst, key);
    yaml_node_t *iv = yaml_document_get_node(m->inc.doc, p->value);
    if (!have) {
      int k = copy_node(m, p->key), v = k ? copy_node(m, p->value) : 0;
      if (!v)
        return -1;
      if (!yaml_document_append_mapping_pair(m->job->doc, dst, k, v))
        return oom(m->job);
    } else if (iv->type == YAML_MAPPING_NODE &&
               yaml_document_get_node(m->job->doc, have)->type == YAML_MAPPING_NODE) {
      if (merge_map(m, have, p->value, 0) != 0)
        return -1;
    }
    /* else the job's own value wins */
  }
  return 0;
}

int include_merge(pctx *c)
{
  yaml_node_t *root = yaml_document_get_root_node(c->doc);
  if (!root || root->type != YAML_MAPPING_NODE)
    return 0;  /* parse_root says what is wrong */
  int root_id = (int)(root - c->doc->nodes.start) + 1;
  int id = map_get(c->doc, root_id, "include");
  if (!id)
    return 0;
  yaml_node_t *v = yaml_document_get_node(c->doc, id);
  char *name = NULL;
  if (get_str(c, v, "include", STR_NONEMPTY, &name) != 0)
    return -1;
  int line = (int)v->start_mark.line + 1, col = (int)v->start_mark.column + 1;
  char *path = name[0] == '/' ? name : NULL;
  if (!path) {
    size_t n = strlen(c->s->dir) + strlen(name) + 2;
    if ((path = malloc(n)) != NULL)
      snprintf(path, n, "%s/%s", c->s->dir, name);
    free(name);
    if (!path)
      return oom(c);
  }
  free(c->s->include);
  c->s->include = path;

  char *data = NULL;
  size_t len = 0;
  if (spec_read_file(path, "included file", &data, &len, c->err) != 0) {
    err_prefix(c->err, "%s:%d:%d: include", c->path, line, col);
    return err_cause(c->err, DWL_CAUSE_SPEC);
  }
  yaml_parser_t parser;
  yaml_document_t doc;
  merge m = {c, {path, &doc, c->err, c->s, 0}, 0};
  int rc = -1, loaded = 0;
  if (!yaml_parser_initialize(&parser)) {
    free(data);
    return oom(c);
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
  if (check_shape(&m.inc, data, len) != 0) {
    /* refused before loading */
  } else if (!yaml_parser_load(&parser, &doc)) {
    yaml_error(&m.inc, &parser, data, len);
  } else {
    loaded = 1;
    yaml_node_t *iroot = yaml_document_get_root_node(&doc);
    if (!iroot)
      rc = 0;  /* an empty file shares nothing */
    else if (iroot->type != YAML_MAPPING_NODE)
      perr(&m.inc, NPOS(iroot), "an included file must be a mapping of job keys, found %s", kind_name(iroot));
    else
      rc = merge_map(&m, root_id, (int)(iroot - doc.nodes.start) + 1, 1);
  }
  if (loaded)
    yaml_document_delete(&doc);
  yaml_parser_delete(&parser);
  free(data);
  return rc;
}
