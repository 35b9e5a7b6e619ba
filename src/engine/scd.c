/* The change engine: SCD type 2 history with type 1 columns, upserts and
 * soft deletes, computed in memory from fingerprints of the dimension's
 * current versions and the rows of the delta.  Keys with late rows (dated
 * before their stored history ends) wait for their full history and are
 * replayed (scd_repair, at the end).  See scd.h for the flow. */
#include "scd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "log.h"

ssize_t scd_col_index(const dwl_column *cols, size_t ncols, const char *name)
{
  for (size_t i = 0; i < ncols; i++)
    if (strcmp(cols[i].name, name) == 0)
      return (ssize_t)i;
  for (size_t i = 0; i < ncols; i++)
    if (strcasecmp(cols[i].name, name) == 0)
      return (ssize_t)i;
  return -1;
}

static int unknown_column(const scd_engine *e, const char *key, const char *name, dwl_error *err)
{
  int line = 0, col = 0;
  spec_key_pos(e->spec, key, &line, &col);
  dwl_buf have;
  buf_init(&have, 4096);
  for (size_t i = 0; i < e->ncols; i++)
    buf_printf(&have, "%s%s", i ? ", " : "", e->srccols[i].name);
  err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: %s: column '%s' is not in the source (its columns: %s)", e->spec->path,
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
  if (keymap_init(&e->km, 1024) != 0)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");

  if (resolve_list(e, "load.key", &spec->key, &e->cols.key, &e->cols.nkey, err) != 0)
    return -1;
  if (spec->lmd) {
    e->cols.lmd = scd_col_index(cols, ncols, spec->lmd);
    if (e->cols.lmd < 0)
      return unknown_column(e, "load.lmd", spec->lmd, err);
  }
  if (spec->deletes == DEL_COLUMN) {
    e->cols.del = scd_col_index(cols, ncols, spec->delete_column);
    if (e->cols.del < 0)
      return unknown_column(e, "load.deletes", spec->delete_column, err);
  }
  if (spec->mode == MODE_SCD2) {
    if (resolve_list(e, "load.type1", &spec->type1, &e->cols.t1, &e->cols.nt1, err) != 0)
      return -1;
    if (spec->type2_given)
      return resolve_list(e, "load.type2", &spec->type2, &e->cols.t2, &e->cols.nt2, err);
  }
  /* Default tracked set: every column that is not the key, the lmd, a
   * type 1 column or the delete flag (upsert: every non-key column). */
  e->cols.t2 = calloc(ncols ? ncols : 1, sizeof *e->cols.t2);
  if (!e->cols.t2)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < ncols; i++) {
    if (in_set(e->cols.key, e->cols.nkey, i))
      continue;
    if (spec->mode == MODE_SCD2 && ((ssize_t)i == e->cols.lmd || (ssize_t)i == e->cols.del ||
                                    in_set(e->cols.t1, e->cols.nt1, i)))
      continue;
    e->cols.t2[e->cols.nt2++] = i;
  }
  return 0;
}

void scd_free(scd_engine *e)
{
  free(e->cols.key);
  free(e->cols.t2);
  free(e->cols.t1);
  keymap_free(&e->km);
  rowset_free(&e->delta);
  rowset_free(&e->latekeys);
  rowset_free(&e->hist);
  free(e->sorted);
  free(e->deferred);
  free(e->hver);
  memset(e, 0, sizeof *e);
}

/* "(id='A1', region=NULL)" for messages; long values are cut. */
static void describe_key(const scd_engine *e, const dwl_value *row, char *out, size_t n)
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
  return 0;
}

/* The instant a version closed at valid_to ended: the inverse of the close
 * rule. */
