/* What the files of a run share (run.c, run_lookup.c: reading the
 * target's versions, run_spill.c: a delta larger than the memory budget,
 * run_absent.c: deletions by absence): the run's context.  Private to
 * src/cmd/run*.c. */
#ifndef DWL_RUN_IMPL_H
#define DWL_RUN_IMPL_H

#include "bloom.h"
#include "buf.h"
#include "choose.h"
#include "prepare.h"
#include "pushdown.h"
#include "reject.h"
#include "run.h"
#include "scd.h"
#include "spill.h"
#include "target.h"
#include "writer.h"

/* How many times a spilled partition may be split again (run_spill.c). */
#define RUN_SPILL_DEPTH 3
#define RUN_SPLIT_PARTS 64  /* the parts of a split: with the delta's 256
                               partitions and RUN_SPILL_DEPTH levels, within
                               1024 open files */

typedef struct run_ctx {
  const dwl_spec *spec;
  const run_opts *o;
  run_summary *sum;
  target *t;
  dwl_source *src;
  writer *w;
  scd_engine e;
  int have_engine;
  prep p;
  int have_cp, cp_seq;  /* cp_seq: the checkpoint is an integer sequence's */
  dwl_ts cp;            /* stored checkpoint */
  int have_max;
  dwl_ts max;           /* greatest lmd read */
  rowset doomed;        /* current rows of keys deleted by absence */
  keymap present;       /* a spilled run with deletes: absent,
                           truncate_values or lookup: scan: every current
                           version read before the source, kept aside while
                           the partitions are computed (run_spill.c); none
                           with r->kparts */
  rejects rj;
  pushdown *pd;         /* the pushdown engine's (choose.h: engine_choose) */
  engine_choice engine; /* which engine the run uses, and why */
  int locked;
  dwl_ts started;       /* the run's timestamp: deletions by absence */
  int snapshot;         /* scd2 without lmd (snapshot.c): rows dated by the load */
  dwl_ts load;          /* ... its load time: versions start, deletions end */
  int emptied;          /* mode replace: the old rows are deleted */
  long long refreshed;  /* --full-refresh: rows deleted first; -1 none */
  long long scanned;    /* rows the lookup read from the target: its count */
  long long unreadable; /* rejected rows whose key could not be read */
  char first_unreadable[300];
  spill sp;             /* the delta's partition files (run_spill.c) */
  int spilling;         /* 1: rows past the checkpoint go to sp */
  int spill_refused;    /* the budget was exceeded and spilling refused (said once) */
  long long spilled;    /* rows written to sp */
  long part;            /* the partition being computed; -1: none (every key) */
  /* the last walk failed on its late rows under load.late: reject (a
   * spilled run then computes its other partitions for theirs) */
  int late_failed;
  /* a partition past the budget as it is read back is split again
   * (run_spill.c): sub[l] holds level l + 1's files */
  spill sub[RUN_SPILL_DEPTH];
  size_t subpart[RUN_SPILL_DEPTH]; /* ... and the part of each being computed */
  int nsplit;           /* levels of sub on the path of the partition computed */
  spill *divert;        /* the split being filled as a partition is read back */
  spill *from;          /* the files the partition is read back from */
  /* run_absent.c: a job that reads every current version before the
   * source (deletes: absent, truncate_values, lookup: scan) with a key
   * map past the budget, partitioned with the delta */
  int kparts;           /* 1: this run partitions the key map */
  spill kf;             /* the current versions' entries (entry_pack), by key */
  spill kmarks;         /* the keys of rejected rows (fp128), in one file */
  spill kdoomed;        /* the current rows of the keys to delete, in one file */
  size_t kp_flush;      /* entries held while reading, before they go to kf */
  long long kp_live;    /* live keys of the whole table */
  int kp_warned;        /* a partition's entries passed the budget (said once) */
  dwl_buf kp_absent;    /* the keys to delete (fp128), sorted once judged */
  long long kp_truncated; /* the live keys a truncate reaches */
  int kp_may;           /* the key map is read whole, as the estimate fits the
                           budget: partitioned if it passes it after all */
  long long kp_rows;    /* ... that estimate */
  size_t kp_switch;     /* ... at this many versions read (budget / bytes a version) */
  int kp_per;           /* the bytes a version (choose.c) */
  size_t kp_slices;     /* the first pass: partition's entries loaded in this */
  size_t kp_slice;      /* many slices (1: whole), and the slice loaded */
  int kp_dup;           /* a key with two current versions found loading ... */
  fp128 kp_dup_key;     /* ... its entries: named once rolled back */
  fp128 kp_fp1;         /* the type 1 fingerprint of no columns (entry_unpack) */
  long long reading;    /* rows of the partition being read back */
  int mixed;            /* ... and the rows held are of more than one key */
  /* run_stream.c: an initial load (no stored rows) written in chunks while
   * the source is read */
  int stream;           /* 0: not decided yet; 1: streaming; -1: not this run */
  int stream_stopped;   /* keys came back too often: the rest goes to rep */
  bloom seen;           /* the keys written so far */
  spill wrote;          /* the rows written, by key (a key that comes back is rewritten from them) */
  spill rep;            /* rows of keys maybe written already */
  long long repeats;    /* rows sent to rep */
  long long chunk_repeats;  /* ... since the last chunk */
  odbc_conn *failed_conn;  /* the connection whose commit call failed: its
                              statements are freed before it */
} run_ctx;

