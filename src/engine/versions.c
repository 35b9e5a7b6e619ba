/* The version rules both engines implement: the transition table, the
 * close rule and the shared messages (see versions.h).  Pure: no engine
 * state, no SQL; tests/unit/test_versions.c pins the table. */
#include "versions.h"

/* One row per state, one column per event.  A row's next state is live
 * unless it deletes; a delete of a live key leaves nothing (expire) or a
 * tombstone; a delete of a key that is not live changes nothing.  A row of
 * a key that is not live starts a version whatever its values (a revival
 * closes the tombstone). */
static const ver_rule rules[VS_N][VE_N] = {
  [VS_NONE] = {
    [VE_SAME] = {VA_START, VS_LIVE, VS_LIVE, VW_NONE},
    [VE_TYPE1] = {VA_START, VS_LIVE, VS_LIVE, VW_NONE},
    [VE_CHANGE] = {VA_START, VS_LIVE, VS_LIVE, VW_NONE},
    [VE_DELETE] = {VA_NOOP, VS_NONE, VS_NONE, VW_NONE},
  },
  [VS_LIVE] = {
    [VE_SAME] = {VA_NOOP, VS_LIVE, VS_LIVE, VW_NONE},
    [VE_TYPE1] = {VA_TYPE1, VS_LIVE, VS_LIVE, VW_NONE},
    [VE_CHANGE] = {VA_START, VS_LIVE, VS_LIVE, VW_REPLACE},
    [VE_DELETE] = {VA_DELETE, VS_NONE, VS_TOMB, VW_MOVE},
  },
  [VS_TOMB] = {
    [VE_SAME] = {VA_START, VS_LIVE, VS_LIVE, VW_MOVE},
    [VE_TYPE1] = {VA_START, VS_LIVE, VS_LIVE, VW_MOVE},
    [VE_CHANGE] = {VA_START, VS_LIVE, VS_LIVE, VW_MOVE},
    [VE_DELETE] = {VA_NOOP, VS_TOMB, VS_TOMB, VW_NONE},
  },
};

const ver_rule *ver_rule_at(int state, int event)
{
  return &rules[state][event];
}

int ver_next(int state, int event, int tombstones)
{
  const ver_rule *r = ver_rule_at(state, event);
  return tombstones ? r->next_tomb : r->next;
}

int ver_is_event(int action)
{
  return action == VA_START || action == VA_DELETE;
}

/* ---- the close rule ------------------------------------------------------------- */

int64_t ver_end_instant(const dwl_spec *spec, int64_t valid_to)
{
  switch (spec->close) {
  case CLOSE_DAY_BEFORE:
    return valid_to + DWL_US_PER_DAY;
  case CLOSE_SECOND_BEFORE:
    return valid_to + DWL_US_PER_SEC;
  default:
    return valid_to;
  }
}

int64_t ver_close_gap(const dwl_spec *spec)
{
  return ver_end_instant(spec, 0);
}

dwl_ts scd_close_at(const dwl_spec *spec, dwl_ts next)
{
  switch (spec->close) {
  case CLOSE_DAY_BEFORE:
    return ts_add_us(next, -DWL_US_PER_DAY);
  case CLOSE_SECOND_BEFORE:
    return ts_add_us(next, -DWL_US_PER_SEC);
  default:
    return next;
  }
}

/* ---- messages ------------------------------------------------------------------ */

int ver_err_conflict(dwl_error *err, const char *key, const char *when, const char *on, const char *a,
                     const char *b)
{
  if (!when)
    return err_set(err, DWL_EXIT_FAILED,
                   "key %s has two different source rows (%s:%s and %s:%s) and no lmd to order them; "
                   "fix the source, dwload does not pick one",
                   key, on, a, on, b);
  return err_set(err, DWL_EXIT_FAILED,
                 "key %s has two different source rows with the same lmd %s (%s:%s and %s:%s); "
                 "fix the source or its lmd, dwload does not pick one",
                 key, when, on, a, on, b);
}

int ver_err_same_start(dwl_error *err, const char *on, const char *pos, const char *key, const char *when,
                       int stored)
{
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%s: key %s has lmd %s, the same as %s, but different type 2 values; two versions cannot "
                 "start at the same time",
                 on, pos, key, when, stored ? "a stored version of the key" : "the key's current version");
}
