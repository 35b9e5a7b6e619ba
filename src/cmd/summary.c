/* The run summary as one line of JSON (jansson keeps the key order). */
#include "summary.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

void summary_init(run_summary *s, const char *job, const char *mode)
{
  memset(s, 0, sizeof *s);
  snprintf(s->job, sizeof s->job, "%s", job ? job : "");
  s->mode = mode;
}

void summary_engine(run_summary *s, const char *engine, const char *why)
{
  s->engine = engine;
  snprintf(s->engine_reason, sizeof s->engine_reason, "%s", why);
}

void summary_counts(const run_summary *s, summary_count out[SUMMARY_NCOUNTS])
{
  const summary_count c[SUMMARY_NCOUNTS] = {
    {"read", s->read},       {"skipped", s->skipped}, {"inserted", s->inserted},   {"expired", s->expired},
    {"updated", s->updated}, {"deleted", s->deleted}, {"unchanged", s->unchanged}, {"rejected", s->rejected}};
  memcpy(out, c, sizeof c);
}

/* Prints and releases o.  Returns 0, or -1 with errno set when the line
 * did not reach the file (seen at the latest when it is flushed). */
static int print_line(json_t *o, FILE *out)
{
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  int rc = -1;
  errno = ENOMEM;
  if (line) {
    rc = fprintf(out, "%s\n", line) < 0 ? -1 : 0;
    free(line);
  }
  json_decref(o);
  if (fflush(out) != 0 || ferror(out))
    rc = -1;
  return rc;
}

int summary_print(const run_summary *s, FILE *out)
{
  json_t *o = json_object();
  json_object_set_new(o, "job", s->job[0] ? json_string(s->job) : json_null());
  json_object_set_new(o, "status", json_string(s->status ? s->status : s->ok ? "ok" : "failed"));
  json_object_set_new(o, "mode", s->mode ? json_string(s->mode) : json_null());
  json_object_set_new(o, "run_id", s->run_id[0] ? json_string(s->run_id) : json_null());
  json_object_set_new(o, "read", json_integer(s->read));
  json_object_set_new(o, "skipped", json_integer(s->skipped));
  json_object_set_new(o, "inserted", json_integer(s->inserted));
  json_object_set_new(o, "expired", json_integer(s->expired));
  json_object_set_new(o, "updated", json_integer(s->updated));
  json_object_set_new(o, "deleted", json_integer(s->deleted));
  json_object_set_new(o, "unchanged", json_integer(s->unchanged));
  json_object_set_new(o, "rejected", json_integer(s->rejected));
  json_object_set_new(o, "late_repaired", json_integer(s->late_repaired));
  json_object_set_new(o, "late_rejected", json_integer(s->late_rejected));
  json_object_set_new(o, "late_ignored", json_integer(s->late_ignored));
  json_object_set_new(o, "absent", json_integer(s->absent));
  json_object_set_new(o, "widened", json_integer(s->widened));
  json_object_set_new(o, "guard", s->guard ? json_string(s->guard) : json_null());
  json_object_set_new(o, "checkpoint", s->checkpoint[0] ? json_string(s->checkpoint) : json_null());
  if (s->load_time[0])
    json_object_set_new(o, "load_time", json_string(s->load_time));
  if (s->engine) {  /* scd2 and upsert, once the run has chosen */
    json_object_set_new(o, "engine", json_string(s->engine));
    json_object_set_new(o, "engine_reason", json_string(s->engine_reason));
    json_object_set_new(o, "spilled_partitions", json_integer(s->spilled_partitions));
    json_object_set_new(o, "streamed_chunks", json_integer(s->streamed_chunks));
  }
  json_object_set_new(o, "seconds", json_real(round(s->seconds * 1000.0) / 1000.0));
  return print_line(o, out);
}

void migrate_summary_print(const migrate_summary *s, FILE *out)
{
  json_t *o = json_object();
  json_object_set_new(o, "command", json_string("migrate"));
  json_object_set_new(o, "status", json_string(s->ok ? "ok" : "failed"));
  json_object_set_new(o, "tables", json_integer(s->tables));
  json_object_set_new(o, "copied", json_integer(s->copied));
  json_object_set_new(o, "rows", json_integer(s->rows));
  json_object_set_new(o, "verified", json_integer(s->verified));
  json_object_set_new(o, "failed", s->failed[0] ? json_string(s->failed) : json_null());
  json_object_set_new(o, "seconds", json_real(round(s->seconds * 1000.0) / 1000.0));
  print_line(o, out);
}
