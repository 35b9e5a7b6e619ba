/* dwload migrate: table discovery, the target's DDL (types per dialect,
 * NOT NULL, primary key), the chunked copy with its progress table, the
 * verification of both sides, workers for --jobs, the progress line and
 * the summary.  Connections, dialects and batched inserts are the ones
 * `run` uses (target.c, writer.c). */
#include "migrate.h"

#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "clock.h"
#include "log.h"
#include "norm.h"
#include "spec.h"
#include "sqltype.h"
#include "summary.h"
#include "target.h"
#include "writer.h"

/* The target's record of each table's migration. */
#define PROGRESS_TABLE "dwload_migrate"
#define DEFAULT_CHUNK_ROWS 50000
/* MariaDB indexes at most 3072 bytes of a key, 4 per utf8mb4 character. */
#define MARIA_KEY_BYTES 3072

const char migrate_usage[] =
    "Usage: dwload migrate --from CONN --to CONN (--table T ... | --all) [OPTIONS]\n\n"
    "Copies tables from one warehouse to another (SQLite, PostgreSQL, MariaDB):\n"
    "columns, types, NOT NULL, primary keys and rows, in primary-key chunks whose\n"
    "progress the target keeps in " PROGRESS_TABLE ", then verifies each table (row\n"
    "count and a checksum of every value, computed on both sides).  The last line\n"
    "on stdout is a JSON summary.  ${VAR} in CONN is taken from the environment.\n"
    "  --from CONN        ODBC connection string of the source\n"
    "  --to CONN          ODBC connection string of the target\n"
    "  --table T          a table to copy (repeatable; schema.table allowed)\n"
    "  --all              every table of the source\n"
    "  --resume           continue a migration that stopped; done tables are verified\n"
    "  --jobs N           tables copied in parallel (default 1)\n"
    "  --chunk-rows N     rows per committed chunk (default 50000)\n"
    "  --no-verify        skip the verification\n";

typedef struct mig_opts {
  char *from, *to;
  char **tables;
  size_t ntables;
  int all, resume, verify;
  long jobs, chunk;
} mig_opts;

/* One table's outcome. */
typedef struct mig_table {
  char *name;
  long long copied;      /* by this run */
  long long rows;        /* in the target at the end */
  int verified;
  int stopped;           /* gave up because another table failed */
  dwl_error err;
} mig_table;

typedef struct mig {
  const mig_opts *o;
  mig_table *t;
  size_t n;
  size_t next;           /* the next table a worker takes */
  int failed;            /* a table failed: the others stop at a chunk boundary */
  int tty;
  pthread_mutex_t mu;
} mig;

/* One side of a table: a connection and the table on it. */
typedef struct side {
  dwl_spec spec;         /* only what target.c reads: the connection and table */
  target *t;
} side;

/* Keyset cursor over a table in primary-key order, `limit` rows a chunk. */
typedef struct cursor {
  side *s;
  odbc_stmt *first, *next;
  int whole;             /* one read of the whole table, in any order */
  int packed;            /* each chunk arrives as one text value (packed_sql) */
  dwl_buf key;           /* the last row's key values, back to back */
  size_t *klen;
  int have;              /* key holds the last key read */
  const char *upper;     /* inclusive upper bound's key values, or NULL */
  const size_t *uklen;
} cursor;

typedef struct tjob {
  mig *m;
  mig_table *mt;
  side src, dst;
  dwl_column *cols;      /* the source's columns, by name */
  char **names;
  size_t ncols;
  size_t *pk;            /* column indexes of the primary key, in key order */
  size_t npk;
  dwl_buf *norm;         /* scratch per column */
  dwl_value *row;
  dwl_value *packed;     /* one row's fields of a packed chunk */
  writer *w;
  int pgrows;            /* PostgreSQL target: rows go as one array parameter */
  dwl_buf js;            /* the array literal being built */
  size_t nrows_pend;
  dwl_buf jsend;         /* the one being sent (ostmt_execute_async) */
  dwl_value jsparam;     /* the parameter pointing at it */
  odbc_stmt *rows_insert;  /* INSERT ... SELECT * FROM unnest(?::t[]) */
  long long n;           /* rows of the current pass */
  uint64_t sum;          /* checksum of the current pass */
  dwl_buf hb;            /* bytes of the row being hashed */
  double t0;
  /* Where this run's chunks ended (and where it resumed): the
   * verification reads the ranges between them in parallel. */
  dwl_buf bkeys;         /* key values, back to back */
  size_t *blen;          /* npk lengths per boundary */
  size_t *boff;          /* offset of each boundary in bkeys */
  size_t nb, bcap;
} tjob;

static int side_open(side *s, const char *conn, const char *table, dwl_error *err)
{
  memset(s, 0, sizeof *s);
  s->spec.path = (char *)"migrate";
  s->spec.job = (char *)"migrate";
  s->spec.target_connection = (char *)conn;
  s->spec.target_table = (char *)table;
  s->spec.mode = MODE_APPEND;
  return target_connect(&s->spec, &s->t, err);
}

static void side_close(side *s)
{
  target_free(s->t);
  s->t = NULL;
}

static int is_dbms(const side *s, const char *name)
{
  return strcmp(s->t->d->name, name) == 0;
}

/* ---- the source's tables ------------------------------------------------- */

/* Tables of the source, for --all: base tables of the connection's own
 * database (PostgreSQL: of every schema but the system's, qualified unless
 * in public); the progress table is never copied. */
static int list_tables(const char *conn, char ***out, size_t *n, dwl_error *err)
{
  side s;
  if (side_open(&s, conn, "x", err) != 0)
    return -1;
  odbc_stmt *st = NULL;
  int rc = ostmt_new(s.t->c, &st, err);
  SQLCHAR cat[256] = "";
  SQLINTEGER catlen = 0;
  if (rc == 0 && (!SQL_SUCCEEDED(SQLGetConnectAttr(s.t->c->dbc, SQL_ATTR_CURRENT_CATALOG, cat, sizeof cat, &catlen)) ||
                  catlen <= 0))
    cat[0] = '\0';
  if (rc == 0 && !SQL_SUCCEEDED(SQLTables(st->h, cat[0] ? cat : NULL, cat[0] ? SQL_NTS : 0, NULL, 0,
                                          (SQLCHAR *)"%", SQL_NTS, (SQLCHAR *)"TABLE", SQL_NTS)))
    rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, st->h, "cannot list the source's tables");
  const dwl_value *r;
  int f = 0;
  while (rc == 0 && (f = ostmt_fetch(st, &r, err)) == 1) {
    if (r[2].is_null || strcmp(r[2].data, PROGRESS_TABLE) == 0 || strncmp(r[2].data, "sqlite_", 7) == 0)
      continue;
    const char *schema = r[1].is_null ? "" : r[1].data;
    if (is_dbms(&s, "postgresql") &&
        (strcmp(schema, "pg_catalog") == 0 || strcmp(schema, "information_schema") == 0))
      continue;
    char name[600];
    if (is_dbms(&s, "postgresql") && schema[0] && strcmp(schema, "public") != 0)
      snprintf(name, sizeof name, "%s.%s", schema, r[2].data);
    else
      snprintf(name, sizeof name, "%s", r[2].data);
    char **nv = realloc(*out, (*n + 1) * sizeof *nv);
    if (!nv || !(nv[*n] = strdup(name))) {
      if (nv)
        *out = nv;
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    *out = nv;
    (*n)++;
  }
  if (f < 0)
    rc = -1;
  ostmt_free(st);
  side_close(&s);
  return rc;
}

