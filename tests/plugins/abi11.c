/* A source plugin of ABI 1.1, built against the frozen 1.1 header
 * (tests/plugins/abi1.1/dwload/plugin.h) the way plugins were written
 * then: `rows` rows of (n), the row numbered `reject_at` handed to
 * host->reject (the member 1.1 added) instead of delivered.  The host
 * must still load and run it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwload/plugin.h"

#if DWL_ABI_MINOR != 1
#error "abi11.c must be built against the ABI 1.1 header"
#endif

static const dwl_host *host;

static const dwl_option options[] = {
  {"rows", DWL_OPT_INT, 0, "3", "how many rows to produce"},
  {"reject_at", DWL_OPT_INT, 0, "0", "the row handed to host->reject (0: none)"},
  {NULL, 0, 0, NULL, NULL},
};

static const dwl_column cols[] = {{"n", DWL_TYPE_INTEGER, 0, 0, 0}};

typedef struct src {
  dwl_ctx *ctx;
  int64_t rows, next, reject_at;
  char num[24];
  dwl_value val;
  uint64_t origin;
} src;

static int v11_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **c, size_t *n)
{
  (void)args;
  src *s = calloc(1, sizeof *s);
  if (!s) {
    host->error(ctx, "abi11: out of memory");
    return DWL_ERR;
  }
  s->ctx = ctx;
  s->rows = host->opt_int(ctx, "rows");
  s->reject_at = host->opt_int(ctx, "reject_at");
  *handle = s;
  *c = cols;
  *n = 1;
  return DWL_OK;
}

/* One row per batch. */
static int v11_next(void *h, dwl_batch *b)
{
  src *s = h;
  for (;;) {
    if (s->next >= s->rows)
      return DWL_EOF;
    s->next++;
    int len = snprintf(s->num, sizeof s->num, "%lld", (long long)s->next);
    if (s->next != s->reject_at)
      break;
    if (!DWL_HOST_HAS(host, reject)) {
      host->error(s->ctx, "abi11: row %lld is bad", (long long)s->next);
      return DWL_ERR;
    }
    if (host->reject(s->ctx, (uint64_t)s->next, s->num, (size_t)len, NULL, 0, "rejected as asked") != DWL_OK)
      return DWL_ERR;
  }
  s->val = (dwl_value){s->num, strlen(s->num), 0};
  s->origin = (uint64_t)s->next;
  b->nrows = 1;
  b->values = &s->val;
  b->origin = &s->origin;
  return DWL_OK;
}

static void v11_close(void *h)
{
  free(h);
}

#define DWL_HOST_V1_SIZE (offsetof(dwl_host, opt_map_value) + sizeof(((dwl_host *)0)->opt_map_value))

static const dwl_plugin desc = {
  .abi_version = DWL_ABI_VERSION,
  .size = sizeof(dwl_plugin),
  .name = "abi11",
  .version = "1.0.0",
  .description = "test source built against ABI 1.1",
  .kind = DWL_PLUGIN_SOURCE,
  .options = options,
  .open = v11_open,
  .next_batch = v11_next,
  .close = v11_close,
};

const dwl_plugin *dwl_plugin_entry(const dwl_host *h)
{
  if (!h || DWL_ABI_MAJOR_OF(h->abi_version) != DWL_ABI_MAJOR || h->size < DWL_HOST_V1_SIZE)
    return NULL;
  host = h;
  return &desc;
}
