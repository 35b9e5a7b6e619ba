/* Unit tests for the guards of deletions by absence (src/engine/guard.c) and the
 * load.max_deletes limit they read (spec_parse_limit, the spec defaults). */
#include "check_main.h"

#include <string.h>

#include "err.h"
#include "guard.h"
#include "hint.h"
#include "spec.h"

START_TEST(test_parse_limit)
{
  spec_limit l;
  ck_assert_int_eq(spec_parse_limit("50%", &l), 0);
  ck_assert_int_eq(l.kind, LIMIT_PERCENT);
  ck_assert(l.value == 50);
  ck_assert_int_eq(spec_parse_limit("0.5%", &l), 0);
  ck_assert(l.kind == LIMIT_PERCENT && l.value == 0.5);
  ck_assert_int_eq(spec_parse_limit("100%", &l), 0);
  ck_assert_int_eq(spec_parse_limit("0", &l), 0);
  ck_assert(l.kind == LIMIT_COUNT && l.value == 0);
  ck_assert_int_eq(spec_parse_limit("1000", &l), 0);
  ck_assert(l.kind == LIMIT_COUNT && l.value == 1000);
  ck_assert_int_eq(spec_parse_limit("all", &l), 0);
  ck_assert_int_eq(l.kind, LIMIT_ALL);
  static const char *const bad[] = {"", "%", "100.1%", "101%", "-1", "+1", "1.5", "1e3", "0x10", " 5",
                                    "5 ", "50 %", "5.%", ".5%", "ALL", "none", "1,000", "10%%"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(spec_parse_limit(bad[i], &l) == -1, "'%s' parsed", bad[i]);
  char out[40];
  spec_parse_limit("12.5%", &l);
  spec_format_limit(&l, out, sizeof out);
  ck_assert_str_eq(out, "12.5%");
  spec_parse_limit("7", &l);
  spec_format_limit(&l, out, sizeof out);
  ck_assert_str_eq(out, "7");
}
END_TEST

/* The spec's defaults and keys. */
START_TEST(test_spec_keys)
{
  static const char head[] = "version: 1\njob: j\nsource: {plugin: csv, path: f.csv}\n"
                             "target: {connection: x, table: t}\n";
  char text[512];
  dwl_error err;
  err_init(&err);
  snprintf(text, sizeof text, "%sload: {mode: upsert, key: id, deletes: absent}\n", head);
  dwl_spec *s = spec_parse("/tmp/job.yaml", text, strlen(text), &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  ck_assert(s->max_deletes.kind == LIMIT_PERCENT && s->max_deletes.value == 50);
  ck_assert_int_eq(s->allow_empty, 0);
  spec_free(s);
  snprintf(text, sizeof text, "%sload: {mode: upsert, key: id, deletes: absent, max_deletes: 3, allow_empty: yes}\n",
           head);
  s = spec_parse("/tmp/job.yaml", text, strlen(text), &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  ck_assert(s->max_deletes.kind == LIMIT_COUNT && s->max_deletes.value == 3);
  ck_assert_int_eq(s->allow_empty, 1);
  spec_free(s);
  snprintf(text, sizeof text, "%sload: {mode: replace, allow_empty: off}\n", head);
  s = spec_parse("/tmp/job.yaml", text, strlen(text), &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  ck_assert_int_eq(s->allow_empty, 0);
  spec_free(s);
  snprintf(text, sizeof text, "%sload: {mode: upsert, key: id, max_deletes: all}\n", head);
  ck_assert_ptr_null(spec_parse("/tmp/job.yaml", text, strlen(text), &err));
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_msg(strstr(err.msg, "job.yaml:5:31: load.max_deletes applies only with deletes: absent"), "%s", err.msg);
}
END_TEST

static dwl_spec g_spec;
static run_summary g_sum;
static dwl_error g_err;

static void setup(void)
{
  memset(&g_spec, 0, sizeof g_spec);
  g_spec.job = "j";
  g_spec.target_table = "dim";
  g_spec.deletes = DEL_ABSENT;
  g_spec.max_deletes = (spec_limit){LIMIT_PERCENT, 50};
  summary_init(&g_sum, "j", "upsert");
  err_init(&g_err);
}

/* guard_absence with the spec above and `o`: its result */
static int judge(const run_opts *o, long long current, long long absent, long long read, long long unreadable)
{
  setup();
  return guard_absence(&g_spec, o, current, absent, read, unreadable, "f.csv:3", &g_sum, &g_err);
}

START_TEST(test_absence)
{
  run_opts o = {0};
  /* nothing absent: nothing to guard, whatever else */
  ck_assert_int_eq(judge(&o, 0, 0, 0, 0), 0);
  ck_assert_ptr_null(g_sum.guard);
  ck_assert_int_eq(judge(&o, 4, 0, 0, 5), 0);
  /* at the limit, and one more */
  ck_assert_int_eq(judge(&o, 4, 2, 2, 0), 0);
  ck_assert_int_eq(g_sum.absent, 2);
  ck_assert_ptr_null(g_sum.guard);
  ck_assert_int_eq(judge(&o, 4, 3, 1, 0), -1);
  ck_assert_str_eq(g_sum.guard, "max_deletes");
  ck_assert_int_eq(g_err.code, DWL_EXIT_PERMANENT);
  ck_assert_msg(strstr(g_err.msg, "job j: deletes: absent would delete 3 of the 4 current keys of dim (75.0%), more "
                                  "than load.max_deletes: 50% allows (2)"),
                "%s", g_err.msg);
  /* 50% of 3 keys is 1 */
  ck_assert_int_eq(judge(&o, 3, 2, 1, 0), -1);
  ck_assert_int_eq(judge(&o, 3, 1, 2, 0), 0);
  /* the command line's limit wins over the spec's */
  spec_limit two = {LIMIT_COUNT, 2}, all = {LIMIT_ALL, 0}, pct = {LIMIT_PERCENT, 75};
  o.max_deletes = &two;
  ck_assert_int_eq(judge(&o, 4, 3, 1, 0), -1);
  ck_assert_msg(strstr(g_err.msg, "more than --max-deletes: 2 allows (2)"), "%s", g_err.msg);
  o.max_deletes = &pct;
  ck_assert_int_eq(judge(&o, 4, 3, 1, 0), 0);
  o.max_deletes = &all;
  ck_assert_int_eq(judge(&o, 1000, 1000, 1, 0), 0);
  /* an empty extract: refused before the limit, even with all */
  ck_assert_int_eq(judge(&o, 3, 3, 0, 0), -1);
  ck_assert_str_eq(g_sum.guard, "empty_extract");
  ck_assert_msg(strstr(g_err.msg, "job j: the source delivered no rows, and deletes: absent would delete every "
                                  "current key of dim (3)"),
                "%s", g_err.msg);
  ck_assert_msg(strstr(g_err.msg, "--allow-empty"), "%s", g_err.msg);
  /* allowed, by the command line or the spec: then the limit applies */
  o.allow_empty = 1;
  ck_assert_int_eq(judge(&o, 3, 3, 0, 0), 0);
  o.max_deletes = NULL;
  ck_assert_int_eq(judge(&o, 3, 3, 0, 0), -1);
  ck_assert_str_eq(g_sum.guard, "max_deletes");
  o.allow_empty = 0;
  setup();
  g_spec.allow_empty = 1;
  g_spec.max_deletes = all;
  ck_assert_int_eq(guard_absence(&g_spec, &o, 3, 3, 0, 0, "", &g_sum, &g_err), 0);
  /* a rejected row without a readable key: nothing deleted, no failure,
   * before any other guard */
  ck_assert_int_eq(judge(&o, 4, 4, 1, 1), 1);
  ck_assert_str_eq(g_sum.guard, "unreadable_reject");
  ck_assert_int_eq(g_sum.absent, 4);
  ck_assert_int_eq(g_err.code, 0);
}
END_TEST

/* A refusal comes with a hint: not worth a blind retry. */
START_TEST(test_hint)
{
  run_opts o = {0};
  ck_assert_int_eq(judge(&o, 4, 3, 1, 0), -1);
  ck_assert_ptr_nonnull(hint_for(&g_err));
  ck_assert_ptr_nonnull(strstr(hint_for(&g_err), "dwload plan JOB"));
  ck_assert_int_eq(judge(&o, 4, 4, 0, 0), -1);
  ck_assert_ptr_nonnull(hint_for(&g_err));
  setup();
  ck_assert_int_eq(guard_replace(&g_spec, &o, 2, &g_sum, &g_err), -1);
  ck_assert_ptr_nonnull(hint_for(&g_err));
}
END_TEST

START_TEST(test_replace)
{
  run_opts o = {0};
  setup();
  g_spec.deletes = DEL_NONE;
  g_spec.mode = MODE_REPLACE;
  ck_assert_int_eq(guard_replace(&g_spec, &o, 0, &g_sum, &g_err), 0);
  ck_assert_int_eq(guard_replace(&g_spec, &o, 1, &g_sum, &g_err), -1);
  ck_assert_str_eq(g_sum.guard, "empty_extract");
  ck_assert_msg(strstr(g_err.msg, "job j: the source delivered no rows to load, and mode replace would empty dim (1 "
                                  "row);"),
                "%s", g_err.msg);
  o.allow_empty = 1;
  err_init(&g_err);
  ck_assert_int_eq(guard_replace(&g_spec, &o, 5, &g_sum, &g_err), 0);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("guard");
  TCase *tc = tcase_create("guard");
  tcase_add_test(tc, test_parse_limit);
  tcase_add_test(tc, test_spec_keys);
  tcase_add_test(tc, test_absence);
  tcase_add_test(tc, test_replace);
  tcase_add_test(tc, test_hint);
  suite_add_tcase(s, tc);
  return s;
}
