/* Unit tests for the job spec parser's rules across keys (src/spec/): what
 * a mode requires and what applies only to some modes, durations, the
 * engine's refusals, columns named twice or clashing with bookkeeping
 * columns, deletes and open ends.  Reading a job file is tested in
 * test_spec.c. */
#include "check_main.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "spec.h"
#include "spec_fixture.h"

/* The spec loads, and with load.engine: pushdown. */
static void takes_pushdown(const char *yaml)
{
  dwl_spec *s = load_ok(yaml);
  ck_assert_int_eq(s->engine, ENGINE_PUSHDOWN);
  spec_free(s);
}

START_TEST(test_scd2_requires_key_and_lmd)
{
  expect_error(BASE "load:\n  mode: scd2\n  lmd: l\n", 9, 3, "mode scd2 requires key");
  /* scd2 without an lmd is a snapshot load (dated by the load) */
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n");
  ck_assert_ptr_null(s->lmd);
  ck_assert_int_eq(s->watermark, WATERMARK_CHECKPOINT);
  spec_free(s);
  expect_error(BASE "load:\n  mode: upsert\n  key: []\n", 10, 3,
               "load.key: mode upsert requires at least one key column");
}
END_TEST

START_TEST(test_watermark)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  watermark: none\n");
  ck_assert_int_eq(s->watermark, WATERMARK_NONE);
  spec_free(s);
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  watermark: none\n", 11, 3,
               "load.watermark requires load.lmd");
  expect_error(BASE "load:\n  mode: upsert\n  key: [id]\n  lmd: l\n  watermark: none\n", 12, 3,
               "load.watermark applies only to mode scd2");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  watermark: none\n  lookback: 1d\n", 13, 3,
               "load.lookback does not apply with load.watermark: none");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  watermark: none\n  engine: pushdown\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  watermark: none\n  deletes: absent\n  engine: pushdown\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  watermark: none\n"
                   "  deletes: {column: op, values: [D], truncate_values: [T]}\n  engine: pushdown\n");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  watermark: never\n", 12, 14, "watermark");
}
END_TEST

START_TEST(test_lookup)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n");
  ck_assert_int_eq(s->lookup, LOOKUP_AUTO);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: upsert\n  key: [id]\n  lookup: keys\n");
  ck_assert_int_eq(s->lookup, LOOKUP_KEYS);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  lookup: scan\n  deletes: absent\n");
  ck_assert_int_eq(s->lookup, LOOKUP_SCAN);
  spec_free(s);
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  lookup: key\n", 12, 11,
               "did you mean 'keys'");
  expect_error(BASE "load:\n  mode: append\n  lookup: scan\n", 10, 3,
               "load.lookup applies only to modes scd2 and upsert");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  deletes: absent\n  lookup: keys\n", 13, 3,
               "needs every current key");
}
END_TEST

/* load.lmd as a list: a composite sequence, its first column the lmd and
 * the others tie-breakers (dwload-job(5), SEQUENCES); a list of one is
 * that column; empty, a column twice and more than 4 are refused at the
 * list (its item for the repeated column). */
