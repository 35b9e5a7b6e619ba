/* Unit tests for hint.c: the hint follows from an error's exit code, cause
 * and SQLSTATE, not from the words of its message. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "hint.h"

#include "check_main.h"

static dwl_error e;

/* An error as a module raises it: code, cause, message; for a connection,
 * the SQLSTATE and native code of the driver's first diagnostic. */
static const char *hint_of(int code, int cause, const char *sqlstate, long native, const char *msg)
{
  err_init(&e);
  err_setc(&e, code, cause, "%s", msg);
  snprintf(e.sqlstate, sizeof e.sqlstate, "%s", sqlstate);
  e.native = native;
  return hint_for(&e);
}

static void has(const char *hint, const char *want)
{
  ck_assert_msg(hint != NULL, "no hint, wanted one with '%s'", want);
  ck_assert_msg(strstr(hint, want) != NULL, "hint '%s' lacks '%s'", hint, want);
}

START_TEST(test_by_exit_code)
{
  has(hint_of(DWL_EXIT_LOCKED, DWL_CAUSE_NONE, "", 0, "job 'x' is locked: another run holds it"), "worth a retry");
  has(hint_of(DWL_EXIT_UNKNOWN, DWL_CAUSE_NONE, "", 0, "the commit's outcome is unknown: x"), "dwload state JOB");
}
END_TEST

START_TEST(test_by_cause)
{
  has(hint_of(DWL_EXIT_SIGNAL + 15, DWL_CAUSE_INTERRUPTED, "", 0, "interrupted by SIGTERM"), "rolled back");
  has(hint_of(2, DWL_CAUSE_PLUGIN_NOT_FOUND, "", 0, "plugin 'nope' not found (searched: /a, /b)"), "dwload plugins");
  has(hint_of(1, DWL_CAUSE_NOT_PLUGIN, "", 0, "/x/y.so is not a dwload plugin"), "files that load as plugins");
  has(hint_of(2, DWL_CAUSE_PLUGIN_OPTION, "", 0, "job.yaml:4:3: unknown option 'pth' for plugin csv"), "options");
  has(hint_of(2, DWL_CAUSE_SPEC, "", 0, "job.yaml:8:3: unknown key 'tabel' in target"), "dwload-job(5)");
  has(hint_of(2, DWL_CAUSE_SPEC, "", 0, "job.yaml:8:3: x"), "not worth a retry");
  /* The cause, not the file's name: a job file named otherwise too. */
  has(hint_of(2, DWL_CAUSE_SPEC, "", 0, "job.conf:8:3: x"), "dwload-job(5)");
  has(hint_of(4, DWL_CAUSE_GUARD, "", 0, "job j: deletes: absent would delete 3 of the 4 current keys"),
      "dwload plan JOB");
  /* A rule keyed on a code and a cause needs both. */
  ck_assert_ptr_null(hint_of(1, DWL_CAUSE_SPEC, "", 0, "job.yaml:8:3: x"));
  ck_assert_ptr_null(hint_of(1, DWL_CAUSE_PLUGIN_OPTION, "", 0, "x"));
  has(hint_of(1, DWL_CAUSE_SCHEMA, "", 0, "table dim exists but has no column 'x'"), "alter it");
  has(hint_of(1, DWL_CAUSE_REJECTS, "", 0, "feed.csv:3: x; that is 2 rejected rows"), "rows are fixed");
  has(hint_of(1, DWL_CAUSE_REJECT_FILE, "", 0, "load.reject_file: cannot write /x/r.csv.tmp"), "folder");
  has(hint_of(1, DWL_CAUSE_NON_ATOMIC, "", 0, "table dim is a SPIDER table, ..."), "target.accept_non_atomic");
  /* A failed commit on a table whose rows commit apart: not the plain
   * exit 5's "a retry is safe either way". */
  has(hint_of(DWL_EXIT_UNKNOWN, DWL_CAUSE_COMMIT_APART, "", 0, "...; the checkpoint was not committed ..."),
      "reads the same rows again");
  ck_assert_ptr_null(strstr(hint_of(DWL_EXIT_UNKNOWN, DWL_CAUSE_COMMIT_APART, "", 0, "x"), "safe either way"));
  has(hint_of(DWL_EXIT_UNKNOWN, 0, "", 0, "the commit's outcome is unknown"), "safe either way");
  /* A lock wait that prepared XA transactions explain: how to end them,
   * before the plain lock row's "worth a retry". */
  has(hint_of(DWL_EXIT_LOCKED, DWL_CAUSE_PREPARED_XA, "HY000", 1205, "1 prepared XA transaction ..."),
      "XA ROLLBACK or XA COMMIT");
}
END_TEST

