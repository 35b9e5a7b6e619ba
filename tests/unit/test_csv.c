/* Unit tests for the csv source plugin, driven through the real plugin host
 * (source_open / source_next) exactly as a run drives it.  Each test writes
 * its input into a fresh temporary folder, which is also the base folder
 * that the `path` option resolves against. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "err.h"
#include "plugin_host.h"
#include "spec.h"

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

/* ---- the descriptor ------------------------------------------------------- */

START_TEST(test_descriptor)
{
  plugin_lib *lib = NULL;
  dwl_error err;
  err_init(&err);
  ck_assert_msg(plugin_load("csv", &lib, &err) == 0, "%s", err.msg);
  const dwl_plugin *p = lib->p;
  ck_assert_uint_eq(p->abi_version, DWL_ABI_VERSION);
  ck_assert_uint_eq(p->size, sizeof(dwl_plugin));
  ck_assert_str_eq(p->name, "csv");
  ck_assert_str_eq(p->version, "1.0.0");
  ck_assert_int_eq(p->kind, DWL_PLUGIN_SOURCE);
  ck_assert_ptr_nonnull(p->description);
  int seen = 0;
  for (const dwl_option *o = p->options; o->name; o++) {
    ck_assert_ptr_nonnull(o->help);
    if (strcmp(o->name, "path") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_PATH);
      ck_assert_int_eq(o->required, 1);
      seen |= 1;
    } else if (strcmp(o->name, "delimiter") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_STRING);
      ck_assert_str_eq(o->def, ",");
      seen |= 2;
    } else if (strcmp(o->name, "header") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_BOOL);
      ck_assert_str_eq(o->def, "true");
      seen |= 4;
    } else if (strcmp(o->name, "columns") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_LIST);
      seen |= 8;
    } else if (strcmp(o->name, "null") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_STRING);
      ck_assert_ptr_null(o->def);
      seen |= 16;
    } else if (strcmp(o->name, "types") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_MAP);
      seen |= 32;
    }
  }
  ck_assert_int_eq(seen, 63);
  p->close(NULL);  /* must be harmless */
  plugin_unload(lib);
}
END_TEST

/* ---- basic parsing ----------------------------------------------------------- */

START_TEST(test_basic)
{
  feed("id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n");
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_uint_eq(s->ncols, 3);
  ck_assert_str_eq(s->cols[0].name, "id");
  ck_assert_str_eq(s->cols[1].name, "name");
  ck_assert_str_eq(s->cols[2].name, "city");
  for (size_t i = 0; i < 3; i++) {
    ck_assert_int_eq(s->cols[i].type, DWL_TYPE_TEXT);
    ck_assert_int_eq(s->cols[i].nullable, -1);
  }
  ck_assert_int_eq(read_all(s), DWL_EOF);
  /* after the end, the end stays the end */
  dwl_batch b;
  ck_assert_int_eq(source_next(s, &b, &E), DWL_EOF);
  ck_assert_uint_eq(b.nrows, 0);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_cell(0, 1, "Ann");
  ck_cell(0, 2, "Oslo");
  ck_cell(1, 0, "2");
  ck_cell(1, 1, "Bob");
  ck_cell(1, 2, "Rome");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 3);
}
END_TEST

START_TEST(test_quoted_delimiter)
{
  feed("a,b\n\"x,y\",\"1,2,3\"\nplain,\",\"\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "x,y");
  ck_cell(0, 1, "1,2,3");
  ck_cell(1, 0, "plain");
  ck_cell(1, 1, ",");
}
END_TEST

START_TEST(test_doubled_quotes)
{
  feed("a,b\n\"say \"\"hi\"\"\",\"\"\"\"\n\"\"\"start\",\"end\"\"\"\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "say \"hi\"");
  ck_cell(0, 1, "\"");
  ck_cell(1, 0, "\"start");
  ck_cell(1, 1, "end\"");
}
END_TEST

START_TEST(test_embedded_newline)
{
  feed("id,note\n1,\"two\nlines\"\n2,\"three\n\nlines\"\n3,last\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 3);
  ck_cell(0, 1, "two\nlines");
  ck_cell(1, 1, "three\n\nlines");
  ck_cell(2, 1, "last");
  /* a record's origin is the line it starts on */
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 4);
  ck_assert_uint_eq(R.origin[2], 7);
}
END_TEST

START_TEST(test_crlf)
{
  feed("id,name\r\n1,Ann\r\n2,\"quoted\"\r\n3,\r\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 3);
  ck_assert_uint_eq(R.ncols, 2);
  ck_cell(0, 1, "Ann");
  ck_cell(1, 1, "quoted");
  ck_null(2, 1);
  ck_assert_uint_eq(R.origin[2], 4);
}
END_TEST

START_TEST(test_crlf_inside_quotes_kept)
{
  feed("id,note\r\n1,\"a\r\nb\"\r\n2,\"c\rd\"\r\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 1, "a\r\nb");
  ck_cell(1, 1, "c\rd");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 4);
}
END_TEST

START_TEST(test_bom_skipped)
{
  feed("\xEF\xBB\xBFid,name\n1,\xEF\xBB\xBFx\n");
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_str_eq(s->cols[0].name, "id");
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 0, "1");
  /* only the very start of the file is a BOM */
  ck_cell(0, 1, "\xEF\xBB\xBFx");
}
END_TEST

START_TEST(test_no_trailing_newline)
{
  feed("a,b\n1,2\n3,\"4\"");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(1, 0, "3");
  ck_cell(1, 1, "4");
  ck_assert_uint_eq(R.origin[1], 3);
}
END_TEST

START_TEST(test_no_trailing_newline_crlf_file)
{
  feed("a,b\r\n1,2\r\n3,4");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 1, "2");
  ck_cell(1, 1, "4");
}
END_TEST

