/* Plugin host: search path, dlopen, ABI check, option validation against
 * each plugin's option table, and the dwl_host API handed to plugins. */
#include "plugin_host.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "buf.h"
#include "columns.h"
#include "driver_logs.h"
#include "log.h"
#include "progress.h"
#include "suggest.h"

/* The smallest descriptor a plugin of ABI major 1 can have: everything up
 * to and including `close`.  Members added later are read only when the
 * plugin's `size` covers them. */
#define DWL_PLUGIN_V1_SIZE (offsetof(dwl_plugin, close) + sizeof(((dwl_plugin *)0)->close))

static char *extra_path;

void plugin_set_extra_path(const char *extra)
{
  free(extra_path);
  extra_path = extra ? strdup(extra) : NULL;
}

static int dirs_add(char ***dirs, size_t *n, const char *d, size_t len)
{
  if (len == 0)
    return 0;
  char **nd = realloc(*dirs, (*n + 2) * sizeof *nd);
  if (!nd)
    return -1;
  *dirs = nd;
  nd[*n] = strndup(d, len);
  if (!nd[*n])
    return -1;
  (*n)++;
  nd[*n] = NULL;
  return 0;
}

static int dirs_add_list(char ***dirs, size_t *n, const char *list)
{
  while (list && *list) {
    const char *colon = strchr(list, ':');
    size_t len = colon ? (size_t)(colon - list) : strlen(list);
    if (dirs_add(dirs, n, list, len) != 0)
      return -1;
    list = colon ? colon + 1 : NULL;
  }
  return 0;
}

/* Running from the build tree means the in-tree plugins are wanted, with no
 * environment variable and no install (see README, "Building"). */
static int running_from_build_tree(void)
{
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 0;
  self[n] = '\0';
  return strcmp(self, DWL_BUILD_EXE) == 0;
}

char **plugin_search_dirs(void)
{
  char **dirs = NULL;
  size_t n = 0;
  int rc = dirs_add_list(&dirs, &n, extra_path);
  if (rc == 0)
    rc = dirs_add_list(&dirs, &n, getenv("DWLOAD_PLUGIN_PATH"));
  if (rc == 0 && running_from_build_tree())
    rc = dirs_add(&dirs, &n, DWL_BUILD_PLUGINDIR, strlen(DWL_BUILD_PLUGINDIR));
  if (rc == 0)
    rc = dirs_add(&dirs, &n, DWL_PKGLIBDIR, strlen(DWL_PKGLIBDIR));
  if (rc != 0) {
    plugin_free_dirs(dirs);
    return NULL;
  }
  return dirs;
}

void plugin_free_dirs(char **dirs)
{
  if (!dirs)
    return;
  for (char **d = dirs; *d; d++)
    free(*d);
  free(dirs);
}

static int valid_plugin_name(const char *name)
{
  if (!*name)
    return 0;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
      return 0;
  return 1;
}

static char *find_plugin(const char *name, dwl_error *err)
{
  if (strchr(name, '/')) {
    if (access(name, R_OK) == 0)
      return strdup(name);
    err_set(err, DWL_EXIT_USAGE, "plugin file %s: %s", name, strerror(errno));
    return NULL;
  }
  if (!valid_plugin_name(name)) {
    err_set(err, DWL_EXIT_USAGE, "invalid plugin name '%s' (letters, digits, '_' and '-' only)", name);
    return NULL;
  }
  char **dirs = plugin_search_dirs();
  if (!dirs) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    return NULL;
  }
  dwl_buf searched;
  buf_init(&searched, 0);
  char *found = NULL;
  for (char **d = dirs; *d && !found; d++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.so", *d, name);
    if (access(path, R_OK) == 0)
      found = strdup(path);
    else
      buf_printf(&searched, "%s%s", searched.len ? ", " : "", *d);
  }
  if (!found)
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_PLUGIN_NOT_FOUND, "plugin '%s' not found (searched: %s; set DWLOAD_PLUGIN_PATH or --plugin-path)",
            name, searched.data ? searched.data : "nothing");
  buf_free(&searched);
  plugin_free_dirs(dirs);
  return found;
}

/* ---- the dwl_host API ------------------------------------------------- */

