/* Unit tests for src/rows/ts.c: timestamp parsing (ISO forms, zones,
 * ranges), formatting, parsing by a pattern (Spark-style and strptime),
 * arithmetic and durations.  Expected microsecond values were computed
 * independently (Python's datetime in UTC).  norm.c's canonical values are
 * tested in test_norm.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "ts.h"

#define S(x) ((int64_t)(x) * DWL_US_PER_SEC)

/* Parses a NUL-terminated literal; fails the test if ts_parse refuses it. */
static dwl_ts parse_ok(const char *s)
{
  dwl_ts t = {.us = 12345, .date_only = 7};
  ck_assert_msg(ts_parse(s, strlen(s), &t) == 0, "ts_parse refused \"%s\"", s);
  return t;
}

static void parse_bad(const char *s)
{
  dwl_ts t;
  ck_assert_msg(ts_parse(s, strlen(s), &t) == -1, "ts_parse accepted \"%s\"", s);
}

static dwl_ts fmt_ok(const char *s, const char *fmt)
{
  dwl_ts t = {.us = 12345, .date_only = 7};
  ck_assert_msg(ts_parse_format(s, strlen(s), fmt, &t) == 0,
                "ts_parse_format refused \"%s\" with \"%s\"", s, fmt);
  return t;
}

static void fmt_bad(const char *s, const char *fmt)
{
  dwl_ts t;
  ck_assert_msg(ts_parse_format(s, strlen(s), fmt, &t) == -1,
                "ts_parse_format accepted \"%s\" with \"%s\"", s, fmt);
}

static void format_is(int64_t us, int date_only, const char *want)
{
  char buf[32];
  dwl_ts t = {.us = us, .date_only = date_only};
  size_t n = ts_format(&t, buf);
  ck_assert_str_eq(buf, want);
  ck_assert_uint_eq(n, strlen(want));
}

/* ---- ts_parse ---------------------------------------------------------- */

START_TEST(test_parse_epoch)
{
  dwl_ts t = parse_ok("1970-01-01");
  ck_assert_int_eq(t.us, 0);
  ck_assert_int_eq(t.date_only, 1);
  t = parse_ok("1970-01-01T00:00:00Z");
  ck_assert_int_eq(t.us, 0);
  ck_assert_int_eq(t.date_only, 0);
  ck_assert_int_eq(parse_ok("2000-03-01T00:00:00Z").us, S(951868800));
  ck_assert_int_eq(parse_ok("2000-03-01").us, S(951868800));
  ck_assert_int_eq(parse_ok("0001-01-01").us, S(-62135596800));
  ck_assert_int_eq(parse_ok("9999-12-31T23:59:59").us, S(253402300799));
}
END_TEST

START_TEST(test_parse_time_forms)
{
  dwl_ts t = parse_ok("2020-06-15 12:34");
  ck_assert_int_eq(t.us, S(1592224440));
  ck_assert_int_eq(t.date_only, 0);
  ck_assert_int_eq(parse_ok("2020-06-15T12:34").us, S(1592224440));
  ck_assert_int_eq(parse_ok("2020-06-15 12:34:00").us, S(1592224440));
  ck_assert_int_eq(parse_ok("2021-03-04T05:06:07").us, S(1614834367));
  /* Midnight written out is still a timestamp, not a date. */
  ck_assert_int_eq(parse_ok("2020-01-01 00:00").date_only, 0);
}
END_TEST

START_TEST(test_parse_fraction)
{
  int64_t base = S(1577836800);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00.1").us, base + 100000);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00.000001").us, base + 1);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00.123456").us, base + 123456);
  /* Digits past microseconds are truncated, never rounded up. */
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00.1234567").us, base + 123456);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00.999999999").us, base + 999999);
  ck_assert_int_eq(parse_ok("2020-01-01T00:00:00.5Z").us, base + 500000);
  parse_bad("2020-01-01 00:00:00.");
  parse_bad("2020-01-01 00:00:00.1234567890");
  parse_bad("2020-01-01 00:00.5");   /* fraction needs seconds */
  parse_bad("2020-01-01 00:00:00,5");
}
END_TEST

