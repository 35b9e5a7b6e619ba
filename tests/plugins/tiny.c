/* The smallest complete source plugin: `rows` rows of (n, label), used to
 * test the host's option handling and batching without any file.  It is
 * the ABI 1.3 plugin of the loader's version tests (abi10.c, abi11.c and
 * abi12.c are the older ones), built with the SDK's helpers; its progress
 * entry counts rows of `rows`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwload/plugin.h"

static const dwl_host *host;

enum { OPT_ROWS, OPT_LABEL, OPT_FAIL_AT, OPT_UNDECLARED, NOPTS };
static const dwl_option options[] = {
  [OPT_ROWS] = {"rows", DWL_OPT_INT, 0, "3", "how many rows to produce"},
  [OPT_LABEL] = {"label", DWL_OPT_STRING, 1, NULL, "text of the second column"},
  [OPT_FAIL_AT] = {"fail_at", DWL_OPT_INT, 0, "0", "fail when producing this row (0: never)"},
  [OPT_UNDECLARED] = {"read_undeclared", DWL_OPT_BOOL, 0, "false",
                      "read an option the table does not declare, as a buggy plugin would"},
  [NOPTS] = {NULL, 0, 0, NULL, NULL},
};
DWL_OPTIONS_CHECK(options, NOPTS);
#define OPT(i) DWL_OPT(options, i)

static const dwl_column cols[] = {
  {"n", DWL_TYPE_INTEGER, 0, 0, 0},
  {"label", DWL_TYPE_TEXT, 0, 0, 1},
};

typedef struct tiny {
  dwl_ctx *ctx;
  int64_t rows, next, fail_at;
  size_t batch;
  char *label;
  char (*nums)[24];
  dwl_value *vals;
  uint64_t *origin;
} tiny;

static void tiny_close(void *h)
{
  tiny *t = h;
  if (!t)
    return;
  free(t->label);
  free(t->nums);
  free(t->vals);
  free(t->origin);
  free(t);
}

static int tiny_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **c, size_t *n)
{
  tiny *t = calloc(1, sizeof *t);
  if (!t)
    return dwl_plugin_error(host, ctx, NULL, "out of memory");
  t->ctx = ctx;
  t->rows = host->opt_int(ctx, OPT(OPT_ROWS));
  t->fail_at = host->opt_int(ctx, OPT(OPT_FAIL_AT));
  t->label = strdup(host->opt_string(ctx, OPT(OPT_LABEL)));
  /* a name typed by hand, as every plugin did before DWL_OPT */
  if (host->opt_bool(ctx, OPT(OPT_UNDECLARED)))
    (void)host->opt_string(ctx, "lable");
  t->batch = args->batch_rows ? args->batch_rows : 100;
  t->nums = calloc(t->batch, sizeof *t->nums);
  t->vals = calloc(t->batch * 2, sizeof *t->vals);
  t->origin = calloc(t->batch, sizeof *t->origin);
  if (!t->label || !t->nums || !t->vals || !t->origin) {
    tiny_close(t);
    return dwl_plugin_error(host, ctx, NULL, "out of memory");
  }
  *handle = t;
  *c = cols;
  *n = 2;
  return DWL_OK;
}

static int tiny_next(void *h, dwl_batch *b)
{
  tiny *t = h;
  size_t k = 0;
  while (k < t->batch && t->next < t->rows) {
    t->next++;
    if (t->next == t->fail_at)
      return dwl_plugin_error(host, t->ctx, NULL, "tiny: failing at row %lld as asked", (long long)t->next);
    int len = snprintf(t->nums[k], sizeof t->nums[k], "%lld", (long long)t->next);
    t->vals[k * 2] = (dwl_value){t->nums[k], (size_t)len, 0};
    t->vals[k * 2 + 1] = (dwl_value){t->label, strlen(t->label), 0};
    t->origin[k] = (uint64_t)t->next;
    k++;
  }
  if (k == 0)
    return DWL_EOF;
  b->nrows = k;
  b->values = t->vals;
  b->origin = t->origin;
  return DWL_OK;
}

static int tiny_progress(void *h, uint64_t *done, uint64_t *total)
{
  tiny *t = h;
  *done = (uint64_t)t->next;
  *total = (uint64_t)t->rows;
  return DWL_OK;
}

static const dwl_plugin desc = {
  DWL_SOURCE_PLUGIN,
  .name = "tiny",
  .version = "1.0.0",
  .description = "test source: numbered rows",
  .options = options,
  .open = tiny_open,
  .next_batch = tiny_next,
  .close = tiny_close,
  .progress = tiny_progress,
};

DWL_PLUGIN_ENTRY(host, desc)