START_TEST(test_empty_unquoted_is_null_quoted_is_empty)
{
  feed("a,b,c\n,\"\",x\n\"\",,\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_null(0, 0);
  ck_cell(0, 1, "");
  ck_assert_uint_eq(R.lens[1], 0);
  ck_cell(0, 2, "x");
  ck_cell(1, 0, "");
  ck_null(1, 1);
  ck_null(1, 2);
}
END_TEST

START_TEST(test_null_option)
{
  feed("a,b,c\nNULL,null,\n\"\",x,NULL\n");
  opt_str("null", "NULL");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_null(0, 0);
  ck_cell(0, 1, "null");
  ck_null(0, 2);         /* empty unquoted stays NULL */
  ck_cell(1, 0, "");     /* quoted "" stays an empty string */
  ck_cell(1, 1, "x");
  ck_null(1, 2);
}
END_TEST

START_TEST(test_spaces_are_data)
{
  feed("a,b\n  lead, trail  \n\" q \",x y\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "  lead");
  ck_cell(0, 1, " trail  ");
  ck_cell(1, 0, " q ");
  ck_cell(1, 1, "x y");
}
END_TEST

START_TEST(test_delimiter_semicolon)
{
  feed("a;b;c\n1,5;\"x;y\";3\n");
  opt_str("delimiter", ";");
  load_ok(0);
  ck_assert_uint_eq(R.ncols, 3);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 0, "1,5");
  ck_cell(0, 1, "x;y");
  ck_cell(0, 2, "3");
}
END_TEST

START_TEST(test_delimiter_tab)
{
  feed("a\tb\tc\n1\t\t two \n\"x\ty\"\t,\t\n");
  opt_str("delimiter", "\t");
  load_ok(0);
  ck_assert_uint_eq(R.ncols, 3);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_null(0, 1);
  ck_cell(0, 2, " two ");
  ck_cell(1, 0, "x\ty");
  ck_cell(1, 1, ",");
  ck_null(1, 2);
}
END_TEST

START_TEST(test_delimiter_invalid)
{
  feed("a,b\n1,2\n");
  opt_str("delimiter", ";;");
  load_fails(0, "delimiter", "exactly one byte", END);
}
END_TEST

START_TEST(test_delimiter_empty)
{
  feed("a,b\n1,2\n");
  opt_str("delimiter", "");
  load_fails(0, "delimiter", END);
}
END_TEST

/* ---- header and columns ---------------------------------------------------- */

START_TEST(test_header_false_columns)
{
  feed("1,Ann\n2,Bob\n");
  opt_str("header", "false");
  opt_list("columns", "id", "name", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_uint_eq(s->ncols, 2);
  ck_assert_str_eq(s->cols[0].name, "id");
  ck_assert_str_eq(s->cols[1].name, "name");
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_cell(1, 1, "Bob");
  ck_assert_uint_eq(R.origin[0], 1);
  ck_assert_uint_eq(R.origin[1], 2);
}
END_TEST

START_TEST(test_header_false_needs_columns)
{
  feed("1,2\n");
  opt_str("header", "false");
  load_fails(0, "columns", "header is false", END);
}
END_TEST

START_TEST(test_header_false_empty_file)
{
  feed("");
  opt_str("header", "false");
  opt_list("columns", "a", END);
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 0);
  ck_assert_uint_eq(R.nbatches, 0);
}
END_TEST

START_TEST(test_header_matches_columns)
{
  feed("id,name\n1,Ann\n");
  opt_list("columns", "id", "name", END);
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 1, "Ann");
}
END_TEST

