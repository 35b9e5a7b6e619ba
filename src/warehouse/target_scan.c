/* Reading the target's versions back in source-column layout: current
 * versions, deleted ones, every version of given keys (staged and joined,
 * listed, or one key NULL-safely), values normalized as the source side writes
 * them; the table's row count or the catalog's estimate of it; and the
 * latest start of a version. */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "norm.h"

enum { SCAN_CURRENT, SCAN_DELETED, SCAN_HISTORY };

/* Which rows a scan reads beyond its kind: all, those whose key is in a
 * staged key table or a list, or one key (NULL-safe, for keys with a NULL
 * part). */
typedef struct scan_filter {
  const char *stage;            /* staged key table, or NULL */
  char *const *stage_cols;      /* its quoted key columns */
  const dwl_value *keyrow;      /* one key, source layout, or NULL */
  const dwl_value *const *keyrows; /* or a list of keys (no NULL part) */
  size_t nkeyrows;
  const size_t *key;            /* key column indexes */
  size_t nkey;
  int by_sk;                    /* in surrogate key order (where there is one) */
} scan_filter;

static int scan(target *t, const size_t *cols, size_t ncols, int all_cols, int which, const scan_filter *flt,
                target_row_fn fn, target_hist_fn hfn, void *ud, dwl_error *err)
{
  if (!t->exists)
    return 0;
  int scd2 = t->spec->mode == MODE_SCD2;
  size_t nsel = all_cols ? t->nsrc : ncols;
  size_t off = t->ix[TC_SK] >= 0 ? 1 : 0;
  size_t *map = calloc(nsel ? nsel : 1, sizeof *map);
  dwl_value *row = calloc(t->nsrc + t->nhidden + 1, sizeof *row);
  dwl_buf *norm = calloc(nsel ? nsel : 1, sizeof *norm);
  size_t maxp = (flt ? flt->nkey * (flt->nkeyrows > 1 ? flt->nkeyrows : 1) : 0) + 2;
  dwl_value *p = calloc(maxp, sizeof *p);
  SQLSMALLINT *pt = calloc(maxp, sizeof *pt);
  dwl_buf sql;
  buf_init(&sql, 0);
  odbc_stmt *st = NULL;
  int rc = -1;
  if (!map || !row || !norm || !p || !pt) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < nsel; i++)
    buf_init(&norm[i], 0);
  /* The table is "d" throughout, so a staged key table may join it. */
  buf_adds(&sql, "SELECT ");
  for (size_t i = 0; i < nsel; i++) {
    map[i] = all_cols ? i : cols[i];
    /* A column this run adds holds NULL in every stored row; before the
     * ALTER TABLE (plan), or on a connection that cannot see it yet
     * (SQLite's reader), there is no column to name. */
    if (t->cols[map[i] + off].not_in_table)
      buf_printf(&sql, "%sNULL", i ? ", " : "");
    else
      buf_printf(&sql, "%sd.%s", i ? ", " : "", t->cols[map[i] + off].q);
  }
  if (scd2 && which == SCAN_DELETED)
    buf_printf(&sql, "%sd.%s, %s", nsel ? ", " : "", t->cols[t->ix[TC_VALID_TO]].q, t->d->true_lit);
  else if (scd2)
    buf_printf(&sql, "%sd.%s, %s%s", nsel ? ", " : "", t->cols[t->ix[TC_VALID_FROM]].q,
               t->ix[TC_DELETED] >= 0 ? "d." : "",
               t->ix[TC_DELETED] >= 0 ? t->cols[t->ix[TC_DELETED]].q : t->d->false_lit);
  if (which == SCAN_HISTORY)
    buf_printf(&sql, ", d.%s", t->cols[t->ix[TC_VALID_TO]].q);
  else if (!scd2 && nsel == 0)
    buf_adds(&sql, "1");
  buf_printf(&sql, " FROM %s AS d", t->table_q);
  if (flt && flt->stage) {
    buf_printf(&sql, " JOIN %s AS s ON ", flt->stage);
    for (size_t i = 0; i < flt->nkey; i++)
      buf_printf(&sql, "%sd.%s = s.%s", i ? " AND " : "", t->cols[flt->key[i] + off].q, flt->stage_cols[i]);
  }
  buf_adds(&sql, " WHERE 1 = 1");
  size_t np = 0;
  if (flt && flt->keyrow) {
    for (size_t i = 0; i < flt->nkey; i++) {
      buf_printf(&sql, " AND d.%s%s", t->cols[flt->key[i] + off].q, t->d->null_safe_eq);
      p[np] = flt->keyrow[flt->key[i]];
      pt[np++] = t->d->param_type(t->cols[flt->key[i] + off].decl.type);
    }
  }
  for (size_t k = 0; flt && k < flt->nkeyrows; k++) {
    buf_adds(&sql, k ? " OR (" : " AND ((");
    for (size_t i = 0; i < flt->nkey; i++) {
      buf_printf(&sql, "%sd.%s = ?", i ? " AND " : "", t->cols[flt->key[i] + off].q);
      p[np] = flt->keyrows[k][flt->key[i]];
      pt[np++] = t->d->param_type(t->cols[flt->key[i] + off].decl.type);
    }
    buf_adds(&sql, k + 1 < flt->nkeyrows ? ")" : "))");
  }
  if (scd2 && which == SCAN_DELETED && t->ix[TC_DELETED] >= 0) {
    buf_printf(&sql, " AND d.%s = %s AND NOT (%s)", t->cols[t->ix[TC_DELETED]].q, t->d->true_lit, t->cur_pred);
  } else if (scd2 && which == SCAN_DELETED) {
    /* No deleted flag (dimension.deleted: null): a deleted key is one
     * without a current version; each closed version of it is read, and
     * the engine keeps the last end.  (cur_pred's bare names are c's.) */
    buf_printf(&sql, " AND NOT (%s) AND NOT EXISTS (SELECT 1 FROM %s AS c WHERE ", t->cur_pred, t->table_q);
    size_t nse = strlen(t->d->null_safe_eq) - 1;  /* without its "?" */
    for (size_t i = 0; i < nsel; i++)  /* a deleted scan selects the key */
      buf_printf(&sql, "c.%s%.*sd.%s AND ", t->cols[map[i] + off].q, (int)nse, t->d->null_safe_eq,
                 t->cols[map[i] + off].q);
    buf_printf(&sql, "%s)", t->cur_pred);
    if (target_cur_params(t, &p[np]))
      pt[np++] = SQL_VARCHAR;
  } else if (scd2 && which == SCAN_CURRENT) {
    buf_printf(&sql, " AND %s", t->cur_pred);
  }
  if (scd2 && which != SCAN_HISTORY && target_cur_params(t, &p[np]))
    pt[np++] = SQL_VARCHAR;
  /* A table created by this run's transaction is empty and invisible to
   * another connection; a staged key table lives on the run's own. */
  odbc_conn *conn = t->c;
  if (t->d->scan_separately && t->c->in_txn && !t->created && !(flt && flt->stage) && which != SCAN_HISTORY) {
    if (!t->reader && target_open_conn(t, &t->reader, err) != 0)
      goto out;
    conn = t->reader;
  }
  if (flt && flt->by_sk && t->ix[TC_SK] >= 0)
    buf_printf(&sql, " ORDER BY d.%s", t->cols[t->ix[TC_SK]].q);
  t->touched |= conn == t->c && t->c->in_txn;
  if (ostmt_prepare(conn, sql.data, &st, err) != 0 || ostmt_execute(st, p, pt, np, err) != 0)
    goto out;
  for (size_t i = 0; i < t->nsrc + t->nhidden; i++)
    row[i].is_null = 1;  /* a hidden column (the engine's only) is NULL in every stored version */
  const dwl_value *r;
  int f;
  while ((f = ostmt_fetch(st, &r, err)) == 1) {
    for (size_t i = 0; i < nsel; i++) {
      const dwl_column *c = &t->src[map[i]];
      const char *why = NULL;
      row[map[i]] = r[i];
      if (r[i].is_null)
        continue;
      if (target_norm_stored(t, map[i], &r[i], &norm[i], &row[map[i]], &why) != 0) {
        char q[300];
        err_set(err, DWL_EXIT_FAILED, "table %s: column %s holds '%s': %s", t->spec->target_table, c->name,
                err_quote(q, sizeof q, r[i].data, r[i].len, 60), why);
        goto out;
      }
    }
    dwl_ts vf = {0};
    int deleted = 0;
    if (scd2) {
      const dwl_value *v = &r[nsel];
      if (v->is_null || target_ts_parse(t, v->data, v->len, &vf) != 0) {
        err_set(err, DWL_EXIT_FAILED, "table %s: a %s version has %s '%.*s', not a timestamp", t->spec->target_table,
                which == SCAN_DELETED ? "deleted" : "current", which == SCAN_DELETED ? "valid_to" : "valid_from",
                (int)(v->is_null ? 4 : v->len), v->is_null ? "NULL" : v->data);
        goto out;
      }
      const dwl_value *d = &r[nsel + 1];
      deleted = !d->is_null && d->len > 0 && !(d->len == 1 && d->data[0] == '0') &&
                strncasecmp(d->data, "f", 1) != 0;
    }
    if (which == SCAN_HISTORY) {
      /* open: NULL, or the open end */
      const dwl_value *v = &r[nsel + 2];
      dwl_ts vt = {0};
      int open = v->is_null;
      if (!open && target_ts_parse(t, v->data, v->len, &vt) != 0) {
        err_set(err, DWL_EXIT_FAILED, "table %s: a version has valid_to '%.*s', not a timestamp",
                t->spec->target_table, (int)v->len, v->data);
        goto out;
      }
      if (!open && t->open_end[0]) {
        char txt[32];
        target_ts_text(t, &vt, txt);
        open = strcmp(txt, t->open_end) == 0;
      }
      if (hfn(ud, row, &vf, open ? NULL : &vt, deleted, err) != 0)
        goto out;
    } else if (fn(ud, row, scd2 ? &vf : NULL, deleted, err) != 0) {
      goto out;
    }
  }
  rc = f < 0 ? -1 : 0;
