/* Unit tests for the csv source plugin on well-formed input: its
 * descriptor, parsing (quotes, line ends, BOM, NULL and empty, delimiters),
 * the header and the columns option, blank lines, the types option and
 * unknown options.  Malformed input, rejects and batching are tested in
 * test_csv_stream.c; the fixture is csv_fixture.h. */
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "csv_fixture.h"

/* ---- the descriptor ------------------------------------------------------- */

START_TEST(test_descriptor)
{
  plugin_lib *lib = NULL;
  dwl_error err;
  err_init(&err);
  ck_assert_msg(plugin_load("csv", &lib, &err) == 0, "%s", err.msg);
  const dwl_plugin *p = lib->p;
  ck_assert_uint_eq(p->abi_version, DWL_ABI_VERSION);
  ck_assert_uint_eq(p->size, sizeof(dwl_plugin));
  ck_assert_str_eq(p->name, "csv");
  ck_assert_str_eq(p->version, "1.0.0");
  ck_assert_int_eq(p->kind, DWL_PLUGIN_SOURCE);
  ck_assert_ptr_nonnull(p->description);
  int seen = 0;
  for (const dwl_option *o = p->options; o->name; o++) {
    ck_assert_ptr_nonnull(o->help);
    if (strcmp(o->name, "path") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_PATH);
      ck_assert_int_eq(o->required, 1);
      seen |= 1;
    } else if (strcmp(o->name, "delimiter") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_STRING);
      ck_assert_str_eq(o->def, ",");
      seen |= 2;
    } else if (strcmp(o->name, "header") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_BOOL);
      ck_assert_str_eq(o->def, "true");
      seen |= 4;
    } else if (strcmp(o->name, "columns") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_LIST);
      seen |= 8;
    } else if (strcmp(o->name, "null") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_STRING);
      ck_assert_ptr_null(o->def);
      seen |= 16;
    } else if (strcmp(o->name, "types") == 0) {
      ck_assert_int_eq(o->type, DWL_OPT_MAP);
      seen |= 32;
    }
  }
  ck_assert_int_eq(seen, 63);
  p->close(NULL);  /* must be harmless */
  plugin_unload(lib);
}
END_TEST

/* ---- basic parsing ----------------------------------------------------------- */

START_TEST(test_basic)
{
  feed("id,name,city\n1,Ann,Oslo\n2,Bob,Rome\n");
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_uint_eq(s->ncols, 3);
  ck_assert_str_eq(s->cols[0].name, "id");
  ck_assert_str_eq(s->cols[1].name, "name");
  ck_assert_str_eq(s->cols[2].name, "city");
  for (size_t i = 0; i < 3; i++) {
    ck_assert_int_eq(s->cols[i].type, DWL_TYPE_TEXT);
    ck_assert_int_eq(s->cols[i].nullable, -1);
  }
  ck_assert_int_eq(read_all(s), DWL_EOF);
  /* after the end, the end stays the end */
  dwl_batch b;
  ck_assert_int_eq(source_next(s, &b, &E), DWL_EOF);
  ck_assert_uint_eq(b.nrows, 0);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_cell(0, 1, "Ann");
  ck_cell(0, 2, "Oslo");
  ck_cell(1, 0, "2");
  ck_cell(1, 1, "Bob");
  ck_cell(1, 2, "Rome");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 3);
}
END_TEST

