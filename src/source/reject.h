/* Rejected rows: the budget of load.max_rejects and the reject file of a
 * run (CSV: source, origin, reason, row).  The file is written under a
 * temporary name beside load.reject_file and renamed into place only after
 * the run committed, so the reject file always holds the rows of the last
 * committed run; a failed run leaves the rows it had set aside in
 * PATH.failed instead.  See dwload-job(5), REJECTS. */
#ifndef DWL_REJECT_H
#define DWL_REJECT_H

#include <stdint.h>
#include <stdio.h>

#include "dwload/plugin.h"
#include "err.h"
#include "spec.h"

typedef struct rejects {
  long long max;     /* load.max_rejects */
  long long count;   /* rows set aside so far */
  char *path;        /* the reject file, absolute; NULL: none */
  char *tmp;         /* the file being written */
  FILE *fp;          /* NULL: counting only (plan, or no reject_file) */
} rejects;

/* Starts the run's rejects; with `write_file` (a run, not a plan) and a
 * load.reject_file, opens its temporary file. */
int rejects_open(rejects *rj, const dwl_spec *spec, int write_file, dwl_error *err);

/* Sets one bad row aside.  `raw` (raw_len bytes) is its source text, or
 * NULL: then `vals` (nvals values) are written re-encoded as one CSV
 * record.  Returns 0, or -1 with err set when the row is one more than
 * load.max_rejects allows (the message is "NAME:ORIGIN: REASON", then the
 * count) or the file cannot be written. */
int rejects_add(rejects *rj, const char *name, uint64_t origin, const char *raw, size_t raw_len,
                const dwl_value *vals, size_t nvals, const char *reason, dwl_error *err);

/* Before the commit: the file's rows are on disk. */
int rejects_flush(rejects *rj, dwl_error *err);
/* After the commit: the file takes its place (a failure is only logged:
 * the data is committed by then). */
void rejects_publish(rejects *rj);
/* After a failed run: the rows set aside so far go to PATH.failed. */
void rejects_abandon(rejects *rj);
void rejects_free(rejects *rj);

#endif
