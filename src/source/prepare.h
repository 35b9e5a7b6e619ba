/* Row preparation, between the source plugin and the engine: each source
 * row's values normalized by their declared types and checked against the
 * target's columns, its lmd parsed; a bad row is described, not loaded.
 * Also the source's configuration as the job spec gives it. */
#ifndef DWL_PREPARE_H
#define DWL_PREPARE_H

#include <stddef.h>
#include <sys/types.h>

#include "dwload/plugin.h"
#include "err.h"
#include "plugin_host.h"
#include "spec.h"
#include "target.h"
#include "ts.h"

typedef struct prep {
  const dwl_spec *spec;
  target *t;           /* decides the canonical form of the lmd; schema.widen widens its columns */
  const dwl_column *cols;
  size_t ncols;
  ssize_t lmd;
  size_t ties[DWL_TS_TIES]; /* a composite lmd's tie-breaking columns (load.lmd's later ones) */
  int nties;
  unsigned tie_time;   /* bit k: ties[k] is a date or timestamp, else an integer (dwl_ts.tie_time) */
  dwl_value *row;      /* the normalized row */
  dwl_buf *scratch;    /* per column */
  char origin_name[256];
  size_t *nokey;       /* load.null_keys: reject: the key columns */
  size_t nnokey;
} prep;
/* The source's configuration for the job: its plugin and options, and the
 * checkpoint it may push down (NULL: read every row). */
source_config source_config_for(const dwl_spec *spec, const char *checkpoint);

/* Reads the lmd and key columns' positions in the source; p->t is set by
 * the caller once the target's layout is known.  prep_free after either
 * outcome. */
int prep_init(prep *p, const dwl_spec *spec, const dwl_source *src, dwl_error *err);
void prep_free(prep *p);

/* Normalizes one source row into p->row and parses its lmd.  Returns 0,
 * 1 for a bad row (why says what is wrong: the run rejects it or fails),
 * or -1 with err set. */
int prep_row(prep *p, const dwl_value *in, dwl_ts *lmd, char *why, size_t whylen, dwl_error *err);

/* The key of a rejected row, normalized as prep_row would (into p->row,
 * the other columns NULL).  Returns 0, or 1 when a key value cannot be
 * read. */
int prep_key(prep *p, const size_t *key, size_t nkey, const dwl_value *in);

/* Describes a bad value of column col into why ("column 'c': 'v' what").
 * Returns 1, as prep_row does for a bad row. */
int prep_bad_value(const prep *p, size_t col, const dwl_value *v, const char *what, char *why, size_t n);

#endif
