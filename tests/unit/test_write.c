/* The write paths: the bulk inserts (batch.h) against a real SQLite
 * database through libsqliteodbc (rows arrive, NULLs stay NULLs, a batch
 * over the dialect's max_params splits, a failed row fails its batch with
 * an error naming the table, plan mode prints instead of sending), and
 * the writer's statements per dialect, read from plan mode's --sql
 * output, which needs no server: staged expires, type 1 overwrites,
 * upsert updates and removals, and the per-key statements for a key with
 * a NULL part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "check_main.h"
#include "scd.h"
#include "spec.h"
#include "target.h"
#include "writer.h"

/* ---- bulk inserts on SQLite ------------------------------------------------ */

static char dbpath[64];
static odbc_conn *conn;
static dwl_error err;
static char *const cols2[] = {"\"a\"", "\"b\""};
static SQLSMALLINT types2[2];

static void db_setup(void)
{
  snprintf(dbpath, sizeof dbpath, "/tmp/dwl_test_write.XXXXXX");
  int fd = mkstemp(dbpath);
  ck_assert_int_ge(fd, 0);
  close(fd);
  err_init(&err);
  char cs[128];
  snprintf(cs, sizeof cs, "Driver=SQLite3;Database=%s", dbpath);
  ck_assert_msg(odbc_connect(cs, &conn, &err) == 0, "connect: %s", err.msg);
  ck_assert_msg(odbc_exec(conn, "CREATE TABLE t (a INTEGER, b TEXT)", NULL, NULL, 0, &err) == 0, "%s", err.msg);
  ck_assert_msg(odbc_exec(conn, "CREATE TABLE u (a INTEGER PRIMARY KEY, b TEXT NOT NULL)", NULL, NULL, 0, &err) == 0,
                "%s", err.msg);
  types2[0] = dialect_sqlite.param_type(DWL_TYPE_INTEGER);
  types2[1] = dialect_sqlite.param_type(DWL_TYPE_TEXT);
}

static void err_setup(void)
{
  err_init(&err);
}

static void db_teardown(void)
{
  odbc_close(conn);
  conn = NULL;
  unlink(dbpath);
}

/* The table's rows, "a|b" each (NULL as \N), ordered by a; "" for none. */
static char *table_text(const char *table)
{
  char sql[128];
  snprintf(sql, sizeof sql, "SELECT a, b FROM %s ORDER BY a IS NULL, a", table);
  odbc_stmt *st = NULL;
  dwl_error e;
  err_init(&e);
  ck_assert_msg(ostmt_prepare(conn, sql, &st, &e) == 0 && ostmt_execute(st, NULL, NULL, 0, &e) == 0, "%s", e.msg);
  dwl_buf b;
  buf_init(&b, 0);
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(st, &r, &e)) == 1)
    for (int i = 0; i < 2; i++)
      buf_printf(&b, "%s%s", r[i].is_null ? "\\N" : r[i].data, i ? "\n" : "|");
  ck_assert_msg(f == 0, "%s", e.msg);
  ostmt_free(st);
  buf_addc(&b, '\0');
  return buf_steal(&b);
}

static long long table_count(const char *table)
{
  char *s = table_text(table);
  long long n = 0;
  for (char *p = s; *p; p++)
    n += *p == '\n';
  free(s);
  return n;
}

static void row2(dwl_value *row, const char *a, const char *b)
{
  row[0] = (dwl_value){a, a ? strlen(a) : 0, a == NULL};
  row[1] = (dwl_value){b, b ? strlen(b) : 0, b == NULL};
}

/* A batch into table (a, b), which must open. */
static batch *open_on(const dialect *d, const char *table, const batch_opts *o)
{
  batch *b;
  ck_assert_msg(batch_open(conn, d, table, cols2, types2, 2, o, &b, &err) == 0, "%s", err.msg);
  return b;
}

/* Queues row (a, b), which must succeed. */
static void add(batch *b, const char *a, const char *v)
{
  dwl_value row[2];
  row2(row, a, v);
  ck_assert_msg(batch_add(b, row, &err) == 0, "%s", err.msg);
}

