/* Unit tests for the job spec parser (src/spec/spec.c): reading a job file
 * (parsing, defaults, ${VAR} expansion, YAML and type errors with
 * FILE:LINE:COL, unknown keys and their suggestions, plugin options, key
 * positions).  The rules across keys are in test_spec_rules.c. */
#include "check_main.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "expand.h"
#include "spec.h"
#include "spec_fixture.h"
#include "suggest.h"

static const char full_spec[] =
    "version: 1\n"
    "job: customers\n"
    "source:\n"
    "  plugin: csv\n"
    "  path: feed.csv\n"
    "  columns: [id, name]\n"
    "  types: {id: int, name: text}\n"
    "target:\n"
    "  connection: \"Driver=SQLite3;Database=warehouse.db\"\n"
    "  table: customer_dim\n"
    "load:\n"
    "  mode: scd2\n"
    "  lmd: lmd\n"
    "  lmd_format: \"dd-MM-yyyy\"\n"
    "  key: [id]\n"
    "  type2: [address, phone]\n"
    "  type1: [name]\n"
    "  type1_scope: all\n"
    "  deletes:\n"
    "    column: op\n"
    "    values: [D, X]\n"
    "  delete_style: tombstone\n"
    "dimension:\n"
    "  surrogate_key: sk\n"
    "  surrogate_strategy: hash\n"
    "  valid_from: vf\n"
    "  valid_to: vt\n"
    "  current: cur\n"
    "  deleted: del\n"
    "  open_end: \"9999-12-31\"\n"
    "  close: day_before\n";

START_TEST(test_full_spec)
{
  dwl_spec *s = load_ok(full_spec);
  ck_assert_str_eq(s->path, g_path);
  ck_assert_str_eq(s->dir, g_dir);
  ck_assert_str_eq(s->job, "customers");
  ck_assert_str_eq(s->source_plugin, "csv");
  ck_assert_int_eq(s->source_line, 4);
  ck_assert_int_eq(s->source_col, 3);
  ck_assert_uint_eq(s->n_source_opts, 3);
  ck_assert_str_eq(s->target_connection, "Driver=SQLite3;Database=warehouse.db");
  ck_assert_str_eq(s->target_table, "customer_dim");
  ck_assert_int_eq(s->mode, MODE_SCD2);
  ck_assert_str_eq(s->lmd, "lmd");
  ck_assert_str_eq(s->lmd_format, "dd-MM-yyyy");
  ck_assert_uint_eq(s->key.n, 1);
  ck_assert_str_eq(s->key.v[0], "id");
  ck_assert_uint_eq(s->type2.n, 2);
  ck_assert_str_eq(s->type2.v[0], "address");
  ck_assert_str_eq(s->type2.v[1], "phone");
  ck_assert_int_eq(s->type2_given, 1);
  ck_assert_uint_eq(s->type1.n, 1);
  ck_assert_str_eq(s->type1.v[0], "name");
  ck_assert_int_eq(s->type1_scope, T1_ALL);
  ck_assert_int_eq(s->deletes, DEL_COLUMN);
  ck_assert_str_eq(s->delete_column, "op");
  ck_assert_uint_eq(s->delete_values.n, 2);
  ck_assert_str_eq(s->delete_values.v[0], "D");
  ck_assert_str_eq(s->delete_values.v[1], "X");
  ck_assert_int_eq(s->delete_style, DELSTYLE_TOMBSTONE);
  ck_assert_str_eq(s->surrogate_key, "sk");
  ck_assert_int_eq(s->sk_strategy, SK_HASH);
  ck_assert_str_eq(s->valid_from, "vf");
  ck_assert_str_eq(s->valid_to, "vt");
  ck_assert_str_eq(s->current, "cur");
  ck_assert_str_eq(s->deleted, "del");
  ck_assert_str_eq(s->open_end, "9999-12-31");
  ck_assert_int_eq(s->close, CLOSE_DAY_BEFORE);
  spec_free(s);
}
END_TEST

