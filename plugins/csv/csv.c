/* CSV source connector ("csv"): streams an RFC 4180 file through libcsv
 * one physical line at a time, so every record knows the line it starts
 * on, and hands rows to the host in batches that live in one reusable
 * arena.  Owns the option table, header handling, the `types` map and
 * per-field UTF-8 validation.  Rows with the wrong number of fields or
 * invalid UTF-8 go to the host's reject callback (ABI 1.1) with their raw
 * text; malformed quoting still fails the file, since where the next
 * record starts is then unknown. */
#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dwload/plugin.h"
#include "types_opt.h"

/* libcsv keeps its parser state in the public struct but does not name the
 * values; these are the ones libcsv.c uses. */
enum { PS_ROW_NOT_BEGUN = 0, PS_FIELD_NOT_BEGUN = 1, PS_FIELD_BEGUN = 2, PS_FIELD_MIGHT_HAVE_ENDED = 3 };

#define DEFAULT_BATCH_ROWS 1024
/* An unterminated quote would otherwise swallow the rest of the file into
 * one field; stop long before memory runs out. */
#define MAX_FIELD_BYTES ((size_t)1 << 30)
#define ARENA_MIN (64 * 1024)
/* The host loads at most 4096 columns (and every warehouse fewer); a
 * header wider than that is refused as it is read, before its names are
 * checked against each other. */
#define MAX_COLUMNS 4096

/* The one piece of global state: the host API is the same for every
 * instance of the plugin. */
static const dwl_host *host;

/* The options, numbered: code reads them as OPT(CSV_X), so a name is
 * written once, in the table. */
enum { CSV_PATH, CSV_DELIMITER, CSV_HEADER, CSV_COLUMNS, CSV_NULL, CSV_TYPES, CSV_NOPTS };
static const dwl_option csv_options[] = {
  [CSV_PATH] = {"path", DWL_OPT_PATH, 1, NULL, "the CSV file to read"},
  [CSV_DELIMITER] = {"delimiter", DWL_OPT_STRING, 0, ",", "field separator, exactly one byte (\"\\t\" for tab)"},
  [CSV_HEADER] = {"header", DWL_OPT_BOOL, 0, "true", "the first record holds the column names"},
  [CSV_COLUMNS] = {"columns", DWL_OPT_LIST, 0, NULL,
                   "column names; required when header is false, must match the header otherwise"},
  [CSV_NULL] = {"null", DWL_OPT_STRING, 0, NULL, "text that stands for NULL; an empty unquoted field is always NULL"},
  [CSV_TYPES] = {"types", DWL_OPT_MAP, 0, NULL,
                 "column -> type (integer, numeric(p,s), text, varchar(n), real, boolean, date, timestamp); "
                 "default text"},
  [CSV_NOPTS] = {NULL, 0, 0, NULL, NULL},
};
DWL_OPTIONS_CHECK(csv_options, CSV_NOPTS);
#define OPT(i) DWL_OPT(csv_options, i)

typedef struct hdr_field {
  char *s;       /* NUL-terminated copy; NULL for an empty unquoted field */
  size_t len;
} hdr_field;

typedef struct csv_src {
  dwl_ctx *ctx;
  char *path;
  FILE *fp;
  struct csv_parser parser;
  int parser_ready;
  unsigned char delim;
  char *null_str;            /* NULL: only empty unquoted fields are NULL */
  size_t null_len;
  int failed;
  int eof;

  /* The physical line in hand: `text` is its content without the line
   * ending (and without a BOM on line 1); `ending` is what was stripped, fed
   * to the parser only when the line ends inside a quoted field. */
  char *line;
  size_t line_cap;
  const char *text;
  size_t text_len;
  const char *ending;
  size_t ending_len;
  int held;                  /* read but not fed yet: pending blank lines go first */
  uint64_t lineno;
  uint64_t rec_line;         /* line the current record started on */
  uint64_t quote_line;       /* line the open quoted field started on */
  uint64_t fields_seen;      /* fields submitted so far, to spot a quote closing */
  /* The raw text of the current record's lines before the one in hand,
   * kept only while a quoted field spans lines: most records have one
   * line, and its text is `text` when the record ends. */
  char *rec_raw;
  size_t rec_raw_len, rec_raw_cap;
  char bad_why[160];         /* the current record is bad: why ("" if not) */

  /* Blank lines are held back: at the end of the file they are ignored,
   * before more data they are one-field records. */
  size_t blank_pending;
  uint64_t blank_next;
  int in_blank;

  /* Columns. */
  dwl_column *cols;
  char **names;
  size_t ncols;
  char **opt_cols;           /* the `columns` option, copied */
  size_t n_opt_cols;

  /* Header capture. */
  int in_header;
  int header_done;
  uint64_t header_line;
  hdr_field *hdr;
  size_t nhdr, hdr_cap;

  /* The current record and batch. */
  size_t nfields;
  size_t cap;                /* rows per batch */
  size_t nrows;
  size_t rows_alloc;
  dwl_value *vals;
  size_t *offs;              /* arena offset per value, turned into pointers at batch end */
  uint64_t *origin;
  char *arena;
  size_t arena_len, arena_cap;
  uint64_t total_rows;
} csv_src;

