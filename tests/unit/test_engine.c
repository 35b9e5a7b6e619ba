/* Unit tests for the change engine's building blocks: src/rows/fingerprint.c
 * (fp_* cases) and src/engine/keymap.c (keymap_* cases).  Hard-coded digests were
 * computed outside this code base with xxh128sum (xxhash 0.8.1 CLI) and
 * sha256sum over the encoded bytes written out by hand with printf; each
 * test says which bytes.  xxh128sum prints the high 64 bits first. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "check_main.h"
#include "fingerprint.h"
#include "keymap.h"

/* ---- helpers -------------------------------------------------------------- */

static dwl_value str(const char *s)
{
  dwl_value v = {s, strlen(s), 0};
  return v;
}

static dwl_value bytes(const char *s, size_t len)
{
  dwl_value v = {s, len, 0};
  return v;
}

static const dwl_value null_value = {NULL, 0, 1};

static void assert_fp_is(fp128 got, uint64_t hi, uint64_t lo)
{
  ck_assert_msg(got.hi == hi && got.lo == lo, "got hi %016llx lo %016llx, want hi %016llx lo %016llx",
                (unsigned long long)got.hi, (unsigned long long)got.lo, (unsigned long long)hi,
                (unsigned long long)lo);
}

/* Deterministic pseudo-random 64-bit words (splitmix64), so a failure
 * reproduces. */
static uint64_t rnd(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static fp128 rnd_key(uint64_t *s)
{
  fp128 k;
  k.lo = rnd(s);
  k.hi = rnd(s);
  return k;
}

/* The encoding built independently of fingerprint.c, for comparing against
 * the one-shot library hash. */
static size_t encode_ref(unsigned char *out, const dwl_value *v, size_t n)
{
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i].is_null) {
      out[o++] = 0;
      continue;
    }
    out[o++] = 1;
    for (int b = 0; b < 8; b++)
      out[o++] = (unsigned char)((uint64_t)v[i].len >> (8 * b));
    memcpy(out + o, v[i].data, v[i].len);
    o += v[i].len;
  }
  return o;
}

/* ---- fp_*: XXH3-128 tuple fingerprints ----------------------------------- */

START_TEST(fp_boundary_shift)
{
  dwl_value a[] = {str("ab"), str("c")};
  dwl_value b[] = {str("a"), str("bc")};
  ck_assert(!fp_eq(fp_values(a, 2), fp_values(b, 2)));
}
END_TEST

START_TEST(fp_null_vs_empty)
{
  dwl_value empty = str("");
  ck_assert(!fp_eq(fp_values(&null_value, 1), fp_values(&empty, 1)));
  /* Neither collapses into the empty tuple. */
  ck_assert(!fp_eq(fp_values(&null_value, 1), fp_values(NULL, 0)));
  ck_assert(!fp_eq(fp_values(&empty, 1), fp_values(NULL, 0)));
}
END_TEST

START_TEST(fp_null_position)
{
  dwl_value a[] = {null_value, str("x")};
  dwl_value b[] = {str("x"), null_value};
  ck_assert(!fp_eq(fp_values(a, 2), fp_values(b, 2)));
}
END_TEST

START_TEST(fp_equal_tuples)
{
  /* Same content in different buffers: only bytes count, not addresses. */
  char buf1[] = "hello", buf2[] = "hello";
  dwl_value a[] = {bytes(buf1, 5), null_value, str("42")};
  dwl_value b[] = {bytes(buf2, 5), {"ignored", 7, 1}, str("42")};
  ck_assert(fp_eq(fp_values(a, 3), fp_values(b, 3)));
  size_t idx[] = {0, 1, 2};
  ck_assert(fp_eq(fp_tuple(a, idx, 3), fp_values(b, 3)));
}
END_TEST

START_TEST(fp_embedded_nul)
{
  dwl_value a = bytes("a\0b", 3);
  dwl_value b = bytes("a\0c", 3);
  dwl_value c = bytes("a", 1);
  ck_assert(!fp_eq(fp_values(&a, 1), fp_values(&b, 1)));
  ck_assert(!fp_eq(fp_values(&a, 1), fp_values(&c, 1)));
}
END_TEST