START_TEST(test_header_columns_name_mismatch)
{
  feed("id,name\n1,Ann\n");
  opt_list("columns", "id", "nome", END);
  load_fails(0, "feed.csv:1:", "\"name\"", "\"nome\"", END);
}
END_TEST

START_TEST(test_header_columns_count_mismatch)
{
  feed("id,name,city\n1,Ann,Oslo\n");
  opt_list("columns", "id", "name", END);
  load_fails(0, "feed.csv:1:", "3 columns", "lists 2", END);
}
END_TEST

START_TEST(test_duplicate_header)
{
  feed("id,name,id\n1,2,3\n");
  load_fails(0, "feed.csv:1:", "duplicate column name \"id\"", END);
}
END_TEST

START_TEST(test_empty_header_name)
{
  feed("id,,name\n1,2,3\n");
  load_fails(0, "feed.csv:1:", "column 2", "empty name", END);
}
END_TEST

START_TEST(test_empty_file)
{
  feed("");
  load_fails(0, "feed.csv: empty file, expected a header", END);
}
END_TEST

START_TEST(test_blank_only_file)
{
  feed("\n\r\n\n");
  load_fails(0, "feed.csv: empty file, expected a header", END);
}
END_TEST

START_TEST(test_header_only)
{
  feed("a,b\n");
  load_ok(0);
  ck_assert_uint_eq(R.ncols, 2);
  ck_assert_uint_eq(R.nrows, 0);
}
END_TEST

START_TEST(test_missing_file)
{
  opt_str("path", "feed.csv");
  load_fails(0, "cannot open ", "feed.csv: No such file or directory", END);
}
END_TEST

/* ---- malformed input ---------------------------------------------------------- */

START_TEST(test_ragged_row)
{
  feed("a,b,c,d\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3,4\n1,2,3\n1,2,3,4\n");
  load_fails(0, "feed.csv:7: row has 3 fields, expected 4", END);
}
END_TEST

START_TEST(test_ragged_row_too_many)
{
  feed("a,b\n1,2\n\"x\ny\",2,3\n");
  load_fails(0, "feed.csv:3: row has 3 fields, expected 2", END);
}
END_TEST

START_TEST(test_unterminated_quote)
{
  feed("a,b\n1,2\n3,\"open\n4,5\n");
  load_fails(0, "feed.csv:4: unterminated quoted field (opened on line 3)", END);
}
END_TEST

START_TEST(test_unterminated_quote_last_line)
{
  feed("a,b\n1,\"x\"\n2,\"no end");
  load_fails(0, "feed.csv:3: unterminated quoted field (opened on line 3)", END);
}
END_TEST

START_TEST(test_unterminated_quote_reopened)
{
  /* line 3 closes the quote opened on line 2 and opens another */
  feed("a,b\n\"x\ny\",\"z\n\n");
  load_fails(0, "feed.csv:4: unterminated quoted field (opened on line 3)", END);
}
END_TEST

START_TEST(test_bare_cr_is_data)
{
  /* only LF ends a line: a lone CR inside an unquoted field stays data */
  feed("a,b\n1,x\ry\n2,z\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 1, "x\ry");
  ck_assert_uint_eq(R.origin[1], 3);
}
END_TEST

START_TEST(test_malformed_quote)
{
  feed("a,b\n1,2\n3,x\"y\n");
  load_fails(0, "feed.csv:3:", "field 2", "quote", END);
}
END_TEST

START_TEST(test_text_after_closing_quote)
{
  feed("a,b\n\"x\"y,2\n");
  load_fails(0, "feed.csv:2:", "field 1", END);
}
END_TEST

START_TEST(test_invalid_utf8)
{
  feed("a,b\n1,ok\n2,\xC3\x28\n");
  load_fails(0, "feed.csv:3: invalid UTF-8 in field 2", END);
}
END_TEST

START_TEST(test_invalid_utf8_overlong)
{
  feed("a,b\n1,ok\n2,ok\n3,ok\n\xC0\xAF,x\n");
  load_fails(0, "feed.csv:5: invalid UTF-8 in field 1", END);
}
END_TEST

/* Each bad sequence sits in field 3 of line 2; each good one must pass. */
START_TEST(test_utf8_strictness)
{
  static const char *const bad[] = {
    "\xE0\x80\xAF",       /* overlong 3-byte */
    "\xF0\x80\x80\xAF",   /* overlong 4-byte */
    "\xED\xA0\x80",       /* surrogate U+D800 */
    "\xF4\x90\x80\x80",   /* U+110000 */
    "\xF5\x80\x80\x80",   /* lead byte past U+10FFFF */
    "\x80",               /* stray continuation */
    "ab\xE2\x82",         /* truncated */
    "\xFF",
  };
  static const char *const good[] = {"caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF",
                                     "\xED\x9F\xBF", "\xEE\x80\x80"};
  char text[128];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    teardown();
    setup();
    snprintf(text, sizeof text, "a,b,c\n1,2,\"%s\"\n", bad[i]);
    feed(text);
    load_fails(0, "feed.csv:2: invalid UTF-8 in field 3", END);
  }
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    teardown();
    setup();
    snprintf(text, sizeof text, "a,b,c\n1,2,%s\n", good[i]);
    feed(text);
    load_ok(0);
    ck_assert_uint_eq(R.nrows, 1);
    ck_cell(0, 2, good[i]);
  }
}
END_TEST

