/* Unit tests for src/util/buf.c: an append that fails in the middle of a
 * sequence poisons the buffer (every later append fails and changes
 * nothing, its text is gone, buf_steal gives NULL), only buf_reset and
 * buf_free start over, buf_taint carries a failure from one buffer to
 * another; and a statement built from a poisoned buffer is
 * refused at the ODBC entry points before anything reaches a driver.
 * And src/rows/rowbuf.c, rows of values copied into one such buffer:
 * values round-trip (NULL and empty apart), pop, a failed add. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "check_main.h"
#include "err.h"
#include "odbc_conn.h"
#include "rowbuf.h"

/* Appends of each kind after the cap was hit in the middle. */
static void fill_past_cap(dwl_buf *b)
{
  ck_assert_int_eq(buf_adds(b, "SELECT a, b FROM t WHERE "), 0);
  ck_assert_int_eq(buf_adds(b, "a = 'a value longer than the cap allows'"), -1);  /* the cap: 32 */
  ck_assert_int_eq(buf_adds(b, "1 = 1"), -1);
  ck_assert_int_eq(buf_addc(b, ';'), -1);
  ck_assert_int_eq(buf_printf(b, "%d", 7), -1);
  ck_assert_int_eq(buf_add(b, "x", 1), -1);
  ck_assert_int_eq(buf_grow(b, 1), -1);
}

START_TEST(test_poison_is_sticky)
{
  dwl_buf b;
  buf_init(&b, 32);
  fill_past_cap(&b);
  ck_assert_int_eq(buf_failed(&b), BUF_TOOBIG);
  /* Nothing of the partial statement is left to be used. */
  ck_assert_ptr_null(b.data);
  ck_assert_uint_eq(b.len, 0);
  ck_assert_ptr_null(buf_steal(&b));
  buf_free(&b);
}
END_TEST

/* An append that fits after the failure still must not revive the text. */
START_TEST(test_small_append_after_failure)
{
  dwl_buf b;
  buf_init(&b, 16);
  ck_assert_int_eq(buf_adds(&b, "DELETE FROM t"), 0);
  ck_assert_int_eq(buf_adds(&b, " WHERE id = 12345"), -1);
  ck_assert_int_eq(buf_adds(&b, ";"), -1);
  ck_assert_ptr_null(b.data);
  ck_assert_int_ne(buf_failed(&b), 0);
  ck_assert_ptr_null(buf_steal(&b));
}
END_TEST

START_TEST(test_reset_starts_over)
{
  dwl_buf b;
  buf_init(&b, 32);
  fill_past_cap(&b);
  buf_reset(&b);
  ck_assert_int_eq(buf_failed(&b), 0);
  ck_assert_int_eq(buf_adds(&b, "SELECT 1"), 0);
  char *s = buf_steal(&b);
  ck_assert_str_eq(s, "SELECT 1");
  free(s);
  fill_past_cap(&b);
  buf_free(&b);
  ck_assert_int_eq(buf_failed(&b), 0);
  ck_assert_int_eq(buf_printf(&b, "%s-%d", "ok", 2), 0);
  ck_assert_str_eq(b.data, "ok-2");
  buf_free(&b);
}
END_TEST

/* Many appends, one of them failing in the middle: the end result tells. */
START_TEST(test_failure_in_the_middle_of_many)
{
  dwl_buf b;
  buf_init(&b, 4096);
  for (int i = 0; i < 256; i++)
    if (i == 128)
      buf_add(&b, "", 5000);  /* cannot fit; the bytes are never read */
    else
      buf_printf(&b, "c%d, ", i);
  ck_assert_int_eq(buf_failed(&b), BUF_TOOBIG);
  ck_assert_ptr_null(buf_steal(&b));
}
END_TEST

