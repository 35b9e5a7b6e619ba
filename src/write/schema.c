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
 * the exit code can follow it). */
#include "schema.h"

#include <strings.h>

#include "buf.h"
#include "log.h"

/* A column of the source the table has not, by schema.new_columns: fail
 * refuses the run; add takes it unless the table could not be kept right
 * with it (its history is matched by the key; type1_scope: all would
 * spread the in-place fill to closed versions). */
static int check_new(const target *t, const char *origin, dwl_error *err)
{
  const dwl_spec *s = t->spec;
  for (size_t c = 0; c < t->ncols; c++) {
    const tcol *tc = &t->cols[c];
    if (!tc->not_in_table)
      continue;
    if (s->new_columns == NEW_FAIL)
      return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA,
                      "table %s exists but has no column '%s', which the source (%s) delivers; add it to the "
                      "table, set schema.new_columns: add, or point target.table at a new table and dwload "
                      "creates it",
                      s->target_table, tc->name, origin);
    int is_key = 0;
    for (size_t k = 0; k < s->key.n; k++)
      is_key |= strcasecmp(s->key.v[k], tc->name) == 0;
    if (is_key)
      return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA,
                      "table %s has no column '%s', a column of load.key, which the source (%s) delivers: the "
                      "stored rows cannot be matched by it; load into a new table",
                      s->target_table, tc->name, origin);
    if (s->mode == MODE_SCD2 && s->type1_scope == T1_ALL)
      return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA,
                      "table %s has no column '%s', which the source (%s) delivers: schema.new_columns: add "
                      "fills it in place on current versions, which load.type1_scope: all does not do; set "
                      "schema.new_columns: fail and add the column yourself",
                      s->target_table, tc->name, origin);
    log_msg(LOG_INFO, "the source (%s) delivers column '%s', which table %s has not: the run adds it; current "
            "versions take its values in place, older ones hold NULL (schema.new_columns: add)",
            origin, tc->name, s->target_table);
  }
  return 0;
}

int schema_new_columns(target *t, scd_engine *e, int plan, dwl_error *err)
{
  if (t->spec->new_columns != NEW_ADD)
    return 0;
  for (size_t c = 0; e && c < t->ncols; c++)
    if ((t->cols[c].not_in_table || t->cols[c].marked) && scd_fill_column(e, t->cols[c].src, err) != 0)
      return -1;
  return plan || target_add_columns(t, NULL, err) >= 0 ? 0 : -1;
}

int schema_check(const target *t, const char *origin, dwl_error *err)
{
  if (check_new(t, origin, err) != 0)
    return -1;
  if (t->nabsent == 0)
    return 0;
  const dwl_spec *s = t->spec;
  dwl_buf names;
  buf_init(&names, 0);
  for (size_t i = 0; i < t->nabsent; i++)
    buf_printf(&names, "%s'%s'", i ? ", " : "", t->absent[i]);
  if (buf_failed(&names)) {
    buf_free(&names);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  int rc = 0;
  if (s->missing_columns == MISSING_NULL) {
    log_msg(LOG_WARN, "table %s has column%s %s, which the source (%s) does not deliver: new %s hold NULL there "
            "(schema.missing_columns: null)",
            s->target_table, t->nabsent > 1 ? "s" : "", names.data, origin,
            s->mode == MODE_SCD2 ? "versions" : "rows");
  } else if (s->missing_columns == MISSING_KEEP) {
    log_msg(LOG_INFO, "table %s has column%s %s, which the source (%s) does not deliver: %s "
            "(schema.missing_columns: keep)",
            s->target_table, t->nabsent > 1 ? "s" : "", names.data, origin,
            s->mode == MODE_SCD2    ? "new versions keep the current version's values"
            : s->mode == MODE_UPSERT ? "rows keep their values, new rows hold NULL"
                                     : "new rows hold NULL");
  } else {
    rc = err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA,
                  "table %s has column%s %s, which the source (%s) does not deliver; loading on would give new %s "
                  "NULL there, so nothing was written: deliver the column again, drop it from the table, or set "
                  "schema.missing_columns: null (or keep)",
                  s->target_table, t->nabsent > 1 ? "s" : "", names.data, origin,
                  s->mode == MODE_SCD2 ? "versions" : "rows");
  }
  buf_free(&names);
  return rc;
}
