/* Owns the key map (keymap.h): business-key fingerprint -> km_entry.
 *
 * A 64-byte entry per slot of an open-addressing table at <= 70% load would
 * cost 90-180 bytes per key.  Instead entries sit densely, in insertion
 * order, in fixed-size chunks, and the linear-probing table holds 8-byte
 * slots: the entry number plus 32 bits of the key's hi word as a tag, so
 * probes past other keys (and every miss) stay inside the table and never
 * touch an entry.  About 64 + 8..23 bytes per key, and growth copies only
 * the table, never the entries. */
#include "keymap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* 4096 entries = 256 KiB: the chunk list stays tiny at millions of keys and
 * the unused tail of the last chunk is noise; glibc maps chunks this large
 * directly, so pages not yet written cost no memory at all. */
#define KM_CHUNK_SHIFT 12
#define KM_CHUNK ((size_t)1 << KM_CHUNK_SHIFT)
#define KM_MIN_CAP ((size_t)16)
/* A slot stores entry number + 1 in 32 bits, 0 meaning empty. */
#define KM_MAX_ENTRIES ((size_t)UINT32_MAX - 1)

/* The slot position comes from lo (uniformly distributed, per keymap.h);
 * the tag from hi, so the two are independent. */
static inline uint32_t km_tag(fp128 key) { return (uint32_t)key.hi; }

static inline uint64_t km_slot(fp128 key, size_t entry)
{
  return (uint64_t)km_tag(key) << 32 | (uint64_t)(entry + 1);
}

static inline km_entry *km_at(const keymap *m, size_t entry)
{
  return &m->chunks[entry >> KM_CHUNK_SHIFT][entry & (KM_CHUNK - 1)];
}

/* More than 70% of cap slots would be used by n entries. */
static inline int km_over(size_t n, size_t cap)
{
  return (uint64_t)n * 10 > (uint64_t)cap * 7;
}

/* Entry for key, or NULL with *hole set to the empty slot that ends its
 * probe sequence (where it would be inserted). */
static km_entry *km_lookup(const keymap *m, fp128 key, size_t *hole)
{
  size_t mask = m->cap - 1;
  uint32_t tag = km_tag(key);
  size_t s = (size_t)key.lo & mask;
  for (;;) {
    uint64_t v = m->index[s];
    if (v == 0) {
      *hole = s;
      return NULL;
    }
    if ((uint32_t)(v >> 32) == tag) {
      km_entry *e = km_at(m, (size_t)(uint32_t)v - 1);
      if (fp_eq(e->key, key))
        return e;
    }
    s = (s + 1) & mask;
  }
}

/* Replaces the table by one of newcap slots, rebuilt from the entries in
 * order: reading them sequentially is cheaper than chasing the old table. */
static int km_rehash(keymap *m, size_t newcap)
{
  uint64_t *ix = calloc(newcap, sizeof *ix);
  if (ix == NULL) {
    errno = ENOMEM;
    return -1;
  }
  size_t mask = newcap - 1;
  for (size_t i = 0; i < m->count; i++) {
    fp128 k = km_at(m, i)->key;
    size_t s = (size_t)k.lo & mask;
    while (ix[s] != 0)
      s = (s + 1) & mask;
    ix[s] = km_slot(k, i);
  }
  free(m->index);
  m->index = ix;
  m->cap = newcap;
  return 0;
}

/* Makes room in chunks[] for chunk number c and allocates that chunk.
 * Unused pointers are kept NULL so that a chunk allocated by an insert that
 * then failed is reused later and freed by keymap_free, never leaked. */
static int km_chunk(keymap *m, size_t c)
{
  if (c >= m->chunk_cap) {
    size_t ncap = m->chunk_cap ? m->chunk_cap * 2 : 4;
    while (ncap <= c)
      ncap *= 2;
    km_entry **p = realloc(m->chunks, ncap * sizeof *p);
    if (p == NULL) {
      errno = ENOMEM;
      return -1;
    }
    memset(p + m->chunk_cap, 0, (ncap - m->chunk_cap) * sizeof *p);
    m->chunks = p;
    m->chunk_cap = ncap;
  }
  if (m->chunks[c] == NULL) {
    /* Not calloc: entries are zeroed one by one as they are handed out, so
     * the pages of a fresh chunk are only touched when used. */
    m->chunks[c] = malloc(KM_CHUNK * sizeof(km_entry));
    if (m->chunks[c] == NULL) {
      errno = ENOMEM;
      return -1;
    }
  }
  return 0;
}

int keymap_init(keymap *m, size_t expected)
{
  memset(m, 0, sizeof *m);
  if (expected > KM_MAX_ENTRIES) {
    errno = ENOMEM;
    return -1;
  }
  size_t cap = KM_MIN_CAP;
  while (km_over(expected, cap))
    cap *= 2;
  if (km_rehash(m, cap) != 0)
    return -1;
  size_t nchunks = (expected + KM_CHUNK - 1) >> KM_CHUNK_SHIFT;
  if (nchunks > 0) {
    m->chunks = calloc(nchunks, sizeof *m->chunks);
    if (m->chunks == NULL) {
      keymap_free(m);
      errno = ENOMEM;
      return -1;
    }
    m->chunk_cap = nchunks;
  }
  return 0;
}

void keymap_free(keymap *m)
{
  for (size_t c = 0; c < m->chunk_cap; c++)
    free(m->chunks[c]);
  free(m->chunks);
  free(m->index);
  memset(m, 0, sizeof *m);
}

km_entry *keymap_get(keymap *m, fp128 key)
{
  size_t hole;
  if (m->cap == 0)
    return NULL;
  return km_lookup(m, key, &hole);
}

km_entry *keymap_put(keymap *m, fp128 key, int *created)
{
  size_t hole = 0;
  if (m->cap > 0) {
    km_entry *e = km_lookup(m, key, &hole);
    if (e != NULL) {
      if (created)
        *created = 0;
      return e;
    }
  }
  if (m->count >= KM_MAX_ENTRIES) {
    errno = ENOMEM;
    return NULL;
  }
  if (m->cap == 0 || km_over(m->count + 1, m->cap)) {
    size_t ncap = m->cap ? m->cap * 2 : KM_MIN_CAP;
    if (ncap < m->cap || km_rehash(m, ncap) != 0) {
      errno = ENOMEM;
      return NULL;
    }
    /* The hole found above belonged to the old table. */
    km_lookup(m, key, &hole);
  }
  size_t n = m->count;
  if (km_chunk(m, n >> KM_CHUNK_SHIFT) != 0)
    return NULL;

  km_entry *e = km_at(m, n);
  memset(e, 0, sizeof *e);
  e->key = key;
  m->index[hole] = km_slot(key, n);
  m->count = n + 1;
  if (created)
    *created = 1;
  return e;
}

km_entry *keymap_next(keymap *m, size_t *iter)
{
  if (*iter >= m->count)
    return NULL;
  return km_at(m, (*iter)++);
}

size_t keymap_bytes(const keymap *m)
{
  size_t chunks = 0;
  for (size_t c = 0; c < m->chunk_cap; c++)
    chunks += m->chunks[c] != NULL;
  return sizeof *m + m->cap * sizeof *m->index + m->chunk_cap * sizeof *m->chunks +
         chunks * KM_CHUNK * sizeof(km_entry);
}
