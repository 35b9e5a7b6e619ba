/* The job spec's key table (spec_keys.h) and the walk of the job file
 * over it: every mapping is read by its section's table, each key by its
 * type's reader or, where a key needs more, its own (below); plugin
 * options are kept as written for the plugin host to check. */
#include "spec_keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_read.h"
#include "suggest.h"
#include "ts.h"

#define SPEC_MAX_JOB 64

/* Indexed by the enums in spec.h. */
const char *const spec_mode_names[] = {"append", "replace", "scd2", "upsert", NULL};
static const char *const t1scope_names[] = {"current", "all", NULL};
static const char *const delstyle_names[] = {"expire", "tombstone", NULL};
static const char *const sk_names[] = {"sequence", "hash", NULL};
static const char *const close_names[] = {"at_next", "day_before", "second_before", NULL};
static const char *const deletes_names[] = {"none", "absent", NULL};
static const char *const lookup_names[] = {"auto", "scan", "keys", NULL};
static const char *const null_keys_names[] = {"allow", "reject", NULL};
static const char *const late_names[] = {"repair", "reject", "ignore", NULL};
static const char *const watermark_names[] = {"checkpoint", "none", NULL};
static const char *const engine_names[] = {"memory", "pushdown", "auto", NULL};
static const char *const missing_names[] = {"fail", "null", "keep", NULL};
/* schema.new_columns, in enum spec_new order. */
static const char *const new_names[] = {"add", "fail", "ignore", NULL};
/* schema.widen, in enum spec_widen order. */
static const char *const widen_names[] = {"widen", "fail", NULL};

static int read_section(pctx *c, const spec_section *sec, const yaml_node_t *v);

/* ---- keys with readers of their own ----------------------------------------- */

/* include: was merged before the walk (include.c), which checked its
 * value and set the field to the path it opened. */
static int read_include(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)c;
  (void)k;
  (void)v;
  (void)name;
  (void)dst;
  return 0;
}

static int read_version(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  (void)name;
  (void)dst;
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

/* A character of a job name: it names files, so ASCII letters, digits,
 * '_', '.' and '-'. */
static int job_char(char ch)
{
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
         ch == '.' || ch == '-';
}

int spec_job_name_check(const char *name, char *why, size_t n)
{
  size_t len = strlen(name);
  if (len > SPEC_MAX_JOB) {
    snprintf(why, n, "name is %zu characters long; at most %d are allowed", len, SPEC_MAX_JOB);
    return -1;
  }
  for (size_t i = 0; i < len; i++) {
    if (!job_char(name[i])) {
      snprintf(why, n, "'%s' may only contain A-Z, a-z, 0-9, '_', '.' and '-'", name);
      return -1;
    }
  }
  /* The job names files (checkpoint, lock): "." and ".." would not. */
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
    snprintf(why, n, "'%s' is not a usable job name", name);
    return -1;
  }
  return 0;
}

static int read_job(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  (void)name;
  (void)dst;
  dwl_spec *s = c->s;
  if (get_str(c, v, "job", STR_NONEMPTY, &s->job) != 0)
    return -1;
  char why[256];
  if (spec_job_name_check(s->job, why, sizeof why) != 0)
    return perr(c, NPOS(v), "job: %s", why);
  return 0;
}

/* A plugin option: kept as written (scalar, list or mapping of scalars),
 * checked later against the plugin's own option table. */
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
      if (!t)
        return -1;
      if (add_item_pos(c, dotted, t, item) != 0) {
        free(t);
        return -1;
      }
      if (list_push(c, &o->list, t) != 0)
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
      if (add_item_pos(c, dotted, mk, node_at(c, p->key)) != 0) {
        free(kc);
        return -1;
      }
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

static int read_source(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)dst;
  dwl_spec *s = c->s;
  if (expect_mapping(c, v, name) != 0)
    return -1;
  s->source_line = (int)v->start_mark.line + 1;
  s->source_col = (int)v->start_mark.column + 1;
  return read_section(c, k->sub, v);
}

