/* The target table's column layout: the source's columns, the
 * dimension's bookkeeping columns (surrogate key, validity, flags) and the
 * run id column (target.run_id_column), their roles and quoted names, name
 * clashes, the predicate for current versions, and the canonical text of
 * its points in time. */
#include "target.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "scd.h"

/* The names of the table's columns so far, by case-insensitive hash, so
 * that laying out n columns costs O(n), not O(n^2): a source with
 * thousands of columns is checked for clashes in an instant. */
typedef struct colset {
  size_t *slot;  /* index + 1 into t->cols; 0 is empty */
  size_t mask;
  size_t cap;    /* of t->cols */
} colset;

static size_t name_hash(const char *s)
{
  size_t h = 1469598103934665603ULL & SIZE_MAX;
  for (; *s; s++)
    h = (h ^ (size_t)tolower((unsigned char)*s)) * (1099511628211ULL & SIZE_MAX);
  return h;
}

static int colset_init(colset *cs, target *t, size_t n, dwl_error *err)
{
  size_t m = 16;
  while (m < 2 * n)
    m *= 2;
  cs->slot = calloc(m, sizeof *cs->slot);
  cs->mask = m - 1;
  cs->cap = n;
  free(t->cols);
  t->cols = calloc(n, sizeof *t->cols);
  t->ncols = 0;
  if (!cs->slot || !t->cols)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

static int add_col(target *t, colset *cs, const char *name, int role, size_t src, dwl_column decl, dwl_error *err)
{
  size_t h = name_hash(name) & cs->mask;
  for (; cs->slot[h]; h = (h + 1) & cs->mask) {
    size_t i = cs->slot[h] - 1;
    if (strcasecmp(t->cols[i].name, name) != 0)
      continue;
    /* Names are matched without regard to case, as SQL does unquoted. */
    if (role == TC_SRC && t->cols[i].role == TC_SRC)
      return err_set(err, DWL_EXIT_USAGE,
                     "the source has columns '%s' and '%s', whose names differ only in case; dwload matches column "
                     "names without regard to case, so rename one",
                     t->cols[i].name, name);
    if (role == TC_RUN_ID) {
      int line = 0, col = 0;
      const char *file = spec_key_at(t->spec, "target.run_id_column", &line, &col);
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                      "%s:%d:%d: target.run_id_column: '%s' is already a column of the %s; choose another name",
                      file, line, col, name, t->cols[i].role == TC_SRC ? "source" : "dimension");
    }
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                   "%s: dimension column '%s' has the name of a source column; rename it under dimension:",
                   t->spec->path, role == TC_SRC ? t->cols[i].name : name);
  }
  if (t->ncols == cs->cap)  /* colset_init reserved room for all */
    return err_set(err, DWL_EXIT_FAILED, "internal error: more columns than laid out");
  cs->slot[h] = t->ncols + 1;
  tcol *c = &t->cols[t->ncols];
  memset(c, 0, sizeof *c);
  c->name = name;
  c->role = role;
  c->src = src;
  c->decl = decl;
  c->decl.name = name;
  dwl_buf q;
  buf_init(&q, 0);
  if (dialect_quote(t->d, name, &q, "column name", err) != 0) {
    buf_free(&q);
    return -1;
  }
  c->q = buf_steal(&q);
  if (role != TC_SRC)
    t->ix[role] = (ssize_t)t->ncols;
  t->ncols++;
  return 0;
}

static int layout(target *t, colset *cs, const dwl_column *src, size_t nsrc, dwl_error *err);

/* target.run_id_column, last in every mode: text, NULL in rows written
 * before the column was added. */
static int add_run_id(target *t, colset *cs, dwl_error *err)
{
  dwl_column rid = {.type = DWL_TYPE_TEXT, .precision = TARGET_RUN_ID_WIDTH, .nullable = 1};
  return t->spec->run_id_column ? add_col(t, cs, t->spec->run_id_column, TC_RUN_ID, 0, rid, err) : 0;
}

/* A source that wide is not a dimension but a mistake or an attack; every
 * warehouse refuses fewer (each dialect's max_columns says how many). */
#define TARGET_MAX_COLUMNS 4096

