/* The memory engine's walk: one key's rows in lmd order against its
 * current version, each looked up in the version rules (versions.h) and
 * turned into sink operations.  The head of the walk is the key's latest
 * version: the stored one, or a pending one not yet written (inserted
 * when the next event closes it, or open at the end).  The same walk
 * replays whole histories for late rows (late.c). */
#include "scd_impl.h"

#include <stdio.h>

int emit_pending(walk *w, int open, dwl_ts end, int deleted, dwl_error *err)
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

/* A delete of a live key (VA_DELETE); `next` is the state it leaves. */
static int walk_delete(walk *w, const rs_row *r, int next, dwl_error *err)
{
  /* With tombstones the closed version is an ordinary predecessor; the
   * tombstone carries the deleted flag (as dbt's hard_deletes=new_record).
   * A deletion within the close step of the version's start closes it at
   * its valid_from (a version of one step), and takes effect then. */
  dwl_ts at = effect_at(w, r);
  if (close_head(w, r, at, next != VS_TOMB, err) != 0)
    return -1;
  w->counts->deleted++;
  if (next == VS_TOMB) {
    start_pending(w, r, 1, at);
  } else {
    w->kind = H_NONE;
    w->floor = at.us;
  }
  return 0;
}

/* A composite lmd: a row at the instant the stored current version
 * started, past the checkpoint, is a later tie-breaker than the row that
 * started it (every loaded row is at or before the checkpoint).  The
 * table holds one version per instant, the latest by the composite's
 * order (dwload-job(5), SEQUENCES): the row replaces it. */
int scd_tie_replaces(const scd_engine *e, const rs_row *r, int64_t vf)
{
  return r->lmd.nties > 0 && r->lmd.us == vf && (!e->cp || ts_seq_cmp(&r->lmd, e->cp) > 0);
}

/* A row that starts a version (VA_START): it closes the head, if any. */
static int walk_start(walk *w, const rs_row *r, int state, const ver_rule *rule, dwl_error *err)
{
  if (rule->within == VW_REPLACE &&
      (r->lmd.us < head_end(w) || (w->kind == H_DB_LIVE && scd_tie_replaces(w->e, r, w->vf.us)))) {
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
  /* Revival (VW_MOVE): the tombstone ends where the new version starts, one
   * close step after the tombstone's start at the earliest; after an
   * expire-style deletion, at its instant at the earliest. */
  dwl_ts at = effect_at(w, r);
  if (close_head(w, r, at, state == VS_TOMB, err) != 0)
    return -1;
  if (w->kind == H_DB_LIVE || w->kind == H_DB_TOMB || w->kind == H_DB_REPL)
    w->counts->expired++;  /* a stored version closed */
  start_pending(w, r, 0, at);
  return 0;
}

/* Other type 1 values on a live key (VA_TYPE1). */
static int walk_type1(walk *w, const rs_row *r, dwl_error *err)
{
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

/* The key's state before a row, in the terms of the version rules. */
static int head_state(const walk *w)
{
  switch (w->kind) {
  case H_NONE:
    return VS_NONE;
  case H_DB_TOMB:
  case H_PEND_TOMB:
    return VS_TOMB;
  default:
    return VS_LIVE;
  }
}

/* The row against the head's values (which only a live head has: for
 * the others every row starts a version, whatever it holds). */
static int row_event(const walk *w, const rs_row *r, int del)
{
  if (del)
    return VE_DELETE;
  if (!fp_eq(r->fp2, w->fp2))
    return VE_CHANGE;
  return fp_eq(r->fp1, w->fp1) ? VE_SAME : VE_TYPE1;
}

int walk_event(walk *w, const rs_row *r, int del, dwl_error *err)
{
  int state = head_state(w);
  int event = row_event(w, r, del);
  const ver_rule *rule = ver_rule_at(state, event);
  switch (rule->action) {
  case VA_NOOP:
    w->counts->unchanged++;  /* the same values; a delete of a key already deleted, or never known */
    return 0;
  case VA_TYPE1:
    return walk_type1(w, r, err);
  case VA_DELETE:
    return walk_delete(w, r, ver_next(state, event, w->tombstones), err);
  default:
    return walk_start(w, r, state, rule, err);
  }
}

/* Rows of one key with the same lmd: identical ones count once, others are
 * a conflict.  Compared only here, where it happens, not per row. */
void scd_when(const scd_engine *e, const dwl_ts *t, char out[32])
{
  e->seq ? ts_format_seq(t, out) : ts_format(t, out);
}

int same_row(const scd_engine *e, const rs_row *a, const rs_row *b)
{
  return fp_eq(fp_values(a->vals, e->ncols), fp_values(b->vals, e->ncols));
}

int conflict(const scd_engine *e, const rs_row *a, const rs_row *b, dwl_error *err)
{
  char k[512], when[32], apos[24], bpos[24];
  describe_key(e, b->vals, k, sizeof k);
  scd_when(e, &b->lmd, when);
  snprintf(apos, sizeof apos, "%llu", (unsigned long long)a->origin);
  snprintf(bpos, sizeof bpos, "%llu", (unsigned long long)b->origin);
  return ver_err_conflict(err, k, e->cols.lmd < 0 ? NULL : when, ON(e), apos, bpos);
}

/* A row at the very instant the key's current version started, with other
 * type 2 values: two versions cannot start at one time. */
int same_start(const scd_engine *e, const rs_row *r, dwl_error *err)
{
  char k[512], when[32], pos[24];
  describe_key(e, r->vals, k, sizeof k);
  scd_when(e, &r->lmd, when);
  snprintf(pos, sizeof pos, "%llu", (unsigned long long)r->origin);
  return ver_err_same_start(err, ON(e), pos, k, when, 1);
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

int process_scd2(scd_engine *e, rs_row *const *rows, size_t n, const scd_sink *sink, scd_counts *counts,
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
    /* A composite lmd: of a key's rows at one instant only the last by
     * its tie-breakers makes a version (one per instant); the others are
     * superseded, counted unchanged. */
    size_t last = i;
    while (last + 1 < n && rows[last + 1]->lmd.us == r->lmd.us)
      last++;
    if (ts_seq_cmp(&rows[last]->lmd, &r->lmd) != 0) {
      counts->unchanged++;
      continue;
    }
    if (i > first && rows[i - 1]->lmd.us == r->lmd.us && ts_seq_cmp(&rows[i - 1]->lmd, &r->lmd) == 0) {
      if (!same_row(e, rows[i - 1], r))
        return conflict(e, rows[i - 1], r, err);
      counts->unchanged++;  /* an identical duplicate counts once */
      continue;
    }
    int del = is_delete_row(e, r->vals);
    /* (rows dated before the current version wait for scd_repair) */
    if (w.kind == H_DB_LIVE && r->lmd.us == w.vf.us && !del && !fp_eq(r->fp2, w.fp2)) {
      if (r->lmd.nties == 0)
        return same_start(e, r, err);
      if (!scd_tie_replaces(e, r, w.vf.us)) {
        counts->unchanged++;  /* reread (lookback): a tie-breaker the stored version superseded */
        continue;
      }
    }
    if (walk_event(&w, r, del, err))
      return -1;
  }
  if (w.kind == H_PEND || w.kind == H_PEND_TOMB || w.kind == H_DB_REPL) {
    dwl_ts none = {0};
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

