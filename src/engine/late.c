/* Late rows in the memory engine: history repair.  Keys whose rows start
 * before their stored history ends wait in scd_apply (scd.c); their stored
 * versions are then registered here and each key is replayed through the
 * same walk as any run (scd_walk.c). */
#include "scd_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  int ties = x->syn ? 0 : ts_seq_cmp(&x->r.lmd, &y->r.lmd);  /* a composite lmd's tie-breakers */
  if (ties)
    return ties;
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
int late_reject(const scd_engine *e, const rs_row *r, int64_t end, scd_counts *counts, dwl_error *err)
{
  char k[512], when[32], upto[32], why[1024];
  dwl_ts t = {.us = end};
  counts->late_rejected++;
  describe_key(e, r->vals, k, sizeof k);
  scd_when(e, &r->lmd, when);
  scd_when(e, &t, upto);
  snprintf(why, sizeof why, "key %s has lmd %s, before %s (%s): a late row, and load.late is reject", k, when,
           e->spec->mode == MODE_UPSERT ? "the stored row's lmd" : "the key's stored history ends", upto);
  if (e->reject && e->spec->max_rejects > 0)
    return e->reject(e->reject_ud, r, why, err);
  return err_set(err, DWL_EXIT_FAILED, "%s:%llu: %s", ON(e), (unsigned long long)r->origin, why);
}

int scd_reject_late(const scd_engine *e, const dwl_value *row, uint64_t origin, const dwl_ts *lmd, int64_t end,
                    scd_counts *counts, dwl_error *err)
{
  rs_row r = {.vals = (dwl_value *)row, .origin = origin, .lmd = *lmd};
  return late_reject(e, &r, end, counts, err);
}

/* Two events of one key at one instant that cannot both hold. */
static int hist_conflict(const scd_engine *e, const hev *src, const hev *stored, dwl_error *err)
{
  char k[512], when[32];
  describe_key(e, src->r.vals, k, sizeof k);
  scd_when(e, &src->r.lmd, when);
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
    ev[nev++].r.lmd = (dwl_ts){.us = at};
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
 * row replaced (see walk_start), which the replay makes again. */
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
      /* a composite lmd: the last by its tie-breakers supersedes the others */
      int tied = ts_seq_cmp(&ev[d].r.lmd, &ev[k].r.lmd) < 0;
      if (!tied && !same_row(e, &ev[d].r, &ev[k].r))
        return conflict(e, &ev[d].r, &ev[k].r, err);
      size_t gone = tied ? (size_t)d : k;
      ev[gone].skip = 1;
      if (!ev[gone].late)
        counts->unchanged++;  /* an identical duplicate counts once */
      if (tied)
        d = (ssize_t)k;
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
    if (walk_event(&w, &ev[i].r, ev[i].del, err))
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
    dwl_ts none = {0};
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
  scd_sort_index(&e->hist, idx, nh);  /* by key, then valid_from */
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
