/* Canonical text of values per declared type (type names are coltype.c's).
 * Both sides of a comparison (source and target read-back) go through
 * norm_value, so every rule here is about making equal values spell the
 * same, never about prettiness. */
#include "norm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts.h"

static int is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* ASCII only on purpose: tolower() follows the locale, and a Turkish
 * locale must not change what "TRUE" or "INT" mean. */
static char ascii_lower(char c)
{
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int set_why(const char **why, const char *reason)
{
  if (why)
    *why = reason;
  return -1;
}

static int emit(dwl_buf *b, const char *p, size_t n, const char **why)
{
  if (buf_add(b, p, n) != 0)
    return set_why(why, "no room for the value");
  return 0;
}

static int norm_integer(const char *in, size_t len, dwl_buf *b,
                        const char **why)
{
  static const char max_pos[] = "9223372036854775807";
  static const char max_neg[] = "9223372036854775808";
  size_t p = 0;
  int neg = 0;

  if (p < len && (in[p] == '+' || in[p] == '-')) {
    neg = in[p] == '-';
    p++;
  }
  if (p == len)
    return set_why(why, "not an integer");
  for (size_t q = p; q < len; q++)
    if (!is_digit(in[q]))
      return set_why(why, "not an integer");
  while (p < len - 1 && in[p] == '0')
    p++;
  size_t n = len - p;
  /* Range check on the digit string itself: with leading zeros gone,
   * longer means larger and equal lengths compare lexically. */
  if (n > 19 || (n == 19 && memcmp(in + p, neg ? max_neg : max_pos, 19) > 0))
    return set_why(why, "integer out of range");
  if (n == 1 && in[p] == '0')
    neg = 0;
  if (neg && emit(b, "-", 1, why) != 0)
    return -1;
  return emit(b, in + p, n, why);
}

static int norm_numeric(const char *in, size_t len, dwl_buf *b,
                        const char **why)
{
  size_t p = 0;
  int neg = 0;

  if (p < len && (in[p] == '+' || in[p] == '-')) {
    neg = in[p] == '-';
    p++;
  }
  size_t ip = p;
  while (p < len && is_digit(in[p]))
    p++;
  size_t ie = p, fp = p, fe = p;
  if (p < len && in[p] == '.') {
    fp = ++p;
    while (p < len && is_digit(in[p]))
      p++;
    fe = p;
  }
  if (p != len || (ie == ip && fe == fp))
    return set_why(why, "not a decimal number");
  while (ip < ie && in[ip] == '0')
    ip++;
  while (fe > fp && in[fe - 1] == '0')
    fe--;
  if (ip == ie && fe == fp)
    return emit(b, "0", 1, why);
  if (neg && emit(b, "-", 1, why) != 0)
    return -1;
  if (ip == ie) {
    if (emit(b, "0", 1, why) != 0)
      return -1;
  } else if (emit(b, in + ip, ie - ip, why) != 0) {
    return -1;
  }
  if (fe > fp && (emit(b, ".", 1, why) != 0 || emit(b, in + fp, fe - fp, why) != 0))
    return -1;
  return 0;
}

static int norm_real(const char *in, size_t len, dwl_buf *b, const char **why)
{
  char text[40];

  /* strtod alone would also take blanks, hex floats, inf and nan; none of
   * them is a decimal number a warehouse hands back the same way. */
  if (len == 0)
    return set_why(why, "not a number");
  for (size_t i = 0; i < len; i++)
    if (in[i] == '\0' || (!is_digit(in[i]) && !strchr("+-.eE", in[i])))
      return set_why(why, "not a number");
  if (emit(b, in, len, why) != 0)
    return -1;
  char *end;
  errno = 0;
  double v = strtod(b->data, &end);
  if (end != b->data + len)
    return set_why(why, "not a number");
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
    return set_why(why, "number out of range");
  if (!isfinite(v))
    return set_why(why, "number out of range");
  /* -0.0 == 0.0; a warehouse may well drop the sign, so spell both "0". */
  if (v == 0)
    v = 0;
  snprintf(text, sizeof text, "%.15g", v);
  if (strtod(text, NULL) != v)
    snprintf(text, sizeof text, "%.17g", v);
  buf_reset(b);
  return emit(b, text, strlen(text), why);
}

static int norm_boolean(const char *in, size_t len, dwl_buf *b,
                        const char **why)
{
  static const struct {
    const char *word;
    char value;
  } words[] = {
    {"true", '1'}, {"false", '0'}, {"t", '1'}, {"f", '0'}, {"yes", '1'},
    {"no", '0'}, {"y", '1'}, {"n", '0'}, {"1", '1'}, {"0", '0'},
  };
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    const char *w = words[i].word;
    if (strlen(w) != len)
      continue;
    size_t k = 0;
    while (k < len && ascii_lower(in[k]) == w[k])
      k++;
    if (k == len)
      return emit(b, &words[i].value, 1, why);
  }
  return set_why(why, "not a boolean");
}

