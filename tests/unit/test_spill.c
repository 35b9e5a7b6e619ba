/* Spill files (src/rows/spill.c): every record read back as written,
 * whatever its lengths (one-byte and longer varints), NULLs and empty
 * values, origins and lmds (none, date only, composite with ties), in
 * the order written per partition, with the tag each was put with; a
 * file spill_reread keeps can be read again; the records are compact (a
 * narrow row takes about its values' bytes); and fixed-size raw records
 * (the key-partitioned run's entries) come back as written. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spill.h"

#include "check_main.h"

#define NCOLS 3
#define NROWS 400

/* Row r's values, origin and lmd, made again to compare. */
static size_t len_of(int r, int c)
{
  static const size_t lens[] = {0, 1, 5, 126, 127, 128, 200, 16383, 16384, 70000};
  return lens[(r + c) % (int)(sizeof lens / sizeof lens[0])];
}

static void row(int r, char *buf[NCOLS], dwl_value v[NCOLS], uint64_t *origin, dwl_ts *lmd, int *has_lmd)
{
  for (int c = 0; c < NCOLS; c++) {
    size_t n = len_of(r, c);
    for (size_t i = 0; i < n; i++)
      buf[c][i] = (char)('a' + (r * 7 + c * 3 + (int)i) % 26);
    v[c].data = buf[c];
    v[c].len = n;
    v[c].is_null = (r + c) % 11 == 0;  /* NULL, apart from an empty value */
  }
  *origin = r % 5 == 0 ? (uint64_t)r << 40 : (uint64_t)r;
  memset(lmd, 0, sizeof *lmd);
  *has_lmd = r % 4 != 0;
  lmd->us = (int64_t)r * 1000003 - 5000000;  /* negatives too */
  lmd->date_only = r % 3 == 0;
  lmd->nties = r % (DWL_TS_TIES + 1);
  lmd->tie_time = (unsigned)r % 8u & ((1u << lmd->nties) - 1u);
  for (int t = 0; t < lmd->nties; t++)
    lmd->tie[t] = (int64_t)r * (t + 1) - 77;
}

typedef struct {
  int next[2];   /* the next row expected per partition: rows alternate */
  char *buf[NCOLS];
  const spill *s;
} reader;

/* Row r's tag (spill_put_tag). */
static int tag_of(int r)
{
  return r % 3 == 1;
}

static int check_row(void *ud, const dwl_value *vals, uint64_t origin, const dwl_ts *lmd, dwl_error *err)
{
  (void)err;
  reader *rd = ud;
  /* a row's partition is its parity: see the writes below */
  int part = -1;
  for (int p = 0; p < 2; p++)
    if (rd->next[p] >= 0 && part < 0)
      part = p;
  int r = rd->next[part];
  dwl_value v[NCOLS];
  uint64_t o;
  dwl_ts l;
  int has;
  row(r, rd->buf, v, &o, &l, &has);
  ck_assert_uint_eq(origin, o);
  ck_assert_int_eq(rd->s->tag, tag_of(r));
  ck_assert_int_eq(lmd != NULL, has);
  if (has) {
    ck_assert_int_eq(lmd->us, l.us);
    ck_assert_int_eq(lmd->date_only, l.date_only);
    ck_assert_int_eq(lmd->nties, l.nties);
    ck_assert_uint_eq(lmd->tie_time, l.tie_time);
    for (int t = 0; t < l.nties; t++)
      ck_assert_int_eq(lmd->tie[t], l.tie[t]);
  }
  for (int c = 0; c < NCOLS; c++) {
    ck_assert_int_eq(vals[c].is_null, v[c].is_null);
    if (v[c].is_null)
      continue;
    ck_assert_uint_eq(vals[c].len, v[c].len);
    ck_assert_int_eq(memcmp(vals[c].data, v[c].data, v[c].len), 0);
    ck_assert_int_eq(vals[c].data[v[c].len], '\0');  /* terminated, as values are */
  }
  rd->next[part] = r + 2 < NROWS ? r + 2 : -1;
  return 0;
}