/* Columns (SQLDescribeCol, refined from the catalog) and primary key. */
static int read_meta(tjob *j, dwl_error *err)
{
  target *t = j->src.t;
  char sql[700];
  snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE 1 = 0", t->table_q);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  int rc = ostmt_execute(st, NULL, NULL, 0, err);
  SQLSMALLINT n = 0;
  if (rc == 0 && (!SQL_SUCCEEDED(SQLNumResultCols(st->h, &n)) || n <= 0))
    rc = err_set(err, DWL_EXIT_FAILED, "table %s: no columns", j->mt->name);
  if (rc == 0) {
    j->ncols = (size_t)n;
    j->cols = calloc(j->ncols, sizeof *j->cols);
    j->names = calloc(j->ncols, sizeof *j->names);
    if (!j->cols || !j->names)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  for (size_t i = 0; rc == 0 && i < j->ncols; i++) {
    char name[256];
    SQLSMALLINT type, digits, nullable;
    SQLULEN size;
    if (ostmt_describe(st, i, name, sizeof name, &type, &size, &digits, &nullable) != 0) {
      rc = odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, st->h, "cannot describe a column");
      break;
    }
    j->names[i] = strdup(name);
    if (!j->names[i])
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    j->cols[i].name = j->names[i];
    if (strcmp(t->d->name, "postgresql") == 0)
      sqltype_pg_numeric(type, &size, &digits);
    sqltype_column(type, size, digits, nullable, &j->cols[i]);
  }
  ostmt_free(st);
  if (rc != 0)
    return -1;
  if (sqltype_refine_table(t->c->dbc, j->mt->name, j->cols, j->ncols) != 0)
    return err_set(err, DWL_EXIT_FAILED, "table %s: cannot read its columns from the catalog", j->mt->name);

  /* The primary key, in KEY_SEQ order. */
  if (ostmt_new(t->c, &st, err) != 0)
    return -1;
  SQLCHAR cat[256] = "";
  SQLINTEGER catlen = 0;
  if (!SQL_SUCCEEDED(SQLGetConnectAttr(t->c->dbc, SQL_ATTR_CURRENT_CATALOG, cat, sizeof cat, &catlen)) || catlen <= 0)
    cat[0] = '\0';
  if (!SQL_SUCCEEDED(SQLPrimaryKeys(st->h, cat[0] ? cat : NULL, cat[0] ? SQL_NTS : 0, (SQLCHAR *)t->schema,
                                    t->schema ? SQL_NTS : 0, (SQLCHAR *)t->table, SQL_NTS))) {
    odbc_fail(err, DWL_EXIT_FAILED, SQL_HANDLE_STMT, st->h, "cannot read the primary key");
    ostmt_free(st);
    return -1;
  }
  j->pk = calloc(j->ncols, sizeof *j->pk);
  if (!j->pk) {
    ostmt_free(st);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(st, &r, err)) == 1) {
    if (r[3].is_null || r[4].is_null)
      continue;
    long seq = strtol(r[4].data, NULL, 10);
    for (size_t i = 0; i < j->ncols; i++)
      if (strcmp(j->names[i], r[3].data) == 0 && seq >= 1 && (size_t)seq <= j->ncols) {
        j->pk[seq - 1] = i;
        if ((size_t)seq > j->npk)
          j->npk = (size_t)seq;
      }
  }
  ostmt_free(st);
  if (f < 0)
    return -1;
  for (size_t k = 0; k < j->npk; k++)
    j->cols[j->pk[k]].nullable = 0;
  return 0;
}

/* ---- the target ------------------------------------------------------------ */

/* Creates the progress table if need be; *one_writer: the target is a
 * warehouse that takes one writer at a time (SQLite), told from the
 * connected driver, however the connection string names it (a DSN). */
static int progress_ensure(const mig_opts *o, int *one_writer, dwl_error *err)
{
  side s;
  if (side_open(&s, o->to, PROGRESS_TABLE, err) != 0)
    return -1;
  *one_writer = strcmp(s.t->d->name, "sqlite") == 0;
  int rc = odbc_table_exists(s.t->c, NULL, PROGRESS_TABLE, err);
  if (rc == 0) {
    dwl_column name = {.type = DWL_TYPE_TEXT, .precision = 255};
    dwl_column text = {.type = DWL_TYPE_TEXT};
    dwl_column num = {.type = DWL_TYPE_INTEGER};
    char b1[128], b2[128], b3[128];
    char sql[1024];
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (table_name %s PRIMARY KEY, last_key %s, rows_copied %s NOT NULL, checksum %s, "
             "done %s NOT NULL, source %s, updated_at %s)",
             PROGRESS_TABLE, s.t->d->type_sql(&name, b1, sizeof b1), s.t->d->type_sql(&text, b2, sizeof b2),
             s.t->d->type_sql(&num, b3, sizeof b3), s.t->d->type_sql(&text, b2, sizeof b2), s.t->d->flag_type,
             s.t->d->type_sql(&text, b2, sizeof b2), s.t->d->type_sql(&text, b2, sizeof b2));
    rc = odbc_exec(s.t->c, sql, NULL, NULL, 0, err);
  }
  side_close(&s);
  return rc < 0 ? -1 : 0;
}

typedef struct progress {
  int found, done;
  long long rows;
  uint64_t sum;          /* checksum of the source rows copied so far */
  json_t *key;           /* array of key texts, or NULL */
} progress;

static int progress_read(tjob *j, progress *p, dwl_error *err)
{
  memset(p, 0, sizeof *p);
  odbc_stmt *st;
  char sql[300];
  snprintf(sql, sizeof sql, "SELECT last_key, rows_copied, done, checksum FROM %s WHERE table_name = ?",
           PROGRESS_TABLE);
  if (ostmt_prepare(j->dst.t->c, sql, &st, err) != 0)
    return -1;
  dwl_value v = {j->mt->name, strlen(j->mt->name), 0};
  const dwl_value *r;
  int rc = ostmt_execute(st, &v, NULL, 1, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1) {
    p->found = 1;
    p->rows = r[1].is_null ? 0 : strtoll(r[1].data, NULL, 10);
    p->done = !r[2].is_null && (r[2].data[0] == '1' || r[2].data[0] == 't');
    p->sum = r[3].is_null ? 0 : strtoull(r[3].data, NULL, 16);
    if (!r[0].is_null) {
      json_error_t je;
      p->key = json_loadb(r[0].data, r[0].len, 0, &je);
      if (!json_is_array(p->key) || json_array_size(p->key) != j->npk)
        rc = err_set(err, DWL_EXIT_FAILED, "%s: the recorded position of table %s is not a key: %.*s",
                     PROGRESS_TABLE, j->mt->name, (int)(r[0].len > 80 ? 80 : r[0].len), r[0].data);
    }
  }
  ostmt_free(st);
  return rc < 0 ? -1 : 0;
}