START_TEST(test_defaults)
{
  dwl_spec *s = load_ok(BASE);
  ck_assert_int_eq(s->mode, MODE_APPEND);
  ck_assert_ptr_null(s->lmd);
  ck_assert_ptr_null(s->lmd_format);
  ck_assert_uint_eq(s->key.n, 0);
  ck_assert_uint_eq(s->type1.n, 0);
  ck_assert_uint_eq(s->type2.n, 0);
  ck_assert_int_eq(s->type2_given, 0);
  ck_assert_int_eq(s->type1_scope, T1_CURRENT);
  ck_assert_int_eq(s->deletes, DEL_NONE);
  ck_assert_ptr_null(s->delete_column);
  ck_assert_int_eq(s->delete_style, DELSTYLE_EXPIRE);
  ck_assert_str_eq(s->surrogate_key, "dim_id");
  ck_assert_int_eq(s->sk_strategy, SK_SEQUENCE);
  ck_assert_str_eq(s->valid_from, "valid_from");
  ck_assert_str_eq(s->valid_to, "valid_to");
  ck_assert_str_eq(s->current, "is_current");
  ck_assert_str_eq(s->deleted, "is_deleted");
  ck_assert_ptr_null(s->open_end);
  ck_assert_int_eq(s->close, CLOSE_AT_NEXT);
  spec_free(s);
}
END_TEST

START_TEST(test_empty_sections_are_defaults)
{
  dwl_spec *s = load_ok(BASE "load:\ndimension:\n");
  ck_assert_int_eq(s->mode, MODE_APPEND);
  ck_assert_str_eq(s->valid_to, "valid_to");
  spec_free(s);
}
END_TEST

START_TEST(test_single_string_key)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: upsert\n  key: id\n");
  ck_assert_int_eq(s->mode, MODE_UPSERT);
  ck_assert_uint_eq(s->key.n, 1);
  ck_assert_str_eq(s->key.v[0], "id");
  spec_free(s);
}
END_TEST

START_TEST(test_null_bookkeeping)
{
  dwl_spec *s = load_ok(BASE SCD2_LOAD
                        "dimension:\n"
                        "  surrogate_key: null\n"
                        "  current: ~\n"
                        "  deleted:\n"
                        "  open_end: NULL\n");
  ck_assert_ptr_null(s->surrogate_key);
  ck_assert_ptr_null(s->current);
  ck_assert_ptr_null(s->deleted);
  ck_assert_ptr_null(s->open_end);
  ck_assert_str_eq(s->valid_from, "valid_from");
  spec_free(s);
}
END_TEST

START_TEST(test_quoted_null_is_string)
{
  dwl_spec *s = load_ok(BASE "dimension:\n  surrogate_key: \"null\"\n  current: '~'\n");
  ck_assert_str_eq(s->surrogate_key, "null");
  ck_assert_str_eq(s->current, "~");
  spec_free(s);
}
END_TEST

START_TEST(test_valid_from_not_nullable)
{
  expect_error(BASE "dimension:\n  valid_from: null\n", 9, 15,
               "dimension.valid_from: expected a string, found null");
}
END_TEST

START_TEST(test_env_connection)
{
  setenv("DWL_T_DRV", "SQLite3", 1);
  unsetenv("DWL_T_DB");
  dwl_spec *s = load_ok("job: j\n"
                        "source: {plugin: csv, path: f.csv}\n"
                        "target:\n"
                        "  connection: \"Driver=${DWL_T_DRV};Database=${DWL_T_DB:-w.db}\"\n"
                        "  table: t\n");
  ck_assert_str_eq(s->target_connection, "Driver=SQLite3;Database=w.db");
  spec_free(s);
  unsetenv("DWL_T_DRV");
}
END_TEST

