/* The guards of deletions by absence (see guard.h and dwload-job(5),
 * "Guards"). */
#include "guard.h"

#include "log.h"

static int allow_empty(const dwl_spec *spec, const run_opts *o)
{
  return spec->allow_empty || o->allow_empty;
}

int guard_absence(const dwl_spec *spec, const run_opts *o, long long current, long long absent, long long read,
                  long long unreadable, const char *first, run_summary *sum, dwl_error *err)
{
  sum->absent = absent;
  if (absent == 0)
    return 0;
  const char *table = spec->target_table;
  const char *how = spec->deletes == DEL_ABSENT ? "deletes: absent" : "a truncate row (load.deletes.truncate_values)";
  if (unreadable > 0) {
    sum->guard = "unreadable_reject";
    log_msg(LOG_WARN,
            "%lld rejected row%s had no readable key (the first: %s), so deletes: absent deletes none of the %lld "
            "key%s of %s missing from the source in this run: any of them may be a rejected row's",
            unreadable, unreadable == 1 ? "" : "s", first, absent, absent == 1 ? "" : "s", table);
    return 1;
  }
  if (read == 0 && !allow_empty(spec, o)) {
    sum->guard = "empty_extract";
    return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_GUARD,
                   "job %s: the source delivered no rows, and deletes: absent would delete every current key of "
                   "%s (%lld); an empty extract is taken for a failed source and deletes nothing.  If the source "
                   "really is empty now, run once with --allow-empty --max-deletes all (or set load.allow_empty: "
                   "true)",
                   spec->job, table, absent);
  }
  const spec_limit *l = o->max_deletes ? o->max_deletes : &spec->max_deletes;
  long long allowed = l->kind == LIMIT_ALL     ? absent
                      : l->kind == LIMIT_COUNT ? (long long)l->value
                                               : (long long)((double)current * l->value / 100.0 + 1e-9);
  if (absent > allowed) {
    char lim[40];
    spec_format_limit(l, lim, sizeof lim);
    sum->guard = "max_deletes";
    return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_GUARD,
                   "job %s: %s would delete %lld of the %lld current keys of %s (%.1f%%), more than "
                   "%s: %s allows (%lld); nothing is deleted.  If the source really dropped them, run once with "
                   "--max-deletes %lld (or all), or raise load.max_deletes",
                   spec->job, how, absent, current, table, current > 0 ? 100.0 * (double)absent / (double)current : 100.0,
                   o->max_deletes ? "--max-deletes" : "load.max_deletes", lim, allowed, absent);
  }
  return 0;
}

int guard_replace(const dwl_spec *spec, const run_opts *o, long long rows, run_summary *sum, dwl_error *err)
{
  if (rows == 0 || allow_empty(spec, o))
    return 0;
  sum->guard = "empty_extract";
  return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_GUARD,
                 "job %s: the source delivered no rows to load, and mode replace would empty %s (%lld row%s); "
                 "an empty extract is taken for a failed source.  If the source really is empty now, run once with "
                 "--allow-empty (or set load.allow_empty: true)",
                 spec->job, spec->target_table, rows, rows == 1 ? "" : "s");
}