/* target.lock_timeout: a duration of at least one second (MariaDB counts
 * its lock waits in whole seconds). */
static int read_lock_timeout(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  long long us;
  if (get_duration(c, v, name, &us) != 0)
    return -1;
  if (us < DWL_US_PER_SEC)
    return perr(c, NPOS(v), "%s: expected at least 1s: every lock wait ends, and none can be shorter", name);
  *(long long *)dst = us / 1000;
  return 0;
}

/* The longest run id column name: PostgreSQL's 63 bytes, within every
 * warehouse's limit, so the name is checked before any connection. */
#define SPEC_MAX_RUN_ID_COLUMN 63

/* target.run_id_column: a column dwload creates and fills, so a plain
 * identifier that every warehouse takes alike: ASCII letters, digits and
 * '_', not starting with a digit. */
static int read_run_id_column(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  char **out = dst;
  if (get_str(c, v, name, STR_NONEMPTY, out) != 0)
    return -1;
  const char *s = *out;
  size_t len = strlen(s);
  int ok = len <= SPEC_MAX_RUN_ID_COLUMN && !(s[0] >= '0' && s[0] <= '9');
  for (size_t i = 0; ok && i < len; i++)
    ok = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
         s[i] == '_';
  if (!ok)
    return perr(c, NPOS(v), "%s: '%.80s' is not a column name dwload can create: use at most %d ASCII letters, "
                "digits and '_', not starting with a digit", name, s, SPEC_MAX_RUN_ID_COLUMN);
  return 0;
}

/* load.type2: also records that it was given (it defaults to every column
 * not otherwise listed). */
static int read_type2(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  int rc = get_list(c, v, name, 1, dst);
  c->s->type2_given = 1;
  return rc;
}

/* load.deletes: none, absent, or a mapping of column and values. */
static int read_deletes(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)name;
  int *deletes = dst;
  if (v->type == YAML_SCALAR_NODE && !is_null(v)) {
    char *t = scalar_text(c, v);
    if (!t)
      return -1;
    int i = lookup(k->values, t);
    if (i >= 0) {
      *deletes = i == 0 ? DEL_NONE : DEL_ABSENT;
      free(t);
      return 0;
    }
    const char *sug = spec_suggest(t, k->values);
    perr(c, NPOS(v), "load.deletes: '%s' is not one of none, absent "
         "(or a mapping with column and values)%s%s%s", t,
         sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
    free(t);
    return -1;
  }
  if (v->type != YAML_MAPPING_NODE)
    return perr(c, NPOS(v), "load.deletes: expected none, absent or a mapping, found %s",
                kind_name(v));
  if (read_section(c, k->sub, v) != 0)
    return -1;
  if (c->s->delete_values.n == 0 && c->s->truncate_values.n == 0)
    return perr(c, NPOS(v), "load.deletes: the mapping needs values, truncate_values or both");
  *deletes = DEL_COLUMN;
  return 0;
}

static int read_delete_values(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  spec_list *l = dst;
  if (get_list(c, v, name, 0, l) != 0)
    return -1;
  if (l->n == 0)
    return perr(c, NPOS(v), "%s: expected at least one value", name);
  return 0;
}

/* load.future_tolerance: a duration, or off (-1): lmd values in the future
 * are then a documented business date, not a clock error. */
static int read_future_tolerance(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  if (v->type == YAML_SCALAR_NODE && strcmp((const char *)v->data.scalar.value, "off") == 0) {
    *(long long *)dst = -1;
    return 0;
  }
  return get_duration(c, v, name, dst);
}

/* load.ignore_null_updates: true or false, or a list of the columns
 * whose NULL means "unchanged" (AUTO CDC's name). */