/* Records the position after a chunk, inside the chunk's transaction. */
static int progress_write(tjob *j, const cursor *c, long long rows, int done, int insert, dwl_error *err)
{
  char *key = NULL;
  if (c && c->have) {
    json_t *a = json_array();
    size_t off = 0;
    for (size_t k = 0; k < j->npk; k++) {
      json_array_append_new(a, json_stringn(c->key.data + off, c->klen[k]));
      off += c->klen[k];
    }
    key = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!key)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  char rbuf[32], ts[32], hbuf[32];
  snprintf(rbuf, sizeof rbuf, "%lld", rows);
  snprintf(hbuf, sizeof hbuf, "%016llx", (unsigned long long)j->sum);
  dwl_ts now = ts_now();
  ts_format(&now, ts);
  const dialect *d = j->dst.t->d;
  dwl_value p[7] = {
    {key, key ? strlen(key) : 0, key == NULL},
    {rbuf, strlen(rbuf), 0},
    {hbuf, strlen(hbuf), 0},
    {done ? d->true_val : d->false_val, 1, 0},
    {ts, strlen(ts), 0},
    {j->mt->name, strlen(j->mt->name), 0},
    {j->src.t->c->redacted, strlen(j->src.t->c->redacted), 0},
  };
  SQLSMALLINT ty[7] = {SQL_VARCHAR, d->param_type(DWL_TYPE_INTEGER), SQL_VARCHAR, d->param_type(DWL_TYPE_BOOLEAN),
                       SQL_VARCHAR, SQL_VARCHAR, SQL_VARCHAR};
  char sql[400];
  int rc;
  if (insert) {
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (last_key, rows_copied, checksum, done, updated_at, table_name, source) "
             "VALUES (?, ?, ?, ?, ?, ?, ?)",
             PROGRESS_TABLE);
    rc = odbc_exec(j->dst.t->c, sql, p, ty, 7, err);
  } else {
    snprintf(sql, sizeof sql,
             "UPDATE %s SET last_key = ?, rows_copied = ?, checksum = ?, done = ?, updated_at = ? WHERE table_name = ?",
             PROGRESS_TABLE);
    rc = odbc_exec(j->dst.t->c, sql, p, ty, 6, err);
  }
  free(key);
  return rc;
}

/* The primary key clause, ", PRIMARY KEY (a, b)", or "" without one. */
static void pk_clause(const tjob *j, dwl_buf *b)
{
  for (size_t k = 0; k < j->npk; k++)
    buf_printf(b, "%s%s", k ? ", " : ", PRIMARY KEY (", j->dst.t->cols[j->pk[k]].q);
  if (j->npk)
    buf_addc(b, ')');
}

/* PostgreSQL builds a primary key index faster once than row by row: it
 * is added in the last chunk's transaction (copying needs no key in the
 * target: the progress row keeps chunks from being copied twice).  SQLite
 * cannot add one later, and InnoDB stores rows in key order anyway. */
static int pk_deferred(const tjob *j)
{
  return j->npk && is_dbms(&j->dst, "postgresql");
}

static int add_pk(tjob *j, dwl_error *err)
{
  dwl_buf sql;
  buf_init(&sql, 0);
  buf_printf(&sql, "ALTER TABLE %s ADD", j->dst.t->table_q);
  pk_clause(j, &sql);
  /* pk_clause starts with ", ": drop it after ADD. */
  char *p = sql.data ? strstr(sql.data, "ADD, ") : NULL;
  if (p)
    memmove(p + 3, p + 4, strlen(p + 4) + 1);
  int rc = sql.data ? odbc_exec(j->dst.t->c, sql.data, NULL, NULL, 0, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&sql);
  return rc;
}

/* CREATE TABLE with the source's columns as this dialect types them,
 * NOT NULL where the source has it, and the primary key (unless it is
 * added at the end). */
static int create_table(tjob *j, dwl_error *err)
{
  target *t = j->dst.t;
  dwl_buf sql;
  buf_init(&sql, 0);
  buf_printf(&sql, "CREATE TABLE %s (", t->table_q);
  for (size_t i = 0; i < t->ncols; i++) {
    char ty[128];
    buf_printf(&sql, "%s%s %s%s", i ? ", " : "", t->cols[i].q, t->d->type_sql(&t->cols[i].decl, ty, sizeof ty),
               t->cols[i].decl.nullable == 0 ? " NOT NULL" : "");
  }
  if (!pk_deferred(j))
    pk_clause(j, &sql);
  buf_adds(&sql, ")");
  int rc = sql.data ? odbc_exec(t->c, sql.data, NULL, NULL, 0, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&sql);
  if (rc == 0)
    log_msg(LOG_INFO, "created table %s", j->mt->name);
  return rc;
}

/* ---- reading in key order ------------------------------------------------- */

/* "(a > ?) OR (a = ? AND b > ?)": the rows after a key, spelled out
 * because MariaDB uses the index only then. */
static void keyset_after(const tjob *j, const target *t, dwl_buf *b)
{
  for (size_t k = 0; k < j->npk; k++) {
    buf_adds(b, k ? " OR (" : "(");
    for (size_t e = 0; e < k; e++)
      buf_printf(b, "%s = ? AND ", t->cols[j->pk[e]].q);
    buf_printf(b, "%s > ?)", t->cols[j->pk[k]].q);
  }
}

/* The rows after the cursor's key (`after`) and up to its upper bound
 * (`upto`, inclusive), in key order, `limit` at a time. */
static char *select_sql(const tjob *j, const side *s, int whole, int after, int upto, long limit)
{
  const target *t = s->t;
  dwl_buf b;
  buf_init(&b, 0);
  buf_adds(&b, "SELECT ");
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", t->cols[i].q);
  buf_printf(&b, " FROM %s", t->table_q);
  if (whole)
    return buf_steal(&b);
  if (after || upto)
    buf_adds(&b, " WHERE ");
  if (after) {
    buf_addc(&b, '(');
    keyset_after(j, t, &b);
    buf_addc(&b, ')');
  }
  /* The first key part's bound lets the index stop the scan; NOT (...)
   * alone would be a filter read to the end of the table. */
  if (upto) {
    buf_printf(&b, "%s%s <= ? AND NOT (", after ? " AND " : "", t->cols[j->pk[0]].q);
    keyset_after(j, t, &b);
    buf_addc(&b, ')');
  }
  buf_adds(&b, " ORDER BY ");
  for (size_t k = 0; k < j->npk; k++)
    buf_printf(&b, "%s%s", k ? ", " : "", t->cols[j->pk[k]].q);
  buf_printf(&b, " LIMIT %ld", limit);
  return buf_steal(&b);
}

static int cursor_init(cursor *c, side *s, size_t npk, dwl_error *err)
{
  memset(c, 0, sizeof *c);
  c->s = s;
  c->whole = npk == 0;
  buf_init(&c->key, 0);
  c->klen = calloc(npk ? npk : 1, sizeof *c->klen);
  return c->klen ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
}

static void cursor_free(cursor *c)
{
  ostmt_free(c->first);
  ostmt_free(c->next);
  buf_free(&c->key);
  free(c->klen);
}

