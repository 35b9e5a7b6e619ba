/* Owns value-tuple fingerprints: XXH3-128 (libxxhash) for change detection
 * and business keys, SHA-256 (libcrypto) for hash surrogate keys, both over
 * the self-delimiting encoding that fingerprint.h specifies. */
#include "fingerprint.h"

#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* fp_tuple runs once per row per fingerprint.  A typical key or set of
 * tracked values encodes into far less than this, so the whole encoding is
 * built on the stack and hashed by the one-shot XXH3 call, which skips the
 * streaming state (its setup costs more than hashing ~100 bytes).  Only a
 * tuple that outgrows the buffer spills into a streaming hash. */
#define ENC_BUF 512

/* Tag (1 byte) plus length (8 bytes) in front of every non-NULL value. */
#define ENC_HDR 9

typedef struct enc enc;
typedef void (*enc_spill_fn)(enc *e, const void *p, size_t len);

typedef struct enc {
  unsigned char buf[ENC_BUF];
  size_t n;
  enc_spill_fn spill;  /* feeds bytes that no longer fit to the streaming hash */
  void *ctx;           /* XXH3_state_t (created on the first spill) or EVP_MD_CTX */
} enc;

/* The API has no error channel and a wrong fingerprint would silently
 * corrupt the target (rows merged or versions invented), so running out of
 * memory or a libcrypto failure here is fatal. */
static _Noreturn void fp_fatal(const char *what)
{
  fprintf(stderr, "dwload: fingerprint: %s\n", what);
  abort();
}

static void enc_put(enc *e, const void *p, size_t len)
{
  if (len <= ENC_BUF - e->n) {
    if (len > 0)
      memcpy(e->buf + e->n, p, len);
    e->n += len;
    return;
  }
  if (e->n > 0) {
    e->spill(e, e->buf, e->n);
    e->n = 0;
  }
  if (len < ENC_BUF) {
    memcpy(e->buf, p, len);
    e->n = len;
  } else {
    /* Large values go straight to the hash rather than through the buffer. */
    e->spill(e, p, len);
  }
}

static void enc_header(unsigned char *h, size_t len)
{
  uint64_t l = (uint64_t)len;
  h[0] = 0x01;
  /* Spelled out byte by byte so the encoding is little-endian on any host. */
  for (int i = 0; i < 8; i++)
    h[1 + i] = (unsigned char)(l >> (8 * i));
}

static void enc_value(enc *e, const dwl_value *v)
{
  if (v->is_null) {
    static const unsigned char null_tag = 0x00;
    enc_put(e, &null_tag, 1);
    return;
  }
  if (v->len <= ENC_BUF - ENC_HDR && ENC_HDR + v->len <= ENC_BUF - e->n) {
    /* Common case: header and bytes land in the buffer directly. */
    enc_header(e->buf + e->n, v->len);
    if (v->len > 0)
      memcpy(e->buf + e->n + ENC_HDR, v->data, v->len);
    e->n += ENC_HDR + v->len;
    return;
  }
  unsigned char h[ENC_HDR];
  enc_header(h, v->len);
  enc_put(e, h, sizeof h);
  enc_put(e, v->data, v->len);
}

/* XXH_STATIC_LINKING_ONLY would allow a stack state, but xxhash.h forbids
 * that with the shared library (the struct layout may change under us), so
 * the rare long tuple pays for one allocation instead. */
static void xxh_spill(enc *e, const void *p, size_t len)
{
  if (e->ctx == NULL) {
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
      fp_fatal("out of memory");
    XXH3_128bits_reset(st);
    e->ctx = st;
  }
  XXH3_128bits_update(e->ctx, p, len);
}

static fp128 xxh_finish(enc *e)
{
  XXH128_hash_t h;
  if (e->ctx == NULL) {
    h = XXH3_128bits(e->buf, e->n);
  } else {
    XXH3_state_t *st = e->ctx;
    XXH3_128bits_update(st, e->buf, e->n);
    h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
  }
  return (fp128){h.low64, h.high64};
}

fp128 fp_tuple(const dwl_value *vals, const size_t *idx, size_t n)
{
  enc e;
  e.n = 0;
  e.spill = xxh_spill;
  e.ctx = NULL;
  for (size_t i = 0; i < n; i++)
    enc_value(&e, &vals[idx[i]]);
  return xxh_finish(&e);
}

fp128 fp_values(const dwl_value *vals, size_t n)
{
  enc e;
  e.n = 0;
  e.spill = xxh_spill;
  e.ctx = NULL;
  for (size_t i = 0; i < n; i++)
    enc_value(&e, &vals[i]);
  return xxh_finish(&e);
}

#if OPENSSL_VERSION_MAJOR >= 3
/* With OpenSSL 3, EVP_sha256() makes every EVP_DigestInit_ex look the
 * algorithm up in the provider store again, which more than doubled the
 * cost of a short digest (about 290 vs 125 ns); so the algorithm is fetched
 * once and kept for the life of the process.  Atomic because nothing says
 * the first call happens on one thread: a loser of the race frees its copy. */
static _Atomic(EVP_MD *) sha256_md;

static const EVP_MD *sha256(void)
{
  EVP_MD *md = atomic_load_explicit(&sha256_md, memory_order_acquire);
  if (md != NULL)
    return md;
  EVP_MD *fetched = EVP_MD_fetch(NULL, "SHA256", NULL);
  if (fetched == NULL)
    fp_fatal("SHA-256 is not available from libcrypto");
  if (atomic_compare_exchange_strong_explicit(&sha256_md, &md, fetched, memory_order_acq_rel,
                                              memory_order_acquire))
    return fetched;
  EVP_MD_free(fetched);
  return md;
}
#else
static const EVP_MD *sha256(void) { return EVP_sha256(); }
#endif

static void sha_spill(enc *e, const void *p, size_t len)
{
  if (EVP_DigestUpdate(e->ctx, p, len) != 1)
    fp_fatal("SHA-256 update failed");
}

void fp_sha256_hex(const dwl_value *vals, const size_t *idx, size_t n, const char *extra, size_t extra_len,
                   char out[65])
{
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (ctx == NULL)
    fp_fatal("out of memory");
  if (EVP_DigestInit_ex(ctx, sha256(), NULL) != 1)
    fp_fatal("SHA-256 init failed");

  enc e;
  e.n = 0;
  e.spill = sha_spill;
  e.ctx = ctx;
  for (size_t i = 0; i < n; i++)
    enc_value(&e, &vals[idx[i]]);
  dwl_value x = {extra, extra_len, 0};
  enc_value(&e, &x);
  sha_spill(&e, e.buf, e.n);

  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)
    fp_fatal("SHA-256 final failed");
  EVP_MD_CTX_free(ctx);

  static const char hex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < 32; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 0x0f];
  }
  out[64] = '\0';
}