/* Only the first error is the root cause; later ones are consequences. */
#define src_error(st, ...) dwl_plugin_error(host, (st)->ctx, &(st)->failed, __VA_ARGS__)

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

static int in_quotes(const struct csv_parser *p)
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
static int pump(csv_src *st)
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

static int unterminated(csv_src *st)
{
  return src_error(st, "%s:%" PRIu64 ": unterminated quoted field (opened on line %" PRIu64 ")", st->path,
                   st->lineno, st->quote_line);
}

/* ---- open ----------------------------------------------------------------- */

static int read_options(csv_src *st)
{
  dwl_ctx *ctx = st->ctx;
  const char *path = host->opt_string(ctx, OPT(CSV_PATH));
  if (!path || !*path) {
    st->path = strdup("csv");
    return src_error(st, "csv: option path is required");
  }
  if (!(st->path = strdup(path)))
    return src_error(st, "csv: out of memory");

  const char *d = host->opt_string(ctx, OPT(CSV_DELIMITER));
  if (!d)
    d = ",";
  if (strlen(d) != 1)
    return src_error(st, "%s: option delimiter must be exactly one byte, got \"%s\" (%zu bytes; for a tab write "
                     "\"\\t\" in double quotes)", st->path, d, strlen(d));
  if (*d == '"' || *d == '\n' || *d == '\r')
    return src_error(st, "%s: option delimiter cannot be a quote or a line break", st->path);
  st->delim = (unsigned char)*d;

  if (host->opt_isset(ctx, OPT(CSV_NULL))) {
    const char *ns = host->opt_string(ctx, OPT(CSV_NULL));
    if (ns) {
      if (!(st->null_str = strdup(ns)))
        return src_error(st, "%s: out of memory", st->path);
      st->null_len = strlen(ns);
    }
  }

  if (host->opt_isset(ctx, OPT(CSV_COLUMNS))) {
    size_t n = host->opt_list_len(ctx, OPT(CSV_COLUMNS));
    if (n == 0)
      return src_error(st, "%s: option columns is empty", st->path);
    if (!(st->opt_cols = calloc(n, sizeof *st->opt_cols)))
      return src_error(st, "%s: out of memory", st->path);
    st->n_opt_cols = n;
    for (size_t i = 0; i < n; i++) {
      const char *c = host->opt_list_item(ctx, OPT(CSV_COLUMNS), i);
      if (!c || !*c)
        return src_error(st, "%s: option columns: item %zu is empty", st->path, i + 1);
      for (size_t j = 0; j < i; j++)
        if (strcmp(st->opt_cols[j], c) == 0)
          return src_error(st, "%s: option columns: \"%s\" is listed twice (items %zu and %zu)", st->path, c, j + 1,
                           i + 1);
      if (!(st->opt_cols[i] = strdup(c)))
        return src_error(st, "%s: out of memory", st->path);
    }
  }
  if (!host->opt_bool(ctx, OPT(CSV_HEADER)) && !st->opt_cols)
    return src_error(st, "%s: option columns is required when header is false", st->path);
  return DWL_OK;
}

static int open_file(csv_src *st)
{
  st->fp = fopen(st->path, "r");
  if (!st->fp)
    return src_error(st, "cannot open %s: %s", st->path, strerror(errno));
  struct stat sb;
  /* fopen succeeds on a directory on Linux; reading it would not. */
  if (fstat(fileno(st->fp), &sb) == 0 && S_ISDIR(sb.st_mode))
    return src_error(st, "cannot open %s: %s", st->path, strerror(EISDIR));
  return DWL_OK;
}

/* RFC 4180 has no insignificant whitespace: spaces belong to the field,
 * and a tab may be the delimiter. */
static int no_space(unsigned char c)
{
  (void)c;
  return 0;
}

/* Only LF ends a physical line; the CR of a CRLF is stripped before
 * parsing, so the line count stays exact. */
static int lf_term(unsigned char c)
{
  return c == '\n';
}

static int start_parser(csv_src *st)
{
  if (csv_init(&st->parser, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL | CSV_APPEND_NULL) != 0)
    return src_error(st, "%s: cannot initialize the CSV parser", st->path);
  st->parser_ready = 1;
  csv_set_delim(&st->parser, st->delim);
  csv_set_space_func(&st->parser, no_space);
  csv_set_term_func(&st->parser, lf_term);
  /* libcsv grows its field buffer by a fixed step; a bigger one keeps long
   * fields from costing thousands of reallocations. */
  csv_set_blk_size(&st->parser, 16 * 1024);
  return DWL_OK;
}

