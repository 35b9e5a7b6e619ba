/* Bloom filter of key fingerprints (bloom.h).  The fingerprints' bits are
 * uniform already (XXH3-128), so the probes are derived from them by
 * double hashing rather than hashed again; the spill partitions take the
 * high half modulo their count, the probes mix both halves. */
#include "bloom.h"

#include <stdlib.h>

#define BLOOM_PROBES 3
#define BLOOM_MIN_BYTES 4096

int bloom_init(bloom *b, size_t bytes)
{
  size_t n = BLOOM_MIN_BYTES;
  while (n <= bytes / 2)
    n *= 2;
  /* calloc: pages untouched stay unallocated until a key sets a bit there */
  b->bits = calloc(n / sizeof *b->bits, sizeof *b->bits);
  b->mask = (uint64_t)n * 8 - 1;
  b->bytes = b->bits ? n : 0;
  return b->bits ? 0 : -1;
}

void bloom_free(bloom *b)
{
  free(b->bits);
  b->bits = NULL;
  b->bytes = 0;
}

static uint64_t probe(fp128 key, int i)
{
  uint64_t h1 = key.lo ^ (key.hi >> 17), h2 = (key.hi * 0x9E3779B97F4A7C15ULL) | 1;
  return h1 + (uint64_t)i * h2;
}

void bloom_add(bloom *b, fp128 key)
{
  for (int i = 0; i < BLOOM_PROBES; i++) {
    uint64_t bit = probe(key, i) & b->mask;
    b->bits[bit >> 6] |= 1ULL << (bit & 63);
  }
}

int bloom_has(const bloom *b, fp128 key)
{
  for (int i = 0; i < BLOOM_PROBES; i++) {
    uint64_t bit = probe(key, i) & b->mask;
    if (!(b->bits[bit >> 6] & (1ULL << (bit & 63))))
      return 0;
  }
  return 1;
}
