/* Staged operations (writer_impl.h, writer.h): expires, type 1
 * overwrites, upsert updates and removals, and the history repair's drops
 * and reshapes, go into temporary tables through the bulk inserts and are
 * applied by one UPDATE ... FROM / UPDATE ... JOIN or DELETE per kind at
 * the end, never one round trip per row (SQLite too: in-process, yet its
 * driver parses a statement again at every execution, so a statement per
 * key cost more: bench/RESULTS.md).  Also the keys a keyed lookup
 * reads through (writer_stage_keys) and the stages of the caller's own
 * that pushdown fills (writer_stage_*). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "keymap.h"
#include "log.h"
#include "progress.h"
#include "writer_impl.h"

/* ---- staged operations ---------------------------------------------------- */

/* Whether a source column of the table is named `name` (case aside:
 * MariaDB's column names are). */
static int source_named(const writer *w, const char *name)
{
  for (size_t i = 0; i < w->t->ncols; i++)
    if (w->t->cols[i].role == TC_SRC && strcasecmp(w->t->cols[i].name, name) == 0)
      return 1;
  return 0;
}

/* Quoted name of a stage column: source columns keep their names; the
 * bookkeeping values get names of their own, with underscores added while
 * a source column has the name (a type 1 column named dwl_valid_from made
 * the stage name a column twice, and the run failed). */
static char *stage_col_name(const writer *w, long what, dwl_error *err)
{
  static const char *const names[] = {"dwl_valid_from", "dwl_valid_to", "dwl_deleted", "dwl_old_valid_from",
                                      "dwl_old_deleted", "dwl_current", "dwl_sk", "dwl_run_id"};
  char own[64];
  const char *name = own;
  if (what >= 0) {
    name = w->t->cols[tcol_of(w, (size_t)what)].name;
  } else {
    size_t len = (size_t)snprintf(own, sizeof own, "%s", names[-what - 1]);
    while (source_named(w, own) && len + 1 < sizeof own) {
      own[len++] = '_';
      own[len] = '\0';
    }
  }
  dwl_buf q;
  buf_init(&q, 0);
  if (dialect_quote(w->t->d, name, &q, "stage column", err) != 0) {
    buf_free(&q);
    return NULL;
  }
  return buf_steal(&q);
}

