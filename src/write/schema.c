/* Schema evolution, the spec's schema: section: what a run does when the
 * source's columns and the target table's differ.  A column the source no
 * longer delivers would quietly give every changed key a new version with
 * NULL there, a history of changes that never happened, so by default the
 * run stops before it writes anything; schema.missing_columns: null
 * accepts the NULLs, and says so in the log of every run; keep carries
 * the current version's values into new versions (schema_keep.c).  A column
 * the source has and the table has not goes by schema.new_columns: added by
 * default (the table grows, current versions take its values in place),
 * or it stops the run too (with the source named, and the same cause, so
 * the exit code can follow it), as does a bookkeeping column of the
 * dimension the table lacks.
 * The differences are found once, by schema_diffs: run stops at the first
 * (schema_check), check --connect reports every one, and also the columns
 * whose declared types cannot hold what the source declares. */
#include "schema.h"

#include <stdio.h>
#include <strings.h>

#include "buf.h"
#include "coltype.h"
#include "log.h"
#include "schema_keep.h"

/* A layout column the table has not: a bookkeeping one (the job's
 * mistake), or the source's, which schema.new_columns: fail refuses and
 * add takes unless the table could not be kept right with it (its history
 * is matched by the key; type1_scope: all would spread the in-place fill
 * to closed versions).  Returns 0 when it is no difference (add takes it). */
static int missing_msg(const target *t, const tcol *c, const char *origin, dwl_buf *b)
{
  const dwl_spec *s = t->spec;
  if (c->role != TC_SRC) {
    buf_printf(b,
               "table %s exists but has no column '%s'; add it, or point target.table at a new table and dwload "
               "creates it",
               s->target_table, c->name);
    return 1;
  }
  if (s->new_columns == NEW_FAIL) {
    buf_printf(b,
               "table %s exists but has no column '%s', which the source (%s) delivers; add it to the table, set "
               "schema.new_columns: add, or point target.table at a new table and dwload creates it",
               s->target_table, c->name, origin);
    return 1;
  }
  int is_key = 0;
  for (size_t k = 0; k < s->key.n; k++)
    is_key |= strcasecmp(s->key.v[k], c->name) == 0;
  if (is_key) {
    buf_printf(b,
               "table %s has no column '%s', a column of load.key, which the source (%s) delivers: the stored "
               "rows cannot be matched by it; load into a new table",
               s->target_table, c->name, origin);
    return 1;
  }
  /* ignore: the source left out every column the job does not name */
  if (s->new_columns == NEW_IGNORE) {
    if (spec_list_index(&s->type1, c->name) < 0 && spec_list_index(&s->type2, c->name) < 0)
      return 0;
    buf_printf(b,
               "table %s has no column '%s', which the source (%s) delivers and load.type1 or load.type2 names: "
               "schema.new_columns: ignore leaves out only columns the job does not name; add it to the table, "
               "or set schema.new_columns: add",
               s->target_table, c->name, origin);
    return 1;
  }
  if (s->mode == MODE_SCD2 && s->type1_scope == T1_ALL) {
    buf_printf(b,
               "table %s has no column '%s', which the source (%s) delivers: schema.new_columns: add fills it in "
               "place on current versions, which load.type1_scope: all does not do; set schema.new_columns: fail "
               "and add the column yourself",
               s->target_table, c->name, origin);
    return 1;
  }
  return 0;
}

/* The table's columns the source does not deliver, names[] of them. */
static void absent_msg(const target *t, char *const *names, size_t n, const char *origin, dwl_buf *b)
{
  const dwl_spec *s = t->spec;
  buf_printf(b, "table %s has column%s ", s->target_table, n > 1 ? "s" : "");
  for (size_t i = 0; i < n; i++)
    buf_printf(b, "%s'%s'", i ? ", " : "", names[i]);
  buf_printf(b,
             ", which the source (%s) does not deliver; loading on would give new %s NULL there, so nothing was "
             "written: deliver the column again, drop it from the table, or set schema.missing_columns: null (or keep)",
             origin, s->mode == MODE_SCD2 ? "versions" : "rows");
}

/* What the existing column is declared, as a dwload type: known on the
 * servers (have), parsed from SQLite's declared type where it is a type
 * name (a table dwload made with DECIMAL_TEXT is not, and is not judged). */
static int have_type(const tcol *c, int *type)
{
  dwl_column h;
  const char *why;
  if (c->have_known)
    *type = c->have.type;
  else if (c->have_type && coltype_parse(c->have_type, &h, &why) == 0)
    *type = h.type;
  else
    return 0;
  return 1;
}

/* Why a column declared `have` cannot hold the source's values of decl
 * without losing or refusing them; NULL when it can (text takes anything,
 * and text is checked value by value, target_value_fits). */
static const char *incompatible(int have, const dwl_column *decl)
{
  int d = decl->type;
  if (have == DWL_TYPE_TEXT || d == DWL_TYPE_TEXT)
    return NULL;
  switch (have) {
  case DWL_TYPE_INTEGER:
    if (d == DWL_TYPE_INTEGER || d == DWL_TYPE_BOOLEAN || (d == DWL_TYPE_NUMERIC && decl->precision > 0 && decl->scale == 0))
      return NULL;
    return d == DWL_TYPE_NUMERIC || d == DWL_TYPE_REAL ? "would lose the fraction" : "cannot hold it";
  case DWL_TYPE_NUMERIC:
  case DWL_TYPE_REAL:
    return d == DWL_TYPE_INTEGER || d == DWL_TYPE_NUMERIC || d == DWL_TYPE_REAL ? NULL : "cannot hold it";
  case DWL_TYPE_BOOLEAN:
    return d == DWL_TYPE_BOOLEAN || d == DWL_TYPE_INTEGER ? NULL : "cannot hold it";
  case DWL_TYPE_DATE:
    return d == DWL_TYPE_DATE ? NULL : d == DWL_TYPE_TIMESTAMP ? "would lose the time of day" : "cannot hold it";
  case DWL_TYPE_TIMESTAMP:
    return d == DWL_TYPE_DATE || d == DWL_TYPE_TIMESTAMP ? NULL : "cannot hold it";
  }
  return NULL;
}

