/* Reading of the csv plugin: physical lines through libcsv, one record
 * at a time with the line it starts on, per-field UTF-8 validation,
 * held-back blank lines, bad records to the host's reject callback (ABI
 * 1.1) with their raw text, and batches in one reusable arena.  Malformed
 * quoting fails the file, since where the next record starts is then
 * unknown.  Options, header and columns are csv.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_src.h"

static char *memdup0(const char *s, size_t len)
{
  char *d = malloc(len + 1);
  if (d) {
    if (len)
      memcpy(d, s, len);
    d[len] = '\0';
  }
  return d;
}

/* Returns the offset of the first byte of an invalid sequence, or len.
 * Strict RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_check(const unsigned char *s, size_t len)
{
  size_t i = 0;
  while (i < len) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c == 0xE0) {
      n = 2, lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      n = 2;
    } else if (c == 0xED) {
      n = 2, hi = 0x9F;
    } else if (c == 0xF0) {
      n = 3, lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      n = 3;
    } else if (c == 0xF4) {
      n = 3, hi = 0x8F;
    } else {
      return i;
    }
    if (len - i - 1 < n || s[i + 1] < lo || s[i + 1] > hi)
      return i;
    for (size_t k = 2; k <= n; k++)
      if ((s[i + k] & 0xC0) != 0x80)
        return i;
    i += n + 1;
  }
  return len;
}

/* ---- batch storage ------------------------------------------------------ */

static int ensure_rows(csv_src *st)
{
  if (st->nrows < st->rows_alloc)
    return 0;
  size_t want = st->rows_alloc ? st->rows_alloc * 2 : 64;
  if (want > st->cap)
    want = st->cap;
  if (want > SIZE_MAX / sizeof(dwl_value) / st->ncols)
    return src_error(st, "%s: batch of %zu rows is too large", st->path, st->cap);
  size_t nv = want * st->ncols;
  dwl_value *v = realloc(st->vals, nv * sizeof *v);
  if (!v)
    return src_error(st, "%s: out of memory", st->path);
  st->vals = v;
  size_t *o = realloc(st->offs, nv * sizeof *o);
  if (!o)
    return src_error(st, "%s: out of memory", st->path);
  st->offs = o;
  uint64_t *org = realloc(st->origin, want * sizeof *org);
  if (!org)
    return src_error(st, "%s: out of memory", st->path);
  st->origin = org;
  st->rows_alloc = want;
  return 0;
}

/* Copies a field into the arena and returns its offset; pointers are made
 * only at the end of the batch because the arena may move while it grows. */
static int arena_add(csv_src *st, const char *s, size_t len, size_t *off)
{
  if (len >= SIZE_MAX - st->arena_len - 1)
    return src_error(st, "%s: out of memory", st->path);
  size_t need = st->arena_len + len + 1;
  if (need > st->arena_cap) {
    size_t cap = st->arena_cap ? st->arena_cap : ARENA_MIN;
    while (cap < need)
      cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *a = realloc(st->arena, cap);
    if (!a)
      return src_error(st, "%s: out of memory", st->path);
    st->arena = a;
    st->arena_cap = cap;
  }
  if (len)
    memcpy(st->arena + st->arena_len, s, len);
  st->arena[st->arena_len + len] = '\0';
  *off = st->arena_len;
  st->arena_len = need;
  return 0;
}

/* ---- libcsv callbacks ---------------------------------------------------- */

