/* A source plugin of ABI 1.2, built against the frozen 1.2 header
 * (tests/plugins/abi1.2/dwload/plugin.h) the way plugins were written
 * then, with the SDK's helpers and no progress entry (1.3 added it):
 * `rows` rows of (n).  The host must still load and run it, reading no
 * member past the end of its descriptor. */
#include <stdio.h>
#include <stdlib.h>

#include "dwload/plugin.h"

#if DWL_ABI_MINOR != 2
#error "abi12.c must be built against the ABI 1.2 header"
#endif

static const dwl_host *host;

enum { OPT_ROWS, OPT_COUNT };
static const dwl_option options[] = {
  [OPT_ROWS] = {"rows", DWL_OPT_INT, 0, "2", "how many rows to produce"},
  [OPT_COUNT] = {NULL, 0, 0, NULL, NULL},
};
DWL_OPTIONS_CHECK(options, OPT_COUNT);

static const dwl_column cols[] = {{"n", DWL_TYPE_INTEGER, 0, 0, 0}};

typedef struct src {
  int64_t rows, next;
  char num[24];
  dwl_value val;
  uint64_t origin;
} src;

static int v12_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **c, size_t *n)
{
  (void)args;
  src *s = calloc(1, sizeof *s);
  if (!s)
    return dwl_plugin_error(host, ctx, NULL, "abi12: out of memory");
  s->rows = host->opt_int(ctx, DWL_OPT(options, OPT_ROWS));
  *handle = s;
  *c = cols;
  *n = 1;
  return DWL_OK;
}

/* One row per batch. */
static int v12_next(void *h, dwl_batch *b)
{
  src *s = h;
  if (s->next >= s->rows)
    return DWL_EOF;
  s->next++;
  int len = snprintf(s->num, sizeof s->num, "%lld", (long long)s->next);
  s->val = (dwl_value){s->num, (size_t)len, 0};
  s->origin = (uint64_t)s->next;
  b->nrows = 1;
  b->values = &s->val;
  b->origin = &s->origin;
  return DWL_OK;
}

static void v12_close(void *h)
{
  free(h);
}

static const dwl_plugin desc = {
  DWL_SOURCE_PLUGIN,
  .name = "abi12",
  .version = "1.0.0",
  .description = "test source built against ABI 1.2",
  .options = options,
  .open = v12_open,
  .next_batch = v12_next,
  .close = v12_close,
};

DWL_PLUGIN_ENTRY(host, desc)