static int read_header(csv_src *st)
{
  st->in_header = 1;
  while (!st->header_done) {
    if (st->blank_pending && st->held)
      return src_error(st, "%s:%" PRIu64 ": blank line where the header was expected", st->path, st->blank_next);
    int r = pump(st);
    if (r < 0)
      return DWL_ERR;
    if (r == 0) {
      if (in_quotes(&st->parser))
        return unterminated(st);
      return src_error(st, "%s: empty file, expected a header", st->path);
    }
  }
  st->in_header = 0;

  for (size_t i = 0; i < st->nhdr; i++) {
    const hdr_field *f = &st->hdr[i];
    if (!f->s || f->len == 0)
      return src_error(st, "%s:%" PRIu64 ": column %zu of the header has an empty name", st->path, st->header_line,
                       i + 1);
    if (memchr(f->s, '\0', f->len))
      return src_error(st, "%s:%" PRIu64 ": column %zu of the header contains a NUL byte", st->path,
                       st->header_line, i + 1);
    for (size_t j = 0; j < i; j++)
      if (strcmp(st->hdr[j].s, f->s) == 0)
        return src_error(st, "%s:%" PRIu64 ": duplicate column name \"%s\" in the header (columns %zu and %zu)",
                         st->path, st->header_line, f->s, j + 1, i + 1);
  }

  if (st->opt_cols) {
    if (st->n_opt_cols != st->nhdr)
      return src_error(st, "%s:%" PRIu64 ": the header has %zu columns but option columns lists %zu", st->path,
                       st->header_line, st->nhdr, st->n_opt_cols);
    for (size_t i = 0; i < st->nhdr; i++)
      if (strcmp(st->hdr[i].s, st->opt_cols[i]) != 0)
        return src_error(st, "%s:%" PRIu64 ": header column %zu is \"%s\" but option columns says \"%s\"",
                         st->path, st->header_line, i + 1, st->hdr[i].s, st->opt_cols[i]);
  }
  return DWL_OK;
}

static int build_columns(csv_src *st, int header)
{
  size_t n = header ? st->nhdr : st->n_opt_cols;
  st->names = calloc(n, sizeof *st->names);
  st->cols = calloc(n, sizeof *st->cols);
  if (!st->names || !st->cols)
    return src_error(st, "%s: out of memory", st->path);
  st->ncols = n;
  for (size_t i = 0; i < n; i++) {
    if (header) {
      st->names[i] = st->hdr[i].s;  /* ownership moves */
      st->hdr[i].s = NULL;
    } else {
      st->names[i] = st->opt_cols[i];
      st->opt_cols[i] = NULL;
    }
    st->cols[i].name = st->names[i];
    st->cols[i].type = DWL_TYPE_TEXT;
    st->cols[i].nullable = -1;
  }
  return DWL_OK;
}

static int apply_types(csv_src *st)
{
  char why[512];
  if (types_opt_apply(host, st->ctx, OPT(CSV_TYPES), st->cols, st->ncols, why, sizeof why) != 0)
    return src_error(st, "%s: %s", st->path, why);
  return DWL_OK;
}

static void csv_close(void *handle);

static int csv_open(dwl_ctx *ctx, const dwl_source_args *args, void **handle, const dwl_column **cols,
                    size_t *ncols)
{
  *handle = NULL;
  *cols = NULL;
  *ncols = 0;
  csv_src *st = calloc(1, sizeof *st);
  if (!st) {
    host->error(ctx, "csv: out of memory");
    return DWL_ERR;
  }
  st->ctx = ctx;
  st->cap = DEFAULT_BATCH_ROWS;
  if (DWL_ARGS_HAS(args, batch_rows) && args->batch_rows)
    st->cap = args->batch_rows;

  int header;
  if (read_options(st) != DWL_OK || open_file(st) != DWL_OK || start_parser(st) != DWL_OK)
    goto fail;
  header = host->opt_bool(ctx, OPT(CSV_HEADER));
  if (header && read_header(st) != DWL_OK)
    goto fail;
  if (build_columns(st, header) != DWL_OK || apply_types(st) != DWL_OK)
    goto fail;

  *handle = st;
  *cols = st->cols;
  *ncols = st->ncols;
  return DWL_OK;
fail:
  csv_close(st);
  return DWL_ERR;
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

static int csv_next_batch(void *handle, dwl_batch *batch)
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

static void csv_close(void *handle)
{
  csv_src *st = handle;
  if (!st)
    return;
  if (st->fp)
    fclose(st->fp);
  if (st->parser_ready)
    csv_free(&st->parser);
  free(st->line);
  free(st->rec_raw);
  free(st->path);
  free(st->null_str);
  for (size_t i = 0; i < st->ncols; i++)
    free(st->names[i]);
  free(st->names);
  free(st->cols);
  for (size_t i = 0; i < st->n_opt_cols; i++)
    free(st->opt_cols[i]);
  free(st->opt_cols);
  for (size_t i = 0; i < st->nhdr; i++)
    free(st->hdr[i].s);
  free(st->hdr);
  free(st->vals);
  free(st->offs);
  free(st->origin);
  free(st->arena);
  free(st);
}

static const dwl_plugin csv_plugin = {
  DWL_SOURCE_PLUGIN,
  .name = "csv",
  .version = "1.0.0",
  .description = "RFC 4180 CSV files (quoted fields, CRLF, UTF-8 BOM), streamed in batches",
  .options = csv_options,
  .open = csv_open,
  .next_batch = csv_next_batch,
  .close = csv_close,
};

DWL_PLUGIN_ENTRY(host, csv_plugin)