START_TEST(fp_idx_selection)
{
  dwl_value row[] = {str("r0"), str("r1"), str("r2"), str("r3"), str("r4")};
  size_t idx[] = {3, 1};
  dwl_value picked[] = {str("r3"), str("r1")};
  fp128 f = fp_tuple(row, idx, 2);
  ck_assert(fp_eq(f, fp_values(picked, 2)));

  row[0] = str("changed");  /* not selected: no effect */
  row[4] = null_value;
  ck_assert(fp_eq(fp_tuple(row, idx, 2), f));
  row[1] = str("r1!");      /* selected: changes it */
  ck_assert(!fp_eq(fp_tuple(row, idx, 2), f));
}
END_TEST

START_TEST(fp_order_matters)
{
  dwl_value row[] = {str("x"), str("y")};
  size_t fwd[] = {0, 1}, rev[] = {1, 0};
  ck_assert(!fp_eq(fp_tuple(row, fwd, 2), fp_tuple(row, rev, 2)));
}
END_TEST

START_TEST(fp_empty_tuple_stable)
{
  /* The empty tuple encodes to no bytes: `printf '' | xxh128sum`. */
  dwl_value row[] = {str("unused")};
  size_t idx[] = {0};
  assert_fp_is(fp_values(NULL, 0), 0x99aa06d3014798d8ULL, 0x6001c324468d497fULL);
  ck_assert(fp_eq(fp_tuple(row, idx, 0), fp_values(NULL, 0)));
  ck_assert(fp_eq(fp_tuple(NULL, NULL, 0), fp_values(row, 0)));
}
END_TEST

START_TEST(fp_known_vector)
{
  /* ("ab", NULL, ""):
   * printf '\x01\x02\x00\x00\x00\x00\x00\x00\x00ab\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00' | xxh128sum
   * -> 378bc11f7c9edb2cff6f179649946307 */
  dwl_value row[] = {str("ab"), null_value, str("")};
  assert_fp_is(fp_values(row, 3), 0x378bc11f7c9edb2cULL, 0xff6f179649946307ULL);
}
END_TEST

START_TEST(fp_long_value_vector)
{
  /* ("a" x 100000, NULL, "x\0y"), longer than any internal buffer: the file
   * written by python3 as 01 | (100000).to_bytes(8,'little') | b'a'*100000 |
   * 00 | 01 | (3).to_bytes(8,'little') | b'x\0y', then xxh128sum
   * -> f2d91006f09fcdfb172cffe85da99a2e */
  char *big = malloc(100000);
  ck_assert_ptr_nonnull(big);
  memset(big, 'a', 100000);
  dwl_value row[] = {bytes(big, 100000), null_value, bytes("x\0y", 3)};
  assert_fp_is(fp_values(row, 3), 0xf2d91006f09fcdfbULL, 0x172cffe85da99a2eULL);
  free(big);
}
END_TEST

START_TEST(fp_buffer_boundaries)
{
  /* Tuples whose encodings end just below, at and just above every likely
   * buffer size must hash exactly like the contiguous encoding. */
  enum { MAXV = 1100 };
  static char data[MAXV];
  static unsigned char enc[4 * (MAXV + 9)];
  for (size_t i = 0; i < MAXV; i++)
    data[i] = (char)(i * 7 + 1);
  static const size_t lens[] = {0, 1, 9, 100, 230, 231, 239, 240, 241, 246, 247, 248, 255, 256, 257,
                                494, 502, 503, 504, 511, 512, 513, 1000, 1023, 1024, 1025, 1100};
  size_t nl = sizeof lens / sizeof lens[0];
  for (size_t i = 0; i < nl; i++)
    for (size_t j = 0; j < nl; j++) {
      dwl_value row[] = {bytes(data, lens[i]), null_value, bytes(data + 3, lens[j] > 3 ? lens[j] - 3 : 0),
                         bytes(data, lens[(i + j) % nl])};
      size_t n = encode_ref(enc, row, 4);
      XXH128_hash_t want = XXH3_128bits(enc, n);
      assert_fp_is(fp_values(row, 4), want.high64, want.low64);
    }
}
END_TEST

/* ---- fp_*: SHA-256 surrogate keys ----------------------------------------- */

