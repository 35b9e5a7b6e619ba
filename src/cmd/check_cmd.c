/* dwload check: each step of a run up to the first write (spec, plugin,
 * types and rejects before connecting; with --connect then target, state,
 * source, columns, table), reported as it passes or fails.  The table
 * step names every difference between the table and the job, each on its
 * line; a commit step warns of a table whose foreign partitions commit
 * apart from it.
 * With --json the report is one document, which also names the engine the
 * job uses and why, and whether pushdown would take the job: the test
 * suite reads that instead of keeping its own copy of pushdown's rules. */
#include "check_cmd.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "plugin_host.h"
#include "precheck.h"
#include "prepare.h"
#include "rules.h"
#include "run.h"
#include "runs.h"
#include "scd.h"
#include "schema.h"
#include "state.h"
#include "target.h"

/* Where the steps go: lines on out, or the JSON document's steps. */
typedef struct report {
  FILE *out;
  json_t *doc;    /* --json; NULL prints lines */
  json_t *steps;
} report;

static int report_init(report *rp, const check_opts *o, FILE *out)
{
  memset(rp, 0, sizeof *rp);
  rp->out = out;
  if (!o->json)
    return 0;
  rp->doc = json_object();
  rp->steps = json_array();
  return rp->doc && rp->steps ? 0 : -1;
}

/* Prints the document (steps last, then whether every step passed) and
 * frees it. */
