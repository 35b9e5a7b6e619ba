/* The job spec (version 1): parsed from YAML with libyaml, ${VAR}-expanded
 * (expand.h), validated, defaults applied.  Everything a run needs to know
 * about the job lives in a dwl_spec; see dwload-job(5) for the keys, and
 * spec_keys.h for their table. */
#ifndef DWL_SPEC_H
#define DWL_SPEC_H

#include <stddef.h>
#include <sys/types.h>
#include "err.h"
#include "ts.h"

/* target.lock_timeout when the spec does not say */
#define DWL_LOCK_TIMEOUT_MS 30000

typedef struct spec_list {
  char **v;
  size_t n;
} spec_list;

enum spec_opt_kind { SPEC_OPT_SCALAR = 0, SPEC_OPT_LIST = 1, SPEC_OPT_MAP = 2 };

/* One plugin option as written in the spec, validated later against the
 * plugin's own option table (which the spec parser does not know). */
typedef struct spec_opt {
  char *name;
  int kind;          /* enum spec_opt_kind */
  char *scalar;      /* SCALAR: expanded text */
  spec_list list;    /* LIST: items; MAP: keys */
  spec_list vals;    /* MAP: values, parallel to list */
  int line, col;     /* 1-based position of the option's key */
  int vline, vcol;   /* 1-based position of its value */
} spec_opt;

enum spec_mode { MODE_APPEND = 0, MODE_REPLACE, MODE_SCD2, MODE_UPSERT };
enum spec_deletes { DEL_NONE = 0, DEL_ABSENT, DEL_COLUMN };
enum spec_delete_style { DELSTYLE_EXPIRE = 0, DELSTYLE_TOMBSTONE };
enum spec_sk_strategy { SK_SEQUENCE = 0, SK_HASH };
enum spec_close { CLOSE_AT_NEXT = 0, CLOSE_DAY_BEFORE, CLOSE_SECOND_BEFORE };
enum spec_t1_scope { T1_CURRENT = 0, T1_ALL };
enum spec_lookup { LOOKUP_AUTO = 0, LOOKUP_SCAN, LOOKUP_KEYS };
enum spec_null_keys { NULLKEYS_ALLOW = 0, NULLKEYS_REJECT };
enum spec_late { LATE_REPAIR = 0, LATE_REJECT, LATE_IGNORE };
/* load.watermark: none compares every row with its key instead of
 * skipping those at or before the checkpoint. */
enum spec_watermark { WATERMARK_CHECKPOINT = 0, WATERMARK_NONE };
/* load.engine: auto picks one of the other two at run time (engine/choose.c). */
enum spec_engine { ENGINE_MEMORY = 0, ENGINE_PUSHDOWN, ENGINE_AUTO };
enum spec_limit_kind { LIMIT_PERCENT = 0, LIMIT_COUNT, LIMIT_ALL };
/* schema.missing_columns: a column of the table the source does not deliver. */
enum spec_missing { MISSING_FAIL = 0, MISSING_NULL, MISSING_KEEP };
/* schema.new_columns: a source column the table has not. */
enum spec_new { NEW_ADD = 0, NEW_FAIL, NEW_IGNORE };
/* schema.widen: a source value the table's column is too narrow for. */
enum spec_widen { WIDEN_WIDEN = 0, WIDEN_FAIL };

/* load.max_deletes (and run --max-deletes): how many keys one run may
 * delete by absence. */
typedef struct spec_limit {
  int kind;              /* enum spec_limit_kind */
  double value;          /* LIMIT_PERCENT: 0 to 100; LIMIT_COUNT: whole, 0 or more */
} spec_limit;
/* load.engine: pushdown takes keys of at most this many columns. */
#define SPEC_PUSHDOWN_MAX_KEY 16

