/* A Bloom filter of business keys' fingerprints: a fixed amount of memory
 * that answers "maybe seen" or "certainly not seen".  The streamed initial
 * load (cmd/run_stream.c) asks it whether a row's key was already written:
 * a false "maybe" only sends a row the slower way, so the filter's size
 * bounds memory, not correctness. */
#ifndef DWL_BLOOM_H
#define DWL_BLOOM_H

#include <stddef.h>
#include <stdint.h>

#include "fingerprint.h"

typedef struct bloom {
  uint64_t *bits;
  uint64_t mask;  /* bit count - 1 (a power of two) */
  size_t bytes;
} bloom;

/* At most `bytes` of bits (rounded down to a power of two, at least
 * 4 KiB); 0 or -1 (out of memory). */
int bloom_init(bloom *b, size_t bytes);
void bloom_free(bloom *b);
void bloom_add(bloom *b, fp128 key);
/* 1: maybe added; 0: never added. */
int bloom_has(const bloom *b, fp128 key);

#endif
