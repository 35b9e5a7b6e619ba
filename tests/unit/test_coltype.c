/* The one type-name parser (src/rows/coltype.c), which the csv and
 * http_json plugins compile in for their `types` option: every name it
 * knows, the arguments each takes, and what it refuses. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "coltype.h"

static void type_is(const char *name, int type, int precision, int scale)
{
  dwl_column c = {.name = "c", .type = -1, .precision = -1, .scale = -1};
  const char *why = NULL;
  ck_assert_msg(coltype_parse(name, &c, &why) == 0, "refused \"%s\": %s", name, why);
  ck_assert_msg(c.type == type, "\"%s\": type %d, want %d", name, c.type, type);
  ck_assert_int_eq(c.precision, precision);
  ck_assert_int_eq(c.scale, scale);
}

static void refused(const char *name, const char *want_why)
{
  dwl_column c = {.name = "c", .type = DWL_TYPE_TEXT};
  const char *why = NULL;
  ck_assert_msg(coltype_parse(name, &c, &why) == -1, "accepted \"%s\"", name);
  ck_assert_msg(strcmp(why, want_why) == 0, "\"%s\": \"%s\", want \"%s\"", name, why, want_why);
}

START_TEST(every_name)
{
  static const struct {
    const char *name;
    int type;
  } names[] = {
    {"text", DWL_TYPE_TEXT},          {"string", DWL_TYPE_TEXT},         {"clob", DWL_TYPE_TEXT},
    {"varchar", DWL_TYPE_TEXT},       {"character varying", DWL_TYPE_TEXT}, {"char", DWL_TYPE_TEXT},
    {"character", DWL_TYPE_TEXT},     {"nvarchar", DWL_TYPE_TEXT},       {"nchar", DWL_TYPE_TEXT},
    {"integer", DWL_TYPE_INTEGER},    {"int", DWL_TYPE_INTEGER},         {"bigint", DWL_TYPE_INTEGER},
    {"smallint", DWL_TYPE_INTEGER},   {"tinyint", DWL_TYPE_INTEGER},     {"int2", DWL_TYPE_INTEGER},
    {"int4", DWL_TYPE_INTEGER},       {"int8", DWL_TYPE_INTEGER},        {"numeric", DWL_TYPE_NUMERIC},
    {"decimal", DWL_TYPE_NUMERIC},    {"dec", DWL_TYPE_NUMERIC},         {"number", DWL_TYPE_NUMERIC},
    {"real", DWL_TYPE_REAL},          {"float", DWL_TYPE_REAL},          {"double", DWL_TYPE_REAL},
    {"double precision", DWL_TYPE_REAL}, {"float4", DWL_TYPE_REAL},      {"float8", DWL_TYPE_REAL},
    {"boolean", DWL_TYPE_BOOLEAN},    {"bool", DWL_TYPE_BOOLEAN},        {"date", DWL_TYPE_DATE},
    {"timestamp", DWL_TYPE_TIMESTAMP}, {"datetime", DWL_TYPE_TIMESTAMP},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    type_is(names[i].name, names[i].type, 0, 0);
}
END_TEST

START_TEST(case_and_blanks)
{
  type_is("TEXT", DWL_TYPE_TEXT, 0, 0);
  type_is("BigInt", DWL_TYPE_INTEGER, 0, 0);
  type_is("double  precision", DWL_TYPE_REAL, 0, 0);
  type_is("  date  ", DWL_TYPE_DATE, 0, 0);
  type_is("DateTime", DWL_TYPE_TIMESTAMP, 0, 0);
  type_is("Character\tVarying(4)", DWL_TYPE_TEXT, 4, 0);
}
END_TEST

START_TEST(arguments)
{
  type_is("numeric(12,2)", DWL_TYPE_NUMERIC, 12, 2);
  type_is(" NUMERIC ( 12 , 2 ) ", DWL_TYPE_NUMERIC, 12, 2);
  type_is("decimal(38,0)", DWL_TYPE_NUMERIC, 38, 0);
  type_is("numeric(10)", DWL_TYPE_NUMERIC, 10, 0);
  type_is("numeric(5,5)", DWL_TYPE_NUMERIC, 5, 5);
  type_is("number(1000,3)", DWL_TYPE_NUMERIC, 1000, 3);
  type_is("varchar(255)", DWL_TYPE_TEXT, 255, 0);
  type_is("VARCHAR (10)", DWL_TYPE_TEXT, 10, 0);
  type_is("char(1)", DWL_TYPE_TEXT, 1, 0);
  type_is("nvarchar(40)", DWL_TYPE_TEXT, 40, 0);
  /* fractional-second digits are checked, not kept: values travel as text */
  type_is("timestamp(6)", DWL_TYPE_TIMESTAMP, 0, 0);
  type_is("timestamp(0)", DWL_TYPE_TIMESTAMP, 0, 0);
}
END_TEST

START_TEST(refusals)
{
  refused("", "unknown type");
  refused("blob", "unknown type");
  refused("timestamp with", "unknown type");
  refused("int;", "unknown type");
  refused("a name longer than the thirty-one bytes of the buffer", "unknown type");
  refused("integer(5)", "this type takes no arguments");
  refused("text(10)", "this type takes no arguments");
  refused("date(1)", "this type takes no arguments");
  refused("datetime(3)", "this type takes no arguments");
  refused("varchar(1,2)", "too many type arguments");
  refused("numeric(", "malformed type arguments");
  refused("numeric()", "malformed type arguments");
  refused("numeric(12,", "malformed type arguments");
  refused("numeric(12,2", "malformed type arguments");
  refused("numeric(-1)", "malformed type arguments");
  refused("numeric(a)", "malformed type arguments");
  refused("numeric(1,2,3)", "malformed type arguments");
  refused("numeric(12,2))", "unexpected text after the type");
  refused("numeric(12,2) x", "unexpected text after the type");
  refused("numeric(99999999999999)", "type argument out of range");
  refused("numeric(0)", "precision must be between 1 and 1000");
  refused("numeric(1001)", "precision must be between 1 and 1000");
  refused("numeric(2,3)", "scale must not exceed precision");
  refused("varchar(0)", "length must be at least 1");
  refused("timestamp(10)", "fractional-second precision must be between 0 and 9");
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("coltype");
  TCase *tc = tcase_create("coltype_parse");
  tcase_add_test(tc, every_name);
  tcase_add_test(tc, case_and_blanks);
  tcase_add_test(tc, arguments);
  tcase_add_test(tc, refusals);
  suite_add_tcase(s, tc);
  return s;
}
