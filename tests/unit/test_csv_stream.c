/* Unit tests for the csv source plugin on input it must refuse or set
 * aside, and over many rows: malformed rows and invalid UTF-8 fail the
 * source with FILE:LINE; a host of ABI 1.1 gets bad rows through
 * host->reject instead (and a 1.0 host, without that member, is never
 * asked); rows come in batches of the size asked for, streamed in constant
 * memory.  Well-formed input is tested in test_csv.c; the fixture is
 * csv_fixture.h. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "csv_fixture.h"

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

static Suite *make_suite(void)
{
  use_build_plugins();

  Suite *s = suite_create("csv_stream");
  TCase *tc = tcase_create("csv_stream");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
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
  tcase_add_test(tc, test_batching);
  tcase_add_test(tc, test_default_batch_size);
  tcase_add_test(tc, test_blank_rows_across_batches);
  tcase_add_test(tc, test_error_after_first_batch);
  tcase_add_test(tc, test_large_file_streamed);
  suite_add_tcase(s, tc);
  return s;
}
