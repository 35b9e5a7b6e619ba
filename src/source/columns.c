/* columns: of the job spec applied to a source's rows in the host, so
 * every plugin (csv, odbc, http_json, any other) gets the same selection
 * and names: the checks that need the source's columns, and the map from
 * the plugin's layout to the engine's (kept columns in source order under
 * their table names, then the excluded ones the engine reads).  The
 * checks that need only the job file are spec/cross_columns.c's. */
#include "columns.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "buf.h"
#include "col_index.h"
#include "log.h"

struct col_map {
  size_t *from;        /* per mapped column: its index in the plugin's layout */
  dwl_column *cols;    /* mapped columns; names borrowed from the spec or the plugin */
  size_t n, nstored;
  size_t nraw;
  dwl_value *rows;     /* columns_rows's result */
  size_t cap;          /* rows it holds */
};

/* "FILE:LINE:COL: columns.KEY: MESSAGE (the source's columns: ...)". */
static int entry_error(const dwl_spec *spec, const char *list, const char *entry, const dwl_column *raw, size_t nraw,
                       const char *what, dwl_error *err)
{
  char at[300];
  snprintf(at, sizeof at, "columns.%s.%s", list, entry);
  int line = 0, col = 0;
  const char *file = spec_key_at(spec, at, &line, &col);
  dwl_buf have;
  buf_init(&have, 4096);
  for (size_t i = 0; i < nraw; i++)
    buf_printf(&have, "%s%s", i ? ", " : "", raw[i].name);
  err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: columns.%s: %s (the source's columns: %s)", file, line, col,
           list, what, have.data ? have.data : "too many to list");
  buf_free(&have);
  return -1;
}

static int check_named(const dwl_spec *spec, const char *list, const spec_list *l, const dwl_column *raw, size_t nraw,
                       dwl_error *err)
{
  char what[400];
  for (size_t i = 0; i < l->n; i++) {
    if (col_index(raw, nraw, l->v[i]) >= 0)
      continue;
    snprintf(what, sizeof what, "column '%s' is not in the source", l->v[i]);
    return entry_error(spec, list, l->v[i], raw, nraw, what, err);
  }
  return 0;
}

/* An engine role that may stay out of the table. */
static int hidden_role(const dwl_spec *spec, const char *name)
{
  return (spec->lmd && strcasecmp(spec->lmd, name) == 0) || spec_list_index(&spec->lmd_ties, name) >= 0 ||
         (spec->delete_column && strcasecmp(spec->delete_column, name) == 0);
}

static int has_columns(const dwl_spec *spec)
{
  return spec->col_include_given || spec->col_exclude.n || spec->rename_from.n;
}

/* schema.new_columns: ignore: a kept column (table name `name`) the
 * existing table has not, and no load key names. */
static int ignored(const dwl_spec *spec, const char *name, char *const *table_cols, size_t ntable)
{
  if (!table_cols || spec_list_index(&spec->key, name) >= 0 || spec_list_index(&spec->type1, name) >= 0 ||
      spec_list_index(&spec->type2, name) >= 0)
    return 0;
  for (size_t i = 0; i < ntable; i++)
    if (strcasecmp(table_cols[i], name) == 0)
      return 0;
  return 1;
}

/* Whether column i is kept for the table, its table name `*name`. */
static int kept_col(const dwl_spec *spec, const dwl_column *raw, size_t i, char *const *table_cols, size_t ntable,
                    const char **name)
{
  ssize_t r = spec_list_index(&spec->rename_from, raw[i].name);
  *name = r >= 0 ? spec->rename_to.v[r] : raw[i].name;
  return spec_col_kept(spec, raw[i].name) && !ignored(spec, *name, table_cols, ntable);
}

int columns_open(const dwl_spec *spec, const dwl_column *raw, size_t nraw, char *const *table_cols, size_t ntable,
                 col_map **out, dwl_error *err)
{
  *out = NULL;
  int any_ignored = 0;
  for (size_t i = 0; i < nraw; i++) {
    const char *name;
    if (spec_col_kept(spec, raw[i].name) && !kept_col(spec, raw, i, table_cols, ntable, &name)) {
      log_msg(LOG_INFO, "the source delivers column '%s', which table %s has not: not loaded "
              "(schema.new_columns: ignore)", name, spec->target_table);
      any_ignored = 1;
    }
  }
  if (!has_columns(spec) && !any_ignored)
    return 0;
  if (check_named(spec, "include", &spec->col_include, raw, nraw, err) != 0 ||
      check_named(spec, "exclude", &spec->col_exclude, raw, nraw, err) != 0 ||
      check_named(spec, "rename", &spec->rename_from, raw, nraw, err) != 0)
    return -1;
  col_map *m = calloc(1, sizeof *m);
  size_t cap = nraw ? nraw : 1;
  if (!m || !(m->from = calloc(cap, sizeof *m->from)) || !(m->cols = calloc(cap, sizeof *m->cols))) {
    columns_free(m);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  m->nraw = nraw;
  /* Kept columns first, in the source's order, then the hidden ones. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < nraw; i++) {
      const char *name;
      int kept = kept_col(spec, raw, i, table_cols, ntable, &name);
      if (pass == 0 ? !kept : kept || !hidden_role(spec, raw[i].name))
        continue;
      m->from[m->n] = i;
      m->cols[m->n] = raw[i];
      if (kept)
        m->cols[m->n].name = name;
      m->n++;
    }
    if (pass == 0)
      m->nstored = m->n;
  }
  /* A new name may not be the name of another column the engine sees. */
  for (size_t r = 0; r < spec->rename_from.n; r++) {
    for (size_t j = 0; j < m->n; j++) {
      const char *src = raw[m->from[j]].name;
      if (strcasecmp(m->cols[j].name, spec->rename_to.v[r]) != 0 || strcasecmp(src, spec->rename_from.v[r]) == 0)
        continue;
      char what[600];
      snprintf(what, sizeof what, "the new name '%s' of column '%s' is the name of source column '%s'%s",
               spec->rename_to.v[r], spec->rename_from.v[r], src,
               j < m->nstored ? ", which is kept" : ", which the engine reads");
      columns_free(m);
      return entry_error(spec, "rename", spec->rename_from.v[r], raw, nraw, what, err);
    }
  }
  *out = m;
  return 0;
}

void columns_free(col_map *m)
{
  if (!m)
    return;
  free(m->from);
  free(m->cols);
  free(m->rows);
  free(m);
}

const dwl_column *columns_cols(const col_map *m, size_t *ncols, size_t *nstored)
{
  *ncols = m->n;
  *nstored = m->nstored;
  return m->cols;
}

const dwl_value *columns_rows(col_map *m, const dwl_value *in, size_t nrows)
{
  if (nrows > m->cap) {
    dwl_value *nr = realloc(m->rows, nrows * (m->n ? m->n : 1) * sizeof *nr);
    if (!nr)
      return NULL;
    m->rows = nr;
    m->cap = nrows;
  }
  for (size_t r = 0; r < nrows; r++)
    for (size_t j = 0; j < m->n; j++)
      m->rows[r * m->n + j] = in[r * m->nraw + m->from[j]];
  return m->rows;
}

const char *columns_source_name(const dwl_spec *spec, const char *name)
{
  if (!name)
    return NULL;
  ssize_t r = spec_list_index(&spec->rename_to, name);
  return r >= 0 ? spec->rename_from.v[r] : name;
}
