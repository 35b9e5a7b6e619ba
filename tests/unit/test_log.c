/* Unit tests for src/util/log.c (text and JSON lines, levels, hints, bytes
 * that are not UTF-8); which failures get which hint is test_hint.c's.
 * Log lines are read back from stderr, redirected to a temporary file. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "err.h"
#include "log.h"

static char captured[8192];

/* Runs fn with stderr going to a file, then reads the file into captured. */
static void capture(void (*fn)(void))
{
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  FILE *tmp = tmpfile();
  ck_assert_ptr_nonnull(tmp);
  dup2(fileno(tmp), STDERR_FILENO);
  fn();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(tmp);
  size_t n = fread(captured, 1, sizeof captured - 1, tmp);
  captured[n] = '\0';
  fclose(tmp);
}

static void reset(void)
{
  log_set_level(LOG_INFO);
  log_set_format(LOG_TEXT);
  log_set_job(NULL);
}

static void emit_text(void)
{
  log_set_job("nightly");
  log_msg(LOG_INFO, "read %d rows", 42);
  log_msg(LOG_DEBUG, "not shown at info");
  log_fields(LOG_ERROR, NULL, 0, "do this next", "it broke");
}

START_TEST(test_text_lines)
{
  reset();
  capture(emit_text);
  char *second = strchr(captured, '\n');
  ck_assert_ptr_nonnull(second);
  /* 2026-11-30T02:44:39Z dwload[nightly] info: read 42 rows */
  ck_assert_int_eq(captured[4], '-');
  ck_assert_int_eq(captured[10], 'T');
  ck_assert_int_eq(captured[19], 'Z');
  ck_assert_msg(strncmp(captured + 20, " dwload[nightly] info: read 42 rows\n", 36) == 0, "got: %s", captured);
  ck_assert_ptr_null(strstr(captured, "not shown"));
  ck_assert_ptr_nonnull(strstr(captured, " dwload[nightly] error: it broke\n"));
  ck_assert_ptr_nonnull(strstr(captured, " dwload[nightly] hint: do this next\n"));
}
END_TEST

static void emit_json(void)
{
  log_set_format(LOG_JSON);
  log_set_job("nightly");
  const log_field f[] = {{"inserted", NULL, 7}, {"table", "dim", 0}};
  log_fields(LOG_INFO, f, 2, NULL, "committed");
  log_fields(LOG_ERROR, NULL, 0, "retry later", "bad byte \xff here");
  log_set_job(NULL);
  log_msg(LOG_WARN, "no job yet");
}

START_TEST(test_json_lines)
{
  reset();
  capture(emit_json);
  char *line = captured;
  json_t *o[3];
  for (int i = 0; i < 3; i++) {
    char *nl = strchr(line, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    json_error_t e;
    o[i] = json_loads(line, 0, &e);
    ck_assert_msg(o[i] != NULL, "line %d is not JSON: %s (%s)", i, line, e.text);
    line = nl + 1;
  }
  ck_assert_str_eq(line, "");
  const char *ts = json_string_value(json_object_get(o[0], "ts"));
  ck_assert_ptr_nonnull(ts);
  ck_assert_uint_eq(strlen(ts), 24); /* 2026-11-30T02:44:39.123Z */
  ck_assert_int_eq(ts[23], 'Z');
  ck_assert_str_eq(json_string_value(json_object_get(o[0], "level")), "info");
  ck_assert_str_eq(json_string_value(json_object_get(o[0], "job")), "nightly");
  ck_assert_str_eq(json_string_value(json_object_get(o[0], "msg")), "committed");
  ck_assert_int_eq(json_integer_value(json_object_get(o[0], "inserted")), 7);
  ck_assert_str_eq(json_string_value(json_object_get(o[0], "table")), "dim");
  ck_assert_ptr_null(json_object_get(o[0], "hint"));
  ck_assert_str_eq(json_string_value(json_object_get(o[1], "msg")), "bad byte ? here");
  ck_assert_str_eq(json_string_value(json_object_get(o[1], "hint")), "retry later");
  ck_assert(json_is_null(json_object_get(o[2], "job")));
  ck_assert_str_eq(json_string_value(json_object_get(o[2], "level")), "warn");
  for (int i = 0; i < 3; i++)
    json_decref(o[i]);
  reset();
}
END_TEST

START_TEST(test_parse_level)
{
  ck_assert_int_eq(log_parse_level("error"), LOG_ERROR);
  ck_assert_int_eq(log_parse_level("WARN"), LOG_WARN);
  ck_assert_int_eq(log_parse_level("info"), LOG_INFO);
  ck_assert_int_eq(log_parse_level("debug"), LOG_DEBUG);
  ck_assert_int_eq(log_parse_level("verbose"), -1);
}
END_TEST

static void emit_hidden(void)
{
  log_msg(LOG_ERROR, "driver said: a\rb\033[2J\nDETAIL:\tx\n");
}

/* A text line shows a CR or an ESC however it got into a message; the
 * line feeds and tabs of a driver's message stay. */
START_TEST(test_text_shows_hidden_bytes)
{
  reset();
  capture(emit_hidden);
  /* One line: the driver's line feed written as \n, like the CR and ESC. */
  ck_assert_msg(strstr(captured, "driver said: a\\rb\\x1b[2J\\nDETAIL:\tx\n") != NULL, "got: %s", captured);
  ck_assert_msg(strchr(captured, '\n') == captured + strlen(captured) - 1, "more than one line: %s", captured);
}
END_TEST

/* err_quote: what a message shows of a value. */
START_TEST(test_quote_invisible_bytes)
{
  char q[64];
  ck_assert_str_eq(err_quote(q, sizeof q, "a\0b", 3, 60), "a\\0b");
  ck_assert_str_eq(err_quote(q, sizeof q, "2\r", 2, 60), "2\\r");
  ck_assert_str_eq(err_quote(q, sizeof q, "x\n\ty", 4, 60), "x\\n\\ty");
  ck_assert_str_eq(err_quote(q, sizeof q, "4\0335\177", 4, 60), "4\\x1b5\\x7f");
  ck_assert_str_eq(err_quote(q, sizeof q, "pr\xc3\xa9nom", 7, 60), "pr\xc3\xa9nom");  /* UTF-8 as it is */
  ck_assert_str_eq(err_quote(q, sizeof q, "abcdef", 6, 3), "abc...");
  /* Never past the buffer, whatever the value. */
  char small[8];
  err_quote(small, sizeof small, "\0\0\0\0\0\0\0\0", 8, 60);
  ck_assert_uint_lt(strlen(small), sizeof small);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("log");
  TCase *tc = tcase_create("log");
  tcase_add_test(tc, test_text_lines);
  tcase_add_test(tc, test_json_lines);
  tcase_add_test(tc, test_parse_level);
  tcase_add_test(tc, test_quote_invisible_bytes);
  tcase_add_test(tc, test_text_shows_hidden_bytes);
  suite_add_tcase(s, tc);
  return s;
}
