/* Unit tests for the http_json plugin's page parser (json_page.c) and URL
 * handling (http_url.c), on buffers and strings: no network. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "http_url.h"
#include "json_page.h"

static jp_cols C;
static jp_page P;
static char E[512];

static void setup(void)
{
  jp_cols_init(&C);
  jp_page_init(&P);
  E[0] = '\0';
}

static void teardown(void)
{
  jp_cols_free(&C);
  jp_page_free(&P);
}

static int parse(const char *records, const char *next, const char *body)
{
  return jp_parse(&C, records, next, body, strlen(body), &P, E, sizeof E);
}

/* The value at row r, column c as text; "<null>" for NULL. */
static const char *val(size_t r, size_t c)
{
  ck_assert_uint_lt(r, P.nrecords);
  ck_assert_uint_lt(c, P.ncols);
  const dwl_value *v = &P.values[r * P.ncols + c];
  if (v->is_null)
    return "<null>";
  ck_assert_uint_eq(strlen(v->data), v->len);
  return v->data;
}

static void cols_are(const char *want)
{
  char got[512] = "";
  for (size_t i = 0; i < C.n; i++) {
    if (i)
      strcat(got, ",");
    strcat(got, C.names[i]);
  }
  ck_assert_str_eq(got, want);
}

/* ---- values and inferred columns ---------------------------------------- */

START_TEST(values_as_text)
{
  ck_assert_int_eq(parse("data", NULL,
                         "{\"data\": [{\"s\": \"h\\u00e9llo\", \"i\": -42, \"r\": 0.1, \"e\": 1.5e300, \"t\": true,"
                         " \"f\": false, \"n\": null, \"o\": {\"b\": [1, 2.5, \"x\"], \"a\": {}}, \"a\": [],"
                         " \"big\": 9223372036854775807}]}"),
                   0);
  cols_are("s,i,r,e,t,f,n,o,a,big");
  ck_assert_uint_eq(P.nrecords, 1);
  ck_assert_str_eq(val(0, 0), "h\xc3\xa9llo");
  ck_assert_str_eq(val(0, 1), "-42");
  ck_assert_str_eq(val(0, 2), "0.1");
  ck_assert_str_eq(val(0, 3), "1.5e+300");
  ck_assert_str_eq(val(0, 4), "true");
  ck_assert_str_eq(val(0, 5), "false");
  ck_assert_str_eq(val(0, 6), "<null>");
  /* nested values: compact JSON, members in the order received */
  ck_assert_str_eq(val(0, 7), "{\"b\":[1,2.5,\"x\"],\"a\":{}}");
  ck_assert_str_eq(val(0, 8), "[]");
  ck_assert_str_eq(val(0, 9), "9223372036854775807");
  ck_assert_ptr_null(P.next);
}
END_TEST

START_TEST(real_shortest_round_trip)
{
  ck_assert_int_eq(parse("", NULL, "[{\"a\": 0.30000000000000004, \"b\": 12.10, \"c\": 1e-7, \"d\": 100.0}]"), 0);
  ck_assert_str_eq(val(0, 0), "0.30000000000000004");
  ck_assert_str_eq(val(0, 1), "12.1");
  ck_assert_str_eq(val(0, 2), "1e-07");
  ck_assert_str_eq(val(0, 3), "100");
}
END_TEST

START_TEST(columns_union_of_first_page)
{
  ck_assert_int_eq(parse("", NULL, "[{\"id\": 1, \"a\": \"x\"}, {\"b\": 2, \"id\": 2}, {\"id\": 3, \"a\": null, \"c\": [1]}]"),
                   0);
  cols_are("id,a,b,c");
  ck_assert_uint_eq(P.nrecords, 3);
  /* a member a record lacks is NULL, wherever it was first seen */
  ck_assert_str_eq(val(0, 2), "<null>");
  ck_assert_str_eq(val(1, 0), "2");
  ck_assert_str_eq(val(1, 1), "<null>");
  ck_assert_str_eq(val(1, 2), "2");
  ck_assert_str_eq(val(2, 3), "[1]");
  ck_assert_uint_eq(P.nunknown, 0);
}
END_TEST