static int64_t end_instant(const dwl_spec *spec, int64_t valid_to)
{
  switch (spec->close) {
  case CLOSE_DAY_BEFORE:
    return valid_to + DWL_US_PER_DAY;
  case CLOSE_SECOND_BEFORE:
    return valid_to + DWL_US_PER_SEC;
  default:
    return valid_to;
  }
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

void scd_mark_present(scd_engine *e, const dwl_value *row)
{
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  if (m)
    m->flags |= KM_SEEN;
}

int scd_add_source(scd_engine *e, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int past_checkpoint,
                   dwl_error *err)
{
  fp128 key = fp_tuple(row, e->cols.key, e->cols.nkey);
  km_entry *m = keymap_get(&e->km, key);
  if (m)
    m->flags |= KM_SEEN;
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

/* How long after its start a version can end without its valid_to,
 * after the close rule, falling before its valid_from. */
static int64_t close_gap(const dwl_spec *spec)
{
  return end_instant(spec, 0);
}

dwl_ts scd_close_at(const dwl_spec *spec, dwl_ts next)
{
  switch (spec->close) {
  case CLOSE_DAY_BEFORE:
    return ts_add_us(next, -DWL_US_PER_DAY);
  case CLOSE_SECOND_BEFORE:
    return ts_add_us(next, -DWL_US_PER_SEC);
  default:
    return next;
  }
}

static int is_delete_row(const scd_engine *e, const dwl_value *row)
{
  if (e->cols.del < 0)
    return 0;
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
  if (x->lmd.us != y->lmd.us)
    return x->lmd.us < y->lmd.us ? -1 : 1;
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

/* ---- one key's rows ---------------------------------------------------- */

/* H_DB_REPL: the stored current version, replaced in place by a row less
 * than the close step after its start (written by one reshape, as a
 * pending version is by one insert). */
enum head_kind { H_NONE, H_DB_LIVE, H_DB_TOMB, H_PEND, H_PEND_TOMB, H_DB_REPL };

typedef struct walk {
  scd_engine *e;
  const scd_sink *sink;
  scd_counts *counts;
  int kind;
  fp128 fp2, fp1;
  dwl_ts vf;
  int64_t floor;         /* after an expire-style deletion: its instant */
  const rs_row *start;   /* pending version: the row that started it */
  const rs_row *t1row;   /* pending version: the row its type 1 values come from */
  const rs_row *last;    /* last non-delete row, for type1_scope: all */
  int scope_all;
  int tombstones;
  long long t1_only;     /* rows that only changed type 1 values (scope all) */
} walk;

static int emit_pending(walk *w, int open, dwl_ts end, int deleted, dwl_error *err)
{
  scd_version v = {
    .vals = w->start->vals,
    .t1vals = (w->scope_all && w->last ? w->last : w->t1row)->vals,
    .valid_from = w->vf,
    .open = open,
    .valid_to = open ? w->vf : scd_close_at(w->e->spec, end),
    .current = open,
    .deleted = deleted,
    .tombstone = w->kind == H_PEND_TOMB,
  };
  if (w->kind == H_DB_REPL)
    return w->sink->reshape(w->sink->ud, w->start->vals, &w->vf, 0, &v, err);
  if (w->sink->insert(w->sink->ud, &v, err) != 0)
    return -1;
  w->counts->inserted++;
  return 0;
}

/* Versions exist at the close rule's granularity: the earliest instant the
 * head version (started at w->vf) can end at without its valid_to falling
 * before its valid_from, and so the earliest the next version can start
 * at (at_next: any instant; two rows at one instant are handled apart). */
static int64_t head_end(const walk *w)
{
  return w->vf.us + close_gap(w->e->spec);
}

/* The instant a deletion or revival by row r takes effect: its lmd, or
 * the head version's earliest end when r comes within the close step. */
static dwl_ts effect_at(const walk *w, const rs_row *r)
{
  dwl_ts at = r->lmd;
  int64_t end = w->kind == H_NONE ? w->floor : head_end(w);
  if (at.us < end)
    at.us = end;
  return at;
}

static void start_pending(walk *w, const rs_row *r, int tomb, dwl_ts at)
{
  w->kind = tomb ? H_PEND_TOMB : H_PEND;
  w->start = w->t1row = r;
  w->vf = at;
  w->fp2 = r->fp2;
  w->fp1 = r->fp1;
}

/* Closes whatever version is the key's latest at `at` (a new version or a
 * deletion starts then). */
static int close_head(walk *w, const rs_row *r, dwl_ts at, int deleted, dwl_error *err)
{
  dwl_ts vt = scd_close_at(w->e->spec, at);
  switch (w->kind) {
  case H_DB_LIVE:
  case H_DB_TOMB:
    return w->sink->expire(w->sink->ud, r->vals, &w->vf, &vt, deleted || w->kind == H_DB_TOMB, err);
  case H_PEND:
  case H_PEND_TOMB:
  case H_DB_REPL:
    return emit_pending(w, 0, at, deleted || w->kind == H_PEND_TOMB, err);
  default:
    return 0;
  }
}

static int walk_delete(walk *w, const rs_row *r, dwl_error *err)
{
  if (w->kind != H_DB_LIVE && w->kind != H_PEND && w->kind != H_DB_REPL) {
    w->counts->unchanged++;  /* already deleted, or never known */
    return 0;
  }
  /* With tombstones the closed version is an ordinary predecessor; the
   * tombstone carries the deleted flag (as dbt's hard_deletes=new_record).
   * A deletion within the close step of the version's start closes it at
   * its valid_from (a version of one step), and takes effect then. */
  dwl_ts at = effect_at(w, r);
  if (close_head(w, r, at, !w->tombstones, err) != 0)
    return -1;
  w->counts->deleted++;
  if (w->tombstones) {
    start_pending(w, r, 1, at);
  } else {
    w->kind = H_NONE;
    w->floor = at.us;
  }
  return 0;
}

static int walk_row(walk *w, const rs_row *r, dwl_error *err)
{
  switch (w->kind) {
  case H_NONE:
    start_pending(w, r, 0, effect_at(w, r));
    return 0;
  case H_DB_TOMB:
  case H_PEND_TOMB: {
    /* Revival: the tombstone ends where the new version starts, one
     * close step after the tombstone's start at the earliest. */
    dwl_ts at = effect_at(w, r);
    if (close_head(w, r, at, 1, err) != 0)
      return -1;
    if (w->kind == H_DB_TOMB)
      w->counts->expired++;
    start_pending(w, r, 0, at);
    return 0;
  }
  default:
    break;
  }
  if (!fp_eq(r->fp2, w->fp2) && r->lmd.us < head_end(w)) {
    /* A change within the close step of the version's start replaces the
     * version: its values, with the same valid_from (and surrogate key). */
    if (w->kind == H_DB_LIVE)
      w->counts->updated++;  /* the stored version, rewritten in place */
    else
      w->counts->unchanged++;  /* the row it replaces opens no version */
    w->kind = w->kind == H_PEND ? H_PEND : H_DB_REPL;
    w->start = w->t1row = r;
    w->fp2 = r->fp2;
    w->fp1 = r->fp1;
    return 0;
  }
  if (!fp_eq(r->fp2, w->fp2)) {
    if (close_head(w, r, r->lmd, 0, err) != 0)
      return -1;
    if (w->kind == H_DB_LIVE || w->kind == H_DB_REPL)
      w->counts->expired++;
    start_pending(w, r, 0, r->lmd);
    return 0;
  }
  if (fp_eq(r->fp1, w->fp1)) {
    w->counts->unchanged++;
    return 0;
  }
  w->fp1 = r->fp1;
  if (w->kind == H_PEND || w->kind == H_DB_REPL) {
    w->t1row = r;  /* the version is not written yet: carry the new values */
    w->counts->unchanged++;
    return 0;
  }
  if (w->scope_all) {
    w->t1_only++;  /* one update of every version, after the walk */
    return 0;
  }
  if (w->sink->type1(w->sink->ud, r->vals, &w->vf, 0, err) != 0)
    return -1;
  w->counts->updated++;
  return 0;
}

#define ON(e) ((e)->origin_name ? (e)->origin_name : "source")

/* Rows of one key with the same lmd: identical ones count once, others are
 * a conflict.  Compared only here, where it happens, not per row. */
static int same_row(const scd_engine *e, const rs_row *a, const rs_row *b)
{
  return fp_eq(fp_values(a->vals, e->ncols), fp_values(b->vals, e->ncols));
}

static int conflict(const scd_engine *e, const rs_row *a, const rs_row *b, dwl_error *err)
{
  char k[512], when[32];
  describe_key(e, b->vals, k, sizeof k);
  ts_format(&b->lmd, when);
  if (e->cols.lmd < 0)
    return err_set(err, DWL_EXIT_FAILED,
                   "key %s has two different source rows (%s:%llu and %s:%llu) and no lmd to order them; "
                   "fix the source, dwload does not pick one",
                   k, ON(e), (unsigned long long)a->origin, ON(e), (unsigned long long)b->origin);
  return err_set(err, DWL_EXIT_FAILED,
                 "key %s has two different source rows with the same lmd %s (%s:%llu and %s:%llu); "
                 "fix the source or its lmd, dwload does not pick one",
                 k, when, ON(e), (unsigned long long)a->origin, ON(e), (unsigned long long)b->origin);
}

/* A row at the very instant the key's current version started, with other
 * type 2 values: two versions cannot start at one time. */
static int same_start(const scd_engine *e, const rs_row *r, dwl_error *err)
{
  char k[512], when[32];
  describe_key(e, r->vals, k, sizeof k);
  ts_format(&r->lmd, when);
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%llu: key %s has lmd %s, the same as a stored version of the key, but different "
                 "type 2 values; two versions cannot start at the same time",
                 ON(e), (unsigned long long)r->origin, k, when);
}

/* Rows of a deleted key dated before its deletion: the deletion was
 * stamped with a run's clock, later than their lmd.  Only the last of them
 * matters (the key's state when it was seen again); it takes effect at the
 * deletion time, so the history has neither overlap nor a version ending
 * before it starts.  Returns the index of the first row to walk. */
static size_t skip_before_deletion(rs_row *const *rows, size_t n, int64_t deleted_at, scd_counts *counts)
{
  size_t pre = 0;
  while (pre < n && rows[pre]->lmd.us < deleted_at)
    pre++;
  if (pre == 0)
    return 0;
  if (pre < n && rows[pre]->lmd.us == deleted_at) {
    counts->unchanged += (long long)pre;  /* a row at the deletion time supersedes them */
    return pre;
  }
  counts->unchanged += (long long)(pre - 1);
  rows[pre - 1]->lmd.us = deleted_at;
  rows[pre - 1]->lmd.date_only = 0;
  return pre - 1;
}

static int process_scd2(scd_engine *e, rs_row *const *rows, size_t n, const scd_sink *sink, scd_counts *counts,
                        dwl_error *err)
{
  km_entry *cur = keymap_get(&e->km, rows[0]->key);
  walk w = {
    .e = e,
    .sink = sink,
    .counts = counts,
    .kind = H_NONE,
    .scope_all = e->spec->type1_scope == T1_ALL && e->cols.nt1 > 0,
    .tombstones = e->spec->delete_style == DELSTYLE_TOMBSTONE,
  };
  size_t first = 0;
  if (cur && (cur->flags & (KM_LIVE | KM_TOMBSTONE))) {
    w.kind = (cur->flags & KM_LIVE) ? H_DB_LIVE : H_DB_TOMB;
    w.fp2 = cur->fp2;
    w.fp1 = cur->fp1;
    w.vf.us = cur->valid_from;
  }
  /* (a tombstone stamped by absence at t can end no earlier than the close
   * rule allows: a revival starts then at the earliest) */
  if (cur && (cur->flags & (KM_TOMBSTONE | KM_GONE))) {
    int64_t gap = (cur->flags & KM_TOMBSTONE) && e->spec->deletes == DEL_ABSENT ? close_gap(e->spec) : 0;
    first = skip_before_deletion(rows, n, cur->valid_from + gap, counts);
  }
  for (size_t i = n; i-- > first;)
    if (!is_delete_row(e, rows[i]->vals)) {
      w.last = rows[i];
      break;
    }
  for (size_t i = first; i < n; i++) {
    const rs_row *r = rows[i];
    if (i > first && rows[i - 1]->lmd.us == r->lmd.us) {
      if (!same_row(e, rows[i - 1], r))
        return conflict(e, rows[i - 1], r, err);
      counts->unchanged++;  /* an identical duplicate counts once */
      continue;
    }
    int del = is_delete_row(e, r->vals);
    /* (rows dated before the current version wait for scd_repair) */
    if (w.kind == H_DB_LIVE && r->lmd.us == w.vf.us && !del && !fp_eq(r->fp2, w.fp2))
      return same_start(e, r, err);
    if (del ? walk_delete(&w, r, err) : walk_row(&w, r, err))
      return -1;
  }
  if (w.kind == H_PEND || w.kind == H_PEND_TOMB || w.kind == H_DB_REPL) {
    dwl_ts none = {0, 0};
    if (emit_pending(&w, 1, none, w.kind == H_PEND_TOMB, err) != 0)
      return -1;
  }
  /* A key deleted without a tombstone has stored versions too, whose type 1
   * values the key map does not know: a revival updates them. */
  if (w.scope_all && cur && (cur->flags & (KM_LIVE | KM_TOMBSTONE | KM_GONE)) && w.last &&
      ((cur->flags & KM_GONE) || !fp_eq(w.last->fp1, cur->fp1))) {
    if (sink->type1(sink->ud, w.last->vals, NULL, 1, err) != 0)
      return -1;
    counts->updated++;
    counts->unchanged += w.t1_only > 0 ? w.t1_only - 1 : 0;
  } else {
    counts->unchanged += w.t1_only;
  }
  return 0;
}

/* upsert: one row per key; the last row by lmd is the key's new state. */
static int process_upsert(scd_engine *e, rs_row *const *rows, size_t n, const scd_sink *sink, scd_counts *counts,
                          dwl_error *err)
{
  for (size_t i = 1; i < n; i++) {
    if (rows[i - 1]->lmd.us == rows[i]->lmd.us && !same_row(e, rows[i - 1], rows[i]))
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
static int64_t history_end(const scd_engine *e, const km_entry *m)
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
  sort_rs = &e->delta;
  qsort(idx, n, sizeof *idx, cmp_rows);
  sort_rs = NULL;
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
  for (size_t g = 0; g < ng; g++) {
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

size_t scd_mark_absent(scd_engine *e)
{
  km_entry *m;
  size_t n = 0;
  for (size_t it = 0; (m = keymap_next(&e->km, &it));) {
    if ((m->flags & KM_LIVE) && !(m->flags & KM_SEEN)) {
      m->flags |= KM_DELETE;
      n++;
    }
  }
  e->ndelete = n;
  return n;
}

int scd_marked(scd_engine *e, const dwl_value *row)
{
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  return m && (m->flags & KM_DELETE);
}

int scd_delete_absent(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const scd_sink *sink,
                      scd_counts *counts, dwl_error *err)
{
  km_entry *m = keymap_get(&e->km, fp_tuple(row, e->cols.key, e->cols.nkey));
  if (!m || !(m->flags & KM_DELETE))
    return 0;
  m->flags &= (uint8_t)~(KM_DELETE | KM_LIVE);
  counts->deleted++;
  if (e->spec->mode == MODE_UPSERT)
    return sink->remove(sink->ud, row, err) != 0 ? -1 : 1;
  int tomb = e->spec->delete_style == DELSTYLE_TOMBSTONE;
  /* Stamped with the run's clock, but never at or before the current
   * version's start (a source clock ahead of ours, an lmd with a fraction
   * in this second): then the least step after it that the close rule can
   * end it at, so no interval is negative, and a tombstone never starts
   * when the version it ends did (which keeps hash surrogate keys apart). */
  dwl_ts at = e->run_ts;
  int64_t step = close_gap(e->spec) > e->tick_us ? close_gap(e->spec) : e->tick_us;
  if (valid_from && at.us < valid_from->us + step)
    at.us = valid_from->us + step;
  dwl_ts vt = scd_close_at(e->spec, at);
  if (sink->expire(sink->ud, row, valid_from, &vt, !tomb, err) != 0)
    return -1;
  if (tomb) {
    scd_version v = {
      .vals = row, .t1vals = row, .valid_from = at, .open = 1, .current = 1, .deleted = 1, .tombstone = 1};
    if (sink->insert(sink->ud, &v, err) != 0)
      return -1;
    counts->inserted++;
  }
  return 1;
}

/* ---- late rows: history repair ---------------------------------------------
 *
 * A key whose rows start before its stored history ends waited in
 * scd_apply; run.c then read every stored version of such keys (and only
 * of them) into e->hist.  The key's history is rebuilt by replaying, in lmd
 * order, its stored versions as events (a version's start; its deletion,
 * where it ended without a successor or as a tombstone) together with the
 * run's rows, through the same walk as any run; the versions that come out
 * are matched to the stored ones (the same start, or a start the new
 * version absorbed), and only the differences are written: reshape,
 * drop, insert.  Replaying whole histories is what keeps a splice, a
 * merge with a neighbour, a late deletion and a revival consistent with a
 * load of the whole stream in lmd order: it is the same code. */

size_t scd_deferred(const scd_engine *e)
{
  return e->ndeferred;
}

int scd_add_history(scd_engine *e, const dwl_value *row, const dwl_ts *valid_from, const dwl_ts *valid_to,
                    int deleted, dwl_error *err)
{
  fp128 key = fp_tuple(row, e->cols.key, e->cols.nkey);
  km_entry *m = keymap_get(&e->km, key);
  if (!m || !(m->flags & KM_LATE))
    return 0;
  if (e->hist.n == e->hver_cap) {
    size_t cap = e->hver_cap ? e->hver_cap * 2 : 256;
    scd_hver *h = realloc(e->hver, cap * sizeof *h);
    if (!h)
      return err_set(err, DWL_EXIT_FAILED, "out of memory reading the history of keys with late rows");
    e->hver = h;
    e->hver_cap = cap;
  }
  rs_row *r = rowset_add(&e->hist, row, 0);
  if (!r)
    return err_set(err, DWL_EXIT_FAILED, "out of memory reading the history of keys with late rows");
  r->key = key;
  r->fp2 = fp_tuple(r->vals, e->cols.t2, e->cols.nt2);
  r->fp1 = fp_tuple(r->vals, e->cols.t1, e->cols.nt1);
  r->lmd = *valid_from;
  e->hver[r->seq] = (scd_hver){valid_to ? valid_to->us : 0, (uint8_t)(valid_to == NULL), (uint8_t)(deleted != 0)};
  return 0;
}

/* One event of a key's replayed history. */
typedef struct hev {
  rs_row r;     /* a copy whose lmd is the event's time */
  int del;
  int syn;      /* from the stored history, not the source */
  int late;     /* a source row dated before the stored history ends */
  int skip;
} hev;

static int cmp_hev(const void *a, const void *b)
{
  const hev *x = a, *y = b;
  if (x->r.lmd.us != y->r.lmd.us)
    return x->r.lmd.us < y->r.lmd.us ? -1 : 1;
  if (x->syn != y->syn)
    return x->syn ? -1 : 1;  /* the stored state first, the source's rows over it */
  if (x->syn && x->del != y->del)
    return x->del ? -1 : 1;  /* deleted, then revived at the same instant */
  return x->r.seq < y->r.seq ? -1 : x->r.seq > y->r.seq;
}

/* The key's stored versions, sorted by valid_from: indexes into hist. */
typedef struct hkey {
  scd_engine *e;
  const size_t *o;
  size_t no;
} hkey;

static const rs_row *hrow(const hkey *h, size_t i)
{
  return &h->e->hist.rows[h->o[i]];
}

static const scd_hver *hmeta(const hkey *h, size_t i)
{
  return &h->e->hver[h->o[i]];
}

static int is_tomb(const scd_engine *e, const scd_hver *m)
{
  return e->spec->delete_style == DELSTYLE_TOMBSTONE && m->deleted;
}

/* Is the row a no-op against the stored history: the key live at its lmd
 * with the same type 2 values, or a deletion while the key was deleted?
 * (type 1 values do not make a row late: they are overwritten anyway.) */
static int late_noop(const hkey *h, const hev *ev)
{
  ssize_t c = -1;
  for (size_t i = 0; i < h->no && hrow(h, i)->lmd.us <= ev->r.lmd.us; i++) {
    const scd_hver *m = hmeta(h, i);
    if (m->open || end_instant(h->e->spec, m->vt) > ev->r.lmd.us)
      c = (ssize_t)i;
  }
  int live = c >= 0 && !is_tomb(h->e, hmeta(h, (size_t)c));
  if (ev->del)
    return !live;
  return live && fp_eq(ev->r.fp2, hrow(h, (size_t)c)->fp2);
}

/* load.late: reject.  With load.max_rejects the row goes to the run's
 * rejects (returns 0: set aside); without, or one too many, it fails the
 * run (-1), and nothing is written. */
static int late_reject(const scd_engine *e, const rs_row *r, int64_t end, scd_counts *counts, dwl_error *err)
{
  char k[512], when[32], upto[32], why[1024];
  dwl_ts t = {end, 0};
  counts->late_rejected++;
  describe_key(e, r->vals, k, sizeof k);
  ts_format(&r->lmd, when);
  ts_format(&t, upto);
  snprintf(why, sizeof why, "key %s has lmd %s, before the key's stored history ends (%s): a late row, and "
           "load.late is reject", k, when, upto);
  if (e->reject && e->spec->max_rejects > 0)
    return e->reject(e->reject_ud, r, why, err);
  return err_set(err, DWL_EXIT_FAILED, "%s:%llu: %s", ON(e), (unsigned long long)r->origin, why);
}

/* Two events of one key at one instant that cannot both hold. */
static int hist_conflict(const scd_engine *e, const hev *src, const hev *stored, dwl_error *err)
{
  char k[512], when[32];
  describe_key(e, src->r.vals, k, sizeof k);
  ts_format(&src->r.lmd, when);
  if (!src->del && !stored->del)
    return same_start(e, &src->r, err);
  return err_set(err, DWL_EXIT_FAILED,
                 "%s:%llu: key %s has lmd %s, the time the key was %s in the stored history; a deletion and a "
                 "version cannot happen at the same time",
                 ON(e), (unsigned long long)src->r.origin, k, when, stored->del ? "deleted" : "changed");
}

/* The versions a replay produces. */
typedef struct capture {
  scd_version *v;
  size_t n, cap;
} capture;

static int cap_insert(void *ud, const scd_version *v, dwl_error *err)
{
  capture *c = ud;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    scd_version *nv = realloc(c->v, cap * sizeof *nv);
    if (!nv)
      return err_set(err, DWL_EXIT_FAILED, "out of memory replaying a key's history");
    c->v = nv;
    c->cap = cap;
  }
  c->v[c->n++] = *v;
  return 0;
}

/* Builds the key's events: stored versions, then the source's rows,
 * classified.  Returns the number of events, or -1. */
static ssize_t build_events(hkey *h, rs_row *const *rows, size_t n, int64_t end, hev *ev, scd_counts *counts,
                            dwl_error *err)
{
  scd_engine *e = h->e;
  int tombstones = e->spec->delete_style == DELSTYLE_TOMBSTONE;
  size_t nev = 0;
  int64_t lastdel = INT64_MIN;
  for (size_t i = 0; i < h->no; i++) {
    const scd_hver *m = hmeta(h, i);
    ev[nev++] = (hev){.r = *hrow(h, i), .del = is_tomb(e, m), .syn = 1};
    if (ev[nev - 1].del && hrow(h, i)->lmd.us > lastdel)
      lastdel = hrow(h, i)->lmd.us;
    if (tombstones || m->open)
      continue;
    /* Expire style: a version that ended without its successor starting
     * then was deleted then (the deleted flag says so where there is one). */
    int64_t at = end_instant(e->spec, m->vt);
    int gone = e->spec->deleted ? m->deleted : i + 1 == h->no || hrow(h, i + 1)->lmd.us != at;
    if (!gone)
      continue;
    ev[nev] = (hev){.r = *hrow(h, i), .del = 1, .syn = 1};
    ev[nev++].r.lmd = (dwl_ts){at, 0};
    if (at > lastdel)
      lastdel = at;
  }
  int fail = 0;
  for (size_t i = 0; i < n; i++) {
    hev x = {.r = *rows[i], .del = is_delete_row(e, rows[i]->vals), .late = rows[i]->lmd.us < end};
    if (x.late) {
      if (e->spec->deletes == DEL_ABSENT && x.r.lmd.us < lastdel) {
        /* A deletion by absence happened at a run's clock: what came
         * before it cannot be ordered against it. */
        counts->late_ignored++;
        continue;
      }
      if (late_noop(h, &x)) {
        counts->unchanged++;
        if (e->spec->late != LATE_REPAIR)
          continue;
        x.late = 2;  /* counted; replayed, as its type 1 values may count */
      } else if (e->spec->late == LATE_REJECT) {
        if (late_reject(e, rows[i], end, counts, err) != 0)
          fail = 1;
        continue;
      } else if (e->spec->late == LATE_IGNORE) {
        counts->late_ignored++;
        continue;
      } else {
        counts->late_repaired++;
      }
    }
    ev[nev++] = x;
  }
  return fail ? -1 : (ssize_t)nev;
}

/* 1 when the stored version `syn` carries the values of a source row less
 * than one close step after its start (from ev[from] on): a version that
 * row replaced (see walk_row), which the replay makes again. */
static int replaced_within(const scd_engine *e, const hev *ev, size_t nev, size_t from, const hev *syn)
{
  int64_t end = syn->r.lmd.us + close_gap(e->spec);
  for (size_t k = from; k < nev && ev[k].r.lmd.us < end; k++)
    if (!ev[k].syn && !ev[k].del && !syn->del && fp_eq(ev[k].r.fp2, syn->r.fp2))
      return 1;
  return 0;
}

/* Marks events that another at the same instant supersedes; fails on a
 * conflict.  Counts superseded source rows that were not late. */
static int settle_instants(const scd_engine *e, hev *ev, size_t nev, scd_counts *counts, dwl_error *err)
{
  for (size_t i = 0, j; i < nev; i = j) {
    for (j = i + 1; j < nev && ev[j].r.lmd.us == ev[i].r.lmd.us;)
      j++;
    ssize_t d = -1;
    for (size_t k = i; k < j; k++) {
      if (ev[k].syn)
        continue;
      if (d < 0) {
        d = (ssize_t)k;
        continue;
      }
      if (!same_row(e, &ev[d].r, &ev[k].r))
        return conflict(e, &ev[d].r, &ev[k].r, err);
      ev[k].skip = 1;
      if (!ev[k].late)
        counts->unchanged++;  /* an identical duplicate counts once */
    }
    if (d < 0)
      continue;
    for (size_t k = i; k < j; k++) {
      if (!ev[k].syn)
        continue;
      /* The source's row is the stored event, or two different things
       * happened at one instant, as with two source rows. */
      if ((ev[k].del != ev[d].del || (!ev[d].del && !fp_eq(ev[k].r.fp2, ev[d].r.fp2))) &&
          !replaced_within(e, ev, nev, j, &ev[k]))
        return hist_conflict(e, &ev[d], &ev[k], err);
      ev[k].skip = 1;
    }
  }
  return 0;
}

/* One source layout row of version v: type 1 columns from t1vals. */
static void version_row(const scd_engine *e, const scd_version *v, dwl_value *out)
{
  for (size_t i = 0; i < e->ncols; i++)
    out[i] = v->vals[i];
  for (size_t i = 0; i < e->cols.nt1; i++)
    out[e->cols.t1[i]] = v->t1vals[e->cols.t1[i]];
}

/* Writes the differences between the stored versions and the replayed
 * ones.  A replayed version takes over the stored version that started at
 * the same time, else the earliest one it absorbed (same values, started
 * within it): that one is reshaped, keeping its surrogate key. */
static int write_diff(hkey *h, const capture *nv, const scd_sink *sink, scd_counts *counts, dwl_error *err)
{
  scd_engine *e = h->e;
  unsigned char *taken = calloc(h->no ? h->no : 1, 1);
  ssize_t *match = calloc(nv->n ? nv->n : 1, sizeof *match);
  dwl_value *row = calloc(e->ncols ? e->ncols : 1, sizeof *row);
  int rc = -1;
  if (!taken || !match || !row) {
    err_set(err, DWL_EXIT_FAILED, "out of memory repairing a key's history");
    goto out;
  }
  for (size_t k = 0; k < nv->n; k++) {
    const scd_version *v = &nv->v[k];
    int64_t vend = v->open ? INT64_MAX : end_instant(e->spec, v->valid_to.us);
    fp128 fp2 = fp_tuple(v->vals, e->cols.t2, e->cols.nt2);
    match[k] = -1;
    for (int pass = 0; pass < 2 && match[k] < 0; pass++)
      for (size_t i = 0; i < h->no; i++) {
        const rs_row *o = hrow(h, i);
        int64_t at = o->lmd.us;
        if (taken[i] || is_tomb(e, hmeta(h, i)) != v->tombstone || (!v->tombstone && !fp_eq(o->fp2, fp2)))
          continue;
        if (pass == 0 ? at == v->valid_from.us : (at > v->valid_from.us && at < vend)) {
          match[k] = (ssize_t)i;
          taken[i] = 1;
          break;
        }
      }
  }
  for (size_t i = 0; i < h->no; i++) {
    if (taken[i])
      continue;
    const scd_hver *m = hmeta(h, i);
    if (sink->drop(sink->ud, hrow(h, i)->vals, &hrow(h, i)->lmd, m->deleted, err) != 0)
      goto out;
    if (m->open)
      counts->expired++;
    else
      counts->updated++;
  }
  for (size_t k = 0; k < nv->n; k++) {
    const scd_version *v = &nv->v[k];
    if (match[k] < 0)
      continue;
    const rs_row *o = hrow(h, (size_t)match[k]);
    const scd_hver *m = hmeta(h, (size_t)match[k]);
    version_row(e, v, row);
    if (o->lmd.us == v->valid_from.us && m->open == v->open && (v->open || m->vt == v->valid_to.us) &&
        (m->deleted == v->deleted || !e->spec->deleted) &&  /* (no column: the flag is not stored) */
        fp_eq(fp_values(o->vals, e->ncols), fp_values(row, e->ncols)))
      continue;
    if (sink->reshape(sink->ud, o->vals, &o->lmd, m->deleted, v, err) != 0)
      goto out;
    if (m->open && !v->open)
      counts->expired++;
    else
      counts->updated++;
  }
  for (size_t k = 0; k < nv->n; k++) {
    if (match[k] >= 0)
      continue;
    if (sink->insert(sink->ud, &nv->v[k], err) != 0)
      goto out;
    counts->inserted++;
  }
  rc = 0;
out:
  free(taken);
  free(match);
  free(row);
  return rc;
}

static int cap_expire(void *ud, const dwl_value *keyrow, const dwl_ts *vf, const dwl_ts *vt, int deleted,
                      dwl_error *err)
{
  (void)ud, (void)keyrow, (void)vf, (void)vt, (void)deleted;
  return err_set(err, DWL_EXIT_FAILED, "internal error: a replayed history expired a stored version");
}

static int cap_type1(void *ud, const dwl_value *row, const dwl_ts *vf, int all, dwl_error *err)
{
  (void)ud, (void)row, (void)vf, (void)all;
  return err_set(err, DWL_EXIT_FAILED, "internal error: a replayed history updated a stored version");
}

/* Replays the key's events from nothing and writes what differs. */
static int replay_key(hkey *h, hev *ev, size_t nev, const scd_sink *sink, scd_counts *counts, dwl_error *err)
{
  scd_engine *e = h->e;
  capture cap = {0};
  scd_sink cs = {.ud = &cap, .insert = cap_insert, .expire = cap_expire, .type1 = cap_type1};
  scd_counts scratch = {0};
  walk w = {
    .e = e,
    .sink = &cs,
    .counts = &scratch,
    .kind = H_NONE,
    .scope_all = e->spec->type1_scope == T1_ALL && e->cols.nt1 > 0,
    .tombstones = e->spec->delete_style == DELSTYLE_TOMBSTONE,
  };
  int rc = -1;
  for (size_t i = nev; i-- > 0;)
    if (!ev[i].skip && !ev[i].del) {
      w.last = &ev[i].r;
      break;
    }
  for (size_t i = 0; i < nev; i++) {
    if (ev[i].skip)
      continue;
    scd_counts before = scratch;
    if (ev[i].del ? walk_delete(&w, &ev[i].r, err) : walk_row(&w, &ev[i].r, err))
      goto out;
    /* Source rows past the stored history: unchanged when the stored
     * history already says what they say (rows reread by load.lookback). */
    if (!ev[i].syn && !ev[i].late) {
      /* One outcome per row: a delete row reread while the stored history
       * has the key deleted then deletes nothing. */
      if (scratch.unchanged > before.unchanged || late_noop(h, &ev[i]))
        counts->unchanged++;
      else
        counts->deleted += scratch.deleted - before.deleted;
    }
  }
  if (w.kind == H_PEND || w.kind == H_PEND_TOMB) {
    dwl_ts none = {0, 0};
    if (emit_pending(&w, 1, none, w.kind == H_PEND_TOMB, err) != 0)
      goto out;
  }
  rc = write_diff(h, &cap, sink, counts, err);
out:
  free(cap.v);
  return rc;
}

/* One waiting key: its rows[n] and its stored versions. */
static int repair_key(hkey *h, rs_row *const *rows, size_t n, const scd_sink *sink, scd_counts *counts,
                      dwl_error *err)
{
  scd_engine *e = h->e;
  km_entry *m = keymap_get(&e->km, rows[0]->key);
  int64_t end = history_end(e, m);
  hev *ev = malloc((n + 2 * h->no + 1) * sizeof *ev);
  if (!ev)
    return err_set(err, DWL_EXIT_FAILED, "out of memory repairing a key's history");
  int rc = -1;
  ssize_t nev = build_events(h, rows, n, end, ev, counts, err);
  if (nev < 0)
    goto out;
  if (e->spec->late == LATE_REPAIR) {
    qsort(ev, (size_t)nev, sizeof *ev, cmp_hev);
    if (settle_instants(e, ev, (size_t)nev, counts, err) == 0)
      rc = replay_key(h, ev, (size_t)nev, sink, counts, err);
    goto out;
  }
  /* ignore / reject: what remains is past the stored history, an ordinary
   * delta for the key's current state. */
  rs_row **rest = malloc((n + 1) * sizeof *rest);
  if (!rest) {
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    goto out;
  }
  size_t nrest = 0;
  for (size_t i = 0; i < n; i++)
    if (rows[i]->lmd.us >= end)
      rest[nrest++] = rows[i];
  rc = nrest ? process_scd2(e, rest, nrest, sink, counts, err) : 0;
  free(rest);
out:
  free(ev);
  return rc;
}

int scd_repair(scd_engine *e, const scd_sink *sink, scd_counts *counts, dwl_error *err)
{
  if (!e->ndeferred)
    return 0;
  size_t nh = e->hist.n;
  size_t *idx = malloc((nh ? nh : 1) * sizeof *idx);
  if (!idx)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < nh; i++)
    idx[i] = i;
  sort_rs = &e->hist;
  qsort(idx, nh, sizeof *idx, cmp_rows);  /* by key, then valid_from */
  sort_rs = NULL;
  /* Each waiting key's stored versions: a run of idx, found through the
   * key map's group slot. */
  for (size_t i = 0; i < nh; i++) {
    km_entry *m = keymap_get(&e->km, e->hist.rows[idx[i]].key);
    if (i == 0 || !fp_eq(e->hist.rows[idx[i - 1]].key, e->hist.rows[idx[i]].key))
      m->group = (uint32_t)(i + 1);
  }
  int rc = 0, failed = 0;
  for (size_t g = 0; g < e->ndeferred; g++) {
    rs_row *const *rows = &e->sorted[e->deferred[g].first];
    size_t n = e->deferred[g].n;
    km_entry *m = keymap_get(&e->km, rows[0]->key);
    hkey h = {.e = e, .o = idx, .no = 0};
    if (m->group) {
      h.o = &idx[m->group - 1];
      while (m->group - 1 + h.no < nh && fp_eq(e->hist.rows[h.o[h.no]].key, rows[0]->key))
        h.no++;
    }
    /* reject counts every late row before the run fails */
    if (repair_key(&h, rows, n, sink, counts, err) != 0) {
      failed = 1;
      if (e->spec->late != LATE_REJECT || counts->late_rejected == 0)
        break;
    }
  }
  if (failed)
    rc = -1;
  free(idx);
  return rc;
}

/* For the pushdown engine, which stages rows instead of walking them: the
 * same delete test and key description as here. */
int scd_is_delete(const scd_engine *e, const dwl_value *row)
{
  return is_delete_row(e, row);
}

void scd_describe_key(const scd_engine *e, const dwl_value *row, char *out, size_t n)
{
  describe_key(e, row, out, n);
}