static int read_ignore_nulls(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  int *mode = dst;
  if (v->type != YAML_SEQUENCE_NODE)
    return get_bool(c, v, name, mode);
  if (get_list(c, v, name, 1, &c->s->ignore_null_cols) != 0)
    return -1;
  if (c->s->ignore_null_cols.n == 0)
    return perr(c, NPOS(v), "%s: an empty list; write true, false or the columns", name);
  *mode = 2;
  return 0;
}

/* load.lmd: one column, or a composite (AUTO CDC's SEQUENCE BY
 * STRUCT(ts, id)): a list of 2..1+DWL_TS_TIES columns, the first the lmd
 * proper (a point in time or an integer sequence), the others
 * tie-breakers kept in lmd_ties.  A list of one is that column. */
static int read_lmd(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  if (v->type != YAML_SEQUENCE_NODE)
    return get_str(c, v, name, STR_NONEMPTY, dst);
  spec_list *all = &c->s->lmd_ties;
  if (get_list(c, v, name, 1, all) != 0)  /* (refuses an empty name, a column twice) */
    return -1;
  if (all->n == 0)
    return perr(c, NPOS(v), "%s: an empty list; give a column, or a list of 2 to %d (a composite sequence)", name,
                1 + DWL_TS_TIES);
  if (all->n > 1 + DWL_TS_TIES)
    return perr(c, NPOS(v), "%s: %zu columns; a composite sequence has at most %d (the lmd and %d tie-breakers)",
                name, all->n, 1 + DWL_TS_TIES, DWL_TS_TIES);
  /* the first is the lmd, as a scalar would give it; the rest stay */
  char **out = dst;
  free(*out);
  *out = all->v[0];
  memmove(all->v, all->v + 1, (all->n - 1) * sizeof *all->v);
  all->n--;
  return 0;
}

/* load.lookback: a duration, or a bare count (100) for an integer
 * sequence, kept in lookback_us as it is (lookback_count says which). */
static int read_lookback(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  const char *t = v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : "";
  size_t n = strspn(t, "0123456789");
  if (n > 0 && t[n] == '\0' && strcmp(t, "0") != 0) {
    errno = 0;
    long long count = strtoll(t, NULL, 10);
    if (errno || n > 18)
      return perr(c, NPOS(v), "%s: '%s' is too large a count", name, t);
    *(long long *)dst = count;
    c->s->lookback_count = 1;
    return 0;
  }
  return get_duration(c, v, name, dst);
}

/* dimension.open_end: a timestamp, or null. */
static int read_open_end(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  char **open_end = dst;
  if (get_str(c, v, name, STR_NULLABLE | STR_NONEMPTY, open_end) != 0)
    return -1;
  dwl_ts ts;
  if (*open_end && ts_parse(*open_end, strlen(*open_end), &ts) != 0)
    return perr(c, NPOS(v), "dimension.open_end: '%s' is not a timestamp "
                "(write e.g. 9999-12-31 or 9999-12-31 23:59:59)", *open_end);
  return 0;
}

/* schema.missing_columns: its value null is the word, which YAML would
 * read as no value; an empty value is still an error. */
static int read_missing(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  if (v->type == YAML_SCALAR_NODE && is_null(v) && v->data.scalar.length == 4) {
    *(int *)dst = MISSING_NULL;
    return 0;
  }
  return get_enum(c, v, name, k->values, dst);
}

/* columns.include / columns.exclude: a list of source column names, each
 * item's position kept as "columns.include.NAME", for the errors found
 * when the source's columns are known (source/columns.c). */
static int read_col_names(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  spec_list *l = dst;
  if (get_list(c, v, name, 1, l) != 0)
    return -1;
  if (l->n == 0)
    return perr(c, NPOS(v), "%s: expected at least one column", name);
  if (dst == &c->s->col_include)
    c->s->col_include_given = 1;
  if (v->type != YAML_SEQUENCE_NODE)
    return add_pos(c, name, l->v[0], v);
  size_t i = 0;
  for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++, i++)
    if (add_pos(c, name, l->v[i], node_at(c, *it)) != 0)
      return -1;
  return 0;
}