typedef struct dwl_spec {
  char *path;            /* the job file as given */
  char *dir;             /* its folder, for relative paths */
  char *include;         /* the file of include:, as opened; NULL none */

  char *job;

  char *source_plugin;
  spec_opt *source_opts;
  size_t n_source_opts;
  int source_line, source_col;   /* position of the `source:` mapping */

  char *target_connection;
  char *target_table;
  long long lock_timeout_ms;     /* target.lock_timeout: the longest wait for any lock */
  char *run_id_column;   /* target.run_id_column: each row's run id; NULL: none */
  int accept_non_atomic; /* target.accept_non_atomic: 1: load a distributed table without an atomic commit */
  spec_list partition_by; /* target.partition_by: hash-partition a table dwload creates on these key columns */
  long long partitions;  /* target.partitions: how many partitions (with partition_by) */

  int mode;              /* enum spec_mode; default append */
  char *lmd;             /* NULL: no checkpoint (scd2: a snapshot load, dated by the load) */
  spec_list lmd_ties;    /* a composite load.lmd: its columns after the first (lmd), tie-breakers */
  char *lmd_format;      /* NULL: ISO 8601; else strptime or yyyy-MM-dd style */
  spec_list key;
  spec_list type2;
  int type2_given;       /* 0: type2 defaults to every other column */
  spec_list type1;
  int type1_scope;       /* enum spec_t1_scope */
  int deletes;           /* enum spec_deletes */
  char *delete_column;   /* DEL_COLUMN */
  spec_list delete_values;
  spec_list truncate_values; /* DEL_COLUMN: values that delete every live key at the row's lmd */
  spec_list partition;   /* load.partition: deletes: absent judges only the partitions the extract holds */
  int delete_style;      /* enum spec_delete_style */
  int lookup;            /* enum spec_lookup: how current versions are read */
  long long max_rejects; /* bad rows set aside before the run fails; default 0 */
  char *reject_file;     /* where they go, as written (relative: to dir); or NULL */
  int null_keys;         /* enum spec_null_keys: a NULL in a key column */
  long long lookback_us; /* load.lookback: rows with lmd > checkpoint - this are read */
  int lookback_count;    /* 1: lookback_us is a count of sequence values (an integer lmd), not microseconds */
  int late;              /* enum spec_late: rows older than their key's history */
  int watermark;         /* enum spec_watermark: whether the checkpoint skips rows */
  int engine;            /* enum spec_engine: where changes are computed */
  long long memory_budget; /* load.memory_budget in bytes; 0: not set (the default, engine_default_budget) */
  spec_limit max_deletes; /* deletes: absent: default 50% of the current keys */
  int allow_empty;       /* 1: a source without rows may delete by absence / empty a replace */
  long long future_tolerance_us; /* load.future_tolerance: lmd later than now + this is bad; -1: off */
  int ignore_nulls;      /* load.ignore_null_updates: 0 off, 1 every column, 2 those listed */
  spec_list ignore_null_cols; /* its columns when a list */

  int missing_columns;   /* schema.missing_columns: enum spec_missing */
  int new_columns;       /* schema.new_columns: enum spec_new */
  int widen;             /* schema.widen: enum spec_widen */

  /* columns: which source columns reach the table, and under which names
   * (source/columns.c applies it to every plugin's rows).  Names in these
   * lists are source names; each entry's position is "columns.include.NAME",
   * "columns.exclude.NAME" or "columns.rename.NAME". */
  spec_list col_include;
  int col_include_given; /* include: given: only its columns are kept */
  spec_list col_exclude;
  spec_list rename_from; /* parallel lists: source name -> target name */
  spec_list rename_to;

  /* dimension: bookkeeping column names; NULL leaves one out */
  char *surrogate_key;
  int sk_strategy;       /* enum spec_sk_strategy */
  char *valid_from;
  char *valid_to;
  char *current;
  char *deleted;
  char *open_end;        /* NULL: valid_to of a current version is NULL */
  int close;             /* enum spec_close */

  /* Positions of the keys that were given, for errors found later (at run
   * time, against the source's columns).  Dotted names: "load.key",
   * "load.type2", "dimension.valid_from", "target.table", ... */
  struct spec_pos *pos;
  size_t npos;
} dwl_spec;

/* Added to the line of a position taken from the file of `include:`
 * (include.c), so a message can name that file (spec_key_at); a job file
 * has fewer lines. */
#define SPEC_INCLUDE_LINE (1 << 26)

typedef struct spec_pos {
  char *key;
  int line, col;     /* 1-based position of the key */
} spec_pos;

/* Position of dotted key `key`; returns 0 and fills line/col, or -1 when the
 * key was not given in the file (then line/col are set to 0). */
int spec_key_pos(const dwl_spec *s, const char *key, int *line, int *col);
/* The same for a message: the file that gave the key (the job file, or
 * the file of its include:) with line/col in it.  A message naming a key
 * prints "FILE:LINE:COL" from these. */
const char *spec_key_at(const dwl_spec *s, const char *key, int *line, int *col);

/* Parses and validates the job file.  On failure fills err (exit code 2,
 * message "FILE:LINE:COL: ...") and returns NULL. */
dwl_spec *spec_load(const char *path, dwl_error *err);
/* The same for a job file already in memory (len bytes of data); path
 * names it in messages, and its folder is where relative paths resolve. */
dwl_spec *spec_parse(const char *path, const char *data, size_t len, dwl_error *err);
void spec_free(dwl_spec *s);
/* spec_load that, when it refuses the file, still gives the top-level
 * job name if the YAML loaded and the name is valid: into job (n bytes),
 * else "".  The logs and summary of a refused job then name it. */
dwl_spec *spec_load_job(const char *path, char *job, size_t n, dwl_error *err);

/* Reads text given on the command line (--set, --backfill-from) as the
 * job's lmd is read: ISO 8601, or as load.lmd_format says.  0, or -1. */
int spec_parse_lmd_text(const dwl_spec *s, const char *text, dwl_ts *out);

/* Parses a load.max_deletes value: "50%", "12.5%", "1000" or "all".
 * Returns 0, or -1 when `text` is none of these. */
int spec_parse_limit(const char *text, spec_limit *out);
/* Parses a size: "512MiB", "2GiB", "64KiB", "1TiB" or a number of bytes
 * ("4096", "4096B"), at most 1 PiB.  Returns 0, or -1 when `text` is none
 * of these or is 0. */
int spec_parse_size(const char *text, long long *out);
#define SPEC_SIZE_FORMS "a size such as 512MiB, 2GiB, 64KiB or a number of bytes"
/* "50%", "1000" or "all", for messages. */
void spec_format_limit(const spec_limit *l, char *out, size_t n);

/* Index of `name` in l, without regard to case, or -1. */
ssize_t spec_list_index(const spec_list *l, const char *name);
/* Whether source column `source_name` reaches the table under columns:
 * (include, exclude); names compare without regard to case. */
int spec_col_kept(const dwl_spec *s, const char *source_name);

/* Looks up a source option by name; NULL if absent. */
const spec_opt *spec_source_opt(const dwl_spec *s, const char *name);

#endif
