/* Plugin host: the search path, the loader's error paths (missing plugin,
 * ABI mismatch, missing entry symbol), option validation against a
 * plugin's option table, and driving a source through the dwl_host API;
 * plugins of ABI 1.0, 1.1 and 1.2 loaded and run, and the SDK's helpers of
 * include/dwload/plugin.h.  Uses the test plugins built in tests/plugins
 * (TEST_PLUGINDIR). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "plugin_host.h"

static const char *plugdir(void)
{
  const char *d = getenv("TEST_PLUGINDIR");
  return d ? d : "tests/plugins/.libs";
}

static void use_test_plugins(void)
{
  setenv("DWLOAD_PLUGIN_PATH", plugdir(), 1);
  plugin_set_extra_path(NULL);
}

static spec_opt scalar(const char *name, const char *value, int line)
{
  spec_opt o;
  memset(&o, 0, sizeof o);
  o.name = (char *)name;
  o.kind = SPEC_OPT_SCALAR;
  o.scalar = (char *)value;
  o.line = line;
  o.col = 3;
  o.vline = line;
  o.vcol = 10;
  return o;
}

static source_config config(const spec_opt *opts, size_t n)
{
  source_config c = {
    .plugin = "tiny",
    .opts = opts,
    .nopts = n,
    .spec_path = "job.yaml",
    .base_dir = "/tmp",
    .job = "t",
  };
  return c;
}

START_TEST(missing_plugin_is_named)
{
  use_test_plugins();
  dwl_error err;
  err_init(&err);
  plugin_lib *lib;
  ck_assert_int_eq(plugin_load("nosuchplugin", &lib, &err), -1);
  ck_assert_ptr_null(lib);
  ck_assert_int_eq(err.code, DWL_EXIT_PERMANENT);
  ck_assert_ptr_nonnull(strstr(err.msg, "plugin 'nosuchplugin' not found"));
  ck_assert_ptr_nonnull(strstr(err.msg, plugdir()));
}
END_TEST

START_TEST(abi_mismatch_is_refused_naming_the_file)
{
  use_test_plugins();
  dwl_error err;
  err_init(&err);
  plugin_lib *lib;
  ck_assert_int_eq(plugin_load("badabi", &lib, &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_PERMANENT);
  ck_assert_ptr_nonnull(strstr(err.msg, "badabi.so"));
  ck_assert_ptr_nonnull(strstr(err.msg, "ABI 2.0"));
  ck_assert_ptr_nonnull(strstr(err.msg, "ABI 1."));
}
END_TEST

START_TEST(missing_entry_symbol_is_refused)
{
  use_test_plugins();
  dwl_error err;
  err_init(&err);
  plugin_lib *lib;
  ck_assert_int_eq(plugin_load("noentry", &lib, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "noentry.so is not a dwload plugin"));
  ck_assert_ptr_nonnull(strstr(err.msg, "dwl_plugin_entry"));
}
END_TEST

START_TEST(not_a_shared_object)
{
  char dir[] = "/tmp/dwl_ph.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/junk.so", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("not an ELF file\n", f);
  fclose(f);
  dwl_error err;
  err_init(&err);
  plugin_lib *lib;
  ck_assert_int_eq(plugin_load(path, &lib, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "cannot load plugin"));
  ck_assert_ptr_nonnull(strstr(err.msg, path));
  remove(path);
  rmdir(dir);
}
END_TEST

START_TEST(invalid_plugin_name)
{
  dwl_error err;
  err_init(&err);
  plugin_lib *lib;
  ck_assert_int_eq(plugin_load("bad name!", &lib, &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_ptr_nonnull(strstr(err.msg, "invalid plugin name"));
}
END_TEST

START_TEST(search_order_extra_then_env)
{
  setenv("DWLOAD_PLUGIN_PATH", "/env/a:/env/b", 1);
  plugin_set_extra_path("/cli/x");
  char **dirs = plugin_search_dirs();
  ck_assert_ptr_nonnull(dirs);
  ck_assert_str_eq(dirs[0], "/cli/x");
  ck_assert_str_eq(dirs[1], "/env/a");
  ck_assert_str_eq(dirs[2], "/env/b");
  int last = 0;
  while (dirs[last + 1])
    last++;
  ck_assert_str_eq(dirs[last], DWL_PKGLIBDIR);
  plugin_free_dirs(dirs);
  plugin_set_extra_path(NULL);
}
END_TEST

START_TEST(loads_and_reads_batches)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("rows", "2500", 5), scalar("label", "x", 6)};
  source_config c = config(o, 2);
  c.batch_rows = 1000;
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  ck_assert_uint_eq(s->ncols, 2);
  ck_assert_str_eq(s->cols[0].name, "n");
  size_t sizes[4] = {0}, nb = 0, total = 0;
  dwl_batch b;
  int rc;
  while ((rc = source_next(s, &b, &err)) == DWL_OK) {
    ck_assert_uint_lt(nb, 4);
    sizes[nb++] = b.nrows;
    for (size_t i = 0; i < b.nrows; i++) {
      char want[24];
      snprintf(want, sizeof want, "%zu", total + i + 1);
      ck_assert_uint_eq(b.values[i * 2].len, strlen(want));
      ck_assert(memcmp(b.values[i * 2].data, want, strlen(want)) == 0);
      ck_assert_uint_eq(b.origin[i], total + i + 1);
    }
    total += b.nrows;
  }
  ck_assert_int_eq(rc, DWL_EOF);
  ck_assert_uint_eq(nb, 3);
  ck_assert_uint_eq(sizes[0], 1000);
  ck_assert_uint_eq(sizes[2], 500);
  ck_assert_uint_eq(total, 2500);
  source_close(s);
}
END_TEST

START_TEST(default_option_applies)
{
  use_test_plugins();
  spec_opt o[1] = {scalar("label", "x", 6)};
  source_config c = config(o, 1);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  size_t total = 0;
  dwl_batch b;
  while (source_next(s, &b, &err) == DWL_OK)
    total += b.nrows;
  ck_assert_uint_eq(total, 3); /* rows defaults to "3" */
  source_close(s);
}
END_TEST