/* columns.rename: a mapping of source name to target name; each pair's
 * position is "columns.rename.SOURCE" (its key). */
static int read_rename(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name, void *dst)
{
  (void)k;
  (void)dst;  /* rename_from; rename_to beside it */
  dwl_spec *s = c->s;
  if (expect_mapping(c, v, name) != 0)
    return -1;
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *from = pair_key(c, v, p, "in columns.rename");
    if (!from)
      return -1;
    const yaml_node_t *kn = node_at(c, p->key), *vn = node_at(c, p->value);
    if (!*from)
      return perr(c, NPOS(kn), "%s: column names must not be empty", name);
    if (list_find(&s->rename_from, from))
      return perr(c, NPOS(kn), "%s: column '%s' is renamed twice", name, from);
    if (vn->type != YAML_SCALAR_NODE || is_null(vn))
      return perr(c, NPOS(vn), "%s.%s: expected the column's name in the table, found %s", name, from,
                  kind_name(vn));
    char *to = scalar_text(c, vn);
    if (!to)
      return -1;
    if (!*to) {
      free(to);
      return perr(c, NPOS(vn), "%s.%s: column names must not be empty", name, from);
    }
    ssize_t j = spec_list_index(&s->rename_to, to);
    if (j >= 0) {
      perr(c, NPOS(vn), "%s.%s: '%s' is already the new name of '%s'; two columns cannot have one name", name,
           from, to, s->rename_from.v[j]);
      free(to);
      return -1;
    }
    char *fc = strdup(from);
    if (!fc || list_push(c, &s->rename_from, fc) != 0 || list_push(c, &s->rename_to, to) != 0) {
      free(to);
      return fc ? -1 : oom(c);
    }
    if (add_pos(c, name, from, kn) != 0)
      return -1;
  }
  return 0;
}

/* ---- the tables -------------------------------------------------------------- */

#define FIELD(f) offsetof(dwl_spec, f)
#define SECTION(name, where, man, options, keys) {name, where, man, options, keys, sizeof keys / sizeof keys[0]}

static const spec_key source_keys[] = {
  {"plugin", SPEC_T_STRING, SPEC_K_REQUIRED | SPEC_K_NONEMPTY, FIELD(source_plugin), NULL, NULL,
   "the source plugin's name, or the path of its shared object", NULL, NULL},
};
static const spec_section source_sec = SECTION("source", "in source", "source", 1, source_keys);

static const spec_key target_keys[] = {
  {"connection", SPEC_T_STRING, SPEC_K_REQUIRED | SPEC_K_NONEMPTY | SPEC_K_CONN, FIELD(target_connection),
   NULL, NULL, "the warehouse's ODBC connection string", NULL, NULL},
  {"table", SPEC_T_STRING, SPEC_K_REQUIRED | SPEC_K_NONEMPTY, FIELD(target_table), NULL, NULL,
   "the table to load, table or schema.table", NULL, NULL},
  {"lock_timeout", SPEC_T_DURATION, 0, FIELD(lock_timeout_ms), "30s", NULL,
   "the longest wait for any lock, at least 1s", NULL, read_lock_timeout},
  {"run_id_column", SPEC_T_STRING, SPEC_K_NONEMPTY, FIELD(run_id_column), NULL, NULL,
   "a column holding the id of the run that wrote each row (default: none)", NULL, read_run_id_column},
  {"accept_non_atomic", SPEC_T_BOOL, 0, FIELD(accept_non_atomic), "false", NULL,
   "load a distributed table (Spider) whose servers do not commit together", NULL, NULL},
  {"partition_by", SPEC_T_COLUMNS, 0, FIELD(partition_by), NULL, NULL,
   "load.key columns to hash-partition a table dwload creates on (default: none)", NULL, NULL},
  {"partitions", SPEC_T_COUNT, 0, FIELD(partitions), "8", NULL,
   "how many partitions target.partition_by makes, 1 to 1024", NULL, NULL},
};
static const spec_section target_sec = SECTION("target", "in target", "target", 0, target_keys);