START_TEST(later_pages_keep_the_columns)
{
  ck_assert_int_eq(parse("", NULL, "[{\"id\": 1, \"a\": \"x\"}]"), 0);
  ck_assert_int_eq(parse("", NULL, "[{\"id\": 2, \"z\": 1, \"y\": 2}, {\"a\": \"q\", \"z\": 3}]"), 0);
  cols_are("id,a");
  ck_assert_uint_eq(P.nrecords, 2);
  ck_assert_str_eq(val(0, 0), "2");
  ck_assert_str_eq(val(0, 1), "<null>");
  ck_assert_str_eq(val(1, 0), "<null>");
  ck_assert_str_eq(val(1, 1), "q");
  /* the extra members are reported once each, for the caller to warn */
  ck_assert_uint_eq(P.nunknown, 2);
  ck_assert_str_eq(P.unknown[0], "z");
  ck_assert_str_eq(P.unknown[1], "y");
  /* the next page starts afresh */
  ck_assert_int_eq(parse("", NULL, "[{\"id\": 3}]"), 0);
  ck_assert_uint_eq(P.nunknown, 0);
}
END_TEST

START_TEST(empty_page_leaves_columns_unknown)
{
  ck_assert_int_eq(parse("data", "next", "{\"data\": [], \"next\": \"/p2\"}"), 0);
  ck_assert_uint_eq(C.n, 0);
  ck_assert_uint_eq(P.nrecords, 0);
  ck_assert_str_eq(P.next, "/p2");
  ck_assert_int_eq(parse("data", "next", "{\"data\": [{\"k\": 1}], \"next\": null}"), 0);
  cols_are("k");
}
END_TEST

/* ---- fields ----------------------------------------------------------------- */

START_TEST(fields_by_dotted_path)
{
  ck_assert_int_eq(jp_cols_add(&C, "id", "id"), 0);
  ck_assert_int_eq(jp_cols_add(&C, "city", "addr.city"), 0);
  ck_assert_int_eq(jp_cols_add(&C, "first_tag", "tags.0"), 0);
  ck_assert_int_eq(jp_cols_add(&C, "deep", "a.b.c"), 0);
  ck_assert_int_eq(jp_cols_add(&C, "addr", "addr"), 0);
  ck_assert_int_eq(parse("result.rows", NULL,
                         "{\"result\": {\"rows\": [{\"id\": \"k1\", \"addr\": {\"city\": \"Oslo\", \"zip\": 1},"
                         " \"tags\": [\"t1\", \"t2\"], \"other\": 1}, {\"id\": \"k2\", \"tags\": \"nope\"}]}}"),
                   0);
  cols_are("id,city,first_tag,deep,addr");
  ck_assert_str_eq(val(0, 0), "k1");
  ck_assert_str_eq(val(0, 1), "Oslo");
  ck_assert_str_eq(val(0, 2), "t1");
  ck_assert_str_eq(val(0, 3), "<null>");
  ck_assert_str_eq(val(0, 4), "{\"city\":\"Oslo\",\"zip\":1}");
  /* a path through a missing member or a scalar is NULL */
  ck_assert_str_eq(val(1, 1), "<null>");
  ck_assert_str_eq(val(1, 2), "<null>");
  /* fixed columns: members outside them are not "unknown" */
  ck_assert_uint_eq(P.nunknown, 0);
}
END_TEST

/* ---- next link and cursor ---------------------------------------------------- */

START_TEST(next_values)
{
  ck_assert_int_eq(parse("items", "links.next", "{\"items\": [], \"links\": {\"next\": \"https://a/b?page=2\"}}"), 0);
  ck_assert_str_eq(P.next, "https://a/b?page=2");
  ck_assert_int_eq(parse("items", "links.next", "{\"items\": [], \"links\": {\"next\": null}}"), 0);
  ck_assert_ptr_null(P.next);
  ck_assert_int_eq(parse("items", "links.next", "{\"items\": []}"), 0);
  ck_assert_ptr_null(P.next);
  ck_assert_int_eq(parse("items", "links.next", "{\"items\": [], \"links\": {\"next\": \"\"}}"), 0);
  ck_assert_ptr_null(P.next);
  /* numeric cursors are common */
  ck_assert_int_eq(parse("items", "cursor", "{\"items\": [], \"cursor\": 1234}"), 0);
  ck_assert_str_eq(P.next, "1234");
  ck_assert_int_eq(parse("items", "cursor", "{\"items\": [], \"cursor\": {\"x\": 1}}"), -1);
  ck_assert_str_eq(E, "the next-page path 'cursor' holds an object, not a string");
}
END_TEST

