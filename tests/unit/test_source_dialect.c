/* The source DBMS table (src/warehouse/source_dialect.c) the odbc plugin
 * reads instead of DBMS names: which row a driver's SQL_DBMS_NAME finds,
 * and the stream attributes added to a connection string, left out when
 * the job sets them (or one that does the same). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "source_dialect.h"

static char attrs[512];

static const char *stream(const char *dbms, const char *cs, size_t rows)
{
  dwl_buf b;
  buf_init(&b, 0);
  source_dialect_stream_attrs(source_dialect_for(dbms), cs, rows, &b);
  snprintf(attrs, sizeof attrs, "%s", b.data ? b.data : "");
  buf_free(&b);
  return attrs;
}

START_TEST(rows_by_dbms_name)
{
  const source_dialect *pg = source_dialect_for("PostgreSQL");
  ck_assert(pg->lmd_typed && pg->numeric_unknown_28_6 && pg->text_len_enforced && pg->getdata_in_block);
  ck_assert_int_eq(pg->qopen, '"');
  const source_dialect *lite = source_dialect_for("SQLite");
  ck_assert(!lite->lmd_typed && !lite->text_len_enforced && lite->getdata_in_block);
  const source_dialect *maria = source_dialect_for("MariaDB");
  ck_assert(!maria->lmd_typed && maria->text_len_enforced && !maria->getdata_in_block);
  ck_assert_int_eq(maria->qopen, '`');
  ck_assert_int_eq(maria->qclose, '`');
  /* a prefix, in any case; MySQL is the MariaDB row */
  ck_assert_ptr_eq(source_dialect_for("mysql"), maria);
  ck_assert_ptr_eq(source_dialect_for("postgresql 16"), pg);
  /* anything else: neutral traits, never NULL */
  const source_dialect *other = source_dialect_for("Oracle");
  ck_assert_ptr_nonnull(other);
  ck_assert_ptr_eq(source_dialect_for(NULL), other);
  ck_assert(!other->lmd_typed && other->text_len_enforced && other->getdata_in_block);
  ck_assert_int_eq(other->qopen, '"');
  ck_assert_ptr_null(other->stream[0].name);
}
END_TEST

START_TEST(stream_attributes)
{
  ck_assert_str_eq(stream("PostgreSQL", "DSN=x", 10), ";UseDeclareFetch=1;Fetch=1000;BoolsAsChar=0");
  ck_assert_str_eq(stream("PostgreSQL", "DSN=x", 5000), ";UseDeclareFetch=1;Fetch=5000;BoolsAsChar=0");
  /* the whole name, in any case: Fetch is not UseDeclareFetch */
  ck_assert_str_eq(stream("PostgreSQL", "DSN=x;usedeclarefetch=0", 10), ";Fetch=1000;BoolsAsChar=0");
  ck_assert_str_eq(stream("PostgreSQL", "DSN=x;FETCH=7;BoolsAsChar=1", 10), ";UseDeclareFetch=1");
  ck_assert_str_eq(stream("SQLite", "Database=a.db", 10), ";StepAPI=1");
  ck_assert_str_eq(stream("SQLite", "Database=a.db;StepAPI=0", 10), "");
  ck_assert_str_eq(stream("MariaDB", "DSN=m", 10), ";NO_CACHE=1;FORWARDONLY=1");
  /* STREAMRS streams too */
  ck_assert_str_eq(stream("MySQL", "DSN=m;STREAMRS=1", 10), ";FORWARDONLY=1");
  ck_assert_str_eq(stream("Oracle", "DSN=o", 10), "");
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("source_dialect");
  TCase *tc = tcase_create("source_dialect");
  tcase_add_test(tc, rows_by_dbms_name);
  tcase_add_test(tc, stream_attributes);
  suite_add_tcase(s, tc);
  return s;
}
