/* Spill files (spill.h): binary records of delta rows in unlinked
 * temporary files, one per key partition. */
#include "spill.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *spill_dir(void)
{
  const char *d = getenv("TMPDIR");
  return d && *d ? d : "/tmp";
}

/* A write that failed: the disk full (the usual cause) says where. */
static int write_failed(spill *s, dwl_error *err)
{
  int e = errno;
  return err_set(err, DWL_EXIT_FAILED, "writing %s in %s failed: %s (%lld bytes written); %s", s->what, s->dir,
                 e ? strerror(e) : "write error", s->bytes, s->hint);
}

int spill_open(spill *s, size_t nparts, size_t ncols, dwl_error *err)
{
  memset(s, 0, sizeof *s);
  s->what = "the delta's spill files";
  s->hint = "free space there, point TMPDIR at a disk with room, or raise load.memory_budget / --memory-budget";
  snprintf(s->dir, sizeof s->dir, "%s", spill_dir());
  s->ncols = ncols;
  s->f = calloc(nparts, sizeof *s->f);
  s->rows = calloc(nparts, sizeof *s->rows);
  if (!s->f || !s->rows)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  s->nparts = nparts;
  for (size_t i = 0; i < nparts; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/dwload-spill-XXXXXX", s->dir);
    int fd = mkstemp(path);
    if (fd < 0)
      return err_set(err, DWL_EXIT_FAILED, "cannot create a spill file in %s: %s (set TMPDIR to a writable directory)",
                     s->dir, strerror(errno));
    /* gone from the directory at once: the open descriptor keeps it */
    unlink(path);
    s->f[i] = fdopen(fd, "w+b");
    if (!s->f[i]) {
      close(fd);
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    }
  }
  return 0;
}

/* splitmix64's finalizer: the low half mixed with the level, so that the
 * keys of one partition spread over a split of it (the high half, which
 * chose that partition, would send them all to one) */
static uint64_t mix(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

size_t spill_slice(fp128 key, unsigned level, size_t nparts)
{
  /* the fingerprint's bits are uniform; the high half, as the keymap
   * uses the low one */
  if (level == 0)
    return (size_t)(key.hi % nparts);
  return (size_t)(mix(key.lo + 0x9e3779b97f4a7c15ULL * level) % nparts);
}

size_t spill_part(const spill *s, fp128 key)
{
  return spill_slice(key, s->level, s->nparts);
}

static unsigned char *add(unsigned char *p, const void *v, size_t n)
{
  if (n)
    memcpy(p, v, n);
  return p + n;
}

/* LEB128: 7 bits a byte, low first; a value under 128 takes one byte. */
static unsigned char *add_varint(unsigned char *p, uint64_t v)
{
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}
#define VARINT_MAX 10

/* A record's flags byte: whether the row has an lmd, and the lmd's
 * date_only, tie count and tie_time (dwl_ts), so that an lmd costs its 8
 * bytes of microseconds and 8 a tie-breaker, not the struct's 48; and the
 * caller's tag (spill_put_tag). */
enum { SF_LMD = 1, SF_DATE_ONLY = 2, SF_NTIES_SHIFT = 2, SF_TIE_TIME_SHIFT = 4, SF_TAG = 128 };
_Static_assert(DWL_TS_TIES <= 3, "a record's flags hold at most 3 ties");

/* A record: the flags byte; with an lmd its microseconds and ties (8
 * bytes each); the origin as a varint; then per column its length + 1 (0
 * for NULL) as a varint and its bytes.  About the CSV's size for a
 * typical extract, where fixed 8-byte lengths and the whole lmd made the
 * files 2.4 times it.  Built whole and written with one fwrite: a call
 * per field cost the streamed initial load a stdio call and its lock per
 * value of every row. */
int spill_put(spill *s, size_t part, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  return spill_put_tag(s, part, vals, origin, lmd, 0, err);
}

int spill_put_tag(spill *s, size_t part, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, int tag,
                  dwl_error *err)
{
  size_t n = 1 + sizeof(int64_t) * (1 + DWL_TS_TIES) + VARINT_MAX + s->ncols * VARINT_MAX;
  for (size_t i = 0; i < s->ncols; i++)
    n += vals[i].is_null ? 0 : vals[i].len;
  if (n > s->reccap) {
    size_t cap = s->reccap ? s->reccap : 256;
    while (cap < n)
      cap *= 2;
    unsigned char *r = realloc(s->rec, cap);
    if (!r)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    s->rec = r;
    s->reccap = cap;
  }
  unsigned char *p = s->rec;
  int nties = lmd ? lmd->nties : 0;
  *p++ = (unsigned char)(lmd ? SF_LMD | (lmd->date_only ? SF_DATE_ONLY : 0) | nties << SF_NTIES_SHIFT |
                                   (lmd->tie_time & 7u) << SF_TIE_TIME_SHIFT
                             : 0) |
         (tag ? SF_TAG : 0);
  if (lmd) {
    p = add(p, &lmd->us, sizeof lmd->us);
    p = add(p, lmd->tie, (size_t)nties * sizeof lmd->tie[0]);
  }
  p = add_varint(p, origin);
  for (size_t i = 0; i < s->ncols; i++) {
    uint64_t len = vals[i].is_null ? 0 : (uint64_t)vals[i].len + 1;
    p = add_varint(p, len);
    if (len > 1)
      p = add(p, vals[i].data, len - 1);
  }
  return spill_put_raw(s, part, s->rec, (size_t)(p - s->rec), err);
}

/* (every record, a row's or a raw one, is one fwrite) */
int spill_put_raw(spill *s, size_t part, const void *rec, size_t n, dwl_error *err)
{
  errno = 0;
  if (fwrite(rec, 1, n, s->f[part]) != n)
    return write_failed(s, err);
  s->bytes += (long long)n;
  s->rows[part]++;
  return 0;
}

static int read_failed(const spill *s, size_t part, dwl_error *err)
{
  return err_set(err, DWL_EXIT_FAILED, "reading the spill file of partition %zu in %s failed", part, s->dir);
}

static int get(FILE *f, void *p, size_t n)
{
  return n == 0 || fread(p, 1, n, f) == n ? 0 : -1;
}

/* (the files are this thread's alone: no stdio lock per byte) */
static int get_varint(FILE *f, uint64_t *v)
{
  *v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    int c = getc_unlocked(f);
    if (c == EOF)
      return -1;
    *v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80))
      return 0;
  }
  return -1;
}

