/* src/warehouse/redact.c's reading of connection strings: whole attribute names
 * (odbc_conn_has_attr), braced values respected, and the dialects'
 * attributes added to a user's connection string on that basis; the
 * redaction that shares the parser still masks secrets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dialect.h"
#include "err.h"
#include "redact.h"

START_TEST(whole_names)
{
  ck_assert_int_eq(odbc_conn_has_attr("Driver=x;UseDeclareFetch=1", "UseDeclareFetch"), 1);
  ck_assert_int_eq(odbc_conn_has_attr("Driver=x;UseDeclareFetch=1", "Fetch"), 0);
  ck_assert_int_eq(odbc_conn_has_attr("Driver=x;ConnectTimeout=5", "Timeout"), 0);
  ck_assert_int_eq(odbc_conn_has_attr("Driver=x; timeout = 5 ;", "Timeout"), 1);
  ck_assert_int_eq(odbc_conn_has_attr("FETCH=10", "fetch"), 1);
  ck_assert_int_eq(odbc_conn_has_attr("Driver=x;Fetch", "fetch"), 0);  /* no '=': no attribute */
  ck_assert_int_eq(odbc_conn_has_attr("", "fetch"), 0);
  ck_assert_int_eq(odbc_conn_has_attr(NULL, "fetch"), 0);
}
END_TEST

/* Text inside a braced value, ';' and '}}' included, is no attribute. */
START_TEST(braced_values)
{
  const char *cs = "Driver=x;Pwd={a;Fetch=1;}}b};pqopt={x=1};StepAPI=0";
  ck_assert_int_eq(odbc_conn_has_attr(cs, "Fetch"), 0);
  ck_assert_int_eq(odbc_conn_has_attr(cs, "b}"), 0);
  ck_assert_int_eq(odbc_conn_has_attr(cs, "pqopt"), 1);
  ck_assert_int_eq(odbc_conn_has_attr(cs, "StepAPI"), 1);
  ck_assert_int_eq(odbc_conn_has_attr(cs, "x"), 0);
  char *r = odbc_redact(cs);
  ck_assert_str_eq(r, "Driver=x;Pwd=***;pqopt={x=1};StepAPI=0");
  free(r);
}
END_TEST

/* Where dwload's attributes go: before the first braced value, which
 * SQLite's driver reads no attribute past. */
START_TEST(first_braced)
{
  ck_assert_int_eq(odbc_conn_first_braced("Driver=x;Pwd={a;b};Uid=u"), 9);
  ck_assert_int_eq(odbc_conn_first_braced("Pwd= {a};x=1"), 0);
  ck_assert_int_eq(odbc_conn_first_braced("Driver=x;Pwd=a{b}"), strlen("Driver=x;Pwd=a{b}"));
  ck_assert_int_eq(odbc_conn_first_braced("Driver=x"), 8);
  ck_assert_int_eq(odbc_conn_first_braced(""), 0);
}
END_TEST

/* What dwload adds to a target's connection string, per dialect. */
static char *extra(const char *dbms, const char *cs)
{
  dwl_error err;
  err_init(&err);
  const dialect *d = dialect_for_dbms(dbms, &err);
  ck_assert_ptr_nonnull(d);
  dwl_buf b;
  buf_init(&b, 0);
  if (d->conn_extra)
    d->conn_extra(cs, &b);
  char *s = buf_steal(&b);
  ck_assert_ptr_nonnull(s);
  return s;
}

START_TEST(dialect_attributes)
{
  static const struct {
    const char *dbms, *cs, *added, *not_added;
  } cases[] = {
    {"PostgreSQL", "Driver=PostgreSQL Unicode;UseDeclareFetch=1", "Fetch=10000", "UseDeclareFetch"},
    {"PostgreSQL", "Driver=PostgreSQL Unicode;Fetch=50", "UseDeclareFetch=1", "Fetch=10000"},
    {"SQLite", "Driver=SQLite3;Database=x.db;ConnectTimeout=5", "Timeout=1000", "ConnectTimeout"},
    {"SQLite", "Driver=SQLite3;Database=x.db;Timeout=5", "StepAPI=1", "Timeout="},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *e = extra(cases[i].dbms, cases[i].cs);
    ck_assert_msg(strstr(e, cases[i].added) != NULL, "%s: %s not added (%s)", cases[i].cs, cases[i].added, e);
    ck_assert_msg(strstr(e, cases[i].not_added) == NULL, "%s: %s added (%s)", cases[i].cs, cases[i].not_added, e);
    free(e);
  }
}
END_TEST

#include "check_main.h"

static Suite *make_suite(void)
{
  Suite *s = suite_create("redact");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, whole_names);
  tcase_add_test(tc, braced_values);
  tcase_add_test(tc, first_braced);
  tcase_add_test(tc, dialect_attributes);
  suite_add_tcase(s, tc);
  return s;
}
