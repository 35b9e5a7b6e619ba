/* The engine's rules: what engine: pushdown refuses (a job it cannot
 * compute as the memory engine does).  The spec check calls it, so a job
 * is refused before it runs, never left to differ. */
#include "rules.h"

#include <stddef.h>

/* scd2 truncate rows (pushdown_absent.c): pushdown gives each key of the
 * delta its delete rows and judges the others against the delta's keys,
 * so it hands no key with late rows to the memory engine (pd_repairs).
 * (Absence hands them over, pd_hands_absent; the fill of
 * ignore_null_updates runs after the keys are handed over, and per key.) */
static int truncates(const dwl_spec *s)
{
  return s->mode == MODE_SCD2 && s->truncate_values.n > 0;
}

/* What load.engine: pushdown cannot compute as the memory engine does
 * (src/engine/pushdown.c), refused when the spec is checked; NULL when none. */
const char *engine_pushdown_refusal(const dwl_spec *s)
{
  if (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT)
    return "applies only to modes scd2 and upsert";
  /* Its messages name a key by values fetched into a fixed array. */
  if (s->key.n > SPEC_PUSHDOWN_MAX_KEY)
    return "supports keys of at most 16 columns";
  if (s->lookup != LOOKUP_AUTO)
    return "does not read current versions into memory, so load.lookup does not apply; remove it";
  /* Its SQL orders a key's rows by the lmd alone: the keys with two rows
   * at one instant, or with late rows, go to the memory engine with their
   * tie-breakers (pushdown_take_late): in scd2, without truncate rows
   * (dwload-job(5), SEQUENCES). */
  if (s->lmd_ties.n > 0 && (s->mode != MODE_SCD2 || truncates(s)))
    return "supports a composite load.lmd (tie-breaking columns after the first) only in mode scd2, without "
           "load.deletes.truncate_values; use engine: memory";
  /* Late rows go to the memory engine, key by key (pushdown_take_late),
   * but not with truncate rows: there a late row fails the run
   * (check_late), so jobs made of late rows are refused. */
  if (truncates(s)) {
    if (s->lookback_us > 0)
      return "does not repair history together with load.deletes.truncate_values, so load.lookback (which "
             "rereads late rows) needs engine: memory";
    if (s->watermark == WATERMARK_NONE)
      return "does not repair history together with load.deletes.truncate_values, so load.watermark: none "
             "(which compares rows older than the checkpoint with their key's history) needs engine: memory";
  }
  return NULL;
}

/* A backfill replays rows older than the stored history: late rows, which
 * it repairs.  (ignore_null_updates is refused for a backfill anyway.) */
static const char backfill_why[] =
  "does not repair history together with load.deletes.truncate_values, and a backfill replays rows into it "
  "(late rows); run it with engine: memory";

const char *engine_pushdown_backfill_refusal(const dwl_spec *s)
{
  return s->engine == ENGINE_PUSHDOWN && truncates(s) ? backfill_why : NULL;
}

const char *engine_pushdown_run_refusal(const dwl_spec *s, int backfill)
{
  const char *why = engine_pushdown_refusal(s);
  return why ? why : backfill ? backfill_why : NULL;
}