/* Validated option values for one plugin instance. */
typedef struct opt_val {
  const dwl_option *decl;
  const spec_opt *given;   /* NULL: default applies */
  char *resolved;          /* DWL_OPT_PATH: absolute path */
  int64_t ival;
  int bval;
} opt_val;

struct dwl_ctx {
  const plugin_lib *lib;
  opt_val *vals;
  size_t nvals;
  dwl_error *err;          /* where host->error() records, set around each call */
  dwl_error scratch;       /* used when a plugin reports outside a call */
  source_reject_fn reject; /* NULL: a rejected row fails the source */
  void *reject_ud;
  const char *origin_name;
  int undeclared;          /* the plugin asked for an option it does not declare */
};

/* A name the plugin's table does not declare is a bug in the plugin: it
 * would read NULL or 0 for an option the job may well have set.  The
 * error is recorded and the call that asked fails (plugin_call_failed),
 * whatever the plugin returns. */
static const opt_val *ctx_opt(dwl_ctx *ctx, const char *name)
{
  for (size_t i = 0; name && i < ctx->nvals; i++)
    if (strcmp(ctx->vals[i].decl->name, name) == 0)
      return &ctx->vals[i];
  if (!ctx->undeclared)
    err_set(ctx->err ? ctx->err : &ctx->scratch, DWL_EXIT_FAILED,
            "plugin %s reads option '%s', which its option table does not declare (a bug in the plugin)",
            ctx->lib->p->name, name ? name : "(null)");
  ctx->undeclared = 1;
  return NULL;
}

static void host_log(dwl_ctx *ctx, int level, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  log_msg(level, "%s: %s", ctx && ctx->lib ? ctx->lib->p->name : "plugin", msg);
}

static void host_verror(dwl_ctx *ctx, const char *fmt, va_list ap)
{
  err_vset(ctx->err ? ctx->err : &ctx->scratch, DWL_EXIT_FAILED, fmt, ap);
}

static void host_error(dwl_ctx *ctx, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  host_verror(ctx, fmt, ap);
  va_end(ap);
}

static int host_reject(dwl_ctx *ctx, uint64_t origin, const char *raw, size_t raw_len, const dwl_value *values,
                       size_t nvalues, const char *reason)
{
  dwl_error *err = ctx->err ? ctx->err : &ctx->scratch;
  if (!reason || !*reason)
    reason = "rejected by the plugin without a reason";
  if (ctx->reject)
    return ctx->reject(ctx->reject_ud, origin, raw, raw_len, values, nvalues, reason, err) == 0 ? DWL_OK : DWL_ERR;
  err_set(err, DWL_EXIT_FAILED, "%s:%llu: %s", ctx->origin_name ? ctx->origin_name : "source",
          (unsigned long long)origin, reason);
  return DWL_ERR;
}

static const char *host_opt_string(dwl_ctx *ctx, const char *name)
{
  const opt_val *v = ctx_opt(ctx, name);
  if (!v)
    return NULL;
  if (v->resolved)
    return v->resolved;
  if (v->given && v->given->kind == SPEC_OPT_SCALAR)
    return v->given->scalar;
  return v->given ? NULL : v->decl->def;
}

static int64_t host_opt_int(dwl_ctx *ctx, const char *name)
{
  const opt_val *v = ctx_opt(ctx, name);
  return v ? v->ival : 0;
}

static int host_opt_bool(dwl_ctx *ctx, const char *name)
{
  const opt_val *v = ctx_opt(ctx, name);
  return v ? v->bval : 0;
}

static int host_opt_isset(dwl_ctx *ctx, const char *name)
{
  const opt_val *v = ctx_opt(ctx, name);
  return v && v->given;
}

/* A scalar given where a list is declared counts as a one-item list. */
static size_t host_opt_list_len(dwl_ctx *ctx, const char *name)
{
  const opt_val *v = ctx_opt(ctx, name);
  if (!v || !v->given)
    return 0;
  return v->given->kind == SPEC_OPT_SCALAR ? 1 : v->given->list.n;
}

static const char *host_opt_list_item(dwl_ctx *ctx, const char *name, size_t i)
{
  const opt_val *v = ctx_opt(ctx, name);
  if (!v || !v->given)
    return NULL;
  if (v->given->kind == SPEC_OPT_SCALAR)
    return i == 0 ? v->given->scalar : NULL;
  return i < v->given->list.n ? v->given->list.v[i] : NULL;
}

