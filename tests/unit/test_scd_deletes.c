/* Unit tests of the change engine (src/engine/scd.c) in isolation, part 2:
 * deletes (by a column, absent keys, late deletes) and upsert (the
 * fixture: scd_fixture.h; the rest: test_scd.c). */
#include "check_main.h"
#include "scd_fixture.h"

/* ---- deletes ----------------------------------------------------------------- */

static const char *const C5[] = {"id", "name", "op", "lmd", NULL};

static void op_setup(int style)
{
  fx_setup(MODE_SCD2, C5, K1, "lmd");
  fx_deletes_column("op", (const char *const[]){"D", "X", NULL});
  F.spec.delete_style = style;
  fx_init(NULL);
}

START_TEST(delete_by_op_expires_as_of_lmd)
{
  op_setup(DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), 2, 1);
  source(ROW("2", "Bob", "X", "2024-02-02 00:00:00"), 3, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=1", "EXP 2 to=2024-02-02 00:00:00 del=1");
  counts_are(0, 0, 0, 2, 0);
}
END_TEST

START_TEST(delete_and_reinsert_in_one_run)
{
  op_setup(DELSTYLE_EXPIRE);
  source(ROW("5", "Ed", "I", "2024-02-07 00:00:00"), 2, 1);
  source(ROW("5", "Ed", "D", "2024-02-08 00:00:00"), 3, 1);
  source(ROW("5", "Eddy", "I", "2024-02-09 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS 5,Ed,I,2024-02-07 00:00:00 [2024-02-07 00:00:00 .. 2024-02-08 00:00:00] cur=0 del=1",
      "INS 5,Eddy,I,2024-02-09 00:00:00 [2024-02-09 00:00:00 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 1, 0);
}
END_TEST

START_TEST(delete_of_unknown_key_is_unchanged)
{
  op_setup(DELSTYLE_EXPIRE);
  source(ROW("9", "Zed", "D", "2024-02-04 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
}
END_TEST

START_TEST(op_column_alone_is_no_change)
{
  op_setup(DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "U", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
}
END_TEST

START_TEST(tombstone_by_op_column)
{
  op_setup(DELSTYLE_TOMBSTONE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-02-01 00:00:00 del=0",
      "INS 1,Ann,D,2024-02-01 00:00:00 [2024-02-01 00:00:00 .. open] cur=1 del=1");
  counts_are(1, 0, 0, 1, 0);
}
END_TEST

START_TEST(revival_closes_tombstone)
{
  op_setup(DELSTYLE_TOMBSTONE);
  current(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), "2024-02-01 00:00:00", 1);
  source(ROW("1", "Ann", "I", "2024-03-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2024-03-01 00:00:00 del=1",
      "INS 1,Ann,I,2024-03-01 00:00:00 [2024-03-01 00:00:00 .. open] cur=1 del=0");
  counts_are(1, 1, 0, 0, 0);
}
END_TEST

/* Ann from 01-01, Bob from 01-10 (current); a delete row of 01-05. */
static void late_delete_setup(int style)
{
  op_setup(style);
  current(ROW("1", "Bob", "I", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", 0);
  source(ROW("1", "Ann", "D", "2024-01-05 00:00:00"), 2, 1);
  apply_ok();
  history(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", "2024-01-10 00:00:00", 0);
  history(ROW("1", "Bob", "I", "2024-01-10 00:00:00"), "2024-01-10 00:00:00", NULL, 0);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
}

/* A delete row within a second of the version's start closes it at its
 * start; the tombstone, and a revival, follow one step apart. */
START_TEST(within_step_delete_tombstone)
{
  op_setup(DELSTYLE_TOMBSTONE);
  F.spec.close = CLOSE_SECOND_BEFORE;
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00.2"), "2024-01-01 00:00:00.2", 0);
  source(ROW("1", "Ann", "D", "2024-01-01 00:00:00.7"), 2, 1);
  source(ROW("1", "Bea", "I", "2024-01-01 00:00:00.9"), 3, 1);
  apply_ok();
  OPS("EXP 1 to=2024-01-01 00:00:00.200000 del=0",
      "INS 1,Ann,D,2024-01-01 00:00:00.7 [2024-01-01 00:00:01.200000 .. 2024-01-01 00:00:01.200000] cur=0 del=1",
      "INS 1,Bea,I,2024-01-01 00:00:00.9 [2024-01-01 00:00:02.200000 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 1, 0);
}
END_TEST

START_TEST(within_step_delete_expire)
{
  op_setup(DELSTYLE_EXPIRE);
  F.spec.close = CLOSE_SECOND_BEFORE;
  source(ROW("1", "Ann", "I", "2024-01-01 00:00:00.2"), 2, 1);
  source(ROW("1", "Ann", "D", "2024-01-01 00:00:00.7"), 3, 1);
  source(ROW("1", "Bea", "I", "2024-01-01 00:00:00.9"), 4, 1);
  apply_ok();
  OPS("INS 1,Ann,I,2024-01-01 00:00:00.2 [2024-01-01 00:00:00.200000 .. 2024-01-01 00:00:00.200000] cur=0 del=1",
      "INS 1,Bea,I,2024-01-01 00:00:00.9 [2024-01-01 00:00:01.200000 .. open] cur=1 del=0");
  counts_are(2, 0, 0, 1, 0);
}
END_TEST

START_TEST(late_delete_expire_style)
{
  late_delete_setup(DELSTYLE_EXPIRE);
  /* closed and flagged at the deletion; the next version is now a revival */
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,I,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=1");
  late_counts_are(1, 0, 0);
}
END_TEST

START_TEST(late_delete_tombstone_style)
{
  late_delete_setup(DELSTYLE_TOMBSTONE);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=0 -> 1,Ann,I,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "INS 1,Ann,D,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-10 00:00:00] cur=0 del=1");
}
END_TEST

START_TEST(late_row_revives_before_a_deletion)
{
  /* deleted at 01-10 by a flagged row; a row of 01-05 arrives late: the
   * deletion now closes it */
  op_setup(DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  scd_free(&F.e);
  fx_init(NULL);
  dwl_value v[8];
  to_values(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), v);
  dwl_ts vt = ts("2024-01-10 00:00:00");
  dwl_error err;
  err_init(&err);
  ck_assert(scd_add_gone(&F.e, v, &vt, &err) == 0);
  source(ROW("1", "Bob", "I", "2024-01-05 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  history(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", "2024-01-10 00:00:00", 1);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-01-01 00:00:00 del=1 -> 1,Ann,I,2024-01-01 00:00:00 "
      "[2024-01-01 00:00:00 .. 2024-01-05 00:00:00] cur=0 del=0",
      "INS 1,Bob,I,2024-01-05 00:00:00 [2024-01-05 00:00:00 .. 2024-01-10 00:00:00] cur=0 del=1");
}
END_TEST

START_TEST(revival_before_tombstone_starts_at_it)
{
  op_setup(DELSTYLE_TOMBSTONE);
  /* deleted by absence at the run's clock, later than the data's lmd: rows
   * dated before it cannot be ordered against it (not late rows) */
  F.spec.deletes = DEL_ABSENT;
  current(ROW("1", "Ann", "I", "2024-01-01 00:00:00"), "2026-06-01 12:00:00", 1);
  source(ROW("1", "Ann", "I", "2024-03-01 00:00:00"), 2, 1);
  apply_ok();
  OPS("EXP 1 to=2026-06-01 12:00:00 del=1",
      "INS 1,Ann,I,2024-03-01 00:00:00 [2026-06-01 12:00:00 .. open] cur=1 del=0");
}
END_TEST

START_TEST(deleted_key_delete_again_is_unchanged)
{
  op_setup(DELSTYLE_TOMBSTONE);
  current(ROW("1", "Ann", "D", "2024-02-01 00:00:00"), "2024-02-01 00:00:00", 1);
  source(ROW("1", "Ann", "D", "2024-03-01 00:00:00"), 2, 1);
  apply_ok();
  NO_OPS();
  counts_are(0, 0, 0, 0, 1);
}
END_TEST

static void absent_setup(int mode, int style)
{
  fx_setup(mode, C4, K1, "lmd");
  F.spec.deletes = DEL_ABSENT;
  F.spec.delete_style = style;
  F.spec.close = CLOSE_AT_NEXT;
  fx_init("2026-11-30 08:00:00");
}

/* The run's second pass: emits deletes for the given current rows. */
static int delete_absent(const char *const *row)
{
  dwl_value v[8];
  to_values(row, v);
  err_init(&F.err);
  dwl_ts vf = {0};
  return scd_delete_absent(&F.e, v, &vf, &SINK, &F.counts, &F.err);
}

START_TEST(absent_expire)
{
  absent_setup(MODE_SCD2, DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("3", "Cy", "Lima", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 1);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 0); /* not past the checkpoint: present */
  apply_ok();
  ck_assert_uint_eq(scd_mark_absent(&F.e), 1); /* 2 only: 3 is already a tombstone */
  ck_assert_int_eq(scd_marked(&F.e, (dwl_value[]){{"2", 1, 0}, {0}, {0}, {0}}), 1);
  ck_assert_int_eq(delete_absent(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00")), 0);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 1);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 0); /* once */
  OPS("EXP 2 to=2026-11-30 08:00:00 del=1");
  counts_are(0, 0, 0, 1, 0);
}
END_TEST

START_TEST(absent_late_rows_before_the_deletion_ignored)
{
  /* Oslo from 01-01, deleted by absence at a run's clock (06-01), back as
   * Rome from then; rows dated before the deletion cannot be ordered
   * against it: ignored even with load.late: repair.  One after it is
   * spliced in. */
  absent_setup(MODE_SCD2, DELSTYLE_EXPIRE);
  F.spec.deleted = "is_deleted";  /* tells the deletion from the revival at its instant */
  current(ROW("1", "Ann", "Rome", "2024-05-01 00:00:00"), "2024-06-01 00:00:00", 0);
  source(ROW("1", "Ann", "Lima", "2024-03-01 00:00:00"), 2, 1);
  source(ROW("1", "Ann", "Kyiv", "2024-06-05 00:00:00"), 3, 1);
  source(ROW("1", "Ann", "Rome", "2024-06-09 00:00:00"), 4, 1);
  apply_ok();
  NO_OPS();
  history(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", "2024-06-01 00:00:00", 1);
  history(ROW("1", "Ann", "Rome", "2024-05-01 00:00:00"), "2024-06-01 00:00:00", NULL, 0);
  ck_assert_msg(repair() == 0, "repair: %s", F.err.msg);
  OPS("RESHAPE 1 from=2024-06-01 00:00:00 del=0 -> 1,Ann,Rome,2024-05-01 00:00:00 "
      "[2024-06-01 00:00:00 .. 2024-06-05 00:00:00] cur=0 del=0",
      "INS 1,Ann,Kyiv,2024-06-05 00:00:00 [2024-06-05 00:00:00 .. 2024-06-09 00:00:00] cur=0 del=0",
      "INS 1,Ann,Rome,2024-06-09 00:00:00 [2024-06-09 00:00:00 .. open] cur=1 del=0");
  late_counts_are(0, 0, 1);
}
END_TEST

START_TEST(absent_tombstone)
{
  absent_setup(MODE_SCD2, DELSTYLE_TOMBSTONE);
  F.spec.close = CLOSE_SECOND_BEFORE;
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  apply_ok();
  ck_assert_uint_eq(scd_mark_absent(&F.e), 1);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 1);
  OPS("EXP 2 to=2026-11-30 07:59:59 del=0",
      "INS 2,Bob,Rome,2024-01-01 00:00:00 [2026-11-30 08:00:00 .. open] cur=1 del=1");
  counts_are(1, 0, 0, 1, 0);
}
END_TEST

/* ---- upsert ------------------------------------------------------------------ */

START_TEST(upsert_insert_update_unchanged)
{
  fx_setup(MODE_UPSERT, C4, K1, "lmd");
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  source(ROW("1", "Ann", "Lima", "2024-02-01 00:00:00"), 2, 1);
  source(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), 3, 1);
  source(ROW("3", "Cy", "Kiev", "2024-02-01 00:00:00"), 4, 1);
  apply_ok();
  OPS("UPD 1,Ann,Lima,2024-02-01 00:00:00",
      "INS 3,Cy,Kiev,2024-02-01 00:00:00");
  counts_are(1, 0, 1, 0, 1);
}
END_TEST

START_TEST(upsert_composite_key_null_safe)
{
  static const char *const cols[] = {"item", "ticket", "day", "profit", NULL};
  static const char *const key[] = {"item", "ticket", "day", NULL};
  fx_setup(MODE_UPSERT, cols, key, NULL);
  fx_init(NULL);
  current(ROW("12183", "82355", NUL_, NUL_), "1970-01-01", 0);
  current(ROW("12183", "82355", "2452252", "2"), "1970-01-01", 0);
  source(ROW("12183", "82355", NUL_, NUL_), 2, 1);        /* same: unchanged */
  source(ROW("12183", "82355", "2452252", "2"), 3, 1);    /* same: unchanged */
  source(ROW("12183", "82355", "", "5"), 4, 1);           /* "" is not NULL: new */
  source(ROW(NUL_, "82356", NUL_, "1"), 5, 1);            /* new */
  apply_ok();
  OPS("INS 12183,82355,,5", "INS ~,82356,~,1");
  counts_are(2, 0, 0, 0, 2);
}
END_TEST

START_TEST(upsert_changed_null_key_row_updated)
{
  static const char *const cols[] = {"item", "ticket", "day", "profit", NULL};
  static const char *const key[] = {"item", "ticket", "day", NULL};
  fx_setup(MODE_UPSERT, cols, key, NULL);
  fx_init(NULL);
  current(ROW("12183", "82355", NUL_, NUL_), "1970-01-01", 0);
  source(ROW("12183", "82355", NUL_, "99"), 2, 1);
  apply_ok();
  OPS("UPD 12183,82355,~,99");
  counts_are(0, 0, 1, 0, 0);
}
END_TEST

START_TEST(upsert_latest_lmd_wins)
{
  fx_setup(MODE_UPSERT, C4, K1, "lmd");
  fx_init(NULL);
  source(ROW("1", "a", "x", "2024-01-01 00:00:00"), 2, 1);
  source(ROW("1", "b", "x", "2024-01-03 00:00:00"), 3, 1);
  source(ROW("1", "c", "x", "2024-01-02 00:00:00"), 4, 1);
  apply_ok();
  OPS("INS 1,b,x,2024-01-03 00:00:00");
  counts_are(1, 0, 0, 0, 2);
}
END_TEST

START_TEST(upsert_conflict_fails)
{
  fx_setup(MODE_UPSERT, C4, K1, NULL);
  fx_init(NULL);
  source(ROW("1", "a", "x", "2024-01-01"), 2, 1);
  source(ROW("1", "b", "x", "2024-01-01"), 3, 1);
  ck_assert_int_eq(apply(), -1);
  ck_assert_msg(strstr(F.err.msg, "(src.csv:2 and src.csv:3)") != NULL, "message: %s", F.err.msg);
  NO_OPS();
}
END_TEST

START_TEST(upsert_delete_by_op_removes)
{
  static const char *const cols[] = {"id", "name", "op", NULL};
  fx_setup(MODE_UPSERT, cols, K1, NULL);
  fx_deletes_column("op", (const char *const[]){"D", NULL});
  fx_init(NULL);
  current(ROW("1", "Ann", "I"), "1970-01-01", 0);
  source(ROW("1", "Ann", "D"), 2, 1);
  source(ROW("2", "Bob", "D"), 3, 1);
  apply_ok();
  OPS("REM 1");
  counts_are(0, 0, 0, 1, 1);
}
END_TEST

START_TEST(upsert_absent_removes)
{
  absent_setup(MODE_UPSERT, DELSTYLE_EXPIRE);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "1970-01-01", 0);
  current(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00"), "1970-01-01", 0);
  source(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), 2, 1);
  apply_ok();
  ck_assert_uint_eq(scd_mark_absent(&F.e), 1);
  ck_assert_int_eq(delete_absent(ROW("2", "Bob", "Rome", "2024-01-01 00:00:00")), 1);
  OPS("REM 2");
  counts_are(0, 0, 0, 1, 1);
}
END_TEST

START_TEST(two_current_versions_refused)
{
  fx_init(NULL);
  current(ROW("1", "Ann", "Oslo", "2024-01-01 00:00:00"), "2024-01-01 00:00:00", 0);
  dwl_value v[4];
  to_values(ROW("1", "Ann", "Rome", "2024-02-01 00:00:00"), v);
  dwl_ts vf = ts("2024-02-01");
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(scd_add_current(&F.e, v, &vf, 0, &err), -1);
  ck_assert_msg(strstr(err.msg, "table dim has more than one current version of key (id='1')") != NULL, "message: %s",
                err.msg);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("scd_deletes");
  TCase *tc = tcase_create("scd_deletes");
  tcase_add_checked_fixture(tc, scd2_setup, fx_teardown);
  tcase_add_test(tc, delete_by_op_expires_as_of_lmd);
  tcase_add_test(tc, delete_and_reinsert_in_one_run);
  tcase_add_test(tc, delete_of_unknown_key_is_unchanged);
  tcase_add_test(tc, op_column_alone_is_no_change);
  tcase_add_test(tc, tombstone_by_op_column);
  tcase_add_test(tc, revival_closes_tombstone);
  tcase_add_test(tc, within_step_delete_tombstone);
  tcase_add_test(tc, within_step_delete_expire);
  tcase_add_test(tc, late_delete_expire_style);
  tcase_add_test(tc, late_delete_tombstone_style);
  tcase_add_test(tc, late_row_revives_before_a_deletion);
  tcase_add_test(tc, revival_before_tombstone_starts_at_it);
  tcase_add_test(tc, deleted_key_delete_again_is_unchanged);
  tcase_add_test(tc, absent_expire);
  tcase_add_test(tc, absent_late_rows_before_the_deletion_ignored);
  tcase_add_test(tc, absent_tombstone);
  tcase_add_test(tc, upsert_insert_update_unchanged);
  tcase_add_test(tc, upsert_composite_key_null_safe);
  tcase_add_test(tc, upsert_changed_null_key_row_updated);
  tcase_add_test(tc, upsert_latest_lmd_wins);
  tcase_add_test(tc, upsert_conflict_fails);
  tcase_add_test(tc, upsert_delete_by_op_removes);
  tcase_add_test(tc, upsert_absent_removes);
  tcase_add_test(tc, two_current_versions_refused);
  suite_add_tcase(s, tc);
  return s;
}
