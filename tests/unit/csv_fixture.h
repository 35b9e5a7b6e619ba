/* The fixture of the csv source plugin's unit tests (test_csv.c,
 * test_csv_stream.c): the plugin is driven through the real plugin host
 * (source_open / source_next) exactly as a run drives it.  Each test writes
 * its input into a fresh temporary folder, which is also the base folder
 * that the `path` option resolves against; options are built as the spec
 * parser would build them, and every row read is kept in R to compare.
 * Included by each test program once; its helpers are static, and a
 * program that does not call one of them says nothing about it. */
#ifndef DWL_CSV_FIXTURE_H
#define DWL_CSV_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "plugin_host.h"
#include "spec.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- fixture: temp folder, options, collected rows ------------------------ */

/* Ends the variadic string lists below; a bare NULL may be a plain 0. */
#define END ((const char *)NULL)

static char tmpdir[256];

#define MAX_OPTS 16
static spec_opt opts[MAX_OPTS];
static size_t nopts;

typedef struct result {
  size_t nrows, ncols, alloc;
  char **cells;         /* nrows * ncols; NULL for a NULL value */
  size_t *lens;
  uint64_t *origin;
  size_t nbatches;
  size_t batch_sizes[64];
  int rc;               /* DWL_EOF after a clean read, DWL_ERR otherwise */
} result;
static result R;
static dwl_error E;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