static size_t host_opt_map_len(dwl_ctx *ctx, const char *name)
{
  const opt_val *v = ctx_opt(ctx, name);
  return v && v->given && v->given->kind == SPEC_OPT_MAP ? v->given->list.n : 0;
}

static const char *host_opt_map_key(dwl_ctx *ctx, const char *name, size_t i)
{
  const opt_val *v = ctx_opt(ctx, name);
  if (!v || !v->given || v->given->kind != SPEC_OPT_MAP || i >= v->given->list.n)
    return NULL;
  return v->given->list.v[i];
}

static const char *host_opt_map_value(dwl_ctx *ctx, const char *name, size_t i)
{
  const opt_val *v = ctx_opt(ctx, name);
  if (!v || !v->given || v->given->kind != SPEC_OPT_MAP || i >= v->given->vals.n)
    return NULL;
  return v->given->vals.v[i];
}

static const dwl_host host_api = {
  .abi_version = DWL_ABI_VERSION,
  .size = sizeof(dwl_host),
  .log = host_log,
  .error = host_error,
  .opt_string = host_opt_string,
  .opt_int = host_opt_int,
  .opt_bool = host_opt_bool,
  .opt_isset = host_opt_isset,
  .opt_list_len = host_opt_list_len,
  .opt_list_item = host_opt_list_item,
  .opt_map_len = host_opt_map_len,
  .opt_map_key = host_opt_map_key,
  .opt_map_value = host_opt_map_value,
  .reject = host_reject,
  .verror = host_verror,
};

/* ---- loading ------------------------------------------------------------ */

int plugin_load(const char *name, plugin_lib **out, dwl_error *err)
{
  *out = NULL;
  char *path = find_plugin(name, err);
  if (!path)
    return -1;
  dlerror();
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *why = dlerror();
    /* a missing library it links, another architecture: the file, not the moment */
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_NOT_PLUGIN, "cannot load plugin %s: %s", path, why ? why : "unknown error");
    free(path);
    return -1;
  }
  dwl_plugin_entry_fn entry;
  /* POSIX allows converting dlsym's result to a function pointer this way. */
  *(void **)&entry = dlsym(dl, DWL_PLUGIN_ENTRY_SYMBOL);
  if (!entry) {
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_NOT_PLUGIN, "%s is not a dwload plugin: it has no %s() entry function", path,
            DWL_PLUGIN_ENTRY_SYMBOL);
    goto fail;
  }
  const dwl_plugin *p = entry(&host_api);
  if (!p) {
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_PLUGIN_ABI, "%s: %s() returned no descriptor", path, DWL_PLUGIN_ENTRY_SYMBOL);
    goto fail;
  }
  if (DWL_ABI_MAJOR_OF(p->abi_version) != DWL_ABI_MAJOR) {
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_PLUGIN_ABI,
             "%s was built for plugin ABI %u.%u but this dwload speaks ABI %u.%u; rebuild the plugin against this "
            "dwload's headers",
            path, (unsigned)DWL_ABI_MAJOR_OF(p->abi_version), (unsigned)(p->abi_version & 0xffffu),
            (unsigned)DWL_ABI_MAJOR, (unsigned)DWL_ABI_MINOR);
    goto fail;
  }
  if (p->size < DWL_PLUGIN_V1_SIZE) {
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_PLUGIN_ABI, "%s: plugin descriptor is %u bytes, smaller than ABI %u requires (%zu)", path,
            (unsigned)p->size, (unsigned)DWL_ABI_MAJOR, (size_t)DWL_PLUGIN_V1_SIZE);
    goto fail;
  }
  if (!p->name || !p->open || !p->next_batch || !p->close || p->kind != DWL_PLUGIN_SOURCE) {
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_PLUGIN_ABI, "%s: plugin descriptor is incomplete (name, kind or callbacks missing)", path);
    goto fail;
  }
  plugin_lib *lib = calloc(1, sizeof *lib);
  if (!lib) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto fail;
  }
  lib->dl = dl;
  lib->p = p;
  lib->path = path;
  *out = lib;
  return 0;
fail:
  dlclose(dl);
  free(path);
  return -1;
}

void plugin_unload(plugin_lib *lib)
{
  if (!lib)
    return;
  /* Under valgrind, keeping the object mapped keeps plugin symbols in leak
   * reports readable. */
  if (!getenv("DWLOAD_NO_DLCLOSE"))
    dlclose(lib->dl);
  free(lib->path);
  free(lib);
}

