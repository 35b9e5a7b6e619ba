/* The smallest complete source plugin: `rows` rows of (n, label), used to
 * test the host's option handling and batching without any file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwload/plugin.h"

static const dwl_host *host;

static const dwl_option options[] = {
  {"rows", DWL_OPT_INT, 0, "3", "how many rows to produce"},
  {"label", DWL_OPT_STRING, 1, NULL, "text of the second column"},
  {"fail_at", DWL_OPT_INT, 0, "0", "fail when producing this row (0: never)"},
  {NULL, 0, 0, NULL, NULL},
};

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
  if (!t) {
    host->error(ctx, "out of memory");
    return DWL_ERR;
  }
  t->ctx = ctx;
  t->rows = host->opt_int(ctx, "rows");
  t->fail_at = host->opt_int(ctx, "fail_at");
  t->label = strdup(host->opt_string(ctx, "label"));
  t->batch = args->batch_rows ? args->batch_rows : 100;
  t->nums = calloc(t->batch, sizeof *t->nums);
  t->vals = calloc(t->batch * 2, sizeof *t->vals);
  t->origin = calloc(t->batch, sizeof *t->origin);
  if (!t->label || !t->nums || !t->vals || !t->origin) {
    tiny_close(t);
    host->error(ctx, "out of memory");
    return DWL_ERR;
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
    if (t->next == t->fail_at) {
      host->error(t->ctx, "tiny: failing at row %lld as asked", (long long)t->next);
      return DWL_ERR;
    }
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

static const dwl_plugin desc = {
  .abi_version = DWL_ABI_VERSION,
  .size = sizeof(dwl_plugin),
  .name = "tiny",
  .version = "1.0.0",
  .description = "test source: numbered rows",
  .kind = DWL_PLUGIN_SOURCE,
  .options = options,
  .open = tiny_open,
  .next_batch = tiny_next,
  .close = tiny_close,
};

const dwl_plugin *dwl_plugin_entry(const dwl_host *h)
{
  host = h;
  return &desc;
}