static int norm_date(const char *in, size_t len, dwl_buf *b, const char **why)
{
  dwl_ts t;
  char text[32];

  if (ts_parse(in, len, &t) != 0)
    return set_why(why, "not a date");
  if (!t.date_only) {
    int64_t rem = t.us % DWL_US_PER_DAY;
    if (rem != 0)
      return set_why(why, "date with a time of day");
    t.date_only = 1;
  }
  size_t n = ts_format(&t, text);
  return emit(b, text, n, why);
}

static int norm_timestamp(const char *in, size_t len, dwl_buf *b,
                          const char **why)
{
  dwl_ts t;
  char text[32];

  if (ts_parse(in, len, &t) != 0)
    return set_why(why, "not a timestamp");
  t.date_only = 0;
  size_t n = ts_format(&t, text);
  return emit(b, text, n, why);
}

int norm_value(int type, const char *in, size_t len, dwl_buf *scratch,
               const char **out, size_t *outlen, const char **why)
{
  int rc;

  if (!in) {
    if (len != 0)
      return set_why(why, "no value");
    in = "";
  }
  if (type == DWL_TYPE_TEXT) {
    *out = in;
    *outlen = len;
    return 0;
  }
  buf_reset(scratch);
  switch (type) {
  case DWL_TYPE_INTEGER:
    rc = norm_integer(in, len, scratch, why);
    break;
  case DWL_TYPE_NUMERIC:
    rc = norm_numeric(in, len, scratch, why);
    break;
  case DWL_TYPE_REAL:
    rc = norm_real(in, len, scratch, why);
    break;
  case DWL_TYPE_BOOLEAN:
    rc = norm_boolean(in, len, scratch, why);
    break;
  case DWL_TYPE_DATE:
    rc = norm_date(in, len, scratch, why);
    break;
  case DWL_TYPE_TIMESTAMP:
    rc = norm_timestamp(in, len, scratch, why);
    break;
  default:
    return set_why(why, "unknown type");
  }
  if (rc != 0)
    return -1;
  *out = scratch->data;
  *outlen = scratch->len;
  return 0;
}

int norm_numeric_fits(const char *s, size_t len, int precision, int scale, const char **why)
{
  /* The canonical text is [-]int[.frac] with no trailing fraction zeros. */
  const char *dot = memchr(s, '.', len);
  size_t ilen = (size_t)((dot ? dot : s + len) - s) - (s[0] == '-' ? 1u : 0u);
  size_t flen = dot ? len - (size_t)(dot - s) - 1 : 0;
  if (scale < 0)
    scale = 0;
  if (flen > (size_t)scale)
    return set_why(why, "has more decimals than the column's scale");
  int idigits = !(ilen == 1 && s[s[0] == '-' ? 1 : 0] == '0');
  if (idigits && ilen > (size_t)(precision - scale))
    return set_why(why, "has more digits than the column's precision");
  return 0;
}

size_t norm_sig_digits(const char *s, size_t len)
{
  size_t first = 0, last = 0, n = 0;
  int seen = 0;
  for (size_t i = 0; i < len; i++) {
    if (!is_digit(s[i]))
      continue;
    n++;
    if (s[i] != '0') {
      if (!seen)
        first = n;
      seen = 1;
      last = n;
    }
  }
  return seen ? last - first + 1 : 0;
}