static void report_end(report *rp, int ok)
{
  if (!rp->doc)
    return;
  json_object_set_new(rp->doc, "steps", rp->steps);
  json_object_set_new(rp->doc, "ok", json_boolean(ok));
  char *s = json_dumps(rp->doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (s) {
    fprintf(rp->out, "%s\n", s);
    free(s);
  }
  json_decref(rp->doc);
  rp->doc = rp->steps = NULL;
}

/* ok: 1 passed, 0 FAILED (check stops), STEP_WARN passed with a risk
 * the user should know of ("warning": true in the JSON). */
#define STEP_WARN 2
static void step(report *rp, const char *what, int ok, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void step(report *rp, const char *what, int ok, const char *fmt, ...)
{
  va_list ap;
  if (!rp->doc) {
    fprintf(rp->out, "%-8s %-6s ", what, ok == STEP_WARN ? "WARN" : ok ? "ok" : "FAILED");
    va_start(ap, fmt);
    vfprintf(rp->out, fmt, ap);
    va_end(ap);
    fputc('\n', rp->out);
    return;
  }
  /* The detail may be long (every column's name): sized, not truncated. */
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *detail = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (detail) {
    va_start(ap, fmt);
    vsnprintf(detail, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  json_t *s = json_object();
  json_object_set_new(s, "step", json_string(what));
  json_object_set_new(s, "ok", json_boolean(ok));
  if (ok == STEP_WARN)
    json_object_set_new(s, "warning", json_true());
  json_object_set_new(s, "detail", json_string(detail ? detail : ""));
  json_array_append_new(rp->steps, s);
  free(detail);
}

/* The engine the job uses and why, and whether pushdown would take it:
 * decided by the spec alone, so known before any connection.  A job that
 * names pushdown has passed its refusals when it loaded. */
static void engine_fields(json_t *doc, const dwl_spec *spec)
{
  const char *engine = spec->engine == ENGINE_PUSHDOWN ? "pushdown" : spec->engine == ENGINE_AUTO ? "auto" : "memory";
  char reason[600];
  int line, col;
  const char *file = spec_key_at(spec, "load.engine", &line, &col);
  if (line > 0)
    snprintf(reason, sizeof reason, "%s:%d:%d: the spec sets load.engine: %s", file, line, col, engine);
  else
    snprintf(reason, sizeof reason, "load.engine is not set; memory is the default");
  const char *why = engine_pushdown_refusal(spec);
  char refusal[400];
  snprintf(refusal, sizeof refusal, "load.engine: pushdown %s", why ? why : "");
  json_object_set_new(doc, "engine", json_string(engine));
  json_object_set_new(doc, "engine_reason", json_string(reason));
  json_object_set_new(doc, "pushdown", json_string(why ? refusal : "ok"));
}

typedef struct diff_report {
  report *rp;
  int n;
} diff_report;

static int table_diff(void *ud, const char *msg)
{
  diff_report *dr = ud;
  step(dr->rp, "table", 0, "%s", msg);
  dr->n++;
  return 0;
}

void check_spec_failed(const char *path, const check_opts *o, const dwl_error *err, FILE *out)
{
  report rp;
  if (!o->json || report_init(&rp, o, out) != 0)
    return;
  json_object_set_new(rp.doc, "spec", json_string(path));
  step(&rp, "spec", 0, "%s", err->msg);
  report_end(&rp, 0);
}

int check_job(const dwl_spec *spec, const check_opts *o, FILE *out, dwl_error *err)
{
  target *t = NULL;
  dwl_source *src = NULL;
  prep p;
  scd_engine e;
  int have_engine = 0;
  memset(&p, 0, sizeof p);
  report rp;
  if (report_init(&rp, o, out) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rp.doc) {
    json_object_set_new(rp.doc, "job", json_string(spec->job));
    json_object_set_new(rp.doc, "spec", json_string(spec->path));
    json_object_set_new(rp.doc, "mode", json_string(run_mode_name(spec->mode)));
    engine_fields(rp.doc, spec);
  }
  step(&rp, "spec", 1, "%s (job %s, mode %s)", spec->path, spec->job, run_mode_name(spec->mode));
  int rc = -1;
  if (o->spec_only) {
    rc = 0;
    goto out;
  }
  /* Checks before work (precheck.c): what the warehouse is not needed for. */
  char about[4200];
  if (precheck_plugin(spec, about, sizeof about, err) != 0) {
    step(&rp, "plugin", 0, "%s", err->msg);
    goto out;
  }
  step(&rp, "plugin", 1, "%s", about);
  if (precheck_types(spec, about, sizeof about, err) != 0) {
    step(&rp, "types", 0, "%s", err->msg);
    goto out;
  }
  step(&rp, "types", 1, "%s", about);
  if (spec->reject_file) {
    if (precheck_rejects(spec, about, sizeof about, err) != 0) {
      step(&rp, "rejects", 0, "%s", err->msg);
      goto out;
    }
    step(&rp, "rejects", 1, "%s can be written", about);
  }
  /* Offline unless asked: check is also what a deploy runs where the
   * warehouse is not reachable. */
  if (!o->connect) {
    if (rp.doc)
      json_object_set_new(rp.doc, "connected", json_false());
    rc = 0;
    goto out;
  }
  if (rp.doc)
    json_object_set_new(rp.doc, "connected", json_true());
  if (target_connect(spec, &t, err) != 0) {
    step(&rp, "target", 0, "%s", err->msg);
    goto out;
  }
  step(&rp, "target", 1, "%s %s (%s)", t->c->dbms, t->c->dbms_ver, t->c->redacted);
  job_state st;
  if (state_read(t, spec->job, &st, err) != 0) {
    step(&rp, "state", 0, "%s", err->msg);
    goto out;
  }
  int have_state = odbc_table_exists(t->c, NULL, DWL_STATE_TABLE, err);
  int have_runs = have_state < 0 ? -1 : odbc_table_exists(t->c, NULL, DWL_RUNS_TABLE, err);
  if (have_runs < 0) {
    step(&rp, "state", 0, "%s", err->msg);
    goto out;
  }
  step(&rp, "state", 1, "%s; %s %s, %s %s", st.checkpoint[0] ? st.checkpoint : "no checkpoint yet", DWL_STATE_TABLE,
       have_state ? "exists" : "will be created", DWL_RUNS_TABLE, have_runs ? "exists" : "will be created");
  /* (a composite's array is no value a plugin compares: it is told none) */
  source_config cfg = source_config_for(spec, st.checkpoint[0] && st.checkpoint[0] != '[' ? st.checkpoint : NULL);
  if (source_open(&cfg, &src, err) != 0) {
    step(&rp, "source", 0, "%s", err->msg);
    goto out;
  }
  dwl_buf names;
  buf_init(&names, 0);
  for (size_t i = 0; i < src->nraw; i++)
    buf_printf(&names, "%s%s", i ? ", " : "", src->raw_cols[i].name);
  step(&rp, "source", 1, "%zu columns: %s", src->nraw, names.data ? names.data : "");
  t->nhidden = src->ncols - src->nstored;
  if (prep_init(&p, spec, src, err) != 0 || target_layout(t, src->cols, src->nstored, err) != 0 ||
      ((spec->mode == MODE_SCD2 || spec->mode == MODE_UPSERT) &&
       (have_engine = 1, scd_init(&e, spec, src->cols, src->ncols, ts_now(), err)) != 0)) {
    buf_free(&names);
    step(&rp, "columns", 0, "%s", err->msg);
    goto out;
  }
  /* With columns:, the ones that reach the table, under their names there. */
  buf_reset(&names);
  for (size_t i = 0; src->map && i < src->nstored; i++)
    buf_printf(&names, "%s%s", i ? ", " : "", src->cols[i].name);
  if (src->map)
    step(&rp, "columns", 1, "the spec's columns are in the source; the table's %zu: %s", src->nstored,
         names.data ? names.data : "");
  else
    step(&rp, "columns", 1, "the spec's columns are in the source");
  buf_free(&names);
  if (target_prepare_table(t, 0, err) != 0) {
    step(&rp, "table", 0, "%s", err->msg);
    goto out;
  }
  /* Every difference on its own line, not only the first a run stops at. */
  diff_report dr = {&rp, 0};
  int ndiff = schema_diffs(t, src->origin_name, table_diff, &dr);
  int indexed = ndiff < 0 ? 2 : target_key_indexed(t, err);
  if (indexed < 0) {
    step(&rp, "table", 0, "%s", err->msg);
    goto out;
  }
  if (indexed == 0) {
    dwl_buf keys;
    buf_init(&keys, 0);
    for (size_t i = 0; i < spec->key.n; i++)
      buf_printf(&keys, "%s%s", i ? ", " : "", spec->key.v[i]);
    step(&rp, "table", 0,
         "table %s has no index that begins with its key (%s): each run would find current versions by reading "
         "the whole table; create one, as dwload does for a table it creates",
         spec->target_table, keys.data ? keys.data : "");
    buf_free(&keys);
    ndiff++;
  }
  if (ndiff != 0) {
    if (ndiff < 0)
      err_set(err, DWL_EXIT_FAILED, "out of memory");
    else
      err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA, "table %s differs from the job in %d way%s",
               spec->target_table, ndiff, ndiff > 1 ? "s" : "");
    goto out;
  }
  /* Not a failure: the table's own collation decides which keys are one
   * (dwload-job(5), TABLE LAYOUT), and the source may never hold two. */
  const tcol *loose = target_loose_key(t);
  step(&rp, "table", 1, "%s %s (%zu columns)%s%s%s%s%s%s", spec->target_table,
       t->exists ? "exists" : "will be created", t->ncols, t->remote[0] ? ", engine " : "", t->remote,
       loose ? "; note: key column " : "", loose ? loose->name : "", loose ? loose->have_collate : "",
       loose ? " holds texts equal that differ in case, accents or trailing spaces: the table takes them as one "
               "key, dwload as two (dwload-job(5), TABLE LAYOUT)"
             : "");
  /* Foreign partitions: the run can go ahead, but its commit is not one. */
  dwl_buf risk;
  buf_init(&risk, 0);
  if (target_foreign_risk(t, &risk))
    step(&rp, "commit", STEP_WARN, "%s", risk.data ? risk.data : "out of memory");
  buf_free(&risk);
  /* A distributed table: a prepared XA transaction left by a crash holds
   * locks a run would wait on (on the servers, beyond its lock_timeout). */
  if (t->remote[0]) {
    dwl_buf xids;
    buf_init(&xids, 0);
    int nx = target_prepared_xa(t, t->d->xa_prepared, &xids, err);
    if (nx > 0)
      err_setc(err, DWL_EXIT_LOCKED, DWL_CAUSE_PREPARED_XA,
               "%d prepared XA transaction%s may hold locks its servers would wait on: %s",
               nx, nx > 1 ? "s" : "", buf_failed(&xids) ? "out of memory" : xids.data);
    buf_free(&xids);
    if (nx != 0) {
      step(&rp, "xa", 0, "%s", err->msg);
      goto out;
    }
    step(&rp, "xa", 1, "no prepared XA transaction");
  }
  rc = 0;
out:
  report_end(&rp, rc == 0);
  if (have_engine)
    scd_free(&e);
  prep_free(&p);
  source_close(src);
  target_free(t);
  return rc;
}
