/* Plugin host: the search path, the loader's error paths (missing plugin,
 * ABI mismatch, missing entry symbol), option validation against a
 * plugin's option table, and driving a source through the dwl_host API.
 * Uses the test plugins built in tests/plugins (TEST_PLUGINDIR). */
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
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
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
  ck_assert_int_eq(err.code, DWL_EXIT_FAILED);
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
  suite_add_tcase(s, opts);
  return s;
}