static const spec_key deletes_keys[] = {
  {"column", SPEC_T_STRING, SPEC_K_REQUIRED | SPEC_K_NONEMPTY, FIELD(delete_column), NULL, NULL,
   "the source column that marks a deleted row", NULL, NULL},
  {"values", SPEC_T_LIST, 0, FIELD(delete_values), NULL, NULL,
   "its values that mean deleted", NULL, read_delete_values},
  {"truncate_values", SPEC_T_LIST, 0, FIELD(truncate_values), NULL, NULL,
   "its values that mean every key is deleted as of the row's lmd", NULL, read_delete_values},
};
static const spec_section deletes_sec = SECTION("load.deletes", "in load.deletes", NULL, 0, deletes_keys);

static const spec_key load_keys[] = {
  {"mode", SPEC_T_ENUM, 0, FIELD(mode), "append", spec_mode_names, "how rows are loaded", NULL, NULL},
  {"lmd", SPEC_T_STRING, SPEC_K_NONEMPTY, FIELD(lmd), NULL, NULL,
   "the source's last-modified column (a point in time or an integer sequence), or a list: a composite with "
   "tie-breakers; the checkpoint", NULL, read_lmd},
  {"lmd_format", SPEC_T_STRING, SPEC_K_NONEMPTY, FIELD(lmd_format), NULL, NULL,
   "how lmd values are written, when not ISO 8601", NULL, NULL},
  {"key", SPEC_T_COLUMNS, 0, FIELD(key), NULL, NULL, "the business key columns", NULL, NULL},
  {"type2", SPEC_T_COLUMNS, 0, FIELD(type2), NULL, NULL,
   "columns whose change starts a new version (default: every other)", NULL, read_type2},
  {"type1", SPEC_T_COLUMNS, 0, FIELD(type1), NULL, NULL, "columns overwritten in place", NULL, NULL},
  {"type1_scope", SPEC_T_ENUM, 0, FIELD(type1_scope), "current", t1scope_names,
   "which versions a type 1 change overwrites", NULL, NULL},
  {"deletes", SPEC_T_ENUM, 0, FIELD(deletes), "none", deletes_names,
   "how deletions are found: none, absent, or a {column, values} mapping", &deletes_sec, read_deletes},
  {"partition", SPEC_T_COLUMNS, 0, FIELD(partition), NULL, NULL,
   "deletes: absent: columns whose values name the partitions an extract holds in full", NULL, NULL},
  {"delete_style", SPEC_T_ENUM, 0, FIELD(delete_style), "expire", delstyle_names,
   "how a deletion is written", NULL, NULL},
  {"lookup", SPEC_T_ENUM, 0, FIELD(lookup), "auto", lookup_names, "how current versions are read", NULL, NULL},
  {"max_rejects", SPEC_T_COUNT, 0, FIELD(max_rejects), "0", NULL,
   "bad rows set aside before the run fails", NULL, NULL},
  {"reject_file", SPEC_T_STRING, SPEC_K_NONEMPTY, FIELD(reject_file), NULL, NULL,
   "where rejected rows go", NULL, NULL},
  {"null_keys", SPEC_T_ENUM, 0, FIELD(null_keys), "allow", null_keys_names,
   "whether a NULL in a key column is a bad row", NULL, NULL},
  {"lookback", SPEC_T_DURATION, 0, FIELD(lookback_us), "0", NULL,
   "how far before the checkpoint rows are reread (a count for an integer lmd)", NULL, read_lookback},
  {"watermark", SPEC_T_ENUM, 0, FIELD(watermark), "checkpoint", watermark_names,
   "whether rows at or before the checkpoint are skipped (none: each is compared with its key)", NULL, NULL},
  {"late", SPEC_T_ENUM, 0, FIELD(late), "repair", late_names,
   "what happens to a row older than its key's history", NULL, NULL},
  {"engine", SPEC_T_ENUM, 0, FIELD(engine), "memory", engine_names,
   "where the changes are computed: memory, pushdown, or auto (by load.memory_budget)", NULL, NULL},
  {"memory_budget", SPEC_T_SIZE, 0, FIELD(memory_budget), NULL, NULL,
   "the memory engine's budget: engine: auto takes pushdown above it (default: a quarter of RAM, 256MiB to 16GiB)",
   NULL, NULL},
  {"max_deletes", SPEC_T_LIMIT, 0, FIELD(max_deletes), "50%", NULL,
   "how many keys one run may delete by absence", NULL, NULL},
  {"allow_empty", SPEC_T_BOOL, 0, FIELD(allow_empty), "false", NULL,
   "whether an empty source may delete or empty the table", NULL, NULL},
  {"future_tolerance", SPEC_T_DURATION, 0, FIELD(future_tolerance_us), "1d", NULL,
   "how far past the clock an lmd may be, or off", NULL, read_future_tolerance},
  {"ignore_null_updates", SPEC_T_BOOL, 0, FIELD(ignore_nulls), "false", NULL,
   "whether a NULL in a delivered row means unchanged: true, false or the columns", NULL, read_ignore_nulls},
};
static const spec_section load_sec = SECTION("load", "in load", "load", 0, load_keys);