START_TEST(fp_sha256_known)
{
  /* ("ab", NULL) then extra "2024-01-01":
   * printf '\x01\x02\x00\x00\x00\x00\x00\x00\x00ab\x00\x01\x0a\x00\x00\x00\x00\x00\x00\x002024-01-01' | sha256sum */
  dwl_value row[] = {null_value, str("zz"), str("ab")};
  size_t idx[] = {2, 0};
  char out[65];
  memset(out, 'X', sizeof out);
  fp_sha256_hex(row, idx, 2, "2024-01-01", 10, out);
  ck_assert_str_eq(out, "710e95fc322de3ac2cb6ec48f2d974a4395d336335c95675e31f701bf2ff361b");
}
END_TEST

START_TEST(fp_sha256_extra_only)
{
  /* No key values, extra "2024-01-01":
   * printf '\x01\x0a\x00\x00\x00\x00\x00\x00\x002024-01-01' | sha256sum */
  char out[65];
  fp_sha256_hex(NULL, NULL, 0, "2024-01-01", 10, out);
  ck_assert_str_eq(out, "d5624dda58689fb4573ad47382f853ae9be5fdaa49ddd6dc77cee5d72a36878a");
}
END_TEST

START_TEST(fp_sha256_long)
{
  /* ("a" x 100000, NULL) then extra "Z": python3 writes 01 |
   * (100000).to_bytes(8,'little') | b'a'*100000 | 00 | 01 |
   * (1).to_bytes(8,'little') | b'Z', piped to sha256sum. */
  char *big = malloc(100000);
  ck_assert_ptr_nonnull(big);
  memset(big, 'a', 100000);
  dwl_value row[] = {bytes(big, 100000), null_value};
  size_t idx[] = {0, 1};
  char out[65];
  fp_sha256_hex(row, idx, 2, "Z", 1, out);
  ck_assert_str_eq(out, "51b7e7e50312f0b906fe0820af1ffb4048b905d370c6a4118fa7b9a4745a7457");
  free(big);
}
END_TEST

START_TEST(fp_sha256_distinguishes)
{
  dwl_value row[] = {str("ab"), str("a")};
  size_t i0[] = {0}, i1[] = {1};
  char a[65], b[65], c[65];
  /* The boundary between the key values and extra is kept. */
  fp_sha256_hex(row, i0, 1, "c", 1, a);
  fp_sha256_hex(row, i1, 1, "bc", 2, b);
  ck_assert_str_ne(a, b);
  /* A different valid_from gives a different key. */
  fp_sha256_hex(row, i0, 1, "d", 1, c);
  ck_assert_str_ne(a, c);
  ck_assert_uint_eq(strlen(a), 64);
  ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 64);
}
END_TEST

/* ---- keymap_* ------------------------------------------------------------- */