static int cursor_set_key(cursor *c, const tjob *j, json_t *key, dwl_error *err)
{
  buf_reset(&c->key);
  for (size_t k = 0; k < j->npk; k++) {
    const char *v = json_string_value(json_array_get(key, k));
    if (!v)
      return err_set(err, DWL_EXIT_FAILED, "%s: the recorded key of %s is not text", PROGRESS_TABLE, j->mt->name);
    c->klen[k] = strlen(v);
    if (buf_add(&c->key, v, c->klen[k]) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  c->have = 1;
  return 0;
}

/* Keeps the cursor's key as a boundary between verification ranges. */
static int record_bound(tjob *j, const cursor *c, dwl_error *err)
{
  if (j->npk == 0 || !c->have)
    return 0;
  if (j->nb == j->bcap) {
    size_t ncap = j->bcap ? j->bcap * 2 : 64;
    size_t *nl = realloc(j->blen, ncap * j->npk * sizeof *nl);
    if (nl)
      j->blen = nl;
    size_t *no = realloc(j->boff, ncap * sizeof *no);
    if (no)
      j->boff = no;
    if (!nl || !no)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    j->bcap = ncap;
  }
  j->boff[j->nb] = j->bkeys.len;
  memcpy(&j->blen[j->nb * j->npk], c->klen, j->npk * sizeof *c->klen);
  if (buf_add(&j->bkeys, c->key.data, c->key.len) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  j->nb++;
  return 0;
}

typedef int (*row_fn)(tjob *j, const dwl_value *row, dwl_error *err);

/* A chunk as one value: every row's fields back to back, each as
 * LENGTH:TEXT, or a bare ':' for NULL.  Reading back a table through
 * psqlODBC costs a call per value and a conversion in the driver; this is
 * one value per chunk, and the server's text of each value is what the
 * driver would have returned.  PostgreSQL only.  The aggregate takes the
 * rows in the ordered subquery's order (PostgreSQL keeps it when nothing
 * else is joined or grouped), which only matters for the next chunk's
 * start: were it not kept, rows would be read twice and the count would
 * fail the verification, never pass it. */
static char *packed_sql(const side *s, const char *inner)
{
  const target *t = s->t;
  dwl_buf b;
  buf_init(&b, 0);
  buf_adds(&b, "SELECT string_agg(concat(");
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(&b, "%soctet_length(s.%s::text), ':', s.%s::text", i ? ", " : "", t->cols[i].q, t->cols[i].q);
  buf_printf(&b, "), '') FROM (%s) AS s", inner);
  return buf_steal(&b);
}

/* One row read from a side: normalized by the source's column types, fed
 * to fn, and its key kept for the next chunk. */
static int take_row(tjob *j, cursor *c, const dwl_value *r, row_fn fn, dwl_error *err)
{
  for (size_t i = 0; i < j->ncols; i++) {
    j->row[i] = r[i];
    const char *why = "";
    if (!r[i].is_null && norm_value_col(&j->cols[i], r[i].data, r[i].len, &j->norm[i], &j->row[i].data,
                                        &j->row[i].len, &why) != 0)
      return err_set(err, DWL_EXIT_FAILED, "table %s, row %lld: column %s holds '%.*s': %s", j->mt->name, j->n + 1,
                     j->names[i], (int)(r[i].len > 60 ? 60 : r[i].len), r[i].data, why);
  }
  if (fn(j, j->row, err) != 0)
    return -1;
  j->n++;
  if (c->whole)
    return 0;
  buf_reset(&c->key);
  for (size_t k = 0; k < j->npk; k++) {
    c->klen[k] = j->row[j->pk[k]].len;
    if (buf_add(&c->key, j->row[j->pk[k]].data, c->klen[k]) != 0)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  c->have = 1;
  return 0;
}

/* The rows of a packed chunk (see packed_sql). */
static int take_packed(tjob *j, cursor *c, const dwl_value *v, row_fn fn, long *got, dwl_error *err)
{
  if (v->is_null)
    return 0;  /* no rows */
  const char *p = v->data, *end = v->data + v->len;
  while (p < end) {
    for (size_t i = 0; i < j->ncols; i++) {
      dwl_value *f = &j->packed[i];
      if (p < end && *p == ':') {
        f->is_null = 1;
        f->data = NULL;
        f->len = 0;
        p++;
        continue;
      }
      size_t len = 0;
      const char *d = p;
      while (d < end && *d >= '0' && *d <= '9' && len < SIZE_MAX / 16)
        len = len * 10 + (size_t)(*d++ - '0');
      if (d == p || d >= end || *d != ':' || (size_t)(end - d - 1) < len)
        return err_set(err, DWL_EXIT_FAILED, "table %s: the target's packed rows are malformed at byte %zu",
                       j->mt->name, (size_t)(p - v->data));
      f->is_null = 0;
      f->data = d + 1;
      f->len = len;
      p = d + 1 + len;
    }
    if (take_row(j, c, j->packed, fn, err) != 0)
      return -1;
    (*got)++;
  }
  return 0;
}

/* Reads the next chunk (up to `limit` rows after the cursor's key; the
 * whole table when it has no primary key) and feeds each row, normalized
 * by the source's column types, to fn.  Sets *got to the rows read. */
static int cursor_chunk(tjob *j, cursor *c, long limit, row_fn fn, long *got, dwl_error *err)
{
  *got = 0;
  target *t = c->s->t;
  odbc_stmt **st = c->have ? &c->next : &c->first;
  if (!*st) {
    char *sql = select_sql(j, c->s, c->whole, c->have, c->upper != NULL, limit);
    if (sql && c->packed) {
      char *outer = packed_sql(c->s, sql);
      free(sql);
      sql = outer;
    }
    int rc = sql ? ostmt_prepare(t->c, sql, st, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
    free(sql);
    if (rc != 0)
      return -1;
  }
  /* Parameters: for key part k, the parts before it (=) and itself (>);
   * for the lower bound, then the upper (after its first part, for <=). */
  size_t per = j->npk * (j->npk + 1) / 2;
  size_t np = (c->have ? per : 0) + (c->upper ? 1 + per : 0);
  dwl_value *p = calloc(np ? np : 1, sizeof *p);
  SQLSMALLINT *pt = calloc(np ? np : 1, sizeof *pt);
  size_t *koff = calloc(j->npk ? j->npk : 1, sizeof *koff);
  if (!p || !pt || !koff) {
    free(p);
    free(pt);
    free(koff);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  size_t n = 0;
  for (int bound = 0; bound < 2; bound++) {
    const char *kd = bound ? c->upper : c->key.data;
    const size_t *kl = bound ? c->uklen : c->klen;
    if (bound ? !c->upper : !c->have)
      continue;
    for (size_t k = 1; k < j->npk; k++)
      koff[k] = koff[k - 1] + kl[k - 1];
    if (bound) {
      p[n].data = kd;
      p[n].len = kl[0];
      pt[n++] = t->d->param_type(j->cols[j->pk[0]].type);
    }
    for (size_t k = 0; k < j->npk; k++)
      for (size_t e = 0; e <= k; e++) {
        p[n].data = kd + koff[e];
        p[n].len = kl[e];
        pt[n++] = t->d->param_type(j->cols[j->pk[e]].type);
      }
  }
  free(koff);
  int rc = ostmt_execute(*st, p, pt, np, err);
  free(p);
  free(pt);
  if (rc != 0)
    return -1;
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(*st, &r, err)) == 1) {
    if (c->packed ? take_packed(j, c, r, fn, got, err) != 0 : take_row(j, c, r, fn, err) != 0) {
      SQLCloseCursor((*st)->h);
      return -1;
    }
    if (!c->packed)
      (*got)++;
  }
  SQLCloseCursor((*st)->h);
  return f < 0 ? -1 : 0;
}

/* ---- copy ----------------------------------------------------------------- */

/* A row's hash over its canonical values (NULL distinct from ''); the
 * table's checksum is their sum mod 2^64, so the two sides may be read in
 * any order, and a duplicated row changes it. */
static int take_hash(tjob *j, const dwl_value *row, dwl_error *err)
{
  buf_reset(&j->hb);
  for (size_t i = 0; i < j->ncols; i++) {
    uint64_t len = row[i].is_null ? UINT64_MAX : (uint64_t)row[i].len;
    if (buf_add(&j->hb, &len, sizeof len) != 0 || (!row[i].is_null && buf_add(&j->hb, row[i].data, row[i].len) != 0))
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  j->sum += XXH3_64bits(j->hb.data, j->hb.len);
  return 0;
}

/* ---- PostgreSQL: rows as one array parameter -------------------------------- */

/* psqlODBC spends most of a multi-row INSERT on its thousands of
 * parameters.  One text parameter per statement holding an array of the
 * table's own row type (INSERT ... SELECT * FROM unnest(?::t[])) moves the
 * same values, still bound, at a fraction of the cost; the server parses
 * each field with its column's input function, as COPY would.  Measured on
 * 100k rows: 132 ms against 225 ms for json_populate_recordset. */
#define PGROWS_ROWS 10000

/* One field of a composite literal inside an array literal, hand-written
 * (no library builds PostgreSQL literals): quoted for the record, and the
 * record quoted again for the array, so a '"' becomes \\\" and a
 * backslash four.  NULL is an empty, unquoted field. */
static int pg_field(dwl_buf *b, const char *s, size_t n)
{
  if (buf_grow(b, n + 4) != 0 || buf_add(b, "\\\"", 2) != 0)
    return -1;
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '"' && s[i] != '\\')
      continue;
    if (buf_add(b, s + run, i - run) != 0 || buf_add(b, s[i] == '"' ? "\\\\\\\"" : "\\\\\\\\", 4) != 0)
      return -1;
    run = i + 1;
  }
  return buf_add(b, s + run, n - run) != 0 || buf_add(b, "\\\"", 2) != 0 ? -1 : 0;
}

static int pgrows_init(tjob *j, dwl_error *err)
{
  target *t = j->dst.t;
  buf_init(&j->js, 0);
  buf_init(&j->jsend, 0);
  dwl_buf b;
  buf_init(&b, 0);
  buf_printf(&b, "INSERT INTO %s (", t->table_q);
  for (size_t i = 0; i < t->ncols; i++)
    buf_printf(&b, "%s%s", i ? ", " : "", t->cols[i].q);
  buf_printf(&b, ") SELECT * FROM unnest(?::%s[])", t->table_q);
  char *sql = buf_steal(&b);
  int rc = sql ? ostmt_prepare(t->c, sql, &j->rows_insert, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  free(sql);
  return rc;
}

static void pgrows_free(tjob *j)
{
  ostmt_free(j->rows_insert);  /* first: it waits for the batch being sent */
  j->rows_insert = NULL;
  buf_free(&j->js);
  buf_free(&j->jsend);
}

/* A batch is sent on the connection's own thread while the next one is
 * read and built: the server's work overlaps the client's (the
 * connection's next use waits for it, and fails with its failure). */
static int pgrows_flush(tjob *j, dwl_error *err)
{
  if (j->nrows_pend == 0)
    return 0;
  if (buf_addc(&j->js, '}') != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  /* jsend is free once the batch before is done. */
  if (odbc_sync(j->dst.t->c, err) != 0)
    return -1;
  dwl_buf full = j->js;
  j->js = j->jsend;
  j->jsend = full;
  buf_reset(&j->js);
  j->nrows_pend = 0;
  j->jsparam = (dwl_value){j->jsend.data, j->jsend.len, 0};
  return ostmt_execute_async(j->rows_insert, &j->jsparam, 1, NULL, err);
}

static int pgrows_add(tjob *j, const dwl_value *row, dwl_error *err)
{
  dwl_buf *b = &j->js;
  if (buf_add(b, j->nrows_pend ? ",\"(" : "{\"(", 3) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < j->ncols; i++)
    if ((i && buf_addc(b, ',') != 0) || (!row[i].is_null && pg_field(b, row[i].data, row[i].len) != 0))
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (buf_add(b, ")\"", 2) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return ++j->nrows_pend >= PGROWS_ROWS ? pgrows_flush(j, err) : 0;
}

/* The source side's checksum is taken from the rows as they are copied,
 * and kept with the progress, so a resumed copy still covers every row. */
static int take_insert(tjob *j, const dwl_value *row, dwl_error *err)
{
  if (take_hash(j, row, err) != 0)
    return -1;
  return j->pgrows ? pgrows_add(j, row, err) : writer_insert_source(j->w, row, err);
}

static void progress_line(tjob *j, long long rows, int end)
{
  if (!j->m->tty)
    return;
  double el = now_s() - j->t0;
  pthread_mutex_lock(&j->m->mu);
  fprintf(stderr, "\r\033[Kmigrate: %s: %lld rows, %.0f rows/s%s", j->mt->name, rows, el > 0 ? (double)rows / el : 0.0,
          end ? "\n" : "");
  fflush(stderr);
  pthread_mutex_unlock(&j->m->mu);
}

static int stopped(tjob *j, dwl_error *err)
{
  pthread_mutex_lock(&j->m->mu);
  int f = j->m->failed;
  pthread_mutex_unlock(&j->m->mu);
  if (!f)
    return 0;
  j->mt->stopped = 1;
  return err_set(err, DWL_EXIT_FAILED, "table %s: stopped, another table failed", j->mt->name);
}

static int copy_table(tjob *j, progress *pr, dwl_error *err)
{
  const mig_opts *o = j->m->o;
  target *t = j->dst.t;
  cursor c;
  if (cursor_init(&c, &j->src, j->npk, err) != 0)
    return -1;
  int rc = 0;
  long long rows = pr->rows;
  if (pr->key)
    rc = cursor_set_key(&c, j, pr->key, err);
  if (rc == 0 && pr->key)
    rc = record_bound(j, &c, err);
  j->pgrows = is_dbms(&j->dst, "postgresql");
  /* Each chunk commits its rows with its progress row, so a commit lost in
   * a server crash only means that chunk is copied again: no need to wait
   * for the WAL flush. */
  if (rc == 0 && j->pgrows)
    rc = odbc_exec(t->c, "SET synchronous_commit = off", NULL, NULL, 0, err);
  if (rc == 0)
    rc = j->pgrows ? pgrows_init(j, err) : writer_open(t, NULL, 0, NULL, &j->w, err);
  if (rc == 0 && pr->found)
    log_msg(LOG_INFO, "table %s: resuming after %lld rows", j->mt->name, rows);
  j->n = 0;
  j->sum = pr->sum;
  for (int done = 0; rc == 0 && !done;) {
    long got = 0;
    rc = stopped(j, err);
    if (rc == 0)
      rc = odbc_begin(t->c, err);
    /* Without a key the whole table is one chunk: a resumed copy starts over. */
    if (rc == 0 && j->npk == 0 && pr->found) {
      char sql[700];
      snprintf(sql, sizeof sql, "DELETE FROM %s", t->table_q);
      rc = odbc_exec(t->c, sql, NULL, NULL, 0, err);
      rows = 0;
      j->sum = 0;
    }
    if (rc == 0)
      rc = cursor_chunk(j, &c, o->chunk, take_insert, &got, err);
    if (rc == 0)
      rc = j->pgrows ? pgrows_flush(j, err) : writer_flush(j->w, err);
    /* The chunk's rows are all sent before its progress is written. */
    if (j->pgrows && odbc_sync(t->c, err) != 0)
      rc = -1;
    done = j->npk == 0 || got < o->chunk;
    rows += got;
    if (rc == 0 && done && pk_deferred(j))
      rc = add_pk(j, err);
    if (rc == 0)
      rc = progress_write(j, &c, rows, done, 0, err);
    if (rc == 0)
      rc = odbc_commit(t->c, err);
    else if (t->c->in_txn)
      odbc_rollback(t->c);
    if (rc == 0)
      progress_line(j, rows, done);
    if (rc == 0 && !done)
      rc = record_bound(j, &c, err);
  }
  j->mt->copied = j->n;
  j->mt->rows = rows;
  pr->rows = rows;
  pr->sum = j->sum;
  writer_free(j->w);
  j->w = NULL;
  if (j->pgrows)
    pgrows_free(j);
  cursor_free(&c);
  if (rc != 0)
    err_prefix(err, "copying %s", j->mt->name);
  return rc;
}

/* ---- verification ----------------------------------------------------------- */

/* Readers of the target at once when the table's key ranges are known:
 * reading back is the server's output and the client's parsing, each on
 * one core; two readers put both cores to work. */
#define VERIFY_READERS 2

/* Starts the cursor after boundary b. */
static void cursor_use_key(cursor *c, const tjob *j, size_t b, dwl_error *err)
{
  buf_reset(&c->key);
  memcpy(c->klen, &j->blen[b * j->npk], j->npk * sizeof *c->klen);
  size_t len = 0;
  for (size_t k = 0; k < j->npk; k++)
    len += c->klen[k];
  if (buf_add(&c->key, j->bkeys.data + j->boff[b], len) != 0)
    err_set(err, DWL_EXIT_FAILED, "out of memory");
  c->have = 1;
}

/* Reads the target's rows in range r: after boundary r - 1 and up to
 * boundary r (the first and last ranges open), hashing them into j. */
static int checksum_range(tjob *j, side *s, size_t r, int packed, dwl_error *err)
{
  cursor c;
  if (cursor_init(&c, s, j->npk, err) != 0)
    return -1;
  c.packed = packed;
  if (r > 0)
    cursor_use_key(&c, j, r - 1, err);
  if (r < j->nb) {
    c.upper = j->bkeys.data + j->boff[r];
    c.uklen = &j->blen[r * j->npk];
  }
  int rc = err_isset(err) ? -1 : 0;
  for (long got = 0; rc == 0;) {
    if ((rc = stopped(j, err)) != 0 || (rc = cursor_chunk(j, &c, j->m->o->chunk, take_hash, &got, err)) != 0)
      break;
    if (got < j->m->o->chunk)
      break;
  }
  cursor_free(&c);
  return rc;
}

typedef struct vreader {
  tjob j;                /* the table's job, with its own connection and scratch */
  size_t *next;          /* the next range, shared */
  pthread_mutex_t *mu;
  int rc;
  dwl_error err;
} vreader;

static void *verify_reader(void *arg)
{
  vreader *v = arg;
  tjob *j = &v->j;
  err_init(&v->err);
  v->rc = side_open(&j->dst, j->m->o->to, j->mt->name, &v->err);
  if (v->rc == 0)
    v->rc = target_layout(j->dst.t, j->cols, j->ncols, &v->err);
  int packed = v->rc == 0 && is_dbms(&j->dst, "postgresql");
  while (v->rc == 0) {
    pthread_mutex_lock(v->mu);
    size_t r = (*v->next)++;
    pthread_mutex_unlock(v->mu);
    if (r > j->nb)
      break;
    v->rc = checksum_range(j, &j->dst, r, packed, &v->err);
  }
  /* The others stop at their next chunk. */
  if (v->rc != 0) {
    pthread_mutex_lock(v->mu);
    *v->next = j->nb + 1;
    pthread_mutex_unlock(v->mu);
  }
  side_close(&j->dst);
  return NULL;
}

/* The ranges between this run's chunk boundaries, read by VERIFY_READERS
 * threads with connections of their own. */
static int checksum_parallel(tjob *j, long long *rows, uint64_t *sum, dwl_error *err)
{
  vreader v[VERIFY_READERS];
  pthread_t th[VERIFY_READERS];
  int started[VERIFY_READERS] = {0};
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  size_t next = 0;
  int rc = 0;
  memset(v, 0, sizeof v);
  for (size_t i = 0; i < VERIFY_READERS; i++) {
    tjob *w = &v[i].j;
    *w = *j;
    memset(&w->src, 0, sizeof w->src);
    memset(&w->dst, 0, sizeof w->dst);
    w->n = 0;
    w->sum = 0;
    buf_init(&w->hb, 0);
    w->norm = calloc(j->ncols, sizeof *w->norm);
    w->row = calloc(j->ncols, sizeof *w->row);
    w->packed = calloc(j->ncols, sizeof *w->packed);
    v[i].next = &next;
    v[i].mu = &mu;
    if (!w->norm || !w->row || !w->packed) {
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    for (size_t c = 0; c < j->ncols; c++)
      buf_init(&w->norm[c], 0);
    if (pthread_create(&th[i], NULL, verify_reader, &v[i]) != 0) {
      rc = err_set(err, DWL_EXIT_FAILED, "cannot start a verification thread");
      break;
    }
    started[i] = 1;
  }
  if (rc != 0) {
    pthread_mutex_lock(&mu);
    next = j->nb + 1;
    pthread_mutex_unlock(&mu);
  }
  *rows = 0;
  *sum = 0;
  for (size_t i = 0; i < VERIFY_READERS; i++) {
    tjob *w = &v[i].j;
    if (started[i]) {
      pthread_join(th[i], NULL);
      if (v[i].rc != 0 && rc == 0) {
        *err = v[i].err;
        rc = -1;
      }
      *rows += w->n;
      *sum += w->sum;
    }
    for (size_t c = 0; w->norm && c < j->ncols; c++)
      buf_free(&w->norm[c]);
    free(w->norm);
    free(w->row);
    free(w->packed);
    buf_free(&w->hb);
  }
  return rc;
}

static int checksum(tjob *j, side *s, long long *rows, uint64_t *sum, dwl_error *err)
{
  if (j->npk > 0 && j->nb > 0)
    return checksum_parallel(j, rows, sum, err);
  cursor c;
  if (cursor_init(&c, s, j->npk, err) != 0)
    return -1;
  /* The checksum does not depend on the order: one plain scan, where the
   * driver streams it (MariaDB Connector/ODBC 3.1.15 would hold the whole
   * result: it reads in key chunks). */
  if (!is_dbms(s, "mariadb"))
    c.whole = 1;
  if (is_dbms(s, "postgresql") && j->npk > 0) {
    c.whole = 0;
    c.packed = 1;
  }
  j->n = 0;
  j->sum = 0;
  int rc = 0;
  for (;;) {
    long got = 0;
    if ((rc = stopped(j, err)) != 0 || (rc = cursor_chunk(j, &c, j->m->o->chunk, take_hash, &got, err)) != 0)
      break;
    if (c.whole || got < j->m->o->chunk)
      break;
  }
  cursor_free(&c);
  *rows = j->n;
  *sum = j->sum;
  return rc;
}

/* The target's rows against the source's count and checksum taken
 * while copying. */
static int verify_table(tjob *j, const progress *pr, dwl_error *err)
{
  long long nt;
  uint64_t ht;
  if (checksum(j, &j->dst, &nt, &ht, err) != 0) {
    err_prefix(err, "verifying %s", j->mt->name);
    return -1;
  }
  j->mt->rows = nt;
  if (pr->rows != nt)
    return err_set(err, DWL_EXIT_FAILED, "verification failed for table %s: %lld rows read from the source, %lld in "
                   "the target", j->mt->name, pr->rows, nt);
  if (pr->sum != ht)
    return err_set(err, DWL_EXIT_FAILED,
                   "verification failed for table %s: %lld rows on both sides, but their values differ "
                   "(checksum %016llx in the source, %016llx in the target)",
                   j->mt->name, nt, (unsigned long long)pr->sum, (unsigned long long)ht);
  log_msg(LOG_INFO, "table %s verified: %lld rows, checksum %016llx", j->mt->name, nt, (unsigned long long)ht);
  j->mt->verified = 1;
  return 0;
}

/* ---- one table ---------------------------------------------------------------- */

static int table_empty(target *t, dwl_error *err)
{
  char sql[700];
  snprintf(sql, sizeof sql, "SELECT 1 FROM %s LIMIT 1", t->table_q);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  const dwl_value *r;
  int rc = ostmt_execute(st, NULL, NULL, 0, err);
  if (rc == 0)
    rc = ostmt_fetch(st, &r, err);
  ostmt_free(st);
  return rc < 0 ? -1 : rc == 0;
}

/* Decides between a fresh copy, a resumed one and refusing, and creates
 * the table with its progress row. */
static int start_table(tjob *j, progress *pr, dwl_error *err)
{
  const mig_opts *o = j->m->o;
  target *t = j->dst.t;
  if (progress_read(j, pr, err) != 0)
    return -1;
  int exists = odbc_table_exists(t->c, t->schema, t->table, err);
  if (exists < 0)
    return -1;
  if (pr->found && !exists)
    return err_set(err, DWL_EXIT_FAILED, "table %s: %s records a migration, but the target has no such table; "
                                         "delete its row from %s to start over",
                   j->mt->name, PROGRESS_TABLE, PROGRESS_TABLE);
  if (pr->found && !o->resume)
    return err_set(err, DWL_EXIT_FAILED,
                   "table %s: an earlier migration of it is recorded in %s; continue it with --resume", j->mt->name,
                   PROGRESS_TABLE);
  if (pr->found)
    return 0;
  if (exists) {
    /* MariaDB commits DDL at once: a migration killed right after
     * CREATE TABLE leaves it empty and unrecorded. */
    int empty = o->resume ? table_empty(t, err) : 0;
    if (empty < 0)
      return -1;
    if (!empty)
      return err_set(err, DWL_EXIT_FAILED,
                     "table %s already exists in the target; drop it, or migrate into another database", j->mt->name);
  }
  if (odbc_begin(t->c, err) != 0)
    return -1;
  int rc = exists ? 0 : create_table(j, err);
  if (rc == 0)
    rc = progress_write(j, NULL, 0, 0, 1, err);
  if (rc == 0)
    rc = odbc_commit(t->c, err);
  else
    odbc_rollback(t->c);
  return rc;
}

/* MariaDB keys hold bounded text only: unbounded text parts share what the
 * other parts leave of the key's bytes (a single text key gets 768
 * characters), and bounded ones that would not fit are cut to that share
 * too. */
static void maria_key_text(tjob *j)
{
  size_t fixed = 0, ntext = 0;
  for (size_t k = 0; k < j->npk; k++) {
    const dwl_column *c = &j->cols[j->pk[k]];
    if (c->type == DWL_TYPE_TEXT)
      ntext++;
    else
      fixed += c->type == DWL_TYPE_NUMERIC ? 32 : 8;  /* DECIMAL(65) is 30 bytes */
  }
  if (ntext == 0 || fixed >= MARIA_KEY_BYTES)
    return;
  int share = (int)((MARIA_KEY_BYTES - fixed) / 4 / ntext);
  for (size_t k = 0; k < j->npk; k++) {
    dwl_column *c = &j->cols[j->pk[k]];
    if (c->type == DWL_TYPE_TEXT && (c->precision <= 0 || c->precision > share))
      c->precision = share;
  }
}

static int migrate_table(mig *m, mig_table *mt, dwl_error *err)
{
  const mig_opts *o = m->o;
  tjob j;
  memset(&j, 0, sizeof j);
  j.m = m;
  j.mt = mt;
  j.t0 = now_s();
  buf_init(&j.hb, 0);
  buf_init(&j.bkeys, 0);
  progress pr = {0};
  int rc = side_open(&j.src, o->from, mt->name, err);
  if (rc == 0)
    rc = side_open(&j.dst, o->to, mt->name, err);
  if (rc == 0)
    rc = read_meta(&j, err);
  if (rc == 0) {
    if (j.dst.t->d->index_text_prefix)
      maria_key_text(&j);
    if (j.npk == 0)
      log_msg(LOG_WARN, "table %s has no primary key: it is copied in one transaction, and --resume starts it over",
              mt->name);
    j.norm = calloc(j.ncols, sizeof *j.norm);
    j.row = calloc(j.ncols, sizeof *j.row);
    j.packed = calloc(j.ncols, sizeof *j.packed);
    if (!j.norm || !j.row || !j.packed)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < j.ncols; i++)
      buf_init(&j.norm[i], 0);
  }
  if (rc == 0)
    rc = target_layout(j.src.t, j.cols, j.ncols, err);
  if (rc == 0)
    rc = target_layout(j.dst.t, j.cols, j.ncols, err);
  if (rc == 0)
    rc = start_table(&j, &pr, err);
  if (rc == 0 && !pr.done)
    rc = copy_table(&j, &pr, err);
  else if (rc == 0)
    log_msg(LOG_INFO, "table %s: copied by an earlier run", mt->name);
  if (rc == 0 && o->verify)
    rc = verify_table(&j, &pr, err);
  if (rc == 0)
    log_msg(LOG_INFO, "table %s: %lld rows copied, %.2fs", mt->name, mt->copied, now_s() - j.t0);
  json_decref(pr.key);
  for (size_t i = 0; j.norm && i < j.ncols; i++)
    buf_free(&j.norm[i]);
  free(j.norm);
  free(j.row);
  free(j.packed);
  buf_free(&j.hb);
  buf_free(&j.bkeys);
  free(j.blen);
  free(j.boff);
  for (size_t i = 0; j.names && i < j.ncols; i++)
    free(j.names[i]);
  free(j.names);
  free(j.cols);
  free(j.pk);
  side_close(&j.src);
  side_close(&j.dst);
  return rc;
}

static void *worker(void *arg)
{
  mig *m = arg;
  for (;;) {
    pthread_mutex_lock(&m->mu);
    size_t i = m->next < m->n && !m->failed ? m->next++ : m->n;
    pthread_mutex_unlock(&m->mu);
    if (i >= m->n)
      return NULL;
    if (migrate_table(m, &m->t[i], &m->t[i].err) != 0) {
      pthread_mutex_lock(&m->mu);
      m->failed = 1;
      pthread_mutex_unlock(&m->mu);
    }
  }
}

/* ---- the command ------------------------------------------------------------- */

static int usage_fail(const char *msg, const char *arg)
{
  fprintf(stderr, "dwload migrate: %s%s\nTry 'dwload migrate --help'.\n", msg, arg ? arg : "");
  return DWL_EXIT_USAGE;
}

static void opts_free(mig_opts *o)
{
  free(o->from);
  free(o->to);
  for (size_t i = 0; i < o->ntables; i++)
    free(o->tables[i]);
  free(o->tables);
}

/* ${VAR} in a connection string, from the environment. */
static int expand_conn(const char *in, char **out)
{
  char *bad = NULL;
  *out = spec_expand_conn(in, &bad);
  if (*out)
    return 0;
  fprintf(stderr, "dwload migrate: %s%s%s\n", bad ? "environment variable " : "bad ${...} in a connection string",
          bad ? bad : "", bad ? " is not set" : "");
  free(bad);
  return -1;
}

static int parse_opts(int argc, char **argv, mig_opts *o)
{
  static const struct option opts[] = {
    {"from", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
    {"table", required_argument, NULL, 'T'}, {"all", no_argument, NULL, 'a'},
    {"resume", no_argument, NULL, 'r'},     {"jobs", required_argument, NULL, 'j'},
    {"chunk-rows", required_argument, NULL, 'c'}, {"no-verify", no_argument, NULL, 'n'},
    {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
  };
  const char *from = NULL, *to = NULL;
  int c;
  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    char *end;
    switch (c) {
    case 'f':
      from = optarg;
      break;
    case 't':
      to = optarg;
      break;
    case 'T': {
      char **nt = realloc(o->tables, (o->ntables + 1) * sizeof *nt);
      if (!nt)
        return usage_fail("out of memory", NULL);
      o->tables = nt;
      if (!(o->tables[o->ntables] = strdup(optarg)))
        return usage_fail("out of memory", NULL);
      o->ntables++;
      break;
    }
    case 'a':
      o->all = 1;
      break;
    case 'r':
      o->resume = 1;
      break;
    case 'n':
      o->verify = 0;
      break;
    case 'j':
      o->jobs = strtol(optarg, &end, 10);
      if (*end || o->jobs < 1 || o->jobs > 64)
        return usage_fail("--jobs must be a number from 1 to 64, not ", optarg);
      break;
    case 'c':
      o->chunk = strtol(optarg, &end, 10);
      if (*end || o->chunk < 1 || o->chunk > 10000000)
        return usage_fail("--chunk-rows must be a number from 1 to 10000000, not ", optarg);
      break;
    case 'h':
      fputs(migrate_usage, stdout);
      return -1;
    default:
      return usage_fail("bad option", NULL);
    }
  }
  if (optind < argc)
    return usage_fail("unexpected argument ", argv[optind]);
  if (!from || !to)
    return usage_fail("--from and --to are required", NULL);
  if (!o->all == !o->ntables)
    return usage_fail("give --all or one or more --table, not both", NULL);
  if (expand_conn(from, &o->from) != 0 || expand_conn(to, &o->to) != 0)
    return DWL_EXIT_USAGE;
  return 0;
}

int migrate_main(int argc, char **argv)
{
  double t0 = now_s();
  mig_opts o = {.verify = 1, .jobs = 1, .chunk = DEFAULT_CHUNK_ROWS};
  int prc = parse_opts(argc, argv, &o);
  if (prc != 0) {
    opts_free(&o);
    return prc < 0 ? DWL_EXIT_OK : prc;
  }
  migrate_summary sum = {0};
  dwl_error err;
  err_init(&err);
  mig m = {.o = &o, .tty = isatty(STDERR_FILENO)};
  pthread_mutex_init(&m.mu, NULL);
  int rc = 0, one_writer = 0;
  char **names = o.tables;
  size_t nnames = o.ntables;
  if (o.all) {
    names = NULL;
    nnames = 0;
    rc = list_tables(o.from, &names, &nnames, &err);
  }
  for (size_t i = 0; rc == 0 && i < nnames; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[i], names[k]) == 0)
        rc = err_set(&err, DWL_EXIT_USAGE, "table %s is given twice", names[i]);
  if (rc == 0)
    rc = progress_ensure(&o, &one_writer, &err);
  if (rc == 0) {
    m.n = nnames;
    m.t = calloc(nnames ? nnames : 1, sizeof *m.t);
    if (!m.t)
      rc = err_set(&err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < nnames; i++) {
      m.t[i].name = names[i];
      err_init(&m.t[i].err);
    }
  }
  if (rc == 0) {
    long jobs = o.jobs < (long)nnames ? o.jobs : (long)(nnames ? nnames : 1);
    /* SQLite has one writer at a time: parallel chunks would wait on it. */
    if (jobs > 1 && one_writer) {
      log_msg(LOG_INFO, "the target is SQLite: tables are copied one at a time");
      jobs = 1;
    }
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    long started = 0;
    if (!th)
      rc = err_set(&err, DWL_EXIT_FAILED, "out of memory");
    for (long i = 1; rc == 0 && i < jobs; i++, started++)
      if (pthread_create(&th[i], NULL, worker, &m) != 0)
        break;
    if (rc == 0)
      worker(&m);
    for (long i = 1; i <= started; i++)
      pthread_join(th[i], NULL);
    free(th);
  }
  /* The table that failed first is named, not one stopped because of it. */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < m.n; i++)
      if (m.t[i].err.code && !err.code && (pass || !m.t[i].stopped)) {
        err = m.t[i].err;
        snprintf(sum.failed, sizeof sum.failed, "%s", m.t[i].name);
      }
  for (size_t i = 0; i < m.n; i++) {
    sum.copied += m.t[i].copied;
    sum.rows += m.t[i].rows;
    sum.verified += m.t[i].verified;
    if (!m.t[i].err.code && (m.t[i].verified || !o.verify))
      sum.tables++;
  }
  if (rc == 0 && err.code)
    rc = -1;
  if (rc != 0)
    log_msg(LOG_ERROR, "%s", err.msg);
  sum.ok = rc == 0;
  sum.seconds = now_s() - t0;
  migrate_summary_print(&sum, stdout);
  pthread_mutex_destroy(&m.mu);
  free(m.t);
  if (o.all) {
    for (size_t i = 0; i < nnames; i++)
      free(names[i]);
    free(names);
  }
  opts_free(&o);
  return rc == 0 ? DWL_EXIT_OK : err.code ? err.code : DWL_EXIT_FAILED;
}
