/* Timestamps: parsing source lmd values and formatting canonical text.
 * A timestamp is microseconds since 1970-01-01 00:00:00 UTC; values with a
 * zone are converted to UTC, values without one are taken as they are. */
#ifndef DWL_TS_H
#define DWL_TS_H

#include <stddef.h>
#include <stdint.h>

/* A composite load.lmd (dwload-job(5), SEQUENCES) has at most this many
 * tie-breaking columns after its first. */
#define DWL_TS_TIES 3

typedef struct dwl_ts {
  int64_t us;        /* microseconds since the epoch */
  int date_only;     /* 1: the text had no time part */
  /* An lmd of a composite load.lmd carries its tie-breakers: nties values
   * compared after us, in order (ts_seq_cmp).  Bit i of tie_time: tie[i]
   * is a point in time (microseconds), else an integer.  Nothing stores
   * them in a table: validity holds us alone. */
  int nties;
  unsigned tie_time;
  int64_t tie[DWL_TS_TIES];
} dwl_ts;

/* The order of two lmd values: us, then the tie-breakers (typed, so 9
 * before 10).  <0, 0, >0. */
int ts_seq_cmp(const dwl_ts *a, const dwl_ts *b);

/* ISO 8601: YYYY-MM-DD, optionally followed by ' ' or 'T' and HH:MM[:SS[.f{1,9}]],
 * optionally followed by Z, +HH, +HHMM or +HH:MM.  Surrounding blanks are not
 * accepted.  Returns 0 or -1. */
int ts_parse(const char *s, size_t len, dwl_ts *out);

/* Parses with a strptime(3) format (e.g. "%d-%m-%Y"); the whole text must be
 * consumed.  date_only is set when the format has no %H/%T/%R/%M/%S. */
int ts_parse_format(const char *s, size_t len, const char *fmt, dwl_ts *out);

/* Canonical text: "YYYY-MM-DD" when date_only, else "YYYY-MM-DD HH:MM:SS"
 * plus ".ffffff" when there are microseconds.  buf needs 32 bytes.
 * Returns the length written. */
size_t ts_format(const dwl_ts *t, char *buf);

/* An integer sequence (load.lmd of an integer column) in a dwl_ts: us is
 * the sequence value itself.  The text is a decimal 64-bit integer, an
 * optional '-' then digits, nothing around them.  Returns 0 or -1. */
int ts_parse_seq(const char *s, size_t len, dwl_ts *out);
/* The decimal text of a sequence; buf needs 32 bytes.  Returns the length. */
size_t ts_format_seq(const dwl_ts *t, char *buf);

/* Date arithmetic helpers. */
dwl_ts ts_add_us(dwl_ts t, int64_t us);
dwl_ts ts_now(void);                    /* UTC now, whole seconds */
/* A duration of whole seconds as the job spec writes it: "1d", "1h30m",
 * "0s".  buf needs 32 bytes. */
void ts_format_duration(int64_t us, char *buf);

#define DWL_US_PER_SEC INT64_C(1000000)
#define DWL_US_PER_DAY (INT64_C(86400) * DWL_US_PER_SEC)

#endif