START_TEST(test_invalid_utf8_multiline_field)
{
  /* the bad byte is on line 4, inside a field that opened on line 2 */
  feed("a,b\n1,\"one\ntwo\nth\xC3\x28ree\nfour\"\n");
  /* a row is named by the line it starts on; the message adds the byte's */
  load_fails(0, "feed.csv:2: invalid UTF-8 in field 2", "line 4)", END);
}
END_TEST

/* ---- rejected rows (host->reject, ABI 1.1) -------------------------------- */

typedef struct sunk {
  size_t n;
  uint64_t origin[16];
  char raw[16][128];
  char reason[16][200];
  int refuse_at;        /* the sink refuses its Nth row (1-based; 0: never) */
} sunk;
static sunk S;

static int sink(void *ud, uint64_t origin, const char *raw, size_t raw_len, const dwl_value *values, size_t nvalues,
                const char *reason, dwl_error *err)
{
  (void)ud, (void)values, (void)nvalues;
  ck_assert_uint_lt(S.n, 16);
  if (S.refuse_at && (int)S.n + 1 == S.refuse_at)
    return err_set(err, DWL_EXIT_FAILED, "sink refuses line %llu", (unsigned long long)origin);
  S.origin[S.n] = origin;
  snprintf(S.raw[S.n], sizeof S.raw[0], "%.*s", (int)raw_len, raw ? raw : "");
  snprintf(S.reason[S.n], sizeof S.reason[0], "%s", reason);
  S.n++;
  return 0;
}

static dwl_source *open_with_sink(size_t batch_rows)
{
  dwl_source *s = open_src_sink(batch_rows, sink);
  ck_assert_msg(s != NULL, "open failed: %s", E.msg);
  return s;
}

START_TEST(test_rejects_go_to_the_host)
{
  memset(&S, 0, sizeof S);
  feed("a,b\n"
       "1,x\n"                       /* 2 */
       "2\n"                         /* 3: too few */
       "3,\"multi\nline\",extra\n"   /* 4-5: too many, spans lines */
       "4,\"bad \xFF\nbyte\"\n"      /* 6-7: invalid UTF-8 */
       "\n"                          /* 8: blank, two columns */
       "5,y\n");                     /* 9 */
  dwl_source *s = open_with_sink(2);
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_cell(1, 0, "5");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 9);
  ck_assert_uint_eq(S.n, 4);
  ck_assert_uint_eq(S.origin[0], 3);
  ck_assert_str_eq(S.raw[0], "2");
  ck_assert_str_eq(S.reason[0], "row has 1 field, expected 2");
  ck_assert_uint_eq(S.origin[1], 4);
  ck_assert_str_eq(S.raw[1], "3,\"multi\nline\",extra");
  ck_assert_str_eq(S.reason[1], "row has 3 fields, expected 2");
  ck_assert_uint_eq(S.origin[2], 6);
  ck_assert_str_eq(S.raw[2], "4,\"bad \xFF\nbyte\"");
  ck_assert_msg(strstr(S.reason[2], "invalid UTF-8 in field 2") && strstr(S.reason[2], "line 6)"), "%s",
                S.reason[2]);
  ck_assert_uint_eq(S.origin[3], 8);
  ck_assert_str_eq(S.raw[3], "");
  ck_assert_msg(strstr(S.reason[3], "blank line"), "%s", S.reason[3]);
}
END_TEST

START_TEST(test_reject_refused_fails_the_source)
{
  memset(&S, 0, sizeof S);
  S.refuse_at = 2;
  feed("a,b\n1,x\n2\n3,y\n4\n5,z\n");
  dwl_source *s = open_with_sink(0);
  ck_assert_int_eq(read_all(s), DWL_ERR);
  source_close(s);
  ck_assert_uint_eq(S.n, 1);
  ck_assert_msg(strstr(E.msg, "sink refuses line 5"), "%s", E.msg);
}
END_TEST