static void setup(void)
{
  snprintf(tmpdir, sizeof tmpdir, "%s/dwl_csv_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  nopts = 0;
  memset(&R, 0, sizeof R);
  err_init(&E);
}

static void free_list(spec_list *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
}

static void teardown(void)
{
  for (size_t i = 0; i < nopts; i++) {
    free(opts[i].name);
    free(opts[i].scalar);
    free_list(&opts[i].list);
    free_list(&opts[i].vals);
  }
  nopts = 0;
  for (size_t i = 0; i < R.nrows * R.ncols; i++)
    free(R.cells[i]);
  free(R.cells);
  free(R.lens);
  free(R.origin);
  memset(&R, 0, sizeof R);
  nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static spec_opt *new_opt(const char *name, int kind)
{
  ck_assert_uint_lt(nopts, MAX_OPTS);
  spec_opt *o = &opts[nopts++];
  memset(o, 0, sizeof *o);
  o->name = strdup(name);
  o->kind = kind;
  o->line = o->vline = (int)nopts + 1;
  o->col = 3;
  o->vcol = 5 + (int)strlen(name);
  return o;
}

static void opt_str(const char *name, const char *val)
{
  new_opt(name, SPEC_OPT_SCALAR)->scalar = strdup(val);
}

static void list_add(spec_list *l, const char *s)
{
  l->v = realloc(l->v, (l->n + 1) * sizeof *l->v);
  l->v[l->n++] = strdup(s);
}

/* opt_list("columns", "a", "b", NULL) */
static void opt_list(const char *name, ...)
{
  spec_opt *o = new_opt(name, SPEC_OPT_LIST);
  va_list ap;
  va_start(ap, name);
  for (const char *s; (s = va_arg(ap, const char *));)
    list_add(&o->list, s);
  va_end(ap);
}

/* opt_map("types", "id", "integer", "amount", "numeric(12,2)", NULL) */
static void opt_map(const char *name, ...)
{
  spec_opt *o = new_opt(name, SPEC_OPT_MAP);
  va_list ap;
  va_start(ap, name);
  for (const char *k; (k = va_arg(ap, const char *));) {
    list_add(&o->list, k);
    list_add(&o->vals, va_arg(ap, const char *));
  }
  va_end(ap);
}

static void write_bytes(const char *name, const char *data, size_t len)
{
  char p[512];
  snprintf(p, sizeof p, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "wb");
  ck_assert_msg(f != NULL, "cannot create %s: %s", p, strerror(errno));
  ck_assert_uint_eq(fwrite(data, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

/* Writes feed.csv and points the path option at it (relative, as a job
 * file would). */
static void feed(const char *text)
{
  write_bytes("feed.csv", text, strlen(text));
  opt_str("path", "feed.csv");
}

static dwl_source *open_src_sink(size_t batch_rows, source_reject_fn reject)
{
  source_config cfg = {
    .plugin = "csv",
    .opts = opts,
    .nopts = nopts,
    .spec_path = "job.yaml",
    .base_dir = tmpdir,
    .job = "test",
    .batch_rows = batch_rows,
    .reject = reject,
  };
  dwl_source *s = NULL;
  err_init(&E);
  if (source_open(&cfg, &s, &E) != 0) {
    ck_assert_ptr_null(s);
    ck_assert_msg(err_isset(&E), "source_open failed without an error");
    return NULL;
  }
  return s;
}

static dwl_source *open_src(size_t batch_rows)
{
  return open_src_sink(batch_rows, NULL);
}

static void keep_row(const dwl_value *v, size_t ncols, uint64_t origin)
{
  if (R.nrows == R.alloc) {
    R.alloc = R.alloc ? R.alloc * 2 : 64;
    R.cells = realloc(R.cells, R.alloc * ncols * sizeof *R.cells);
    R.lens = realloc(R.lens, R.alloc * ncols * sizeof *R.lens);
    R.origin = realloc(R.origin, R.alloc * sizeof *R.origin);
  }
  for (size_t c = 0; c < ncols; c++) {
    size_t i = R.nrows * ncols + c;
    R.lens[i] = v[c].len;
    if (v[c].is_null) {
      ck_assert_ptr_null(v[c].data);
      R.cells[i] = NULL;
    } else {
      ck_assert_ptr_nonnull(v[c].data);
      R.cells[i] = malloc(v[c].len + 1);
      memcpy(R.cells[i], v[c].data, v[c].len);
      R.cells[i][v[c].len] = '\0';
    }
  }
  R.origin[R.nrows++] = origin;
}

/* Reads every batch into R; returns the final code (DWL_EOF or DWL_ERR). */
static int read_all(dwl_source *s)
{
  R.ncols = s->ncols;
  dwl_batch b;
  int rc;
  while ((rc = source_next(s, &b, &E)) == DWL_OK) {
    ck_assert_uint_gt(b.nrows, 0);
    ck_assert_ptr_nonnull(b.values);
    ck_assert_ptr_nonnull(b.origin);
    if (R.nbatches < 64)
      R.batch_sizes[R.nbatches] = b.nrows;
    R.nbatches++;
    for (size_t r = 0; r < b.nrows; r++)
      keep_row(b.values + r * s->ncols, s->ncols, b.origin[r]);
  }
  R.rc = rc;
  return rc;
}

/* Opens, reads everything and closes; the read must succeed. */
static void load_ok(size_t batch_rows)
{
  dwl_source *s = open_src(batch_rows);
  ck_assert_msg(s != NULL, "open failed: %s", E.msg);
  int rc = read_all(s);
  ck_assert_msg(rc == DWL_EOF, "read failed: %s", E.msg);
  source_close(s);
}

/* Expects a failure at open or while reading, with a message containing
 * every given fragment. */
static void load_fails(size_t batch_rows, ...)
{
  dwl_source *s = open_src(batch_rows);
  if (s) {
    int rc = read_all(s);
    source_close(s);
    ck_assert_msg(rc == DWL_ERR, "expected a failure, read %zu rows", R.nrows);
  }
  ck_assert(err_isset(&E));
  va_list ap;
  va_start(ap, batch_rows);
  for (const char *frag; (frag = va_arg(ap, const char *));)
    ck_assert_msg(strstr(E.msg, frag) != NULL, "error \"%s\" lacks \"%s\"", E.msg, frag);
  va_end(ap);
}

static const char *cell(size_t r, size_t c)
{
  ck_assert_uint_lt(r, R.nrows);
  ck_assert_uint_lt(c, R.ncols);
  return R.cells[r * R.ncols + c];
}

#define ck_cell(r, c, want)                                                                       \
  do {                                                                                            \
    const char *got_ = cell((r), (c));                                                            \
    ck_assert_msg(got_ != NULL, "row %d col %d is NULL, expected \"%s\"", (int)(r), (int)(c), (want)); \
    ck_assert_str_eq(got_, (want));                                                               \
  } while (0)
#define ck_null(r, c) ck_assert_msg(cell((r), (c)) == NULL, "row %d col %d is not NULL", (int)(r), (int)(c))

/* Under `make check` the plugin is in the build tree; otherwise the
 * caller points DWLOAD_PLUGIN_PATH at the folder holding csv.so. */
static void use_build_plugins(void)
{
  const char *top = getenv("TOP_BUILDDIR");
  if (top) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/plugins/.libs", top);
    setenv("DWLOAD_PLUGIN_PATH", dir, 1);
  }
}

#pragma GCC diagnostic pop

#endif