START_TEST(test_lmd_composite)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [ts, chg, sub]\n");
  ck_assert_str_eq(s->lmd, "ts");
  ck_assert_uint_eq(s->lmd_ties.n, 2);
  ck_assert_str_eq(s->lmd_ties.v[0], "chg");
  ck_assert_str_eq(s->lmd_ties.v[1], "sub");
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [ts]\n");
  ck_assert_str_eq(s->lmd, "ts");
  ck_assert_uint_eq(s->lmd_ties.n, 0);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: ts\n");
  ck_assert_uint_eq(s->lmd_ties.n, 0);
  spec_free(s);
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: []\n", 11, 8, "load.lmd: an empty list");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [ts, chg, ts]\n", 11, 18,
               "load.lmd: column 'ts' is listed twice");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [a, b, c, d, e]\n", 11, 8,
               "load.lmd: 5 columns; a composite sequence has at most 4");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [ts, '']\n", 11, 13,
               "column names must not be empty");
  /* pushdown takes it in scd2 (the keys with rows at one instant, or
   * with late rows, go to the memory engine), refuses it in upsert,
   * naming load.engine */
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [ts, chg]\n  engine: pushdown\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: [ts, chg]\n  engine: pushdown\n  late: ignore\n"
                   "  deletes: {column: op, values: [D], truncate_values: [T]}\n");
  expect_error(BASE "load:\n  mode: upsert\n  key: [id]\n  lmd: [ts, chg]\n  engine: pushdown\n", 12, 3,
               "load.engine: pushdown supports a composite load.lmd (tie-breaking columns after the first) only in "
               "mode scd2");
}
END_TEST

START_TEST(test_lookback_and_late)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n");
  ck_assert_int_eq(s->lookback_us, 0);
  ck_assert_int_eq(s->late, LATE_REPAIR);
  spec_free(s);
  static const struct {
    const char *text;
    long long us;
  } ok[] = {{"90s", 90000000LL},           {"15m", 900000000LL},    {"2h", 7200000000LL},
            {"1d", 86400000000LL},         {"1h30m", 5400000000LL}, {"0", 0},
            {"1d2h3m4s", 93784000000LL}, {"366d", 366LL * 86400000000LL}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char yaml[512];
    snprintf(yaml, sizeof yaml, BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  lookback: %s\n", ok[i].text);
    s = load_ok(yaml);
    ck_assert_msg(s->lookback_us == ok[i].us, "%s: %lld", ok[i].text, s->lookback_us);
    spec_free(s);
  }
  /* A bare count: sequence values of an integer lmd (the run refuses it
   * with a point in time, target_layout.c). */
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  lookback: 2\n");
  ck_assert_int_eq(s->lookback_us, 2);
  ck_assert_int_eq(s->lookback_count, 1);
  spec_free(s);
  static const char *const bad[] = {"h", "2x", "-1h", "1.5h", "30m2h", "1h1h", "367d", "99999999999999s", "2 h"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char yaml[512];
    snprintf(yaml, sizeof yaml, BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  lookback: '%s'\n", bad[i]);
    expect_error(yaml, 12, 13, "is not a duration of at most 366 days");
  }
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  late: ignore\n");
  ck_assert_int_eq(s->late, LATE_IGNORE);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  late: reject\n");
  ck_assert_int_eq(s->late, LATE_REJECT);
  spec_free(s);
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  late: repare\n", 12, 9, "did you mean 'repair'");
  s = load_ok(BASE "load:\n  mode: upsert\n  key: [id]\n  lmd: l\n  lookback: 1h\n  late: ignore\n");
  ck_assert_int_eq(s->lookback_us, 3600000000LL);
  ck_assert_int_eq(s->late, LATE_IGNORE);
  spec_free(s);
  expect_error(BASE "load:\n  mode: upsert\n  key: [id]\n  lookback: 1h\n", 11, 3,
               "load.lookback requires load.lmd (without one no checkpoint skips any row)");
  expect_error(BASE "load:\n  mode: append\n  lmd: l\n  late: ignore\n", 11, 3,
               "load.late applies only to modes scd2 and upsert (mode is append)");
}
END_TEST

START_TEST(test_engine)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n");
  ck_assert_int_eq(s->engine, ENGINE_MEMORY);
  spec_free(s);
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: pushdown\n"
                   "  deletes: {column: op, values: [D]}\n  delete_style: tombstone\n");
  takes_pushdown(BASE "load:\n  mode: upsert\n  key: [id]\n  engine: pushdown\n  deletes: absent\n");
  expect_error(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: pushdwn\n", 12, 11,
               "did you mean 'pushdown'");
  /* refusals name the engine key, wherever it is */
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  deletes: absent\n  engine: pushdown\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  deletes: {column: op, values: [D], "
                   "truncate_values: [T]}\n  engine: pushdown\n");
  takes_pushdown(BASE "load:\n  mode: upsert\n  key: [id]\n  lmd: l\n  deletes: {column: op, values: [D], "
                   "truncate_values: [T]}\n  engine: pushdown\n");
  expect_error(BASE "load:\n  engine: pushdown\n  mode: append\n", 9, 3,
               "load.engine: pushdown applies only to modes scd2 and upsert");
  expect_error(BASE "load:\n  mode: upsert\n  key: [id]\n  engine: pushdown\n  lookup: keys\n", 11, 3,
               "so load.lookup does not apply");
  /* late rows repaired by the memory engine (pushdown_take_late), with
   * deletes: absent or truncate rows too */
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: pushdown\n  lookback: 2h\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: pushdown\n  lookback: 2h\n"
                   "  deletes: absent\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: pushdown\n  lookback: 2h\n"
                   "  deletes: {column: op, values: [D], truncate_values: [T]}\n");
  /* late rows left out or rejected (pushdown_late.c) */
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  late: ignore\n  engine: pushdown\n");
  takes_pushdown(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  late: reject\n  max_rejects: 5\n"
                   "  reject_file: r.csv\n  engine: pushdown\n");
}
END_TEST