/* A host of ABI 1.0, which has no reject member: the plugin must not touch
 * it and must fail on a bad row as it always did.  Just enough of a host
 * for one file with a header. */
static char old_path[512];
static char old_err[2048];
static void old_log(dwl_ctx *c, int l, const char *f, ...) { (void)c, (void)l, (void)f; }
static void old_error(dwl_ctx *c, const char *f, ...)
{
  (void)c;
  va_list ap;
  va_start(ap, f);
  if (!old_err[0])
    vsnprintf(old_err, sizeof old_err, f, ap);
  va_end(ap);
}
static const char *old_string(dwl_ctx *c, const char *n) { (void)c; return strcmp(n, "path") == 0 ? old_path : NULL; }
static int64_t old_int(dwl_ctx *c, const char *n) { (void)c, (void)n; return 0; }
static int old_bool(dwl_ctx *c, const char *n) { (void)c; return strcmp(n, "header") == 0; }
static int old_isset(dwl_ctx *c, const char *n) { (void)c; return strcmp(n, "path") == 0; }
static size_t old_len(dwl_ctx *c, const char *n) { (void)c, (void)n; return 0; }
static const char *old_item(dwl_ctx *c, const char *n, size_t i) { (void)c, (void)n, (void)i; return NULL; }

START_TEST(test_old_host_without_reject)
{
  /* the bytes past a 1.0 host's end are poison: touching reject crashes */
  struct {
    dwl_host h;
    char poison[64];
  } old;
  memset(&old, 0xA5, sizeof old);
  old.h.abi_version = (1u << 16) | 0u;
  old.h.size = (uint32_t)offsetof(dwl_host, reject);
  old.h.log = old_log;
  old.h.error = old_error;
  old.h.opt_string = old_string;
  old.h.opt_int = old_int;
  old.h.opt_bool = old_bool;
  old.h.opt_isset = old_isset;
  old.h.opt_list_len = old_len;
  old.h.opt_list_item = old_item;
  old.h.opt_map_len = old_len;
  old.h.opt_map_key = old_item;
  old.h.opt_map_value = old_item;
  feed("a,b\n1,x\n2\n");
  snprintf(old_path, sizeof old_path, "%s/feed.csv", tmpdir);
  old_err[0] = '\0';
  void *dl = dlopen(DWL_BUILD_PLUGINDIR "/csv.so", RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(dl != NULL, "%s", dlerror());
  dwl_plugin_entry_fn entry;
  *(void **)&entry = dlsym(dl, DWL_PLUGIN_ENTRY_SYMBOL);
  ck_assert_ptr_nonnull(entry);
  const dwl_plugin *p = entry(&old.h);
  ck_assert_ptr_nonnull(p);
  dwl_source_args args = {.size = sizeof args, .job = "test", .batch_rows = 16};
  void *h = NULL;
  const dwl_column *cols;
  size_t ncols;
  ck_assert_int_eq(p->open(NULL, &args, &h, &cols, &ncols), DWL_OK);
  dwl_batch b;
  ck_assert_int_eq(p->next_batch(h, &b), DWL_ERR);
  ck_assert_msg(strstr(old_err, "feed.csv:3: row has 1 field, expected 2"), "%s", old_err);
  p->close(h);
  dlclose(dl);
}
END_TEST

START_TEST(test_invalid_utf8_header)
{
  feed("id,n\xC0\xAF\n1,2\n");
  load_fails(0, "feed.csv:1: invalid UTF-8 in field 2", END);
}
END_TEST

START_TEST(test_nul_byte_kept)
{
  static const char data[] = "a,b\n1,x\0y\n";
  write_bytes("feed.csv", data, sizeof data - 1);
  opt_str("path", "feed.csv");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 1);
  ck_assert_uint_eq(R.lens[1], 3);
  ck_assert_int_eq(memcmp(R.cells[1], "x\0y", 3), 0);
}
END_TEST

/* ---- blank lines --------------------------------------------------------------- */