START_TEST(test_env_plugin_options)
{
  setenv("DWL_T_COL", "email", 1);
  dwl_spec *s = load_ok("job: j\n"
                        "source:\n"
                        "  plugin: csv\n"
                        "  path: ${DWL_T_COL}.csv\n"
                        "  columns: [id, \"${DWL_T_COL}\"]\n"
                        "  rename: {old: \"${DWL_T_COL}_new\"}\n"
                        "target: {connection: db, table: t}\n");
  const spec_opt *o = spec_source_opt(s, "path");
  ck_assert_ptr_nonnull(o);
  ck_assert_str_eq(o->scalar, "email.csv");
  o = spec_source_opt(s, "columns");
  ck_assert_ptr_nonnull(o);
  ck_assert_uint_eq(o->list.n, 2);
  ck_assert_str_eq(o->list.v[1], "email");
  o = spec_source_opt(s, "rename");
  ck_assert_ptr_nonnull(o);
  ck_assert_str_eq(o->list.v[0], "old");
  ck_assert_str_eq(o->vals.v[0], "email_new");
  spec_free(s);
  unsetenv("DWL_T_COL");
}
END_TEST

START_TEST(test_env_default)
{
  unsetenv("DWL_T_TBL");
  dwl_spec *s = load_ok("job: j\nsource: {plugin: csv}\n"
                        "target: {connection: db, table: \"${DWL_T_TBL:-fallback}\"}\n");
  ck_assert_str_eq(s->target_table, "fallback");
  spec_free(s);
  /* Shell semantics: an empty value also takes the default... */
  setenv("DWL_T_TBL", "", 1);
  s = load_ok("job: j\nsource: {plugin: csv}\n"
              "target: {connection: db, table: \"${DWL_T_TBL:-fallback}\"}\n");
  ck_assert_str_eq(s->target_table, "fallback");
  spec_free(s);
  /* ...and a set value wins. */
  setenv("DWL_T_TBL", "real", 1);
  s = load_ok("job: j\nsource: {plugin: csv}\n"
              "target: {connection: db, table: \"${DWL_T_TBL:-fallback}\"}\n");
  ck_assert_str_eq(s->target_table, "real");
  spec_free(s);
  unsetenv("DWL_T_TBL");
}
END_TEST

START_TEST(test_env_dollar_literal)
{
  dwl_spec *s = load_ok("job: j\nsource: {plugin: csv, pattern: \"a$$b$c\"}\n"
                        "target: {connection: \"pw=$$${DWL_T_NONE:-1}\", table: t}\n");
  ck_assert_str_eq(s->target_connection, "pw=$1");
  ck_assert_str_eq(spec_source_opt(s, "pattern")->scalar, "a$b$c");
  spec_free(s);
}
END_TEST

START_TEST(test_env_unset_error)
{
  unsetenv("DWL_T_UNSET_X");
  expect_error("job: j\n"
               "source:\n"
               "  plugin: csv\n"
               "  path: ${DWL_T_UNSET_X}\n"
               "target: {connection: db, table: t}\n",
               4, 9, "environment variable 'DWL_T_UNSET_X' is not set");
}
END_TEST

START_TEST(test_env_empty_counts_as_set)
{
  setenv("DWL_T_EMPTY", "", 1);
  dwl_spec *s = load_ok("job: j\nsource: {plugin: csv, prefix: \"x${DWL_T_EMPTY}y\"}\n"
                        "target: {connection: db, table: t}\n");
  ck_assert_str_eq(spec_source_opt(s, "prefix")->scalar, "xy");
  spec_free(s);
  unsetenv("DWL_T_EMPTY");
}
END_TEST

START_TEST(test_env_malformed)
{
  expect_error("job: j\nsource: {plugin: csv}\ntarget:\n  connection: \"${DWL_T_OPEN\"\n"
               "  table: t\n", 4, 15, "malformed variable reference");
  expect_error("job: j\nsource: {plugin: csv}\ntarget:\n  connection: db\n"
               "  table: \"${1BAD}\"\n", 5, 10, "malformed variable reference");
}
END_TEST

