/* A source plugin of ABI 1.0, built against the frozen 1.0 header
 * (tests/plugins/abi1.0/dwload/plugin.h) the way plugins were written
 * then: the descriptor by hand, the host checked by hand.  The host must
 * still load and run it: `rows` rows of (n). */
#include <stdio.h>
#include <stdlib.h>

#include "dwload/plugin.h"

#if DWL_ABI_MINOR != 0
#error "abi10.c must be built against the ABI 1.0 header"
#endif

static const dwl_host *host;

static const dwl_option options[] = {
  {"rows", DWL_OPT_INT, 0, "2", "how many rows to produce"},
  {NULL, 0, 0, NULL, NULL},
};

static const dwl_column cols[] = {{"n", DWL_TYPE_INTEGER, 0, 0, 0}};

typedef struct src {
  int64_t rows, next;
  char num[24];
  dwl_value val;
  uint64_t origin;
} src;

static int v10_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **c, size_t *n)
{
  (void)args;
  src *s = calloc(1, sizeof *s);
  if (!s) {
    host->error(ctx, "abi10: out of memory");
    return DWL_ERR;
  }
  s->rows = host->opt_int(ctx, "rows");
  *handle = s;
  *c = cols;
  *n = 1;
  return DWL_OK;
}

/* One row per batch. */
static int v10_next(void *h, dwl_batch *b)
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

static void v10_close(void *h)
{
  free(h);
}

static const dwl_plugin desc = {
  .abi_version = DWL_ABI_VERSION,
  .size = sizeof(dwl_plugin),
  .name = "abi10",
  .version = "1.0.0",
  .description = "test source built against ABI 1.0",
  .kind = DWL_PLUGIN_SOURCE,
  .options = options,
  .open = v10_open,
  .next_batch = v10_next,
  .close = v10_close,
};

const dwl_plugin *dwl_plugin_entry(const dwl_host *h)
{
  if (!h || DWL_ABI_MAJOR_OF(h->abi_version) != DWL_ABI_MAJOR)
    return NULL;
  host = h;
  return &desc;
}