static void on_field(void *s, size_t len, void *data)
{
  csv_src *st = data;
  if (st->failed)
    return;
  size_t idx = st->nfields++;
  st->fields_seen++;
  if (s) {
    size_t bad = utf8_check(s, len);
    if (bad < len) {
      /* A quoted field may span lines: report the line holding the bad byte. */
      uint64_t line = st->lineno;
      for (size_t i = bad; i < len; i++)
        if (((const char *)s)[i] == '\n')
          line--;
      if (st->in_header || !DWL_HOST_HAS(host, reject)) {
        src_error(st, "%s:%" PRIu64 ": invalid UTF-8 in field %zu (byte 0x%02X at offset %zu of the field)",
                  st->path, line, idx + 1, ((const unsigned char *)s)[bad], bad);
        return;
      }
      /* The record is reported whole, once it has ended (on_row). */
      if (!st->bad_why[0])
        snprintf(st->bad_why, sizeof st->bad_why,
                 "invalid UTF-8 in field %zu (byte 0x%02X at offset %zu of the field, line %" PRIu64 ")", idx + 1,
                 ((const unsigned char *)s)[bad], bad, line);
      return;
    }
  }
  if (st->bad_why[0])
    return;

  if (st->in_header) {
    if (st->nhdr == MAX_COLUMNS) {
      src_error(st, "%s:%" PRIu64 ": the header has more than %d columns; dwload reads at most %d", st->path,
                st->rec_line, MAX_COLUMNS, MAX_COLUMNS);
      return;
    }
    if (st->nhdr == st->hdr_cap) {
      size_t cap = st->hdr_cap ? st->hdr_cap * 2 : 16;
      hdr_field *h = realloc(st->hdr, cap * sizeof *h);
      if (!h) {
        src_error(st, "%s: out of memory", st->path);
        return;
      }
      st->hdr = h;
      st->hdr_cap = cap;
    }
    hdr_field *f = &st->hdr[st->nhdr];
    f->len = len;
    f->s = NULL;
    if (s && !(f->s = memdup0(s, len))) {
      src_error(st, "%s: out of memory", st->path);
      return;
    }
    st->nhdr++;
    return;
  }

  if (idx >= st->ncols)
    return;  /* a ragged row; on_row reports it with the count */
  if (idx == 0 && ensure_rows(st) != 0)
    return;
  size_t vi = st->nrows * st->ncols + idx;
  dwl_value *v = &st->vals[vi];
  /* libcsv does not say whether a field was quoted, so `null` matches a
   * quoted "NULL" too; only the empty field can tell (s == NULL). */
  if (!s || (st->null_str && len == st->null_len && memcmp(s, st->null_str, len) == 0)) {
    v->data = NULL;
    v->len = 0;
    v->is_null = 1;
    st->offs[vi] = 0;
    return;
  }
  if (arena_add(st, s, len, &st->offs[vi]) != 0)
    return;
  v->len = len;
  v->is_null = 0;
}

/* Keeps the text of a line that ends inside a quoted field. */
static int raw_keep(csv_src *st, const char *a, size_t alen, const char *b, size_t blen)
{
  size_t need = st->rec_raw_len + alen + blen;
  if (need > MAX_FIELD_BYTES + 2)
    return DWL_OK;  /* feed_line fails such a record anyway */
  if (need > st->rec_raw_cap) {
    size_t cap = st->rec_raw_cap ? st->rec_raw_cap : 256;
    while (cap < need)
      cap *= 2;
    char *r = realloc(st->rec_raw, cap);
    if (!r)
      return src_error(st, "%s: out of memory", st->path);
    st->rec_raw = r;
    st->rec_raw_cap = cap;
  }
  memcpy(st->rec_raw + st->rec_raw_len, a, alen);
  if (blen)
    memcpy(st->rec_raw + st->rec_raw_len + alen, b, blen);
  st->rec_raw_len = need;
  return DWL_OK;
}

/* Hands the record that just ended, which is bad, to the host: its raw
 * text is the lines kept while it spanned lines plus the line in hand
 * (nothing for a held-back blank line). */
static void reject_row(csv_src *st)
{
  if (!DWL_HOST_HAS(host, reject)) {
    src_error(st, "%s:%" PRIu64 ": %s", st->path, st->rec_line, st->bad_why);
    return;
  }
  const char *raw = "";
  size_t raw_len = 0;
  if (!st->in_blank) {
    if (st->rec_raw_len && raw_keep(st, st->text, st->text_len, NULL, 0) != DWL_OK)
      return;
    raw = st->rec_raw_len ? st->rec_raw : st->text;
    raw_len = st->rec_raw_len ? st->rec_raw_len : st->text_len;
  }
  if (host->reject(st->ctx, st->rec_line, raw, raw_len, NULL, 0, st->bad_why) != DWL_OK)
    st->failed = 1;  /* the host recorded why */
}

