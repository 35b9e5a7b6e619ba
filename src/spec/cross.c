/* The rules between keys (dwload-job(5), "Rules checked"): what a mode
 * needs and what applies only to some modes, columns listed twice, the
 * bookkeeping columns against the source's, and what engine: pushdown
 * refuses (src/engine/rules.c).  An error points at the key written later,
 * the one that contradicts what was already said. */
#include "spec_read.h"

#include <string.h>
#include <strings.h>

#include "rules.h"
#include "spec_keys.h"

/* Of two dotted keys, the one written later: that is the one that
 * contradicts what was already said.  Returns 0 for a, 1 for b. */
static int later_of(pctx *c, const char *a, const char *b, int *line, int *col)
{
  int la, ca, lb, cb;
  int ha = spec_key_pos(c->s, a, &la, &ca) == 0;
  int hb = spec_key_pos(c->s, b, &lb, &cb) == 0;
  if (hb && (!ha || lb > la || (lb == la && cb > ca))) {
    *line = lb;
    *col = cb;
    return 1;
  }
  key_pos(c, a, NULL, line, col);
  return 0;
}

typedef struct named_list {
  const char *name;       /* dotted key */
  const spec_list *l;
} named_list;

static int check_lists(pctx *c)
{
  dwl_spec *s = c->s;
  const named_list lists[3] = {{"load.key", &s->key}, {"load.type2", &s->type2},
                               {"load.type1", &s->type1}};
  int line, col;
  for (int a = 0; a < 3; a++) {
    for (int b = a + 1; b < 3; b++) {
      for (size_t i = 0; i < lists[a].l->n; i++) {
        const char *name = lists[a].l->v[i];
        const char *other = list_find(lists[b].l, name);
        if (!other)
          continue;
        int w = later_of(c, lists[a].name, lists[b].name, &line, &col);
        return perr(c, line, col, "%s: column '%s' is also in %s",
                    w ? lists[b].name : lists[a].name, w ? other : name,
                    w ? lists[a].name : lists[b].name);
      }
    }
  }
  if (s->lmd) {
    for (int a = 0; a < 3; a++) {
      if (!list_find(lists[a].l, s->lmd))
        continue;
      key_pos(c, lists[a].name, NULL, &line, &col);
      return perr(c, line, col, "%s: column '%s' is the lmd column (load.lmd) and cannot be "
                  "listed here", lists[a].name, s->lmd);
    }
  }
  if (s->delete_column && list_find(&s->key, s->delete_column)) {
    key_pos(c, "load.deletes.column", "load.deletes", &line, &col);
    return perr(c, line, col, "load.deletes.column: '%s' is a key column (load.key)",
                s->delete_column);
  }
  return 0;
}

static int check_bookkeeping(pctx *c)
{
  dwl_spec *s = c->s;
  const struct {
    const char *key;
    const char *val;
  } bk[5] = {{"dimension.surrogate_key", s->surrogate_key},
             {"dimension.valid_from", s->valid_from},
             {"dimension.valid_to", s->valid_to},
             {"dimension.current", s->current},
             {"dimension.deleted", s->deleted}};
  int line, col;
  for (int a = 0; a < 5; a++) {
    for (int b = a + 1; b < 5; b++) {
      if (!bk[a].val || !bk[b].val || strcasecmp(bk[a].val, bk[b].val) != 0)
        continue;
      int w = later_of(c, bk[a].key, bk[b].key, &line, &col);
      const char *other = w ? bk[a].key : bk[b].key;
      return perr(c, line, col, "%s: column name '%s' is also used by %s%s",
                  w ? bk[b].key : bk[a].key, w ? bk[b].val : bk[a].val, other,
                  given(c, other) ? "" : " (its default)");
    }
  }
  /* The bookkeeping columns only exist in an scd2 dimension. */
  if (s->mode != MODE_SCD2)
    return 0;
  const named_list lists[3] = {{"load.key", &s->key}, {"load.type2", &s->type2},
                               {"load.type1", &s->type1}};
  for (int a = 0; a < 5; a++) {
    if (!bk[a].val)
      continue;
    for (int b = 0; b < 3; b++) {
      if (!list_find(lists[b].l, bk[a].val))
        continue;
      int w = later_of(c, bk[a].key, lists[b].name, &line, &col);
      if (w)
        return perr(c, line, col, "%s: column '%s' is also the bookkeeping column %s%s",
                    lists[b].name, bk[a].val, bk[a].key,
                    given(c, bk[a].key) ? "" : " (its default; rename it in dimension)");
      return perr(c, line, col, "%s: '%s' is also a column in %s", bk[a].key, bk[a].val,
                  lists[b].name);
    }
    /* valid_from may be the lmd column itself: the source's own change time
     * then starts each version.  Any other bookkeeping column may not. */
    if (a != 1 && s->lmd && strcasecmp(s->lmd, bk[a].val) == 0) {
      int w = later_of(c, bk[a].key, "load.lmd", &line, &col);
      if (w)
        return perr(c, line, col, "load.lmd: column '%s' is also the bookkeeping column %s%s",
                    s->lmd, bk[a].key,
                    given(c, bk[a].key) ? "" : " (its default; rename it in dimension)");
      return perr(c, line, col, "%s: '%s' is also the lmd column (load.lmd)", bk[a].key,
                  bk[a].val);
    }
  }
  return 0;
}

