/* dwload connector plugin ABI: the one header a connector includes.
 *
 * A plugin is a shared object that exports one function, dwl_plugin_entry().
 * The host passes its own API (logging, errors, option access) in a
 * dwl_host, so a plugin links against no host symbols.  Both structs start
 * with an ABI version and their own size and only ever grow at the end:
 * a host refuses a plugin whose major version differs, and either side
 * checks `size` before touching a member added in a later minor version.
 * ABI 1.3 added dwl_plugin.progress (how far a source has read).
 * The end of the file is the SDK (ABI 1.2): inline helpers for what every
 * plugin needs the same way (the entry point's host check, the
 * descriptor's fixed fields, the error helper, option names read through
 * the option table), compiled into the plugin, so they need nothing from
 * the host beyond the structs.  See dwload-plugin(7).
 */
#ifndef DWLOAD_PLUGIN_H
#define DWLOAD_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DWL_ABI_MAJOR 1
#define DWL_ABI_MINOR 3
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

  /* ---- ABI 1.2: present when DWL_HOST_HAS(host, verror) ---------------- */

  /* error() with a va_list, so dwl_plugin_error() passes a message on
   * without formatting it into a buffer of its own first. */
  void (*verror)(dwl_ctx *ctx, const char *fmt, va_list ap);
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

  /* ---- ABI 1.3: present when DWL_PLUGIN_HAS(plugin, progress) ---------- */

  /* Optional (NULL: the source cannot say).  How far the source has
   * read: *done of *total units (bytes of a file, rows, ...; the same
   * unit for both); *total 0 when the end is not known (a pipe, a FIFO,
   * a query).  The host calls it from its read loop after each batch,
   * never concurrently with another call into the plugin, so it needs no
   * locking; it must be cheap (no I/O beyond an ftell, say).  Returns
   * DWL_OK, or DWL_ERR when it cannot tell (the host shows rows only). */
  int (*progress)(void *handle, uint64_t *done, uint64_t *total);
} dwl_plugin;

/* Does the descriptor `p` have member `m` (added in a later minor version)? */
#define DWL_PLUGIN_HAS(p, m) ((p)->size >= offsetof(dwl_plugin, m) + sizeof((p)->m))

typedef const dwl_plugin *(*dwl_plugin_entry_fn)(const dwl_host *host);

/* Every plugin defines exactly this (DWL_PLUGIN_ENTRY below writes it). */
const dwl_plugin *dwl_plugin_entry(const dwl_host *host);

/* ---- SDK (ABI 1.2) ------------------------------------------------------ */

/* The host of ABI 1.0, up to and including opt_map_value: what every
 * plugin needs.  A smaller dwl_host is broken. */
#define DWL_HOST_V1_SIZE (offsetof(dwl_host, opt_map_value) + sizeof(((dwl_host *)0)->opt_map_value))

/* Does the dwl_source_args the host passed have member `m`? */
#define DWL_ARGS_HAS(args, m) ((args) && (args)->size >= offsetof(dwl_source_args, m) + sizeof((args)->m))

/* 1 when a plugin can work with `h`: the same ABI major, and at least the
 * members of 1.0. */
static inline int dwl_host_usable(const dwl_host *h)
{
  return h && DWL_ABI_MAJOR_OF(h->abi_version) == DWL_ABI_MAJOR && h->size >= DWL_HOST_V1_SIZE;
}

/* The fields every source plugin's descriptor sets the same way:
 *   static const dwl_plugin desc = {DWL_SOURCE_PLUGIN, .name = "x", ...}; */
#define DWL_SOURCE_PLUGIN .abi_version = DWL_ABI_VERSION, .size = sizeof(dwl_plugin), .kind = DWL_PLUGIN_SOURCE

/* Defines dwl_plugin_entry(): refuses an unusable host (NULL), else keeps
 * it in `hostvar` (the plugin's `static const dwl_host *`) and returns
 * &descriptor. */
#define DWL_PLUGIN_ENTRY(hostvar, descriptor)                  \
  const dwl_plugin *dwl_plugin_entry(const dwl_host *dwl_h_)   \
  {                                                            \
    if (!dwl_host_usable(dwl_h_))                              \
      return NULL;                                             \
    (hostvar) = dwl_h_;                                        \
    return &(descriptor);                                      \
  }

/* Records an error through host->error and returns DWL_ERR, for
 * `return dwl_plugin_error(...)`.  With `failed` (may be NULL) only the
 * first error of the source is recorded, since later ones are its
 * consequences, and *failed is set.  Before ABI 1.2 (no host->verror) the
 * message is formatted here, up to 2047 bytes. */
static inline int dwl_plugin_verror(const dwl_host *h, dwl_ctx *ctx, int *failed, const char *fmt, va_list ap)
{
  if (failed && *failed)
    return DWL_ERR;
  if (failed)
    *failed = 1;
  if (DWL_HOST_HAS(h, verror)) {
    h->verror(ctx, fmt, ap);
  } else {
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    h->error(ctx, "%s", msg);
  }
  return DWL_ERR;
}

static inline int dwl_plugin_error(const dwl_host *h, dwl_ctx *ctx, int *failed, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline int dwl_plugin_error(const dwl_host *h, dwl_ctx *ctx, int *failed, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int rc = dwl_plugin_verror(h, ctx, failed, fmt, ap);
  va_end(ap);
  return rc;
}

/* Options read through the declared table, never by a name typed twice:
 * number the options with an enum, index the table by it, and pass
 * DWL_OPT(table, OPT_X) where host->opt_*() wants a name:
 *
 *   enum { OPT_PATH, OPT_HEADER, OPT_COUNT };
 *   static const dwl_option options[] = {
 *     [OPT_PATH] = {"path", DWL_OPT_PATH, 1, NULL, "the file"},
 *     [OPT_HEADER] = {"header", DWL_OPT_BOOL, 0, "true", "a header line"},
 *     [OPT_COUNT] = {NULL, 0, 0, NULL, NULL},
 *   };
 *   DWL_OPTIONS_CHECK(options, OPT_COUNT);
 *   ... host->opt_bool(ctx, DWL_OPT(options, OPT_HEADER)) ...
 *
 * A misspelt OPT_X does not compile, and the host fails the source when a
 * plugin asks for a name its table does not declare. */
#define DWL_OPT(table, idx) ((table)[idx].name)
/* The table has exactly one entry per enum value, plus the terminator. */
#ifdef __cplusplus
#define DWL_STATIC_ASSERT_ static_assert
#else
#define DWL_STATIC_ASSERT_ _Static_assert
#endif
#define DWL_OPTIONS_CHECK(table, count)                                        \
  DWL_STATIC_ASSERT_(sizeof(table) / sizeof((table)[0]) == (size_t)(count) + 1, \
                 #table " needs one entry per option and the {NULL} terminator")

#ifdef __cplusplus
}
#endif
#endif /* DWLOAD_PLUGIN_H */
