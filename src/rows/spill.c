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

size_t spill_part(const spill *s, fp128 key)
{
  /* the fingerprint's bits are uniform; the high half, as the keymap
   * uses the low one */
  if (s->level == 0)
    return (size_t)(key.hi % s->nparts);
  return (size_t)(mix(key.lo + 0x9e3779b97f4a7c15ULL * s->level) % s->nparts);
}

static unsigned char *add(unsigned char *p, const void *v, size_t n)
{
  if (n)
    memcpy(p, v, n);
  return p + n;
}

/* A record: origin, whether it has an lmd, the lmd (zeros when not), then
 * per column its length + 1 (0 for NULL) and its bytes.  Built whole and
 * written with one fwrite: a call per field cost the streamed initial load
 * a stdio call and its lock per value of every row. */
int spill_put(spill *s, size_t part, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  uint8_t has_lmd = lmd != NULL;
  dwl_ts none = {0};
  size_t n = sizeof origin + 1 + sizeof none + s->ncols * sizeof(uint64_t);
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
  unsigned char *p = add(s->rec, &origin, sizeof origin);
  p = add(p, &has_lmd, 1);
  p = add(p, lmd ? lmd : &none, sizeof none);
  for (size_t i = 0; i < s->ncols; i++) {
    uint64_t len = vals[i].is_null ? 0 : (uint64_t)vals[i].len + 1;
    p = add(p, &len, sizeof len);
    if (len > 1)
      p = add(p, vals[i].data, len - 1);
  }
  errno = 0;
  if (fwrite(s->rec, 1, n, s->f[part]) != n)
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

static int read_part(spill *s, size_t part, int keep, spill_fn fn, void *ud, dwl_error *err)
{
  FILE *f = s->f[part];
  errno = 0;
  if (fflush(f) != 0)
    return write_failed(s, err);
  rewind(f);
  dwl_value *v = calloc(s->ncols ? s->ncols : 1, sizeof *v);
  char *text = NULL;
  size_t cap = 0;
  int rc = v ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (long long r = 0; rc == 0 && r < s->rows[part]; r++) {
    uint64_t origin;
    uint8_t has_lmd;
    dwl_ts lmd;
    if (get(f, &origin, sizeof origin) || get(f, &has_lmd, 1) || get(f, &lmd, sizeof lmd)) {
      rc = read_failed(s, part, err);
      break;
    }
    /* the row's text, then the values pointing into it */
    size_t used = 0;
    uint64_t lens[64], *lp = s->ncols <= 64 ? lens : malloc(s->ncols * sizeof *lp);
    if (!lp) {
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    for (size_t i = 0; rc == 0 && i < s->ncols; i++) {
      if (get(f, &lp[i], sizeof lp[i])) {
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
    if (lp != lens)
      free(lp);
    if (rc == 0)
      rc = fn(ud, v, origin, has_lmd ? &lmd : NULL, err);
  }
  free(text);
  free(v);
  /* the partition is done: its file's space goes back at once */
  if (rc == 0 && !keep && s->f[part]) {
    fclose(s->f[part]);
    s->f[part] = NULL;
  }
  return rc;
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