START_TEST(test_quoted_delimiter)
{
  feed("a,b\n\"x,y\",\"1,2,3\"\nplain,\",\"\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "x,y");
  ck_cell(0, 1, "1,2,3");
  ck_cell(1, 0, "plain");
  ck_cell(1, 1, ",");
}
END_TEST

START_TEST(test_doubled_quotes)
{
  feed("a,b\n\"say \"\"hi\"\"\",\"\"\"\"\n\"\"\"start\",\"end\"\"\"\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "say \"hi\"");
  ck_cell(0, 1, "\"");
  ck_cell(1, 0, "\"start");
  ck_cell(1, 1, "end\"");
}
END_TEST

START_TEST(test_embedded_newline)
{
  feed("id,note\n1,\"two\nlines\"\n2,\"three\n\nlines\"\n3,last\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 3);
  ck_cell(0, 1, "two\nlines");
  ck_cell(1, 1, "three\n\nlines");
  ck_cell(2, 1, "last");
  /* a record's origin is the line it starts on */
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 4);
  ck_assert_uint_eq(R.origin[2], 7);
}
END_TEST

START_TEST(test_crlf)
{
  feed("id,name\r\n1,Ann\r\n2,\"quoted\"\r\n3,\r\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 3);
  ck_assert_uint_eq(R.ncols, 2);
  ck_cell(0, 1, "Ann");
  ck_cell(1, 1, "quoted");
  ck_null(2, 1);
  ck_assert_uint_eq(R.origin[2], 4);
}
END_TEST

START_TEST(test_crlf_inside_quotes_kept)
{
  feed("id,note\r\n1,\"a\r\nb\"\r\n2,\"c\rd\"\r\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 1, "a\r\nb");
  ck_cell(1, 1, "c\rd");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 4);
}
END_TEST

START_TEST(test_bom_skipped)
{
  feed("\xEF\xBB\xBFid,name\n1,\xEF\xBB\xBFx\n");
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_str_eq(s->cols[0].name, "id");
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 0, "1");
  /* only the very start of the file is a BOM */
  ck_cell(0, 1, "\xEF\xBB\xBFx");
}
END_TEST

START_TEST(test_no_trailing_newline)
{
  feed("a,b\n1,2\n3,\"4\"");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(1, 0, "3");
  ck_cell(1, 1, "4");
  ck_assert_uint_eq(R.origin[1], 3);
}
END_TEST

START_TEST(test_no_trailing_newline_crlf_file)
{
  feed("a,b\r\n1,2\r\n3,4");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 1, "2");
  ck_cell(1, 1, "4");
}
END_TEST

START_TEST(test_empty_unquoted_is_null_quoted_is_empty)
{
  feed("a,b,c\n,\"\",x\n\"\",,\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_null(0, 0);
  ck_cell(0, 1, "");
  ck_assert_uint_eq(R.lens[1], 0);
  ck_cell(0, 2, "x");
  ck_cell(1, 0, "");
  ck_null(1, 1);
  ck_null(1, 2);
}
END_TEST

START_TEST(test_null_option)
{
  feed("a,b,c\nNULL,null,\n\"\",x,NULL\n");
  opt_str("null", "NULL");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_null(0, 0);
  ck_cell(0, 1, "null");
  ck_null(0, 2);         /* empty unquoted stays NULL */
  ck_cell(1, 0, "");     /* quoted "" stays an empty string */
  ck_cell(1, 1, "x");
  ck_null(1, 2);
}
END_TEST

START_TEST(test_spaces_are_data)
{
  feed("a,b\n  lead, trail  \n\" q \",x y\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "  lead");
  ck_cell(0, 1, " trail  ");
  ck_cell(1, 0, " q ");
  ck_cell(1, 1, "x y");
}
END_TEST

START_TEST(test_delimiter_semicolon)
{
  feed("a;b;c\n1,5;\"x;y\";3\n");
  opt_str("delimiter", ";");
  load_ok(0);
  ck_assert_uint_eq(R.ncols, 3);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 0, "1,5");
  ck_cell(0, 1, "x;y");
  ck_cell(0, 2, "3");
}
END_TEST

START_TEST(test_delimiter_tab)
{
  feed("a\tb\tc\n1\t\t two \n\"x\ty\"\t,\t\n");
  opt_str("delimiter", "\t");
  load_ok(0);
  ck_assert_uint_eq(R.ncols, 3);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_null(0, 1);
  ck_cell(0, 2, " two ");
  ck_cell(1, 0, "x\ty");
  ck_cell(1, 1, ",");
  ck_null(1, 2);
}
END_TEST

START_TEST(test_delimiter_invalid)
{
  feed("a,b\n1,2\n");
  opt_str("delimiter", ";;");
  load_fails(0, "delimiter", "exactly one byte", END);
}
END_TEST

START_TEST(test_delimiter_empty)
{
  feed("a,b\n1,2\n");
  opt_str("delimiter", "");
  load_fails(0, "delimiter", END);
}
END_TEST

/* ---- header and columns ---------------------------------------------------- */

START_TEST(test_header_false_columns)
{
  feed("1,Ann\n2,Bob\n");
  opt_str("header", "false");
  opt_list("columns", "id", "name", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_uint_eq(s->ncols, 2);
  ck_assert_str_eq(s->cols[0].name, "id");
  ck_assert_str_eq(s->cols[1].name, "name");
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(0, 0, "1");
  ck_cell(1, 1, "Bob");
  ck_assert_uint_eq(R.origin[0], 1);
  ck_assert_uint_eq(R.origin[1], 2);
}
END_TEST

START_TEST(test_header_false_needs_columns)
{
  feed("1,2\n");
  opt_str("header", "false");
  load_fails(0, "columns", "header is false", END);
}
END_TEST

START_TEST(test_header_false_empty_file)
{
  feed("");
  opt_str("header", "false");
  opt_list("columns", "a", END);
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 0);
  ck_assert_uint_eq(R.nbatches, 0);
}
END_TEST

START_TEST(test_header_matches_columns)
{
  feed("id,name\n1,Ann\n");
  opt_list("columns", "id", "name", END);
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 1, "Ann");
}
END_TEST

