/* Unit tests for the version rules both engines implement
 * (src/engine/versions.c): the transition table cell by cell, the
 * properties pushdown's SQL walk relies on, the close rule and the shared
 * messages' exact text (integration tests grep it). */
#include "check_main.h"

#include <string.h>

#include "err.h"
#include "scd.h"
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

/* ---- the memory engine follows the table ----------------------------------- */

/* What the sink was asked to do. */
typedef struct calls {
  int insert, insert_tomb, expire, expire_deleted, type1, reshape, other;
  int64_t expire_vt;
} calls;

static int c_insert(void *ud, const scd_version *v, dwl_error *err)
{
  (void)err;
  calls *c = ud;
  c->insert++;
  c->insert_tomb += v->tombstone;
  return 0;
}

static int c_expire(void *ud, const dwl_value *k, const dwl_ts *vf, const dwl_ts *vt, int deleted, dwl_error *err)
{
  (void)k, (void)vf, (void)err;
  calls *c = ud;
  c->expire++;
  c->expire_deleted += deleted != 0;
  c->expire_vt = vt->us;
  return 0;
}

static int c_type1(void *ud, const dwl_value *row, const dwl_ts *vf, int all, dwl_error *err)
{
  (void)row, (void)vf, (void)all, (void)err;
  ((calls *)ud)->type1++;
  return 0;
}

static int c_update(void *ud, const dwl_value *row, dwl_error *err)
{
  (void)row, (void)err;
  ((calls *)ud)->other++;
  return 0;
}

static int c_remove(void *ud, const dwl_value *k, dwl_error *err)
{
  (void)k, (void)err;
  ((calls *)ud)->other++;
  return 0;
}

static int c_reshape(void *ud, const dwl_value *k, const dwl_ts *ovf, int od, const scd_version *v, dwl_error *err)
{
  (void)k, (void)ovf, (void)od, (void)v, (void)err;
  ((calls *)ud)->reshape++;
  return 0;
}

static int c_drop(void *ud, const dwl_value *k, const dwl_ts *vf, int deleted, dwl_error *err)
{
  (void)k, (void)vf, (void)deleted, (void)err;
  ((calls *)ud)->other++;
  return 0;
}

static void set_values(dwl_value *v, const char *const *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    v[i].data = s[i];
    v[i].len = strlen(s[i]);
    v[i].is_null = 0;
  }
}

/* One row of an event against a key in a state, through scd_apply: the
 * current version (id 1, name a, tier x) started at 2024-01-01; the row
 * comes `after_us` later.  Columns: id, name (type 2), tier (type 1), op
 * (delete when D), lmd. */
