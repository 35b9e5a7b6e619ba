/* libFuzzer target for the timestamp parser (src/rows/ts.c): ISO 8601 lmd
 * values, and values read with a strptime(3) format (load.lmd_format).
 *
 * Input: FORMAT '\n' VALUE (no newline: the whole input is an ISO value and
 * no format is tried).  Besides not crashing, a parsed value must survive
 * its canonical text: ts_format then ts_parse gives the same instant (so
 * no value outside 0001-9999 UTC, which has no such text, is accepted).
 *
 * fuzz-sources: src/rows/ts.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts.h"

static void roundtrip(const dwl_ts *t)
{
  char buf[32];
  size_t n = ts_format(t, buf);
  if (n >= sizeof buf)
    abort();
  dwl_ts back;
  if (ts_parse(buf, n, &back) != 0 || back.us != t->us || back.date_only != t->date_only)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  dwl_ts t;
  const uint8_t *nl = memchr(data, '\n', size);
  if (!nl) {
    if (ts_parse((const char *)data, size, &t) == 0)
      roundtrip(&t);
    return 0;
  }
  size_t flen = (size_t)(nl - data);
  char *fmt = malloc(flen + 1);
  if (!fmt)
    return 0;
  memcpy(fmt, data, flen);
  fmt[flen] = '\0';
  /* The value is not NUL-terminated: the parser must honour its length. */
  size_t vlen = size - flen - 1;
  char *val = malloc(vlen ? vlen : 1);
  if (val) {
    memcpy(val, nl + 1, vlen);
    if (ts_parse_format(val, vlen, fmt, &t) == 0)
      roundtrip(&t);
    if (ts_parse(val, vlen, &t) == 0)
      roundtrip(&t);
  }
  free(val);
  free(fmt);
  return 0;
}
