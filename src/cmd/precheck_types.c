/* Checks before work, the columns and their types (precheck.h): what the
 * job's spec says of its columns against what the source's options
 * declare of them, the `columns` list (csv) and the `types` mapping of
 * column to SQL type name (csv, http_json: plugins/types_opt.c), before
 * any connection.  Without these a declared real lmd, a misspelt type
 * name or a key the declared columns lack is found only after the run has
 * connected and taken its locks; here it is exit 2 at the spec entry
 * (FILE:LINE:COL), the warehouse up or down.  What the spec says of its
 * keys among themselves is spec/cross.c's, at load time; a source whose
 * columns are known only when it is opened (a CSV header) is checked when
 * it is (scd.c, prepare.c, target_layout.c). */
#include "precheck.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "buf.h"
#include "coltype.h"

/* The option's mapping or list, when the job gives it in that form (the
 * plugin's own checks, source_precheck, refuse the others). */
static const spec_opt *opt_of(const dwl_spec *spec, const char *name, int kind)
{
  const spec_opt *o = spec_source_opt(spec, name);
  return o && o->kind == kind ? o : NULL;
}

/* The declared column of that name: the exact name first, then without
 * regard to case, as scd_col_index matches the source's; -1 none. */
static ssize_t declared(const spec_list *cols, const char *name)
{
  for (size_t i = 0; i < cols->n; i++)
    if (strcmp(cols->v[i], name) == 0)
      return (ssize_t)i;
  for (size_t i = 0; i < cols->n; i++)
    if (strcasecmp(cols->v[i], name) == 0)
      return (ssize_t)i;
  return -1;
}

/* FILE:LINE:COL of "NAME[ITEM]" (spec/read.c's add_item_pos), else of
 * the key NAME itself. */
static const char *item_at(const dwl_spec *spec, const char *name, const char *item, int *line, int *col)
{
  char k[600];
  snprintf(k, sizeof k, "%s[%s]", name, item);
  const char *file = spec_key_at(spec, k, line, col);
  return *line > 0 ? file : spec_key_at(spec, name, line, col);
}

static int not_declared(const dwl_spec *spec, const spec_opt *cols, const char *key, const char *item,
                        const char *name, dwl_error *err)
{
  int line, col, cline, ccol;
  const char *file = item ? item_at(spec, key, item, &line, &col) : spec_key_at(spec, key, &line, &col);
  const char *cfile = spec_key_at(spec, "source.columns", &cline, &ccol);
  dwl_buf have;
  buf_init(&have, 0);
  for (size_t i = 0; i < cols->list.n; i++)
    buf_printf(&have, "%s%s", i ? ", " : "", cols->list.v[i]);
  err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
           "%s:%d:%d: %s: column '%s' is not among the source's declared columns (source.columns at %s:%d:%d: %s)",
           file, line, col, key, name, cfile, cline, ccol, have.data ? have.data : "too many to list");
  buf_free(&have);
  return -1;
}

/* Every column the spec names is among the declared ones, and none of
 * them has the name of a bookkeeping column of the dimension. */
