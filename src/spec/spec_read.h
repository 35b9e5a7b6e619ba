/* Inside the spec parser (src/spec/ only): the parsing context, errors
 * with FILE:LINE:COL, the YAML node helpers, the positions of the keys
 * given, and the readers of typed values (read.c); the walk over the key
 * table (keys.c) and the cross-key checks (cross.c) use them. */
#ifndef DWL_SPEC_READ_H
#define DWL_SPEC_READ_H

#include <stddef.h>
#include <yaml.h>

#include "err.h"
#include "spec.h"

typedef struct pctx {
  const char *path;
  yaml_document_t *doc;
  dwl_error *err;
  dwl_spec *s;
  int conn;  /* the value being read is an ODBC connection string */
} pctx;

/* libyaml marks are 0-based; people count from 1. */
#define NPOS(n) (int)(n)->start_mark.line + 1, (int)(n)->start_mark.column + 1

/* Records "PATH:LINE:COL: message" (exit status 2); returns -1. */
int perr(pctx *c, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Records "PATH: out of memory" (exit status 1); returns -1. */
int oom(pctx *c);

/* ---- YAML nodes (read.c) */
yaml_node_t *node_at(pctx *c, int id);
const char *sval(const yaml_node_t *n);
/* YAML 1.2 core-schema null, but only when plain: a quoted "null" is text. */
int is_null(const yaml_node_t *n);
/* "a list", "a mapping", "null", "a string", for messages. */
const char *kind_name(const yaml_node_t *n);
/* Index of `word` in NULL-terminated `names`, or -1. */
int lookup(const char *const *names, const char *word);
/* names joined with ", " into out (cut short at cap). */
void join_names(const char *const *names, char *out, size_t cap);
/* Expanded text of a scalar; NULL with the error recorded. */
char *scalar_text(pctx *c, const yaml_node_t *n);
/* The key of a mapping pair: a string, not given earlier in the same
 * mapping; NULL with the error recorded.  `where` is "in load" etc. */
const char *pair_key(pctx *c, const yaml_node_t *map, const yaml_node_pair_t *p, const char *where);
/* The "unknown key" error, with "did you mean" or the valid keys. */
int unknown_key(pctx *c, const yaml_node_t *k, const char *where, const char *const *known);
int expect_mapping(pctx *c, const yaml_node_t *v, const char *name);

/* ---- positions of the keys given (dwl_spec.pos) */
/* Records key `sect.key` (or `key` when sect is NULL) at node k. */
int add_pos(pctx *c, const char *sect, const char *key, const yaml_node_t *k);
/* The position of a list's column or an option mapping's key, as "NAME[ITEM]". */
int add_item_pos(pctx *c, const char *name, const char *item, const yaml_node_t *k);
/* Position of a given key, else of `fallback`, else 1:1. */
void key_pos(pctx *c, const char *key, const char *fallback, int *line, int *col);
int given(pctx *c, const char *key);

/* ---- typed values: each replaces *out or fails with the error recorded */
enum { STR_NULLABLE = 1, STR_NONEMPTY = 2 };
int get_str(pctx *c, const yaml_node_t *v, const char *name, int flags, char **out);
/* One of `names` (NULL-terminated); *out is its index. */
int get_enum(pctx *c, const yaml_node_t *v, const char *name, const char *const *names, int *out);
/* 90s, 15m, 2h, 1d, 1h30m, at most 366 days; *out in microseconds. */
int get_duration(pctx *c, const yaml_node_t *v, const char *name, long long *out);
int get_size(pctx *c, const yaml_node_t *v, const char *name, long long *out);
/* A list of strings, or a lone string; with `columns`, of column names. */
int get_list(pctx *c, const yaml_node_t *v, const char *name, int columns, spec_list *out);
int get_count(pctx *c, const yaml_node_t *v, const char *name, long long *out);
int get_limit(pctx *c, const yaml_node_t *v, const char *name, spec_limit *out);
int get_bool(pctx *c, const yaml_node_t *v, const char *name, int *out);

/* ---- string lists */
int list_push(pctx *c, spec_list *l, char *str);
/* The entry equal to `name` without regard to case, or NULL. */
const char *list_find(const spec_list *l, const char *name);
void list_free(spec_list *l);

/* ---- the whole file (read.c) */
/* Merges the file named by a top-level include: under the job's document
 * (include.c); 0 also when there is none. */
int include_merge(pctx *c);
/* Reads a whole file of at most 16 MiB ("job file", "included file" in
 * the messages); the caller frees *data. */
int spec_read_file(const char *path, const char *what, char **data, size_t *len, dwl_error *err);
/* The error of a failed libyaml parse, at its position. */
int yaml_error(pctx *c, const yaml_parser_t *p, const char *data, size_t len);
/* Refuses a file nested too deep or with too many entries, before it is
 * loaded. */
int check_shape(pctx *c, const char *data, size_t len);

/* ---- the keys (keys.c) and their checks against each other (cross.c) */
/* Reads the root mapping of the job file into c->s. */
int parse_root(pctx *c, const yaml_node_t *root);
/* Sets the defaults the key table declares for string keys. */
int spec_keys_defaults(dwl_spec *s);
/* The rules between keys (dwload-job(5), "Rules checked"). */
int check_cross(pctx *c);
/* The checks of columns: that need only the job file (cross_columns.c). */
int check_columns(pctx *c);

#endif