int target_layout(target *t, const dwl_column *src, size_t nsrc, dwl_error *err)
{
  if (nsrc > TARGET_MAX_COLUMNS)
    return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA, "the source has %zu columns; dwload loads at most %d", nsrc,
                   TARGET_MAX_COLUMNS);
  colset cs;
  int rc = colset_init(&cs, t, nsrc + 7, err);  /* and the bookkeeping columns */
  if (rc == 0)
    rc = layout(t, &cs, src, nsrc, err);
  free(cs.slot);
  if (rc == 0 && t->d->max_columns && t->ncols > (size_t)t->d->max_columns)
    rc = err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA,
                  "table %s would have %zu columns (%zu from the source, the rest dwload's bookkeeping); "
                 "%s tables hold at most %d",
                 t->spec->target_table, t->ncols, nsrc, t->d->dbms_prefix, t->d->max_columns);
  return rc;
}

/* What an integer sequence (vseq) cannot do, or a lookback count without
 * one: each refused naming its key (dwload-job(5), SEQUENCES). */
static int seq_refusal(const target *t, const char *lmd, dwl_error *err)
{
  const dwl_spec *s = t->spec;
  const char *key = NULL, *why = NULL;
  if (!t->vseq) {
    if (s->lookback_count)
      key = "load.lookback", why = "a count of sequence values needs an integer lmd; give a duration (such as 1d)";
  } else if (s->mode == MODE_SCD2 && s->close != CLOSE_AT_NEXT) {
    key = "dimension.close", why = "an integer sequence has no day or second before the next version; use at_next";
  } else if (s->open_end) {
    key = "dimension.open_end", why = "a current version of an integer sequence has valid_to NULL; remove it";
  } else if (s->lmd_format) {
    key = "load.lmd_format", why = "an integer sequence is read as an integer; remove it";
  } else if (s->lookback_us > 0 && !s->lookback_count) {
    key = "load.lookback", why = "a duration needs a point in time; give a count of sequence values (lookback: 100)";
  } else if (s->deletes == DEL_ABSENT) {
    key = "load.deletes",
    why = "absent needs the run's time to stamp the deletions, and an integer sequence has none; "
          "use a deletes column";
  }
  if (!key)
    return 0;
  int line = 0, col = 0;
  const char *file = spec_key_at(s, key, &line, &col);
  return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: %s: the lmd column '%s' is %s: %s", file, line,
                  col, key, lmd, t->vseq ? "an integer sequence" : "not an integer", why);
}