START_TEST(unknown_option_suggests)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("label", "x", 6), scalar("rwos", "5", 7)};
  source_config c = config(o, 2);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), -1);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_ptr_nonnull(strstr(err.msg, "job.yaml:7:3: unknown option 'rwos' for plugin tiny; did you mean 'rows'?"));
}
END_TEST

START_TEST(unknown_option_lists_the_options)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("label", "x", 6), scalar("zzzzzzzz", "5", 9)};
  source_config c = config(o, 2);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_ptr_nonnull(strstr(err.msg, "job.yaml:9:3: unknown option 'zzzzzzzz' for plugin tiny"));
  ck_assert_ptr_nonnull(strstr(err.msg, "its options: plugin, rows, label, fail_at"));
}
END_TEST

START_TEST(missing_required_option)
{
  use_test_plugins();
  spec_opt o[1] = {scalar("rows", "5", 5)};
  source_config c = config(o, 1);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_ptr_nonnull(strstr(err.msg, "needs option 'label'"));
}
END_TEST

START_TEST(wrong_option_type)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("label", "x", 6), scalar("rows", "many", 8)};
  source_config c = config(o, 2);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_ptr_nonnull(strstr(err.msg, "job.yaml:8:10: source.rows: 'many' is not an integer"));
}
END_TEST

START_TEST(list_where_scalar_expected)
{
  use_test_plugins();
  char *items[] = {"a", "b"};
  spec_opt o[1];
  memset(o, 0, sizeof o);
  o[0].name = "label";
  o[0].kind = SPEC_OPT_LIST;
  o[0].list.v = items;
  o[0].list.n = 2;
  o[0].line = o[0].vline = 4;
  o[0].col = o[0].vcol = 5;
  source_config c = config(o, 1);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "source.label: expected a scalar, found a list"));
}
END_TEST

START_TEST(plugin_error_travels_up)
{
  use_test_plugins();
  spec_opt o[3] = {scalar("label", "x", 6), scalar("rows", "50", 7), scalar("fail_at", "42", 8)};
  source_config c = config(o, 3);
  c.batch_rows = 10;
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  dwl_batch b;
  int rc;
  size_t total = 0;
  while ((rc = source_next(s, &b, &err)) == DWL_OK)
    total += b.nrows;
  ck_assert_int_eq(rc, DWL_ERR);
  ck_assert_uint_eq(total, 40);
  ck_assert_int_eq(err.code, DWL_EXIT_FAILED);
  ck_assert_str_eq(err.msg, "tiny: failing at row 42 as asked");
  source_close(s);
}
END_TEST

/* ---- ABI versions: 1.0, 1.1, 1.2 and 1.3 plugins all load and run ------ */

/* Reads a whole source: the values of its first column, space-separated. */
static int read_all(dwl_source *s, char *out, size_t n, dwl_error *err)
{
  dwl_batch b;
  int rc;
  size_t len = 0;
  out[0] = '\0';
  while ((rc = source_next(s, &b, err)) == DWL_OK)
    for (size_t i = 0; i < b.nrows; i++)
      len += (size_t)snprintf(out + len, n - len, "%s%.*s", len ? " " : "", (int)b.values[i * s->ncols].len,
                              b.values[i * s->ncols].data);
  return rc;
}

static void abi_is(const plugin_lib *lib, unsigned minor)
{
  ck_assert_uint_eq(DWL_ABI_MAJOR_OF(lib->p->abi_version), 1);
  ck_assert_uint_eq(lib->p->abi_version & 0xffffu, minor);
}

