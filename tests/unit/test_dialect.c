/* The dialect interface: each warehouse's SQL builders spell the
 * statements the writer, pushdown and migrate run as that warehouse
 * takes them, and the interface is complete for every dialect (a
 * dialect missing a builder would crash the run that needs it). */
#include <string.h>

#include "check_main.h"
#include "dialect.h"

static const dialect *const all[] = {&dialect_sqlite, &dialect_pg, &dialect_mariadb};

static char *built(void (*fn)(dwl_buf *, const char *, const char *, const char *))
{
  dwl_buf b;
  buf_init(&b, 0);
  fn(&b, "\"t\"", "stg", "d.k = s.k");
  return buf_steal(&b);
}

START_TEST(test_for_dbms)
{
  dwl_error err;
  err_init(&err);
  ck_assert_ptr_eq(dialect_for_dbms("SQLite", &err), &dialect_sqlite);
  ck_assert_ptr_eq(dialect_for_dbms("PostgreSQL", &err), &dialect_pg);
  ck_assert_ptr_eq(dialect_for_dbms("MariaDB", &err), &dialect_mariadb);
  ck_assert_ptr_null(dialect_for_dbms("Oracle", &err));
  ck_assert_str_eq(err.msg, "unsupported warehouse 'Oracle' (dwload speaks: SQLite, PostgreSQL, MariaDB)");
  char names[200];
  dialect_names(names, sizeof names);
  ck_assert_str_eq(names, "SQLite, PostgreSQL, MariaDB");
}
END_TEST

/* Every builder and capability the callers rely on is there. */
START_TEST(test_complete)
{
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    const dialect *d = all[i];
    ck_assert_ptr_nonnull(d->update_begin);
    ck_assert_ptr_nonnull(d->update_end);
    ck_assert_ptr_nonnull(d->set_prefix);
    ck_assert_ptr_nonnull(d->delete_matching);
    ck_assert_ptr_nonnull(d->delete_unmatched);
    ck_assert_ptr_nonnull(d->catalog_name);
    ck_assert_ptr_nonnull(d->type_sql);
    ck_assert_ptr_nonnull(d->param_type);
    ck_assert_ptr_nonnull(d->lock_conflict);
    ck_assert_ptr_nonnull(d->lock_timeout_sql);
    /* arrays come whole or not at all */
    int arrays = (d->row_array_insert != NULL) + (d->row_array_add != NULL) + (d->row_array_end != NULL);
    ck_assert(arrays == 0 || arrays == 3);
  }
}
END_TEST

START_TEST(test_update_from_stage)
{
  struct { const dialect *d; const char *want; } cases[] = {
    {&dialect_sqlite, "UPDATE \"t\" AS d SET a = s.a FROM stg AS s WHERE d.k = s.k"},
    {&dialect_pg, "UPDATE \"t\" AS d SET a = s.a FROM stg AS s WHERE d.k = s.k"},
    {&dialect_mariadb, "UPDATE \"t\" AS d JOIN stg AS s ON d.k = s.k SET d.a = s.a"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const dialect *d = cases[i].d;
    dwl_buf b;
    buf_init(&b, 0);
    d->update_begin(&b, "\"t\"", "stg", "d.k = s.k");
    buf_printf(&b, "%sa = s.a", d->set_prefix);
    d->update_end(&b, "stg", "d.k = s.k");
    char *sql = buf_steal(&b);
    ck_assert_str_eq(sql, cases[i].want);
    free(sql);
  }
}
END_TEST

START_TEST(test_delete_matching)
{
  char *s = built(dialect_sqlite.delete_matching), *p = built(dialect_pg.delete_matching),
       *m = built(dialect_mariadb.delete_matching);
  ck_assert_str_eq(s, "DELETE FROM \"t\" AS d WHERE EXISTS (SELECT 1 FROM stg AS s WHERE d.k = s.k)");
  ck_assert_str_eq(p, "DELETE FROM \"t\" AS d USING stg AS s WHERE d.k = s.k");
  ck_assert_str_eq(m, "DELETE d FROM \"t\" AS d JOIN stg AS s ON d.k = s.k");
  free(s);
  free(p);
  free(m);
}
END_TEST

START_TEST(test_delete_unmatched)
{
  const char *want[] = {
    "DELETE FROM \"t\" AS d WHERE NOT EXISTS (SELECT 1 FROM stg AS s WHERE d.k = s.k)",
    "DELETE FROM \"t\" AS d WHERE NOT EXISTS (SELECT 1 FROM stg AS s WHERE d.k = s.k)",
    "DELETE d FROM \"t\" AS d LEFT JOIN stg AS s ON d.k = s.k WHERE s.one IS NULL",
  };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    dwl_buf b;
    buf_init(&b, 0);
    all[i]->delete_unmatched(&b, "\"t\"", "stg", "d.k = s.k", "one");
    char *sql = buf_steal(&b);
    ck_assert_str_eq(sql, want[i]);
    free(sql);
  }
}
END_TEST