static void check_table(const char *table, const char *want)
{
  char *got = table_text(table);
  ck_assert_str_eq(got, want);
  free(got);
}

START_TEST(test_rows_arrive)
{
  batch *b = open_on(&dialect_sqlite, "t", NULL);
  add(b, "2", "it's");
  add(b, "1", "x");
  ck_assert_uint_eq(batch_pending(b), 2);
  ck_assert_int_eq(batch_sent(b), 0);
  check_table("t", "");  /* nothing sent before the batch fills or is flushed */
  ck_assert_msg(batch_flush(b, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(batch_pending(b), 0);
  ck_assert_int_eq(batch_sent(b), 2);
  check_table("t", "1|x\n2|it's\n");
  ck_assert_int_eq(batch_flush(b, &err), 0);  /* nothing pending: nothing sent */
  ck_assert_int_eq(batch_sent(b), 2);
  batch_free(b);
  check_table("t", "1|x\n2|it's\n");
}
END_TEST

START_TEST(test_nulls)
{
  batch *b = open_on(&dialect_sqlite, "t", NULL);
  add(b, "1", NULL);
  add(b, "2", "");
  add(b, NULL, "n");
  ck_assert_msg(batch_flush(b, &err) == 0, "%s", err.msg);
  batch_free(b);
  check_table("t", "1|\\N\n2|\n\\N|n\n");
}
END_TEST

/* A dialect taking 6 parameters per statement: 3 rows of 2 columns. */
START_TEST(test_split)
{
  dialect small = dialect_sqlite;
  small.max_params = 6;
  batch *b = open_on(&small, "t", NULL);
  char a[16];
  for (int i = 1; i <= 7; i++) {
    snprintf(a, sizeof a, "%d", i);
    add(b, a, "v");
    ck_assert_uint_eq(batch_pending(b), (size_t)(i % 3));
    ck_assert_int_eq(batch_sent(b), i / 3 * 3);
    ck_assert_int_eq(table_count("t"), i / 3 * 3);
  }
  ck_assert_int_eq(batch_flush(b, &err), 0);
  ck_assert_int_eq(table_count("t"), 7);
  batch_free(b);
  check_table("t", "1|v\n2|v\n3|v\n4|v\n5|v\n6|v\n7|v\n");
}
END_TEST

/* Fewer parameters per statement than a row has: a row per statement. */
START_TEST(test_split_narrow)
{
  dialect tiny = dialect_sqlite;
  tiny.max_params = 1;
  batch *b = open_on(&tiny, "t", NULL);
  add(b, "1", "x");
  ck_assert_int_eq(batch_sent(b), 1);
  add(b, "2", "y");
  ck_assert_int_eq(batch_sent(b), 2);
  batch_free(b);
  check_table("t", "1|x\n2|y\n");
}
END_TEST

/* The real dialect's cap: 500 rows per statement whatever max_params allows. */
START_TEST(test_split_rows)
{
  batch *b = open_on(&dialect_sqlite, "t", NULL);
  char a[16];
  for (int i = 0; i < 1201; i++) {
    snprintf(a, sizeof a, "%d", i);
    add(b, a, i % 2 ? NULL : a);
  }
  ck_assert_int_eq(batch_sent(b), 1000);
  ck_assert_uint_eq(batch_pending(b), 201);
  ck_assert_int_eq(table_count("t"), 1000);
  ck_assert_int_eq(batch_flush(b, &err), 0);
  ck_assert_int_eq(table_count("t"), 1201);
  batch_free(b);
}
END_TEST

/* A row the table refuses fails its whole statement, named by `what`;
 * the batches before it stay. */
START_TEST(test_failed_row_full)
{
  dialect small = dialect_sqlite;
  small.max_params = 6;
  batch_opts o = {.what = "inserting into u"};
  batch *b = open_on(&small, "u", &o);
  dwl_value row[2];
  const char *vals[][2] = {{"1", "x"}, {"2", "y"}, {"3", "z"}, {"4", "p"}, {"5", NULL}};
  for (int i = 0; i < 5; i++) {
    add(b, vals[i][0], vals[i][1]);
  }
  row2(row, "6", "q");
  ck_assert_int_eq(batch_add(b, row, &err), -1);  /* the full batch with row 5 */
  ck_assert_msg(strncmp(err.msg, "inserting into u: ", 18) == 0, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "NOT NULL") != NULL, "%s", err.msg);
  ck_assert_int_eq(err.code, DWL_EXIT_FAILED);
  batch_free(b);
  check_table("u", "1|x\n2|y\n3|z\n");
}
END_TEST

/* The same for the last, partial batch, sent by the flush. */
START_TEST(test_failed_row_last)
{
  batch_opts o = {.what = "inserting into u"};
  batch *b = open_on(&dialect_sqlite, "u", &o);
  add(b, "1", "x");
  add(b, "1", "again");
  ck_assert_int_eq(batch_flush(b, &err), -1);
  ck_assert_msg(strncmp(err.msg, "inserting into u: ", 18) == 0, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "UNIQUE") != NULL, "%s", err.msg);
  batch_free(b);
  check_table("u", "");
}
END_TEST

