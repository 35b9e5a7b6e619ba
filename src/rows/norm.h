/* Canonical text of a value for its declared type.  The same function runs
 * on source values before they are fingerprinted or written, and on values
 * read back from the target, so a value compares equal to itself after a
 * round trip through any warehouse ("042" and 42 in an integer column,
 * "t" and 1 in a boolean column, "2020-01-01" and "2020-01-01 00:00:00" in
 * a timestamp column). */
#ifndef DWL_NORM_H
#define DWL_NORM_H

#include <stddef.h>
#include "buf.h"
#include "dwload/plugin.h"

/* Normalizes `in` (len bytes, not necessarily NUL-terminated) for a column
 * of type `type` (enum dwl_type).  On success returns 0 and sets *out and
 * *outlen, pointing either into `in` (TEXT, already canonical) or into
 * `scratch` (reset and reused by the call).  On failure returns -1 and sets
 * *why to a static reason such as "not an integer".
 *
 * Canonical forms:
 *   TEXT       unchanged
 *   INTEGER    [-]digits, no '+', no leading zeros, "-0" -> "0"; 64-bit range
 *   NUMERIC    [-]digits[.digits] without leading zeros in the integer part
 *              (one "0" kept) and without trailing zeros in the fraction
 *              (the '.' is dropped when nothing remains); "-0" -> "0";
 *              exponents ("1e3") are refused
 *   REAL       shortest of %.15g / %.17g that reads back to the same double
 *   BOOLEAN    "1" or "0" from true/false/t/f/yes/no/y/n/1/0 (any case)
 *   DATE       "YYYY-MM-DD" (a timestamp at midnight is accepted)
 *   TIMESTAMP  "YYYY-MM-DD HH:MM:SS[.ffffff]" (ts_parse input forms)
 */
int norm_value(int type, const char *in, size_t len, dwl_buf *scratch,
               const char **out, size_t *outlen, const char **why);

/* norm_value for a column: NUMERIC with a known precision and scale is
 * then written with exactly `scale` decimals ("2.8" -> "2.80" for
 * numeric(7,2)), the way PostgreSQL and MariaDB print it, and a value with
 * more decimals or more integer digits than the type holds is refused
 * rather than rounded. */
int norm_value_col(const dwl_column *col, const char *in, size_t len, dwl_buf *scratch, const char **out,
                   size_t *outlen, const char **why);

/* norm_value_col for a value read back from the warehouse: a numeric in
 * exponent form ("1.0e-06", SQLite's text of a REAL in a NUMERIC column)
 * is first written out as plain decimal text, exactly. */
int norm_stored_col(const dwl_column *col, const char *in, size_t len, dwl_buf *scratch, const char **out,
                    size_t *outlen, const char **why);

/* 0 when canonical numeric text fits numeric(precision,scale), else -1
 * with *why saying which limit it exceeds. */
int norm_numeric_fits(const char *s, size_t len, int precision, int scale, const char **why);

/* Significant digits of decimal text: from the first non-zero digit to
 * the last ("0.00120" has 2, "100" 1); 0 for zero. */
size_t norm_sig_digits(const char *s, size_t len);

#endif