START_TEST(test_expand_env_api)
{
  char *bad = (char *)"sentinel";
  setenv("DWL_T_A", "alpha", 1);
  unsetenv("DWL_T_B");
  char *r = spec_expand_env("${DWL_T_A}-${DWL_T_B:-${DWL_T_A}}-$$-$x", &bad);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(r, "alpha-alpha-$-$x");
  free(r);
  /* A default that is not taken is not evaluated. */
  r = spec_expand_env("${DWL_T_A:-${DWL_T_B}}", &bad);
  ck_assert_str_eq(r, "alpha");
  free(r);
  bad = NULL;
  r = spec_expand_env("x${DWL_T_B}", &bad);
  ck_assert_ptr_null(r);
  ck_assert_ptr_nonnull(bad);
  ck_assert_str_eq(bad, "DWL_T_B");
  free(bad);
  bad = (char *)"sentinel";
  r = spec_expand_env("${DWL_T_A", &bad);
  ck_assert_ptr_null(r);
  ck_assert_ptr_null(bad);
  r = spec_expand_env("${DWL_T_A-x}", &bad);
  ck_assert_ptr_null(r);
  ck_assert_ptr_null(bad);
  r = spec_expand_env("${}", &bad);
  ck_assert_ptr_null(r);
  unsetenv("DWL_T_A");
}
END_TEST

START_TEST(test_yaml_syntax_error)
{
  dwl_error err;
  dwl_spec *s = load_text("job: j\nsource:\n  plugin: csv\n  path: [a, b\ntarget: x\n", &err);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  char prefix[PATH_MAX + 64];
  snprintf(prefix, sizeof prefix, "%s:5:", g_path);
  ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0, "got '%s'", err.msg);
  ck_assert_msg(strstr(err.msg, "YAML syntax error") != NULL, "got '%s'", err.msg);
  ck_assert_msg(strstr(err.msg, "flow sequence") != NULL, "got '%s'", err.msg);
}
END_TEST

START_TEST(test_empty_file)
{
  expect_error("", 1, 1, "empty");
  expect_error("# only a comment\n", 1, 1, "empty");
}
END_TEST

START_TEST(test_top_not_mapping)
{
  expect_error("- job\n- source\n", 1, 1, "must be a mapping");
  expect_error("just text\n", 1, 1, "found a string");
}
END_TEST

START_TEST(test_two_documents)
{
  expect_error(BASE "---\n" BASE, 8, 1, "more than one YAML document");
}
END_TEST

START_TEST(test_unknown_key_suggestion)
{
  expect_error(BASE "load:\n  mdoe: append\n", 9, 3,
               "unknown key 'mdoe' in load; did you mean 'mode'?");
  expect_error(BASE "dimension:\n  validto: x\n", 9, 3, "did you mean 'valid_to'?");
}
END_TEST

START_TEST(test_unknown_key_no_suggestion)
{
  dwl_error err;
  expect_error(BASE "load:\n  frobnicate: 1\n", 9, 3, "unknown key 'frobnicate' in load");
  dwl_spec *s = load_text(BASE "load:\n  frobnicate: 1\n", &err);
  ck_assert_ptr_null(s);
  ck_assert_ptr_null(strstr(err.msg, "did you mean"));
}
END_TEST

START_TEST(test_unknown_top_level_key)
{
  expect_error("jbo: x\nsource: {plugin: csv}\n", 1, 1,
               "unknown key 'jbo' at top level; did you mean 'job'?");
  expect_error(BASE "target2: {}\n", 8, 1, "unknown key 'target2' at top level");
  expect_error("job: j\nsource: {plugin: csv}\ntarget: {connection: c, tabel: t}\n", 3, 25,
               "unknown key 'tabel' in target; did you mean 'table'?");
}
END_TEST