START_TEST(keymap_put_get_created)
{
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 0), 0);
  fp128 k = {11, 22};
  ck_assert_ptr_null(keymap_get(&m, k));

  int created = -1;
  km_entry *e = keymap_put(&m, k, &created);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(created, 1);
  ck_assert(fp_eq(e->key, k));
  /* A new entry is zeroed apart from its key. */
  ck_assert(e->fp1.lo == 0 && e->fp1.hi == 0 && e->fp2.lo == 0 && e->fp2.hi == 0);
  ck_assert(e->valid_from == 0 && e->group == 0 && e->flags == 0);
  e->valid_from = 123456789;
  e->flags = KM_LIVE | KM_SEEN;

  created = -1;
  km_entry *again = keymap_put(&m, k, &created);
  ck_assert_int_eq(created, 0);
  ck_assert_ptr_eq(again, e);
  ck_assert_ptr_eq(keymap_get(&m, k), e);
  ck_assert_int_eq(again->valid_from, 123456789);
  ck_assert_uint_eq(m.count, 1);

  fp128 other = {22, 11};
  ck_assert_ptr_null(keymap_get(&m, other));
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_zeroed_struct)
{
  /* A zero-initialised map works without keymap_init, and freeing twice is
   * harmless: error paths need not track what they initialised. */
  keymap m;
  memset(&m, 0, sizeof m);
  fp128 k = {1, 2};
  ck_assert_ptr_null(keymap_get(&m, k));
  size_t it = 0;
  ck_assert_ptr_null(keymap_next(&m, &it));
  int created = 0;
  ck_assert_ptr_nonnull(keymap_put(&m, k, &created));
  ck_assert_int_eq(created, 1);
  ck_assert_ptr_nonnull(keymap_get(&m, k));
  keymap_free(&m);
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_random_100k)
{
  enum { N = 100000 };
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 0), 0);
  uint64_t s = 42;
  for (uint32_t i = 0; i < N; i++) {
    int created = 0;
    km_entry *e = keymap_put(&m, rnd_key(&s), &created);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(created, 1);
    e->group = i + 1;
  }
  ck_assert_uint_eq(m.count, N);

  s = 42;
  for (uint32_t i = 0; i < N; i++) {
    fp128 k = rnd_key(&s);
    km_entry *e = keymap_get(&m, k);
    ck_assert_ptr_nonnull(e);
    ck_assert(fp_eq(e->key, k));
    ck_assert_uint_eq(e->group, i + 1);
  }
  uint64_t t = 4242;
  for (uint32_t i = 0; i < N; i++)
    ck_assert_ptr_null(keymap_get(&m, rnd_key(&t)));
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_growth_keeps_entries)
{
  enum { N = 20000 };
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 1), 0);
  size_t cap0 = m.cap;
  for (uint32_t i = 0; i < N; i++) {
    /* Keys that share most bits, so probe sequences run long. */
    fp128 k = {(uint64_t)i << 20, 7};
    km_entry *e = keymap_put(&m, k, NULL);
    ck_assert_ptr_nonnull(e);
    e->fp1 = (fp128){i, ~(uint64_t)i};
    e->fp2 = (fp128){(uint64_t)i * 3, 5};
    e->valid_from = -(int64_t)i;
    e->group = i;
    e->flags = (uint8_t)(i & 31);
  }
  ck_assert_uint_gt(m.cap, cap0);
  for (uint32_t i = 0; i < N; i++) {
    fp128 k = {(uint64_t)i << 20, 7};
    km_entry *e = keymap_get(&m, k);
    ck_assert_ptr_nonnull(e);
    ck_assert(e->fp1.lo == i && e->fp1.hi == ~(uint64_t)i);
    ck_assert(e->fp2.lo == (uint64_t)i * 3 && e->fp2.hi == 5);
    ck_assert_int_eq(e->valid_from, -(int64_t)i);
    ck_assert_uint_eq(e->group, i);
    ck_assert_uint_eq(e->flags, i & 31);
  }
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_iterates_each_once)
{
  enum { N = 10000 };
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 0), 0);
  uint64_t s = 7;
  for (uint32_t i = 0; i < N; i++) {
    km_entry *e = keymap_put(&m, rnd_key(&s), NULL);
    ck_assert_ptr_nonnull(e);
    e->group = i + 1;
  }
  unsigned char *seen = calloc(N, 1);
  ck_assert_ptr_nonnull(seen);
  size_t visits = 0;
  km_entry *e;
  for (size_t it = 0; (e = keymap_next(&m, &it));) {
    ck_assert_uint_ge(e->group, 1);
    ck_assert_uint_le(e->group, N);
    ck_assert_int_eq(seen[e->group - 1], 0);
    seen[e->group - 1] = 1;
    ck_assert_ptr_eq(keymap_get(&m, e->key), e);
    visits++;
  }
  ck_assert_uint_eq(visits, N);
  free(seen);
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_zero_key)
{
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 0), 0);
  fp128 zero = {0, 0};
  ck_assert_ptr_null(keymap_get(&m, zero));
  int created = 0;
  km_entry *e = keymap_put(&m, zero, &created);
  ck_assert_ptr_nonnull(e);
  ck_assert_int_eq(created, 1);
  e->group = 99;
  /* Neighbours that probe through the same slots. */
  for (uint64_t i = 1; i <= 100; i++)
    ck_assert_ptr_nonnull(keymap_put(&m, (fp128){i << 32, 0}, NULL));
  e = keymap_put(&m, zero, &created);
  ck_assert_int_eq(created, 0);
  ck_assert_uint_eq(e->group, 99);
  ck_assert_uint_eq(m.count, 101);

  size_t zeros = 0;
  for (size_t it = 0; (e = keymap_next(&m, &it));)
    zeros += e->key.lo == 0 && e->key.hi == 0;
  ck_assert_uint_eq(zeros, 1);
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_shared_lo_or_tag)
{
  /* Same lo (same home slot) or same low 32 bits of hi (any tag the table
   * might keep): all distinct keys all the same. */
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 0), 0);
  for (uint64_t i = 0; i < 500; i++) {
    ck_assert_ptr_nonnull(keymap_put(&m, (fp128){12345, i}, NULL));
    ck_assert_ptr_nonnull(keymap_put(&m, (fp128){12345, 77 | (i + 1) << 32}, NULL));
    ck_assert_ptr_nonnull(keymap_put(&m, (fp128){i << 40, 77}, NULL));
  }
  ck_assert_uint_eq(m.count, 1500);
  for (uint64_t i = 0; i < 500; i++) {
    fp128 a = {12345, i}, b = {12345, 77 | (i + 1) << 32}, c = {i << 40, 77};
    ck_assert(fp_eq(keymap_get(&m, a)->key, a));
    ck_assert(fp_eq(keymap_get(&m, b)->key, b));
    ck_assert(fp_eq(keymap_get(&m, c)->key, c));
  }
  ck_assert_ptr_null(keymap_get(&m, (fp128){12345, 500}));
  ck_assert_ptr_null(keymap_get(&m, (fp128){1, 77}));
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_bytes_grows)
{
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 0), 0);
  size_t empty = keymap_bytes(&m);
  ck_assert_uint_gt(empty, 0);
  ck_assert_uint_lt(empty, 4096);

  uint64_t s = 99;
  size_t prev = empty;
  for (size_t i = 1; i <= 200000; i++) {
    ck_assert_ptr_nonnull(keymap_put(&m, rnd_key(&s), NULL));
    size_t b = keymap_bytes(&m);
    ck_assert_uint_ge(b, prev);
    /* Never less than the entries themselves. */
    ck_assert_uint_ge(b, i * sizeof(km_entry));
    prev = b;
  }
  /* 64-byte entries plus table slack stay within the budget of keymap.h. */
  ck_assert_uint_le(prev, 200000 * 100);
  keymap_free(&m);
}
END_TEST