/* Plain decimal text of a number in exponent form ("1.5e-07" ->
 * "0.00000015"), exactly, digit by digit: what SQLite prints for a REAL in
 * a NUMERIC column.  Returns the length, or 0 when `in` is not such a
 * number or the result would not fit in n bytes. */
static size_t expand_exponent(const char *in, size_t len, char *out, size_t n)
{
  char digits[80];
  size_t nd = 0, p = 0, o = 0;
  long point = 0, exp = 0;
  int neg = 0, any = 0, seen_dot = 0;
  if (p < len && (in[p] == '+' || in[p] == '-'))
    neg = in[p++] == '-';
  for (; p < len && (is_digit(in[p]) || (in[p] == '.' && !seen_dot)); p++) {
    if (in[p] == '.') {
      seen_dot = 1;
      continue;
    }
    any = 1;
    if (nd == 0 && in[p] == '0') {  /* leading zeros only move the point */
      point -= seen_dot;
      continue;
    }
    if (nd == sizeof digits)
      return 0;
    digits[nd++] = in[p];
    point += !seen_dot;
  }
  if (!any || p >= len || (in[p] != 'e' && in[p] != 'E'))
    return 0;
  p++;
  int eneg = p < len && in[p] == '-';
  p += p < len && (in[p] == '-' || in[p] == '+');
  if (p == len)
    return 0;
  for (; p < len && is_digit(in[p]); p++)
    if ((exp = exp * 10 + (in[p] - '0')) > 400)
      return 0;
  if (p != len)
    return 0;
  if (nd == 0)
    return n > 1 ? (out[0] = '0', 1) : 0;
  point += eneg ? -exp : exp;  /* digits[0..point) is the integer part */
  size_t need = nd + (size_t)(point < 0 ? -point : point) + 4;
  if (need > n)
    return 0;
  if (neg)
    out[o++] = '-';
  if (point <= 0) {
    out[o++] = '0';
    out[o++] = '.';
    for (long z = point; z < 0; z++)
      out[o++] = '0';
    memcpy(out + o, digits, nd);
    return o + nd;
  }
  for (long i = 0; i < point; i++)
    out[o++] = (size_t)i < nd ? digits[i] : '0';
  if ((size_t)point < nd) {
    out[o++] = '.';
    memcpy(out + o, digits + point, nd - (size_t)point);
    o += nd - (size_t)point;
  }
  return o;
}

int norm_stored_col(const dwl_column *col, const char *in, size_t len, dwl_buf *scratch, const char **out,
                    size_t *outlen, const char **why)
{
  char plain[512];
  size_t n;
  if (col->type == DWL_TYPE_NUMERIC && in && (memchr(in, 'e', len) || memchr(in, 'E', len)) &&
      (n = expand_exponent(in, len, plain, sizeof plain)) > 0)
    return norm_value_col(col, plain, n, scratch, out, outlen, why);
  return norm_value_col(col, in, len, scratch, out, outlen, why);
}

int norm_value_col(const dwl_column *col, const char *in, size_t len, dwl_buf *scratch, const char **out,
                   size_t *outlen, const char **why)
{
  if (norm_value(col->type, in, len, scratch, out, outlen, why) != 0)
    return -1;
  if (col->type != DWL_TYPE_NUMERIC || col->precision <= 0)
    return 0;
  if (norm_numeric_fits(*out, *outlen, col->precision, col->scale, why) != 0)
    return -1;
  const char *s = *out, *dot = memchr(s, '.', *outlen);
  size_t flen = dot ? *outlen - (size_t)(dot - s) - 1 : 0;
  int scale = col->scale > 0 ? col->scale : 0;
  if (flen == (size_t)scale)
    return 0;
  /* scratch may hold *out already: build the padded text after a copy. */
  char tmp[96];
  if (*outlen + (size_t)scale + 2 > sizeof tmp) {
    *why = "is too long for a numeric";
    return -1;
  }
  memcpy(tmp, s, *outlen);
  size_t n = *outlen;
  if (!dot)
    tmp[n++] = '.';
  while (flen < (size_t)scale) {
    tmp[n++] = '0';
    flen++;
  }
  buf_reset(scratch);
  if (buf_add(scratch, tmp, n) != 0) {
    *why = "no room for the value";
    return -1;
  }
  *out = scratch->data;
  *outlen = n;
  return 0;
}