START_TEST(abi_1_0_plugin_runs)
{
  use_test_plugins();
  spec_opt o[1] = {scalar("rows", "3", 5)};
  source_config c = config(o, 1);
  c.plugin = "abi10";
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  abi_is(s->lib, 0);
  ck_assert_uint_eq(s->lib->p->size, offsetof(dwl_plugin, close) + sizeof s->lib->p->close);
  char got[256];
  ck_assert_int_eq(read_all(s, got, sizeof got, &err), DWL_EOF);
  ck_assert_str_eq(got, "1 2 3");
  source_close(s);
}
END_TEST

static int reject_count;
static uint64_t rejected_origin;

static int take_reject(void *ud, uint64_t origin, const char *raw, size_t raw_len, const dwl_value *values,
                       size_t nvalues, const char *reason, dwl_error *err)
{
  (void)ud, (void)raw, (void)raw_len, (void)values, (void)nvalues, (void)err;
  ck_assert_str_eq(reason, "rejected as asked");
  reject_count++;
  rejected_origin = origin;
  return 0;
}

START_TEST(abi_1_1_plugin_runs_and_rejects)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("rows", "4", 5), scalar("reject_at", "2", 6)};
  source_config c = config(o, 2);
  c.plugin = "abi11";
  c.reject = take_reject;
  reject_count = 0;
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  abi_is(s->lib, 1);
  char got[256];
  ck_assert_int_eq(read_all(s, got, sizeof got, &err), DWL_EOF);
  ck_assert_str_eq(got, "1 3 4");
  ck_assert_int_eq(reject_count, 1);
  ck_assert_uint_eq(rejected_origin, 2);
  source_close(s);
}
END_TEST

/* A 1.2 descriptor ends before `progress`: the host reads no further and
 * says it cannot tell how far the source is. */
START_TEST(abi_1_2_plugin_runs_without_progress)
{
  use_test_plugins();
  spec_opt o[1] = {scalar("rows", "3", 5)};
  source_config c = config(o, 1);
  c.plugin = "abi12";
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  abi_is(s->lib, 2);
  ck_assert_uint_eq(s->lib->p->size, offsetof(dwl_plugin, close) + sizeof s->lib->p->close);
  char got[256];
  ck_assert_int_eq(read_all(s, got, sizeof got, &err), DWL_EOF);
  ck_assert_str_eq(got, "1 2 3");
  uint64_t done = 7, total = 7;
  ck_assert_int_eq(source_progress(s, &done, &total), 0);
  source_close(s);
}
END_TEST

/* A 1.3 plugin's progress entry: tiny counts rows of `rows`. */
START_TEST(abi_1_3_plugin_runs_and_reports_progress)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("rows", "5", 5), scalar("label", "x", 6)};
  source_config c = config(o, 2);
  c.batch_rows = 2;
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), 0);
  abi_is(s->lib, 3);
  ck_assert_uint_eq(s->lib->p->abi_version, DWL_ABI_VERSION);
  uint64_t done, total;
  dwl_batch b;
  ck_assert_int_eq(source_next(s, &b, &err), DWL_OK);
  ck_assert_int_eq(source_progress(s, &done, &total), 1);
  ck_assert_uint_eq(done, 2);
  ck_assert_uint_eq(total, 5);
  char got[256];
  ck_assert_int_eq(read_all(s, got, sizeof got, &err), DWL_EOF);
  ck_assert_str_eq(got, "3 4 5");
  ck_assert_int_eq(source_progress(s, &done, &total), 1);
  ck_assert_uint_eq(done, 5);
  ck_assert_uint_eq(total, 5);
  source_close(s);
}
END_TEST

/* A plugin that asks for an option its table does not declare fails, even
 * though its open returned DWL_OK. */
START_TEST(undeclared_option_read_fails)
{
  use_test_plugins();
  spec_opt o[2] = {scalar("label", "x", 6), scalar("read_undeclared", "true", 7)};
  source_config c = config(o, 2);
  dwl_error err;
  err_init(&err);
  dwl_source *s;
  ck_assert_int_eq(source_open(&c, &s, &err), -1);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(err.code, DWL_EXIT_FAILED);
  ck_assert_str_eq(err.msg,
                   "plugin tiny reads option 'lable', which its option table does not declare (a bug in the plugin)");
}
END_TEST

/* ---- the SDK's error helper, on hosts of 1.1 and 1.2 -------------------- */

static char sdk_msg[256];
static int sdk_calls;

static void sdk_error(dwl_ctx *ctx, const char *fmt, ...)
{
  (void)ctx;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sdk_msg, sizeof sdk_msg, fmt, ap);
  va_end(ap);
  sdk_calls++;
}

