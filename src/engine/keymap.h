/* Key map: the change engine's picture of the dimension's current
 * versions, keyed by the 128-bit fingerprint of the business key.  Holds
 * only fingerprints, valid_from and flags per key (never whole rows), so a
 * million current rows fit in well under 100 MB.  Open addressing with
 * linear probing; the table doubles at 70% load. */
#ifndef DWL_KEYMAP_H
#define DWL_KEYMAP_H

#include <stddef.h>
#include <stdint.h>
#include "fingerprint.h"

enum {
  KM_LIVE = 1,       /* the key has a current, not deleted version in the target */
  KM_TOMBSTONE = 2,  /* the key's current version is a tombstone (deleted) */
  KM_SEEN = 4,       /* the source delivered a row of this key in this run */
  KM_DELETE = 8,     /* chosen for deletion by absence */
  KM_LATE = 16,      /* has rows older than its history: waits for the history (scd_repair) */
  KM_GONE = 32,      /* no current version: deleted (expire style); valid_from holds the deletion time */
  KM_LMD = 64,       /* upsert: valid_from holds the stored row's lmd */
  KM_WALKED = 128    /* truncate_values: the delta has rows of this key, so its walk applies the truncates */
};

typedef struct km_entry {
  fp128 key;         /* fingerprint of the business key */
  fp128 fp2;         /* fingerprint of the type 2 values (upsert: all non-key values) */
  fp128 fp1;         /* fingerprint of the type 1 values */
  int64_t valid_from;/* microseconds, as in dwl_ts */
  uint32_t group;    /* engine's index of this key's row group + 1; 0 = none */
  uint8_t flags;
} km_entry;

/* Private apart from count: entries live densely in fixed-size chunks in
 * insertion order, and the open-addressing table holds only 8-byte
 * references to them, so table slack costs 8 bytes a slot, not 64. */
typedef struct keymap {
  km_entry **chunks; /* KM_CHUNK entries each; the last one partly used */
  size_t chunk_cap;  /* room in chunks[] */
  uint64_t *index;   /* slot: entry number + 1 (0 = empty) | hash tag << 32 */
  size_t cap;        /* index slots, a power of two (0 before the first put) */
  size_t count;      /* entries */
} keymap;

int keymap_init(keymap *m, size_t expected);   /* 0 or -1 (ENOMEM) */
void keymap_free(keymap *m);

/* Returns the entry for key, or NULL. */
km_entry *keymap_get(keymap *m, fp128 key);

/* Returns the entry for key, inserting a zeroed one (with .key set) when
 * absent; *created tells which.  NULL on ENOMEM.  Pointers returned earlier
 * are invalidated by an insert that grows the table. */
km_entry *keymap_put(keymap *m, fp128 key, int *created);

/* Iteration: for (size_t i = 0; (e = keymap_next(m, &i)); ) ... */
km_entry *keymap_next(keymap *m, size_t *iter);

/* Approximate bytes of memory held, for reporting. */
size_t keymap_bytes(const keymap *m);

#endif
