/* The change engine's driver: SCD type 2 history with type 1 columns,
 * upserts and soft deletes, computed in memory from fingerprints of the
 * dimension's current versions and the rows of the delta.  This file
 * resolves the spec's columns, registers the current versions and the
 * source rows, groups the delta by key and hands each key to its walk
 * (scd_walk.c, the version rules of versions.h) or, for upsert, applies
 * its last row.  Keys with late rows (dated before their stored history
 * ends) wait for their full history and are replayed (late.c).  Deletes by
 * absence: scd_delete.c.  See scd.h for the flow. */
#include "scd_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "col_index.h"
#include "log.h"
#include "progress.h"

ssize_t scd_col_index(const dwl_column *cols, size_t ncols, const char *name)
{
  return col_index(cols, ncols, name);
}

static int unknown_column(const scd_engine *e, const char *key, const char *name, dwl_error *err)
{
  int line = 0, col = 0;
  const char *file = spec_key_at(e->spec, key, &line, &col);
  dwl_buf have;
  buf_init(&have, 4096);
  for (size_t i = 0; i < e->ncols; i++)
    buf_printf(&have, "%s%s", i ? ", " : "", e->srccols[i].name);
  err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: %s: column '%s' is not in the source (its columns: %s)", file,
          line, col, key, name, have.data ? have.data : "too many to list");
  buf_free(&have);
  return -1;
}

static int resolve_list(scd_engine *e, const char *key, const spec_list *names, size_t **out, size_t *n,
                        dwl_error *err)
{
  *n = 0;
  *out = calloc(names->n ? names->n : 1, sizeof **out);
  if (!*out)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < names->n; i++) {
    ssize_t ix = scd_col_index(e->srccols, e->ncols, names->v[i]);
    if (ix < 0)
      return unknown_column(e, key, names->v[i], err);
    (*out)[(*n)++] = (size_t)ix;
  }
  return 0;
}

static int in_set(const size_t *set, size_t n, size_t ix)
{
  for (size_t i = 0; i < n; i++)
    if (set[i] == ix)
      return 1;
  return 0;
}

