/* dwload runs: the job's run history (warehouse/runs.c's table), read
 * without taking the job's lock, so it works while a run is going on. */
#include "runs_cmd.h"

#include "runs.h"
#include "target.h"

int runs_job(const dwl_spec *spec, long limit, int json, FILE *out, dwl_error *err)
{
  target *t;
  if (target_connect(spec, &t, err) != 0)
    return -1;
  int rc = runs_print(t, spec->job, limit, json, out, err);
  target_free(t);
  return rc;
}