out:
  ostmt_free(st);
  /* Readers must be gone before the commit needs its exclusive lock. */
  odbc_close(t->reader);
  t->reader = NULL;
  free(p);
  free(pt);
  buf_free(&sql);
  for (size_t i = 0; norm && i < nsel; i++)
    buf_free(&norm[i]);
  free(norm);
  free(map);
  free(row);
  return rc;
}

int target_norm_stored(const target *t, size_t src, const dwl_value *in, dwl_buf *scratch, dwl_value *out,
                       const char **why)
{
  *out = *in;
  if (in->is_null)
    return 0;
  if ((ssize_t)src != t->lmd)
    return norm_stored_col(&t->src[src], in->data, in->len, scratch, &out->data, &out->len, why);
  /* The same canonical form the source side writes (dates stay dates). */
  dwl_ts ts;
  *why = "is not a timestamp";
  if (target_ts_parse(t, in->data, in->len, &ts) != 0 || buf_grow(scratch, 32) != 0)
    return -1;
  scratch->len = target_ts_text(t, &ts, scratch->data);
  out->data = scratch->data;
  out->len = scratch->len;
  return 0;
}

int target_scan(target *t, const size_t *cols, size_t ncols, int all_cols, target_row_fn fn, void *ud,
                dwl_error *err)
{
  return scan(t, cols, ncols, all_cols, SCAN_CURRENT, NULL, fn, NULL, ud, err);
}