static const char *type_name(int type)
{
  static const char *const names[] = {"text", "integer", "numeric", "real", "boolean", "date", "timestamp"};
  return type >= 0 && type <= DWL_TYPE_TIMESTAMP ? names[type] : "unknown";
}

/* Each difference as one message to fn; stops when fn returns non-zero.
 * Returns how many were reported, -1 out of memory. */
static int diffs(const target *t, const char *origin, int types, schema_diff_fn fn, void *ud)
{
  dwl_buf b;
  buf_init(&b, 0);
  int n = 0, stop = 0, oom = 0;
  for (size_t c = 0; c < t->ncols && !stop; c++) {
    const tcol *tc = &t->cols[c];
    int have;
    const char *why;
    buf_reset(&b);
    if (tc->not_in_table) {
      if (!missing_msg(t, tc, origin, &b))
        continue;
    } else if (types && tc->role == TC_SRC && have_type(tc, &have) && (why = incompatible(have, &tc->decl)))
      buf_printf(&b, "table %s: column '%s' is %s, which %s: the source (%s) delivers %s", t->spec->target_table,
                 tc->name, type_name(have), why, origin, type_name(tc->decl.type));
    else
      continue;
    if ((oom = buf_failed(&b)))
      break;
    n++;
    stop = fn(ud, b.data);
  }
  /* A run names the absent columns together; check, each on its line. */
  size_t group = types ? 1 : t->nabsent;
  for (size_t i = 0; t->spec->missing_columns == MISSING_FAIL && !stop && !oom && i < t->nabsent; i += group) {
    buf_reset(&b);
    absent_msg(t, &t->absent[i], group, origin, &b);
    if ((oom = buf_failed(&b)))
      break;
    n++;
    stop = fn(ud, b.data);
  }
  buf_free(&b);
  return oom ? -1 : n;
}

int schema_diffs(const target *t, const char *origin, schema_diff_fn fn, void *ud)
{
  return diffs(t, origin, 1, fn, ud);
}

/* The first difference becomes the run's error. */
static int first_diff(void *ud, const char *msg)
{
  dwl_error *err = ud;
  err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA, "%s", msg);
  return 1;
}

int schema_check(const target *t, const char *origin, dwl_error *err)
{
  int n = diffs(t, origin, 0, first_diff, err);
  if (n < 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (n > 0)
    return -1;
  const dwl_spec *s = t->spec;
  for (size_t c = 0; c < t->ncols; c++)
    if (t->cols[c].not_in_table && t->cols[c].role == TC_SRC)
      log_msg(LOG_INFO, "the source (%s) delivers column '%s', which table %s has not: the run adds it; current "
              "versions take its values in place, older ones hold NULL (schema.new_columns: add)",
              origin, t->cols[c].name, s->target_table);
  if (t->nabsent == 0)
    return 0;
  dwl_buf names;
  buf_init(&names, 0);
  for (size_t i = 0; i < t->nabsent; i++)
    buf_printf(&names, "%s'%s'", i ? ", " : "", t->absent[i]);
  if (buf_failed(&names)) {
    buf_free(&names);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  if (s->missing_columns == MISSING_NULL)
    log_msg(LOG_WARN, "table %s has column%s %s, which the source (%s) does not deliver: new %s hold NULL there "
            "(schema.missing_columns: null)",
            s->target_table, t->nabsent > 1 ? "s" : "", names.data, origin,
            s->mode == MODE_SCD2 ? "versions" : "rows");
  else
    log_msg(LOG_INFO, "table %s has column%s %s, which the source (%s) does not deliver: %s "
            "(schema.missing_columns: keep)",
            s->target_table, t->nabsent > 1 ? "s" : "", names.data, origin,
            s->mode == MODE_SCD2    ? "new versions keep the current version's values"
            : s->mode == MODE_UPSERT ? "rows keep their values, new rows hold NULL"
                                     : "new rows hold NULL");
  buf_free(&names);
  return 0;
}

int schema_new_columns(target *t, scd_engine *e, int plan, dwl_error *err)
{
  if (t->spec->new_columns != NEW_ADD)
    return 0;
  for (size_t c = 0; e && c < t->ncols; c++)
    if (t->cols[c].role == TC_SRC && (t->cols[c].not_in_table || t->cols[c].marked) &&
        scd_fill_column(e, t->cols[c].src, err) != 0)
      return -1;
  return plan || target_add_columns(t, NULL, err) >= 0 ? 0 : -1;
}

int schema_prepare(target *t, scd_engine *e, const char *origin, int plan, FILE *sqlout, dwl_error *err)
{
  if (schema_check(t, origin, err) != 0 || schema_new_columns(t, e, plan, err) != 0)
    return -1;
  if (t->spec->widen == WIDEN_WIDEN)
    target_widen_declared(t);
  if (target_widen(t, plan, sqlout, err) < 0)
    return -1;
  return plan ? 0 : schema_keep_begin(t, err);
}