START_TEST(test_wrong_types)
{
  expect_error(BASE "load:\n  key: {a: b}\n", 9, 8,
               "load.key: expected a list of strings, found a mapping");
  expect_error("job: j\nsource: {plugin: csv}\ntarget:\n  connection: db\n  table: [a, b]\n",
               5, 10, "target.table: expected a string, found a list");
  expect_error("job: j\nsource: csv\n", 2, 9, "source: expected a mapping, found a string");
  expect_error(BASE "load:\n  key: [id, [x]]\n", 9, 13,
               "load.key: item 2: expected a string, found a list");
  expect_error(BASE "load:\n  mode:\n", 9, 8, "load.mode: expected a string, found null");
}
END_TEST

START_TEST(test_bad_enum)
{
  expect_error(BASE "load:\n  mode: scd3\n", 9, 9,
               "load.mode: 'scd3' is not one of append, replace, scd2, upsert; "
               "did you mean 'scd2'?");
  expect_error(BASE "dimension:\n  close: whenever\n", 9, 10,
               "dimension.close: 'whenever' is not one of at_next, day_before, second_before");
  expect_error(BASE "load:\n  mode: scd2\n  key: id\n  lmd: l\n  type1_scope: everything\n",
               12, 16, "load.type1_scope: 'everything' is not one of current, all");
}
END_TEST

START_TEST(test_missing_required)
{
  expect_error("job: j\nsource: {plugin: csv}\ntarget:\n  connection: db\n", 4, 3,
               "target: missing required key 'table'");
  expect_error("job: j\nsource:\n  path: x\ntarget: {connection: c, table: t}\n", 3, 3,
               "source: missing required key 'plugin'");
  expect_error("job: j\ntarget: {connection: c, table: t}\n", 1, 1,
               "missing required key 'source'");
  expect_error("source: {plugin: csv}\ntarget: {connection: c, table: t}\n", 1, 1,
               "missing required key 'job'");
}
END_TEST

START_TEST(test_duplicate_mapping_key)
{
  expect_error(BASE "load:\n  mode: append\n  lmd: x\n  mode: replace\n", 11, 3,
               "duplicate key 'mode' in load (lines 9 and 11)");
  expect_error(BASE "job: again\n", 8, 1, "duplicate key 'job' at top level (lines 1 and 8)");
  expect_error("job: j\nsource:\n  plugin: csv\n  path: a\n  path: b\n", 5, 3,
               "duplicate key 'path' in source (lines 4 and 5)");
}
END_TEST

START_TEST(test_plugin_option_kinds)
{
  dwl_spec *s = load_ok("job: j\n"
                        "source:\n"
                        "  plugin: csv\n"
                        "  path: feed.csv\n"
                        "  columns:\n"
                        "    - id\n"
                        "    - name\n"
                        "  types: {id: int, name: text}\n"
                        "target: {connection: db, table: t}\n");
  ck_assert_uint_eq(s->n_source_opts, 3);
  const spec_opt *o = spec_source_opt(s, "path");
  ck_assert_int_eq(o->kind, SPEC_OPT_SCALAR);
  ck_assert_str_eq(o->scalar, "feed.csv");
  ck_assert_int_eq(o->line, 4);
  ck_assert_int_eq(o->col, 3);
  ck_assert_int_eq(o->vline, 4);
  ck_assert_int_eq(o->vcol, 9);
  o = spec_source_opt(s, "columns");
  ck_assert_int_eq(o->kind, SPEC_OPT_LIST);
  ck_assert_uint_eq(o->list.n, 2);
  ck_assert_str_eq(o->list.v[0], "id");
  ck_assert_str_eq(o->list.v[1], "name");
  ck_assert_int_eq(o->line, 5);
  ck_assert_int_eq(o->vline, 6);
  ck_assert_int_eq(o->vcol, 5);
  o = spec_source_opt(s, "types");
  ck_assert_int_eq(o->kind, SPEC_OPT_MAP);
  ck_assert_uint_eq(o->list.n, 2);
  ck_assert_uint_eq(o->vals.n, 2);
  ck_assert_str_eq(o->list.v[1], "name");
  ck_assert_str_eq(o->vals.v[1], "text");
  ck_assert_int_eq(o->line, 8);
  ck_assert_int_eq(o->vcol, 10);
  ck_assert_ptr_null(spec_source_opt(s, "plugin"));
  ck_assert_ptr_null(spec_source_opt(s, "nope"));
  spec_free(s);
}
END_TEST