/* run_lookup.c: the current versions change detection needs, every one
 * (keyed 0) or those of the delta's keys; with r->part >= 0 only those of
 * that partition's keys are kept. */
int run_read_current(run_ctx *r, int keyed, dwl_error *err);
/* run_lookup.c: every stored version of the keys with late rows. */
int run_read_history(run_ctx *r, dwl_error *err);

/* run_absent.c: deletes: absent (or truncate_values): the live keys to delete
 * marked and their current rows read again (r->doomed), before anything
 * is written; *current: the live keys judged.  Returns how many, -1 on
 * error. */
long long run_absent_mark(run_ctx *r, long long *current, dwl_error *err);
/* run_absent.c: the deletion guards (guard_absence): 0 delete, 1 keep them
 * (the guard said why), -1 the run fails. */
int run_absent_guard(run_ctx *r, long long absent, long long current, long long truncated, dwl_error *err);
/* run_absent.c: after the changes: the deletion guards, then the marked keys'
 * deletions through sink. */
int run_absent_apply(run_ctx *r, long long absent, long long current, long long truncated, const scd_sink *sink,
                     scd_counts *counts, dwl_error *err);

/* run_spill.c: after a row joined the delta: past the budget, start
 * spilling (or say once why not). */
int run_spill_check(run_ctx *r, dwl_error *err);
/* run_spill.c: a row past the checkpoint while spilling, to its partition. */
int run_spill_take(run_ctx *r, fp128 key, const dwl_value *row, uint64_t origin, const dwl_ts *lmd,
                   dwl_error *err);
/* run_spill.c: the spilled delta computed partition by partition, each
 * through run_apply_delta. */
int run_spilled(run_ctx *r, dwl_error *err);
/* run_spill.c: why this run cannot spill (plan), or NULL. */
const char *run_spill_refusal(const run_ctx *r);
/* run_spill.c: why this run cannot stream an initial load (deletes:
 * absent, truncate_values, plan), or NULL; _job_: the job's reasons,
 * whether planned or run (plan chooses the engine the run would). */
const char *run_stream_refusal(const run_ctx *r);
const char *run_stream_job_refusal(const run_ctx *r);
/* run_spill.c: how many partitions a delta past the budget takes. */
size_t run_spill_parts(const run_ctx *r);
/* run_spill.c: whether a stored row's key is not of the partition being
 * computed (1), so its current version is not this partition's business. */
