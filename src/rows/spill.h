/* Spill files: the delta's rows, when they outgrow the memory budget,
 * written to P temporary partition files by a hash of their business key
 * (so every row of a key lands in one partition) and read back one
 * partition at a time, in the order they were written.  A record holds a
 * row's values, origin and lmd as this process made them: the files live
 * only for the run (each is unlinked as soon as it is made, so no exit
 * path, a signal or SIGKILL included, leaves one behind). */
#ifndef DWL_SPILL_H
#define DWL_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dwload/plugin.h"
#include "err.h"
#include "fingerprint.h"
#include "ts.h"

typedef struct spill {
  FILE **f;           /* one per partition */
  size_t nparts;
  size_t ncols;
  char dir[512];      /* where the files are ($TMPDIR, else /tmp) */
  long long *rows;    /* rows written to each partition */
  long long bytes;    /* bytes written to all of them */
  unsigned char *rec; /* spill_put's record, built whole and written at once */
  size_t reccap;
  unsigned level;     /* 0: the delta's partitions; n: a partition split n times
                         (spill_part hashes each level apart) */
  const char *what;   /* for messages: what the files hold ("the delta's spill files") */
  const char *hint;   /* and what to do when writing fails; both static, set by spill_open,
                         which the caller may replace */
  int tag;            /* while a row is read back: the tag it was put with (spill_put_tag) */
} spill;

/* The directory spill files go to: $TMPDIR, else /tmp. */
const char *spill_dir(void);

/* Creates nparts unlinked temporary files in spill_dir(). */
int spill_open(spill *s, size_t nparts, size_t ncols, dwl_error *err);
/* The partition of a business key's fingerprint, at the spill's level. */
size_t spill_part(const spill *s, fp128 key);
/* The same for a level and a number of partitions (a key map's slices
 * that no files hold: cmd/run_absent.c). */
size_t spill_slice(fp128 key, unsigned level, size_t nparts);
int spill_put(spill *s, size_t part, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err);
/* The same with a tag (0 or 1) that s->tag gives back while the row is
 * read (the key-partitioned run's rows not past the checkpoint). */
int spill_put_tag(spill *s, size_t part, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, int tag,
                  dwl_error *err);
/* A fixed-size record of n bytes (a key map entry), read back by
 * spill_read_raw with the same n; a spill holds either kind, not both. */
int spill_put_raw(spill *s, size_t part, const void *rec, size_t n, dwl_error *err);

/* Reads partition `part` back: each row to `fn` (its values valid during
 * the call only; lmd NULL when the row had none). */
typedef int (*spill_fn)(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err);
int spill_read(spill *s, size_t part, spill_fn fn, void *ud, dwl_error *err);
/* The same, keeping the file to be read again (spill_read or spill_close
 * gives its space back). */
int spill_reread(spill *s, size_t part, spill_fn fn, void *ud, dwl_error *err);

/* Reads partition `part`'s raw records of n bytes back, each to fn;
 * keep: the file stays to be read again. */
typedef int (*spill_raw_fn)(void *ud, const void *rec, dwl_error *err);
int spill_read_raw(spill *s, size_t part, size_t n, int keep, spill_raw_fn fn, void *ud, dwl_error *err);

void spill_close(spill *s);

#endif