static void on_row(int c, void *data)
{
  csv_src *st = data;
  (void)c;
  if (st->failed)
    return;
  size_t nf = st->nfields;
  st->nfields = 0;
  if (st->in_header) {
    st->header_done = 1;
    st->header_line = st->rec_line;
    return;
  }
  if (nf != st->ncols && !st->bad_why[0])
    snprintf(st->bad_why, sizeof st->bad_why, "row has %zu field%s, expected %zu%s", nf, nf == 1 ? "" : "s",
             st->ncols,
             st->in_blank ? " (a blank line is a record of one empty field, allowed only in one-column files)" : "");
  if (st->bad_why[0]) {
    reject_row(st);
    st->bad_why[0] = '\0';
    return;
  }
  st->origin[st->nrows++] = st->rec_line;
}

/* ---- reading ------------------------------------------------------------- */

int in_quotes(const struct csv_parser *p)
{
  return p->pstate == PS_FIELD_BEGUN && p->quoted;
}

/* Reads the next physical line.  Returns 1, 0 at end of file, -1 on error. */
static int read_line(csv_src *st)
{
  errno = 0;
  ssize_t n = getline(&st->line, &st->line_cap, st->fp);
  if (n < 0) {
    if (ferror(st->fp))
      return src_error(st, "%s:%" PRIu64 ": read error: %s", st->path, st->lineno + 1,
                       strerror(errno ? errno : EIO));
    return 0;
  }
  st->lineno++;
  const char *t = st->line;
  size_t len = (size_t)n;
  st->ending = "";
  st->ending_len = 0;
  if (len && t[len - 1] == '\n') {
    len--;
    st->ending = "\n";
    st->ending_len = 1;
    if (len && t[len - 1] == '\r') {
      len--;
      st->ending = "\r\n";
      st->ending_len = 2;
    }
  } else if (len && t[len - 1] == '\r') {
    len--;
    st->ending = "\r";
    st->ending_len = 1;
  }
  if (st->lineno == 1 && len >= 3 && memcmp(t, "\xEF\xBB\xBF", 3) == 0) {
    t += 3;
    len -= 3;
  }
  st->text = t;
  st->text_len = len;
  return 1;
}

static int parse_failed(csv_src *st, size_t consumed)
{
  int status = csv_error(&st->parser);
  if (status == CSV_EPARSE)
    return src_error(st,
                     "%s:%" PRIu64 ": malformed quoting in field %zu at byte %zu of the line: a quote inside an "
                     "unquoted field, or text after a closing quote",
                     st->path, st->lineno, st->nfields + 1, (size_t)(st->text - st->line) + consumed + 1);
  return src_error(st, "%s:%" PRIu64 ": %s", st->path, st->lineno, csv_strerror(status));
}

/* Feeds the line in hand.  The line ending goes in as data when the line
 * ends inside a quoted field (so an embedded CRLF survives); otherwise a
 * bare LF ends the record, which is why a CR before it never reaches
 * libcsv. */
static int feed_line(csv_src *st)
{
  struct csv_parser *p = &st->parser;
  int was_quoted = in_quotes(p);
  uint64_t fields_before = st->fields_seen;
  if (p->pstate == PS_ROW_NOT_BEGUN) {
    st->rec_line = st->lineno;
    st->rec_raw_len = 0;
  }

  size_t n = csv_parse(p, st->text, st->text_len, on_field, on_row, st);
  if (st->failed)
    return DWL_ERR;
  if (n < st->text_len)
    return parse_failed(st, n);

  if (in_quotes(p)) {
    /* callbacks never see quotes: a quote opened on this line if none was
     * open before, or if the one that was open closed on this line */
    if (!was_quoted || st->fields_seen != fields_before)
      st->quote_line = st->lineno;
    if (raw_keep(st, st->text, st->text_len, st->ending, st->ending_len) != DWL_OK)
      return DWL_ERR;
    n = csv_parse(p, st->ending, st->ending_len, on_field, on_row, st);
    if (st->failed)
      return DWL_ERR;
    if (n < st->ending_len)
      return parse_failed(st, st->text_len + n);
    if (p->entry_pos > MAX_FIELD_BYTES)
      return src_error(st, "%s:%" PRIu64 ": field %zu is longer than %zu bytes (quoted field opened on line %" PRIu64
                       ")", st->path, st->lineno, st->nfields + 1, MAX_FIELD_BYTES, st->quote_line);
    return DWL_OK;
  }
  n = csv_parse(p, "\n", 1, on_field, on_row, st);
  if (st->failed)
    return DWL_ERR;
  if (n < 1)
    return parse_failed(st, st->text_len);
  return DWL_OK;
}

