/* seq.c: an example dwload source plugin, shown in full in dwload-plugin(7).
 * It delivers `count` rows (n, label, updated_at): n counts from 1, label
 * is fixed, and row n was "updated" n * `step` seconds after 2024-01-01, so
 * a job can use updated_at as its lmd column. */
#define _POSIX_C_SOURCE 200809L /* strdup, gmtime_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dwload/plugin.h>

#define SEQ_EPOCH 1704067200 /* 2024-01-01 00:00:00 UTC */

static const dwl_host *host;

/* Options as data: the host validates job files against this table and
 * `dwload plugins` lists it.  The code reads them by number, through the
 * table (DWL_OPT), so a misspelt option does not compile. */
enum { OPT_COUNT, OPT_LABEL, OPT_STEP, NOPTS };
static const dwl_option options[] = {
  [OPT_COUNT] = {"count", DWL_OPT_INT, 1, NULL, "how many rows to deliver"},
  [OPT_LABEL] = {"label", DWL_OPT_STRING, 0, "row", "text of the label column"},
  [OPT_STEP] = {"step", DWL_OPT_INT, 0, "60", "seconds between the updated_at of two rows"},
  [NOPTS] = {NULL, 0, 0, NULL, NULL},
};
DWL_OPTIONS_CHECK(options, NOPTS);

static const dwl_column columns[] = {
  {"n", DWL_TYPE_INTEGER, 0, 0, 0},
  {"label", DWL_TYPE_TEXT, 0, 0, 1},
  {"updated_at", DWL_TYPE_TIMESTAMP, 0, 0, 0},
};
#define NCOLS (sizeof columns / sizeof columns[0])

typedef struct seq {
  dwl_ctx *ctx;
  int64_t count, step, next;
  size_t batch;
  char *label;
  char (*text)[2][24]; /* per row of a batch: n and updated_at */
  dwl_value *values;   /* batch * NCOLS */
  uint64_t *origin;
} seq;

static void seq_close(void *handle)
{
  seq *s = handle;
  if (!s)
    return;
  free(s->label);
  free(s->text);
  free(s->values);
  free(s->origin);
  free(s);
}

static int seq_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **cols,
                    size_t *ncols)
{
  seq *s = calloc(1, sizeof *s);
  if (!s)
    return dwl_plugin_error(host, ctx, NULL, "seq: out of memory");
  s->ctx = ctx;
  s->count = host->opt_int(ctx, DWL_OPT(options, OPT_COUNT));
  s->step = host->opt_int(ctx, DWL_OPT(options, OPT_STEP));
  if (s->count < 0 || s->step < 0) {
    seq_close(s);
    return dwl_plugin_error(host, ctx, NULL, "seq: count and step must not be negative");
  }
  s->label = strdup(host->opt_string(ctx, DWL_OPT(options, OPT_LABEL)));
  s->batch = args->batch_rows ? args->batch_rows : 1000;
  s->text = calloc(s->batch, sizeof *s->text);
  s->values = calloc(s->batch * NCOLS, sizeof *s->values);
  s->origin = calloc(s->batch, sizeof *s->origin);
  if (!s->label || !s->text || !s->values || !s->origin) {
    seq_close(s);
    return dwl_plugin_error(host, ctx, NULL, "seq: out of memory");
  }
  if (args->checkpoint)
    host->log(ctx, DWL_LOG_DEBUG, "the host skips rows up to %s", args->checkpoint);
  *handle = s;
  *cols = columns;
  *ncols = NCOLS;
  return DWL_OK;
}

/* Values stay valid until the next call: they live in the handle. */
static int seq_next(void *handle, dwl_batch *batch)
{
  seq *s = handle;
  size_t k = 0;
  for (; k < s->batch && s->next < s->count; k++) {
    s->next++;
    char *n = s->text[k][0], *at = s->text[k][1];
    time_t t = (time_t)(SEQ_EPOCH + s->next * s->step);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t nlen = (size_t)snprintf(n, 24, "%lld", (long long)s->next);
    size_t atlen = strftime(at, 24, "%Y-%m-%d %H:%M:%S", &tm);
    dwl_value *v = &s->values[k * NCOLS];
    v[0] = (dwl_value){n, nlen, 0};
    v[1] = (dwl_value){s->label, strlen(s->label), 0};
    v[2] = (dwl_value){at, atlen, 0};
    s->origin[k] = (uint64_t)s->next; /* error messages name the row */
  }
  if (k == 0)
    return DWL_EOF;
  batch->nrows = k;
  batch->values = s->values;
  batch->origin = s->origin;
  return DWL_OK;
}

/* DWL_SOURCE_PLUGIN sets the ABI version, the size and the kind. */
static const dwl_plugin descriptor = {
  DWL_SOURCE_PLUGIN,
  .name = "seq",
  .version = "1.0.0",
  .description = "numbered rows with an update time (the example of dwload-plugin(7))",
  .options = options,
  .open = seq_open,
  .next_batch = seq_next,
  .close = seq_close,
};

/* dwl_plugin_entry(): refuses a host of another ABI major, keeps `host`. */
DWL_PLUGIN_ENTRY(host, descriptor)
