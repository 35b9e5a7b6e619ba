/* Unit tests for the version rules both engines implement
 * (src/engine/versions.c): the transition table cell by cell, the
 * properties pushdown's SQL walk relies on, the close rule and the shared
 * messages' exact text (integration tests grep it). */
#include "check_main.h"

#include <string.h>

#include "err.h"
#include "spec.h"
#include "versions.h"

/* The whole table, written out: a change to a rule must change this. */
START_TEST(table_pinned)
{
  static const struct {
    int state, event, action, next, next_tomb, within;
  } want[] = {
    {VS_NONE, VE_SAME, VA_START, VS_LIVE, VS_LIVE, VW_NONE},
    {VS_NONE, VE_TYPE1, VA_START, VS_LIVE, VS_LIVE, VW_NONE},
    {VS_NONE, VE_CHANGE, VA_START, VS_LIVE, VS_LIVE, VW_NONE},
    {VS_NONE, VE_DELETE, VA_NOOP, VS_NONE, VS_NONE, VW_NONE},
    {VS_LIVE, VE_SAME, VA_NOOP, VS_LIVE, VS_LIVE, VW_NONE},
    {VS_LIVE, VE_TYPE1, VA_TYPE1, VS_LIVE, VS_LIVE, VW_NONE},
    {VS_LIVE, VE_CHANGE, VA_START, VS_LIVE, VS_LIVE, VW_REPLACE},
    {VS_LIVE, VE_DELETE, VA_DELETE, VS_NONE, VS_TOMB, VW_MOVE},
    {VS_TOMB, VE_SAME, VA_START, VS_LIVE, VS_LIVE, VW_MOVE},
    {VS_TOMB, VE_TYPE1, VA_START, VS_LIVE, VS_LIVE, VW_MOVE},
    {VS_TOMB, VE_CHANGE, VA_START, VS_LIVE, VS_LIVE, VW_MOVE},
    {VS_TOMB, VE_DELETE, VA_NOOP, VS_TOMB, VS_TOMB, VW_NONE},
  };
  ck_assert_int_eq(sizeof want / sizeof want[0], VS_N * VE_N);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const ver_rule *r = ver_rule_at(want[i].state, want[i].event);
    ck_assert_msg(r->action == want[i].action && r->next == want[i].next && r->next_tomb == want[i].next_tomb &&
                      r->within == want[i].within,
                  "state %d event %d: action %d next %d/%d within %d", want[i].state, want[i].event, r->action,
                  r->next, r->next_tomb, r->within);
    ck_assert_int_eq(ver_next(want[i].state, want[i].event, 0), want[i].next);
    ck_assert_int_eq(ver_next(want[i].state, want[i].event, 1), want[i].next_tomb);
  }
}
END_TEST

/* Pushdown's walk (build_d) computes each row's state from its predecessor
 * alone; that holds only while these do. */
START_TEST(shape_pushdown_relies_on)
{
  for (int st = 0; st < VS_N; st++) {
    for (int ev = 0; ev < VE_N; ev++) {
      const ver_rule *r = ver_rule_at(st, ev);
      for (int tomb = 0; tomb < 2; tomb++) {
        int next = ver_next(st, ev, tomb);
        if (ev != VE_DELETE)
          ck_assert_msg(next == VS_LIVE, "a row but a delete leaves the key live (state %d event %d)", st, ev);
        else if (st != VS_LIVE)
          ck_assert_msg(next == st, "a delete of a key that is not live changes nothing (state %d)", st);
        else
          ck_assert_int_eq(next, tomb ? VS_TOMB : VS_NONE);
      }
      /* an event of the history closes or starts a version */
      ck_assert_int_eq(ver_is_event(r->action), r->action == VA_START || r->action == VA_DELETE);
      /* what pushdown refuses within the close step closes a version: a
       * key with no version closes nothing */
      if (st == VS_NONE)
        ck_assert_int_eq(r->within, VW_NONE);
      else
        ck_assert_int_eq(r->within != VW_NONE, ver_is_event(r->action));
    }
  }
  /* the numbers pushdown's SQL stores */
  ck_assert_int_eq(VS_NONE, 0);
  ck_assert_int_eq(VS_LIVE, 1);
  ck_assert_int_eq(VS_TOMB, 2);
}
END_TEST

START_TEST(close_rule)
{
  dwl_spec s;
  memset(&s, 0, sizeof s);
  s.close = CLOSE_AT_NEXT;
  ck_assert(ver_close_gap(&s) == 0);
  ck_assert(ver_end_instant(&s, 5) == 5);
  s.close = CLOSE_SECOND_BEFORE;
  ck_assert(ver_close_gap(&s) == DWL_US_PER_SEC);
  ck_assert(ver_end_instant(&s, 5) == 5 + DWL_US_PER_SEC);
  s.close = CLOSE_DAY_BEFORE;
  ck_assert(ver_close_gap(&s) == DWL_US_PER_DAY);
  /* end_instant inverts scd_close_at */
  dwl_ts next = {1700000000 * DWL_US_PER_SEC, 0};
  for (int c = CLOSE_AT_NEXT; c <= CLOSE_SECOND_BEFORE; c++) {
    s.close = c;
    ck_assert(ver_end_instant(&s, scd_close_at(&s, next).us) == next.us);
  }
}
END_TEST

START_TEST(messages_exact)
{
  dwl_error err;
  err_init(&err);
  ck_assert_int_eq(ver_err_conflict(&err, "(id='1')", NULL, "src.csv", "3", "7"), -1);
  ck_assert_int_eq(err.code, DWL_EXIT_FAILED);
  ck_assert_str_eq(err.msg, "key (id='1') has two different source rows (src.csv:3 and src.csv:7) and no lmd to "
                            "order them; fix the source, dwload does not pick one");
  err_init(&err);
  ver_err_conflict(&err, "(id='1')", "2024-01-01 00:00:00", "source", "3", "7");
  ck_assert_str_eq(err.msg, "key (id='1') has two different source rows with the same lmd 2024-01-01 00:00:00 "
                            "(source:3 and source:7); fix the source or its lmd, dwload does not pick one");
  err_init(&err);
  ver_err_same_start(&err, "src.csv", "9", "(id='1')", "2024-01-01 00:00:00", 1);
  ck_assert_str_eq(err.msg, "src.csv:9: key (id='1') has lmd 2024-01-01 00:00:00, the same as a stored version of "
                            "the key, but different type 2 values; two versions cannot start at the same time");
  err_init(&err);
  ver_err_same_start(&err, "src.csv", "9", "(id='1')", "2024-01-01 00:00:00", 0);
  ck_assert_str_eq(err.msg, "src.csv:9: key (id='1') has lmd 2024-01-01 00:00:00, the same as the key's current "
                            "version, but different type 2 values; two versions cannot start at the same time");
  /* first error wins */
  ver_err_conflict(&err, "(id='2')", NULL, "x", "1", "2");
  ck_assert(strstr(err.msg, "(id='1')") != NULL);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("versions");
  TCase *tc = tcase_create("versions");
  tcase_add_test(tc, table_pinned);
  tcase_add_test(tc, shape_pushdown_relies_on);
  tcase_add_test(tc, close_rule);
  tcase_add_test(tc, messages_exact);
  suite_add_tcase(s, tc);
  return s;
}