START_TEST(test_header_columns_name_mismatch)
{
  feed("id,name\n1,Ann\n");
  opt_list("columns", "id", "nome", END);
  load_fails(0, "feed.csv:1:", "\"name\"", "\"nome\"", END);
}
END_TEST

START_TEST(test_header_columns_count_mismatch)
{
  feed("id,name,city\n1,Ann,Oslo\n");
  opt_list("columns", "id", "name", END);
  load_fails(0, "feed.csv:1:", "3 columns", "lists 2", END);
}
END_TEST

START_TEST(test_duplicate_header)
{
  feed("id,name,id\n1,2,3\n");
  load_fails(0, "feed.csv:1:", "duplicate column name \"id\"", END);
}
END_TEST

START_TEST(test_empty_header_name)
{
  feed("id,,name\n1,2,3\n");
  load_fails(0, "feed.csv:1:", "column 2", "empty name", END);
}
END_TEST

START_TEST(test_empty_file)
{
  feed("");
  load_fails(0, "feed.csv: empty file, expected a header", END);
}
END_TEST

START_TEST(test_blank_only_file)
{
  feed("\n\r\n\n");
  load_fails(0, "feed.csv: empty file, expected a header", END);
}
END_TEST

START_TEST(test_header_only)
{
  feed("a,b\n");
  load_ok(0);
  ck_assert_uint_eq(R.ncols, 2);
  ck_assert_uint_eq(R.nrows, 0);
}
END_TEST

START_TEST(test_missing_file)
{
  opt_str("path", "feed.csv");
  load_fails(0, "cannot open ", "feed.csv: No such file or directory", END);
}
END_TEST

START_TEST(test_nul_byte_kept)
{
  static const char data[] = "a,b\n1,x\0y\n";
  write_bytes("feed.csv", data, sizeof data - 1);
  opt_str("path", "feed.csv");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 1);
  ck_assert_uint_eq(R.lens[1], 3);
  ck_assert_int_eq(memcmp(R.cells[1], "x\0y", 3), 0);
}
END_TEST

/* ---- blank lines --------------------------------------------------------------- */