/* ---- bad pages ----------------------------------------------------------------- */

START_TEST(bad_bodies)
{
  ck_assert_int_eq(parse("data", NULL, ""), -1);
  ck_assert_str_eq(E, "empty response body, expected JSON");
  ck_assert_int_eq(parse("data", NULL, "\r\n <!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), -1);
  ck_assert_str_eq(E, "the response is an HTML page, not JSON");
  ck_assert_int_eq(parse("data", NULL, "{\"data\": [{\"id\": 1}, {\"id\""), -1);
  ck_assert_msg(strncmp(E, "truncated JSON: the body ends after 26 bytes", 44) == 0, "%s", E);
  ck_assert_int_eq(parse("data", NULL, "{\"data\": [{\"id\": 1},\n {\"id\" 2}]}"), -1);
  ck_assert_msg(strstr(E, "malformed JSON at line 2, column ") == E, "%s", E);
  ck_assert_int_eq(parse("data", NULL, "{\"data\": []} trailing"), -1);
  ck_assert_msg(strstr(E, "malformed JSON") == E, "%s", E);
  /* beyond 64 bits an integer cannot be held: an error, not a wrong value */
  ck_assert_int_eq(parse("", NULL, "[{\"id\": 123456789012345678901234567890}]"), -1);
  ck_assert_msg(strstr(E, "malformed JSON") == E, "%s", E);
  ck_assert_int_eq(P.nrecords, 0);
}
END_TEST

START_TEST(bad_records)
{
  ck_assert_int_eq(parse("data", NULL, "{\"data\": {\"id\": 1}}"), -1);
  ck_assert_str_eq(E, "the records path 'data' holds an object, not an array");
  ck_assert_int_eq(parse("data.rows", NULL, "{\"data\": {\"other\": []}}"), -1);
  ck_assert_str_eq(E, "the records path 'data.rows' is not in the response");
  ck_assert_int_eq(parse("", NULL, "{\"data\": []}"), -1);
  ck_assert_str_eq(E, "the response is an object, not an array of records (set the records option to its path)");
  ck_assert_int_eq(parse("", NULL, "[{\"id\": 1}, 7]"), -1);
  ck_assert_str_eq(E, "record 2 is a number, not an object");
  ck_assert_int_eq(parse("data", NULL, "{\"data\": null}"), -1);
  ck_assert_str_eq(E, "the records path 'data' holds null, not an array");
  ck_assert_uint_eq(P.nrecords, 0);
}
END_TEST

/* ---- URLs ------------------------------------------------------------------------- */

static char *S;

static void url_teardown(void)
{
  free(S);
  S = NULL;
}

START_TEST(set_param)
{
  ck_assert_int_eq(hu_set_param("http://h/api", "page", "2", &S), 0);
  ck_assert_str_eq(S, "http://h/api?page=2");
  free(S);
  ck_assert_int_eq(hu_set_param("http://h/api?page=1&q=a&pagex=3", "page", "2", &S), 0);
  ck_assert_str_eq(S, "http://h/api?q=a&pagex=3&page=2");
  free(S);
  ck_assert_int_eq(hu_set_param("https://h:8443/api?page=1&page=9", "since", "2024-01-02 10:00:00+01&x", &S), 0);
  ck_assert_str_eq(S, "https://h:8443/api?page=1&page=9&since=2024-01-02+10%3a00%3a00%2b01%26x");
  free(S);
  ck_assert_int_eq(hu_set_param("https://h/api?only=1", "only", "2", &S), 0);
  ck_assert_str_eq(S, "https://h/api?only=2");
  free(S);
  ck_assert_int_eq(hu_set_param("not a url", "a", "b", &S), -1);
  ck_assert_ptr_null(S);
}
END_TEST

START_TEST(resolve_and_check)
{
  ck_assert_int_eq(hu_resolve("http://h:81/v1/items?page=1", "/v1/items?page=2", &S), 0);
  ck_assert_str_eq(S, "http://h:81/v1/items?page=2");
  free(S);
  ck_assert_int_eq(hu_resolve("http://h/v1/items?page=1", "items?page=2", &S), 0);
  ck_assert_str_eq(S, "http://h/v1/items?page=2");
  free(S);
  ck_assert_int_eq(hu_resolve("http://h/v1/items", "https://other/x", &S), 0);
  ck_assert_str_eq(S, "https://other/x");
  free(S);
  ck_assert_int_eq(hu_resolve("http://h/v1/items", "file:///etc/passwd", &S), -1);
  ck_assert_ptr_null(S);
  ck_assert_int_eq(hu_check("https://api.example.com/v1"), 0);
  ck_assert_int_eq(hu_check("ftp://api.example.com/v1"), -1);
  ck_assert_int_eq(hu_check("/relative"), -1);
  ck_assert_int_eq(hu_same_origin("http://h/a?x", "http://H:80/b"), 1);
  ck_assert_int_eq(hu_same_origin("http://h/a", "https://h/a"), 0);
  ck_assert_int_eq(hu_same_origin("http://h:8080/a", "http://h/a"), 0);
  ck_assert_int_eq(hu_same_origin("http://h/a", "http://evil/a"), 0);
  ck_assert_int_eq(hu_redirect_safe("http://api.x/a", "https://API.x:8443/b"), 1);
  ck_assert_int_eq(hu_redirect_safe("https://api.x/a", "https://api.x/b?c"), 1);
  ck_assert_int_eq(hu_redirect_safe("https://api.x/a", "http://api.x/a"), 0);
  ck_assert_int_eq(hu_redirect_safe("https://api.x/a", "https://cdn.x/a"), 0);
  ck_assert_int_eq(hu_redirect_safe("https://api.x/a", "ftp://api.x/a"), 0);
}
END_TEST

START_TEST(redact)
{
  S = hu_redact("https://user:pa55@api.example.com/v1/x?access_token=abc&page=2&API_KEY=k&sig=zz&name=ok#frag");
  ck_assert_str_eq(S, "https://***@api.example.com/v1/x?access_token=***&page=2&API_KEY=***&sig=***&name=ok#frag");
  ck_assert_ptr_null(strstr(S, "pa55"));
  free(S);
  S = hu_redact("http://TOKEN123@h/x?apikey&password=p");
  ck_assert_str_eq(S, "http://***@h/x?apikey=***&password=***");
  free(S);
  S = hu_redact("http://h/plain?page=1");
  ck_assert_str_eq(S, "http://h/plain?page=1");
  free(S);
  S = hu_redact("::: not ?token=secret");
  ck_assert_ptr_null(strstr(S, "secret"));
}
END_TEST

START_TEST(link_next)
{
  ck_assert_int_eq(hu_link_next("<https://api.github.com/x?page=2>; rel=\"next\", <https://api.github.com/x?page=5>; "
                                "rel=\"last\"", &S), 0);
  ck_assert_str_eq(S, "https://api.github.com/x?page=2");
  free(S);
  ck_assert_int_eq(hu_link_next("</first>; rel=first, </p3>; title=\"a, b; rel=next\"; rel=\"prev\", </p5>;"
                                " REL=\"last NEXT\"", &S), 0);
  ck_assert_str_eq(S, "/p5");
  free(S);
  ck_assert_int_eq(hu_link_next("</a,b>;rel=next", &S), 0);
  ck_assert_str_eq(S, "/a,b");
  free(S);
  ck_assert_int_eq(hu_link_next("</p1>; rel=\"prev\", </p9>; rel=\"nextpage\"", &S), 0);
  ck_assert_ptr_null(S);
  ck_assert_int_eq(hu_link_next("garbage <x>; rel=next", &S), 0);
  ck_assert_ptr_null(S);
  ck_assert_int_eq(hu_link_next("<unterminated; rel=next", &S), 0);
  ck_assert_ptr_null(S);
}
END_TEST

START_TEST(url_secrets_and_excerpt)
{
  char **sec = NULL;
  size_t n = 0;
  ck_assert_int_eq(hu_url_secrets("https://bob:hunter22@h/x?page=2&api_key=a%2Fb%3D&sig=s1gn&q=plain", &sec, &n), 0);
  ck_assert_uint_eq(n, 6);
  ck_assert_str_eq(sec[0], "bob");
  ck_assert_str_eq(sec[1], "hunter22");
  ck_assert_str_eq(sec[2], "a%2Fb%3D");
  ck_assert_str_eq(sec[3], "a/b=");
  ck_assert_str_eq(sec[4], "s1gn");
  ck_assert_str_eq(sec[5], "s1gn");
  const char body[] = "{\"error\":\n\"key a/b= or a%2Fb%3D for hunter22\", \"u\": \"bob\"}\tend \xc3\xa9\xc3\xa9";
  S = hu_excerpt(body, sizeof body - 1, 200, sec, n);
  /* "bob" is too short to scrub: three letters are too often other words */
  ck_assert_str_eq(S, "{\"error\": \"key *** or *** for ***\", \"u\": \"bob\"} end \xc3\xa9\xc3\xa9");
  free(S);
  /* the cut keeps whole UTF-8 characters, and a secret across it is scrubbed */
  S = hu_excerpt(body, sizeof body - 1, sizeof body - 3, sec, n);
  ck_assert_msg(strlen(S) < sizeof body - 3 && (unsigned char)S[strlen(S) - 1] == 0xa9, "%s", S);
  free(S);
  S = hu_excerpt("xx hunter22 yy", 14, 5, sec, n);
  ck_assert_str_eq(S, "xx **");
  for (size_t i = 0; i < n; i++)
    free(sec[i]);
  free(sec);
}
END_TEST

START_TEST(retry_after)
{
  long s = -1;
  ck_assert_int_eq(hu_retry_after("120", 0, &s), 0);
  ck_assert_int_eq(s, 120);
  ck_assert_int_eq(hu_retry_after(" 0 ", 0, &s), 0);
  ck_assert_int_eq(s, 0);
  /* Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 */
  ck_assert_int_eq(hu_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 30, &s), 0);
  ck_assert_int_eq(s, 30);
  ck_assert_int_eq(hu_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 + 30, &s), 0);
  ck_assert_int_eq(s, 0);
  ck_assert_int_eq(hu_retry_after("soon", 0, &s), -1);
  ck_assert_int_eq(hu_retry_after("12x", 0, &s), -1);
  ck_assert_int_eq(hu_retry_after("99999999999", 0, &s), -1);
}
END_TEST