/* ---- option validation ---------------------------------------------------- */

static int parse_bool(const char *s, int *out)
{
  static const char *const yes[] = {"true", "yes", "on", "1", NULL};
  static const char *const no[] = {"false", "no", "off", "0", NULL};
  for (int i = 0; yes[i]; i++)
    if (strcasecmp(s, yes[i]) == 0)
      return *out = 1, 0;
  for (int i = 0; no[i]; i++)
    if (strcasecmp(s, no[i]) == 0)
      return *out = 0, 0;
  return -1;
}

static int parse_int(const char *s, int64_t *out)
{
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end)
    return -1;
  *out = v;
  return 0;
}

static const char *kind_name(int kind)
{
  return kind == SPEC_OPT_LIST ? "a list" : kind == SPEC_OPT_MAP ? "a mapping" : "a scalar";
}

static int resolve_path(const char *base, const char *p, char **out)
{
  if (p[0] == '/' || !base || !*base) {
    *out = strdup(p);
  } else {
    size_t n = strlen(base) + strlen(p) + 2;
    *out = malloc(n);
    if (*out)
      snprintf(*out, n, "%s/%s", base, p);
  }
  return *out ? 0 : -1;
}

/* The file and line of a position in the job: an option that came from
 * the job's include: file is in that file (SPEC_INCLUDE_LINE). */
static const char *opt_file(const source_config *cfg, int *line)
{
  if (*line > SPEC_INCLUDE_LINE && cfg->include_path) {
    *line -= SPEC_INCLUDE_LINE;
    return cfg->include_path;
  }
  return cfg->spec_path ? cfg->spec_path : "job";
}

/* Checks one given option against its declaration and fills *v. */
static int check_opt(const source_config *cfg, const spec_opt *o, opt_val *v, dwl_error *err)
{
  const dwl_option *d = v->decl;
  int vline = o->vline;
  const char *file = opt_file(cfg, &vline);
  switch (d->type) {
  case DWL_OPT_STRING:
  case DWL_OPT_PATH:
  case DWL_OPT_INT:
  case DWL_OPT_BOOL:
    if (o->kind != SPEC_OPT_SCALAR)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: source.%s: expected a scalar, found %s", file, vline,
                     o->vcol, o->name, kind_name(o->kind));
    if (d->type == DWL_OPT_INT && parse_int(o->scalar, &v->ival) != 0)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: source.%s: '%s' is not an integer", file, vline, o->vcol,
                     o->name, o->scalar);
    if (d->type == DWL_OPT_BOOL && parse_bool(o->scalar, &v->bval) != 0)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: source.%s: '%s' is not a boolean (true or false)", file,
                     vline, o->vcol, o->name, o->scalar);
    if (d->type == DWL_OPT_PATH && resolve_path(cfg->base_dir, o->scalar, &v->resolved) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    return 0;
  case DWL_OPT_LIST:
    if (o->kind == SPEC_OPT_MAP)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: source.%s: expected a list, found a mapping", file, vline,
                     o->vcol, o->name);
    return 0;
  case DWL_OPT_MAP:
    if (o->kind != SPEC_OPT_MAP)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: source.%s: expected a mapping, found %s", file, vline,
                     o->vcol, o->name, kind_name(o->kind));
    return 0;
  default:
    return err_set(err, DWL_EXIT_FAILED, "plugin option %s has an unknown type %d", d->name, d->type);
  }
}