START_TEST(test_blank_lines_at_end_ignored)
{
  feed("a,b\n1,2\n3,4\n\n\r\n\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(1, 1, "4");
}
END_TEST

START_TEST(test_blank_line_in_middle)
{
  feed("a,b\n1,2\n\n3,4\n");
  load_fails(0, "feed.csv:3: row has 1 field, expected 2", "blank line", END);
}
END_TEST

START_TEST(test_blank_line_one_column)
{
  feed("v\nx\n\n\ny\n\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 4);
  ck_cell(0, 0, "x");
  ck_null(1, 0);
  ck_null(2, 0);
  ck_cell(3, 0, "y");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 3);
  ck_assert_uint_eq(R.origin[2], 4);
  ck_assert_uint_eq(R.origin[3], 5);
}
END_TEST

START_TEST(test_blank_line_before_header)
{
  feed("\na,b\n1,2\n");
  load_fails(0, "feed.csv:1:", "header", END);
}
END_TEST

/* ---- types ------------------------------------------------------------------------ */

START_TEST(test_types)
{
  feed("id,amount,name,score,ok,day,at,code,big,x\n1,2.50,n,1.5,true,2020-01-01,2020-01-01 10:00:00,ab,9,z\n");
  opt_map("types", "id", "integer", "amount", "numeric(12,2)", "score", "Double Precision", "ok", "boolean", "day",
          "date", "at", "timestamp", "code", "varchar(20)", "big", "bigint", "name", "text", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_uint_eq(s->ncols, 10);
  ck_assert_int_eq(s->cols[0].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[1].type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(s->cols[1].precision, 12);
  ck_assert_int_eq(s->cols[1].scale, 2);
  ck_assert_int_eq(s->cols[2].type, DWL_TYPE_TEXT);
  ck_assert_int_eq(s->cols[3].type, DWL_TYPE_REAL);
  ck_assert_int_eq(s->cols[4].type, DWL_TYPE_BOOLEAN);
  ck_assert_int_eq(s->cols[5].type, DWL_TYPE_DATE);
  ck_assert_int_eq(s->cols[6].type, DWL_TYPE_TIMESTAMP);
  ck_assert_int_eq(s->cols[7].type, DWL_TYPE_TEXT);
  ck_assert_int_eq(s->cols[7].precision, 20);
  ck_assert_int_eq(s->cols[8].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[9].type, DWL_TYPE_TEXT);   /* not listed */
  for (size_t i = 0; i < s->ncols; i++)
    ck_assert_int_eq(s->cols[i].nullable, -1);
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 1, "2.50");  /* values travel as text, unchanged */
}
END_TEST

START_TEST(test_types_more_names)
{
  feed("a,b,c,d,e,f\n1,2,3,4,5,6\n");
  opt_map("types", "a", "int", "b", "decimal( 10 , 3 )", "c", "NUMERIC", "d", "float", "e", "bool", "f",
          "character varying(5)", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_int_eq(s->cols[0].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[1].type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(s->cols[1].precision, 10);
  ck_assert_int_eq(s->cols[1].scale, 3);
  ck_assert_int_eq(s->cols[2].type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(s->cols[2].precision, 0);
  ck_assert_int_eq(s->cols[3].type, DWL_TYPE_REAL);
  ck_assert_int_eq(s->cols[4].type, DWL_TYPE_BOOLEAN);
  ck_assert_int_eq(s->cols[5].type, DWL_TYPE_TEXT);
  ck_assert_int_eq(s->cols[5].precision, 5);
  source_close(s);
}
END_TEST

START_TEST(test_types_unknown_column)
{
  feed("id,name\n1,a\n");
  opt_map("types", "id", "integer", "nmae", "text", END);
  load_fails(0, "feed.csv", "types", "\"nmae\"", END);
}
END_TEST

START_TEST(test_types_bad_type)
{
  static const char *const bad[] = {"integr", "numeric(0)", "numeric(5,6)", "numeric(1,2,3)", "integer(4)",
                                    "varchar(", "varchar(10) x", "date()"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    teardown();
    setup();
    feed("id,name\n1,a\n");
    opt_map("types", "id", bad[i], END);
    load_fails(0, "types", "\"id\"", bad[i], END);
  }
}
END_TEST

START_TEST(test_types_with_header_false)
{
  feed("1,a\n");
  opt_str("header", "false");
  opt_list("columns", "id", "name", END);
  opt_map("types", "id", "bigint", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_int_eq(s->cols[0].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[1].type, DWL_TYPE_TEXT);
  source_close(s);
}
END_TEST

/* ---- batching and streaming ------------------------------------------------------ */

static void write_numbered(size_t rows)
{
  char p[512];
  snprintf(p, sizeof p, "%s/feed.csv", tmpdir);
  FILE *f = fopen(p, "w");
  ck_assert_ptr_nonnull(f);
  fputs("n,sq,label\n", f);
  for (size_t i = 0; i < rows; i++)
    fprintf(f, "%zu,%zu,\"row %zu, \"\"q\"\"\"\n", i, i * i, i);
  ck_assert_int_eq(fclose(f), 0);
  opt_str("path", "feed.csv");
}

START_TEST(test_batching)
{
  write_numbered(2500);
  load_ok(1000);
  ck_assert_uint_eq(R.nbatches, 3);
  ck_assert_uint_eq(R.batch_sizes[0], 1000);
  ck_assert_uint_eq(R.batch_sizes[1], 1000);
  ck_assert_uint_eq(R.batch_sizes[2], 500);
  ck_assert_uint_eq(R.nrows, 2500);
  char want[64];
  for (size_t i = 0; i < 2500; i++) {
    snprintf(want, sizeof want, "%zu", i);
    ck_cell(i, 0, want);
    snprintf(want, sizeof want, "%zu", i * i);
    ck_cell(i, 1, want);
    snprintf(want, sizeof want, "row %zu, \"q\"", i);
    ck_cell(i, 2, want);
    ck_assert_uint_eq(R.origin[i], i + 2);
  }
}
END_TEST

START_TEST(test_default_batch_size)
{
  write_numbered(3000);
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 3000);
  ck_assert_uint_eq(R.nbatches, 3);
  ck_assert_uint_eq(R.batch_sizes[0], 1024);
  ck_assert_uint_eq(R.batch_sizes[1], 1024);
  ck_assert_uint_eq(R.batch_sizes[2], 952);
}
END_TEST

START_TEST(test_blank_rows_across_batches)
{
  /* held-back blank lines must respect the batch size too */
  feed("v\na\n\n\n\n\nb\n");
  load_ok(2);
  ck_assert_uint_eq(R.nrows, 6);
  ck_assert_uint_eq(R.nbatches, 3);
  ck_cell(0, 0, "a");
  for (size_t i = 1; i <= 4; i++) {
    ck_null(i, 0);
    ck_assert_uint_eq(R.origin[i], i + 2);
  }
  ck_cell(5, 0, "b");
  ck_assert_uint_eq(R.origin[5], 7);
}
END_TEST

START_TEST(test_error_after_first_batch)
{
  write_numbered(1500);
  char p[512];
  snprintf(p, sizeof p, "%s/feed.csv", tmpdir);
  FILE *f = fopen(p, "a");
  ck_assert_ptr_nonnull(f);
  fputs("1,2\n", f);  /* line 1502 */
  fclose(f);
  dwl_source *s = open_src(1000);
  ck_assert_msg(s != NULL, "%s", E.msg);
  dwl_batch b;
  ck_assert_int_eq(source_next(s, &b, &E), DWL_OK);
  ck_assert_uint_eq(b.nrows, 1000);
  ck_assert_int_eq(source_next(s, &b, &E), DWL_ERR);
  ck_assert_msg(strstr(E.msg, "feed.csv:1502: row has 2 fields, expected 3"), "%s", E.msg);
  /* a failed source keeps failing, with an error each time */
  dwl_error again;
  err_init(&again);
  ck_assert_int_eq(source_next(s, &b, &again), DWL_ERR);
  ck_assert(err_isset(&again));
  source_close(s);
}
END_TEST

/* Streams 200k rows; the plugin keeps only one batch, so the heap must not
 * grow with the file (mallinfo2 reports zeros under valgrind, where the
 * leak check covers memory instead). */
START_TEST(test_large_file_streamed)
{
  const size_t rows = 200000;
  write_numbered(rows);
  dwl_source *s = open_src(1000);
  ck_assert_msg(s != NULL, "%s", E.msg);
  dwl_batch b;
  size_t total = 0, batches = 0;
  size_t heap_after_first = 0, heap_max = 0;
  uint64_t last_origin = 0;
  int rc;
  while ((rc = source_next(s, &b, &E)) == DWL_OK) {
    ck_assert_uint_eq(b.origin[0], total + 2);
    size_t last = b.nrows - 1;
    char want[32];
    snprintf(want, sizeof want, "%zu", total + last);
    ck_assert_uint_eq(b.values[last * 3].len, strlen(want));
    ck_assert_int_eq(memcmp(b.values[last * 3].data, want, strlen(want)), 0);
    total += b.nrows;
    last_origin = b.origin[last];
    struct mallinfo2 mi = mallinfo2();
    if (++batches == 1)
      heap_after_first = mi.uordblks;
    if (mi.uordblks > heap_max)
      heap_max = mi.uordblks;
  }
  ck_assert_msg(rc == DWL_EOF, "%s", E.msg);
  source_close(s);
  ck_assert_uint_eq(total, rows);
  ck_assert_uint_eq(batches, rows / 1000);
  ck_assert_uint_eq(last_origin, rows + 1);
  ck_assert_msg(heap_max <= heap_after_first + 256 * 1024, "heap grew from %zu to %zu bytes", heap_after_first,
                heap_max);
}
END_TEST

START_TEST(test_unknown_option_rejected)
{
  feed("a\n1\n");
  opt_str("delimeter", ";");
  load_fails(0, "job.yaml:", "unknown option 'delimeter'", END);
}
END_TEST

static Suite *make_suite(void)
{
  /* Under `make check` the plugin is in the build tree; otherwise the
   * caller points DWLOAD_PLUGIN_PATH at the folder holding csv.so. */
  const char *top = getenv("TOP_BUILDDIR");
  if (top) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/plugins/.libs", top);
    setenv("DWLOAD_PLUGIN_PATH", dir, 1);
  }

  Suite *s = suite_create("csv");
  TCase *tc = tcase_create("csv");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_descriptor);
  tcase_add_test(tc, test_basic);
  tcase_add_test(tc, test_quoted_delimiter);
  tcase_add_test(tc, test_doubled_quotes);
  tcase_add_test(tc, test_embedded_newline);
  tcase_add_test(tc, test_crlf);
  tcase_add_test(tc, test_crlf_inside_quotes_kept);
  tcase_add_test(tc, test_bom_skipped);
  tcase_add_test(tc, test_no_trailing_newline);
  tcase_add_test(tc, test_no_trailing_newline_crlf_file);
  tcase_add_test(tc, test_empty_unquoted_is_null_quoted_is_empty);
  tcase_add_test(tc, test_null_option);
  tcase_add_test(tc, test_spaces_are_data);
  tcase_add_test(tc, test_delimiter_semicolon);
  tcase_add_test(tc, test_delimiter_tab);
  tcase_add_test(tc, test_delimiter_invalid);
  tcase_add_test(tc, test_delimiter_empty);
  tcase_add_test(tc, test_header_false_columns);
  tcase_add_test(tc, test_header_false_needs_columns);
  tcase_add_test(tc, test_header_false_empty_file);
  tcase_add_test(tc, test_header_matches_columns);
  tcase_add_test(tc, test_header_columns_name_mismatch);
  tcase_add_test(tc, test_header_columns_count_mismatch);
  tcase_add_test(tc, test_duplicate_header);
  tcase_add_test(tc, test_empty_header_name);
  tcase_add_test(tc, test_empty_file);
  tcase_add_test(tc, test_blank_only_file);
  tcase_add_test(tc, test_header_only);
  tcase_add_test(tc, test_missing_file);
  tcase_add_test(tc, test_ragged_row);
  tcase_add_test(tc, test_ragged_row_too_many);
  tcase_add_test(tc, test_unterminated_quote);
  tcase_add_test(tc, test_unterminated_quote_last_line);
  tcase_add_test(tc, test_unterminated_quote_reopened);
  tcase_add_test(tc, test_bare_cr_is_data);
  tcase_add_test(tc, test_malformed_quote);
  tcase_add_test(tc, test_text_after_closing_quote);
  tcase_add_test(tc, test_invalid_utf8);
  tcase_add_test(tc, test_invalid_utf8_overlong);
  tcase_add_test(tc, test_utf8_strictness);
  tcase_add_test(tc, test_invalid_utf8_multiline_field);
  tcase_add_test(tc, test_invalid_utf8_header);
  tcase_add_test(tc, test_rejects_go_to_the_host);
  tcase_add_test(tc, test_reject_refused_fails_the_source);
  tcase_add_test(tc, test_old_host_without_reject);
  tcase_add_test(tc, test_nul_byte_kept);
  tcase_add_test(tc, test_blank_lines_at_end_ignored);
  tcase_add_test(tc, test_blank_line_in_middle);
  tcase_add_test(tc, test_blank_line_one_column);
  tcase_add_test(tc, test_blank_line_before_header);
  tcase_add_test(tc, test_types);
  tcase_add_test(tc, test_types_more_names);
  tcase_add_test(tc, test_types_unknown_column);
  tcase_add_test(tc, test_types_bad_type);
  tcase_add_test(tc, test_types_with_header_false);
  tcase_add_test(tc, test_batching);
  tcase_add_test(tc, test_default_batch_size);
  tcase_add_test(tc, test_blank_rows_across_batches);
  tcase_add_test(tc, test_error_after_first_batch);
  tcase_add_test(tc, test_large_file_streamed);
  tcase_add_test(tc, test_unknown_option_rejected);
  suite_add_tcase(s, tc);
  return s;
}