/* target.partition_by: every unique key dwload builds on a table it
 * creates (the surrogate key's primary key) must hold the partition
 * columns, both warehouses' rule; the key index holds load.key, so the
 * columns come from it. */
static int check_partition_by(pctx *c)
{
  dwl_spec *s = c->s;
  int line, col;
  if (given(c, "target.partitions") && !s->partition_by.n) {
    key_pos(c, "target.partitions", "target", &line, &col);
    return perr(c, line, col, "target.partitions: needs target.partition_by");
  }
  if (!s->partition_by.n)
    return 0;
  key_pos(c, "target.partition_by", "target", &line, &col);
  if (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT)
    return perr(c, line, col, "target.partition_by: needs load.mode scd2 or upsert (found %s)",
                spec_mode_names[s->mode]);
  for (size_t i = 0; i < s->partition_by.n; i++)
    if (!list_find(&s->key, s->partition_by.v[i]))
      return perr(c, line, col,
                  "target.partition_by: column '%s' is not in load.key: every unique key of a partitioned table "
                  "must hold its partition columns, and dwload's hold load.key",
                  s->partition_by.v[i]);
  if (s->partitions < 1 || s->partitions > 1024) {
    key_pos(c, "target.partitions", "target", &line, &col);
    return perr(c, line, col, "target.partitions: expected 1 to 1024, found %lld", s->partitions);
  }
  return 0;
}

/* target.run_id_column against every other column the job names: the
 * run id would overwrite it, or it the run id. */
static int check_run_id_column(pctx *c)
{
  dwl_spec *s = c->s;
  const char *rid = s->run_id_column;
  if (!rid)
    return 0;
  int scd2 = s->mode == MODE_SCD2;
  const struct {
    const char *key;
    const char *val;
  } named[] = {{"load.lmd", s->lmd},
               {"load.deletes.column", s->delete_column},
               {"dimension.surrogate_key", scd2 ? s->surrogate_key : NULL},
               {"dimension.valid_from", scd2 ? s->valid_from : NULL},
               {"dimension.valid_to", scd2 ? s->valid_to : NULL},
               {"dimension.current", scd2 ? s->current : NULL},
               {"dimension.deleted", scd2 ? s->deleted : NULL}};
  const named_list lists[3] = {{"load.key", &s->key}, {"load.type2", &s->type2}, {"load.type1", &s->type1}};
  int line, col;
  key_pos(c, "target.run_id_column", "target", &line, &col);
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (named[i].val && strcasecmp(named[i].val, rid) == 0)
      return perr(c, line, col, "target.run_id_column: column '%s' is also %s%s", rid, named[i].key,
                  given(c, named[i].key) ? "" : " (its default)");
  for (int i = 0; i < 3; i++)
    if (list_find(lists[i].l, rid))
      return perr(c, line, col, "target.run_id_column: column '%s' is also in %s", rid, lists[i].name);
  return 0;
}

/* upsert compares a reread row with the stored row's lmd: the table must
 * hold it. */
static int check_upsert_lookback(pctx *c)
{
  const dwl_spec *s = c->s;
  int line, col;
  if (s->mode != MODE_UPSERT || s->lookback_us <= 0)
    return 0;
  ssize_t to = spec_list_index(&s->rename_to, s->lmd);
  const char *src = to >= 0 ? s->rename_from.v[to] : s->lmd;
  if (spec_col_kept(s, src))
    return 0;
  key_pos(c, "load.lookback", NULL, &line, &col);
  return perr(c, line, col, "load.lookback: mode upsert compares a reread row with the stored row's lmd, but the "
              "lmd column '%s' is kept out of the table by columns:", src);
}