START_TEST(test_unadd)
{
  batch *b = open_on(&dialect_sqlite, "t", NULL);
  add(b, "1", "first");
  add(b, "2", "taken back");
  ck_assert_int_eq(batch_unadd(b), 1);
  ck_assert_uint_eq(batch_pending(b), 1);
  add(b, "2", "second");
  ck_assert_int_eq(batch_flush(b, &err), 0);
  ck_assert_int_eq(batch_unadd(b), 0);  /* nothing pending */
  batch_free(b);
  check_table("t", "1|first\n2|second\n");
}
END_TEST

/* The table and column names are the batch's own copies. */
START_TEST(test_names_copied)
{
  char table[8] = "t", a[8] = "\"a\"", bn[8] = "\"b\"";
  char *cols[] = {a, bn};
  batch *b;
  ck_assert_int_eq(batch_open(conn, &dialect_sqlite, table, cols, types2, 2, NULL, &b, &err), 0);
  strcpy(table, "nope");
  strcpy(a, "\"x\"");
  cols[1] = NULL;
  add(b, "1", "x");
  ck_assert_msg(batch_flush(b, &err) == 0, "%s", err.msg);
  batch_free(b);
  check_table("t", "1|x\n");
}
END_TEST

/* Plan mode prints the statement once and a line per row, sends nothing. */
START_TEST(test_print)
{
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  batch_opts o = {.print = 1, .sqlout = f};
  batch *b = open_on(&dialect_sqlite, "t", &o);
  add(b, "1", "it's");
  add(b, "2", NULL);
  ck_assert_int_eq(batch_flush(b, &err), 0);
  ck_assert_int_eq(batch_sent(b), 2);
  batch_free(b);
  fclose(f);
  ck_assert_str_eq(out, "INSERT INTO t (\"a\", \"b\") VALUES (?, ?);\n  -- ('1', 'it''s')\n  -- ('2', NULL)\n");
  free(out);
  check_table("t", "");
}
END_TEST

/* ---- the array forms on PostgreSQL ------------------------------------------
 * Only where the suite's servers are given (DWL_PG_*, tests/servers.sh):
 * the column arrays the writer sends and the row arrays of whole rows,
 * each sent on the connection's own thread. */

static int have_pg(void)
{
  return getenv("DWL_PG_HOST") && getenv("DWL_PG_PORT") && getenv("DWL_PG_USER") && getenv("DWL_PG_PASSWORD");
}

static char odbcdir[64];

/* Debian's driver entry has psqlodbc log every connection (CommLog=1)
 * into /tmp: the test's logs go to a directory of its own instead, as in
 * tests/integration/lib.sh (ODBCSYSINI: the entry copied, Logdir added). */
