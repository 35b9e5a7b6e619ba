/* Plugin host: finds connector plugins on the search path, loads them with
 * dlopen, checks their ABI, validates spec options against each plugin's
 * option table and drives a source through the dwl_host API. */
#ifndef DWL_PLUGIN_HOST_H
#define DWL_PLUGIN_HOST_H

#include <stddef.h>
#include "dwload/plugin.h"
#include "err.h"
#include "spec.h"

/* Directories searched for NAME.so, in order: --plugin-path entries,
 * DWLOAD_PLUGIN_PATH entries, the build tree's plugins (when running from
 * the build tree), then $(pkglibdir).  `extra` is the --plugin-path value
 * (colon-separated) or NULL. */
void plugin_set_extra_path(const char *extra);

/* Returns a malloc'd NULL-terminated array of directories (caller frees
 * with plugin_free_dirs). */
char **plugin_search_dirs(void);
void plugin_free_dirs(char **dirs);

typedef struct plugin_lib {
  void *dl;
  const dwl_plugin *p;
  char *path;
} plugin_lib;

/* Loads plugin `name` (a bare name searched on the path, or a path
 * containing '/').  Errors name the file: not found, dlopen failure,
 * missing entry symbol, ABI major mismatch, descriptor too small. */
int plugin_load(const char *name, plugin_lib **out, dwl_error *err);
void plugin_unload(plugin_lib *lib);

/* An opened source. */
typedef struct dwl_source {
  plugin_lib *lib;
  struct dwl_ctx *ctx;
  void *handle;
  const dwl_column *cols;  /* as the engine sees them: after columns: (columns.h) */
  size_t ncols;
  size_t nstored;          /* the first nstored of cols reach the table; the rest only the engine */
  const dwl_column *raw_cols;  /* as the plugin gives them */
  size_t nraw;
  struct col_map *map;     /* NULL: no columns: section, cols are raw_cols */
  const dwl_value *raw_values; /* the last batch as the plugin gave it (nraw a row) */
  /* What messages call the source's rows: the file's name (the last part
   * of the `path` option) when the source has one, else "PLUGIN row". */
  char origin_name[256];
} dwl_source;

/* Takes a row the plugin rejected (host->reject, ABI 1.1).  Returns 0 when
 * the row was set aside, or -1 with err set when the run takes no more
 * rejects (the plugin then fails). */
typedef int (*source_reject_fn)(void *ud, uint64_t origin, const char *raw, size_t raw_len,
                                const dwl_value *values, size_t nvalues, const char *reason, dwl_error *err);

typedef struct source_config {
  const char *plugin;          /* plugin name */
  const spec_opt *opts;        /* options from the spec */
  size_t nopts;
  const char *spec_path;       /* for error positions */
  const char *include_path;    /* the job's include: file, for positions in it; NULL none */
  const char *base_dir;        /* relative DWL_OPT_PATH values resolve here */
  const char *job;
  const char *lmd_column;      /* or NULL; the source's name */
  const dwl_spec *spec;        /* its columns: section applies to the rows; NULL none */
  /* schema.new_columns: ignore: the existing table's column names (NULL:
   * no table, or another setting); a source column the table has not is
   * left out as columns.exclude would leave it (columns_open). */
  char *const *table_cols;
  size_t ntable_cols;
  const char *checkpoint;      /* canonical text or NULL */
  size_t batch_rows;           /* 0: default */
  /* Rows the plugin rejects; NULL: a rejected row fails the source, with
   * the message "ORIGIN_NAME:ORIGIN: REASON". */
  source_reject_fn reject;
  void *reject_ud;
} source_config;

/* Loads the plugin, validates options (unknown option: exit 2 with
 * FILE:LINE:COL and a suggestion; missing required; wrong type), opens it. */
int source_open(const source_config *cfg, dwl_source **out, dwl_error *err);
/* The checks of source_open that need no source: loads the plugin and
 * validates the options, then unloads it; writes "NAME VERSION (FILE)"
 * into about (when not NULL).  Run and check call it before connecting,
 * so a misspelt option is exit 2 also with the warehouse down. */
int source_precheck(const source_config *cfg, char *about, size_t n, dwl_error *err);
/* A row of the plugin's layout (nvalues == s->nraw) in the engine's, as
 * source_next gives rows; other rows as they are.  Valid until the next
 * call of either. */
const dwl_value *source_row(dwl_source *s, const dwl_value *values, size_t *nvalues);
/* Row i of the last batch as the plugin gave it (s->nraw values): what a
 * reject file keeps, so a fixed row can be fed again. */
const dwl_value *source_raw(const dwl_source *s, size_t i);
/* DWL_OK with a batch, DWL_EOF, or DWL_ERR with err set. */
int source_next(dwl_source *s, dwl_batch *b, dwl_error *err);
/* How far the source has read, from its progress entry (ABI 1.3): 1 with
 * *done of *total (> 0) units, 0 when it cannot say (an older plugin, no
 * entry, a pipe).  Call it between batches, from the thread that reads. */
int source_progress(dwl_source *s, uint64_t *done, uint64_t *total);
void source_close(dwl_source *s);

#endif