/* load.ignore_null_updates: which modes, and which columns may be listed. */
static int check_ignore_nulls(pctx *c)
{
  const dwl_spec *s = c->s;
  int line, col;
  const char *key = "load.ignore_null_updates";
  if (!s->ignore_nulls)
    return 0;
  key_pos(c, key, NULL, &line, &col);
  if (s->mode != MODE_SCD2 && s->mode != MODE_UPSERT)
    return perr(c, line, col, "%s applies only to modes scd2 and upsert (mode is %s)", key,
                spec_mode_names[s->mode]);
  /* A late row's NULLs would take the current version's values, not those
   * of the version it lands in. */
  if (s->mode == MODE_SCD2 && s->lookback_us > 0)
    return perr(c, line, col, "%s: mode scd2 with load.lookback is not supported (a late row would take the "
                "current version's values); remove one of them", key);
  for (size_t i = 0; i < s->ignore_null_cols.n; i++) {
    const char *n = s->ignore_null_cols.v[i];
    const char *role = list_find(&s->key, n) ? "load.key" : s->lmd && strcasecmp(s->lmd, n) == 0 ? "load.lmd"
                       : s->deletes == DEL_COLUMN && strcasecmp(s->delete_column, n) == 0 ? "load.deletes.column"
                       : NULL;
    if (role)
      return perr(c, line, col, "%s: column '%s' is %s, which is never carried over", key, n, role);
  }
  return 0;
}