START_TEST(test_round_trip)
{
  spill s;
  dwl_error err;
  err_init(&err);
  char *buf[NCOLS];
  for (int c = 0; c < NCOLS; c++)
    ck_assert_ptr_nonnull(buf[c] = malloc(70001));
  ck_assert_int_eq(spill_open(&s, 2, NCOLS, &err), 0);
  for (int r = 0; r < NROWS; r++) {
    dwl_value v[NCOLS];
    uint64_t origin;
    dwl_ts lmd;
    int has;
    row(r, buf, v, &origin, &lmd, &has);
    ck_assert_int_eq(tag_of(r) ? spill_put_tag(&s, (size_t)(r % 2), v, origin, has ? &lmd : NULL, 1, &err)
                               : spill_put(&s, (size_t)(r % 2), v, origin, has ? &lmd : NULL, &err), 0);
  }
  ck_assert_int_eq(s.rows[0] + s.rows[1], NROWS);
  /* partition 1 read twice (kept), then partition 0 */
  for (int pass = 0; pass < 2; pass++) {
    reader rd = {{-1, 1}, {buf[0], buf[1], buf[2]}, &s};
    ck_assert_int_eq(pass ? spill_read(&s, 1, check_row, &rd, &err) : spill_reread(&s, 1, check_row, &rd, &err), 0);
    ck_assert_int_eq(rd.next[1], -1);  /* every row of it */
  }
  reader rd0 = {{0, -1}, {buf[0], buf[1], buf[2]}, &s};
  ck_assert_int_eq(spill_read(&s, 0, check_row, &rd0, &err), 0);
  ck_assert_int_eq(rd0.next[0], -1);
  spill_close(&s);
  for (int c = 0; c < NCOLS; c++)
    free(buf[c]);
}
END_TEST

/* A narrow row (an integer key, a short name, an lmd) takes about its
 * values' bytes: 8-byte lengths and the whole 48-byte dwl_ts made such a
 * record over 80 bytes. */
START_TEST(test_compact)
{
  spill s;
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(spill_open(&s, 1, 3, &err), 0);
  dwl_value v[3] = {{"123456", 6, 0}, {"name123456", 10, 0}, {"2024-01-01 00:00:00", 19, 0}};
  dwl_ts lmd = {0};
  lmd.us = 1704067200000000LL;
  ck_assert_int_eq(spill_put(&s, 0, v, 123456, &lmd, &err), 0);
  /* flags 1 + lmd 8 + origin 3 + lengths 3 + values 35 */
  ck_assert_int_eq(s.bytes, 1 + 8 + 3 + 3 + 35);
  spill_close(&s);
}
END_TEST

/* Raw records: 64-byte entries over three partitions, each read back in
 * the order written, twice where kept. */
typedef struct {
  uint64_t w[8];
} entry;

typedef struct {
  size_t part;
  uint64_t next;  /* the next entry number expected */
  long long seen;
} raw_reader;

static int check_raw(void *ud, const void *rec, dwl_error *err)
{
  (void)err;
  raw_reader *rd = ud;
  entry e;
  memcpy(&e, rec, sizeof e);
  while (rd->next % 3 != rd->part)
    rd->next++;
  for (int i = 0; i < 8; i++)
    ck_assert_uint_eq(e.w[i], rd->next * 8 + (uint64_t)i);
  rd->next++;
  rd->seen++;
  return 0;
}

START_TEST(test_raw)
{
  spill s;
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(spill_open(&s, 3, 0, &err), 0);
  for (uint64_t n = 0; n < 1000; n++) {
    entry e;
    for (int i = 0; i < 8; i++)
      e.w[i] = n * 8 + (uint64_t)i;
    ck_assert_int_eq(spill_put_raw(&s, (size_t)(n % 3), &e, sizeof e, &err), 0);
  }
  ck_assert_int_eq(s.bytes, 1000 * (long long)sizeof(entry));
  for (size_t p = 0; p < 3; p++) {
    for (int keep = 1; keep >= 0; keep--) {
      raw_reader rd = {p, 0, 0};
      ck_assert_int_eq(spill_read_raw(&s, p, sizeof(entry), keep, check_raw, &rd, &err), 0);
      ck_assert_int_eq(rd.seen, s.rows[p]);
      ck_assert_int_eq(rd.seen, p == 0 ? 334 : 333);
    }
    ck_assert_ptr_null(s.f[p]);  /* read without keep: its space given back */
  }
  spill_close(&s);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("spill");
  TCase *tc = tcase_create("spill");
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_compact);
  tcase_add_test(tc, test_raw);
  suite_add_tcase(s, tc);
  return s;
}