/* Emits the oldest held-back blank line as a record of one empty field. */
static int feed_blank(csv_src *st)
{
  st->rec_line = st->blank_next++;
  st->blank_pending--;
  st->in_blank = 1;
  on_field(NULL, 0, st);
  on_row('\n', st);
  st->in_blank = 0;
  return st->failed ? DWL_ERR : DWL_OK;
}

/* Advances by one physical line or one held-back blank line.  Returns 1
 * after progress, 0 at end of file, DWL_ERR on failure. */
int pump(csv_src *st)
{
  if (st->blank_pending && st->held)
    return feed_blank(st) == DWL_OK ? 1 : DWL_ERR;
  if (st->held) {
    st->held = 0;
    return feed_line(st) == DWL_OK ? 1 : DWL_ERR;
  }
  int r = read_line(st);
  if (r <= 0)
    return r;
  if (st->text_len == 0 && st->parser.pstate == PS_ROW_NOT_BEGUN) {
    if (st->blank_pending++ == 0)
      st->blank_next = st->lineno;
    return 1;
  }
  st->held = 1;
  return 1;
}

int unterminated(csv_src *st)
{
  return src_error(st, "%s:%" PRIu64 ": unterminated quoted field (opened on line %" PRIu64 ")", st->path,
                   st->lineno, st->quote_line);
}

/* ---- batches --------------------------------------------------------------- */

static int finish(csv_src *st)
{
  if (in_quotes(&st->parser))
    return unterminated(st);
  /* Every line already ended its record, so this only checks. */
  if (csv_fini(&st->parser, on_field, on_row, st) != 0 && !st->failed)
    return src_error(st, "%s:%" PRIu64 ": %s", st->path, st->lineno, csv_strerror(csv_error(&st->parser)));
  if (st->failed)
    return DWL_ERR;
  st->eof = 1;
  /* The rows of the batch being finished count too. */
  host->log(st->ctx, DWL_LOG_DEBUG, "%s: %" PRIu64 " rows from %" PRIu64 " lines", st->path,
            st->total_rows + st->nrows, st->lineno);
  return DWL_OK;
}

int csv_next_batch(void *handle, dwl_batch *batch)
{
  csv_src *st = handle;
  batch->nrows = 0;
  batch->values = NULL;
  batch->origin = NULL;
  if (st->failed) {
    /* the root cause went to an earlier call's error record */
    host->error(st->ctx, "%s: the source already failed", st->path);
    return DWL_ERR;
  }
  if (st->eof)
    return DWL_EOF;

  st->nrows = 0;
  st->arena_len = 0;
  while (st->nrows < st->cap) {
    int r = pump(st);
    if (r < 0)
      return DWL_ERR;
    if (r == 0) {
      if (finish(st) != DWL_OK)
        return DWL_ERR;
      break;
    }
  }
  if (st->nrows == 0)
    return DWL_EOF;

  size_t nv = st->nrows * st->ncols;
  for (size_t i = 0; i < nv; i++)
    st->vals[i].data = st->vals[i].is_null ? NULL : st->arena + st->offs[i];
  st->total_rows += st->nrows;
  batch->nrows = st->nrows;
  batch->values = st->vals;
  batch->origin = st->origin;
  return DWL_OK;
}

