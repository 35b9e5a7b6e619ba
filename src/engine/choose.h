/* Which engine a run of an scd2 or upsert job uses: load.engine memory or
 * pushdown as written, or, for load.engine: auto, pushdown when the memory
 * engine's estimated memory exceeds the memory budget (load.memory_budget,
 * run/plan --memory-budget, or the default) and pushdown takes the job. */
#ifndef DWL_CHOOSE_H
#define DWL_CHOOSE_H

#include "err.h"
#include "plugin_host.h"
#include "run.h"
#include "spec.h"
#include "target.h"

/* Bytes of the memory engine per current version it reads (a full scan)
 * where the dialect gives no scan_row_bytes, and per byte of a source it
 * holds as the delta: see choose.c. */
#define ENGINE_CURRENT_ROW_BYTES 82
#define ENGINE_DELTA_PER_SOURCE_BYTE 5

/* The streamed initial load (cmd/run_stream.c) for a budget: the bytes of
 * rows held before a chunk is written (16 MiB, or the budget when it is
 * smaller), and the size of its Bloom filter of written keys (an eighth of
 * the budget, from 1 to 32 MiB).  Their sum is what the memory engine holds
 * of an initial load, whatever the source's size. */
size_t engine_stream_chunk(long long budget);
size_t engine_stream_bloom(long long budget);

typedef struct engine_choice {
  int engine;        /* ENGINE_MEMORY or ENGINE_PUSHDOWN */
  long long budget;  /* bytes */
  char why[1200];     /* for the log and the summary's engine_reason */
} engine_choice;

/* The memory engine's bytes per current version it reads from t: the
 * dialect's measure, else ENGINE_CURRENT_ROW_BYTES. */
int engine_current_row_bytes(const target *t);

/* A quarter of physical memory, at least 256 MiB and at most 16 GiB (1 GiB
 * when the system cannot say). */
long long engine_default_budget(void);

/* Chooses for a run (options o: --memory-budget, --backfill-from,
 * --full-refresh) whose table `t` is prepared and source `src` open, and
 * logs the choice.  can_stream: the memory engine would stream this run
 * into a table holding no rows (it can spill: cmd/run_spill.c), so such a
 * load is estimated at the stream's chunk and filter, not at the source's
 * size.  0, or -1 with err (the table's row count failed). */
int engine_choose(const dwl_spec *s, const run_opts *o, target *t, dwl_source *src, int can_stream,
                  engine_choice *out, dwl_error *err);

#endif