START_TEST(test_lmd_format_requires_lmd)
{
  expect_error(BASE "load:\n  mode: append\n  lmd_format: yyyy\n", 10, 3,
               "load.lmd_format requires load.lmd");
}
END_TEST

/* target.run_id_column: no default; a plain identifier; not a column the
 * job names otherwise (the dimension's only in mode scd2, where they
 * exist). */
START_TEST(test_run_id_column)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: append\n");
  ck_assert_ptr_null(s->run_id_column);
  spec_free(s);
  s = load_ok(BASE "  run_id_column: _Loaded_by2\nload:\n  mode: append\n");
  ck_assert_str_eq(s->run_id_column, "_Loaded_by2");
  spec_free(s);
  s = load_ok(BASE "  run_id_column: valid_from\nload:\n  mode: upsert\n  key: [id]\n");
  ck_assert_str_eq(s->run_id_column, "valid_from");
  spec_free(s);
  expect_error(BASE "  run_id_column: 9lives\nload:\n  mode: append\n", 8, 18,
               "target.run_id_column: '9lives' is not a column name dwload can create");
  expect_error(BASE "  run_id_column: run-id\nload:\n  mode: append\n", 8, 18, "is not a column name");
  expect_error(BASE "  run_id_column: ''\nload:\n  mode: append\n", 8, 18, "run_id_column");
  expect_error(BASE "  run_id_column: a234567890123456789012345678901234567890123456789012345678901234\n"
               "load:\n  mode: append\n", 8, 18, "at most 63");
  expect_error(BASE "  run_id_column: Valid_From\nload:\n  mode: scd2\n  key: [id]\n  lmd: l\n", 8, 3,
               "column 'Valid_From' is also dimension.valid_from (its default)");
  expect_error(BASE "  run_id_column: v\nload:\n  mode: scd2\n  key: [id]\n  lmd: l\ndimension:\n  current: v\n", 8, 3,
               "column 'v' is also dimension.current");
  expect_error(BASE "  run_id_column: name\nload:\n  mode: scd2\n  key: [id]\n  lmd: l\n  type1: [name]\n", 8, 3,
               "column 'name' is also in load.type1");
  expect_error(BASE "  run_id_column: l\nload:\n  mode: append\n  lmd: l\n", 8, 3, "column 'l' is also load.lmd");
}
END_TEST

/* load.future_tolerance (default 1d, off) and target.lock_timeout
 * (default 30s, at least 1s): durations as load.lookback writes them. */