START_TEST(keymap_presized)
{
  keymap m;
  ck_assert_int_eq(keymap_init(&m, 50000), 0);
  size_t cap = m.cap;
  uint64_t s = 5;
  for (int i = 0; i < 50000; i++)
    ck_assert_ptr_nonnull(keymap_put(&m, rnd_key(&s), NULL));
  ck_assert_uint_eq(m.cap, cap);  /* no rehash for the announced size */
  ck_assert_ptr_nonnull(keymap_put(&m, rnd_key(&s), NULL));
  keymap_free(&m);
}
END_TEST

/* ---- suite ---------------------------------------------------------------- */

static TCase *fp_tcase(void)
{
  TCase *tc = tcase_create("fp");
  tcase_add_test(tc, fp_boundary_shift);
  tcase_add_test(tc, fp_null_vs_empty);
  tcase_add_test(tc, fp_null_position);
  tcase_add_test(tc, fp_equal_tuples);
  tcase_add_test(tc, fp_embedded_nul);
  tcase_add_test(tc, fp_idx_selection);
  tcase_add_test(tc, fp_order_matters);
  tcase_add_test(tc, fp_empty_tuple_stable);
  tcase_add_test(tc, fp_known_vector);
  tcase_add_test(tc, fp_long_value_vector);
  tcase_add_test(tc, fp_buffer_boundaries);
  tcase_add_test(tc, fp_sha256_known);
  tcase_add_test(tc, fp_sha256_extra_only);
  tcase_add_test(tc, fp_sha256_long);
  tcase_add_test(tc, fp_sha256_distinguishes);
  return tc;
}

static TCase *keymap_tcase(void)
{
  TCase *tc = tcase_create("keymap");
  /* Valgrind runs of the 100k/200k cases need more than the default 4 s. */
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, keymap_put_get_created);
  tcase_add_test(tc, keymap_zeroed_struct);
  tcase_add_test(tc, keymap_random_100k);
  tcase_add_test(tc, keymap_growth_keeps_entries);
  tcase_add_test(tc, keymap_iterates_each_once);
  tcase_add_test(tc, keymap_zero_key);
  tcase_add_test(tc, keymap_shared_lo_or_tag);
  tcase_add_test(tc, keymap_bytes_grows);
  tcase_add_test(tc, keymap_presized);
  return tc;
}

/* Other parts of the engine append their TCases here. */
static Suite *make_suite(void)
{
  Suite *s = suite_create("engine");
  suite_add_tcase(s, fp_tcase());
  suite_add_tcase(s, keymap_tcase());
  return s;
}