static calls walk_one(int state, int event, int tombstones, int close, int64_t after_us)
{
  static const char *const names[] = {"id", "name", "tier", "op", "lmd"};
  dwl_column cols[5];
  memset(cols, 0, sizeof cols);
  for (size_t i = 0; i < 5; i++) {
    cols[i].name = names[i];
    cols[i].type = DWL_TYPE_TEXT;
    cols[i].nullable = 1;
  }
  char *keyv[] = {"id"}, *t1v[] = {"tier"}, *delv[] = {"D"};
  dwl_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.path = "job.yaml";
  spec.target_table = "dim";
  spec.mode = MODE_SCD2;
  spec.lmd = "lmd";
  spec.key = (spec_list){keyv, 1};
  spec.type1 = (spec_list){t1v, 1};
  spec.deletes = DEL_COLUMN;
  spec.delete_column = "op";
  spec.delete_values = (spec_list){delv, 1};
  spec.delete_style = tombstones ? DELSTYLE_TOMBSTONE : DELSTYLE_EXPIRE;
  spec.close = close;
  dwl_error err;
  err_init(&err);
  dwl_ts vf, run;
  ck_assert_int_eq(ts_parse("2024-01-01 00:00:00", 19, &vf), 0);
  ck_assert_int_eq(ts_parse("2030-01-01 00:00:00", 19, &run), 0);
  scd_engine e;
  ck_assert_msg(scd_init(&e, &spec, cols, 5, run, &err) == 0, "%s", err.msg);
  dwl_value cur[5], row[5];
  const char *curs[] = {"1", "a", "x", "U", "2024-01-01 00:00:00"};
  set_values(cur, curs, 5);
  if (state != VS_NONE)
    ck_assert_int_eq(scd_add_current(&e, cur, &vf, state == VS_TOMB, &err), 0);
  dwl_ts lmd = vf;
  lmd.us += after_us;
  char when[32];
  ts_format(&lmd, when);
  const char *rows[VE_N][5] = {
    [VE_SAME] = {"1", "a", "x", "U", when},
    [VE_TYPE1] = {"1", "a", "y", "U", when},
    [VE_CHANGE] = {"1", "b", "x", "U", when},
    [VE_DELETE] = {"1", "a", "x", "D", when},
  };
  set_values(row, rows[event], 5);
  ck_assert_int_eq(scd_add_source(&e, row, 2, &lmd, 1, &err), 0);
  calls c;
  memset(&c, 0, sizeof c);
  scd_sink sink = {&c, c_insert, c_expire, c_type1, c_update, c_remove, c_reshape, c_drop};
  scd_counts counts;
  memset(&counts, 0, sizeof counts);
  ck_assert_msg(scd_apply(&e, &sink, &counts, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(scd_deferred(&e), 0);
  scd_free(&e);
  return c;
}

START_TEST(memory_engine_follows_the_table)
{
  for (int tomb = 0; tomb < 2; tomb++)
    for (int st = 0; st < VS_N; st++) {
      if (st == VS_TOMB && !tomb)
        continue;  /* no tombstones without delete_style: tombstone */
      for (int ev = 0; ev < VE_N; ev++) {
        const ver_rule *r = ver_rule_at(st, ev);
        calls c = walk_one(st, ev, tomb, CLOSE_AT_NEXT, DWL_US_PER_DAY);
        int closes = st != VS_NONE && ver_is_event(r->action);
        int opens_tomb = r->action == VA_DELETE && ver_next(st, ev, tomb) == VS_TOMB;
        int opens = r->action == VA_START || opens_tomb;
        ck_assert_msg(c.expire == closes && c.insert == opens && c.insert_tomb == opens_tomb &&
                          c.type1 == (r->action == VA_TYPE1) && c.reshape == 0 && c.other == 0,
                      "tombstones %d state %d event %d: expire %d insert %d (tombstone %d) type1 %d reshape %d",
                      tomb, st, ev, c.expire, c.insert, c.insert_tomb, c.type1, c.reshape);
        /* the closed version carries the deleted flag unless a tombstone
         * follows it; a tombstone closed by a revival is deleted itself */
        if (closes)
          ck_assert_int_eq(c.expire_deleted, (r->action == VA_DELETE && !opens_tomb) || st == VS_TOMB);
      }
    }
}
END_TEST

/* Within the close step (day_before, a row an hour after the version's
 * start): VW_REPLACE rewrites the version in place, VW_MOVE closes it one
 * step after its start (at its valid_from, after the close rule). */
START_TEST(memory_engine_within_step)
{
  for (int st = VS_LIVE; st < VS_N; st++)
    for (int ev = 0; ev < VE_N; ev++) {
      const ver_rule *r = ver_rule_at(st, ev);
      calls c = walk_one(st, ev, 1, CLOSE_DAY_BEFORE, 3600 * DWL_US_PER_SEC);
      if (r->within == VW_REPLACE) {
        ck_assert_msg(c.reshape == 1 && c.expire == 0 && c.insert == 0, "state %d event %d: not replaced", st, ev);
      } else if (r->within == VW_MOVE) {
        dwl_ts vf;
        ts_parse("2024-01-01 00:00:00", 19, &vf);
        ck_assert_msg(c.expire == 1 && c.expire_vt == vf.us, "state %d event %d: expire %d at %lld", st, ev,
                      c.expire, (long long)c.expire_vt);
      } else {
        ck_assert_msg(c.expire == 0 && c.reshape == 0, "state %d event %d: closed a version", st, ev);
      }
    }
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
  dwl_ts next = {.us = 1700000000 * DWL_US_PER_SEC};
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
  tcase_add_test(tc, memory_engine_follows_the_table);
  tcase_add_test(tc, memory_engine_within_step);
  tcase_add_test(tc, close_rule);
  tcase_add_test(tc, messages_exact);
  suite_add_tcase(s, tc);
  return s;
}