static int layout(target *t, colset *cs, const dwl_column *src, size_t nsrc, dwl_error *err)
{
  const dwl_spec *s = t->spec;
  t->src = src;
  t->nsrc = nsrc;
  ssize_t lmd = s->lmd ? scd_col_index(src, nsrc + t->nhidden, s->lmd) : -1;
  t->lmd = lmd < (ssize_t)nsrc ? lmd : -1;  /* a hidden lmd has no column in the table */
  int scd2 = s->mode == MODE_SCD2;
  /* The lmd column's declared type decides how every point in time of the
   * dimension is stored, so all warehouses hold the same values. */
  t->vdate = lmd >= 0 && src[lmd].type == DWL_TYPE_DATE;
  t->vseq = lmd >= 0 && src[lmd].type == DWL_TYPE_INTEGER;
  int vtype = t->vdate ? DWL_TYPE_DATE : t->vseq ? DWL_TYPE_INTEGER : DWL_TYPE_TIMESTAMP;
  if (seq_refusal(t, src[lmd >= 0 ? lmd : 0].name, err) != 0)
    return -1;
  if (s->partition_by.n && !t->d->partition_by) {
    int line = 0, col = 0;
    const char *file = spec_key_at(s, "target.partition_by", &line, &col);
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: target.partition_by: %s has no partitioned tables",
                    file, line, col, t->d->dbms_prefix);
  }
  /* Where unbounded text is indexed by a prefix (MariaDB), the primary
   * key cannot hold it: refused here rather than by the server's CREATE. */
  for (size_t i = 0; t->d->index_text_prefix && i < s->partition_by.n; i++) {
    ssize_t ci = scd_col_index(src, nsrc, s->partition_by.v[i]);
    if (ci >= 0 && src[ci].type == DWL_TYPE_TEXT && src[ci].precision <= 0) {
      int line = 0, col = 0;
      const char *file = spec_key_at(s, "target.partition_by", &line, &col);
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                      "%s:%d:%d: target.partition_by: column '%s' is text without a length, which a %s primary key "
                      "cannot hold; declare it varchar(n) in source.types",
                      file, line, col, src[ci].name, t->d->dbms_prefix);
    }
  }
  if (scd2 && t->vdate && s->close == CLOSE_SECOND_BEFORE) {
    int line = 0, col = 0;
    const char *file = spec_key_at(s, "dimension.close", &line, &col);
    return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                   "%s:%d:%d: dimension.close: second_before needs timestamps, but the lmd column '%s' is a date",
                   file, line, col, src[lmd].name);
  }
  dwl_column flag = {.type = DWL_TYPE_BOOLEAN, .nullable = 0};
  dwl_column tstamp = {.type = vtype, .nullable = 1};
  if (scd2 && s->surrogate_key) {
    dwl_column sk = {.type = s->sk_strategy == SK_HASH ? DWL_TYPE_TEXT : DWL_TYPE_INTEGER, .nullable = 0};
    if (add_col(t, cs, s->surrogate_key, TC_SK, 0, sk, err) != 0)
      return -1;
  }
  for (size_t i = 0; i < nsrc; i++) {
    dwl_column decl = src[i];
    if ((ssize_t)i == t->lmd)
      decl.type = vtype;  /* written in canonical form */
    if (add_col(t, cs, src[i].name, TC_SRC, i, decl, err) != 0)
      return -1;
  }
  if (!scd2)
    return add_run_id(t, cs, err);
  /* valid_from may be the lmd column itself (seed 001's ROW_EFF_DT). */
  if (t->lmd >= 0 && strcasecmp(s->valid_from, src[t->lmd].name) == 0)
    t->ix[TC_VALID_FROM] = (ssize_t)t->lmd + (s->surrogate_key ? 1 : 0);
  else if (add_col(t, cs, s->valid_from, TC_VALID_FROM, 0, tstamp, err) != 0)
    return -1;
  if (add_col(t, cs, s->valid_to, TC_VALID_TO, 0, tstamp, err) != 0)
    return -1;
  if (s->current && add_col(t, cs, s->current, TC_CURRENT, 0, flag, err) != 0)
    return -1;
  if (s->deleted && add_col(t, cs, s->deleted, TC_DELETED, 0, flag, err) != 0)
    return -1;
  if (add_run_id(t, cs, err) != 0)
    return -1;

  dwl_buf p;
  buf_init(&p, 0);
  if (s->open_end) {
    dwl_ts oe;
    if (ts_parse(s->open_end, strlen(s->open_end), &oe) == 0) {
      if (t->vdate && oe.us % DWL_US_PER_DAY != 0) {
        int line = 0, col = 0;
        const char *file = spec_key_at(s, "dimension.open_end", &line, &col);
        buf_free(&p);
        return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                       "%s:%d:%d: dimension.open_end: '%s' has a time of day, but the lmd column '%s' is a date",
                       file, line, col, s->open_end, src[lmd].name);
      }
      target_ts_text(t, &oe, t->open_end);
    }
  }
  if (s->current)
    buf_printf(&p, "%s = %s", t->cols[t->ix[TC_CURRENT]].q, t->d->true_lit);
  else if (t->open_end[0])
    buf_printf(&p, "%s = ?", t->cols[t->ix[TC_VALID_TO]].q);
  else
    buf_printf(&p, "%s IS NULL", t->cols[t->ix[TC_VALID_TO]].q);
  t->cur_pred = buf_steal(&p);
  return t->cur_pred ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
}

size_t target_ts_text(const target *t, const dwl_ts *ts, char out[32])
{
  if (t->vseq)
    return ts_format_seq(ts, out);
  dwl_ts v = *ts;
  v.date_only = t->vdate;
  return ts_format(&v, out);
}

int target_ts_parse(const target *t, const char *s, size_t len, dwl_ts *out)
{
  return t->vseq ? ts_parse_seq(s, len, out) : ts_parse(s, len, out);
}

size_t target_cur_params(const target *t, dwl_value *out)
{
  if (t->spec->current || !t->open_end[0])
    return 0;
  out->data = t->open_end;
  out->len = strlen(t->open_end);
  out->is_null = 0;
  return 1;
}
