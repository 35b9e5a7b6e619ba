/* The csv plugin's state, shared by its two files: csv.c (options,
 * header, columns, open and close) and csv_read.c (lines, records, the
 * libcsv callbacks, rejects and batches).  Not static because the files
 * share it; the plugin exports only dwl_plugin_entry. */
#ifndef DWL_CSV_SRC_H
#define DWL_CSV_SRC_H

#include <csv.h>
#include <stddef.h>
#include <stdint.h>

#include "dwload/plugin.h"

/* libcsv keeps its parser state in the public struct but does not name the
 * values; these are the ones libcsv.c uses. */
enum { PS_ROW_NOT_BEGUN = 0, PS_FIELD_NOT_BEGUN = 1, PS_FIELD_BEGUN = 2, PS_FIELD_MIGHT_HAVE_ENDED = 3 };

/* An unterminated quote would otherwise swallow the rest of the file into
 * one field; stop long before memory runs out. */
#define MAX_FIELD_BYTES ((size_t)1 << 30)
#define ARENA_MIN (64 * 1024)
/* The host loads at most 4096 columns (and every warehouse fewer); a
 * header wider than that is refused as it is read, before its names are
 * checked against each other. */
#define MAX_COLUMNS 4096

/* The one piece of global state: the host API is the same for every
 * instance of the plugin (set by dwl_plugin_entry in csv.c). */
extern const dwl_host *host;

typedef struct hdr_field {
  char *s;       /* NUL-terminated copy; NULL for an empty unquoted field */
  size_t len;
} hdr_field;

typedef struct csv_src {
  dwl_ctx *ctx;
  char *path;
  FILE *fp;
  uint64_t size;             /* of a regular file; 0: not known (a FIFO, a pipe) */
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

/* csv_read.c */
int in_quotes(const struct csv_parser *p);
/* Advances by one physical line or one held-back blank line.  Returns 1
 * after progress, 0 at end of file, DWL_ERR on failure. */
int pump(csv_src *st);
int unterminated(csv_src *st);
int csv_next_batch(void *handle, dwl_batch *batch);

#endif