START_TEST(since_text)
{
  char b[64];
  ck_assert_int_eq(hu_since_text("2024-01-02 10:30:00", "text", b, sizeof b), 0);
  ck_assert_str_eq(b, "2024-01-02 10:30:00");
  ck_assert_int_eq(hu_since_text("2024-01-02 10:30:00.25", "iso8601", b, sizeof b), 0);
  ck_assert_str_eq(b, "2024-01-02T10:30:00.25Z");
  ck_assert_int_eq(hu_since_text("2024-01-02", "iso8601", b, sizeof b), 0);
  ck_assert_str_eq(b, "2024-01-02T00:00:00Z");
  ck_assert_int_eq(hu_since_text("2024-01-02 10:30:00", "date", b, sizeof b), 0);
  ck_assert_str_eq(b, "2024-01-02");
  ck_assert_int_eq(hu_since_text("1970-01-02 00:00:01", "unix", b, sizeof b), 0);
  ck_assert_str_eq(b, "86401");
  ck_assert_int_eq(hu_since_text("2024-01-02 10:30:00", "epoch", b, sizeof b), -1);
  ck_assert_int_eq(hu_since_text("2024-01-02T10:30:00", "unix", b, sizeof b), -1);
  ck_assert_int_eq(hu_since_text("2024-01-02 10:30:00.", "iso8601", b, sizeof b), -1);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("http_page");
  TCase *tc = tcase_create("page");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, values_as_text);
  tcase_add_test(tc, real_shortest_round_trip);
  tcase_add_test(tc, columns_union_of_first_page);
  tcase_add_test(tc, later_pages_keep_the_columns);
  tcase_add_test(tc, empty_page_leaves_columns_unknown);
  tcase_add_test(tc, fields_by_dotted_path);
  tcase_add_test(tc, next_values);
  tcase_add_test(tc, bad_bodies);
  tcase_add_test(tc, bad_records);
  suite_add_tcase(s, tc);
  TCase *tu = tcase_create("url");
  tcase_add_checked_fixture(tu, NULL, url_teardown);
  tcase_add_test(tu, set_param);
  tcase_add_test(tu, resolve_and_check);
  tcase_add_test(tu, redact);
  tcase_add_test(tu, link_next);
  tcase_add_test(tu, url_secrets_and_excerpt);
  tcase_add_test(tu, retry_after);
  tcase_add_test(tu, since_text);
  suite_add_tcase(s, tu);
  return s;
}