static const spec_key dim_keys[] = {
  {"surrogate_key", SPEC_T_STRING, SPEC_K_NULLABLE | SPEC_K_NONEMPTY, FIELD(surrogate_key), "dim_id", NULL,
   "the surrogate key column, or null", NULL, NULL},
  {"surrogate_strategy", SPEC_T_ENUM, 0, FIELD(sk_strategy), "sequence", sk_names,
   "how surrogate keys are made", NULL, NULL},
  {"valid_from", SPEC_T_STRING, SPEC_K_NONEMPTY, FIELD(valid_from), "valid_from", NULL,
   "the column where a version starts", NULL, NULL},
  {"valid_to", SPEC_T_STRING, SPEC_K_NONEMPTY, FIELD(valid_to), "valid_to", NULL,
   "the column where a version ends", NULL, NULL},
  {"current", SPEC_T_STRING, SPEC_K_NULLABLE | SPEC_K_NONEMPTY, FIELD(current), "is_current", NULL,
   "the current-version flag column, or null", NULL, NULL},
  {"deleted", SPEC_T_STRING, SPEC_K_NULLABLE | SPEC_K_NONEMPTY, FIELD(deleted), "is_deleted", NULL,
   "the deleted flag column, or null", NULL, NULL},
  {"open_end", SPEC_T_STRING, SPEC_K_NULLABLE | SPEC_K_NONEMPTY, FIELD(open_end), NULL, NULL,
   "valid_to of a current version (default NULL)", NULL, read_open_end},
  {"close", SPEC_T_ENUM, 0, FIELD(close), "at_next", close_names,
   "where a closed version's valid_to falls", NULL, NULL},
};
static const spec_section dim_sec = SECTION("dimension", "in dimension", "dimension", 0, dim_keys);

static const spec_key schema_keys[] = {
  {"missing_columns", SPEC_T_ENUM, 0, FIELD(missing_columns), "fail", missing_names,
   "what a column of the table that the source does not deliver gets", NULL, read_missing},
  {"new_columns", SPEC_T_ENUM, 0, FIELD(new_columns), "add", new_names,
   "what a source column the table has not gets: added to the table, a failed run, or left out", NULL, NULL},
  {"widen", SPEC_T_ENUM, 0, FIELD(widen), "widen", widen_names,
   "a value too long or too large for the table's column: the column widened, or the row refused", NULL, NULL},
};
static const spec_section schema_sec = SECTION("schema", "in schema", "schema", 0, schema_keys);

