/* Unit tests for src/rows/norm.c: the canonical text of a value of each
 * column type (text, integer, numeric, real, boolean, date, timestamp), what
 * each type refuses, the scratch buffer's reuse and cap, and numeric(p,s)
 * with a known scale both from the source (norm_value_col) and read back
 * from the warehouse (norm_stored_col).  Timestamps themselves are tested
 * in test_ts.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "norm.h"

static void norm_is(int type, const char *in, const char *want)
{
  dwl_buf b;
  const char *out = NULL, *why = NULL;
  size_t outlen = 0;
  buf_init(&b, 0);
  int rc = norm_value(type, in, strlen(in), &b, &out, &outlen, &why);
  ck_assert_msg(rc == 0, "type %d refused \"%s\": %s", type, in,
                why ? why : "(no reason)");
  ck_assert_uint_eq(outlen, strlen(want));
  ck_assert_mem_eq(out, want, outlen);
  buf_free(&b);
}

static void norm_bad(int type, const char *in)
{
  dwl_buf b;
  const char *out = NULL, *why = NULL;
  size_t outlen = 0;
  buf_init(&b, 0);
  int rc = norm_value(type, in, strlen(in), &b, &out, &outlen, &why);
  ck_assert_msg(rc == -1, "type %d accepted \"%s\"", type, in);
  ck_assert_ptr_nonnull(why);
  ck_assert_uint_gt(strlen(why), 0);
  buf_free(&b);
}

/* ---- norm_value -------------------------------------------------------- */

START_TEST(test_norm_text)
{
  static const char in[] = "a\0b  ";
  dwl_buf b;
  const char *out = NULL, *why = NULL;
  size_t outlen = 0;
  buf_init(&b, 0);
  ck_assert_int_eq(norm_value(DWL_TYPE_TEXT, in, 5, &b, &out, &outlen, &why), 0);
  ck_assert_ptr_eq(out, in);
  ck_assert_uint_eq(outlen, 5);
  ck_assert_mem_eq(out, "a\0b  ", 5);
  ck_assert_int_eq(norm_value(DWL_TYPE_TEXT, "", 0, &b, &out, &outlen, &why), 0);
  ck_assert_uint_eq(outlen, 0);
  ck_assert_int_eq(norm_value(DWL_TYPE_TEXT, NULL, 0, &b, &out, &outlen, &why), 0);
  ck_assert_ptr_nonnull(out);
  ck_assert_uint_eq(outlen, 0);
  buf_free(&b);
}
END_TEST

START_TEST(test_norm_integer)
{
  norm_is(DWL_TYPE_INTEGER, "42", "42");
  norm_is(DWL_TYPE_INTEGER, "042", "42");
  norm_is(DWL_TYPE_INTEGER, "+5", "5");
  norm_is(DWL_TYPE_INTEGER, "-0", "0");
  norm_is(DWL_TYPE_INTEGER, "+0", "0");
  norm_is(DWL_TYPE_INTEGER, "000", "0");
  norm_is(DWL_TYPE_INTEGER, "-007", "-7");
  norm_is(DWL_TYPE_INTEGER, "9223372036854775807", "9223372036854775807");
  norm_is(DWL_TYPE_INTEGER, "-9223372036854775808", "-9223372036854775808");
  norm_is(DWL_TYPE_INTEGER, "0009223372036854775807", "9223372036854775807");
}
END_TEST