int target_scan_by_sk(target *t, target_row_fn fn, void *ud, dwl_error *err)
{
  scan_filter f = {.by_sk = 1};
  return scan(t, NULL, 0, 1, SCAN_CURRENT, &f, fn, NULL, ud, err);
}

int target_scan_deleted(target *t, const size_t *cols, size_t ncols, target_row_fn fn, void *ud, dwl_error *err)
{
  if (t->spec->mode != MODE_SCD2)
    return 0;
  return scan(t, cols, ncols, 0, SCAN_DELETED, NULL, fn, NULL, ud, err);
}

static scan_filter filter_of(const target_keys *keys)
{
  scan_filter f = {
    .stage = keys->stage,
    .stage_cols = keys->stage_cols,
    .keyrow = keys->keyrow,
    .keyrows = keys->keyrows,
    .nkeyrows = keys->nkeyrows,
    .key = keys->key,
    .nkey = keys->nkey,
  };
  return f;
}

int target_scan_keys(target *t, const size_t *cols, size_t ncols, int deleted, const target_keys *keys,
                     target_row_fn fn, void *ud, dwl_error *err)
{
  if (deleted && t->spec->mode != MODE_SCD2)
    return 0;
  scan_filter f = filter_of(keys);
  return scan(t, cols, ncols, 0, deleted ? SCAN_DELETED : SCAN_CURRENT, &f, fn, NULL, ud, err);
}

int target_scan_history(target *t, const target_keys *keys, target_hist_fn fn, void *ud, dwl_error *err)
{
  scan_filter f = filter_of(keys);
  return scan(t, NULL, 0, 1, SCAN_HISTORY, &f, NULL, fn, ud, err);
}

/* The catalog's estimate, -1 when it has none (never analyzed), -2 on
 * error. */
static long long estimate_rows(target *t, dwl_error *err)
{
  if (!t->d->estimate_sql || (t->schema && !t->d->estimate_quoted))
    return -1;
  dwl_value p = {t->d->estimate_quoted ? t->table_q : t->table, 0, 0};
  p.len = strlen(p.data);
  odbc_stmt *st;
  if (ostmt_prepare(t->c, t->d->estimate_sql, &st, err) != 0)
    return -2;
  const dwl_value *r;
  long long n = -1;
  int rc = ostmt_execute(st, &p, NULL, 1, err);
  if (rc == 0 && (rc = ostmt_fetch(st, &r, err)) == 1 && !r[0].is_null)
    n = strtoll(r[0].data, NULL, 10);
  ostmt_free(st);
  return rc < 0 ? -2 : n;
}