START_TEST(test_whole_text_unchanged)
{
  dwl_buf b;
  buf_init(&b, 0);
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(buf_printf(&b, "%03d", i % 1000), 0);
  ck_assert_uint_eq(b.len, 3000);
  ck_assert_int_eq(buf_failed(&b), 0);
  ck_assert_int_eq(memcmp(b.data + 2997, "999", 3), 0);
  char *s = buf_steal(&b);
  ck_assert_ptr_nonnull(s);
  free(s);
  /* An empty buffer that never failed steals as an empty string. */
  s = buf_steal(&b);
  ck_assert_str_eq(s, "");
  free(s);
}
END_TEST

/* Text built in one buffer and printed into another: a failure of the
 * inner one fails the outer one, instead of printing "(null)" into it. */
START_TEST(test_taint)
{
  dwl_buf on, sql;
  buf_init(&on, 8);
  buf_init(&sql, 0);
  buf_adds(&on, "d.id = s.id AND d.k = s.k");
  ck_assert_int_eq(buf_taint(&sql, &on), -1);
  ck_assert_int_eq(buf_printf(&sql, "DELETE FROM t AS d USING s WHERE %s", on.data), -1);
  ck_assert_int_eq(buf_failed(&sql), BUF_TOOBIG);
  ck_assert_ptr_null(buf_steal(&sql));
  buf_reset(&on);
  buf_adds(&on, "d.id = 1");
  ck_assert_int_eq(buf_taint(&sql, &on), 0);
  buf_printf(&sql, "WHERE %s", on.data);
  ck_assert_str_eq(sql.data, "WHERE d.id = 1");
  buf_free(&on);
  buf_free(&sql);
}
END_TEST

/* The statement entry points refuse what a poisoned buffer hands them
 * (NULL) with an error, before touching the connection (none here). */
START_TEST(test_exec_refuses_failed_statement)
{
  dwl_buf b;
  buf_init(&b, 8);
  buf_adds(&b, "DROP TABLE ");
  dwl_error err;
  err_init(&err);
  odbc_stmt *st = (odbc_stmt *)&b;  /* must be cleared */
  ck_assert_int_eq(ostmt_prepare(NULL, b.data, &st, &err), -1);
  ck_assert_ptr_null(st);
  ck_assert_int_eq(err.code, DWL_EXIT_FAILED);
  ck_assert_ptr_nonnull(strstr(err.msg, "nothing was executed"));
  err_init(&err);
  ck_assert_int_eq(odbc_exec(NULL, b.data, NULL, NULL, 0, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "could not be built"));
  buf_free(&b);
}
END_TEST

/* ---- rowbuf.h: rows copied into one buffer ---- */

static dwl_value val(const char *s)
{
  return (dwl_value){.data = s, .len = s ? strlen(s) : 0, .is_null = s == NULL};
}

static void assert_val(dwl_value v, const char *want)
{
  ck_assert_int_eq(v.is_null, want == NULL);
  if (!want) {
    ck_assert_ptr_null(v.data);
    return;
  }
  ck_assert_ptr_nonnull(v.data);
  ck_assert_uint_eq(v.len, strlen(want));
  ck_assert_int_eq(memcmp(v.data, want, v.len), 0);
}

/* Values come back as they went in, NULL and empty apart, after the
 * cells and the bytes have both moved (past 256 rows, long values). */
START_TEST(test_rowbuf_round_trip)
{
  rowbuf rb;
  rowbuf_init(&rb, 3);
  char num[32], big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  for (int r = 0; r < 1000; r++) {
    snprintf(num, sizeof num, "%d", r);
    dwl_value row[3] = {val(num), val(r % 3 == 0 ? NULL : r % 3 == 1 ? "" : big), val("a\0b")};
    row[2].len = 3;  /* a NUL byte inside */
    ck_assert_int_eq(rowbuf_add(&rb, row), 0);
  }
  ck_assert_uint_eq(rb.n, 1000);
  for (int r = 0; r < 1000; r++) {
    snprintf(num, sizeof num, "%d", r);
    assert_val(rowbuf_get(&rb, r, 0), num);
    assert_val(rowbuf_get(&rb, r, 1), r % 3 == 0 ? NULL : r % 3 == 1 ? "" : big);
    dwl_value v = rowbuf_get(&rb, r, 2);
    ck_assert_uint_eq(v.len, 3);
    ck_assert_int_eq(memcmp(v.data, "a\0b", 3), 0);
  }
  rowbuf_free(&rb);
}
END_TEST

