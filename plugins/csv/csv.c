/* CSV source connector ("csv"): streams an RFC 4180 file through libcsv
 * one physical line at a time, so every record knows the line it starts
 * on, and hands rows to the host in batches that live in one reusable
 * arena.  This file owns the option table, the file and the parser's
 * set-up, the header, the columns and their `types`, open and close, and
 * the descriptor; the lines, records, UTF-8 checks, rejects and batches
 * are csv_read.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv_src.h"
#include "types_opt.h"

#define DEFAULT_BATCH_ROWS 1024

const dwl_host *host;

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
  int known = fstat(fileno(st->fp), &sb) == 0;
  if (known && S_ISDIR(sb.st_mode))
    return src_error(st, "cannot open %s: %s", st->path, strerror(EISDIR));
  /* Only a regular file has a size to read towards; a FIFO, a pipe or a
   * device has none (0: unknown). */
  st->size = known && S_ISREG(sb.st_mode) && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
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

/* ABI 1.3 progress: the bytes consumed of the file's size.  ftello
 * counts what stdio has taken from the file, a buffer ahead of the parser
 * at most: at the end it is the size. */
static int csv_progress(void *handle, uint64_t *done, uint64_t *total)
{
  csv_src *st = handle;
  off_t at = st->fp && st->size ? ftello(st->fp) : -1;
  if (at < 0)
    return DWL_ERR;
  *done = (uint64_t)at;
  *total = st->size;
  return DWL_OK;
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
  .progress = csv_progress,
};

DWL_PLUGIN_ENTRY(host, csv_plugin)
