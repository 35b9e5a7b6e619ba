/* The engine a run uses (choose.h): load.engine as written, or for
 * engine: auto the memory engine's estimated memory against the budget.
 *
 * The estimate's two parts were measured (peak RSS by /usr/bin/time -v,
 * bench/gen.py's customer table: id, name, address, phone, lmd; scd2 with
 * a type 1 column; three runs each, the median; SQLite's scan as runs on
 * copies of the table, the servers' as plans):
 *   - current versions: a 1,000-row delta with load.lookup: scan (plan)
 *     into dimensions of 100k and 200k current versions; the growth per
 *     version is the dialect's scan_row_bytes: 82 on SQLite (28,180 ->
 *     36,216 KiB), 90 on PostgreSQL (25,364 -> 34,164), 170 on MariaDB
 *     (28,872 -> 45,444): the key map's fingerprints and the driver's
 *     buffers (the rows themselves are not kept);
 *   - the delta (SQLite): an initial load of 100k rows (6,155,377 bytes
 *     of CSV) peaked at 49,924 KiB, of 200k rows (12,533,046) at 81,228:
 *     320 bytes a delta row against 63.8 bytes of CSV, 5 bytes of memory
 *     per byte of source.
 * The dimension's size is the catalog's row estimate (COUNT(*) where the
 * catalog has none), which counts closed versions too: an upper bound on
 * the current versions a full scan reads.  The delta is known before it
 * is read only when the source tells its size (the csv plugin's progress
 * total: the file's bytes); otherwise the dimension alone decides.  The
 * memory engine also keeps its delta within the budget, by spilling it to
 * partition files (cmd/run_spill.c).
 * Into a table holding no rows (an initial load), the memory engine does
 * not hold the delta: it writes it in chunks while reading
 * (cmd/run_stream.c), in about the chunk and its Bloom filter of memory at
 * any source size (bench/stream.sh: 74 MiB peak RSS at 1M rows, 76 MiB at
 * 10M, with the default budget's 16 MiB chunks and 32 MiB filter, over a
 * baseline of about 20 MiB).  Such a load is estimated at that, so auto
 * keeps the faster streamed load where it fits. */
#include "choose.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"
#include "rules.h"

#define MIB (1024.0 * 1024.0)
#define STREAM_CHUNK_BYTES ((size_t)16 << 20)
#define STREAM_BLOOM_MIN ((size_t)1 << 20)
#define STREAM_BLOOM_MAX ((size_t)32 << 20)

size_t engine_stream_chunk(long long budget)
{
  return budget > 0 && (size_t)budget < STREAM_CHUNK_BYTES ? (size_t)budget : STREAM_CHUNK_BYTES;
}

/* 1 MiB is 8M bits: 100k keys answer "maybe written" falsely about 1 in
 * 20,000 times; 32 MiB (268M bits) 10M keys about 1 in 1,000. */
size_t engine_stream_bloom(long long budget)
{
  size_t b = budget > 0 ? (size_t)budget / 8 : 0;
  return b < STREAM_BLOOM_MIN ? STREAM_BLOOM_MIN : b > STREAM_BLOOM_MAX ? STREAM_BLOOM_MAX : b;
}

long long engine_default_budget(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return 1LL << 30;
  long long q = (long long)pages * page / 4;
  /* a small machine still gets room for a real dimension; a large one
   * does not hand one job all of it by default */
  if (q < 256LL << 20)
    q = 256LL << 20;
  if (q > 16LL << 30)
    q = 16LL << 30;
  return q;
}

/* "12.3", "0.000977": MiB readable at every budget, tiny ones included. */
static void mib(double bytes, char out[32])
{
  double v = bytes / MIB;
  snprintf(out, 32, v >= 100 || v == 0 ? "%.0f" : v >= 1 ? "%.1f" : "%.3g", v);
}

/* The budget and where it came from, into from (n bytes). */
static long long budget_of(const dwl_spec *s, const run_opts *o, char *from, size_t n)
{
  int line = 0, col = 0;
  const char *file = spec_key_at(s, "load.memory_budget", &line, &col);
  if (o->memory_budget > 0) {
    snprintf(from, n, "--memory-budget");
    return o->memory_budget;
  }
  if (s->memory_budget > 0) {
    snprintf(from, n, "load.memory_budget at %s:%d:%d", file, line, col);
    return s->memory_budget;
  }
  snprintf(from, n, "the default: a quarter of physical memory, 256 MiB to 16 GiB");
  return engine_default_budget();
}

/* Why pushdown cannot take this run, or NULL: the spec's rules, and a
 * source column named as pushdown's stage columns are. */
static const char *pushdown_refusal(const dwl_spec *s, const target *t, char *buf, size_t n)
{
  const char *why = engine_pushdown_refusal(s);
  for (size_t i = 0; !why && i < t->ncols; i++) {
    if (t->cols[i].role == TC_SRC && strncasecmp(t->cols[i].name, "dwl_", 4) == 0) {
      snprintf(buf, n, "stages its own columns named dwl_*, and the source has a column '%s'", t->cols[i].name);
      why = buf;
    }
  }
  return why;
}

