/* Unit tests of the change engine (src/engine/scd.c) in isolation, part 1:
 * scd_init, the close rule, SCD2 chains and collapse, type 1, same-lmd
 * duplicates and late rows (the fixture: scd_fixture.h; deletes and
 * upsert: test_scd_deletes.c). */
#include "check_main.h"
#include "scd_fixture.h"

/* ---- scd_init --------------------------------------------------------------- */

START_TEST(init_default_tracked_set)
{
  static const char *const cols[] = {"id", "name", "city", "op", "lmd", NULL};
  fx_setup(MODE_SCD2, cols, K1, "lmd");
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_deletes_column("op", (const char *const[]){"D", NULL});
  fx_init(NULL);
  /* type 2 by default: neither the key, the lmd, type 1 nor the delete flag */
  ck_assert_uint_eq(F.e.cols.nt2, 1);
  ck_assert_uint_eq(F.e.cols.t2[0], 2);
  ck_assert_uint_eq(F.e.cols.nt1, 1);
  ck_assert_uint_eq(F.e.cols.t1[0], 1);
  ck_assert_int_eq(F.e.cols.lmd, 4);
  ck_assert_int_eq(F.e.cols.del, 3);
}
END_TEST

START_TEST(init_unknown_column)
{
  static const char *const key[] = {"nope", NULL};
  fx_setup(MODE_SCD2, C4, key, "lmd");
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(scd_init(&F.e, &F.spec, F.cols, F.ncols, ts("2030-01-01"), &err), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  ck_assert_msg(strstr(err.msg, "load.key: column 'nope' is not in the source (its columns: id, name, city, lmd)"),
                "message: %s", err.msg);
  scd_free(&F.e);
}
END_TEST

START_TEST(col_index_exact_then_caseless)
{
  dwl_column cols[] = {{.name = "Id"}, {.name = "id"}, {.name = "NAME"}};
  ck_assert_int_eq(scd_col_index(cols, 3, "id"), 1);
  ck_assert_int_eq(scd_col_index(cols, 3, "Id"), 0);
  ck_assert_int_eq(scd_col_index(cols, 3, "name"), 2);
  ck_assert_int_eq(scd_col_index(cols, 3, "other"), -1);
}
END_TEST

/* ---- scd_close_at ----------------------------------------------------------- */

START_TEST(close_at_rules)
{
  dwl_spec s;
  memset(&s, 0, sizeof s);
  char buf[32];
  dwl_ts next = ts("2024-03-01 00:00:00");
  s.close = CLOSE_AT_NEXT;
  dwl_ts r = scd_close_at(&s, next);
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2024-03-01 00:00:00");
  s.close = CLOSE_DAY_BEFORE;
  r = scd_close_at(&s, next);
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2024-02-29 00:00:00");
  s.close = CLOSE_SECOND_BEFORE;
  r = scd_close_at(&s, next);
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2024-02-29 23:59:59");
  /* a date stays a date */
  s.close = CLOSE_DAY_BEFORE;
  r = scd_close_at(&s, ts("2021-01-01"));
  ts_format(&r, buf);
  ck_assert_str_eq(buf, "2020-12-31");
}
END_TEST

/* ---- scd2: new keys, chains, collapse ---------------------------------------- */

START_TEST(new_key_inserts_open_version)
{
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 10:00:00"), 2, 1);
  apply_ok();
  OPS("INS 1,Ann,Oslo,2024-01-01 10:00:00 [2024-01-01 10:00:00 .. open] cur=1 del=0");
  counts_are(1, 0, 0, 0, 0);
}
END_TEST

START_TEST(chain_ordered_by_lmd)
{
  fx_init(NULL);
  source(ROW("K", "k", "Paris", "2024-03-01 00:00:00"), 2, 1);
  source(ROW("K", "k", "Berlin", "2024-01-01 00:00:00"), 3, 1);
  source(ROW("K", "k", "Rome", "2024-02-01 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS K,k,Berlin,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-02-01 00:00:00] cur=0 del=0",
      "INS K,k,Rome,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. 2024-03-01 00:00:00] cur=0 del=0",
      "INS K,k,Paris,2024-03-01 00:00:00 [2024-03-01 00:00:00 .. open] cur=1 del=0");
  counts_are(3, 0, 0, 0, 0);
}
END_TEST

START_TEST(chain_day_before)
{
  F.spec.close = CLOSE_DAY_BEFORE;
  fx_init(NULL);
  source(ROW("K", "k", "a", "2024-01-01"), 2, 1);
  source(ROW("K", "k", "b", "2024-03-01"), 3, 1);
  apply_ok();
  OPS("INS K,k,a,2024-01-01 [2024-01-01 .. 2024-02-29] cur=0 del=0",
      "INS K,k,b,2024-03-01 [2024-03-01 .. open] cur=1 del=0");
}
END_TEST

/* Versions exist at the close rule's step: a change within a day of the
 * version's start replaces it (dwload-job(5), close). */
START_TEST(within_step_change_replaces_pending)
{
  F.spec.close = CLOSE_DAY_BEFORE;
  fx_init(NULL);
  source(ROW("K", "k", "Oslo", "2024-01-01 09:00:00"), 2, 1);
  source(ROW("K", "k", "Rome", "2024-01-01 17:00:00"), 3, 1);
  source(ROW("K", "k", "Lima", "2024-01-02 08:00:00"), 4, 1);
  source(ROW("K", "k", "Kyiv", "2024-01-02 10:00:00"), 5, 1);
  apply_ok();
  OPS("INS K,k,Lima,2024-01-02 08:00:00 [2024-01-01 09:00:00 .. 2024-01-01 10:00:00] cur=0 del=0",
      "INS K,k,Kyiv,2024-01-02 10:00:00 [2024-01-02 10:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 0, 2);
}
END_TEST

START_TEST(within_step_change_reshapes_stored)
{
  F.spec.close = CLOSE_SECOND_BEFORE;
  fx_init(NULL);
  current(ROW("K", "k", "Oslo", "2024-01-01 10:00:00.2"), "2024-01-01 10:00:00.2", 0);
  source(ROW("K", "k", "Rome", "2024-01-01 10:00:00.7"), 2, 1);
  source(ROW("K", "k", "Lima", "2024-01-01 10:00:01.5"), 3, 1);
  apply_ok();
  OPS("RESHAPE K from=2024-01-01 10:00:00.200000 del=0 -> K,k,Rome,2024-01-01 10:00:00.7 "
      "[2024-01-01 10:00:00.200000 .. 2024-01-01 10:00:00.500000] cur=0 del=0",
      "INS K,k,Lima,2024-01-01 10:00:01.5 [2024-01-01 10:00:01.500000 .. open] cur=1 del=0");
  counts_are(1, 1, 1, 0, 0);
}
END_TEST

START_TEST(collapse_consecutive_equal)
{
  fx_init(NULL);
  source(ROW("A", "a", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("A", "a", "Oslo", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("A", "a", "Bergen", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS A,a,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-01-03 00:00:00] cur=0 del=0",
      "INS A,a,Bergen,2024-01-03 00:00:00 [2024-01-03 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 0, 1);
}
END_TEST

START_TEST(flip_flop_not_collapsed)
{
  fx_init(NULL);
  source(ROW("A", "a", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("A", "a", "Bergen", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("A", "a", "Oslo", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  ck_assert_uint_eq(F.cap.n, 3);
  counts_are(3, 0, 0, 0, 0);
}
END_TEST

START_TEST(keys_emitted_in_source_order)
{
  fx_init(NULL);
  source(ROW("z", "a", "x", "2024-01-05 00:00:00"), 2, 1);
  source(ROW("a", "a", "x", "2024-01-01 00:00:00"), 3, 1);
  source(ROW("m", "a", "x", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS z,a,x,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. open] cur=1 del=0",
      "INS a,a,x,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. open] cur=1 del=0",
      "INS m,a,x,2024-01-03 00:00:00 [2024-01-03 00:00:00 .. open] cur=1 del=0");
}
END_TEST

START_TEST(noop_against_current)
{
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "Oslo", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
}
END_TEST

START_TEST(type2_change_expires_current)
{
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "Rome", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Ann,Rome,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
}
END_TEST

START_TEST(fingerprint_boundary_is_a_change)
{
  static const char *const cols[] = {"id", "a", "b", "lmd", NULL};
  fx_setup(MODE_SCD2, cols, K1, "lmd");
  fx_init(NULL);
  current(ROW("1", "ab", "c", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "a", "bc", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  counts_are(1, 1, 0, 0, 0);
}
END_TEST

START_TEST(null_vs_empty_is_a_change)
{
  fx_init(NULL);
  current(ROW("1", "Ann", NUL_, "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("3", "Cy", NUL_, "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "", "2024-02-01 00:00:00"), 2, 1);
  source(ROW("2", "Bob", NUL_, "2024-02-01 00:00:00"), 3, 1);
  source(ROW("3", "Cy", NUL_, "2024-02-01 00:00:00"), 4, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Ann,,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0",
      "EXP 2 to=2024-02-01 00:00:00 del=0",
      "INS 2,Bob,~,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 2, 0, 0, 1);
}
END_TEST

/* ---- type 1 ----------------------------------------------------------------- */

START_TEST(type1_scope_current_updates_in_place)
{
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Anna", "Oslo", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("T1 1,Anna,Oslo,2024-02-01 00:00:00 all=0");
  counts_are(0, 0, 1, 0, 0);
}
END_TEST

START_TEST(type1_scope_all_updates_every_version)
{
  fx_type1((const char *const[]){"name", NULL}, T1_ALL);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Anna", "Oslo", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("T1 1,Anna,Oslo,2024-02-01 00:00:00 all=1");
  /* One source row, one in-place change: updated, not also unchanged. */
  counts_are(0, 0, 1, 0, 0);
}
END_TEST

START_TEST(type1_and_type2_in_one_row)
{
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Anne", "Lima", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Anne,Lima,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
}
END_TEST

START_TEST(type1_change_carried_into_pending_version)
{
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "Anna", "Oslo", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("1", "Anna", "Rome", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  /* The first version is not written yet when the name changes: it is
   * written with the new name (type 1 overwrites the version in force). */
  OPS("INS 1,Anna,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-01-03 00:00:00] cur=0 del=0",
      "INS 1,Anna,Rome,2024-01-03 00:00:00 [2024-01-03 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 0, 1);
}
END_TEST

START_TEST(type1_scope_all_new_versions_carry_last_value)
{
  fx_type1((const char *const[]){"name", NULL}, T1_ALL);
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "Ann", "Rome", "2024-01-02 00:00:00"), 3, 1);
  source(ROW("1", "Anne", "Rome", "2024-01-03 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS 1,Anne,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. 2024-01-02 00:00:00] cur=0 del=0",
      "INS 1,Anne,Rome,2024-01-02 00:00:00 [2024-01-02 00:00:00 .. open] cur=1 del=0");
}
END_TEST

/* ---- same-lmd duplicates and late rows --------------------------------------- */

START_TEST(identical_duplicates_count_once)
{
  fx_init(NULL);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 3, 1);
  apply_ok();
  OPS("INS 1,Ann,Oslo,2024-01-01 00:00:00 [2024-01-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 0, 0, 0, 1);
}
END_TEST

START_TEST(conflicting_duplicates_fail)
{
  fx_init(NULL);
  source(ROW("7", "Ann", "Oslo", "2024-01-05 00:00:00"), 2, 1);
  source(ROW("8", "Bob", "Oslo", "2024-01-05 00:00:00"), 3, 1);
  source(ROW("7", "Ann", "Rome", "2024-01-05 00:00:00"), 4, 1);
  ck_assert_int_eq(apply(), -1);
  ck_assert_int_eq(F.err.code, DWL_EXIT_FAILED);
  ck_assert_msg(strstr(F.err.msg, "key (id='7') has two different source rows with the same lmd "
                                  "2024-01-05 00:00:00 (src.csv:2 and src.csv:4)") != NULL,
                "message: %s", F.err.msg);
}
END_TEST

/* Oslo from 01-01, Bergen from 01-10 (current); a late row. */
static void late_setup_close(int late, int close, const char *const *row)
{
  F.spec.late = late;
  F.spec.close = close;
  fx_init(NULL);
  current(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(row, 9, 1);
  apply_ok();
  NO_OPS();  /* the key waits for its history */
  ck_assert_int_eq(scd_deferred(&F.e), 1);
  history(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00",
          close == CLOSE_DAY_BEFORE ? "2024-01-09 00:00:00" : "2024-01-10 00:00:00", 0);
  history(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", NULL, 0);
}

static void late_setup(int late, const char *const *row)
{
  late_setup_close(late, CLOSE_AT_NEXT, row);
}

START_TEST(late_row_spliced_into_history)
{
  late_setup(LATE_REPAIR, ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,Oslo,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "INS 1,Ann,Rome,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-10 00:00:00] cur=0 del=0");
  counts_are(1, 0, 1, 0, 0);
  late_counts_are(1, 0, 0);
}
END_TEST

START_TEST(late_row_merges_with_successor)
{
  late_setup(LATE_REPAIR, ROW("1", "Ann", "Bergen", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  /* Bergen now starts at 01-05: the current version grows back, no new one */
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,Oslo,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "RESHAPE 1 from=2024-01-10 00:00:00 del=0 -> 1,Ann,Bergen,2024-01-05 00:00:00 "
      "[2024-01-05 00:00:00 .. open] cur=1 del=0");
  counts_are(0, 0, 2, 0, 0);
  late_counts_are(1, 0, 0);
}
END_TEST

START_TEST(late_row_equal_to_its_version_is_noop)
{
  late_setup(LATE_REJECT, ROW("1", "Ann", "Oslo", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);  /* not late: a reread */
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
  late_counts_are(0, 0, 0);
}
END_TEST

START_TEST(late_row_rejected_fails)
{
  late_setup(LATE_REJECT, ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"));
  ck_assert_int_eq(repair(), -1);
  ck_assert_int_eq(F.err.code, DWL_EXIT_FAILED);
  ck_assert_msg(strstr(F.err.msg, "src.csv:9: key (id='1') has lmd 2024-01-05 00:00:00, before the key's stored "
                                  "history ends (2024-01-10 00:00:00): a late row, and load.late is reject") != NULL,
                "message: %s", F.err.msg);
  NO_OPS();
  late_counts_are(0, 1, 0);
}
END_TEST

START_TEST(late_row_ignored_rest_applied)
{
  F.spec.late = LATE_IGNORE;
  fx_init(NULL);
  current(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"), 9, 1);
  source(ROW("1", "Ann", "Paris", "2024-01-20 00:00:00"), 10, 1);
  apply_ok();
  NO_OPS();
  history(ROW("1", "Ann", "Bergen", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", NULL, 0);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("EXP 1 to=2024-01-20 00:00:00 del=0",
      "INS 1,Ann,Paris,2024-01-20 00:00:00 [2024-01-20 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
  late_counts_are(0, 0, 1);
}
END_TEST

START_TEST(late_row_day_before)
{
  late_setup_close(LATE_REPAIR, CLOSE_DAY_BEFORE, ROW("1", "Ann", "Rome", "2024-01-05 00:00:00"));
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,Oslo,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-04 00:00:00] cur=0 del=0",
      "INS 1,Ann,Rome,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-09 00:00:00] cur=0 del=0");
}
END_TEST

START_TEST(late_row_at_a_stored_start_other_values_fails)
{
  late_setup(LATE_REPAIR, ROW("1", "Ann", "Rome", "2024-01-01 00:00:00"));
  ck_assert_int_eq(repair(), -1);
  ck_assert_msg(strstr(F.err.msg, "src.csv:9: key (id='1') has lmd 2024-01-01 00:00:00, the same as a stored version "
                                  "of the key, but different type 2 values") != NULL,
                "message: %s", F.err.msg);
  NO_OPS();
}
END_TEST

START_TEST(same_lmd_as_current_other_values_fails)
{
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Ann", "Rome", "2024-01-10 00:00:00"), 3, 1);
  ck_assert_int_eq(apply(), -1);
  ck_assert_msg(strstr(F.err.msg, "the same as a stored version of the key") != NULL, "message: %s", F.err.msg);
}
END_TEST

START_TEST(same_lmd_as_current_type1_only_is_fine)
{
  fx_type1((const char *const[]){"name", NULL}, T1_CURRENT);
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Anna", "Oslo", "2024-01-10 00:00:00"), 3, 1);
  apply_ok();
  OPS("T1 1,Anna,Oslo,2024-01-10 00:00:00 all=0");
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("scd");
  TCase *tc = tcase_create("scd");
  tcase_add_checked_fixture(tc, scd2_setup, fx_teardown);
  tcase_add_test(tc, init_default_tracked_set);
  tcase_add_test(tc, init_unknown_column);
  tcase_add_test(tc, col_index_exact_then_caseless);
  tcase_add_test(tc, close_at_rules);
  tcase_add_test(tc, new_key_inserts_open_version);
  tcase_add_test(tc, chain_ordered_by_lmd);
  tcase_add_test(tc, chain_day_before);
  tcase_add_test(tc, within_step_change_replaces_pending);
  tcase_add_test(tc, within_step_change_reshapes_stored);
  tcase_add_test(tc, collapse_consecutive_equal);
  tcase_add_test(tc, flip_flop_not_collapsed);
  tcase_add_test(tc, keys_emitted_in_source_order);
  tcase_add_test(tc, noop_against_current);
  tcase_add_test(tc, type2_change_expires_current);
  tcase_add_test(tc, fingerprint_boundary_is_a_change);
  tcase_add_test(tc, null_vs_empty_is_a_change);
  tcase_add_test(tc, type1_scope_current_updates_in_place);
  tcase_add_test(tc, type1_scope_all_updates_every_version);
  tcase_add_test(tc, type1_and_type2_in_one_row);
  tcase_add_test(tc, type1_change_carried_into_pending_version);
  tcase_add_test(tc, type1_scope_all_new_versions_carry_last_value);
  tcase_add_test(tc, identical_duplicates_count_once);
  tcase_add_test(tc, conflicting_duplicates_fail);
  tcase_add_test(tc, late_row_spliced_into_history);
  tcase_add_test(tc, late_row_merges_with_successor);
  tcase_add_test(tc, late_row_equal_to_its_version_is_noop);
  tcase_add_test(tc, late_row_rejected_fails);
  tcase_add_test(tc, late_row_ignored_rest_applied);
  tcase_add_test(tc, late_row_day_before);
  tcase_add_test(tc, late_row_at_a_stored_start_other_values_fails);
  tcase_add_test(tc, same_lmd_as_current_other_values_fails);
  tcase_add_test(tc, same_lmd_as_current_type1_only_is_fine);
  suite_add_tcase(s, tc);
  return s;
}