static const spec_key columns_keys[] = {
  {"include", SPEC_T_COLUMNS, 0, FIELD(col_include), NULL, NULL,
   "the only source columns that reach the table", NULL, read_col_names},
  {"exclude", SPEC_T_COLUMNS, 0, FIELD(col_exclude), NULL, NULL,
   "source columns kept out of the table", NULL, read_col_names},
  {"rename", SPEC_T_NAMES, 0, FIELD(rename_from), NULL, NULL,
   "source name: name in the table", NULL, read_rename},
};
static const spec_section columns_sec = SECTION("columns", "in columns", "columns", 0, columns_keys);

static const spec_key top_keys[] = {
  {"version", SPEC_T_INT, 0, SPEC_NO_FIELD, "1", NULL, "the spec version", NULL, read_version},
  {"job", SPEC_T_STRING, SPEC_K_REQUIRED, FIELD(job), NULL, NULL, "the job's name", NULL, read_job},
  {"include", SPEC_T_STRING, 0, FIELD(include), NULL, NULL,
   "a file of shared settings, merged under the job's", NULL, read_include},
  {"source", SPEC_T_MAPPING, SPEC_K_REQUIRED, SPEC_NO_FIELD, NULL, NULL,
   "the plugin and its options", &source_sec, read_source},
  {"target", SPEC_T_MAPPING, SPEC_K_REQUIRED, SPEC_NO_FIELD, NULL, NULL, "where to load", &target_sec, NULL},
  {"load", SPEC_T_MAPPING, SPEC_K_NULLABLE, SPEC_NO_FIELD, NULL, NULL, "how to load", &load_sec, NULL},
  {"dimension", SPEC_T_MAPPING, SPEC_K_NULLABLE, SPEC_NO_FIELD, NULL, NULL,
   "the bookkeeping columns of mode scd2", &dim_sec, NULL},
  {"schema", SPEC_T_MAPPING, SPEC_K_NULLABLE, SPEC_NO_FIELD, NULL, NULL,
   "what happens when the source's columns and the table's differ", &schema_sec, NULL},
  {"columns", SPEC_T_MAPPING, SPEC_K_NULLABLE, SPEC_NO_FIELD, NULL, NULL,
   "which source columns reach the table, under which names", &columns_sec, NULL},
};
static const spec_section top_sec = SECTION(NULL, "at top level", "Top level", 0, top_keys);

const spec_section *const spec_sections[] = {&top_sec, &source_sec, &target_sec, &load_sec, &deletes_sec,
                                             &dim_sec, &schema_sec, &columns_sec, NULL};

const char *spec_type_name(int type)
{
  static const char *const names[] = {"string", "int", "bool", "count", "duration",
                                      "one of", "columns", "list", "limit", "mapping", "names", "size"};
  return type >= 0 && (size_t)type < sizeof names / sizeof names[0] ? names[type] : "?";
}

/* ---- the walk ---------------------------------------------------------------- */

static const spec_key *find_key(const spec_section *sec, const char *name)
{
  for (size_t i = 0; i < sec->n; i++)
    if (strcmp(sec->keys[i].name, name) == 0)
      return &sec->keys[i];
  return NULL;
}

/* The dotted name of key k of sec: "load.mode", "job". */
static void dotted_name(const spec_section *sec, const spec_key *k, char *out, size_t n)
{
  if (sec->name)
    snprintf(out, n, "%s.%s", sec->name, k->name);
  else
    snprintf(out, n, "%s", k->name);
}

static int unknown_in(pctx *c, const spec_section *sec, const yaml_node_t *k)
{
  const char *names[SPEC_MAX_SECTION_KEYS + 1];
  size_t n = 0;
  for (; n < sec->n && n < SPEC_MAX_SECTION_KEYS; n++)
    names[n] = sec->keys[n].name;
  names[n] = NULL;
  return unknown_key(c, k, sec->where, names);
}