START_TEST(test_plugin_option_nesting_rejected)
{
  expect_error("job: j\nsource:\n  plugin: csv\n  types:\n    id: {a: b}\n", 5, 9,
               "source.types.id: expected a scalar, found a mapping");
  expect_error("job: j\nsource:\n  plugin: csv\n  columns: [a, [b]]\n", 4, 16,
               "source.columns: list items must be scalars, found a list");
  expect_error("job: j\nsource:\n  plugin: csv\n  types: {a: x, a: y}\n", 4, 17,
               "duplicate key 'a' in source.types");
  expect_error("job: j\nsource:\n  plugin: csv\n  path:\n", 4, 8,
               "source.path: expected a value, found null");
}
END_TEST

START_TEST(test_suggest)
{
  static const char *const cands[] = {"mode", "lmd", "lmd_format", "type1_scope", NULL};
  ck_assert_str_eq(spec_suggest("mdoe", cands), "mode");
  ck_assert_str_eq(spec_suggest("MODE", cands), "mode");
  ck_assert_str_eq(spec_suggest("lmd_fromat", cands), "lmd_format");
  ck_assert_str_eq(spec_suggest("type1scope", cands), "type1_scope");
  ck_assert_ptr_null(spec_suggest("frobnicate", cands));
  ck_assert_ptr_null(spec_suggest("zz", cands));
  static const char *const none[] = {NULL};
  ck_assert_ptr_null(spec_suggest("mode", none));
}
END_TEST

START_TEST(test_key_pos)
{
  dwl_spec *s = load_ok(full_spec);
  int line = -5, col = -5;
  ck_assert_int_eq(spec_key_pos(s, "job", &line, &col), 0);
  ck_assert_int_eq(line, 2);
  ck_assert_int_eq(col, 1);
  ck_assert_int_eq(spec_key_pos(s, "load.key", &line, &col), 0);
  ck_assert_int_eq(line, 15);
  ck_assert_int_eq(col, 3);
  ck_assert_int_eq(spec_key_pos(s, "dimension.valid_from", &line, &col), 0);
  ck_assert_int_eq(line, 26);
  ck_assert_int_eq(col, 3);
  ck_assert_int_eq(spec_key_pos(s, "source.path", &line, &col), 0);
  ck_assert_int_eq(line, 5);
  ck_assert_int_eq(spec_key_pos(s, "load.deletes.values", &line, &col), 0);
  ck_assert_int_eq(line, 21);
  ck_assert_int_eq(col, 5);
  ck_assert_int_eq(spec_key_pos(s, "load.bogus", &line, &col), -1);
  ck_assert_int_eq(line, 0);
  ck_assert_int_eq(col, 0);
  spec_free(s);
  s = load_ok(BASE);
  ck_assert_int_eq(spec_key_pos(s, "load.mode", &line, &col), -1);
  ck_assert_int_eq(spec_key_pos(s, "target.table", &line, &col), 0);
  ck_assert_int_eq(line, 7);
  spec_free(s);
}
END_TEST

START_TEST(test_version)
{
  dwl_spec *s = load_ok("version: 1\n" BASE);
  spec_free(s);
  expect_error("version: 2\n" BASE, 1, 10, "unsupported spec version '2'");
  expect_error("version: [1]\n" BASE, 1, 10, "version: expected 1, found a list");
}
END_TEST

