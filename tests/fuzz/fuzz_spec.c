/* libFuzzer target for the job spec parser (src/spec/): YAML through
 * libyaml, then every key, type and cross-check of dwload-job(5).
 *
 * The input is the job file itself, parsed from memory (spec_parse) as if
 * read from /fuzz/job.yaml; ${DWL_FUZZ_*} references expand to values set
 * once at start.  A spec that loads must answer the lookups a run makes.
 *
 * fuzz-sources: src/spec/spec.c src/spec/read.c src/spec/include.c src/spec/keys.c src/spec/cross.c src/spec/cross_columns.c
 * fuzz-sources: src/util/expand.c src/util/suggest.c src/engine/rules.c src/util/buf.c src/util/err.c src/rows/ts.c
 * fuzz-packages: yaml-0.1
 */
#include <stdint.h>
#include <stdlib.h>

#include "spec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc, (void)argv;
  setenv("DWL_FUZZ_PW", "s3cr;et'\"", 1);
  setenv("DWL_FUZZ_EMPTY", "", 1);
  setenv("DWL_FUZZ_TABLE", "dim_customer", 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  dwl_error err;
  err_init(&err);
  dwl_spec *s = spec_parse("/fuzz/job.yaml", (const char *)data, size, &err);
  if (!s) {
    /* A refused spec always says why, with a usage or failure code. */
    if (!err_isset(&err) || (err.code != DWL_EXIT_USAGE && err.code != DWL_EXIT_FAILED))
      abort();
    return 0;
  }
  int line, col;
  spec_key_pos(s, "load.lmd", &line, &col);
  spec_key_pos(s, "target.table", &line, &col);
  (void)spec_source_opt(s, "path");
  spec_free(s);
  return 0;
}