START_TEST(test_parse_zone_offsets)
{
  int64_t base = S(1577836800);  /* 2020-01-01 00:00:00 UTC */
  ck_assert_int_eq(parse_ok("2020-01-01T05:30:00+05:30").us, base);
  ck_assert_int_eq(parse_ok("2020-01-01T05:30:00+0530").us, base);
  ck_assert_int_eq(parse_ok("2020-01-01T05:00:00+05").us, base);
  ck_assert_int_eq(parse_ok("2019-12-31T16:00:00-08:00").us, base);
  ck_assert_int_eq(parse_ok("2019-12-31T16:00-0800").us, base);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00Z").us, base);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00+00:00").us, base);
  ck_assert_int_eq(parse_ok("2020-01-01 00:00:00.25-00:00").us, base + 250000);
  ck_assert_int_eq(parse_ok("2020-01-01T05:30:00+05:30").date_only, 0);
  parse_bad("2020-01-01T00:00:00+5");
  parse_bad("2020-01-01T00:00:00+053");
  parse_bad("2020-01-01T00:00:00+05:");
  parse_bad("2020-01-01T00:00:00+05:3");
  parse_bad("2020-01-01T00:00:00+24:00");
  parse_bad("2020-01-01T00:00:00+05:60");
  parse_bad("2020-01-01T00:00:00z");
  parse_bad("2020-01-01T00:00:00 Z");
  parse_bad("2020-01-01T00:00:00ZZ");
  parse_bad("2020-01-01T00:00:00+05:30x");
}
END_TEST

START_TEST(test_parse_zone_after_date)
{
  dwl_ts t = parse_ok("2020-01-01Z");
  ck_assert_int_eq(t.us, S(1577836800));
  ck_assert_int_eq(t.date_only, 0);
  t = parse_ok("2020-01-01+01:00");
  ck_assert_int_eq(t.us, S(1577836800 - 3600));
  ck_assert_int_eq(t.date_only, 0);
}
END_TEST

START_TEST(test_parse_leap_years)
{
  ck_assert_int_eq(parse_ok("2000-02-29").us, S(951782400));
  ck_assert_int_eq(parse_ok("2024-02-29 23:59:59").us, S(1709251199));
  parse_ok("1600-02-29");
  parse_ok("2400-02-29");
  parse_bad("1900-02-29");
  parse_bad("2100-02-29");
  parse_bad("2023-02-29");
  parse_bad("2000-02-30");
  parse_ok("2023-02-28");
}
END_TEST

START_TEST(test_parse_month_lengths)
{
  static const char *const last[] = {
    "2021-01-31", "2021-03-31", "2021-04-30", "2021-05-31", "2021-06-30",
    "2021-07-31", "2021-08-31", "2021-09-30", "2021-10-31", "2021-11-30",
    "2021-12-31",
  };
  static const char *const past[] = {
    "2021-01-32", "2021-03-32", "2021-04-31", "2021-05-32", "2021-06-31",
    "2021-07-32", "2021-08-32", "2021-09-31", "2021-10-32", "2021-11-31",
    "2021-12-32",
  };
  for (size_t i = 0; i < sizeof last / sizeof last[0]; i++) {
    parse_ok(last[i]);
    parse_bad(past[i]);
  }
  /* Consecutive days really are one day apart across a month end. */
  ck_assert_int_eq(parse_ok("2021-05-01").us - parse_ok("2021-04-30").us,
                   DWL_US_PER_DAY);
}
END_TEST

