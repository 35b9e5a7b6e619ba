/* OpenLineage run events (spec 2-0-2, RunEvent): what each event holds
 * and when it goes out; the names of its datasets are lineage_names.c's,
 * the file and HTTP transports lineage_send.c's. */
#include "config.h"

#include "lineage.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lineage_impl.h"
#include "log.h"
#include "run.h"

#define OL_SCHEMA "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
#define OL_FACETS "https://openlineage.io/spec/facets/"
#define OL_OUTPUT_STATS                                                                                                \
  OL_FACETS "1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"
#define OL_ERROR_MESSAGE OL_FACETS "1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
/* producer: this dwload, by version; the dwload run facet's schema is
 * tests/data/openlineage/DwloadRunFacet.json */
#define DWL_PRODUCER "https://example.invalid/dwload/" PACKAGE_VERSION
#define DWL_RUN_FACET DWL_PRODUCER "/DwloadRunFacet.json#/$defs/DwloadRunFacet"
/* OpenLineage's HTTP transport: the base URL plus this path */
#define OL_ENDPOINT "api/v1/lineage"

struct lineage {
  char *file;
  char *url; /* the endpoint's full URL */
  const char *job;
  const char *mode;
  char ns[200]; /* the job's namespace */
  lineage_dataset in, out;
  char run_id[40];
};

/* The endpoint: the base URL's path, then OL_ENDPOINT (or
 * $OPENLINEAGE_ENDPOINT), then the base URL's query if it has one. */
static char *endpoint_url(const char *base)
{
  const char *ep = getenv("OPENLINEAGE_ENDPOINT");
  if (!ep || !*ep)
    ep = OL_ENDPOINT;
  size_t n = strcspn(base, "?#");
  const char *query = base + n;
  while (n > 0 && base[n - 1] == '/')
    n--;
  while (*ep == '/')
    ep++;
  size_t len = n + strlen(ep) + strlen(query) + 2;
  char *u = malloc(len);
  if (u)
    snprintf(u, len, "%.*s/%s%s", (int)n, base, ep, query);
  return u;
}

lineage *lineage_open(const dwl_spec *spec, const char *file, const char *url)
{
  if (!url || !*url)
    url = getenv("OPENLINEAGE_URL");
  if (url && !*url)
    url = NULL;
  if (!file && !url)
    return NULL;
  lineage *l = calloc(1, sizeof *l);
  if (!l || (file && !(l->file = strdup(file))) || (url && !(l->url = endpoint_url(url)))) {
    log_msg(LOG_WARN, "no OpenLineage events for this run: out of memory");
    lineage_free(l);
    return NULL;
  }
  const char *ns = getenv("OPENLINEAGE_NAMESPACE");
  snprintf(l->ns, sizeof l->ns, "%s", ns && *ns ? ns : "dwload");
  l->job = spec->job;
  l->mode = run_mode_name(spec->mode);
  lineage_source(spec, &l->in);
  lineage_target(spec, &l->out);
  if (l->url)
    lineage_http_init();
  return l;
}

void lineage_free(lineage *l)
{
  if (!l)
    return;
  if (l->url)
    lineage_http_done();
  free(l->file);
  free(l->url);
  free(l);
}

/* A facet: its _producer and _schemaURL first. */
static json_t *facet(const char *schema)
{
  json_t *f = json_object();
  json_object_set_new(f, "_producer", json_string(DWL_PRODUCER));
  json_object_set_new(f, "_schemaURL", json_string(schema));
  return f;
}

static json_t *dataset(const lineage_dataset *d)
{
  json_t *o = json_object();
  json_object_set_new(o, "namespace", log_json_text(d->ns));
  json_object_set_new(o, "name", log_json_text(d->name));
  return o;
}

/* ISO 8601 UTC with milliseconds, as OpenLineage's clients write it. */
static void event_time(char out[40])
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out + n, 40 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* dwload's own run facet: the summary's counts and outcome. */
static json_t *run_facet(const lineage *l, const run_summary *s)
{
  json_t *f = facet(DWL_RUN_FACET);
  json_object_set_new(f, "mode", json_string(l->mode));
  json_object_set_new(f, "status", json_string(s->status ? s->status : s->ok ? "ok" : "failed"));
  summary_count counts[SUMMARY_NCOUNTS];
  summary_counts(s, counts);
  for (size_t i = 0; i < SUMMARY_NCOUNTS; i++)
    json_object_set_new(f, counts[i].name, json_integer(counts[i].v));
  json_object_set_new(f, "checkpoint", s->checkpoint[0] ? log_json_text(s->checkpoint) : json_null());
  json_object_set_new(f, "seconds", json_real(s->seconds));
  return f;
}

static void emit(const lineage *l, const char *type, json_t *run_facets, json_t *out_facets)
{
  char when[40];
  event_time(when);
  json_t *ev = json_object();
  json_object_set_new(ev, "eventType", json_string(type));
  json_object_set_new(ev, "eventTime", json_string(when));
  json_t *run = json_object();
  json_object_set_new(run, "runId", json_string(l->run_id));
  if (run_facets)
    json_object_set_new(run, "facets", run_facets);
  json_object_set_new(ev, "run", run);
  json_t *job = json_object();
  json_object_set_new(job, "namespace", log_json_text(l->ns));
  json_object_set_new(job, "name", json_string(l->job));
  json_object_set_new(ev, "job", job);
  json_t *ins = json_array(), *outs = json_array(), *out = dataset(&l->out);
  json_array_append_new(ins, dataset(&l->in));
  if (out_facets)
    json_object_set_new(out, "outputFacets", out_facets);
  json_array_append_new(outs, out);
  json_object_set_new(ev, "inputs", ins);
  json_object_set_new(ev, "outputs", outs);
  json_object_set_new(ev, "producer", json_string(DWL_PRODUCER));
  json_object_set_new(ev, "schemaURL", json_string(OL_SCHEMA));
  char *line = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  json_decref(ev);
  if (!line) {
    log_msg(LOG_WARN, "could not emit the OpenLineage %s event: out of memory", type);
    return;
  }
  if (l->file)
    lineage_append(l->file, line);
  if (l->url)
    lineage_post(l->url, line);
  free(line);
}

void lineage_start(void *ud, const run_summary *sum)
{
  lineage *l = ud;
  if (!l)
    return;
  snprintf(l->run_id, sizeof l->run_id, "%s", sum->run_id);
  emit(l, "START", NULL, NULL);
}

void lineage_end(lineage *l, const run_summary *sum, int rc, const dwl_error *err)
{
  /* no START (the run ended before it had an id): no run to end */
  if (!l || !l->run_id[0])
    return;
  json_t *facets = json_object();
  json_object_set_new(facets, "dwload", run_facet(l, sum));
  json_t *out = NULL;
  const char *type = "COMPLETE";
  if (rc == 0) {
    /* every row the run wrote: new versions and rows, closed or updated
     * ones, deleted ones */
    json_t *st = facet(OL_OUTPUT_STATS);
    json_object_set_new(st, "rowCount", json_integer(sum->inserted + sum->expired + sum->updated + sum->deleted));
    out = json_object();
    json_object_set_new(out, "outputStatistics", st);
  } else {
    type = sum->status && strcmp(sum->status, "interrupted") == 0 ? "ABORT" : "FAIL";
    json_t *em = facet(OL_ERROR_MESSAGE);
    json_object_set_new(em, "message", log_json_text(err && err->msg[0] ? err->msg : "the run failed"));
    json_object_set_new(em, "programmingLanguage", json_string("C"));
    json_object_set_new(facets, "errorMessage", em);
  }
  emit(l, type, facets, out);
}