/* The rows of the dimension a run reads current versions from: the
 * catalog's estimate (target_count); none after --full-refresh, which
 * emptied the table first. */
static long long dimension_rows(const run_opts *o, target *t, dwl_error *err)
{
  return t->exists && !o->full_refresh ? target_count(t, err) : 0;
}

/* The memory a current version takes, read (the dialect's measure). */
int engine_current_row_bytes(const target *t)
{
  return t->d->scan_row_bytes > 0 ? t->d->scan_row_bytes : ENGINE_CURRENT_ROW_BYTES;
}

/* The memory engine chosen by name, for a job whose key map holds every
 * current version (engine_reads_all_current): past the budget a run
 * partitions it with the delta by key (cmd/run_absent.c), but plan,
 * which writes no file, holds it: a dimension whose key map passes the
 * budget is said, as plan says of a delta it cannot spill. */
static int warn_key_map(const dwl_spec *s, const run_opts *o, target *t, long long budget, dwl_error *err)
{
  const char *why = o->plan ? engine_reads_all_current(s) : NULL;
  if (!why)
    return 0;
  long long rows = dimension_rows(o, t, err);
  if (rows < 0)
    return -1;
  int per = engine_current_row_bytes(t);
  double need = (double)rows * per;
  if (need <= (double)budget)
    return 0;
  char a[32], b[32];
  mib(need, a);
  mib((double)budget, b);
  log_msg(LOG_WARN, "plan reads every current version before the source (%s): ~%lld rows x %d bytes = %s MiB of "
          "key map, more than the memory budget %s MiB, held in memory: plan writes no file (a run partitions "
          "it with the delta by key)", why, rows, per, a, b);
  return 0;
}

int engine_choose(const dwl_spec *s, const run_opts *o, target *t, dwl_source *src, int can_stream,
                  engine_choice *out, dwl_error *err)
{
  char from[300];
  out->budget = budget_of(s, o, from, sizeof from);
  char budget[32];
  mib((double)out->budget, budget);
  if (s->engine != ENGINE_AUTO) {
    out->engine = s->engine;
    int line = 0, col = 0;
    const char *file = spec_key_at(s, "load.engine", &line, &col);
    const char *name = s->engine == ENGINE_PUSHDOWN ? "pushdown" : "memory";
    if (line > 0)
      snprintf(out->why, sizeof out->why, "engine: %s: load.engine at %s:%d:%d (memory budget %s MiB, %s: "
               "used by engine: auto)", name, file, line, col, budget, from);
    else
      snprintf(out->why, sizeof out->why, "engine: memory: load.engine is not set (memory budget %s MiB, %s: "
               "used by engine: auto)", budget, from);
    log_msg(LOG_INFO, "%s", out->why);
    return s->engine == ENGINE_MEMORY ? warn_key_map(s, o, t, out->budget, err) : 0;
  }
  long long rows = dimension_rows(o, t, err);
  if (rows < 0)
    return -1;
  int per = engine_current_row_bytes(t);
  double dim = (double)rows * per, need = dim;
  char est[300], a[32], b[32], c[32];
  mib(dim, a);
  int n = snprintf(est, sizeof est, "dimension ~%lld rows x %d bytes = %s MiB", rows, per, a);
  uint64_t done, total;
  if (rows == 0 && can_stream) {
    size_t chunk = engine_stream_chunk(out->budget), bloom = engine_stream_bloom(out->budget);
    need += (double)(chunk + bloom);
    mib((double)chunk, b);
    mib((double)bloom, c);
    snprintf(est + n, sizeof est - (size_t)n, " + an initial load streamed in chunks of %s MiB with a %s MiB "
             "filter of written keys", b, c);
  } else if (source_progress(src, &done, &total)) {
    double delta = (double)total * ENGINE_DELTA_PER_SOURCE_BYTE;
    need += delta;
    mib((double)total, b);
    mib(delta, c);
    snprintf(est + n, sizeof est - (size_t)n, " + delta %s MiB of source x %d = %s MiB", b,
             ENGINE_DELTA_PER_SOURCE_BYTE, c);
  }
  char buf[300];
  const char *refused = need > (double)out->budget ? pushdown_refusal(s, t, buf, sizeof buf) : NULL;
  out->engine = need > (double)out->budget && !refused ? ENGINE_PUSHDOWN : ENGINE_MEMORY;
  snprintf(out->why, sizeof out->why, "engine: auto chose %s: %s %s budget %s MiB (%s)%s%s",
           out->engine == ENGINE_PUSHDOWN ? "pushdown" : "memory", est,
           need > (double)out->budget ? ">" : "<=", budget, from, refused ? ", but load.engine: pushdown " : "",
           refused ? refused : "");
  log_msg(LOG_INFO, "%s", out->why);
  return 0;
}