/* Fills defaults for options that were not given. */
static int default_opt(const source_config *cfg, opt_val *v, dwl_error *err)
{
  const dwl_option *d = v->decl;
  if (!d->def)
    return 0;
  if (d->type == DWL_OPT_INT && parse_int(d->def, &v->ival) != 0)
    return err_set(err, DWL_EXIT_FAILED, "plugin %s: default of option %s is not an integer", cfg->plugin, d->name);
  if (d->type == DWL_OPT_BOOL && parse_bool(d->def, &v->bval) != 0)
    return err_set(err, DWL_EXIT_FAILED, "plugin %s: default of option %s is not a boolean", cfg->plugin, d->name);
  if (d->type == DWL_OPT_PATH && resolve_path(cfg->base_dir, d->def, &v->resolved) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

static int validate_opts(const source_config *cfg, dwl_ctx *ctx, dwl_error *err)
{
  const dwl_option *decl = ctx->lib->p->options;
  const char *file = cfg->spec_path ? cfg->spec_path : "job";
  size_t ndecl = 0;
  while (decl && decl[ndecl].name)
    ndecl++;
  ctx->vals = calloc(ndecl ? ndecl : 1, sizeof *ctx->vals);
  if (!ctx->vals)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  ctx->nvals = ndecl;
  for (size_t i = 0; i < ndecl; i++)
    ctx->vals[i].decl = &decl[i];

  for (size_t i = 0; i < cfg->nopts; i++) {
    const spec_opt *o = &cfg->opts[i];
    opt_val *v = NULL;
    for (size_t j = 0; j < ndecl; j++)
      if (strcmp(decl[j].name, o->name) == 0)
        v = &ctx->vals[j];
    if (!v) {
      int line = o->line;
      const char *ofile = opt_file(cfg, &line);
      const char **names = calloc(ndecl + 1, sizeof *names);
      if (!names)
        return err_set(err, DWL_EXIT_FAILED, "out of memory");
      for (size_t j = 0; j < ndecl; j++)
        names[j] = decl[j].name;
      const char *near = spec_suggest(o->name, names);
      if (near) {
        err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_PLUGIN_OPTION, "%s:%d:%d: unknown option '%s' for plugin %s; did you mean '%s'?", ofile, line,
                o->col, o->name, cfg->plugin, near);
      } else {
        dwl_buf all;
        buf_init(&all, 1024);
        for (size_t j = 0; j < ndecl; j++)
          buf_printf(&all, "%s%s", j ? ", " : "", names[j]);
        err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_PLUGIN_OPTION, "%s:%d:%d: unknown option '%s' for plugin %s (its options: plugin, %s)", ofile,
                line, o->col, o->name, cfg->plugin, all.data ? all.data : "");
        buf_free(&all);
      }
      free(names);
      return -1;
    }
    v->given = o;
    if (check_opt(cfg, o, v, err) != 0)
      return -1;
  }
  for (size_t j = 0; j < ndecl; j++) {
    opt_val *v = &ctx->vals[j];
    if (v->given)
      continue;
    if (decl[j].required)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s: source: plugin %s needs option '%s' (%s)", file, cfg->plugin,
                     decl[j].name, decl[j].help ? decl[j].help : "required");
    if (default_opt(cfg, v, err) != 0)
      return -1;
  }
  return 0;
}

static void ctx_free(dwl_ctx *ctx)
{
  if (!ctx)
    return;
  for (size_t i = 0; i < ctx->nvals; i++)
    free(ctx->vals[i].resolved);
  free(ctx->vals);
  free(ctx);
}

int source_precheck(const source_config *cfg, char *about, size_t n, dwl_error *err)
{
  plugin_lib *lib = NULL;
  if (plugin_load(cfg->plugin, &lib, err) != 0)
    return -1;
  dwl_ctx *ctx = calloc(1, sizeof *ctx);
  int rc = -1;
  if (!ctx) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
  } else {
    err_init(&ctx->scratch);
    ctx->lib = lib;
    rc = validate_opts(cfg, ctx, err);
  }
  if (about)
    snprintf(about, n, "%s %s (%s)", lib->p->name, lib->p->version, lib->path);
  ctx_free(ctx);
  plugin_unload(lib);
  return rc;
}

/* Rows are named after the file they come from when the source has one. */
static void name_origin(const source_config *cfg, char *out, size_t n)
{
  for (size_t i = 0; i < cfg->nopts; i++) {
    const spec_opt *o = &cfg->opts[i];
    if (strcmp(o->name, "path") != 0 || o->kind != SPEC_OPT_SCALAR || !o->scalar)
      continue;
    const char *slash = strrchr(o->scalar, '/');
    snprintf(out, n, "%s", slash && slash[1] ? slash + 1 : o->scalar);
    return;
  }
  snprintf(out, n, "%s row", cfg->plugin);
}