int scd_init(scd_engine *e, const dwl_spec *spec, const dwl_column *cols, size_t ncols, dwl_ts run_ts,
             dwl_error *err)
{
  memset(e, 0, sizeof *e);
  e->spec = spec;
  e->srccols = cols;
  e->ncols = ncols;
  e->run_ts = run_ts;
  e->tick_us = 1;
  e->cols.lmd = e->cols.del = -1;
  rowset_init(&e->delta, ncols);
  rowset_init(&e->latekeys, ncols);
  rowset_init(&e->hist, ncols);
  rowset_init(&e->cur, ncols);
  e->nstored = ncols;
  if (keymap_init(&e->km, 1024) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");

  if (resolve_list(e, "load.key", &spec->key, &e->cols.key, &e->cols.nkey, err) != 0)
    return -1;
  if (spec->ignore_nulls == 2 &&
      resolve_list(e, "load.ignore_null_updates", &spec->ignore_null_cols, &e->inu_req, &e->ninu_req, err) != 0)
    return -1;
  if (spec->lmd) {
    e->cols.lmd = scd_col_index(cols, ncols, spec->lmd);
    if (e->cols.lmd < 0)
      return unknown_column(e, "load.lmd", spec->lmd, err);
    e->seq = cols[e->cols.lmd].type == DWL_TYPE_INTEGER;  /* as target_layout's vseq */
  }
  if (spec->deletes == DEL_COLUMN) {
    e->cols.del = scd_col_index(cols, ncols, spec->delete_column);
    if (e->cols.del < 0)
      return unknown_column(e, "load.deletes", spec->delete_column, err);
  }
  if (resolve_list(e, "load.partition", &spec->partition, &e->cols.part, &e->cols.npart, err) != 0)
    return -1;
  if (e->cols.npart > 0 && keymap_init(&e->parts, 64) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (spec->mode == MODE_SCD2) {
    if (resolve_list(e, "load.type1", &spec->type1, &e->cols.t1, &e->cols.nt1, err) != 0)
      return -1;
    if (spec->type2_given)
      return resolve_list(e, "load.type2", &spec->type2, &e->cols.t2, &e->cols.nt2, err);
  }
  /* Default tracked set: every column that is not the key, the lmd (with
   * a composite's tie-breakers), a type 1 column or the delete flag
   * (upsert: every non-key column). */
  e->cols.t2 = calloc(ncols ? ncols : 1, sizeof *e->cols.t2);
  if (!e->cols.t2)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < ncols; i++) {
    if (in_set(e->cols.key, e->cols.nkey, i))
      continue;
    if (spec->mode == MODE_SCD2 && ((ssize_t)i == e->cols.lmd || (ssize_t)i == e->cols.del ||
                                    in_set(e->cols.t1, e->cols.nt1, i) ||
                                    spec_list_index(&spec->lmd_ties, cols[i].name) >= 0))
      continue;
    e->cols.t2[e->cols.nt2++] = i;
  }
  return 0;
}

int scd_fill_column(scd_engine *e, size_t col, dwl_error *err)
{
  if (e->spec->mode != MODE_SCD2 || in_set(e->cols.t1, e->cols.nt1, col))
    return 0;  /* upsert overwrites the row; a listed type 1 column is one already */
  size_t n2 = 0;
  for (size_t i = 0; i < e->cols.nt2; i++)
    if (e->cols.t2[i] != col)
      e->cols.t2[n2++] = e->cols.t2[i];
  if (n2 == e->cols.nt2)
    return 0;  /* not tracked (the lmd, the delete flag, a column load.type2 leaves out) */
  e->cols.nt2 = n2;
  size_t *t1 = realloc(e->cols.t1, (e->cols.nt1 + 1) * sizeof *t1);
  if (!t1)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  t1[e->cols.nt1++] = col;
  e->cols.t1 = t1;
  return 0;
}

void scd_hide(scd_engine *e, size_t nstored)
{
  /* The spec's checks keep key, type1 and type2 off hidden columns; only
   * the default tracked set (upsert's holds the lmd and deletes column)
   * would reach them, and stored versions read them as NULL. */
  size_t n = 0;
  e->nstored = nstored;
  for (size_t i = 0; i < e->cols.nt2; i++)
    if (e->cols.t2[i] < nstored)
      e->cols.t2[n++] = e->cols.t2[i];
  e->cols.nt2 = n;
}

/* What one delta holds (its rows, the key map of its keys' current
 * versions and what the walk built from them): freed by scd_free, and by
 * scd_reset before the next delta (a streamed chunk, a spilled partition)
 * so that the two cannot drift apart. */
static void delta_state_free(scd_engine *e)
{
  keymap_free(&e->km);
  rowset_free(&e->delta);
  rowset_free(&e->latekeys);
  rowset_free(&e->hist);
  rowset_free(&e->cur);
  free(e->sorted);
  free(e->deferred);
  free(e->want);
  e->sorted = NULL;
  e->deferred = NULL;
  e->ndeferred = 0;
  e->want = NULL;
  e->nwant = 0;
  e->want_ready = 0;
  e->ndelete = e->nlive = 0;
  e->fill_later = 0;
}

void scd_free(scd_engine *e)
{
  delta_state_free(e);
  free(e->cols.key);
  free(e->cols.t2);
  free(e->cols.t1);
  free(e->cols.part);
  free(e->truncs);
  keymap_free(&e->parts);
  free(e->hver);
  fill_free(e);
  memset(e, 0, sizeof *e);
}

int scd_forget_current(scd_engine *e, dwl_error *err)
{
  keymap_free(&e->km);
  e->ndelete = e->nlive = 0;
  return keymap_init(&e->km, 1024) != 0 ? err_set(err, DWL_EXIT_FAILED, "out of memory") : 0;
}

int scd_reset(scd_engine *e, dwl_error *err)
{
  delta_state_free(e);
  rowset_init(&e->delta, e->ncols);
  rowset_init(&e->latekeys, e->ncols);
  rowset_init(&e->hist, e->ncols);
  rowset_init(&e->cur, e->ncols);
  if (keymap_init(&e->km, 1024) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  return 0;
}

/* "(id='A1', region=NULL)" for messages; long values are cut. */
void describe_key(const scd_engine *e, const dwl_value *row, char *out, size_t n)
{
  dwl_buf b;
  buf_init(&b, 1024);
  buf_addc(&b, '(');
  for (size_t i = 0; i < e->cols.nkey; i++) {
    const dwl_value *v = &row[e->cols.key[i]];
    buf_printf(&b, "%s%s=", i ? ", " : "", e->srccols[e->cols.key[i]].name);
    if (v->is_null)
      buf_adds(&b, "NULL");
    else {
      char q[300];
      buf_printf(&b, "'%s'", err_quote(q, sizeof q, v->data, v->len, 60));
    }
  }
  buf_addc(&b, ')');
  snprintf(out, n, "%s", b.data ? b.data : "()");
  buf_free(&b);
}

int scd_add_current(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, int tombstone, dwl_error *err)
{
  int created;
  fp128 key = fp_tuple(row, e->cols.key, e->cols.nkey);
  km_entry *m = keymap_put(&e->km, key, &created);
  if (!m)
    return err_set(err, DWL_EXIT_FAILED, "out of memory reading the current dimension");
  if (!created) {
    char k[512];
    describe_key(e, row, k, sizeof k);
    return err_set(err, DWL_EXIT_FAILED,
                   "table %s has more than one current version of key %s; repair the table before loading",
                   e->spec->target_table, k);
  }
  m->fp2 = fp_tuple(row, e->cols.t2, e->cols.nt2);
  m->fp1 = fp_tuple(row, e->cols.t1, e->cols.nt1);
  m->valid_from = valid_from ? valid_from->us : 0;
  m->flags = (uint8_t)(tombstone ? KM_TOMBSTONE : KM_LIVE);
  e->nlive += !tombstone;
  if (e->cols.npart > 0 && !tombstone) {
    km_entry *p = keymap_put(&e->parts, fp_tuple(row, e->cols.part, e->cols.npart), &created);
    if (!p)
      return err_set(err, DWL_EXIT_FAILED, "out of memory reading the current dimension");
    p->valid_from++;
  }
  /* upsert: an older row never overwrites the stored one (its lmd, when
   * the table holds the column; the scan gives it in canonical form: a
   * timestamp, or a sequence's integer). */
  ssize_t l = e->cols.lmd;
  if (e->spec->mode == MODE_UPSERT && l >= 0 && (size_t)l < e->nstored && !row[l].is_null) {
    dwl_ts at;
    if ((e->seq ? ts_parse_seq(row[l].data, row[l].len, &at) : ts_parse(row[l].data, row[l].len, &at)) == 0) {
      m->valid_from = at.us;
      m->flags |= KM_LMD;
    }
  }
  if (e->spec->ignore_nulls && !tombstone) {
    rs_row k = {.key = key};
    return fill_keep_current(e, &k, row, err);
  }
  return 0;
}

int scd_add_gone(scd_engine *e, const dwl_value *row, const dwl_ts *valid_to, dwl_error *err)
{
  int created;
  km_entry *m = keymap_put(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey), &created);
  if (!m)
    return err_set(err, DWL_EXIT_FAILED, "out of memory reading deleted versions");
  int64_t at = end_instant(e->spec, valid_to->us);
  if (created) {
    m->flags = KM_GONE;
    m->valid_from = at;
  } else if ((m->flags & KM_GONE) && at > m->valid_from) {
    m->valid_from = at;  /* a key deleted more than once: the last deletion */
  }
  return 0;
}

int scd_mark_present(scd_engine *e, fp128 key)
{
  km_entry *m = keymap_get(&e->km, key);
  if (m)
    m->flags |= KM_SEEN;
  return e->spec->deletes == DEL_ABSENT && !(m && (m->flags & KM_LIVE));
}

int scd_mark_partition(scd_engine *e, const dwl_value *row, dwl_error *err)
{
  if (e->cols.npart == 0)
    return 0;
  int created;
  km_entry *p = keymap_put(&e->parts, fp_tuple(row, e->cols.part, e->cols.npart), &created);
  if (!p)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  p->flags |= KM_SEEN;
  return 0;
}

/* The spec's truncate value `row` holds in the delete column, or NULL. */
static const char *truncate_value(const scd_engine *e, const dwl_value *row)
{
  const dwl_value *v = e->cols.del < 0 ? NULL : &row[e->cols.del];
  for (size_t i = 0; v && !v->is_null && i < e->spec->truncate_values.n; i++) {
    const char *d = e->spec->truncate_values.v[i];
    if (strlen(d) == v->len && memcmp(d, v->data, v->len) == 0)
      return d;
  }
  return NULL;
}

int scd_add_source(scd_engine *e, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past_checkpoint,
                   dwl_error *err)
{
  const char *tv = truncate_value(e, row);
  if (tv) {
    if (!past_checkpoint || !lmd)
      return 0;  /* applied by an earlier run */
    struct scd_trunc *t = realloc(e->truncs, (e->ntrunc + 1) * sizeof *t);
    if (!t)
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    e->truncs = t;
    /* Kept by lmd, in source order at one lmd (insertion: there are few). */
    size_t at = e->ntrunc++;
    for (; at > 0 && t[at - 1].lmd.us > lmd->us; at--)
      t[at] = t[at - 1];
    t[at] = (struct scd_trunc){*lmd, origin, tv};
    return 0;
  }
  fp128 key = fp_tuple(row, e->cols.key, e->cols.nkey);
  km_entry *m = keymap_get(&e->km, key);
  if (m)
    m->flags |= KM_SEEN;
  if (scd_mark_partition(e, row, err) != 0)
    return -1;
  /* With deletes: absent the extract says which keys exist: a key the
   * table holds as deleted (or not at all) comes back with its row,
   * however old its lmd (1: taken although not past the checkpoint). */
  int revive = !past_checkpoint && e->spec->deletes == DEL_ABSENT && !(m && (m->flags & KM_LIVE));
  if (!past_checkpoint && !revive)
    return 0;
  rs_row *r = rowset_add(&e->delta, row, origin);
  if (!r)
    return err_set(err, DWL_EXIT_FAILED, "out of memory holding the delta (%zu rows)", e->delta.n);
  r->key = key;
  r->fp2 = fp_tuple(r->vals, e->cols.t2, e->cols.nt2);
  r->fp1 = fp_tuple(r->vals, e->cols.t1, e->cols.nt1);
  if (lmd)
    r->lmd = *lmd;
  return revive;
}

int is_delete_row(const scd_engine *e, const dwl_value *row)
{
  if (e->cols.del < 0)
    return 0;
  if (truncate_value(e, row))
    return 1;  /* a truncate's delete row of one key (scd_truncate) */
  const dwl_value *v = &row[e->cols.del];
  if (v->is_null)
    return 0;
  for (size_t i = 0; i < e->spec->delete_values.n; i++) {
    const char *d = e->spec->delete_values.v[i];
    if (strlen(d) == v->len && memcmp(d, v->data, v->len) == 0)
      return 1;
  }
  return 0;
}

/* ---- grouping the delta by key ------------------------------------------- */

static const rowset *sort_rs;

static int cmp_rows(const void *a, const void *b)
{
  const rs_row *x = &sort_rs->rows[*(const size_t *)a], *y = &sort_rs->rows[*(const size_t *)b];
  if (x->key.hi != y->key.hi)
    return x->key.hi < y->key.hi ? -1 : 1;
  if (x->key.lo != y->key.lo)
    return x->key.lo < y->key.lo ? -1 : 1;
  int by_lmd = ts_seq_cmp(&x->lmd, &y->lmd);  /* a composite's tie-breakers too */
  if (by_lmd)
    return by_lmd;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct group {
  size_t first;   /* into the sorted index */
  size_t n;
  size_t minseq;  /* keeps output in source order */
} group;

static int cmp_groups(const void *a, const void *b)
{
  const group *x = a, *y = b;
  return x->minseq < y->minseq ? -1 : x->minseq > y->minseq;
}

/* Sorts idx[n] (indexes into rs) by key, then lmd, then source order. */
void scd_sort_index(const rowset *rs, size_t *idx, size_t n)
{
  sort_rs = rs;
  qsort(idx, n, sizeof *idx, cmp_rows);
  sort_rs = NULL;
}

/* upsert: rows older than the stored row's lmd (late) are left out, by
 * load.late: repair (the stored row is the newer state) and ignore count
 * them, reject sets them aside or fails the run.  Returns how many. */
static ssize_t upsert_late(scd_engine *e, rs_row *const *rows, size_t n, scd_counts *counts, dwl_error *err)
{
  km_entry *cur = keymap_get(&e->km, rows[0]->key);
  if (!cur || !(cur->flags & KM_LIVE) || !(cur->flags & KM_LMD))
    return 0;
  size_t k = 0;
  for (; k < n && rows[k]->lmd.us < cur->valid_from; k++) {
    if (e->spec->late == LATE_REJECT) {
      if (late_reject(e, rows[k], cur->valid_from, counts, err) != 0)
        return -1;
    } else if (e->spec->late == LATE_IGNORE) {
      counts->late_ignored++;
    } else {
      counts->late_repaired++;
    }
  }
  return (ssize_t)k;
}

/* upsert: one row per key; the last row by lmd is the key's new state. */
static int process_upsert(scd_engine *e, rs_row *const *rows, size_t n, const scd_sink *sink, scd_counts *counts,
                          dwl_error *err)
{
  ssize_t late = upsert_late(e, rows, n, counts, err);
  if (late < 0)
    return -1;
  rows += late;
  n -= (size_t)late;
  if (n == 0)
    return 0;
  for (size_t i = 1; i < n; i++) {
    if (ts_seq_cmp(&rows[i - 1]->lmd, &rows[i]->lmd) == 0 && !same_row(e, rows[i - 1], rows[i]))
      return conflict(e, rows[i - 1], rows[i], err);
    counts->unchanged++;  /* superseded within the run */
  }
  const rs_row *r = rows[n - 1];
  km_entry *cur = keymap_get(&e->km, r->key);
  int exists = cur && (cur->flags & KM_LIVE);
  if (is_delete_row(e, r->vals)) {
    if (!exists) {
      counts->unchanged++;
      return 0;
    }
    if (sink->remove(sink->ud, r->vals, err) != 0)
      return -1;
    cur->flags &= (uint8_t)~KM_LIVE;
    counts->deleted++;
    return 0;
  }
  if (!exists) {
    scd_version v = {.vals = r->vals, .t1vals = r->vals, .valid_from = r->lmd, .open = 1, .current = 1};
    if (sink->insert(sink->ud, &v, err) != 0)
      return -1;
    counts->inserted++;
    return 0;
  }
  if (fp_eq(r->fp2, cur->fp2)) {
    counts->unchanged++;
    return 0;
  }
  if (sink->update(sink->ud, r->vals, err) != 0)
    return -1;
  counts->updated++;
  return 0;
}

/* The instant a key's stored history ends: its current version's start,
 * or its deletion.  0 when the target has nothing of the key. */
int64_t history_end(const scd_engine *e, const km_entry *m)
{
  if (!m || !(m->flags & (KM_LIVE | KM_TOMBSTONE | KM_GONE)))
    return 0;
  /* Deletions by absence carry the run's clock, not a source time: rows
   * dated before them keep the rule of skip_before_deletion. */
  if (e->spec->deletes == DEL_ABSENT && (m->flags & (KM_TOMBSTONE | KM_GONE)))
    return 0;
  return m->valid_from;
}

/* A key whose first row is dated before its stored history ends waits for
 * that history (1), else is walked now (0). */
static int defer_late(scd_engine *e, size_t first, rs_row *const *rows, size_t n, dwl_error *err)
{
  km_entry *m = keymap_get(&e->km, rows[0]->key);
  int64_t end = history_end(e, m);
  if (!end || rows[0]->lmd.us >= end)
    return 0;
  scd_span *d = realloc(e->deferred, (e->ndeferred + 1) * sizeof *d);
  if (!d)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  e->deferred = d;
  d[e->ndeferred++] = (scd_span){first, n};
  m->flags |= KM_LATE;
  rs_row *k = rowset_add(&e->latekeys, rows[0]->vals, rows[0]->origin);
  if (!k)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  k->key = rows[0]->key;
  return 1;
}

int scd_apply(scd_engine *e, const scd_sink *sink, scd_counts *counts, dwl_error *err)
{
  size_t n = e->delta.n;
  if (n == 0)
    return 0;
  if (e->spec->ignore_nulls && fill_nulls(e, err) != 0)
    return -1;
  size_t *idx = malloc(n * sizeof *idx);
  group *groups = malloc(n * sizeof *groups);
  rs_row **rows = malloc(n * sizeof *rows);
  int rc = -1;
  if (!idx || !groups || !rows) {
    err_set(err, DWL_EXIT_FAILED, "out of memory sorting the delta");
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  scd_sort_index(&e->delta, idx, n);
  size_t ng = 0;
  for (size_t i = 0; i < n; i++) {
    rs_row *r = &e->delta.rows[idx[i]];
    rows[i] = r;
    if (i == 0 || !fp_eq(rows[i - 1]->key, r->key)) {
      groups[ng].first = i;
      groups[ng].n = 0;
      groups[ng].minseq = r->seq;
      ng++;
    }
    group *g = &groups[ng - 1];
    g->n++;
    if (r->seq < g->minseq)
      g->minseq = r->seq;
  }
  qsort(groups, ng, sizeof *groups, cmp_groups);
  size_t applied = 0;  /* delta rows walked: the apply phase's count */
  for (size_t g = 0; g < ng; g++) {
    progress_step((long long)applied);
    applied += groups[g].n;
    rs_row *const *gr = &rows[groups[g].first];
    if (e->spec->mode == MODE_SCD2) {
      int d = defer_late(e, groups[g].first, gr, groups[g].n, err);
      if (d < 0)
        goto out;
      if (d)
        continue;
    }
    int r = e->spec->mode == MODE_UPSERT ? process_upsert(e, gr, groups[g].n, sink, counts, err)
                                         : process_scd2(e, gr, groups[g].n, sink, counts, err);
    if (r != 0)
      goto out;
  }
  progress_step((long long)applied);
  rc = 0;
  if (e->ndeferred) {
    e->sorted = rows;  /* the waiting keys' rows, for scd_repair */
    rows = NULL;
  }
out:
  free(idx);
  free(groups);
  free(rows);
  return rc;
}

/* For the pushdown engine, which stages rows instead of walking them: the
 * same delete test and key description as here. */
int scd_is_truncate(const scd_engine *e, const dwl_value *row)
{
  return truncate_value(e, row) != NULL;
}

int scd_is_delete(const scd_engine *e, const dwl_value *row)
{
  return is_delete_row(e, row);
}

void scd_describe_key(const scd_engine *e, const dwl_value *row, char *out, size_t n)
{
  describe_key(e, row, out, n);
}
