/* FROZEN: <dwload/plugin.h> exactly as ABI 1.1 shipped it, so tests/plugins/abi11.c
 * is built against the old layouts and shows the host still loads it.
 * Never edit. */
/* dwload connector plugin ABI: the one header a connector includes.
 *
 * A plugin is a shared object that exports one function, dwl_plugin_entry().
 * The host passes its own API (logging, errors, option access) in a
 * dwl_host, so a plugin links against no host symbols.  Both structs start
 * with an ABI version and their own size and only ever grow at the end:
 * a host refuses a plugin whose major version differs, and either side
 * checks `size` before touching a member added in a later minor version.
 * See dwload-plugin(7).
 */
#ifndef DWLOAD_PLUGIN_H
#define DWLOAD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DWL_ABI_MAJOR 1
#define DWL_ABI_MINOR 1
#define DWL_ABI_VERSION ((uint32_t)((DWL_ABI_MAJOR << 16) | DWL_ABI_MINOR))
#define DWL_ABI_MAJOR_OF(v) ((uint32_t)(v) >> 16)

#define DWL_PLUGIN_ENTRY_SYMBOL "dwl_plugin_entry"

/* Return codes of every plugin callback. */
enum dwl_rc {
  DWL_OK = 0,   /* a batch was delivered (next_batch) or the call succeeded */
  DWL_EOF = 1,  /* next_batch: no more rows */
  DWL_ERR = -1  /* failure; the plugin has called host->error() first */
};

/* Log levels for host->log(). */
enum dwl_log_level {
  DWL_LOG_ERROR = 0,
  DWL_LOG_WARN = 1,
  DWL_LOG_INFO = 2,
  DWL_LOG_DEBUG = 3
};

/* Declared column types a source reports; the target maps them per dialect. */
enum dwl_type {
  DWL_TYPE_TEXT = 0,
  DWL_TYPE_INTEGER = 1,   /* 64-bit signed */
  DWL_TYPE_NUMERIC = 2,   /* exact decimal: precision, scale */
  DWL_TYPE_REAL = 3,      /* binary floating point */
  DWL_TYPE_BOOLEAN = 4,
  DWL_TYPE_DATE = 5,
  DWL_TYPE_TIMESTAMP = 6
};

/* Types of plugin options; the host validates values against them. */
enum dwl_opt_type {
  DWL_OPT_STRING = 0,
  DWL_OPT_PATH = 1,   /* string; relative paths resolve against the job file's folder */
  DWL_OPT_INT = 2,
  DWL_OPT_BOOL = 3,
  DWL_OPT_LIST = 4,   /* sequence of strings */
  DWL_OPT_MAP = 5     /* mapping of string to string */
};

/* One option a plugin accepts, declared as data.  Terminate with {NULL}. */
typedef struct dwl_option {
  const char *name;
  int type;              /* enum dwl_opt_type */
  int required;          /* non-zero: the spec must give it */
  const char *def;       /* default as text (NULL: none) */
  const char *help;      /* one line for listings and error messages */
} dwl_option;

/* One column of a source. */
typedef struct dwl_column {
  const char *name;
  int type;              /* enum dwl_type */
  int precision;         /* NUMERIC digits, TEXT max length; 0 = unknown */
  int scale;             /* NUMERIC scale */
  int nullable;          /* 1 yes, 0 no, -1 unknown */
} dwl_column;

/* One value.  Values travel as text (the canonical exchange form of ODBC
 * and of files) with an explicit NULL flag; `data` need not be
 * NUL-terminated and may contain NUL bytes. */
typedef struct dwl_value {
  const char *data;
  size_t len;
  int is_null;
} dwl_value;

/* A batch of rows handed to the host.  All memory stays owned by the
 * plugin and must remain valid until the next call into the plugin. */
typedef struct dwl_batch {
  size_t nrows;
  const dwl_value *values;   /* nrows * ncols, row-major */
  const uint64_t *origin;    /* per row: source line (CSV), row number (HTTP); 0 unknown */
} dwl_batch;

typedef struct dwl_ctx dwl_ctx;  /* opaque host context for one plugin instance */

