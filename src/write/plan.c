/* Plan mode (plan.h, writer_impl.h): the writer's statements are printed
 * with their parameters (--sql) instead of being executed; run_sql is the
 * one place that chooses between running a statement and printing it. */
#include "plan.h"

#include "writer_impl.h"

/* ---- printing (plan --sql) ------------------------------------------------ */

static void print_value(FILE *f, const dwl_value *v)
{
  if (v->is_null) {
    fputs("NULL", f);
    return;
  }
  fputc('\'', f);
  for (size_t i = 0; i < v->len; i++) {
    if (v->data[i] == '\'')
      fputc('\'', f);
    fputc(v->data[i], f);
  }
  fputc('\'', f);
}

void print_params(FILE *f, const dwl_value *p, size_t n)
{
  fputs("  -- (", f);
  for (size_t i = 0; i < n; i++) {
    if (i)
      fputs(", ", f);
    print_value(f, &p[i]);
  }
  fputs(")\n", f);
}

/* Runs (or in plan mode prints) one statement; `s` caches its preparation
 * when not NULL. */
int run_sql(writer *w, odbc_stmt **s, const char *sql, const dwl_value *params, const SQLSMALLINT *types,
            size_t n, dwl_error *err)
{
  if (!sql)  /* its building failed: neither shown nor run */
    return err_set(err, DWL_EXIT_FAILED, "a statement could not be built (out of memory or too long); "
                                         "nothing was executed");
  if (w->plan) {
    if (w->sqlout) {
      fprintf(w->sqlout, "%s;\n", sql);
      if (n)
        print_params(w->sqlout, params, n);
    }
    return 0;
  }
  int rc;
  if (s) {
    if (!*s && ostmt_prepare(w->t->c, sql, s, err) != 0)
      return -1;
    rc = ostmt_execute(*s, params, types, n, err);
  } else {
    rc = odbc_exec(w->t->c, sql, params, types, n, err);
  }
  if (rc != 0)
    err_prefix(err, "writing %s", w->t->spec->target_table);
  return rc;
}