/* Reads value v of key k (dotted `name`) into its field. */
static int read_key(pctx *c, const spec_key *k, const yaml_node_t *v, const char *name)
{
  void *dst = k->offset == SPEC_NO_FIELD ? NULL : (char *)c->s + k->offset;
  if (k->read)
    return k->read(c, k, v, name, dst);
  int rc;
  switch (k->type) {
  case SPEC_T_STRING:
    c->conn = (k->flags & SPEC_K_CONN) != 0;
    rc = get_str(c, v, name, (k->flags & SPEC_K_NULLABLE ? STR_NULLABLE : 0) |
                 (k->flags & SPEC_K_NONEMPTY ? STR_NONEMPTY : 0), dst);
    c->conn = 0;
    return rc;
  case SPEC_T_BOOL: return get_bool(c, v, name, dst);
  case SPEC_T_COUNT: return get_count(c, v, name, dst);
  case SPEC_T_DURATION: return get_duration(c, v, name, dst);
  case SPEC_T_ENUM: return get_enum(c, v, name, k->values, dst);
  case SPEC_T_COLUMNS: return get_list(c, v, name, 1, dst);
  case SPEC_T_LIST: return get_list(c, v, name, 0, dst);
  case SPEC_T_LIMIT: return get_limit(c, v, name, dst);
  case SPEC_T_SIZE: return get_size(c, v, name, dst);
  case SPEC_T_MAPPING:
    if ((k->flags & SPEC_K_NULLABLE) && is_null(v))
      return 0;  /* `load:` with every key commented out */
    if (expect_mapping(c, v, name) != 0)
      return -1;
    return read_section(c, k->sub, v);
  default:
    return perr(c, NPOS(v), "%s: unsupported value", name);
  }
}

/* Reads mapping v by the table of sec, then checks that its required keys
 * were given. */
static int read_section(pctx *c, const spec_section *sec, const yaml_node_t *v)
{
  char dotted[64];
  for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
    const char *key = pair_key(c, v, p, sec->where);
    if (!key)
      return -1;
    const yaml_node_t *k = node_at(c, p->key), *val = node_at(c, p->value);
    const spec_key *e = find_key(sec, key);
    if (!e && !sec->options)
      return unknown_in(c, sec, k);
    if (add_pos(c, sec->name, key, k) != 0)
      return -1;
    /* Every other key of source belongs to the plugin, which checks them later. */
    if (!e) {
      if (parse_opt(c, key, k, val) != 0)
        return -1;
      continue;
    }
    dotted_name(sec, e, dotted, sizeof dotted);
    if (read_key(c, e, val, dotted) != 0)
      return -1;
  }
  for (size_t i = 0; i < sec->n; i++) {
    if (!(sec->keys[i].flags & SPEC_K_REQUIRED))
      continue;
    dotted_name(sec, &sec->keys[i], dotted, sizeof dotted);
    if (given(c, dotted))
      continue;
    if (sec->name)
      return perr(c, NPOS(v), "%s: missing required key '%s'", sec->name, sec->keys[i].name);
    return perr(c, NPOS(v), "missing required key '%s'", sec->keys[i].name);
  }
  return 0;
}

int parse_root(pctx *c, const yaml_node_t *root)
{
  if (root->type != YAML_MAPPING_NODE)
    return perr(c, NPOS(root), "the job file must be a mapping (job, source, target, ...), "
                "found %s", kind_name(root));
  return read_section(c, &top_sec, root);
}

int spec_keys_defaults(dwl_spec *s)
{
  for (size_t i = 0; spec_sections[i]; i++) {
    const spec_section *sec = spec_sections[i];
    for (size_t j = 0; j < sec->n; j++) {
      const spec_key *k = &sec->keys[j];
      if (k->type != SPEC_T_STRING || !k->def)
        continue;
      char **dst = (char **)((char *)s + k->offset);
      if (!(*dst = strdup(k->def)))
        return -1;
    }
  }
  return 0;
}
