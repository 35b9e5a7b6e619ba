/* SQL types reported by drivers as dwload column types, the declared
 * type names that refine them, and the text width of a bound value. */
#include <check.h>
#include <string.h>

#include "sqltype.h"

static dwl_column col_of(SQLSMALLINT t, SQLULEN size, SQLSMALLINT digits, SQLSMALLINT nullable)
{
  dwl_column c;
  memset(&c, 0x55, sizeof c);
  sqltype_column(t, size, digits, nullable, &c);
  return c;
}

START_TEST(numeric_keeps_precision_and_scale)
{
  dwl_column c = col_of(SQL_NUMERIC, 12, 2, SQL_NULLABLE);
  ck_assert_int_eq(c.type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(c.precision, 12);
  ck_assert_int_eq(c.scale, 2);
  ck_assert_int_eq(c.nullable, 1);
  c = col_of(SQL_DECIMAL, 65, 30, SQL_NO_NULLS);  /* MariaDB's maximum: no declared precision */
  ck_assert_int_eq(c.type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(c.precision, 0);
  ck_assert_int_eq(c.nullable, 0);
}
END_TEST

/* psqlODBC's numeric(28,6) for a numeric without a precision: unknown,
 * so unconstrained and of unbounded text width; other sizes and other
 * types are left alone. */
START_TEST(pg_unknown_numeric)
{
  SQLULEN size = 28;
  SQLSMALLINT digits = 6;
  sqltype_pg_numeric(SQL_NUMERIC, &size, &digits);
  dwl_column c = col_of(SQL_NUMERIC, size, digits, SQL_NULLABLE);
  ck_assert_int_eq(c.type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(c.precision, 0);
  ck_assert_int_eq(c.scale, 0);
  ck_assert_uint_eq(sqltype_text_bytes(SQL_NUMERIC, size, digits), 0);
  size = 28, digits = 5;
  sqltype_pg_numeric(SQL_NUMERIC, &size, &digits);
  ck_assert_uint_eq(size, 28);
  ck_assert_int_eq(digits, 5);
  size = 12, digits = 6;
  sqltype_pg_numeric(SQL_DECIMAL, &size, &digits);
  ck_assert_uint_eq(size, 12);
  size = 28, digits = 6;
  sqltype_pg_numeric(SQL_TYPE_TIMESTAMP, &size, &digits);
  ck_assert_uint_eq(size, 28);
  ck_assert_int_eq(digits, 6);
}
END_TEST

START_TEST(kinds)
{
  ck_assert_int_eq(col_of(SQL_BIGINT, 19, 0, SQL_NULLABLE).type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(col_of(SQL_TINYINT, 3, 0, SQL_NULLABLE).type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(col_of(SQL_DOUBLE, 15, 0, SQL_NULLABLE).type, DWL_TYPE_REAL);
  ck_assert_int_eq(col_of(SQL_BIT, 1, 0, SQL_NULLABLE).type, DWL_TYPE_BOOLEAN);
  ck_assert_int_eq(col_of(SQL_TYPE_DATE, 10, 0, SQL_NULLABLE).type, DWL_TYPE_DATE);
  ck_assert_int_eq(col_of(SQL_TYPE_TIMESTAMP, 26, 6, SQL_NULLABLE).type, DWL_TYPE_TIMESTAMP);
  ck_assert_int_eq(col_of(SQL_TYPE_TIME, 8, 0, SQL_NULLABLE).type, DWL_TYPE_TEXT);
  ck_assert_int_eq(col_of(SQL_NUMERIC, 5, 0, SQL_NULLABLE_UNKNOWN).nullable, -1);
}
END_TEST

START_TEST(text_lengths)
{
  ck_assert_int_eq(col_of(SQL_VARCHAR, 40, 0, SQL_NULLABLE).precision, 40);
  ck_assert_int_eq(col_of(SQL_WVARCHAR, 40, 0, SQL_NULLABLE).precision, 40);
  /* drivers' buffer sizes for undeclared lengths are not the column's */
  ck_assert_int_eq(col_of(SQL_VARCHAR, 255, 0, SQL_NULLABLE).precision, 0);
  ck_assert_int_eq(col_of(SQL_LONGVARCHAR, 8190, 0, SQL_NULLABLE).precision, 0);
  ck_assert_int_eq(col_of(SQL_LONGVARCHAR, 8190, 0, SQL_NULLABLE).type, DWL_TYPE_TEXT);
}
END_TEST

START_TEST(refine_from_type_names)
{
  dwl_column c = col_of(SQL_DOUBLE, 12, 0, SQL_NULLABLE);
  sqltype_refine("NUMERIC(12,2)", &c);
  ck_assert_int_eq(c.type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(c.precision, 12);
  ck_assert_int_eq(c.scale, 2);
  c = col_of(SQL_DOUBLE, 12, 0, SQL_NULLABLE);
  sqltype_refine("decimal ( 7 , 3 )", &c);
  ck_assert_int_eq(c.precision, 7);
  ck_assert_int_eq(c.scale, 3);
  c = col_of(SQL_DOUBLE, 12, 0, SQL_NULLABLE);
  sqltype_refine("NUMERIC", &c);  /* no precision: left as the driver said */
  ck_assert_int_eq(c.type, DWL_TYPE_REAL);
  sqltype_refine("NUMERIC(3,5)", &c);  /* scale above precision: not a type */
  ck_assert_int_eq(c.type, DWL_TYPE_REAL);
  c = col_of(SQL_VARCHAR, 5, 0, SQL_NULLABLE);
  sqltype_refine("bool", &c);
  ck_assert_int_eq(c.type, DWL_TYPE_BOOLEAN);
  ck_assert_int_eq(c.precision, 0);
  sqltype_refine(NULL, &c);
  ck_assert_int_eq(c.type, DWL_TYPE_BOOLEAN);
  /* How dwload declares a wide decimal on SQLite (TEXT affinity). */
  c = col_of(SQL_VARCHAR, 0, 0, SQL_NULLABLE);
  sqltype_refine("DECIMAL_TEXT(38,18)", &c);
  ck_assert_int_eq(c.type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(c.precision, 38);
  ck_assert_int_eq(c.scale, 18);
}
END_TEST

START_TEST(text_widths)
{
  ck_assert_uint_eq(sqltype_text_bytes(SQL_BIGINT, 19, 0), 24);
  ck_assert_uint_eq(sqltype_text_bytes(SQL_NUMERIC, 12, 2), 16);
  ck_assert_uint_eq(sqltype_text_bytes(SQL_VARCHAR, 40, 0), 161);
  ck_assert_uint_eq(sqltype_text_bytes(SQL_VARCHAR, 4000, 0), 0);
  ck_assert_uint_eq(sqltype_text_bytes(SQL_LONGVARCHAR, 8190, 0), 0);
  ck_assert_uint_eq(sqltype_text_bytes(SQL_NUMERIC, 0, 0), 0);
}
END_TEST

#include "check_main.h"

static Suite *make_suite(void)
{
  Suite *s = suite_create("sqltype");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, numeric_keeps_precision_and_scale);
  tcase_add_test(tc, pg_unknown_numeric);
  tcase_add_test(tc, kinds);
  tcase_add_test(tc, text_lengths);
  tcase_add_test(tc, refine_from_type_names);
  tcase_add_test(tc, text_widths);
  suite_add_tcase(s, tc);
  return s;
}