int source_open(const source_config *cfg, dwl_source **out, dwl_error *err)
{
  *out = NULL;
  dwl_source *s = calloc(1, sizeof *s);
  if (!s)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (plugin_load(cfg->plugin, &s->lib, err) != 0)
    goto fail;
  s->ctx = calloc(1, sizeof *s->ctx);
  if (!s->ctx) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto fail;
  }
  err_init(&s->ctx->scratch);
  s->ctx->lib = s->lib;
  s->ctx->reject = cfg->reject;
  s->ctx->reject_ud = cfg->reject_ud;
  s->ctx->origin_name = s->origin_name;
  name_origin(cfg, s->origin_name, sizeof s->origin_name);
  if (validate_opts(cfg, s->ctx, err) != 0)
    goto fail;
  dwl_source_args args = {
    .size = sizeof args,
    .job = cfg->job,
    .lmd_column = cfg->lmd_column,
    .checkpoint = cfg->checkpoint,
    .batch_rows = cfg->batch_rows ? cfg->batch_rows : 1024,
  };
  s->ctx->err = err;
  /* A plugin's ODBC connections (the odbc plugin's) are this process's
   * too: they go through the same odbcinst.ini view as the warehouse's. */
  driver_logs_quiet();
  int rc = s->lib->p->open(s->ctx, &args, &s->handle, &s->cols, &s->ncols);
  s->ctx->err = NULL;
  if (s->ctx->undeclared)
    rc = DWL_ERR;
  if (rc != DWL_OK) {
    if (!err_isset(err))
      err_set(err, DWL_EXIT_FAILED, "plugin %s failed to open without saying why", cfg->plugin);
    goto fail;
  }
  if (s->ncols == 0 || !s->cols) {
    err_set(err, DWL_EXIT_FAILED, "source %s has no columns", cfg->plugin);
    goto fail;
  }
  s->raw_cols = s->cols;
  s->nraw = s->nstored = s->ncols;
  if (cfg->spec &&
      columns_open(cfg->spec, s->raw_cols, s->nraw, cfg->table_cols, cfg->ntable_cols, &s->map, err) != 0)
    goto fail;
  if (s->map)
    s->cols = columns_cols(s->map, &s->ncols, &s->nstored);
  *out = s;
  return 0;
fail:
  source_close(s);
  return -1;
}

int source_next(dwl_source *s, dwl_batch *b, dwl_error *err)
{
  memset(b, 0, sizeof *b);
  s->ctx->err = err;
  int rc = s->lib->p->next_batch(s->handle, b);
  s->ctx->err = NULL;
  if (s->ctx->undeclared)
    rc = DWL_ERR;
  if (rc == DWL_ERR && !err_isset(err))
    err_set(err, DWL_EXIT_FAILED, "source %s failed without saying why", s->lib->p->name);
  if (rc == DWL_OK && b->nrows == 0)
    rc = DWL_EOF;
  /* Polled here, once a batch, on the reading thread: the drawing thread
   * never calls into the plugin. */
  uint64_t at, size;
  if (rc != DWL_ERR && source_progress(s, &at, &size))
    progress_read((long long)at, (long long)size);
  s->raw_values = b->values;
  if (rc == DWL_OK && s->map && !(b->values = columns_rows(s->map, b->values, b->nrows))) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    rc = DWL_ERR;
  }
  return rc;
}

int source_progress(dwl_source *s, uint64_t *done, uint64_t *total)
{
  const dwl_plugin *p = s->lib->p;
  /* A descriptor of 1.2 or older ends before the member: not read. */
  if (!DWL_PLUGIN_HAS(p, progress) || !p->progress)
    return 0;
  *done = *total = 0;
  if (p->progress(s->handle, done, total) != DWL_OK || *total == 0)
    return 0;
  if (*done > *total)
    *done = *total;
  return 1;
}

const dwl_value *source_raw(const dwl_source *s, size_t i)
{
  return &s->raw_values[i * s->nraw];
}

const dwl_value *source_row(dwl_source *s, const dwl_value *values, size_t *nvalues)
{
  if (!s->map || !values || *nvalues != s->nraw)
    return values;
  const dwl_value *v = columns_rows(s->map, values, 1);
  if (v)
    *nvalues = s->ncols;
  return v ? v : values;
}

void source_close(dwl_source *s)
{
  if (!s)
    return;
  if (s->handle && s->lib)
    s->lib->p->close(s->handle);
  ctx_free(s->ctx);
  plugin_unload(s->lib);
  columns_free(s->map);
  free(s);
}