/* The exit code follows the cause, from err.c's one table: a permanent
 * cause ends with 4 whatever code the site passed, any other keeps its
 * code; err_cause applies the table to an error recorded without one. */
START_TEST(test_exit_by_cause)
{
  static const int permanent[] = {DWL_CAUSE_SCHEMA,         DWL_CAUSE_REJECTS,    DWL_CAUSE_REJECT_FILE, DWL_CAUSE_GUARD,
                                  DWL_CAUSE_PLUGIN_NOT_FOUND, DWL_CAUSE_NOT_PLUGIN, DWL_CAUSE_PLUGIN_ABI,
                                  DWL_CAUSE_NON_ATOMIC};
  for (size_t i = 0; i < sizeof permanent / sizeof permanent[0]; i++) {
    err_init(&e);
    err_setc(&e, DWL_EXIT_FAILED, permanent[i], "x");
    ck_assert_msg(e.code == DWL_EXIT_PERMANENT, "cause %d: exit %d", permanent[i], e.code);
    ck_assert_int_eq(err_exit_for(permanent[i], DWL_EXIT_FAILED), DWL_EXIT_PERMANENT);
  }
  static const struct {
    int cause, code;
  } kept[] = {{DWL_CAUSE_NONE, DWL_EXIT_FAILED},    {DWL_CAUSE_CONNECT, DWL_EXIT_FAILED},
              {DWL_CAUSE_SPEC, DWL_EXIT_USAGE},     {DWL_CAUSE_PLUGIN_OPTION, DWL_EXIT_USAGE},
              {DWL_CAUSE_NO_TABLE, DWL_EXIT_FAILED}, {DWL_CAUSE_INTERRUPTED, DWL_EXIT_SIGNAL + 15},
              {DWL_CAUSE_PREPARED_XA, DWL_EXIT_LOCKED}, {DWL_CAUSE_COMMIT_APART, DWL_EXIT_UNKNOWN}};
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
    err_init(&e);
    err_setc(&e, kept[i].code, kept[i].cause, "x");
    ck_assert_msg(e.code == kept[i].code, "cause %d: exit %d, not %d", kept[i].cause, e.code, kept[i].code);
  }
  /* an ODBC failure later named a connection stays retryable; a callee's
   * error named a guard refusal becomes permanent */
  err_init(&e);
  err_set(&e, DWL_EXIT_FAILED, "cannot connect");
  err_cause(&e, DWL_CAUSE_CONNECT);
  ck_assert_int_eq(e.code, DWL_EXIT_FAILED);
  err_init(&e);
  err_set(&e, DWL_EXIT_FAILED, "x");
  err_cause(&e, DWL_CAUSE_GUARD);
  ck_assert_int_eq(e.code, DWL_EXIT_PERMANENT);
}
END_TEST

/* Connections: the driver's SQLSTATE picks the row. */
START_TEST(test_connect)
{
  has(hint_of(1, DWL_CAUSE_CONNECT, "01000", 0, "cannot connect to Driver=Nope: Can't open lib 'Nope'"),
      "odbcinst -q -d");
  has(hint_of(1, DWL_CAUSE_CONNECT, "IM002", 0, "cannot connect to DSN=dw: Data source name not found"),
      "odbcinst -q -s");
  has(hint_of(1, DWL_CAUSE_CONNECT, "28000", 1045, "cannot connect to Driver=MariaDB Unicode: Access denied"),
      "check User= ");
  has(hint_of(1, DWL_CAUSE_CONNECT, "28P01", 0, "cannot connect to x: no"), "refused the user or password");
  /* psqlodbc: a refused password and a refused TCP connection are both
   * 08001 101; only the server's text tells them apart. */
  has(hint_of(1, DWL_CAUSE_CONNECT, "08001", 101,
              "cannot connect to Driver=PostgreSQL Unicode: FATAL:  password authentication failed for user \"u\""),
      "check Uid= ");
  has(hint_of(1, DWL_CAUSE_CONNECT, "08001", 101, "cannot connect to Driver=PostgreSQL Unicode: Connection refused"),
      "server is up");
  has(hint_of(1, DWL_CAUSE_CONNECT, "HY000", 2002, "cannot connect to Driver=MariaDB Unicode: Can't connect"),
      "server is up");
  has(hint_of(1, DWL_CAUSE_CONNECT, "", 0, "cannot connect to x"), "server is up");
}
END_TEST