/* The host's API, handed to the plugin. */
typedef struct dwl_host {
  uint32_t abi_version;
  uint32_t size;

  /* Logging; messages go to the host's log with the job name attached. */
  void (*log)(dwl_ctx *ctx, int level, const char *fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 3, 4)))
#endif
      ;
  /* Records an error; the first error of a run wins.  Return DWL_ERR after. */
  void (*error)(dwl_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
      __attribute__((format(printf, 2, 3)))
#endif
      ;

  /* Option access.  Values were validated against the plugin's option
   * table; a missing optional option yields its default (or NULL / 0). */
  const char *(*opt_string)(dwl_ctx *ctx, const char *name);
  int64_t (*opt_int)(dwl_ctx *ctx, const char *name);
  int (*opt_bool)(dwl_ctx *ctx, const char *name);
  int (*opt_isset)(dwl_ctx *ctx, const char *name);
  size_t (*opt_list_len)(dwl_ctx *ctx, const char *name);
  const char *(*opt_list_item)(dwl_ctx *ctx, const char *name, size_t i);
  size_t (*opt_map_len)(dwl_ctx *ctx, const char *name);
  const char *(*opt_map_key)(dwl_ctx *ctx, const char *name, size_t i);
  const char *(*opt_map_value)(dwl_ctx *ctx, const char *name, size_t i);

  /* ---- ABI 1.1: present when host->size > offsetof(dwl_host, reject) --- */

  /* Hands the host a row the plugin cannot deliver (wrong number of
   * fields, invalid UTF-8, ...) instead of failing the source.  `origin`
   * as in dwl_batch; `raw` (raw_len bytes, may be NULL) is the row's text
   * as it stood in the source; `values` (may be NULL) its fields, used
   * when there is no raw text; `reason` says what is wrong, without the
   * position (the host adds it).  Returns DWL_OK when the host set the
   * row aside: the plugin skips it and goes on.  Returns DWL_ERR when the
   * job takes no more rejects: the host has recorded the error, and the
   * plugin fails the call (returns DWL_ERR) as it would have without the
   * callback.  With a 1.0 host the plugin fails as before. */
  int (*reject)(dwl_ctx *ctx, uint64_t origin, const char *raw, size_t raw_len, const dwl_value *values,
                size_t nvalues, const char *reason);
} dwl_host;

/* Does `host` have member `m` (added in a later minor version)? */
#define DWL_HOST_HAS(host, m) ((host)->size >= offsetof(dwl_host, m) + sizeof((host)->m))

/* What the host tells a source when opening it. */
typedef struct dwl_source_args {
  uint32_t size;
  const char *job;          /* job name */
  const char *lmd_column;   /* NULL when the job has no lmd column */
  const char *checkpoint;   /* canonical timestamp text, NULL on the first run */
  size_t batch_rows;        /* preferred rows per batch */
} dwl_source_args;

enum dwl_plugin_kind { DWL_PLUGIN_SOURCE = 1 };

/* The descriptor a plugin returns from dwl_plugin_entry(). */
typedef struct dwl_plugin {
  uint32_t abi_version;     /* DWL_ABI_VERSION the plugin was built with */
  uint32_t size;            /* sizeof(dwl_plugin) the plugin was built with */
  const char *name;
  const char *version;
  const char *description;
  int kind;                 /* enum dwl_plugin_kind */
  const dwl_option *options;

  /* Opens the source.  On success stores its state in *handle and the
   * columns in *cols / *ncols (owned by the plugin, valid until close). */
  int (*open)(dwl_ctx *ctx, const dwl_source_args *args, void **handle,
              const dwl_column **cols, size_t *ncols);
  /* Fills *batch with the next rows; DWL_EOF at the end. */
  int (*next_batch)(void *handle, dwl_batch *batch);
  /* Releases everything; safe after any failure of open or next_batch. */
  void (*close)(void *handle);
} dwl_plugin;

typedef const dwl_plugin *(*dwl_plugin_entry_fn)(const dwl_host *host);

/* Every plugin defines exactly this. */
const dwl_plugin *dwl_plugin_entry(const dwl_host *host);

#ifdef __cplusplus
}
#endif
#endif /* DWLOAD_PLUGIN_H */