static void sdk_verror(dwl_ctx *ctx, const char *fmt, va_list ap)
{
  (void)ctx;
  vsnprintf(sdk_msg, sizeof sdk_msg, fmt, ap);
  sdk_calls += 100;
}

START_TEST(sdk_error_on_a_1_1_host_formats_itself)
{
  dwl_host h = {.abi_version = (1u << 16) | 1u, .size = (uint32_t)offsetof(dwl_host, verror), .error = sdk_error,
                .verror = sdk_verror};
  ck_assert(dwl_host_usable(&h));
  ck_assert(!DWL_HOST_HAS(&h, verror));
  int failed = 0;
  sdk_calls = 0;
  ck_assert_int_eq(dwl_plugin_error(&h, NULL, &failed, "row %d: %s", 7, "bad"), DWL_ERR);
  ck_assert_str_eq(sdk_msg, "row 7: bad");
  ck_assert_int_eq(failed, 1);
  /* only the first error of a source is recorded */
  ck_assert_int_eq(dwl_plugin_error(&h, NULL, &failed, "later"), DWL_ERR);
  ck_assert_str_eq(sdk_msg, "row 7: bad");
  ck_assert_int_eq(sdk_calls, 1);
  /* without `failed`, every error goes through */
  ck_assert_int_eq(dwl_plugin_error(&h, NULL, NULL, "again"), DWL_ERR);
  ck_assert_str_eq(sdk_msg, "again");
  ck_assert_int_eq(sdk_calls, 2);
}
END_TEST

START_TEST(sdk_error_on_a_1_2_host_passes_the_va_list)
{
  dwl_host h = {.abi_version = DWL_ABI_VERSION, .size = sizeof(dwl_host), .error = sdk_error, .verror = sdk_verror};
  sdk_calls = 0;
  ck_assert_int_eq(dwl_plugin_error(&h, NULL, NULL, "%s=%d", "n", 3), DWL_ERR);
  ck_assert_str_eq(sdk_msg, "n=3");
  ck_assert_int_eq(sdk_calls, 100);
}
END_TEST

START_TEST(sdk_refuses_unusable_hosts)
{
  dwl_host h = {.abi_version = DWL_ABI_VERSION, .size = sizeof(dwl_host)};
  ck_assert(dwl_host_usable(&h));
  ck_assert(!dwl_host_usable(NULL));
  h.abi_version = (2u << 16);
  ck_assert(!dwl_host_usable(&h));
  h.abi_version = DWL_ABI_VERSION;
  h.size = (uint32_t)offsetof(dwl_host, opt_map_value);
  ck_assert(!dwl_host_usable(&h));
  dwl_source_args a = {.size = (uint32_t)offsetof(dwl_source_args, batch_rows)};
  const dwl_source_args *args = &a, *none = NULL;
  ck_assert(DWL_ARGS_HAS(args, checkpoint));
  ck_assert(!DWL_ARGS_HAS(args, batch_rows));
  ck_assert(!DWL_ARGS_HAS(none, size));
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("plugin_host");
  TCase *load = tcase_create("load");
  tcase_add_test(load, missing_plugin_is_named);
  tcase_add_test(load, abi_mismatch_is_refused_naming_the_file);
  tcase_add_test(load, missing_entry_symbol_is_refused);
  tcase_add_test(load, not_a_shared_object);
  tcase_add_test(load, invalid_plugin_name);
  tcase_add_test(load, search_order_extra_then_env);
  suite_add_tcase(s, load);
  TCase *opts = tcase_create("options");
  tcase_add_test(opts, loads_and_reads_batches);
  tcase_add_test(opts, default_option_applies);
  tcase_add_test(opts, unknown_option_suggests);
  tcase_add_test(opts, unknown_option_lists_the_options);
  tcase_add_test(opts, missing_required_option);
  tcase_add_test(opts, wrong_option_type);
  tcase_add_test(opts, list_where_scalar_expected);
  tcase_add_test(opts, plugin_error_travels_up);
  tcase_add_test(opts, undeclared_option_read_fails);
  suite_add_tcase(s, opts);
  TCase *abi = tcase_create("abi");
  tcase_add_test(abi, abi_1_0_plugin_runs);
  tcase_add_test(abi, abi_1_1_plugin_runs_and_rejects);
  tcase_add_test(abi, abi_1_2_plugin_runs_without_progress);
  tcase_add_test(abi, abi_1_3_plugin_runs_and_reports_progress);
  tcase_add_test(abi, sdk_error_on_a_1_1_host_formats_itself);
  tcase_add_test(abi, sdk_error_on_a_1_2_host_passes_the_va_list);
  tcase_add_test(abi, sdk_refuses_unusable_hosts);
  suite_add_tcase(s, abi);
  return s;
}