int check_cross(pctx *c)
{
  dwl_spec *s = c->s;
  int line, col;
  const char *mode = spec_mode_names[s->mode];
  if ((s->mode == MODE_SCD2 || s->mode == MODE_UPSERT) && s->key.n == 0) {
    if (given(c, "load.key")) {
      key_pos(c, "load.key", NULL, &line, &col);
      return perr(c, line, col, "load.key: mode %s requires at least one key column", mode);
    }
    key_pos(c, "load.mode", "load", &line, &col);
    return perr(c, line, col, "load: mode %s requires key (the business key columns)", mode);
  }
  /* (scd2 without an lmd is a snapshot load: the load's time dates it.) */
  static const char *const need_lmd[] = {"load.lookback", "load.watermark", NULL};
  for (int i = 0; !s->lmd && need_lmd[i]; i++) {
    if (!given(c, need_lmd[i]))
      continue;
    key_pos(c, need_lmd[i], NULL, &line, &col);
    return perr(c, line, col, "%s requires load.lmd (without one no checkpoint skips any row)", need_lmd[i]);
  }
  if (s->lmd_format && !s->lmd) {
    key_pos(c, "load.lmd_format", NULL, &line, &col);
    return perr(c, line, col, "load.lmd_format requires load.lmd");
  }
  if (given(c, "load.future_tolerance") && !s->lmd) {
    key_pos(c, "load.future_tolerance", NULL, &line, &col);
    return perr(c, line, col, "load.future_tolerance requires load.lmd (it bounds the lmd's values)");
  }
  if (s->mode != MODE_SCD2) {
    static const char *const scd2_only[] = {"load.type2", "load.type1", "load.type1_scope",
                                            "load.delete_style", NULL};
    for (int i = 0; scd2_only[i]; i++) {
      if (!given(c, scd2_only[i]))
        continue;
      key_pos(c, scd2_only[i], NULL, &line, &col);
      return perr(c, line, col, "%s applies only to mode scd2 (mode is %s)", scd2_only[i],
                  mode);
    }
  }
  if (s->deletes != DEL_NONE && s->mode != MODE_SCD2 && s->mode != MODE_UPSERT) {
    key_pos(c, "load.deletes", NULL, &line, &col);
    return perr(c, line, col, "load.deletes applies only to modes scd2 and upsert (mode is %s)",
                mode);
  }
  /* Only these modes have an engine to choose. */
  if (s->engine == ENGINE_AUTO && s->mode != MODE_SCD2 && s->mode != MODE_UPSERT) {
    key_pos(c, "load.engine", NULL, &line, &col);
    return perr(c, line, col, "load.engine: auto applies only to modes scd2 and upsert (mode is %s)", mode);
  }
  if (s->lookup != LOOKUP_AUTO && s->mode != MODE_SCD2 && s->mode != MODE_UPSERT) {
    key_pos(c, "load.lookup", NULL, &line, &col);
    return perr(c, line, col, "load.lookup applies only to modes scd2 and upsert (mode is %s)", mode);
  }
  /* Judging absence needs every current key, so it cannot look up only some. */
  if (s->lookup == LOOKUP_KEYS && s->deletes == DEL_ABSENT) {
    key_pos(c, "load.lookup", NULL, &line, &col);
    return perr(c, line, col, "load.lookup: keys cannot judge deletes: absent (it needs every current key); use scan");
  }
  /* Rereading rows is safe only where rows already loaded are no-ops:
   * scd2's history, or upsert's stored lmd, which an older row never
   * overwrites. */
  static const char *const late_keys[] = {"load.lookback", "load.late", NULL};
  for (int i = 0; late_keys[i]; i++) {
    if (!given(c, late_keys[i]) || (s->mode == MODE_UPSERT && s->lmd) || s->mode == MODE_SCD2)
      continue;
    key_pos(c, late_keys[i], NULL, &line, &col);
    if (s->mode == MODE_UPSERT)
      return perr(c, line, col, "%s in mode upsert requires load.lmd (a row is late by it)", late_keys[i]);
    return perr(c, line, col, "%s applies only to modes scd2 and upsert (mode is %s)", late_keys[i], mode);
  }
  if (given(c, "load.watermark") && s->mode != MODE_SCD2) {
    key_pos(c, "load.watermark", NULL, &line, &col);
    return perr(c, line, col, "load.watermark applies only to mode scd2 (mode is %s)", mode);
  }
  if (check_upsert_lookback(c) != 0 || check_ignore_nulls(c) != 0)
    return -1;
  /* No row is skipped, so there is no window before the checkpoint to reread. */
  if (s->watermark == WATERMARK_NONE && given(c, "load.lookback")) {
    key_pos(c, "load.lookback", NULL, &line, &col);
    return perr(c, line, col, "load.lookback does not apply with load.watermark: none (no row is skipped)");
  }
  /* A tombstone is told from a live version only by the deleted flag. */
  if (s->mode == MODE_SCD2 && s->delete_style == DELSTYLE_TOMBSTONE && !s->deleted) {
    key_pos(c, "load.delete_style", NULL, &line, &col);
    return perr(c, line, col, "load.delete_style: tombstone needs a deleted column (dimension.deleted is null)");
  }
  if (s->max_rejects > 0 && !s->reject_file) {
    key_pos(c, "load.max_rejects", NULL, &line, &col);
    return perr(c, line, col, "load.max_rejects: rejected rows need a place to go: set load.reject_file");
  }
  /* The guards of deletions by absence (guard.c): where nothing is deleted
   * for being missing from the source, they would guard nothing. */
  if (given(c, "load.max_deletes") && s->deletes != DEL_ABSENT && s->truncate_values.n == 0) {
    key_pos(c, "load.max_deletes", NULL, &line, &col);
    return perr(c, line, col, "load.max_deletes applies only with deletes: absent or truncate_values");
  }
  if (s->truncate_values.n > 0 && !s->lmd) {
    key_pos(c, "load.deletes.truncate_values", "load.deletes", &line, &col);
    return perr(c, line, col, "load.deletes.truncate_values needs load.lmd (a truncate deletes as of its row's lmd)");
  }
  /* A tombstone carries the last version's values, which a key whose rows
   * all come after the truncate has only in the table, unread. */
  if (s->truncate_values.n > 0 && s->mode == MODE_SCD2 && s->delete_style == DELSTYLE_TOMBSTONE) {
    key_pos(c, "load.deletes.truncate_values", "load.deletes", &line, &col);
    return perr(c, line, col, "load.deletes.truncate_values: a truncate is not written as tombstones "
                "(delete_style: tombstone); use delete_style: expire");
  }
  if (s->lookup == LOOKUP_KEYS && s->truncate_values.n > 0) {
    key_pos(c, "load.lookup", NULL, &line, &col);
    return perr(c, line, col, "load.lookup: keys cannot apply a truncate (it needs every current key); use scan");
  }
  if (s->partition.n > 0 && s->deletes != DEL_ABSENT) {
    key_pos(c, "load.partition", NULL, &line, &col);
    return perr(c, line, col, "load.partition applies only with deletes: absent (it says which keys absence judges)");
  }
  if (given(c, "load.allow_empty") && s->deletes != DEL_ABSENT && s->mode != MODE_REPLACE) {
    key_pos(c, "load.allow_empty", NULL, &line, &col);
    return perr(c, line, col, "load.allow_empty applies only with deletes: absent or mode replace (mode is %s)",
                mode);
  }
  if (s->null_keys == NULLKEYS_REJECT && s->key.n == 0) {
    key_pos(c, "load.null_keys", NULL, &line, &col);
    return perr(c, line, col, "load.null_keys: reject needs load.key");
  }
  /* What pushdown cannot compute as the memory engine does is refused here,
   * never left to differ. */
  const char *why = s->engine == ENGINE_PUSHDOWN ? engine_pushdown_refusal(s) : NULL;
  if (why) {
    key_pos(c, "load.engine", NULL, &line, &col);
    return perr(c, line, col, "load.engine: pushdown %s", why);
  }
  if (check_columns(c) != 0 || check_lists(c) != 0 || check_bookkeeping(c) != 0)
    return -1;
  return check_run_id_column(c) != 0 ? -1 : check_partition_by(c);
}