static void pg_odbcinst(void)
{
  snprintf(odbcdir, sizeof odbcdir, "/tmp/dwl_test_write.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(odbcdir));
  char path[128], line[512];
  snprintf(path, sizeof path, "%s/odbcinst.ini", odbcdir);
  FILE *in = popen("odbcinst -q -d -n 'PostgreSQL Unicode'", "r"), *out = fopen(path, "w");
  ck_assert(in && out);
  while (fgets(line, sizeof line, in))
    fputs(line, out);
  fprintf(out, "Logdir=%s\n", odbcdir);
  ck_assert_int_eq(pclose(in), 0);
  ck_assert_int_eq(fclose(out), 0);
  setenv("ODBCSYSINI", odbcdir, 1);
}

static void pg_setup(void)
{
  err_init(&err);
  pg_odbcinst();
  char cs[512];
  snprintf(cs, sizeof cs, "Driver=PostgreSQL Unicode;Server=%s;Port=%s;Database=postgres;Uid=%s;Pwd=%s",
           getenv("DWL_PG_HOST"), getenv("DWL_PG_PORT"), getenv("DWL_PG_USER"), getenv("DWL_PG_PASSWORD"));
  ck_assert_msg(odbc_connect(cs, &conn, &err) == 0, "connect: %s", err.msg);
  ck_assert_msg(odbc_exec(conn, "CREATE TEMPORARY TABLE t (a integer, b text)", NULL, NULL, 0, &err) == 0, "%s",
                err.msg);
  ck_assert_msg(odbc_exec(conn, "CREATE TEMPORARY TABLE u (a integer PRIMARY KEY, b text NOT NULL)", NULL, NULL, 0,
                          &err) == 0, "%s", err.msg);
  types2[0] = dialect_pg.param_type(DWL_TYPE_INTEGER);
  types2[1] = dialect_pg.param_type(DWL_TYPE_TEXT);
}

static void pg_teardown(void)
{
  odbc_close(conn);  /* the temporary tables go with the session */
  conn = NULL;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", odbcdir);
  ck_assert_int_eq(system(cmd), 0);
}

/* Values an array literal must escape: quotes, backslashes, braces,
 * commas, the word NULL, an empty string; and NULL itself. */
static void pg_arrays(int whole_rows)
{
  batch_opts o = {.what = "inserting into t", .whole_rows = whole_rows};
  batch *b = open_on(&dialect_pg, "t", &o);
  const char *vals[][2] = {{"1", "say \"hi\""}, {"2", "back\\slash"}, {"3", "{a,b}"},
                           {"4", "NULL"}, {"5", ""}, {"6", NULL}, {NULL, "(x)"}};
  for (int i = 0; i < 7; i++) {
    add(b, vals[i][0], vals[i][1]);
  }
  ck_assert_msg(batch_flush(b, &err) == 0 && odbc_sync(conn, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(batch_sent(b), 7);
  batch_free(b);
  check_table("t", "1|say \"hi\"\n2|back\\slash\n3|{a,b}\n4|NULL\n5|\n6|\\N\n\\N|(x)\n");
}

START_TEST(test_pg_column_arrays)
{
  pg_arrays(0);
}
END_TEST

START_TEST(test_pg_row_arrays)
{
  pg_arrays(1);
}
END_TEST

/* A refused row fails the array sent on its own thread: the error comes
 * with the connection's next use, named by `what`. */
START_TEST(test_pg_arrays_fail)
{
  for (int whole = 0; whole <= 1; whole++) {
    batch_opts o = {.what = "inserting into u", .whole_rows = whole};
    batch *b = open_on(&dialect_pg, "u", &o);
    add(b, "1", "x");
    add(b, "2", NULL);
    ck_assert_int_eq(batch_flush(b, &err), 0);  /* sent, not done */
    ck_assert_int_eq(odbc_sync(conn, &err), -1);
    ck_assert_msg(strncmp(err.msg, "inserting into u: ", 18) == 0, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "null value") != NULL, "%s", err.msg);
    batch_free(b);
    err_init(&err);
    check_table("u", "");
  }
}
END_TEST

/* ---- the writer's statements, per dialect (plan --sql) -------------------- */

static dwl_column srccols[] = {
  {.name = "id", .type = DWL_TYPE_INTEGER, .nullable = 1},
  {.name = "name", .type = DWL_TYPE_TEXT, .nullable = 1},
  {.name = "phone", .type = DWL_TYPE_TEXT, .nullable = 1},
  {.name = "lmd", .type = DWL_TYPE_TIMESTAMP, .nullable = 1},
};

typedef struct plan_fx {
  dwl_spec *spec;
  target *t;
  scd_engine e;
  writer *w;
  scd_sink sink;
  FILE *f;
  char *out;
  size_t len;
} plan_fx;

static const char *const scd2_yaml =
  "version: 1\njob: j\nsource:\n  plugin: csv\n  path: x.csv\n"
  "target:\n  connection: \"Driver=none\"\n  table: dim\n"
  "load:\n  mode: scd2\n  key: id\n  lmd: lmd\n  type2: [name]\n  type1: [phone]\n"
  "dimension:\n  valid_from: vf\n  valid_to: vt\n  current: cur\n";
static const char *const upsert_yaml =
  "version: 1\njob: j\nsource:\n  plugin: csv\n  path: x.csv\n"
  "target:\n  connection: \"Driver=none\"\n  table: dim\n"
  "load:\n  mode: upsert\n  key: id\n  lmd: lmd\n";

/* A writer in plan mode on a target of dialect d laid out as the spec
 * says, with no connection: plan mode sends nothing. */
static void plan_open(plan_fx *p, const dialect *d, const char *yaml)
{
  memset(p, 0, sizeof *p);
  dwl_error e;
  err_init(&e);
  p->spec = spec_parse("job.yaml", yaml, strlen(yaml), &e);
  ck_assert_msg(p->spec != NULL, "spec: %s", e.msg);
  p->t = calloc(1, sizeof *p->t);
  ck_assert_ptr_nonnull(p->t);
  p->t->spec = p->spec;
  p->t->d = d;
  p->t->lmd = -1;
  for (int i = 0; i < TC_NROLES; i++)
    p->t->ix[i] = -1;
  dwl_buf q;
  buf_init(&q, 0);
  ck_assert_int_eq(dialect_quote_table(d, p->spec->target_table, &q, &e), 0);
  p->t->table_q = buf_steal(&q);
  ck_assert_msg(target_layout(p->t, srccols, 4, &e) == 0, "layout: %s", e.msg);
  dwl_ts run;
  ck_assert_int_eq(ts_parse("2030-01-01", 10, &run), 0);
  ck_assert_msg(scd_init(&p->e, p->spec, srccols, 4, run, &e) == 0, "scd_init: %s", e.msg);
  p->f = open_memstream(&p->out, &p->len);
  ck_assert_msg(writer_open(p->t, &p->e.cols, 1, p->f, &p->w, &e) == 0, "writer_open: %s", e.msg);
  p->sink = writer_sink(p->w);
}

/* What plan mode printed after a flush, and the fixture freed. */
static char *plan_close(plan_fx *p)
{
  dwl_error e;
  err_init(&e);
  ck_assert_msg(writer_flush(p->w, &e) == 0, "flush: %s", e.msg);
  writer_free(p->w);
  fclose(p->f);
  scd_free(&p->e);
  target_free(p->t);
  spec_free(p->spec);
  return p->out;
}

static dwl_ts at(const char *s)
{
  dwl_ts t;
  ck_assert_int_eq(ts_parse(s, strlen(s), &t), 0);
  return t;
}

static void src_row(dwl_value *row, const char *id, const char *name, const char *phone)
{
  const char *v[] = {id, name, phone, "2024-01-02 00:00:00"};
  for (int i = 0; i < 4; i++)
    row[i] = (dwl_value){v[i], v[i] ? strlen(v[i]) : 0, v[i] == NULL};
}

/* Expire key 1's current version (started 2024-01-01) at 2024-01-02. */
static char *plan_expire(const dialect *d, const char *id)
{
  plan_fx p;
  plan_open(&p, d, scd2_yaml);
  dwl_value row[4];
  src_row(row, id, "n", "p");
  dwl_ts vf = at("2024-01-01 00:00:00"), vt = at("2024-01-02 00:00:00");
  ck_assert_int_eq(p.sink.expire(p.sink.ud, row, &vf, &vt, 0, &err), 0);
  return plan_close(&p);
}

START_TEST(test_expire_pg)
{
  char *got = plan_expire(&dialect_pg, "1");
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_expire (\"id\" BIGINT, \"dwl_valid_from\" TIMESTAMP(6), "
    "\"dwl_valid_to\" TIMESTAMP(6), \"dwl_deleted\" BOOLEAN);\n"
    "INSERT INTO dwl_stage_expire (\"id\", \"dwl_valid_from\", \"dwl_valid_to\", \"dwl_deleted\") "
    "VALUES (?, ?, ?, ?);\n"
    "  -- ('1', '2024-01-01 00:00:00', '2024-01-02 00:00:00', '0')\n"
    "ANALYZE dwl_stage_expire;\n"
    "UPDATE \"dim\" AS d SET \"vt\" = s.\"dwl_valid_to\", \"is_deleted\" = s.\"dwl_deleted\", \"cur\" = FALSE "
    "FROM dwl_stage_expire AS s "
    "WHERE d.\"id\" = s.\"id\" AND d.\"vf\" = s.\"dwl_valid_from\" AND d.\"cur\" = TRUE;\n"
    "DELETE FROM dwl_stage_expire;\n");
  free(got);
}
END_TEST

START_TEST(test_expire_mariadb)
{
  char *got = plan_expire(&dialect_mariadb, "1");
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_expire (`id` BIGINT, `dwl_valid_from` DATETIME(6), "
    "`dwl_valid_to` DATETIME(6), `dwl_deleted` BOOLEAN);\n"
    "INSERT INTO dwl_stage_expire (`id`, `dwl_valid_from`, `dwl_valid_to`, `dwl_deleted`) VALUES (?, ?, ?, ?);\n"
    "  -- ('1', '2024-01-01 00:00:00', '2024-01-02 00:00:00', '0')\n"
    "UPDATE `dim` AS d JOIN dwl_stage_expire AS s ON d.`id` = s.`id` AND d.`vf` = s.`dwl_valid_from` "
    "AND d.`cur` = 1 SET d.`vt` = s.`dwl_valid_to`, d.`is_deleted` = s.`dwl_deleted`, d.`cur` = 0;\n"
    "DELETE FROM dwl_stage_expire;\n");
  free(got);
}
END_TEST

/* SQLite stages too (its driver parses a statement at every execution:
 * one per key cost more); a key with a NULL part keeps its own. */
START_TEST(test_expire_sqlite)
{
  char *got = plan_expire(&dialect_sqlite, "1");
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_expire (\"id\" INTEGER, \"dwl_valid_from\" TIMESTAMP, "
    "\"dwl_valid_to\" TIMESTAMP, \"dwl_deleted\" INTEGER);\n"
    "INSERT INTO dwl_stage_expire (\"id\", \"dwl_valid_from\", \"dwl_valid_to\", \"dwl_deleted\") "
    "VALUES (?, ?, ?, ?);\n"
    "  -- ('1', '2024-01-01 00:00:00', '2024-01-02 00:00:00', '0')\n"
    "UPDATE \"dim\" AS d SET \"vt\" = s.\"dwl_valid_to\", \"is_deleted\" = s.\"dwl_deleted\", \"cur\" = 0 "
    "FROM dwl_stage_expire AS s "
    "WHERE d.\"id\" = s.\"id\" AND d.\"vf\" = s.\"dwl_valid_from\" AND d.\"cur\" = 1;\n"
    "DELETE FROM dwl_stage_expire;\n");
  free(got);
}
END_TEST

START_TEST(test_expire_null_key_sqlite)
{
  char *got = plan_expire(&dialect_sqlite, NULL);
  ck_assert_str_eq(got,
    "UPDATE \"dim\" SET \"vt\" = ?, \"cur\" = 0, \"is_deleted\" = ? WHERE \"id\" IS ? AND \"cur\" = 1;\n"
    "  -- ('2024-01-02 00:00:00', '0', NULL)\n");
  free(got);
}
END_TEST

/* A key with a NULL part cannot be joined: a NULL-safe per-key statement. */
START_TEST(test_expire_null_key_pg)
{
  char *got = plan_expire(&dialect_pg, NULL);
  ck_assert_str_eq(got,
    "UPDATE \"dim\" SET \"vt\" = ?, \"cur\" = FALSE, \"is_deleted\" = ? "
    "WHERE \"id\" IS NOT DISTINCT FROM ? AND \"cur\" = TRUE;\n"
    "  -- ('2024-01-02 00:00:00', '0', NULL)\n");
  free(got);
}
END_TEST

/* Two overwrites of one current version in a run: the last replaces the
 * first while it is pending, so one UPDATE ... FROM applies one of them. */
START_TEST(test_type1_twice_pg)
{
  plan_fx p;
  plan_open(&p, &dialect_pg, scd2_yaml);
  dwl_value row[4];
  dwl_ts vf = at("2024-01-01 00:00:00");
  src_row(row, "1", "n", "first");
  ck_assert_int_eq(p.sink.type1(p.sink.ud, row, &vf, 0, &err), 0);
  src_row(row, "1", "n", "second");
  ck_assert_int_eq(p.sink.type1(p.sink.ud, row, &vf, 0, &err), 0);
  src_row(row, "2", "n", "other");
  ck_assert_int_eq(p.sink.type1(p.sink.ud, row, &vf, 0, &err), 0);
  char *got = plan_close(&p);
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_type1 (\"id\" BIGINT, \"dwl_valid_from\" TIMESTAMP(6), \"phone\" TEXT);\n"
    "INSERT INTO dwl_stage_type1 (\"id\", \"dwl_valid_from\", \"phone\") VALUES (?, ?, ?);\n"
    "  -- ('1', '2024-01-01 00:00:00', 'second')\n"
    "  -- ('2', '2024-01-01 00:00:00', 'other')\n"
    "ANALYZE dwl_stage_type1;\n"
    "UPDATE \"dim\" AS d SET \"phone\" = s.\"phone\" FROM dwl_stage_type1 AS s "
    "WHERE d.\"id\" = s.\"id\" AND d.\"vf\" = s.\"dwl_valid_from\" AND d.\"cur\" = TRUE;\n"
    "DELETE FROM dwl_stage_type1;\n");
  free(got);
}
END_TEST

/* Upsert: updates and removals staged, the updates applied first.  Plan
 * mode creates a stage at its first row and prints its rows when it is
 * applied (as they are sent then). */
static char *plan_upsert(const dialect *d)
{
  plan_fx p;
  plan_open(&p, d, upsert_yaml);
  dwl_value row[4];
  src_row(row, "1", "n", "p");
  ck_assert_int_eq(p.sink.update(p.sink.ud, row, &err), 0);
  src_row(row, "2", NULL, NULL);
  ck_assert_int_eq(p.sink.remove(p.sink.ud, row, &err), 0);
  return plan_close(&p);
}

START_TEST(test_upsert_pg)
{
  char *got = plan_upsert(&dialect_pg);
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_update (\"id\" BIGINT, \"name\" TEXT, \"phone\" TEXT, "
    "\"lmd\" TIMESTAMP(6));\n"
    "CREATE TEMPORARY TABLE dwl_stage_remove (\"id\" BIGINT);\n"
    "INSERT INTO dwl_stage_update (\"id\", \"name\", \"phone\", \"lmd\") VALUES (?, ?, ?, ?);\n"
    "  -- ('1', 'n', 'p', '2024-01-02 00:00:00')\n"
    "ANALYZE dwl_stage_update;\n"
    "UPDATE \"dim\" AS d SET \"name\" = s.\"name\", \"phone\" = s.\"phone\", \"lmd\" = s.\"lmd\" "
    "FROM dwl_stage_update AS s WHERE d.\"id\" = s.\"id\";\n"
    "DELETE FROM dwl_stage_update;\n"
    "INSERT INTO dwl_stage_remove (\"id\") VALUES (?);\n"
    "  -- ('2')\n"
    "ANALYZE dwl_stage_remove;\n"
    "DELETE FROM \"dim\" AS d USING dwl_stage_remove AS s WHERE d.\"id\" = s.\"id\";\n"
    "DELETE FROM dwl_stage_remove;\n");
  free(got);
}
END_TEST

START_TEST(test_upsert_mariadb)
{
  char *got = plan_upsert(&dialect_mariadb);
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_update (`id` BIGINT, "
    "`name` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin, "
    "`phone` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin, `lmd` DATETIME(6));\n"
    "CREATE TEMPORARY TABLE dwl_stage_remove (`id` BIGINT);\n"
    "INSERT INTO dwl_stage_update (`id`, `name`, `phone`, `lmd`) VALUES (?, ?, ?, ?);\n"
    "  -- ('1', 'n', 'p', '2024-01-02 00:00:00')\n"
    "UPDATE `dim` AS d JOIN dwl_stage_update AS s ON d.`id` = s.`id` SET d.`name` = s.`name`, "
    "d.`phone` = s.`phone`, d.`lmd` = s.`lmd`;\n"
    "DELETE FROM dwl_stage_update;\n"
    "INSERT INTO dwl_stage_remove (`id`) VALUES (?);\n"
    "  -- ('2')\n"
    "DELETE d FROM `dim` AS d JOIN dwl_stage_remove AS s ON d.`id` = s.`id`;\n"
    "DELETE FROM dwl_stage_remove;\n");
  free(got);
}
END_TEST

START_TEST(test_upsert_sqlite)
{
  char *got = plan_upsert(&dialect_sqlite);
  ck_assert_str_eq(got,
    "CREATE TEMPORARY TABLE dwl_stage_update (\"id\" INTEGER, \"name\" TEXT, \"phone\" TEXT, \"lmd\" TIMESTAMP);\n"
    "CREATE TEMPORARY TABLE dwl_stage_remove (\"id\" INTEGER);\n"
    "INSERT INTO dwl_stage_update (\"id\", \"name\", \"phone\", \"lmd\") VALUES (?, ?, ?, ?);\n"
    "  -- ('1', 'n', 'p', '2024-01-02 00:00:00')\n"
    "UPDATE \"dim\" AS d SET \"name\" = s.\"name\", \"phone\" = s.\"phone\", \"lmd\" = s.\"lmd\" "
    "FROM dwl_stage_update AS s WHERE d.\"id\" = s.\"id\";\n"
    "DELETE FROM dwl_stage_update;\n"
    "INSERT INTO dwl_stage_remove (\"id\") VALUES (?);\n"
    "  -- ('2')\n"
    "DELETE FROM \"dim\" AS d WHERE EXISTS (SELECT 1 FROM dwl_stage_remove AS s WHERE d.\"id\" = s.\"id\");\n"
    "DELETE FROM dwl_stage_remove;\n");
  free(got);
}
END_TEST

static Suite *make_suite(void)
{
  Suite *s = suite_create("write");
  TCase *tc = tcase_create("batch");
  tcase_add_checked_fixture(tc, db_setup, db_teardown);
  tcase_add_test(tc, test_rows_arrive);
  tcase_add_test(tc, test_nulls);
  tcase_add_test(tc, test_split);
  tcase_add_test(tc, test_split_narrow);
  tcase_add_test(tc, test_split_rows);
  tcase_add_test(tc, test_failed_row_full);
  tcase_add_test(tc, test_failed_row_last);
  tcase_add_test(tc, test_unadd);
  tcase_add_test(tc, test_names_copied);
  tcase_add_test(tc, test_print);
  suite_add_tcase(s, tc);
  if (have_pg()) {
    tc = tcase_create("batch_pg");
    tcase_add_checked_fixture(tc, pg_setup, pg_teardown);
    tcase_add_test(tc, test_pg_column_arrays);
    tcase_add_test(tc, test_pg_row_arrays);
    tcase_add_test(tc, test_pg_arrays_fail);
    suite_add_tcase(s, tc);
  }
  tc = tcase_create("writer_sql");
  tcase_add_checked_fixture(tc, err_setup, NULL);
  tcase_add_test(tc, test_expire_pg);
  tcase_add_test(tc, test_expire_mariadb);
  tcase_add_test(tc, test_expire_sqlite);
  tcase_add_test(tc, test_expire_null_key_sqlite);
  tcase_add_test(tc, test_expire_null_key_pg);
  tcase_add_test(tc, test_type1_twice_pg);
  tcase_add_test(tc, test_upsert_pg);
  tcase_add_test(tc, test_upsert_mariadb);
  tcase_add_test(tc, test_upsert_sqlite);
  suite_add_tcase(s, tc);
  return s;
}
