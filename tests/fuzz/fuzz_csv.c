/* libFuzzer target for the CSV source plugin (plugins/csv/csv.c), driven
 * through the real plugin host (source_open / source_next) as a run drives
 * it, so header handling, quoting across lines, the types map, UTF-8
 * checks and batching are all reached.
 *
 * The plugin reads a file by path; the input lives in a memfd (memory, no
 * disk) that the path option names as /proc/self/fd/N.  Its first byte
 * picks the options, the rest is the file:
 *   bits 0-1  delimiter , ; tab |
 *   bit 2     header: false, columns a, b, c
 *   bit 3     null: NULL
 *   bit 4     types a: integer, b: numeric(6,2)
 *   bit 5     types c: timestamp, d: boolean (d is no column unless a
 *             header names it: an error path)
 *   bits 6-7  batch_rows 1, 2, 3 or 1024
 * Besides not crashing: every row has the source's column count, a NULL
 * has no data, and line numbers never go back.
 *
 * fuzz-sources: src/source/plugin_host.c src/source/columns.c src/spec/spec.c src/spec/read.c src/spec/include.c src/spec/keys.c src/spec/cross.c src/spec/cross_columns.c
 * fuzz-sources: src/util/expand.c src/util/suggest.c src/engine/rules.c src/util/buf.c src/util/err.c src/util/log.c src/rows/ts.c src/util/progress.c src/warehouse/driver_logs.c
 * fuzz-packages: yaml-0.1 jansson
 * fuzz-plugins: plugins/csv/csv.c+plugins/csv/csv_read.c+plugins/types_opt.c+src/rows/coltype.c:-lcsv
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plugin_host.h"
#include "spec.h"

#ifndef DWL_FUZZ_PLUGINDIR
#error "DWL_FUZZ_PLUGINDIR: the folder of the instrumented plugins (scripts/fuzz sets it)"
#endif

static int memfd = -1;
static char fdpath[64];
static const char plugin[] = DWL_FUZZ_PLUGINDIR "/csv.so";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc, (void)argv;
  memfd = memfd_create("fuzz.csv", 0);
  if (memfd < 0) {
    perror("memfd_create");
    exit(1);
  }
  snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", memfd);
  /* Loaded for good: libFuzzer's coverage counters of a module must not
   * be unmapped by the dlclose of each source_close. */
  if (!dlopen(plugin, RTLD_NOW | RTLD_NODELETE)) {
    fprintf(stderr, "%s\n", dlerror());
    exit(1);
  }
  return 0;
}

static void set(spec_opt *o, const char *name, int kind)
{
  memset(o, 0, sizeof *o);
  o->name = (char *)name;
  o->kind = kind;
  o->line = o->vline = 1;
  o->col = o->vcol = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t ctl = data[0];
  data++, size--;
  if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
    abort();

  static char *cols[] = {"a", "b", "c"};
  static char *tkeys[] = {"a", "b", "c", "d"};
  static char *tvals[] = {"integer", "numeric(6,2)", "timestamp", "boolean"};
  static char delims[][2] = {",", ";", "\t", "|"};
  spec_opt o[6];
  size_t n = 0;
  set(&o[n], "path", SPEC_OPT_SCALAR);
  o[n++].scalar = fdpath;
  set(&o[n], "delimiter", SPEC_OPT_SCALAR);
  o[n++].scalar = delims[ctl & 3];
  if (ctl & 4) {
    set(&o[n], "header", SPEC_OPT_SCALAR);
    o[n++].scalar = "false";
    set(&o[n], "columns", SPEC_OPT_LIST);
    o[n].list.v = cols;
    o[n++].list.n = 3;
  }
  if (ctl & 8) {
    set(&o[n], "null", SPEC_OPT_SCALAR);
    o[n++].scalar = "NULL";
  }
  if (ctl & 0x30) {
    set(&o[n], "types", SPEC_OPT_MAP);
    size_t first = ctl & 0x10 ? 0 : 2, count = (ctl & 0x30) == 0x30 ? 4 : 2;
    o[n].list.v = tkeys + first;
    o[n].vals.v = tvals + first;
    o[n].list.n = o[n].vals.n = count;
    n++;
  }
  static const size_t batch[] = {1, 2, 3, 1024};
  source_config cfg = {
    .plugin = plugin,
    .opts = o,
    .nopts = n,
    .spec_path = "/fuzz/job.yaml",
    .base_dir = "/fuzz",
    .job = "fuzz",
    .batch_rows = batch[ctl >> 6],
  };
  dwl_error err;
  err_init(&err);
  dwl_source *s = NULL;
  if (source_open(&cfg, &s, &err) != 0) {
    if (s || !err_isset(&err))
      abort();
    return 0;
  }
  uint64_t last = 0, sum = 0;
  dwl_batch b;
  int rc;
  while ((rc = source_next(s, &b, &err)) == DWL_OK) {
    if (b.nrows > cfg.batch_rows)
      abort();
    for (size_t r = 0; r < b.nrows; r++) {
      if (b.origin[r] < last)
        abort();
      last = b.origin[r];
      for (size_t c = 0; c < s->ncols; c++) {
        const dwl_value *v = &b.values[r * s->ncols + c];
        if (v->is_null ? v->data != NULL : v->data == NULL)
          abort();
        /* Touch every byte, so a value past its buffer shows. */
        for (size_t i = 0; !v->is_null && i < v->len; i++)
          sum += (unsigned char)v->data[i];
      }
    }
  }
  if (rc != DWL_EOF && !(rc == DWL_ERR && err_isset(&err)))
    abort();
  source_close(s);
  return (int)(sum & 0);
}