START_TEST(test_norm_integer_rejects)
{
  static const char *const bad[] = {
    "9223372036854775808", "-9223372036854775809", "10000000000000000000",
    "99999999999999999999999", "", "+", "-", " 1", "1 ", "1.0", "1e3",
    "0x10", "--1", "+-1", "1,000", "12a",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    norm_bad(DWL_TYPE_INTEGER, bad[i]);
  /* An embedded NUL is not a digit. */
  dwl_buf b;
  const char *out, *why;
  size_t outlen;
  buf_init(&b, 0);
  ck_assert_int_eq(norm_value(DWL_TYPE_INTEGER, "1\0" "2", 3, &b, &out, &outlen, &why), -1);
  /* Only len bytes count. */
  ck_assert_int_eq(norm_value(DWL_TYPE_INTEGER, "123456", 3, &b, &out, &outlen, &why), 0);
  ck_assert_uint_eq(outlen, 3);
  ck_assert_mem_eq(out, "123", 3);
  buf_free(&b);
}
END_TEST

START_TEST(test_norm_numeric)
{
  norm_is(DWL_TYPE_NUMERIC, "0012.500", "12.5");
  norm_is(DWL_TYPE_NUMERIC, "-0.00", "0");
  norm_is(DWL_TYPE_NUMERIC, "-0", "0");
  norm_is(DWL_TYPE_NUMERIC, ".5", "0.5");
  norm_is(DWL_TYPE_NUMERIC, "-.5", "-0.5");
  norm_is(DWL_TYPE_NUMERIC, "+1.10", "1.1");
  norm_is(DWL_TYPE_NUMERIC, "5.", "5");
  norm_is(DWL_TYPE_NUMERIC, "12.000", "12");
  norm_is(DWL_TYPE_NUMERIC, "100", "100");
  norm_is(DWL_TYPE_NUMERIC, "0.001", "0.001");
  norm_is(DWL_TYPE_NUMERIC, "-000.0100", "-0.01");
  /* No 64-bit limit: exact decimals can be wider than any integer. */
  norm_is(DWL_TYPE_NUMERIC, "123456789012345678901234567890.123456789",
          "123456789012345678901234567890.123456789");
}
END_TEST

START_TEST(test_norm_numeric_rejects)
{
  static const char *const bad[] = {
    "1e3", "1E3", "1.5e-2", "", ".", "-", "+.", "1.2.3", " 1", "1 ", "1,5",
    "inf", "nan", "0x1", "--1", "1-",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    norm_bad(DWL_TYPE_NUMERIC, bad[i]);
}
END_TEST

START_TEST(test_norm_real)
{
  norm_is(DWL_TYPE_REAL, "0.1", "0.1");
  norm_is(DWL_TYPE_REAL, "1", "1");
  norm_is(DWL_TYPE_REAL, "1.50", "1.5");
  norm_is(DWL_TYPE_REAL, "-2.5", "-2.5");
  norm_is(DWL_TYPE_REAL, "1e3", "1000");
  norm_is(DWL_TYPE_REAL, "+.5", "0.5");
  norm_is(DWL_TYPE_REAL, "-0", "0");
  norm_is(DWL_TYPE_REAL, "-0.0e5", "0");
  norm_is(DWL_TYPE_REAL, "1e100", "1e+100");
  /* Needs all 17 digits to read back to the same double. */
  norm_is(DWL_TYPE_REAL, "0.30000000000000004", "0.30000000000000004");
  norm_is(DWL_TYPE_REAL, "3.141592653589793", "3.1415926535897931");
  /* Source and target spellings of one double meet. */
  norm_is(DWL_TYPE_REAL, "0.1000000000000000055511151231257827", "0.1");
}
END_TEST

START_TEST(test_norm_real_rejects)
{
  static const char *const bad[] = {
    "", " 1", "1 ", "1x", "inf", "-inf", "INF", "nan", "NaN", "infinity",
    "0x1p3", "1e999", "-1e999", "e5", ".", "1e", "--1", "1,5",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    norm_bad(DWL_TYPE_REAL, bad[i]);
  dwl_buf b;
  const char *out, *why;
  size_t outlen;
  buf_init(&b, 0);
  ck_assert_int_eq(norm_value(DWL_TYPE_REAL, "1\0" "5", 3, &b, &out, &outlen, &why), -1);
  ck_assert_int_eq(norm_value(DWL_TYPE_REAL, "\0", 1, &b, &out, &outlen, &why), -1);
  ck_assert_int_eq(norm_value(DWL_TYPE_REAL, "2.5xyz", 3, &b, &out, &outlen, &why), 0);
  ck_assert_uint_eq(outlen, 3);
  ck_assert_mem_eq(out, "2.5", 3);
  buf_free(&b);
}
END_TEST

START_TEST(test_norm_boolean)
{
  static const char *const yes[] = {"true", "TRUE", "True", "t", "T", "yes",
                                    "YES", "y", "Y", "1"};
  static const char *const no[] = {"false", "FALSE", "f", "F", "no", "No",
                                   "n", "N", "0"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
    norm_is(DWL_TYPE_BOOLEAN, yes[i], "1");
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
    norm_is(DWL_TYPE_BOOLEAN, no[i], "0");
  static const char *const bad[] = {"", "2", "-1", "01", "tru", "truee",
                                    " true", "true ", "on", "off", "yess"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    norm_bad(DWL_TYPE_BOOLEAN, bad[i]);
}
END_TEST

START_TEST(test_norm_date)
{
  norm_is(DWL_TYPE_DATE, "2020-01-01", "2020-01-01");
  norm_is(DWL_TYPE_DATE, "2020-01-01 00:00:00", "2020-01-01");
  norm_is(DWL_TYPE_DATE, "2020-01-01T00:00", "2020-01-01");
  norm_is(DWL_TYPE_DATE, "2020-01-01 00:00:00.000", "2020-01-01");
  norm_is(DWL_TYPE_DATE, "1969-12-31", "1969-12-31");
  norm_is(DWL_TYPE_DATE, "1969-12-31 00:00:00", "1969-12-31");
  norm_is(DWL_TYPE_DATE, "2020-01-01T05:30:00+05:30", "2020-01-01");
  norm_bad(DWL_TYPE_DATE, "2020-01-01 10:00");
  norm_bad(DWL_TYPE_DATE, "2020-01-01 00:00:00.000001");
  norm_bad(DWL_TYPE_DATE, "1969-12-31 23:59:59");
  norm_bad(DWL_TYPE_DATE, "2020-01-01T00:00:00+01:00");
  norm_bad(DWL_TYPE_DATE, "2023-02-29");
  norm_bad(DWL_TYPE_DATE, "01/01/2020");
  norm_bad(DWL_TYPE_DATE, "");
}
END_TEST

START_TEST(test_norm_timestamp)
{
  norm_is(DWL_TYPE_TIMESTAMP, "2020-01-01", "2020-01-01 00:00:00");
  norm_is(DWL_TYPE_TIMESTAMP, "2020-01-01 00:00:00", "2020-01-01 00:00:00");
  norm_is(DWL_TYPE_TIMESTAMP, "2020-01-01T10:20", "2020-01-01 10:20:00");
  norm_is(DWL_TYPE_TIMESTAMP, "2020-01-01 10:20:30.5", "2020-01-01 10:20:30.500000");
  norm_is(DWL_TYPE_TIMESTAMP, "2020-01-01 10:20:30.000", "2020-01-01 10:20:30");
  norm_is(DWL_TYPE_TIMESTAMP, "2020-01-01T05:30:00+05:30", "2020-01-01 00:00:00");
  norm_is(DWL_TYPE_TIMESTAMP, "1969-12-31 23:59:59.999999", "1969-12-31 23:59:59.999999");
  norm_bad(DWL_TYPE_TIMESTAMP, "2020-01-01 24:00");
  norm_bad(DWL_TYPE_TIMESTAMP, " 2020-01-01");
  norm_bad(DWL_TYPE_TIMESTAMP, "yesterday");
  norm_bad(DWL_TYPE_TIMESTAMP, "");
}
END_TEST

START_TEST(test_norm_scratch_reuse)
{
  dwl_buf b;
  const char *out, *why = NULL;
  size_t outlen;
  buf_init(&b, 0);
  ck_assert_int_eq(norm_value(DWL_TYPE_NUMERIC, "0012.500", 8, &b, &out, &outlen, &why), 0);
  ck_assert_ptr_eq(out, b.data);
  ck_assert_int_eq(norm_value(DWL_TYPE_INTEGER, "7", 1, &b, &out, &outlen, &why), 0);
  /* The scratch was reset: no leftovers from the previous value. */
  ck_assert_uint_eq(outlen, 1);
  ck_assert_uint_eq(b.len, 1);
  ck_assert_str_eq(b.data, "7");
  ck_assert_int_eq(norm_value(99, "7", 1, &b, &out, &outlen, &why), -1);
  ck_assert_ptr_nonnull(why);
  ck_assert_int_eq(norm_value(-1, "7", 1, &b, &out, &outlen, &why), -1);
  buf_free(&b);
}
END_TEST

START_TEST(test_norm_scratch_cap)
{
  dwl_buf b;
  const char *out, *why = NULL;
  size_t outlen;
  buf_init(&b, 4);  /* too small for the canonical text */
  ck_assert_int_eq(norm_value(DWL_TYPE_TIMESTAMP, "2020-01-01", 10, &b, &out,
                              &outlen, &why), -1);
  ck_assert_ptr_nonnull(why);
  ck_assert_int_eq(norm_value(DWL_TYPE_BOOLEAN, "yes", 3, &b, &out, &outlen, &why), 0);
  ck_assert_mem_eq(out, "1", 1);
  buf_free(&b);
}
END_TEST

/* numeric(p,s) with a known scale: padded to the scale, refused beyond it */
typedef int (*norm_col_fn)(const dwl_column *, const char *, size_t, dwl_buf *, const char **, size_t *,
                           const char **);

/* fn (norm_value_col, norm_stored_col) turns in into want for numeric(p,sc). */
static void numeric_ok(norm_col_fn fn, int p, int sc, const char *in, const char *want)
{
  dwl_column c = {.name = "n", .type = DWL_TYPE_NUMERIC, .precision = p, .scale = sc};
  dwl_buf b;
  buf_init(&b, 0);
  const char *out, *why = NULL;
  size_t n;
  ck_assert_msg(fn(&c, in, strlen(in), &b, &out, &n, &why) == 0, "%s refused: %s", in, why);
  ck_assert_uint_eq(n, strlen(want));
  ck_assert_msg(memcmp(out, want, n) == 0, "%s -> %.*s, want %s", in, (int)n, out, want);
  buf_free(&b);
}

static void col_ok(int p, int sc, const char *in, const char *want)
{
  numeric_ok(norm_value_col, p, sc, in, want);
}

/* fn refuses in for numeric(p,sc), saying why_part. */
static void numeric_bad(norm_col_fn fn, int p, int sc, const char *in, const char *why_part)
{
  dwl_column c = {.name = "n", .type = DWL_TYPE_NUMERIC, .precision = p, .scale = sc};
  dwl_buf b;
  buf_init(&b, 0);
  const char *out, *why = NULL;
  size_t n;
  ck_assert_msg(fn(&c, in, strlen(in), &b, &out, &n, &why) == -1, "%s accepted", in);
  ck_assert_ptr_nonnull(strstr(why, why_part));
  buf_free(&b);
}

static void col_bad(int p, int sc, const char *in, const char *why_part)
{
  numeric_bad(norm_value_col, p, sc, in, why_part);
}

START_TEST(test_numeric_scale_padded)
{
  col_ok(7, 2, "2.8", "2.80");
  col_ok(7, 2, "12", "12.00");
  col_ok(7, 2, "0", "0.00");
  col_ok(7, 2, "-0.5", "-0.50");
  col_ok(7, 2, "-00012.300", "-12.30");
  col_ok(7, 2, "12345.6", "12345.60");
  col_ok(7, 2, "1.25", "1.25");
  col_ok(5, 0, "123", "123");
}
END_TEST

START_TEST(test_numeric_scale_refused)
{
  col_bad(7, 2, "1.234", "more decimals");
  col_bad(7, 2, "123456", "precision");
  col_bad(5, 0, "1.5", "more decimals");
  col_bad(7, 2, "abc", "not a decimal");
}
END_TEST

/* A value read back from the warehouse: norm_stored_col. */
static void stored_ok(int p, int sc, const char *in, const char *want)
{
  numeric_ok(norm_stored_col, p, sc, in, want);
}

START_TEST(test_numeric_stored_spellings)
{
  /* SQLite's text of a REAL in a NUMERIC column, exactly. */
  stored_ok(12, 8, "1.0e-08", "0.00000001");
  stored_ok(38, 18, "-1.0e-18", "-0.000000000000000001");
  stored_ok(18, 2, "1.23456789012346e+15", "1234567890123460.00");
  stored_ok(12, 4, "1.5E+2", "150.0000");
  stored_ok(12, 4, "0.00012e3", "0.1200");
  stored_ok(0, 0, "-2.5e-3", "-0.0025");
  stored_ok(0, 0, "0.0e+00", "0");
  stored_ok(0, 0, "7e0", "7");
  /* PostgreSQL's and MariaDB's padded prints, SQLite's REAL 12.5. */
  stored_ok(10, 2, "12.50", "12.50");
  stored_ok(10, 2, "12.5", "12.50");
  stored_ok(0, 0, "12.500000000000000000000000000000", "12.5");
  stored_ok(10, 2, "-0.00", "0.00");
  /* Not numbers in exponent form: refused as before. */
  static const char *const bad[] = {"1e", "e5", "1e+", "1.2.3e4", "1e5x", "--1e2", "1e999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    numeric_bad(norm_stored_col, 0, 0, bad[i], "not a decimal number");
}
END_TEST

START_TEST(test_numeric_digits_and_fit)
{
  ck_assert_uint_eq(norm_sig_digits("1234567890123456.78", 19), 18);
  ck_assert_uint_eq(norm_sig_digits("-0.000000000000000001", 21), 1);
  ck_assert_uint_eq(norm_sig_digits("1234567890123460.00", 19), 15);
  ck_assert_uint_eq(norm_sig_digits("100", 3), 1);
  ck_assert_uint_eq(norm_sig_digits("0.00", 4), 0);
  const char *why = NULL;
  ck_assert_int_eq(norm_numeric_fits("0.123456789012345678901234567890", 32, 65, 30, &why), 0);
  ck_assert_int_eq(norm_numeric_fits("0.1234567890123456789012345678901", 33, 65, 30, &why), -1);
  ck_assert_ptr_nonnull(strstr(why, "decimals"));
  ck_assert_int_eq(norm_numeric_fits("-123456", 7, 7, 2, &why), -1);
  ck_assert_ptr_nonnull(strstr(why, "precision"));
  ck_assert_int_eq(norm_numeric_fits("-12345", 6, 7, 2, &why), 0);
}
END_TEST

START_TEST(test_numeric_unknown_precision_unchanged)
{
  dwl_column c = {.name = "n", .type = DWL_TYPE_NUMERIC};
  dwl_buf b;
  buf_init(&b, 0);
  const char *out, *why;
  size_t n;
  ck_assert_int_eq(norm_value_col(&c, "2.80", 4, &b, &out, &n, &why), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert(memcmp(out, "2.8", 3) == 0);
  buf_free(&b);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("norm");

  TCase *tc = tcase_create("norm_value");
  tcase_add_test(tc, test_norm_text);
  tcase_add_test(tc, test_norm_integer);
  tcase_add_test(tc, test_norm_integer_rejects);
  tcase_add_test(tc, test_norm_numeric);
  tcase_add_test(tc, test_norm_numeric_rejects);
  tcase_add_test(tc, test_norm_real);
  tcase_add_test(tc, test_norm_real_rejects);
  tcase_add_test(tc, test_norm_boolean);
  tcase_add_test(tc, test_norm_date);
  tcase_add_test(tc, test_norm_timestamp);
  tcase_add_test(tc, test_norm_scratch_reuse);
  tcase_add_test(tc, test_norm_scratch_cap);
  suite_add_tcase(s, tc);

  tc = tcase_create("norm_value_col");
  tcase_add_test(tc, test_numeric_scale_padded);
  tcase_add_test(tc, test_numeric_scale_refused);
  tcase_add_test(tc, test_numeric_unknown_precision_unchanged);
  tcase_add_test(tc, test_numeric_stored_spellings);
  tcase_add_test(tc, test_numeric_digits_and_fit);
  suite_add_tcase(s, tc);

  return s;
}