static int check_declared(const dwl_spec *spec, const spec_opt *cols, dwl_error *err)
{
  const struct {
    const char *key;
    const spec_list *l;
  } lists[3] = {{"load.key", &spec->key}, {"load.type2", &spec->type2}, {"load.type1", &spec->type1}};
  for (int a = 0; a < 3; a++)
    for (size_t i = 0; i < lists[a].l->n; i++)
      if (declared(&cols->list, lists[a].l->v[i]) < 0)
        return not_declared(spec, cols, lists[a].key, lists[a].l->v[i], lists[a].l->v[i], err);
  if (spec->lmd && declared(&cols->list, spec->lmd) < 0)
    return not_declared(spec, cols, "load.lmd", NULL, spec->lmd, err);
  if (spec->delete_column && declared(&cols->list, spec->delete_column) < 0)
    return not_declared(spec, cols, "load.deletes.column", NULL, spec->delete_column, err);
  if (spec->mode != MODE_SCD2)
    return 0;
  /* valid_from may be the lmd column itself (target_layout.c). */
  const struct {
    const char *key;
    const char *val;
  } bk[5] = {{"dimension.surrogate_key", spec->surrogate_key},
             {"dimension.valid_from", spec->lmd && spec->valid_from && strcasecmp(spec->valid_from, spec->lmd) == 0
                                          ? NULL : spec->valid_from},
             {"dimension.valid_to", spec->valid_to},
             {"dimension.current", spec->current},
             {"dimension.deleted", spec->deleted}};
  for (int b = 0; b < 5; b++) {
    ssize_t i = bk[b].val ? declared(&cols->list, bk[b].val) : -1;
    if (i < 0)
      continue;
    int line, col;
    const char *file = item_at(spec, "source.columns", cols->list.v[i], &line, &col);
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                    "%s:%d:%d: source.columns: column '%s' has the name of the bookkeeping column %s; rename it "
                    "under dimension:",
                    file, line, col, cols->list.v[i], bk[b].key);
  }
  return 0;
}

static const char *type_word(int type)
{
  static const char *const words[] = {"text", "an integer", "a numeric", "a real", "a boolean", "a date",
                                      "a timestamp"};
  return type >= 0 && type <= DWL_TYPE_TIMESTAMP ? words[type] : "unknown";
}

/* Each declared type is one the warehouses can hold, for a column the
 * source declares; the lmd column's is a point in time (or text that
 * holds one, parsed per row) or an integer sequence. */
static int check_types(const dwl_spec *spec, const spec_opt *types, const spec_opt *cols, dwl_error *err)
{
  for (size_t i = 0; i < types->list.n && i < types->vals.n; i++) {
    const char *name = types->list.v[i], *val = types->vals.v[i];
    int line, col;
    const char *file = item_at(spec, "source.types", name, &line, &col);
    dwl_column c;
    memset(&c, 0, sizeof c);
    const char *why;
    if (coltype_parse(val, &c, &why) != 0)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: source.types.%s: '%s': %s%s", file, line, col,
                      name, val, why,
                      strcmp(why, "unknown type") == 0 ? " (known: text, varchar(n), integer, bigint, numeric(p,s), "
                                                         "real, boolean, date, timestamp)" : "");
    if (cols && declared(&cols->list, name) < 0)
      return not_declared(spec, cols, "source.types", name, name, err);
    if (spec->lmd && strcasecmp(spec->lmd, name) == 0 && c.type != DWL_TYPE_DATE && c.type != DWL_TYPE_TIMESTAMP &&
        c.type != DWL_TYPE_TEXT && c.type != DWL_TYPE_INTEGER) {
      int lline, lcol;
      const char *lfile = spec_key_at(spec, "load.lmd", &lline, &lcol);
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                      "%s:%d:%d: source.types.%s: '%s' declares %s, but the column is the lmd (load.lmd at %s:%d:%d), "
                      "which must be a date, a timestamp (or text holding one) or an integer sequence",
                      file, line, col, name, val, type_word(c.type), lfile, lline, lcol);
    }
  }
  return 0;
}

int precheck_types(const dwl_spec *spec, char *about, size_t n, dwl_error *err)
{
  const spec_opt *types = opt_of(spec, "types", SPEC_OPT_MAP);
  const spec_opt *cols = opt_of(spec, "columns", SPEC_OPT_LIST);
  if (about && n)
    snprintf(about, n, "%zu declared column%s, %zu declared type%s agree with the spec", cols ? cols->list.n : 0,
             cols && cols->list.n == 1 ? "" : "s", types ? types->list.n : 0,
             types && types->list.n == 1 ? "" : "s");
  if (types && check_types(spec, types, cols, err) != 0)
    return -1;
  return cols ? check_declared(spec, cols, err) : 0;
}