/* A message that holds a rule's old stem, without the cause, gets no hint:
 * the words of a message (a value, a column name, a plugin's text) choose
 * nothing.  The last rows say enough, or no rule knows them. */
static const struct {
  int code, cause;
  const char *sqlstate;
  long native;
  const char *msg;
} no_hint[] = {
  {1, DWL_CAUSE_NONE, "", 0, "row 3: 'interrupted by SIGTERM' is not an integer"},
  {1, DWL_CAUSE_NONE, "01000", 0, "source: cannot connect to x: Can't open lib 'y'"},
  {1, DWL_CAUSE_NONE, "28000", 1045, "source odbc: cannot connect to x: Access denied"},
  {1, DWL_CAUSE_NONE, "08001", 101, "cannot connect to x: password authentication failed"},
  {2, DWL_CAUSE_NONE, "", 0, "plugin 'x' not found"},
  {1, DWL_CAUSE_NONE, "", 0, "x.so is not a dwload plugin"},
  {1, DWL_CAUSE_NONE, "", 0, "an empty extract is taken for a failed source"},
  {1, DWL_CAUSE_NONE, "", 0, "deletes: absent would delete 9 keys; load.max_deletes"},
  {2, DWL_CAUSE_NONE, "", 0, "unknown option 'x'"},
  {2, DWL_CAUSE_NONE, "", 0, "invalid plugin name 'job.yaml:'"},
  {2, DWL_CAUSE_NONE, "", 0, "job.yml:3:1: x"},
  {1, DWL_CAUSE_NO_TABLE, "", 0, "table dim does not exist yet; run the job first"},
  {1, DWL_CAUSE_NONE, "", 0, "feed.csv:12: column 'lmd': 'x' is not an ISO 8601 timestamp"},
};

START_TEST(test_stem_without_cause)
{
  const char *h = hint_of(no_hint[_i].code, no_hint[_i].cause, no_hint[_i].sqlstate, no_hint[_i].native,
                          no_hint[_i].msg);
  ck_assert_msg(h == NULL, "'%s' got the hint '%s'", no_hint[_i].msg, h);
}
END_TEST

/* The first error wins, its cause with it; err_cause names the cause of
 * an error a callee recorded without one, and keeps one already given. */
START_TEST(test_first_cause_wins)
{
  err_init(&e);
  ck_assert_int_eq(e.cause, DWL_CAUSE_NONE);
  ck_assert_int_eq(err_setc(&e, 1, DWL_CAUSE_CONNECT, "first"), -1);
  err_setc(&e, 2, DWL_CAUSE_SPEC, "second");
  ck_assert_int_eq(e.code, 1);
  ck_assert_int_eq(e.cause, DWL_CAUSE_CONNECT);
  ck_assert_str_eq(e.msg, "first");
  ck_assert_int_eq(err_cause(&e, DWL_CAUSE_GUARD), -1);
  ck_assert_int_eq(e.cause, DWL_CAUSE_CONNECT);
  err_prefix(&e, "context");
  ck_assert_int_eq(e.cause, DWL_CAUSE_CONNECT);

  err_init(&e);
  err_cause(&e, DWL_CAUSE_SPEC);  /* no error: nothing to give a cause */
  ck_assert_int_eq(e.cause, DWL_CAUSE_NONE);
  err_set(&e, 2, "job.yaml:1:1: x");
  ck_assert_int_eq(e.cause, DWL_CAUSE_NONE);
  err_cause(&e, DWL_CAUSE_SPEC);
  ck_assert_int_eq(e.cause, DWL_CAUSE_SPEC);
  err_init(&e);
  ck_assert_int_eq(e.cause, DWL_CAUSE_NONE);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("hint");
  TCase *tc = tcase_create("hint");
  tcase_add_test(tc, test_by_exit_code);
  tcase_add_test(tc, test_by_cause);
  tcase_add_test(tc, test_connect);
  tcase_add_loop_test(tc, test_stem_without_cause, 0, (int)(sizeof no_hint / sizeof no_hint[0]));
  tcase_add_test(tc, test_first_cause_wins);
  tcase_add_test(tc, test_exit_by_cause);
  suite_add_tcase(s, tc);
  return s;
}