/* Stage columns: the key, then `extra` (source indexes or SC_* values). */
int stage_init(writer *w, int kind, const char *name, const long *extra, size_t nextra, dwl_error *err)
{
  stage *s = &w->stages[kind];
  const target *t = w->t;
  size_t n = w->cols->nkey + nextra;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->cols = calloc(n, sizeof *s->cols);
  s->decl = calloc(n, sizeof *s->decl);
  s->collate = calloc(n, sizeof *s->collate);
  SQLSMALLINT *types = calloc(n, sizeof *types);
  if (!s->cols || !s->decl || !s->collate || !types) {
    free(types);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  s->ncols = n;
  for (size_t i = 0; i < n; i++) {
    long what = i < w->cols->nkey ? (long)w->cols->key[i] : extra[i - w->cols->nkey];
    size_t tc = what < 0 ? (size_t)t->ix[stage_role(what)] : tcol_of(w, (size_t)what);
    s->cols[i] = stage_col_name(w, what, err);
    if (!s->cols[i]) {
      free(types);
      return -1;
    }
    s->decl[i] = tcol_stage_decl(&t->cols[tc]);
    if (t->cols[tc].role == TC_CURRENT || t->cols[tc].role == TC_DELETED)
      s->decl[i].type = DWL_TYPE_BOOLEAN;
    /* joined to the table on the key: the key column's collation */
    s->collate[i] = t->cols[tc].have_collate;
    types[i] = col_ptype(w, tc);
  }
  batch_opts o = writer_batch_opts(w, kind != STAGE_KEYS);
  s->types = types;  /* (key lists bind the stage's values back: staged_lists.c) */
  return batch_open(w->t->c, w->t->d, s->name, s->cols, types, n, &o, &s->b, err);
}

/* "d.k1 = s.k1 AND d.k2 = s.k2" (keys with a NULL never reach a stage). */
static void join_keys(const writer *w, const stage *s, dwl_buf *b)
{
  for (size_t i = 0; i < w->cols->nkey; i++)
    buf_printf(b, "%sd.%s = s.%s", i ? " AND " : "", w->t->cols[tcol_of(w, w->cols->key[i])].q, s->cols[i]);
}

/* "UPDATE d ... SET <pairs> FROM s ..." in the dialect's syntax, keyed
 * (update_keyed_end) or not: SET pairs are (target column, stage column
 * index). */
static char *update_sql(const writer *w, const stage *s, const char *on, const char *const *tset,
                        const size_t *sset, size_t nset, const char *extra_set, int keyed)
{
  const target *t = w->t;
  const dialect *d = t->d;
  dwl_buf b;
  buf_init(&b, 0);
  d->update_begin(&b, t->table_q, s->name, on);
  for (size_t i = 0; i < nset; i++)
    buf_printf(&b, "%s%s%s = s.%s", i ? ", " : "", d->set_prefix, tset[i], s->cols[sset[i]]);
  if (extra_set)
    buf_printf(&b, ", %s%s", d->set_prefix, extra_set);
  if (keyed)
    d->update_keyed_end(&b, t->table_q, s->name, on);
  else
    d->update_end(&b, s->name, on);
  return buf_steal(&b);
}

/* The quoted table columns of the key, then valid_from (with_vf), into
 * m[]; returns how many. */
static size_t match_cols(const writer *w, int with_vf, const char **m)
{
  const target *t = w->t;
  size_t n = 0;
  for (size_t i = 0; i < w->cols->nkey; i++)
    m[n++] = t->cols[tcol_of(w, w->cols->key[i])].q;
  if (with_vf)
    m[n++] = t->cols[t->ix[TC_VALID_FROM]].q;
  return n;
}

/* The statement applying a stage: SET pairs are (target column, stage
 * column index); with_vf adds the version's valid_from to the join.
 * Where the dialect has keyed statements and the key index serves the
 * join (a current version's, or upsert's key), the keyed one too, into
 * the stage's apply_keyed_sql (stages_apply chooses); for a remote table,
 * its key lists (staged_lists.c). */
static char *apply_sql(writer *w, int kind, const char *const *tset, const size_t *sset, size_t nset,
                       const char *extra_set, int with_vf, dwl_error *err)
{
  const target *t = w->t;
  const dialect *d = t->d;
  stage *s = &w->stages[kind];
  dwl_buf on, b, cur;
  buf_init(&on, 0);
  buf_init(&b, 0);
  buf_init(&cur, 0);
  join_keys(w, s, &on);
  /* Operations on a current version repeat the current predicate: it is
   * what lets the key index (partial, on current versions) serve the join. */
  int indexed = t->spec->mode == MODE_UPSERT;
  with_vf = with_vf && kind != SLOT_REMOVE;
  if (with_vf) {
    buf_printf(&on, " AND d.%s = s.%s", t->cols[t->ix[TC_VALID_FROM]].q, s->cols[w->cols->nkey]);
    if (t->ix[TC_CURRENT] >= 0) {
      buf_printf(&cur, "%s = %s", t->cols[t->ix[TC_CURRENT]].q, d->true_lit);
      buf_taint(&on, &cur);
      buf_printf(&on, " AND d.%s", cur.data);
      indexed = 1;
    }
  }
  buf_taint(&b, &on);  /* no statement around a join condition that failed */
  char *sql = NULL;
  if (kind == SLOT_REMOVE) {
    d->delete_matching(&b, t->table_q, s->name, on.data);
    sql = buf_steal(&b);
  } else if (on.data) {
    sql = update_sql(w, s, on.data, tset, sset, nset, extra_set, 0);
    if (sql && indexed && d->update_keyed_end && !(s->apply_keyed_sql = update_sql(w, s, on.data, tset, sset, nset,
                                                                                   extra_set, 1))) {
      free(sql);
      sql = NULL;
    }
  }
  if (sql && t->remote[0]) {
    const char **m = calloc(w->cols->nkey + 1, sizeof *m);
    size_t nm = m ? match_cols(w, with_vf, m) : 0;
    if (!m || buf_failed(&cur) ||
        stage_lists_init(w, s, kind == SLOT_REMOVE, m, nm, tset, sset, nset, cur.len ? cur.data : NULL, extra_set,
                         err) != 0) {
      free(sql);
      sql = NULL;
    }
    free(m);
  }
  buf_free(&b);
  buf_free(&on);
  buf_free(&cur);
  return sql;
}

/* SET pairs for source columns idx[], whose stage columns start at `off`,
 * and the run id column from the stage column after them. */
static char *apply_set(writer *w, int kind, const size_t *idx, size_t n, size_t off, const char *extra,
                       int with_vf, dwl_error *err)
{
  const char **tset = calloc(n + 1, sizeof *tset);
  size_t *sset = calloc(n + 1, sizeof *sset);
  char *sql = NULL;
  if (tset && sset) {
    for (size_t i = 0; i < n; i++) {
      tset[i] = w->t->cols[tcol_of(w, idx[i])].q;
      sset[i] = off + i;
    }
    size_t nset = n;
    if (has_run_id(w)) {
      tset[nset] = w->t->cols[w->t->ix[TC_RUN_ID]].q;
      sset[nset++] = off + n;
    }
    sql = apply_sql(w, kind, tset, sset, nset, extra, with_vf, err);
  }
  free(tset);
  free(sset);
  return sql;
}

/* A remote table's drop or reshape by key lists: matched on the key,
 * valid_from [and deleted]; a reshape sets what[0..nset) from the stage
 * columns after those. */
static int history_lists(writer *w, int slot, int del, const long *what, size_t nset, dwl_error *err)
{
  const target *t = w->t;
  size_t nk = w->cols->nkey, nm;
  const char **m = calloc(nk + 2, sizeof *m), **set = calloc(nset + 1, sizeof *set);
  size_t *src = calloc(nset + 1, sizeof *src);
  int rc = m && set && src ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (rc == 0) {
    nm = match_cols(w, 1, m);
    if (del)
      m[nm++] = t->cols[t->ix[TC_DELETED]].q;
    for (size_t i = 0; i < nset; i++) {
      set[i] = t->cols[what_tcol(w, what[i])].q;
      src[i] = nm + i;
    }
    rc = stage_lists_init(w, &w->stages[slot], slot == SLOT_DROP, m, nm, set, src, nset, NULL, NULL, err);
  }
  free(m);
  free(set);
  free(src);
  return rc;
}

/* Staged drop and reshape: key, valid_from [, deleted] of the stored
 * version, then (reshape) what it becomes; applied by one DELETE or UPDATE
 * joined on those.  Staged on SQLite too (UPDATE ... FROM, SQLite 3.33):
 * the key index covers current versions only, so a statement per closed
 * version would scan the table each time. */
static int history_stages(writer *w, dwl_error *err)
{
  const target *t = w->t;
  size_t nk = w->cols->nkey;
  int del = t->ix[TC_DELETED] >= 0;
  long *extra = calloc(t->ncols + 6, sizeof *extra);
  if (!extra)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = 0;
  for (int slot = SLOT_DROP; rc == 0 && slot <= SLOT_RESHAPE; slot++) {
    size_t ne = 0;
    extra[ne++] = slot == SLOT_DROP ? SC_VF : SC_OLDVF;
    if (del)
      extra[ne++] = slot == SLOT_DROP ? SC_DEL : SC_OLDDEL;
    size_t nset = slot == SLOT_RESHAPE ? reshape_set(w, extra + ne) : 0;
    rc = stage_init(w, slot, slot == SLOT_DROP ? "dwl_stage_drop" : "dwl_stage_reshape", extra, ne + nset, err);
    if (rc != 0)
      break;
    const stage *s = &w->stages[slot];
    dwl_buf on, b;
    buf_init(&on, 0);
    buf_init(&b, 0);
    join_keys(w, s, &on);
    buf_printf(&on, " AND d.%s = s.%s", t->cols[t->ix[TC_VALID_FROM]].q, s->cols[nk]);
    if (del)
      buf_printf(&on, " AND d.%s = s.%s", t->cols[t->ix[TC_DELETED]].q, s->cols[nk + 1]);
    buf_taint(&b, &on);  /* no statement around a join condition that failed */
    if (slot == SLOT_DROP) {
      t->d->delete_matching(&b, t->table_q, s->name, on.data);
    } else {
      t->d->update_begin(&b, t->table_q, s->name, on.data);
      for (size_t i = 0; i < nset; i++)
        buf_printf(&b, "%s%s%s = s.%s", i ? ", " : "", t->d->set_prefix, t->cols[what_tcol(w, extra[ne + i])].q,
                   s->cols[nk + ne + i]);
      t->d->update_end(&b, s->name, on.data);
    }
    buf_free(&on);
    w->stages[slot].apply_sql = buf_steal(&b);
    if (t->remote[0] && w->stages[slot].apply_sql)
      rc = history_lists(w, slot, del, extra + ne, nset, err);
  }
  free(extra);
  return rc;
}

int build_stages(writer *w, dwl_error *err)
{
  const target *t = w->t;
  const scd_cols *c = w->cols;
  size_t nk = c->nkey;
  long *extra = calloc(t->ncols + 4, sizeof *extra);
  if (!extra)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  int rc = 0;
  size_t ne;
  if (t->spec->mode == MODE_SCD2) {
    /* expire: key, valid_from, valid_to [, deleted] */
    ne = 0;
    extra[ne++] = SC_VF;
    extra[ne++] = SC_VT;
    if (t->ix[TC_DELETED] >= 0)
      extra[ne++] = SC_DEL;
    rc = stage_init(w, SLOT_EXPIRE, "dwl_stage_expire", extra, ne, err);
    if (rc == 0) {
      stage *s = &w->stages[SLOT_EXPIRE];
      const char *tset[2] = {t->cols[t->ix[TC_VALID_TO]].q, NULL};
      size_t sset[2] = {nk + 1, 0};
      size_t nset = 1;
      if (t->ix[TC_DELETED] >= 0) {
        tset[nset] = t->cols[t->ix[TC_DELETED]].q;
        sset[nset++] = nk + 2;
      }
      char cur[300] = "";
      if (t->ix[TC_CURRENT] >= 0)
        snprintf(cur, sizeof cur, "%s = %s", t->cols[t->ix[TC_CURRENT]].q, t->d->false_lit);
      s->apply_sql = apply_sql(w, SLOT_EXPIRE, tset, sset, nset, cur[0] ? cur : NULL, 1, err);
    }
    /* type 1, current version: key, valid_from, t1...; every version: key, t1... */
    if (rc == 0 && c->nt1) {
      ne = 0;
      extra[ne++] = SC_VF;
      for (size_t i = 0; i < c->nt1; i++)
        extra[ne++] = (long)c->t1[i];
      if (has_run_id(w))
        extra[ne++] = SC_RUN;
      rc = stage_init(w, SLOT_T1_CUR, "dwl_stage_type1", extra, ne, err);
      if (rc == 0)
        w->stages[SLOT_T1_CUR].apply_sql = apply_set(w, SLOT_T1_CUR, c->t1, c->nt1, nk + 1, NULL, 1, err);
      if (rc == 0)
        rc = stage_init(w, SLOT_T1_ALL, "dwl_stage_type1_all", extra + 1, ne - 1, err);
      if (rc == 0)
        w->stages[SLOT_T1_ALL].apply_sql = apply_set(w, SLOT_T1_ALL, c->t1, c->nt1, nk, NULL, 0, err);
    }
    if (rc == 0)
      rc = history_stages(w, err);
  } else {
    ne = 0;
    for (size_t i = 0; i < c->nt2; i++)
      extra[ne++] = (long)c->t2[i];
    if (has_run_id(w))
      extra[ne++] = SC_RUN;
    rc = stage_init(w, SLOT_UPDATE, "dwl_stage_update", extra, ne, err);
    if (rc == 0)
      w->stages[SLOT_UPDATE].apply_sql = apply_set(w, SLOT_UPDATE, c->t2, c->nt2, nk, NULL, 0, err);
  }
  if (rc == 0)
    rc = stage_init(w, SLOT_REMOVE, "dwl_stage_remove", extra, 0, err);
  if (rc == 0)
    rc = stage_init(w, STAGE_KEYS, "dwl_stage_keys", extra, 0, err);
  if (rc == 0)
    w->stages[SLOT_REMOVE].apply_sql = apply_sql(w, SLOT_REMOVE, NULL, NULL, 0, NULL, 0, err);
  free(extra);
  for (int k = 0; rc == 0 && k < NSLOTS; k++)
    if (w->stages[k].ncols && !w->stages[k].apply_sql)
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  return rc;
}

static int stage_create(writer *w, stage *s, dwl_error *err)
{
  dwl_buf b;
  buf_init(&b, 0);
  buf_printf(&b, "CREATE TEMPORARY TABLE %s (", s->name);
  for (size_t i = 0; i < s->ncols; i++) {
    char ty[192];
    const dialect *d = w->t->d;
    const char *coll = s->collate ? s->collate[i] : NULL;
    const char *type = s->decl[i].type == DWL_TYPE_BOOLEAN  ? d->flag_type
                       : coll && d->stage_type_sql ? d->stage_type_sql(&s->decl[i], coll, ty, sizeof ty)
                                                   : d->type_sql(&s->decl[i], ty, sizeof ty);
    buf_printf(&b, "%s%s %s", i ? ", " : "", s->cols[i], type);
  }
  if (s->nindex && w->t->d->stage_index)
    w->t->d->stage_index(&b, s->cols, s->decl, s->index, s->nindex);
  if (s->lists)  /* read back in pages by it (staged_lists.c) */
    buf_printf(&b, ", %s %s", s->lists->serial, w->t->d->remote_stage_serial);
  buf_addc(&b, ')');
  int rc = b.data ? run_sql(w, NULL, b.data, NULL, NULL, 0, err) : err_set(err, DWL_EXIT_FAILED, "out of memory");
  buf_free(&b);
  return rc;
}

/* Queues one staged operation; the temporary table is made on first use. */
int stage_add(writer *w, int kind, const dwl_value *vals, dwl_error *err)
{
  stage *s = &w->stages[kind];
  if (!s->used) {
    if (stage_create(w, s, err) != 0)
      return -1;
    s->used = 1;
  }
  return batch_add(s->b, vals, err);
}

/* Equality joins find keys through the index; a NULL key part needs a
 * NULL-safe per-key statement instead. */
int staged_key(const writer *w, const dwl_value *keyrow)
{
  return !scd_null_key(w->cols, keyrow);
}


/* Type 1 overwrites of a current version come before its expire: they
 * find it by the current predicate, and the engine emits them first. */
static const int stage_order[NSLOTS] = {SLOT_T1_CUR, SLOT_EXPIRE, SLOT_T1_ALL, SLOT_UPDATE,
                                        SLOT_REMOVE, SLOT_DROP, SLOT_RESHAPE};
_Static_assert(NSLOTS == 7, "every slot has its place in the order");

/* The statements stages_apply runs for stage s: 0 when it has nothing new;
 * else its last rows (when some wait), the statistics (when the dialect
 * refreshes them), the UPDATE and the emptying. */
static long long stage_statements(const writer *w, const stage *s)
{
  if (!s->used || (batch_pending(s->b) == 0 && batch_sent(s->b) == s->applied))
    return 0;
  if (s->lists)
    return (batch_pending(s->b) > 0) +
           stage_lists_statements(s, batch_sent(s->b) + (long long)batch_pending(s->b) - s->applied) + 1;
  return (batch_pending(s->b) > 0) + (w->t->d->analyze_sql != NULL) + 2;
}

long long stages_pending(const writer *w)
{
  long long n = 0;
  for (int i = 0; i < NSLOTS; i++)
    n += stage_statements(w, &w->stages[i]);
  return n;
}

/* One more statement of the write phase run (none counted when NULL: an
 * application in the middle of the apply phase, sink.c). */
void stage_step(long long *steps)
{
  if (steps)
    progress_step(++*steps);
}

/* Stage s applied by its one joined statement. */
static int stage_apply_join(writer *w, stage *s, long long *steps, dwl_error *err)
{
  /* Fresh statistics let the planner probe the key index per staged row
   * instead of hashing the whole table. */
  if (w->t->d->analyze_sql) {
    char sql[96];
    snprintf(sql, sizeof sql, "%s %s", w->t->d->analyze_sql, s->name);
    if (run_sql(w, NULL, sql, NULL, NULL, 0, err) != 0)
      return -1;
    stage_step(steps);
  }
  /* (the rows this statement applies: those sent since the last) */
  long long rows = batch_sent(s->b) - s->applied;
  int keyed = s->apply_keyed_sql ? target_keyed(w->t, rows, err) : 0;
  if (keyed < 0)
    return -1;
  if (keyed)
    log_msg(LOG_DEBUG, "%s applied by key: %lld rows against ~%lld in the table", s->name, rows, w->t->counted);
  if (run_sql(w, NULL, keyed ? s->apply_keyed_sql : s->apply_sql, NULL, NULL, 0, err) != 0)
    return -1;
  stage_step(steps);
  return 0;
}

/* Applies what is staged.  Staged operations name the version they change
 * by key and valid_from, so they commute with inserts of later versions and
 * can wait for the end; see sink_insert for the one exception. */
int stages_apply(writer *w, long long *steps, dwl_error *err)
{
  for (int i = 0; i < NSLOTS; i++) {
    int k = stage_order[i];
    stage *s = &w->stages[k];
    if (stage_statements(w, s) == 0)
      continue;
    if (batch_pending(s->b) > 0) {
      if (batch_flush(s->b, err) != 0)
        return -1;
      stage_step(steps);
    }
    if (s->lists) {
      if (stage_lists_apply(w, s, steps, err) != 0)
        return -1;
    } else if (stage_apply_join(w, s, steps, err) != 0) {
      return -1;
    }
    /* Emptied, so the next application only carries what came since. */
    char sql[80];
    snprintf(sql, sizeof sql, "DELETE FROM %s", s->name);
    if (run_sql(w, NULL, sql, NULL, NULL, 0, err) != 0)
      return -1;
    stage_step(steps);
    s->applied = batch_sent(s->b);
  }
  return 0;
}

const dwl_value **writer_key_rows(const writer *w, const rowset *rows, size_t *n, dwl_error *err)
{
  keymap seen;
  const dwl_value **out = malloc((rows->n ? rows->n : 1) * sizeof *out);
  if (!out || keymap_init(&seen, rows->n) != 0) {
    free(out);
    err_set(err, DWL_EXIT_FAILED, "out of memory");
    return NULL;
  }
  *n = 0;
  for (size_t i = 0; i < rows->n; i++) {
    const rs_row *r = &rows->rows[i];
    if (!staged_key(w, r->vals))
      continue;
    int created;
    if (!keymap_put(&seen, r->key, &created)) {
      free(out);
      out = NULL;
      err_set(err, DWL_EXIT_FAILED, "out of memory");
      break;
    }
    if (created)
      out[(*n)++] = r->vals;
  }
  keymap_free(&seen);
  return out;
}

long writer_stage_keys(writer *w, const rowset *rows, const char **table, char *const **cols, dwl_error *err)
{
  stage *s = &w->stages[STAGE_KEYS];
  size_t nkeys;
  const dwl_value **keys = writer_key_rows(w, rows, &nkeys, err);
  if (!keys)
    return -1;
  long n = 0;
  int rc = 0;
  /* Staged even in plan mode: the lookup reads through it, and a temporary
   * table is no write to the warehouse. */
  int plan = w->plan;
  w->plan = 0;
  if (s->used && batch_sent(s->b) > s->applied) {
    /* a second lookup in the run (the history of keys with late rows) */
    char sql[80];
    snprintf(sql, sizeof sql, "DELETE FROM %s", s->name);
    rc = run_sql(w, NULL, sql, NULL, NULL, 0, err);
    s->applied = batch_sent(s->b);
  }
  for (size_t i = 0; rc == 0 && i < nkeys; i++) {
    key_params(w, keys[i], w->row);
    rc = stage_add(w, STAGE_KEYS, w->row, err);
    n++;
  }
  if (rc == 0 && s->used)
    rc = batch_flush(s->b, err);
  w->plan = plan;
  free(keys);
  *table = s->name;
  *cols = s->cols;
  return rc == 0 ? n : -1;
}

/* ---- stages of the caller's own (pushdown) ----------------------------------- */

/* A stage of its own: sent even in plan mode, applied by its caller. */
struct writer_stage {
  stage s;
};

int writer_stage_open(writer *w, const char *name, char *const *cols, const dwl_column *decl,
                      const char *const *collate, size_t ncols, writer_stage **out, dwl_error *err)
{
  return writer_stage_open_ix(w, name, cols, decl, collate, ncols, NULL, 0, out, err);
}

int writer_stage_open_ix(writer *w, const char *name, char *const *cols, const dwl_column *decl,
                         const char *const *collate, size_t ncols, const size_t *ix, size_t nix,
                         writer_stage **out, dwl_error *err)
{
  *out = NULL;
  writer_stage *ws = calloc(1, sizeof *ws);
  SQLSMALLINT *types = calloc(ncols ? ncols : 1, sizeof *types);
  if (!ws || !types) {
    free(ws);
    free(types);
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  stage *s = &ws->s;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->cols = calloc(ncols ? ncols : 1, sizeof *s->cols);
  s->decl = calloc(ncols ? ncols : 1, sizeof *s->decl);
  s->collate = calloc(ncols ? ncols : 1, sizeof *s->collate);
  s->index = nix ? malloc(nix * sizeof *s->index) : NULL;
  int rc = s->cols && s->decl && s->collate && (!nix || s->index) ? 0 : err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; rc == 0 && i < nix; i++)
    s->index[s->nindex++] = ix[i];
  for (size_t i = 0; rc == 0 && i < ncols; i++) {
    s->ncols++;
    s->decl[i] = decl[i];
    s->collate[i] = collate ? collate[i] : NULL;
    types[i] = w->t->d->param_type(decl[i].type);
    if (!(s->cols[i] = strdup(cols[i])))
      rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  /* Sent even in plan mode: pushdown reads through it. */
  batch_opts o = writer_batch_opts(w, 0);
  if (rc == 0)
    rc = batch_open(w->t->c, w->t->d, s->name, s->cols, types, ncols, &o, &s->b, err);
  free(types);
  int plan = w->plan;
  w->plan = 0;
  if (rc == 0)
    rc = stage_create(w, s, err);
  w->plan = plan;
  s->used = rc == 0;
  if (rc != 0) {
    writer_stage_free(ws);
    return -1;
  }
  *out = ws;
  return 0;
}

int writer_stage_add(writer_stage *ws, const dwl_value *row, dwl_error *err)
{
  return batch_add(ws->s.b, row, err);
}

int writer_stage_flush(writer_stage *ws, dwl_error *err)
{
  return batch_flush(ws->s.b, err);
}

void writer_stage_free(writer_stage *ws)
{
  if (!ws)
    return;
  stage_free(&ws->s);
  free(ws);
}

void stage_free(stage *s)
{
  batch_free(s->b);
  for (size_t i = 0; s->cols && i < s->ncols; i++)
    free(s->cols[i]);
  free(s->cols);
  free(s->decl);
  free(s->collate);
  free(s->apply_sql);
  free(s->apply_keyed_sql);
  free(s->index);
  stage_lists_free(s->lists);
  free(s->types);
}