/* A buffer of only empty values has no bytes: its values are "", not
 * NULL pointers. */
START_TEST(test_rowbuf_empty_values)
{
  rowbuf rb;
  rowbuf_init(&rb, 1);
  dwl_value row[1] = {val("")};
  ck_assert_int_eq(rowbuf_add(&rb, row), 0);
  assert_val(rowbuf_get(&rb, 0, 0), "");
  rowbuf_free(&rb);
}
END_TEST

/* pop drops the last row: the next add takes its place, and the rows
 * before it are untouched (batch_unadd relies on it). */
START_TEST(test_rowbuf_pop)
{
  rowbuf rb;
  rowbuf_init(&rb, 2);
  ck_assert_int_eq(rowbuf_pop(&rb), 0);
  dwl_value a[2] = {val("1"), val("one")}, b[2] = {val("2"), val("two")}, c[2] = {val("3"), val(NULL)};
  ck_assert_int_eq(rowbuf_add(&rb, a), 0);
  ck_assert_int_eq(rowbuf_add(&rb, b), 0);
  ck_assert_int_eq(rowbuf_pop(&rb), 1);
  ck_assert_uint_eq(rb.n, 1);
  ck_assert_int_eq(rowbuf_add(&rb, c), 0);
  ck_assert_uint_eq(rb.n, 2);
  assert_val(rowbuf_get(&rb, 0, 1), "one");
  assert_val(rowbuf_get(&rb, 1, 0), "3");
  assert_val(rowbuf_get(&rb, 1, 1), NULL);
  rowbuf_free(&rb);
}
END_TEST

/* A failed add adds nothing, and every add after it fails until a
 * reset: no row is ever half there. */
START_TEST(test_rowbuf_failure_is_sticky)
{
  rowbuf rb;
  rowbuf_init(&rb, 2);
  rb.bytes.max = 8;
  dwl_value ok[2] = {val("ab"), val("cd")}, big[2] = {val("ef"), val("0123456789")};
  ck_assert_int_eq(rowbuf_add(&rb, ok), 0);
  ck_assert_int_eq(rowbuf_add(&rb, big), -1);
  ck_assert_uint_eq(rb.n, 1);
  ck_assert_int_eq(rowbuf_add(&rb, ok), -1);
  ck_assert_uint_eq(rb.n, 1);
  rowbuf_reset(&rb);
  ck_assert_uint_eq(rb.n, 0);
  ck_assert_int_eq(rowbuf_add(&rb, ok), 0);
  assert_val(rowbuf_get(&rb, 0, 0), "ab");
  assert_val(rowbuf_get(&rb, 0, 1), "cd");
  rowbuf_free(&rb);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("buf");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_poison_is_sticky);
  tcase_add_test(tc, test_small_append_after_failure);
  tcase_add_test(tc, test_reset_starts_over);
  tcase_add_test(tc, test_failure_in_the_middle_of_many);
  tcase_add_test(tc, test_whole_text_unchanged);
  tcase_add_test(tc, test_taint);
  tcase_add_test(tc, test_exec_refuses_failed_statement);
  suite_add_tcase(s, tc);
  TCase *rows = tcase_create("rowbuf");
  tcase_add_test(rows, test_rowbuf_round_trip);
  tcase_add_test(rows, test_rowbuf_empty_values);
  tcase_add_test(rows, test_rowbuf_pop);
  tcase_add_test(rows, test_rowbuf_failure_is_sticky);
  suite_add_tcase(s, rows);
  return s;
}
