/* The engine's rules: what engine: pushdown refuses (a job it cannot
 * compute as the memory engine does; the spec check calls it, so a job
 * is refused before it runs, never left to differ), and which jobs the
 * memory engine reads every current version for (past the memory budget
 * a run partitions that key map with the delta: cmd/run_absent.c). */
#include "rules.h"

#include <stddef.h>

/* What load.engine: pushdown cannot compute as the memory engine does
 * (src/engine/pushdown.c), refused when the spec is checked; NULL when none.
 * Late rows, rows it does not place and keys with rows at one composite
 * instant go to the memory engine key by key (pushdown_take_late), with
 * absence and truncate rows too: none of those is refused. */
const char *engine_pushdown_refusal(const dwl_spec *s)
{
  if (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT)
    return "applies only to modes scd2 and upsert";
  /* Its messages name a key by values fetched into a fixed array. */
  if (s->key.n > SPEC_PUSHDOWN_MAX_KEY)
    return "supports keys of at most 16 columns";
  if (s->lookup != LOOKUP_AUTO)
    return "does not read current versions into memory, so load.lookup does not apply; remove it";
  /* Its SQL orders a key's rows by the lmd alone: in scd2 the keys with
   * two rows at one instant, or with late rows, go to the memory engine
   * with their tie-breakers; upsert's statements keep one row per key
   * (dwload-job(5), SEQUENCES). */
  if (s->lmd_ties.n > 0 && s->mode != MODE_SCD2)
    return "supports a composite load.lmd (tie-breaking columns after the first) only in mode scd2; use "
           "engine: memory";
  return NULL;
}

/* Absence and truncate rows judge every current key, and lookup: scan
 * asks for them all; the source comes first otherwise (cmd/run.c). */
const char *engine_reads_all_current(const dwl_spec *s)
{
  if (s->deletes == DEL_ABSENT)
    return "deletes: absent judges every current key";
  if (s->truncate_values.n > 0)
    return "load.deletes.truncate_values reaches every current key";
  return s->lookup == LOOKUP_SCAN ? "load.lookup: scan reads every current version" : NULL;
}