START_TEST(test_blank_lines_at_end_ignored)
{
  feed("a,b\n1,2\n3,4\n\n\r\n\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 2);
  ck_cell(1, 1, "4");
}
END_TEST

START_TEST(test_blank_line_in_middle)
{
  feed("a,b\n1,2\n\n3,4\n");
  load_fails(0, "feed.csv:3: row has 1 field, expected 2", "blank line", END);
}
END_TEST

START_TEST(test_blank_line_one_column)
{
  feed("v\nx\n\n\ny\n\n");
  load_ok(0);
  ck_assert_uint_eq(R.nrows, 4);
  ck_cell(0, 0, "x");
  ck_null(1, 0);
  ck_null(2, 0);
  ck_cell(3, 0, "y");
  ck_assert_uint_eq(R.origin[0], 2);
  ck_assert_uint_eq(R.origin[1], 3);
  ck_assert_uint_eq(R.origin[2], 4);
  ck_assert_uint_eq(R.origin[3], 5);
}
END_TEST

START_TEST(test_blank_line_before_header)
{
  feed("\na,b\n1,2\n");
  load_fails(0, "feed.csv:1:", "header", END);
}
END_TEST

/* ---- types ------------------------------------------------------------------------ */

START_TEST(test_types)
{
  feed("id,amount,name,score,ok,day,at,code,big,x\n1,2.50,n,1.5,true,2020-01-01,2020-01-01 10:00:00,ab,9,z\n");
  opt_map("types", "id", "integer", "amount", "numeric(12,2)", "score", "Double Precision", "ok", "boolean", "day",
          "date", "at", "timestamp", "code", "varchar(20)", "big", "bigint", "name", "text", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_uint_eq(s->ncols, 10);
  ck_assert_int_eq(s->cols[0].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[1].type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(s->cols[1].precision, 12);
  ck_assert_int_eq(s->cols[1].scale, 2);
  ck_assert_int_eq(s->cols[2].type, DWL_TYPE_TEXT);
  ck_assert_int_eq(s->cols[3].type, DWL_TYPE_REAL);
  ck_assert_int_eq(s->cols[4].type, DWL_TYPE_BOOLEAN);
  ck_assert_int_eq(s->cols[5].type, DWL_TYPE_DATE);
  ck_assert_int_eq(s->cols[6].type, DWL_TYPE_TIMESTAMP);
  ck_assert_int_eq(s->cols[7].type, DWL_TYPE_TEXT);
  ck_assert_int_eq(s->cols[7].precision, 20);
  ck_assert_int_eq(s->cols[8].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[9].type, DWL_TYPE_TEXT);   /* not listed */
  for (size_t i = 0; i < s->ncols; i++)
    ck_assert_int_eq(s->cols[i].nullable, -1);
  ck_assert_int_eq(read_all(s), DWL_EOF);
  source_close(s);
  ck_assert_uint_eq(R.nrows, 1);
  ck_cell(0, 1, "2.50");  /* values travel as text, unchanged */
}
END_TEST

START_TEST(test_types_more_names)
{
  feed("a,b,c,d,e,f\n1,2,3,4,5,6\n");
  opt_map("types", "a", "int", "b", "decimal( 10 , 3 )", "c", "NUMERIC", "d", "float", "e", "bool", "f",
          "character varying(5)", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_int_eq(s->cols[0].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[1].type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(s->cols[1].precision, 10);
  ck_assert_int_eq(s->cols[1].scale, 3);
  ck_assert_int_eq(s->cols[2].type, DWL_TYPE_NUMERIC);
  ck_assert_int_eq(s->cols[2].precision, 0);
  ck_assert_int_eq(s->cols[3].type, DWL_TYPE_REAL);
  ck_assert_int_eq(s->cols[4].type, DWL_TYPE_BOOLEAN);
  ck_assert_int_eq(s->cols[5].type, DWL_TYPE_TEXT);
  ck_assert_int_eq(s->cols[5].precision, 5);
  source_close(s);
}
END_TEST

START_TEST(test_types_unknown_column)
{
  feed("id,name\n1,a\n");
  opt_map("types", "id", "integer", "nmae", "text", END);
  load_fails(0, "feed.csv", "types", "\"nmae\"", END);
}
END_TEST

START_TEST(test_types_bad_type)
{
  static const char *const bad[] = {"integr", "numeric(0)", "numeric(5,6)", "numeric(1,2,3)", "integer(4)",
                                    "varchar(", "varchar(10) x", "date()"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    teardown();
    setup();
    feed("id,name\n1,a\n");
    opt_map("types", "id", bad[i], END);
    load_fails(0, "types", "\"id\"", bad[i], END);
  }
}
END_TEST

START_TEST(test_types_with_header_false)
{
  feed("1,a\n");
  opt_str("header", "false");
  opt_list("columns", "id", "name", END);
  opt_map("types", "id", "bigint", END);
  dwl_source *s = open_src(0);
  ck_assert_msg(s != NULL, "%s", E.msg);
  ck_assert_int_eq(s->cols[0].type, DWL_TYPE_INTEGER);
  ck_assert_int_eq(s->cols[1].type, DWL_TYPE_TEXT);
  source_close(s);
}
END_TEST

START_TEST(test_unknown_option_rejected)
{
  feed("a\n1\n");
  opt_str("delimeter", ";");
  load_fails(0, "job.yaml:", "unknown option 'delimeter'", END);
}
END_TEST

static Suite *make_suite(void)
{
  use_build_plugins();

  Suite *s = suite_create("csv");
  TCase *tc = tcase_create("csv");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_descriptor);
  tcase_add_test(tc, test_basic);
  tcase_add_test(tc, test_quoted_delimiter);
  tcase_add_test(tc, test_doubled_quotes);
  tcase_add_test(tc, test_embedded_newline);
  tcase_add_test(tc, test_crlf);
  tcase_add_test(tc, test_crlf_inside_quotes_kept);
  tcase_add_test(tc, test_bom_skipped);
  tcase_add_test(tc, test_no_trailing_newline);
  tcase_add_test(tc, test_no_trailing_newline_crlf_file);
  tcase_add_test(tc, test_empty_unquoted_is_null_quoted_is_empty);
  tcase_add_test(tc, test_null_option);
  tcase_add_test(tc, test_spaces_are_data);
  tcase_add_test(tc, test_delimiter_semicolon);
  tcase_add_test(tc, test_delimiter_tab);
  tcase_add_test(tc, test_delimiter_invalid);
  tcase_add_test(tc, test_delimiter_empty);
  tcase_add_test(tc, test_header_false_columns);
  tcase_add_test(tc, test_header_false_needs_columns);
  tcase_add_test(tc, test_header_false_empty_file);
  tcase_add_test(tc, test_header_matches_columns);
  tcase_add_test(tc, test_header_columns_name_mismatch);
  tcase_add_test(tc, test_header_columns_count_mismatch);
  tcase_add_test(tc, test_duplicate_header);
  tcase_add_test(tc, test_empty_header_name);
  tcase_add_test(tc, test_empty_file);
  tcase_add_test(tc, test_blank_only_file);
  tcase_add_test(tc, test_header_only);
  tcase_add_test(tc, test_missing_file);
  tcase_add_test(tc, test_nul_byte_kept);
  tcase_add_test(tc, test_blank_lines_at_end_ignored);
  tcase_add_test(tc, test_blank_line_in_middle);
  tcase_add_test(tc, test_blank_line_one_column);
  tcase_add_test(tc, test_blank_line_before_header);
  tcase_add_test(tc, test_types);
  tcase_add_test(tc, test_types_more_names);
  tcase_add_test(tc, test_types_unknown_column);
  tcase_add_test(tc, test_types_bad_type);
  tcase_add_test(tc, test_types_with_header_false);
  tcase_add_test(tc, test_unknown_option_rejected);
  suite_add_tcase(s, tc);
  return s;
}