/* A record's flags and lmd into *lmd (zeros without one). */
static int get_lmd(FILE *f, uint8_t *has_lmd, int *tag, dwl_ts *lmd)
{
  memset(lmd, 0, sizeof *lmd);
  int c = getc_unlocked(f);
  if (c == EOF)
    return -1;
  *tag = (c & SF_TAG) != 0;
  *has_lmd = (c & SF_LMD) != 0;
  if (!*has_lmd)
    return 0;
  lmd->date_only = (c & SF_DATE_ONLY) != 0;
  lmd->nties = (c >> SF_NTIES_SHIFT) & 3;
  lmd->tie_time = (unsigned)(c >> SF_TIE_TIME_SHIFT) & 7u;
  if (lmd->nties > DWL_TS_TIES)
    return -1;
  return get(f, &lmd->us, sizeof lmd->us) || get(f, lmd->tie, (size_t)lmd->nties * sizeof lmd->tie[0]) ? -1 : 0;
}

/* A partition read whole: unless kept, its file's space goes back at once. */
static int done_part(spill *s, size_t part, int keep, int rc)
{
  if (rc == 0 && !keep && s->f[part]) {
    fclose(s->f[part]);
    s->f[part] = NULL;
  }
  return rc;
}

/* Partition part's file, written out and rewound to be read; NULL when
 * the writes that were buffered fail. */
static FILE *start_read(spill *s, size_t part, dwl_error *err)
{
  FILE *f = s->f[part];
  errno = 0;
  if (fflush(f) != 0) {
    write_failed(s, err);
    return NULL;
  }
  rewind(f);
  return f;
}

static int read_part(spill *s, size_t part, int keep, spill_fn fn, void *ud, dwl_error *err)
{
  FILE *f = start_read(s, part, err);
  if (!f)
    return -1;
  dwl_value *v = calloc(s->ncols ? s->ncols : 1, sizeof *v);
  /* the row's lengths: once per partition, not per row */
  uint64_t *lp = calloc(s->ncols ? s->ncols : 1, sizeof *lp);
  char *text = NULL;
  size_t cap = 0;
  int rc = v && lp ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (long long r = 0; rc == 0 && r < s->rows[part]; r++) {
    uint64_t origin;
    uint8_t has_lmd;
    dwl_ts lmd;
    if (get_lmd(f, &has_lmd, &s->tag, &lmd) || get_varint(f, &origin)) {
      rc = read_failed(s, part, err);
      break;
    }
    /* the row's text, then the values pointing into it */
    size_t used = 0;
    for (size_t i = 0; rc == 0 && i < s->ncols; i++) {
      if (get_varint(f, &lp[i])) {
        rc = read_failed(s, part, err);
        break;
      }
      size_t n = lp[i] ? (size_t)lp[i] : 0;
      if (used + n > cap) {
        size_t ncap = (used + n) * 2 + 256;
        char *t = realloc(text, ncap);
        if (!t) {
          rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
          break;
        }
        text = t;
        cap = ncap;
      }
      if (n > 1 && get(f, text + used, n - 1)) {
        rc = read_failed(s, part, err);
        break;
      }
      if (n)
        text[used + n - 1] = '\0';
      used += n;
    }
    used = 0;
    for (size_t i = 0; rc == 0 && i < s->ncols; i++) {
      v[i].is_null = lp[i] == 0;
      v[i].len = lp[i] ? (size_t)lp[i] - 1 : 0;
      v[i].data = lp[i] ? text + used : NULL;
      used += (size_t)lp[i];
    }
    if (rc == 0)
      rc = fn(ud, v, origin, has_lmd ? &lmd : NULL, err);
  }
  free(text);
  free(lp);
  free(v);
  return done_part(s, part, keep, rc);
}

int spill_read_raw(spill *s, size_t part, size_t n, int keep, spill_raw_fn fn, void *ud, dwl_error *err)
{
  FILE *f = start_read(s, part, err);
  if (!f)
    return -1;
  unsigned char *rec = malloc(n ? n : 1);
  int rc = rec ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (long long r = 0; rc == 0 && r < s->rows[part]; r++)
    rc = get(f, rec, n) ? read_failed(s, part, err) : fn(ud, rec, err);
  free(rec);
  return done_part(s, part, keep, rc);
}

int spill_read(spill *s, size_t part, spill_fn fn, void *ud, dwl_error *err)
{
  return read_part(s, part, 0, fn, ud, err);
}

int spill_reread(spill *s, size_t part, spill_fn fn, void *ud, dwl_error *err)
{
  return read_part(s, part, 1, fn, ud, err);
}

void spill_close(spill *s)
{
  for (size_t i = 0; s->f && i < s->nparts; i++)
    if (s->f[i])
      fclose(s->f[i]);
  free(s->f);
  free(s->rows);
  free(s->rec);
  memset(s, 0, sizeof *s);
}