int run_spill_other(const run_ctx *r, const dwl_value *row);
/* run_spill.c: the same for a key's fingerprint. */
int run_spill_other_key(const run_ctx *r, fp128 key);

/* run_absent.c: for a job that reads every current version before the
 * source (deletes: absent, truncate_values, lookup: scan): reads them
 * (1), into key files when the dimension's key map passes the budget
 * (r->kparts: every row then spills); 0 for plan, a new table or
 * --full-refresh (the caller reads them), -1 on error. */
int run_keyparts_begin(run_ctx *r, dwl_error *err);
/* run_absent.c: while the current versions are read (r->kparts or
 * r->kp_may): the entries held, to the key files once they are many, or
 * once they pass the budget after all; run_keyparts_flush: all of them. */
int run_keyparts_check(run_ctx *r, dwl_error *err);
int run_keyparts_flush(run_ctx *r, dwl_error *err);
/* run_absent.c: a delivered row to its partition, tagged when not past
 * the checkpoint; a rejected row's key. */
int run_keyparts_take(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past,
                      dwl_error *err);
int run_keyparts_mark(run_ctx *r, fp128 key, dwl_error *err);
/* run_absent.c: the first pass over the partitions: the keys to delete
 * (absent, or reached by a truncate without rows), their rows
 * (r->kdoomed), *current the live keys; returns how many, or -1. */
long long run_keyparts_absent(run_ctx *r, long long *current, dwl_error *err);
/* run_absent.c: after the partitions: the guards, then the deletions of
 * those keys (their rows in r->kdoomed) through sink. */
int run_keyparts_apply(run_ctx *r, long long absent, long long current, const scd_sink *sink, scd_counts *counts,
                       dwl_error *err);
/* run_absent.c: the partition's (r->part, the split path) entries into
 * the engine's key map. */
int run_keyparts_load(run_ctx *r, dwl_error *err);
/* run_absent.c: the slices (parts) partition p's entries need so that
 * each takes about half the budget: 1 when the whole fits. */
size_t run_keyparts_slices(const run_ctx *r, size_t p);
/* run_absent.c: whether a row not past the checkpoint of this key is
 * dropped (its key is live: it only marked it present). */
int run_keyparts_drop(run_ctx *r, fp128 key);
/* run_absent.c: after the rollback of a run that found a key with more
 * than one current version loading a partition's entries (fingerprints):
 * the key named in err, from a scan of the current versions (on SQLite
 * the run's writes locked that scan out). */
void run_keyparts_name_dup(run_ctx *r, dwl_error *err);
void run_keyparts_free(run_ctx *r);

/* run_spill.c: closes the spill files, splits included. */
void run_spill_free(run_ctx *r);

/* run_stream.c: the delta's size at which an initial load starts writing
 * while it reads. */
size_t run_stream_chunk(const run_ctx *r);
/* run_stream.c: after a row joined the delta past run_stream_chunk: an
 * initial load (the target holds no rows) starts streaming and writes the
 * delta held as its first chunk; any other run is left as it was
 * (r->stream -1). */
int run_stream_check(run_ctx *r, dwl_error *err);
/* run_stream.c: a row past the checkpoint while streaming. */
int run_stream_take(run_ctx *r, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, dwl_error *err);
/* run_stream.c: after the source: the last chunk, then the keys whose rows
 * came back after they were written, rewritten partition by partition. */
int run_stream_finish(run_ctx *r, dwl_error *err);
/* run_stream.c: frees what streaming holds (any exit). */
void run_stream_free(run_ctx *r);
/* run.c: adds (sign 1) or takes back (-1) a walk's counts in the summary. */
void run_add_counts(run_ctx *r, const scd_counts *counts, int sign);

/* run.c: the delta in r->e applied through the writer (late rows'
 * histories read and repaired), its counts added to the summary. */
int run_apply_delta(run_ctx *r, dwl_error *err);

#endif