START_TEST(test_future_tolerance_and_lock_timeout)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: append\n  lmd: l\n");
  ck_assert(s->future_tolerance_us == 86400000000LL);
  ck_assert(s->lock_timeout_ms == 30000);
  spec_free(s);
  s = load_ok(BASE "  lock_timeout: 1m30s\nload:\n  mode: append\n  lmd: l\n  future_tolerance: 30d\n");
  ck_assert(s->future_tolerance_us == 30LL * 86400000000LL);
  ck_assert(s->lock_timeout_ms == 90000);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: append\n  lmd: l\n  future_tolerance: off\n");
  ck_assert(s->future_tolerance_us == -1);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: append\n  lmd: l\n  future_tolerance: 0\n");
  ck_assert(s->future_tolerance_us == 0);
  spec_free(s);
  expect_error(BASE "load:\n  mode: append\n  lmd: l\n  future_tolerance: 'off '\n", 11, 21,
               "load.future_tolerance: 'off ' is not a duration");
  expect_error(BASE "load:\n  mode: append\n  lmd: l\n  future_tolerance: 400d\n", 11, 21,
               "is not a duration of at most 366 days");
  expect_error(BASE "load:\n  mode: append\n  future_tolerance: 1d\n", 10, 3,
               "load.future_tolerance requires load.lmd");
  expect_error(BASE "  lock_timeout: 0\nload:\n  mode: append\n", 8, 17, "target.lock_timeout: expected at least 1s");
  expect_error(BASE "  lock_timeout: soon\nload:\n  mode: append\n", 8, 17,
               "target.lock_timeout: 'soon' is not a duration");
}
END_TEST

/* load.memory_budget: a size (not set: 0, the default chosen at run
 * time); load.engine: auto, only where an engine runs. */
START_TEST(test_memory_budget_and_engine_auto)
{
  dwl_spec *s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n");
  ck_assert(s->memory_budget == 0);
  ck_assert_int_eq(s->engine, ENGINE_MEMORY);
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: auto\n  memory_budget: 512MiB\n");
  ck_assert_int_eq(s->engine, ENGINE_AUTO);
  ck_assert(s->memory_budget == 512LL << 20);
  spec_free(s);
  static const struct { const char *text; long long bytes; } ok[] = {
    {"2GiB", 2LL << 30}, {"64KiB", 64LL << 10}, {"1TiB", 1LL << 40}, {"4096", 4096}, {"100B", 100},
    {"1024TiB", 1LL << 50}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char y[300];
    snprintf(y, sizeof y, BASE "load:\n  mode: upsert\n  key: [id]\n  memory_budget: %s\n", ok[i].text);
    s = load_ok(y);
    ck_assert_msg(s->memory_budget == ok[i].bytes, "%s: %lld", ok[i].text, s->memory_budget);
    spec_free(s);
  }
  /* "1GB" (decimal units), "1.5GiB" and "gib" are not sizes: no guessing. */
  static const char *const bad[] = {"0", "0MiB", "1GB", "1.5GiB", "2gib", "-1", "MiB", "1 MiB", "1025TiB",
                                    "99999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char y[300];
    snprintf(y, sizeof y, BASE "load:\n  mode: upsert\n  key: [id]\n  memory_budget: '%s'\n", bad[i]);
    expect_error(y, 11, 18, "load.memory_budget: expected a size such as 512MiB, 2GiB, 64KiB or a number of bytes");
  }
  expect_error(BASE "load:\n  mode: upsert\n  key: [id]\n  memory_budget: [1]\n", 11, 18, "load.memory_budget");
  expect_error(BASE "load:\n  mode: append\n  engine: auto\n", 10, 3,
               "load.engine: auto applies only to modes scd2 and upsert (mode is append)");
  /* auto with a feature pushdown refuses loads: it then runs in memory */
  s = load_ok(BASE "load:\n  mode: scd2\n  key: [id]\n  lmd: l\n  engine: auto\n  lookback: 1d\n");
  ck_assert_int_eq(s->engine, ENGINE_AUTO);
  spec_free(s);
  long long v = 0;
  ck_assert_int_eq(spec_parse_size("3MiB", &v), 0);
  ck_assert(v == 3LL << 20);
  ck_assert_int_eq(spec_parse_size("", &v), -1);
}
END_TEST