/* A failed buffer stays failed through a builder: nothing built from it. */
START_TEST(test_failed_buffer)
{
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    dwl_buf b;
    buf_init(&b, 8);
    buf_printf(&b, "%0200d", 1);
    ck_assert(b.failed);
    all[i]->delete_matching(&b, "\"t\"", "stg", "d.k = s.k");
    ck_assert_ptr_null(buf_steal(&b));
  }
}
END_TEST

START_TEST(test_catalog_names)
{
  char out[100];
  ck_assert_int_eq(dialect_sqlite.catalog_name("", "sqlite_sequence", out, sizeof out), 0);
  ck_assert_int_eq(dialect_sqlite.catalog_name("", "dim", out, sizeof out), 1);
  ck_assert_str_eq(out, "dim");
  ck_assert_int_eq(dialect_pg.catalog_name("pg_catalog", "pg_class", out, sizeof out), 0);
  ck_assert_int_eq(dialect_pg.catalog_name("information_schema", "tables", out, sizeof out), 0);
  ck_assert_int_eq(dialect_pg.catalog_name("public", "dim", out, sizeof out), 1);
  ck_assert_str_eq(out, "dim");
  ck_assert_int_eq(dialect_pg.catalog_name("sales", "dim", out, sizeof out), 1);
  ck_assert_str_eq(out, "sales.dim");
  ck_assert_int_eq(dialect_mariadb.catalog_name("", "dim", out, sizeof out), 1);
  ck_assert_str_eq(out, "dim");
}
END_TEST

/* PostgreSQL's row arrays: a field's quotes and backslashes are escaped
 * for the record and again for the array; NULL is an empty field. */
START_TEST(test_pg_row_array)
{
  dwl_value row[3] = {{"a\"b", 3, 0}, {NULL, 0, 1}, {"c\\d", 3, 0}};
  dwl_buf b;
  buf_init(&b, 0);
  ck_assert_int_eq(dialect_pg.row_array_add(&b, 1, row, 3), 0);
  ck_assert_int_eq(dialect_pg.row_array_add(&b, 0, row, 1), 0);
  ck_assert_int_eq(dialect_pg.row_array_end(&b), 0);
  char *lit = buf_steal(&b);
  ck_assert_str_eq(lit, "{\"(\\\"a\\\\\\\"b\\\",,\\\"c\\\\\\\\d\\\")\",\"(\\\"a\\\\\\\"b\\\")\"}");
  free(lit);
  buf_init(&b, 0);
  dialect_pg.row_array_insert(&b, "\"t\"", "\"a\", \"b\"");
  lit = buf_steal(&b);
  ck_assert_str_eq(lit, "INSERT INTO \"t\" (\"a\", \"b\") SELECT * FROM unnest(?::\"t\"[])");
  free(lit);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("dialect");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_for_dbms);
  tcase_add_test(tc, test_complete);
  tcase_add_test(tc, test_update_from_stage);
  tcase_add_test(tc, test_delete_matching);
  tcase_add_test(tc, test_delete_unmatched);
  tcase_add_test(tc, test_failed_buffer);
  tcase_add_test(tc, test_catalog_names);
  tcase_add_test(tc, test_pg_row_array);
  suite_add_tcase(s, tc);
  return s;
}
