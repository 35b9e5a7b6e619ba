/* Timestamps: strict ISO 8601, strptime and Spark-style pattern parsing,
 * canonical formatting and the small arithmetic the loader needs.  Civil
 * dates are converted by hand (Howard Hinnant's algorithms) because
 * mktime/timegm depend on TZ and would make checkpoints machine-specific. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* strptime and tm_gmtoff */
#endif
#include "ts.h"

#include <inttypes.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Proleptic Gregorian day number relative to 1970-01-01.  Valid for any
 * year an int64 microsecond count can reach. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;                                   /* [0, 399] */
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* [0, 146096] */
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;                                       /* [0, 146096] */
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  /* [0, 399] */
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                /* [0, 365] */
  int64_t mp = (5 * doy + 2) / 153;                                     /* [0, 11] */
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = era * 400 + yoe + (*m <= 2);
}

static int is_leap(int y)
{
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
  static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* Every parser funnels through here so that all of them apply the same
 * range rules; the zone offset (seconds east of UTC) is applied last. */
/* 0001-01-01 00:00:00 and 9999-12-31 23:59:59 UTC, in seconds. */
#define TS_MIN_SECS INT64_C(-62135596800)
#define TS_MAX_SECS INT64_C(253402300799)

static int ts_from_fields(int y, int mo, int d, int h, int mi, int s,
                          int64_t frac_us, int64_t offset_s, dwl_ts *out)
{
  if (y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 ||
      d > days_in_month(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      s < 0 || s > 59 || frac_us < 0 || frac_us >= DWL_US_PER_SEC)
    return -1;
  int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset_s;
  /* A zone can carry 0001-01-01 or 9999-12-31 out of the years that have
   * a canonical text; stored as a checkpoint, such an instant would not
   * parse back (found by fuzzing). */
  if (secs < TS_MIN_SECS || secs > TS_MAX_SECS)
    return -1;
  out->us = secs * DWL_US_PER_SEC + frac_us;
  return 0;
}

static int is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* Reads exactly n digits at s[*p]; advances *p only on success. */
static int take_digits(const char *s, size_t len, size_t *p, int n, int *v)
{
  int acc = 0;
  if (len - *p < (size_t)n)
    return -1;
  for (size_t i = 0; i < (size_t)n; i++) {
    if (!is_digit(s[*p + i]))
      return -1;
    acc = acc * 10 + (s[*p + i] - '0');
  }
  *p += (size_t)n;
  *v = acc;
  return 0;
}

static int take_char(const char *s, size_t len, size_t *p, char c)
{
  if (*p >= len || s[*p] != c)
    return -1;
  (*p)++;
  return 0;
}

/* Fraction digits after the '.'; digits beyond microseconds are checked
 * but dropped (truncation, never rounding, so a value cannot move into the
 * next second). */
static int take_fraction(const char *s, size_t len, size_t *p, int min,
                         int max, int64_t *us)
{
  int n = 0;
  int64_t acc = 0;
  while (*p < len && n < max && is_digit(s[*p])) {
    if (n < 6)
      acc = acc * 10 + (s[*p] - '0');
    n++;
    (*p)++;
  }
  if (n < min)
    return -1;
  for (int i = n; i < 6; i++)
    acc *= 10;
  *us = acc;
  return 0;
}

/* Z, +HH, +HHMM, +HH:MM (or '-'): seconds east of UTC. */
static int take_zone(const char *s, size_t len, size_t *p, int64_t *off)
{
  int hh, mm = 0;
  if (s[*p] == 'Z') {
    (*p)++;
    *off = 0;
    return 0;
  }
  if (s[*p] != '+' && s[*p] != '-')
    return -1;
  int sign = s[*p] == '-' ? -1 : 1;
  (*p)++;
  if (take_digits(s, len, p, 2, &hh) != 0)
    return -1;
  if (*p < len) {
    if (s[*p] == ':')
      (*p)++;
    if (take_digits(s, len, p, 2, &mm) != 0)
      return -1;
  }
  if (hh > 23 || mm > 59)
    return -1;
  *off = sign * (int64_t)(hh * 3600 + mm * 60);
  return 0;
}

int ts_parse(const char *s, size_t len, dwl_ts *out)
{
  size_t p = 0;
  int y, mo, d, h = 0, mi = 0, sec = 0;
  int64_t frac = 0, off = 0;
  int has_time = 0, has_zone = 0;

  if (!s || !out)
    return -1;
  if (take_digits(s, len, &p, 4, &y) != 0 || take_char(s, len, &p, '-') != 0 ||
      take_digits(s, len, &p, 2, &mo) != 0 || take_char(s, len, &p, '-') != 0 ||
      take_digits(s, len, &p, 2, &d) != 0)
    return -1;
  if (p < len && (s[p] == ' ' || s[p] == 'T')) {
    p++;
    has_time = 1;
    if (take_digits(s, len, &p, 2, &h) != 0 || take_char(s, len, &p, ':') != 0 ||
        take_digits(s, len, &p, 2, &mi) != 0)
      return -1;
    if (p < len && s[p] == ':') {
      p++;
      if (take_digits(s, len, &p, 2, &sec) != 0)
        return -1;
      if (p < len && s[p] == '.') {
        p++;
        if (take_fraction(s, len, &p, 1, 9, &frac) != 0)
          return -1;
      }
    }
  }
  /* A zone straight after the date (XML Schema's "2020-01-01Z") is taken
   * as midnight in that zone; the result is then an instant, not a date. */
  if (p < len) {
    if (take_zone(s, len, &p, &off) != 0)
      return -1;
    has_zone = 1;
  }
  if (p != len)
    return -1;
  if (ts_from_fields(y, mo, d, h, mi, sec, frac, off, out) != 0)
    return -1;
  out->date_only = !has_time && !has_zone;
  out->nties = 0, out->tie_time = 0;  /* a parsed value is one column's */
  return 0;
}

/* Conversions that carry a time of day (or a zone, which moves the
 * instant off midnight); glibc's flags and field widths (%_5H, %02R: found
 * by fuzzing) and the E and O modifiers are skipped. */
static int strptime_has_time(const char *fmt)
{
  for (const char *f = fmt; *f; f++) {
    if (*f != '%')
      continue;
    f++;
    while (*f && strchr("_-0^#123456789", *f))
      f++;
    if (*f == 'E' || *f == 'O')
      f++;
    if (*f == '\0')
      break;
    if (strchr("HIMSTRrcsXklz", *f))
      return 1;
  }
  return 0;
}

static int parse_strptime(const char *s, size_t len, const char *fmt,
                          dwl_ts *out)
{
  char stack[128];
  struct tm tm;
  int rc = -1;

  if (len == SIZE_MAX)
    return -1;
  char *copy = len < sizeof stack ? stack : malloc(len + 1);
  if (!copy)
    return -1;
  memcpy(copy, s, len);
  copy[len] = '\0';
  /* Fields the format does not mention default to 1970-01-01 00:00:00;
   * strptime leaves untouched fields alone. */
  memset(&tm, 0, sizeof tm);
  tm.tm_year = 70;
  tm.tm_mday = 1;
  const char *end = strptime(copy, fmt, &tm);
  /* An embedded NUL stops strptime short of copy + len, so it fails too. */
  if (end && end == copy + len) {
    /* %z sets tm_gmtoff; glibc's %s goes through localtime_r, which sets
     * it too, so subtracting it makes both independent of TZ. */
    int64_t off = tm.tm_gmtoff;
    if (tm.tm_year <= INT_MAX - 1900 &&
        ts_from_fields(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec, 0, off, out) == 0) {
      /* A time of day the scan above missed must not be dropped. */
      out->date_only = !strptime_has_time(fmt) && out->us % DWL_US_PER_DAY == 0;
      out->nties = 0, out->tie_time = 0;  /* a parsed value is one column's */
      rc = 0;
    }
  }
  if (copy != stack)
    free(copy);
  return rc;
}

/* Reads between min and max digits (Java: "M" takes 1-2, "MM" exactly 2). */
static int take_digits_range(const char *s, size_t len, size_t *p, int min,
                             int max, int *v)
{
  int n = 0, acc = 0;
  while (*p < len && n < max && is_digit(s[*p])) {
    acc = acc * 10 + (s[*p] - '0');
    n++;
    (*p)++;
  }
  if (n < min)
    return -1;
  *v = acc;
  return 0;
}

/* Java DateTimeFormatter / Spark datetime pattern subset: yyyy, M/MM,
 * d/dd, H/HH, m/mm, s/ss, S..S (1-9 fraction digits), 'quoted' literals
 * ('' is a quote) and any other non-letter as itself.  Unknown letters
 * are refused rather than guessed at, as Spark does. */
static int parse_pattern(const char *s, size_t len, const char *fmt,
                         dwl_ts *out)
{
  size_t p = 0;
  int y = 1970, mo = 1, d = 1, h = 0, mi = 0, sec = 0, has_time = 0;
  int64_t frac = 0;
  const char *f = fmt;

  while (*f) {
    char c = *f;
    if (c == '\'') {
      f++;
      if (*f == '\'') {  /* '' outside quotes: one quote */
        if (take_char(s, len, &p, '\'') != 0)
          return -1;
        f++;
        continue;
      }
      for (;;) {
        if (*f == '\0')
          return -1;  /* unterminated quote */
        if (*f == '\'') {
          if (f[1] != '\'')
            break;
          f++;  /* '' inside quotes: one quote */
        }
        if (take_char(s, len, &p, *f) != 0)
          return -1;
        f++;
      }
      f++;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      if (take_char(s, len, &p, c) != 0)
        return -1;
      f++;
      continue;
    }
    int n = 0;
    while (f[n] == c)
      n++;
    f += n;
    int rc;
    switch (c) {
    case 'y':
      rc = n == 4 ? take_digits(s, len, &p, 4, &y) : -1;
      break;
    case 'M':
      rc = n <= 2 ? take_digits_range(s, len, &p, n, 2, &mo) : -1;
      break;
    case 'd':
      rc = n <= 2 ? take_digits_range(s, len, &p, n, 2, &d) : -1;
      break;
    case 'H':
      rc = n <= 2 ? take_digits_range(s, len, &p, n, 2, &h) : -1;
      has_time = 1;
      break;
    case 'm':
      rc = n <= 2 ? take_digits_range(s, len, &p, n, 2, &mi) : -1;
      has_time = 1;
      break;
    case 's':
      rc = n <= 2 ? take_digits_range(s, len, &p, n, 2, &sec) : -1;
      has_time = 1;
      break;
    case 'S':
      rc = n <= 9 ? take_fraction(s, len, &p, n, n, &frac) : -1;
      has_time = 1;
      break;
    default:
      rc = -1;
      break;
    }
    if (rc != 0)
      return -1;
  }
  if (p != len || ts_from_fields(y, mo, d, h, mi, sec, frac, 0, out) != 0)
    return -1;
  out->date_only = !has_time;
  out->nties = 0, out->tie_time = 0;  /* a parsed value is one column's */
  return 0;
}

int ts_parse_format(const char *s, size_t len, const char *fmt, dwl_ts *out)
{
  if (!s || !fmt || !out)
    return -1;
  if (strchr(fmt, '%'))
    return parse_strptime(s, len, fmt, out);
  return parse_pattern(s, len, fmt, out);
}

/* v (0..99) as two digits at p; returns the end. */
static char *two(char *p, int v)
{
  p[0] = (char)('0' + v / 10);
  p[1] = (char)('0' + v % 10);
  return p + 2;
}

size_t ts_format(const dwl_ts *t, char *buf)
{
  /* Floor division so that instants before 1970 land on the previous day
   * with a positive time of day. */
  int64_t days = t->us / DWL_US_PER_DAY;
  int64_t rem = t->us % DWL_US_PER_DAY;
  if (rem < 0) {
    days--;
    rem += DWL_US_PER_DAY;
  }
  int64_t y;
  int m, d;
  civil_from_days(days, &y, &m, &d);
  /* Years 0 to 9999 (every one a table can hold) by hand: snprintf was a
   * tenth of the client's time in a streamed initial load, which formats
   * three instants per row. */
  if (y >= 0 && y <= 9999) {
    char *p = two(two(buf, (int)(y / 100)), (int)(y % 100));
    *p++ = '-';
    p = two(p, m);
    *p++ = '-';
    p = two(p, d);
    if (!t->date_only) {
      int64_t secs = rem / DWL_US_PER_SEC;
      int us = (int)(rem % DWL_US_PER_SEC);
      *p++ = ' ';
      p = two(p, (int)(secs / 3600));
      *p++ = ':';
      p = two(p, (int)(secs / 60 % 60));
      *p++ = ':';
      p = two(p, (int)(secs % 60));
      if (us) {
        *p++ = '.';
        for (int k = 5; k >= 0; k--, us /= 10)
          p[k] = (char)('0' + us % 10);
        p += 6;
      }
    }
    *p = '\0';
    return (size_t)(p - buf);
  }
  int n;
  if (t->date_only) {
    n = snprintf(buf, 32, "%04lld-%02d-%02d", (long long)y, m, d);
  } else {
    int64_t secs = rem / DWL_US_PER_SEC;
    int us = (int)(rem % DWL_US_PER_SEC);
    int hh = (int)(secs / 3600), mm = (int)(secs / 60 % 60), ss = (int)(secs % 60);
    if (us)
      n = snprintf(buf, 32, "%04lld-%02d-%02d %02d:%02d:%02d.%06d",
                   (long long)y, m, d, hh, mm, ss, us);
    else
      n = snprintf(buf, 32, "%04lld-%02d-%02d %02d:%02d:%02d",
                   (long long)y, m, d, hh, mm, ss);
  }
  return n < 0 ? 0 : (size_t)n;
}

int ts_parse_seq(const char *s, size_t len, dwl_ts *out)
{
  size_t i = len > 0 && s[0] == '-';
  if (i == len || len > 20)
    return -1;
  uint64_t v = 0, lim = i ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; i < len; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (lim - (uint64_t)(s[i] - '0')) / 10)
      return -1;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  out->us = s[0] == '-' ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  out->date_only = 0;
  out->nties = 0, out->tie_time = 0;  /* a parsed value is one column's */
  return 0;
}

int ts_seq_cmp(const dwl_ts *a, const dwl_ts *b)
{
  if (a->us != b->us)
    return a->us < b->us ? -1 : 1;
  for (int i = 0; i < a->nties && i < b->nties; i++)
    if (a->tie[i] != b->tie[i])
      return a->tie[i] < b->tie[i] ? -1 : 1;
  return 0;
}

size_t ts_format_seq(const dwl_ts *t, char *buf)
{
  return (size_t)snprintf(buf, 32, "%" PRId64, t->us);
}

dwl_ts ts_add_us(dwl_ts t, int64_t us)
{
  /* Saturate rather than wrap: a lookback window on an absurd checkpoint
   * must not turn into a date in the far future. */
  if (us > 0 && t.us > INT64_MAX - us)
    t.us = INT64_MAX;
  else if (us < 0 && t.us < INT64_MIN - us)
    t.us = INT64_MIN;
  else
    t.us += us;
  /* A date stays a date only if it still lands on midnight; otherwise
   * formatting it would silently drop the time we just added. */
  if (t.date_only && us % DWL_US_PER_DAY != 0)
    t.date_only = 0;
  return t;
}

dwl_ts ts_now(void)
{
  /* Not time(): glibc serves it from the coarse clock, which can lag the
   * real one by a tick, so a run could stamp a second before a `date`
   * taken just before it started. */
  struct timespec now;
  dwl_ts t;
  clock_gettime(CLOCK_REALTIME, &now);
  t.us = (int64_t)now.tv_sec * DWL_US_PER_SEC;
  t.date_only = 0;
  return t;
}

void ts_format_duration(int64_t us, char *buf)
{
  static const struct { char unit; int64_t us, mod; } units[] = {
    {'d', DWL_US_PER_DAY, 0}, {'h', 3600 * DWL_US_PER_SEC, 24}, {'m', 60 * DWL_US_PER_SEC, 60}, {'s', DWL_US_PER_SEC, 60}};
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    int64_t v = us / units[i].us;
    if (units[i].mod)
      v %= units[i].mod;
    if (v || (i == 3 && len == 0))
      len += (size_t)snprintf(buf + len, 32 - len, "%lld%c", (long long)v, units[i].unit);
  }
}