START_TEST(test_scd2_only_keys)
{
  expect_error(BASE "load:\n  mode: upsert\n  key: id\n  type1: [name]\n", 11, 3,
               "load.type1 applies only to mode scd2");
  expect_error(BASE "load:\n  type2: [name]\n", 9, 3, "load.type2 applies only to mode scd2");
  expect_error(BASE "load:\n  delete_style: expire\n", 9, 3,
               "load.delete_style applies only to mode scd2");
  expect_error(BASE "load:\n  deletes: absent\n", 9, 3,
               "load.deletes applies only to modes scd2 and upsert");
  /* none is the default and harmless anywhere */
  dwl_spec *s = load_ok(BASE "load:\n  deletes: none\n");
  ck_assert_int_eq(s->deletes, DEL_NONE);
  spec_free(s);
}
END_TEST

START_TEST(test_overlapping_lists)
{
  expect_error(BASE SCD2_LOAD "  type2: [addr, id]\n", 12, 3,
               "load.type2: column 'id' is also in load.key");
  expect_error(BASE SCD2_LOAD "  type2: [addr]\n  type1: [Addr]\n", 13, 3,
               "load.type1: column 'Addr' is also in load.type2");
}
END_TEST

START_TEST(test_lmd_in_lists)
{
  expect_error(BASE SCD2_LOAD "  type2: [addr, lmd]\n", 12, 3,
               "load.type2: column 'lmd' is the lmd column");
}
END_TEST

START_TEST(test_duplicate_bookkeeping)
{
  expect_error(BASE SCD2_LOAD "dimension:\n  valid_to: x\n  current: X\n", 14, 3,
               "dimension.current: column name 'X' is also used by dimension.valid_to");
  /* clashes with a default name are caught too */
  expect_error(BASE "dimension:\n  deleted: valid_from\n", 9, 3,
               "dimension.deleted: column name 'valid_from' is also used by "
               "dimension.valid_from (its default)");
  /* null ones do not clash */
  dwl_spec *s = load_ok(BASE "dimension:\n  current: null\n  deleted: null\n");
  spec_free(s);
}
END_TEST

START_TEST(test_bookkeeping_vs_columns)
{
  expect_error(BASE SCD2_LOAD "  type2: [valid_to]\n", 12, 3,
               "load.type2: column 'valid_to' is also the bookkeeping column dimension.valid_to");
  expect_error(BASE SCD2_LOAD "dimension:\n  surrogate_key: id\n", 13, 3,
               "dimension.surrogate_key: 'id' is also a column in load.key");
  expect_error(BASE SCD2_LOAD "dimension:\n  current: lmd\n", 13, 3,
               "dimension.current: 'lmd' is also the lmd column");
}
END_TEST

START_TEST(test_valid_from_may_be_lmd)
{
  dwl_spec *s = load_ok(BASE SCD2_LOAD "dimension:\n  valid_from: lmd\n");
  ck_assert_str_eq(s->valid_from, "lmd");
  ck_assert_str_eq(s->lmd, "lmd");
  spec_free(s);
}
END_TEST

START_TEST(test_duplicate_list_name)
{
  expect_error(BASE "load:\n  mode: upsert\n  key: [id, region, ID]\n", 10, 21,
               "load.key: column 'ID' is listed twice");
}
END_TEST