START_TEST(test_job_name)
{
  expect_error("job: \"my job\"\nsource: {plugin: csv}\ntarget: {connection: c, table: t}\n",
               1, 6, "job: 'my job' may only contain");
  expect_error("job: "
               "a2345678901234567890123456789012345678901234567890123456789012345\n"
               "source: {plugin: csv}\ntarget: {connection: c, table: t}\n",
               1, 6, "at most 64");
  dwl_spec *s = load_ok("job: Cust-dim_2.v1\nsource: {plugin: csv}\n"
                        "target: {connection: c, table: t}\n");
  ck_assert_str_eq(s->job, "Cust-dim_2.v1");
  spec_free(s);
}
END_TEST

START_TEST(test_relative_path_dir)
{
  char old[PATH_MAX], cwd[PATH_MAX];
  dwl_error err;
  ck_assert_ptr_nonnull(getcwd(old, sizeof old));
  write_text(g_path, BASE);
  ck_assert_int_eq(chdir(g_dir), 0);
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  err_init(&err);
  dwl_spec *s = spec_load("./job.yaml", &err);
  int rc = chdir(old);
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(s != NULL, "%s", err.msg);
  ck_assert_str_eq(s->path, "./job.yaml");
  ck_assert_str_eq(s->dir, cwd);
  spec_free(s);
}
END_TEST

START_TEST(test_missing_file)
{
  dwl_error err;
  char p[PATH_MAX + 32];
  snprintf(p, sizeof p, "%s/absent.yaml", g_dir);
  err_init(&err);
  ck_assert_ptr_null(spec_load(p, &err));
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_msg(strncmp(err.msg, p, strlen(p)) == 0, "got '%s'", err.msg);
  ck_assert_msg(strstr(err.msg, "cannot open") != NULL, "got '%s'", err.msg);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *su = suite_create("spec");
  TCase *tc = tcase_create("spec");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_full_spec);
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_empty_sections_are_defaults);
  tcase_add_test(tc, test_single_string_key);
  tcase_add_test(tc, test_null_bookkeeping);
  tcase_add_test(tc, test_quoted_null_is_string);
  tcase_add_test(tc, test_valid_from_not_nullable);
  tcase_add_test(tc, test_env_connection);
  tcase_add_test(tc, test_env_plugin_options);
  tcase_add_test(tc, test_env_default);
  tcase_add_test(tc, test_env_dollar_literal);
  tcase_add_test(tc, test_env_unset_error);
  tcase_add_test(tc, test_env_empty_counts_as_set);
  tcase_add_test(tc, test_env_malformed);
  tcase_add_test(tc, test_expand_env_api);
  tcase_add_test(tc, test_yaml_syntax_error);
  tcase_add_test(tc, test_empty_file);
  tcase_add_test(tc, test_top_not_mapping);
  tcase_add_test(tc, test_two_documents);
  tcase_add_test(tc, test_unknown_key_suggestion);
  tcase_add_test(tc, test_unknown_key_no_suggestion);
  tcase_add_test(tc, test_unknown_top_level_key);
  tcase_add_test(tc, test_wrong_types);
  tcase_add_test(tc, test_bad_enum);
  tcase_add_test(tc, test_missing_required);
  tcase_add_test(tc, test_duplicate_mapping_key);
  tcase_add_test(tc, test_plugin_option_kinds);
  tcase_add_test(tc, test_plugin_option_nesting_rejected);
  tcase_add_test(tc, test_suggest);
  tcase_add_test(tc, test_key_pos);
  tcase_add_test(tc, test_version);
  tcase_add_test(tc, test_job_name);
  tcase_add_test(tc, test_relative_path_dir);
  tcase_add_test(tc, test_missing_file);
  suite_add_tcase(su, tc);
  return su;
}
