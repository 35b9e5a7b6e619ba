/* Fingerprints of value tuples: XXH3-128 (libxxhash) over an unambiguous
 * encoding, so ("ab","c") differs from ("a","bc") and NULL differs from "".
 * Used for change detection (tracked values) and for business keys. */
#ifndef DWL_FINGERPRINT_H
#define DWL_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>
#include "dwload/plugin.h"

typedef struct fp128 {
  uint64_t lo, hi;
} fp128;

/* Fingerprint of the values vals[idx[0]], vals[idx[1]], ... (n indexes).
 * Each value is encoded as 0x00 for NULL, or 0x01, its length as 8 bytes
 * little-endian, then its bytes.  n == 0 gives the fingerprint of the empty
 * tuple (a fixed value). */
fp128 fp_tuple(const dwl_value *vals, const size_t *idx, size_t n);

/* The same over a plain array of n values. */
fp128 fp_values(const dwl_value *vals, size_t n);

static inline int fp_eq(fp128 a, fp128 b) { return a.lo == b.lo && a.hi == b.hi; }

/* qsort/bsearch order of fingerprints (a const fp128 * each). */
static inline int fp_cmp(const void *a, const void *b)
{
  const fp128 *x = a, *y = b;
  if (x->hi != y->hi)
    return x->hi < y->hi ? -1 : 1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* SHA-256 (OpenSSL libcrypto) over the same encoding of vals[idx[..]]
 * followed by the encoding of `extra` (len bytes, never NULL), as 64
 * lowercase hex characters plus NUL in out[65].  Used for hash surrogate
 * keys: key values and valid_from. */
void fp_sha256_hex(const dwl_value *vals, const size_t *idx, size_t n, const char *extra, size_t extra_len,
                   char out[65]);

#endif