static long long count_rows(target *t, dwl_error *err)
{
  if (!t->exists)
    return 0;
  /* A distributed table's estimate is its servers' statistics as the head
   * last fetched them (Spider: every spider_sts_interval, or never again),
   * which can be far off: a few keys looked up in a table the estimate
   * took for small were a scan of the whole dimension.  Counted instead,
   * by its servers. */
  if (t->remote[0])
    return target_rows(t, err);
  /* No estimate, or 0 (statistics not gathered yet): count. */
  long long est = estimate_rows(t, err);
  if (est > 0 || est == -2)
    return est == -2 ? -1 : est;
  return target_rows(t, err);
}

int target_scan_after_writes(const target *t)
{
  return !t->d->scan_separately;
}

long long target_count(target *t, dwl_error *err)
{
  if (t->counted < 0)
    t->counted = count_rows(t, err);
  return t->counted;
}

/* Whether `rows` staged rows are a small share of the table and its key
 * index is there to probe: 1 yes, 0 no, -1 error. */
static int small_share_indexed(target *t, long long rows, dwl_error *err)
{
  long long n = target_count(t, err);
  if (n < 0)
    return -1;
  if (rows * TARGET_KEYED_RATIO >= n)
    return 0;
  /* Without the index each probe would read the whole table. */
  if (t->key_indexed < 0 && (t->key_indexed = target_key_indexed(t, err)) < 0)
    return -1;
  return t->key_indexed == 1;
}

int target_keyed(target *t, long long rows, dwl_error *err)
{
  /* (a foreign table's or partition's rows are its server's: no ctid to
   * update by, and no index here to probe) */
  if (!t->d->update_keyed_end || !t->exists || rows <= 0 || t->foreign)
    return 0;
  return small_share_indexed(t, rows, err);
}

int target_probes_history(target *t, long long rows, dwl_error *err)
{
  /* Without partial indexes the key index holds every version (dwload's
   * has the current flag as its last column; any other on the key is
   * whole).  A distributed or foreign table's probe would be a query to
   * its servers for each row. */
  if (t->d->partial_index || !t->exists || rows <= 0 || t->foreign || t->remote[0])
    return 0;
  return small_share_indexed(t, rows, err);
}

long long target_rows(target *t, dwl_error *err)
{
  if (!t->exists)
    return 0;
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", t->table_q);
  t->touched |= t->c->in_txn;
  odbc_stmt *st;
  if (ostmt_prepare(t->c, sql, &st, err) != 0)
    return -1;
  const dwl_value *r;
  long long n = -1;
  if (ostmt_execute(st, NULL, NULL, 0, err) == 0 && ostmt_fetch(st, &r, err) == 1)
    n = r[0].is_null ? 0 : strtoll(r[0].data, NULL, 10);
  ostmt_free(st);
  return n;
}

int target_latest_start(target *t, dwl_ts *out, int *found, dwl_error *err)
{
  *found = 0;
  if (!t->exists || t->ix[TC_VALID_FROM] < 0 || t->cols[t->ix[TC_VALID_FROM]].not_in_table)
    return 0;
  char sql[700];
  snprintf(sql, sizeof sql, "SELECT MAX(%s) FROM %s", t->cols[t->ix[TC_VALID_FROM]].q, t->table_q);
  /* Where DDL commits by itself (MariaDB), a read inside the run's
   * transaction holds the table's metadata lock to the commit, and a
   * widening's ALTER on a connection of its own would wait for it until
   * the lock timeout: read on a connection of its own instead.  No other
   * writer can move the latest start meanwhile (the job and table locks). */
  odbc_conn *conn = t->c, *own = NULL;
  if (!t->d->transactional_ddl && t->c->in_txn && !t->created) {
    if (target_open_conn(t, &own, err) != 0)
      return -1;
    conn = own;
  }
  t->touched |= conn == t->c && t->c->in_txn;
  odbc_stmt *st;
  if (ostmt_prepare(conn, sql, &st, err) != 0) {
    odbc_close(own);
    return -1;
  }
  const dwl_value *r;
  int rc = ostmt_execute(st, NULL, NULL, 0, err) == 0 ? ostmt_fetch(st, &r, err) : -1;
  if (rc == 1 && !r[0].is_null) {
    if (ts_parse(r[0].data, r[0].len, out) != 0)
      rc = err_set(err, DWL_EXIT_FAILED, "the latest %s of %s, '%.*s', is not a timestamp", t->spec->valid_from,
                   t->spec->target_table, (int)r[0].len, r[0].data);
    else
      *found = 1;
  }
  ostmt_free(st);
  odbc_close(own);
  return rc < 0 ? -1 : 0;
}