START_TEST(test_parse_ranges)
{
  parse_bad("0000-01-01");
  parse_ok("0001-01-01");
  parse_ok("9999-12-31");
  parse_bad("2020-00-01");
  parse_bad("2020-13-01");
  parse_bad("2020-01-00");
  parse_ok("2020-01-01 23:59:59");
  parse_bad("2020-01-01 24:00");
  parse_bad("2020-01-01 24:00:00");
  parse_bad("2020-01-01 23:60");
  parse_bad("2020-01-01 23:59:60");
  parse_bad("2020-01-01 23:59:99");
}
END_TEST

START_TEST(test_parse_rejects_shape)
{
  static const char *const bad[] = {
    "", " ", " 2020-01-01", "2020-01-01 ", "2020-1-01", "2020-01-1",
    "20-01-01", "20200101", "2020/01/01", "2020-01-01x", "2020-01-01T",
    "2020-01-01 1:00", "2020-01-01 10", "2020-01-01 10:0", "2020-01-01 10:00:",
    "2020-01-01 10:00:0", "2020-01-01  10:00", "2020-01-01t10:00",
    "+2020-01-01", "-2020-01-01", "12020-01-01", "2020-01-01\t10:00",
    "2020-01-01 10:00:00.5 ", "2020-0a-01", "abcd-ef-gh",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    parse_bad(bad[i]);
}
END_TEST

START_TEST(test_parse_uses_len)
{
  dwl_ts t;
  /* Only the first len bytes count: the rest of the buffer is ignored. */
  ck_assert_int_eq(ts_parse("2020-01-01 10:00:00", 10, &t), 0);
  ck_assert_int_eq(t.us, S(1577836800));
  ck_assert_int_eq(t.date_only, 1);
  ck_assert_int_eq(ts_parse("2020-01-01", 9, &t), -1);
  ck_assert_int_eq(ts_parse("2020-01-01\0junk", 15, &t), -1);
  ck_assert_int_eq(ts_parse("2020-01-01", 0, &t), -1);
  char exact[10];
  memcpy(exact, "2020-01-01", 10);   /* no terminator at all */
  ck_assert_int_eq(ts_parse(exact, sizeof exact, &t), 0);
  ck_assert_int_eq(t.us, S(1577836800));
}
END_TEST

/* Found by fuzzing: a field width or flag before a time conversion
 * (glibc's strptime takes %02R, %_H) hid the time of day, so the value
 * was taken for a date and its canonical text dropped 04:05. */
START_TEST(test_format_width_keeps_time)
{
  dwl_ts t = fmt_ok("01.02.2003 04:05", "%d.%m.%Y %202R");
  ck_assert_int_eq(t.date_only, 0);
  ck_assert_int_eq(t.us, S(1044072300));
  t = fmt_ok("2003-02-01 4:5", "%Y-%m-%d %_H:%-M");
  ck_assert_int_eq(t.date_only, 0);
  ck_assert_int_eq(t.us, S(1044072300));
  ck_assert_int_eq(fmt_ok("01.02.2003", "%d.%m.%Y").date_only, 1);
}
END_TEST

/* Found by fuzzing: a zone moved 0001-01-01 into year 0, whose canonical
 * text ts_parse refuses, so a checkpoint of it could not be read back. */
START_TEST(test_zone_keeps_years_in_range)
{
  parse_bad("0001-01-01+14");
  parse_bad("0001-01-01T05:00:00+05:01");
  parse_bad("9999-12-31T23:00:00-01");
  ck_assert_int_eq(parse_ok("0001-01-01T05:00:00+05:00").us, S(-62135596800));
  ck_assert_int_eq(parse_ok("9999-12-31T22:59:59-01").us, S(253402300799));
  fmt_bad("0001-01-01 +1400", "%Y-%m-%d %z");
}
END_TEST

/* ---- ts_format --------------------------------------------------------- */

START_TEST(test_format_basic)
{
  format_is(0, 0, "1970-01-01 00:00:00");
  format_is(0, 1, "1970-01-01");
  format_is(S(951868800), 0, "2000-03-01 00:00:00");
  format_is(S(1614834367), 0, "2021-03-04 05:06:07");
  format_is(S(253402300799) + 999999, 0, "9999-12-31 23:59:59.999999");
  format_is(S(-62135596800), 1, "0001-01-01");
}
END_TEST

START_TEST(test_format_pre_1970)
{
  format_is(-1, 0, "1969-12-31 23:59:59.999999");
  format_is(S(-1), 0, "1969-12-31 23:59:59");
  format_is(-DWL_US_PER_DAY, 1, "1969-12-31");
  format_is(-DWL_US_PER_DAY, 0, "1969-12-31 00:00:00");
  format_is(-DWL_US_PER_DAY - 1, 0, "1969-12-30 23:59:59.999999");
  format_is(S(-14182940), 0, "1969-07-20 20:17:40");
  format_is(S(-2208988800), 1, "1900-01-01");
  format_is(S(-2208988800) + 500000, 0, "1900-01-01 00:00:00.500000");
}
END_TEST

START_TEST(test_format_fraction)
{
  format_is(1, 0, "1970-01-01 00:00:00.000001");
  format_is(100000, 0, "1970-01-01 00:00:00.100000");
  format_is(S(59) + 123456, 0, "1970-01-01 00:00:59.123456");
  /* date_only shows the day only, whatever the time. */
  format_is(S(3600) + 5, 1, "1970-01-01");
}
END_TEST

START_TEST(test_format_extremes)
{
  char buf[32];
  dwl_ts t = {.us = INT64_MIN};
  size_t n = ts_format(&t, buf);
  ck_assert_uint_lt(n, sizeof buf);
  ck_assert_uint_eq(strlen(buf), n);
  t.us = INT64_MAX;
  n = ts_format(&t, buf);
  ck_assert_uint_lt(n, sizeof buf);
  ck_assert_uint_eq(strlen(buf), n);
}
END_TEST

START_TEST(test_round_trip)
{
  static const char *const canon[] = {
    "1970-01-01", "2020-01-01", "2000-02-29", "1900-03-01", "0001-01-01",
    "9999-12-31", "1969-07-20 20:17:40", "1969-12-31 23:59:59.999999",
    "1900-01-01 00:00:00.000001", "2000-02-29 12:00:00.500000",
    "9999-12-31 23:59:59.999999", "0001-01-01 00:00:00",
    "2038-01-19 03:14:08", "1601-01-01 00:00:00",
  };
  char buf[32];
  for (size_t i = 0; i < sizeof canon / sizeof canon[0]; i++) {
    dwl_ts t = parse_ok(canon[i]);
    ts_format(&t, buf);
    ck_assert_str_eq(buf, canon[i]);
  }
  /* Non-canonical input settles on the canonical text. */
  dwl_ts t = parse_ok("2020-01-01T05:30:00.5+05:30");
  ts_format(&t, buf);
  ck_assert_str_eq(buf, "2020-01-01 00:00:00.500000");
  t = parse_ok("2020-06-15T12:34");
  ts_format(&t, buf);
  ck_assert_str_eq(buf, "2020-06-15 12:34:00");
}
END_TEST

/* Instants spread over years 1 to 9999, formatted by ts_format and by the
 * C library's own calendar (gmtime_r): the same text, and it parses back
 * to the same instant. */
START_TEST(test_format_against_gmtime)
{
  const int64_t lo = S(-62135596800), hi = S(253402300799) + 999999;
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  char buf[32], want[48];
  for (int i = 0; i < 20000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  /* xorshift64 */
    int64_t us = lo + (int64_t)(x % (uint64_t)(hi - lo));
    if (i % 3 == 0)
      us -= us % DWL_US_PER_SEC;  /* whole seconds: no fraction printed */
    int date_only = i % 5 == 0;
    if (date_only)
      us -= ((us % DWL_US_PER_DAY) + DWL_US_PER_DAY) % DWL_US_PER_DAY;
    time_t secs = (time_t)((us - (((us % DWL_US_PER_SEC) + DWL_US_PER_SEC) % DWL_US_PER_SEC)) / DWL_US_PER_SEC);
    int frac = (int)(((us % DWL_US_PER_SEC) + DWL_US_PER_SEC) % DWL_US_PER_SEC);
    struct tm tm;
    ck_assert_ptr_nonnull(gmtime_r(&secs, &tm));
    int n = snprintf(want, sizeof want, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    if (!date_only)
      n += snprintf(want + n, sizeof want - (size_t)n, " %02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (!date_only && frac)
      snprintf(want + n, sizeof want - (size_t)n, ".%06d", frac);
    dwl_ts t = {.us = us, .date_only = date_only};
    size_t len = ts_format(&t, buf);
    ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(len, strlen(want));
    dwl_ts back = parse_ok(buf);
    ck_assert_int_eq(back.us, us);
  }
}
END_TEST

/* ---- ts_parse_format --------------------------------------------------- */

START_TEST(test_pattern_spark_date)
{
  dwl_ts t = {0};
  ck_assert_int_eq(ts_parse_format("19-10-2020", 10, "dd-MM-yyyy", &t), 0);
  ck_assert_int_eq(t.us, S(1603065600));
  ck_assert_int_eq(t.date_only, 1);
  ck_assert_int_eq(fmt_ok("2020/10/19", "yyyy/MM/dd").us, S(1603065600));
  ck_assert_int_eq(fmt_ok("20201019", "yyyyMMdd").us, S(1603065600));
  ck_assert_int_eq(fmt_ok("29.02.2000", "dd.MM.yyyy").us, S(951782400));
  /* Only len bytes are read. */
  ck_assert_int_eq(ts_parse_format("19-10-2020 trailing", 10, "dd-MM-yyyy", &t), 0);
  ck_assert_int_eq(t.us, S(1603065600));
}
END_TEST

START_TEST(test_pattern_spark_time)
{
  dwl_ts t = fmt_ok("2021-03-04 05:06:07", "yyyy-MM-dd HH:mm:ss");
  ck_assert_int_eq(t.us, S(1614834367));
  ck_assert_int_eq(t.date_only, 0);
  t = fmt_ok("2021-03-04T05:06:07.123", "yyyy-MM-dd'T'HH:mm:ss.SSS");
  ck_assert_int_eq(t.us, S(1614834367) + 123000);
  t = fmt_ok("2021-03-04T05:06:07.123456789", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS");
  ck_assert_int_eq(t.us, S(1614834367) + 123456);
  t = fmt_ok("04/03/2021 05:06", "dd/MM/yyyy HH:mm");
  ck_assert_int_eq(t.us, S(1614834367 - 7));
  ck_assert_int_eq(t.date_only, 0);
  /* Quoted text, including an escaped quote. */
  t = fmt_ok("day 04 o'clock 05", "'day' dd 'o''clock' HH");
  ck_assert_int_eq(t.us, S(3 * 86400 + 5 * 3600));
  t = fmt_ok("'2021", "''yyyy");
  ck_assert_int_eq(t.us, S(1609459200));
}
END_TEST

START_TEST(test_pattern_short_fields)
{
  dwl_ts t = fmt_ok("4-3-2021", "d-M-yyyy");
  ck_assert_int_eq(t.us, S(1614816000));
  ck_assert_int_eq(fmt_ok("04-03-2021", "d-M-yyyy").us, S(1614816000));
  ck_assert_int_eq(fmt_ok("2021-03-04 5:6:7", "yyyy-MM-dd H:m:s").us, S(1614834367));
  fmt_bad("4-3-2021", "dd-MM-yyyy");
  fmt_bad("004-3-2021", "d-M-yyyy");
}
END_TEST

START_TEST(test_pattern_rejects)
{
  fmt_bad("19-10-2020x", "dd-MM-yyyy");
  fmt_bad("19-10-202", "dd-MM-yyyy");
  fmt_bad("19/10/2020", "dd-MM-yyyy");
  fmt_bad(" 19-10-2020", "dd-MM-yyyy");
  fmt_bad("", "dd-MM-yyyy");
  fmt_bad("31-04-2020", "dd-MM-yyyy");
  fmt_bad("29-02-2023", "dd-MM-yyyy");
  fmt_bad("01-13-2020", "dd-MM-yyyy");
  fmt_bad("2020-01-01 24:00", "yyyy-MM-dd HH:mm");
  fmt_bad("2020-01-01 23:59:60", "yyyy-MM-dd HH:mm:ss");
  fmt_bad("0000-01-01", "yyyy-MM-dd");
  fmt_bad("2021-03-04T05:06:07.12", "yyyy-MM-dd'T'HH:mm:ss.SSS");
  /* Unknown letters, bad widths and broken quotes are pattern errors. */
  fmt_bad("2020-01-01", "yyyy-MM-dd Q");
  fmt_bad("20-01-01", "yy-MM-dd");
  fmt_bad("2020-001-01", "yyyy-MMM-dd");
  fmt_bad("2020-01-01T", "yyyy-MM-dd'T");
  fmt_bad("2020-01-01T10", "yyyy-MM-ddTHH");
}
END_TEST

START_TEST(test_strptime_date)
{
  dwl_ts t = fmt_ok("19-10-2020", "%d-%m-%Y");
  ck_assert_int_eq(t.us, S(1603065600));
  ck_assert_int_eq(t.date_only, 1);
  t = fmt_ok("2000-02-29", "%Y-%m-%d");
  ck_assert_int_eq(t.us, S(951782400));
  ck_assert_int_eq(t.date_only, 1);
  t = fmt_ok("2020-10-19 100%", "%Y-%m-%d 100%%");
  ck_assert_int_eq(t.us, S(1603065600));
  ck_assert_int_eq(t.date_only, 1);
}
END_TEST

START_TEST(test_strptime_time)
{
  dwl_ts t = fmt_ok("04/03/2021 05:06:07", "%d/%m/%Y %H:%M:%S");
  ck_assert_int_eq(t.us, S(1614834367));
  ck_assert_int_eq(t.date_only, 0);
  t = fmt_ok("2021-03-04 05:06:07", "%Y-%m-%d %T");
  ck_assert_int_eq(t.us, S(1614834367));
  ck_assert_int_eq(t.date_only, 0);
  t = fmt_ok("2021-03-04 05:06", "%Y-%m-%d %R");
  ck_assert_int_eq(t.us, S(1614834367 - 7));
  ck_assert_int_eq(t.date_only, 0);
  /* Midnight spelled out keeps the format's verdict: it is a timestamp. */
  ck_assert_int_eq(fmt_ok("2021-03-04 00:00", "%Y-%m-%d %H:%M").date_only, 0);
}
END_TEST

START_TEST(test_strptime_zone_and_epoch)
{
  dwl_ts t = fmt_ok("2020-01-01 05:30:00 +0530", "%Y-%m-%d %H:%M:%S %z");
  ck_assert_int_eq(t.us, S(1577836800));
  t = fmt_ok("2019-12-31 16:00:00 -0800", "%Y-%m-%d %H:%M:%S %z");
  ck_assert_int_eq(t.us, S(1577836800));
  /* %s must not depend on the local zone. */
  const char *old = getenv("TZ");
  char *saved = old ? strdup(old) : NULL;
  setenv("TZ", "ABC+5", 1);
  tzset();
  t = fmt_ok("1577836800", "%s");
  if (saved) {
    setenv("TZ", saved, 1);
    free(saved);
  } else {
    unsetenv("TZ");
  }
  tzset();
  ck_assert_int_eq(t.us, S(1577836800));
  ck_assert_int_eq(t.date_only, 0);
}
END_TEST

START_TEST(test_strptime_rejects)
{
  fmt_bad("19-10-2020x", "%d-%m-%Y");
  fmt_bad("19-10-2020 ", "%d-%m-%Y");
  fmt_bad("29-02-2023", "%d-%m-%Y");
  fmt_bad("31-04-2020", "%d-%m-%Y");
  fmt_bad("32-01-2020", "%d-%m-%Y");
  fmt_bad("2020-01-01 23:59:60", "%Y-%m-%d %H:%M:%S");
  fmt_bad("2020-01-01 24:00", "%Y-%m-%d %H:%M");
  fmt_bad("0000-01-01", "%Y-%m-%d");
  fmt_bad("10000-01-01", "%Y-%m-%d");
  fmt_bad("", "%Y-%m-%d");
  fmt_bad("abc", "%Y-%m-%d");
}
END_TEST

START_TEST(test_strptime_uses_len)
{
  dwl_ts t;
  ck_assert_int_eq(ts_parse_format("19-10-2020 10:00", 10, "%d-%m-%Y", &t), 0);
  ck_assert_int_eq(t.us, S(1603065600));
  ck_assert_int_eq(ts_parse_format("19-10-2020\0x", 12, "%d-%m-%Y", &t), -1);
  /* Longer than any stack scratch: the heap path must work the same. */
  char big[300];
  memset(big, ' ', sizeof big);
  memcpy(big + sizeof big - 10, "19-10-2020", 10);
  ck_assert_int_eq(ts_parse_format(big, sizeof big, " %d-%m-%Y", &t), 0);
  ck_assert_int_eq(t.us, S(1603065600));
}
END_TEST

/* ---- arithmetic -------------------------------------------------------- */

START_TEST(test_add_us)
{
  dwl_ts t = parse_ok("2020-03-01");
  dwl_ts u = ts_add_us(t, -DWL_US_PER_DAY);
  char buf[32];
  ts_format(&u, buf);
  ck_assert_str_eq(buf, "2020-02-29");
  ck_assert_int_eq(u.date_only, 1);
  /* Moving a date off midnight makes it a timestamp, so the time shows. */
  u = ts_add_us(t, -S(3600));
  ck_assert_int_eq(u.date_only, 0);
  ts_format(&u, buf);
  ck_assert_str_eq(buf, "2020-02-29 23:00:00");
  u = ts_add_us(parse_ok("1970-01-01 00:00:00"), -1);
  ck_assert_int_eq(u.us, -1);
  ck_assert_int_eq(u.date_only, 0);
}
END_TEST

START_TEST(test_add_us_saturates)
{
  dwl_ts t = {.us = INT64_MAX - 5};
  ck_assert_int_eq(ts_add_us(t, 10).us, INT64_MAX);
  t.us = INT64_MIN + 5;
  ck_assert_int_eq(ts_add_us(t, -10).us, INT64_MIN);
  ck_assert_int_eq(ts_add_us(t, 10).us, INT64_MIN + 15);
}
END_TEST

START_TEST(test_now)
{
  time_t before = time(NULL);
  dwl_ts t = ts_now();
  time_t after = time(NULL);
  ck_assert_int_eq(t.date_only, 0);
  ck_assert_int_eq(t.us % DWL_US_PER_SEC, 0);
  ck_assert_int_ge(t.us, (int64_t)before * DWL_US_PER_SEC);
  ck_assert_int_le(t.us, (int64_t)after * DWL_US_PER_SEC);
}
END_TEST

/* Durations in messages read as the spec writes them. */
START_TEST(test_format_duration)
{
  static const struct {
    int64_t us;
    const char *text;
  } cases[] = {{0, "0s"},
               {DWL_US_PER_SEC, "1s"},
               {DWL_US_PER_DAY, "1d"},
               {90 * DWL_US_PER_SEC, "1m30s"},
               {DWL_US_PER_DAY + 2 * 3600 * DWL_US_PER_SEC + 4 * DWL_US_PER_SEC, "1d2h4s"},
               {366 * DWL_US_PER_DAY, "366d"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[32];
    ts_format_duration(cases[i].us, buf);
    ck_assert_str_eq(buf, cases[i].text);
  }
}
END_TEST


/* A composite lmd's order: us first, then each tie-breaker as an integer
 * (9 before 10), a parse resets the tie-breakers. */
START_TEST(test_seq_cmp)
{
  dwl_ts a = {.us = 5, .nties = 1, .tie = {9}}, b = {.us = 5, .nties = 1, .tie = {10}};
  ck_assert_int_lt(ts_seq_cmp(&a, &b), 0);
  ck_assert_int_gt(ts_seq_cmp(&b, &a), 0);
  b.tie[0] = 9;
  ck_assert_int_eq(ts_seq_cmp(&a, &b), 0);
  b.us = 4;
  b.tie[0] = 100;
  ck_assert_int_gt(ts_seq_cmp(&a, &b), 0);  /* the first column decides */
  dwl_ts c = {.us = 5, .nties = 2, .tie = {9, -1}}, d = {.us = 5, .nties = 2, .tie = {9, 0}};
  ck_assert_int_lt(ts_seq_cmp(&c, &d), 0);
  ck_assert_int_eq(ts_parse_seq("7", 1, &c), 0);
  ck_assert_int_eq(c.nties, 0);
  ck_assert_int_eq(ts_parse("2024-01-01", 10, &d), 0);
  ck_assert_int_eq(d.nties, 0);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("ts");

  TCase *tc = tcase_create("ts_parse");
  tcase_add_test(tc, test_parse_epoch);
  tcase_add_test(tc, test_parse_time_forms);
  tcase_add_test(tc, test_parse_fraction);
  tcase_add_test(tc, test_parse_zone_offsets);
  tcase_add_test(tc, test_parse_zone_after_date);
  tcase_add_test(tc, test_parse_leap_years);
  tcase_add_test(tc, test_parse_month_lengths);
  tcase_add_test(tc, test_parse_ranges);
  tcase_add_test(tc, test_parse_rejects_shape);
  tcase_add_test(tc, test_parse_uses_len);
  tcase_add_test(tc, test_format_width_keeps_time);
  tcase_add_test(tc, test_zone_keeps_years_in_range);
  suite_add_tcase(s, tc);

  tc = tcase_create("ts_format");
  tcase_add_test(tc, test_format_basic);
  tcase_add_test(tc, test_format_pre_1970);
  tcase_add_test(tc, test_format_fraction);
  tcase_add_test(tc, test_format_extremes);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_format_against_gmtime);
  suite_add_tcase(s, tc);

  tc = tcase_create("ts_parse_format");
  tcase_add_test(tc, test_pattern_spark_date);
  tcase_add_test(tc, test_pattern_spark_time);
  tcase_add_test(tc, test_pattern_short_fields);
  tcase_add_test(tc, test_pattern_rejects);
  tcase_add_test(tc, test_strptime_date);
  tcase_add_test(tc, test_strptime_time);
  tcase_add_test(tc, test_strptime_zone_and_epoch);
  tcase_add_test(tc, test_strptime_rejects);
  tcase_add_test(tc, test_strptime_uses_len);
  suite_add_tcase(s, tc);

  tc = tcase_create("ts_arith");
  tcase_add_test(tc, test_add_us);
  tcase_add_test(tc, test_add_us_saturates);
  tcase_add_test(tc, test_now);
  tcase_add_test(tc, test_seq_cmp);
  suite_add_tcase(s, tc);

  tc = tcase_create("ts_format_duration");
  tcase_add_test(tc, test_format_duration);
  suite_add_tcase(s, tc);

  return s;
}