START_TEST(test_deletes_forms)
{
  dwl_spec *s = load_ok(BASE SCD2_LOAD "  deletes:\n    column: op\n    values: D\n");
  ck_assert_int_eq(s->deletes, DEL_COLUMN);
  ck_assert_str_eq(s->delete_column, "op");
  ck_assert_uint_eq(s->delete_values.n, 1);
  ck_assert_str_eq(s->delete_values.v[0], "D");
  spec_free(s);
  s = load_ok(BASE "load:\n  mode: upsert\n  key: id\n  deletes: absent\n");
  ck_assert_int_eq(s->deletes, DEL_ABSENT);
  spec_free(s);
  expect_error(BASE SCD2_LOAD "  deletes: {column: op, values: []}\n", 12, 33,
               "load.deletes.values: expected at least one value");
  expect_error(BASE SCD2_LOAD "  deletes: {column: op}\n", 12, 12,
               "load.deletes: the mapping needs values, truncate_values or both");
  expect_error(BASE SCD2_LOAD "  deletes: {colum: op, values: D}\n", 12, 13,
               "unknown key 'colum' in load.deletes; did you mean 'column'?");
  expect_error(BASE SCD2_LOAD "  deletes: absnet\n", 12, 12, "did you mean 'absent'?");
  expect_error(BASE SCD2_LOAD "  deletes: [a]\n", 12, 12,
               "load.deletes: expected none, absent or a mapping, found a list");
}
END_TEST

START_TEST(test_delete_column_not_key)
{
  expect_error(BASE SCD2_LOAD "  deletes:\n    column: id\n    values: [D]\n", 13, 5,
               "load.deletes.column: 'id' is a key column");
}
END_TEST

START_TEST(test_open_end)
{
  dwl_spec *s = load_ok(BASE "dimension:\n  open_end: \"9999-12-31 23:59:59\"\n");
  ck_assert_str_eq(s->open_end, "9999-12-31 23:59:59");
  spec_free(s);
  expect_error(BASE "dimension:\n  open_end: forever\n", 9, 13,
               "dimension.open_end: 'forever' is not a timestamp");
  expect_error(BASE "dimension:\n  open_end: \"9999-02-30\"\n", 9, 13, "is not a timestamp");
}
END_TEST

START_TEST(test_dimension_accepted_in_append)
{
  dwl_spec *s = load_ok(BASE "dimension:\n  surrogate_key: sk\n  close: second_before\n");
  ck_assert_int_eq(s->mode, MODE_APPEND);
  ck_assert_str_eq(s->surrogate_key, "sk");
  ck_assert_int_eq(s->close, CLOSE_SECOND_BEFORE);
  spec_free(s);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *su = suite_create("spec_rules");
  TCase *tc = tcase_create("spec_rules");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_scd2_requires_key_and_lmd);
  tcase_add_test(tc, test_lmd_format_requires_lmd);
  tcase_add_test(tc, test_lmd_composite);
  tcase_add_test(tc, test_future_tolerance_and_lock_timeout);
  tcase_add_test(tc, test_watermark);
  tcase_add_test(tc, test_lookup);
  tcase_add_test(tc, test_lookback_and_late);
  tcase_add_test(tc, test_engine);
  tcase_add_test(tc, test_scd2_only_keys);
  tcase_add_test(tc, test_overlapping_lists);
  tcase_add_test(tc, test_lmd_in_lists);
  tcase_add_test(tc, test_duplicate_bookkeeping);
  tcase_add_test(tc, test_bookkeeping_vs_columns);
  tcase_add_test(tc, test_valid_from_may_be_lmd);
  tcase_add_test(tc, test_duplicate_list_name);
  tcase_add_test(tc, test_deletes_forms);
  tcase_add_test(tc, test_delete_column_not_key);
  tcase_add_test(tc, test_open_end);
  tcase_add_test(tc, test_dimension_accepted_in_append);
  tcase_add_test(tc, test_run_id_column);
  tcase_add_test(tc, test_memory_budget_and_engine_auto);
  suite_add_tcase(su, tc);
  return su;
}
