/* The checks of columns: (include, exclude, rename) that need only the
 * job file: include and exclude together, a rename of a column that does
 * not reach the table, and the load keys against the table's names.  The
 * rule (dwload-job(5), columns): load.key, type1, type2 and partition name columns of
 * the table, so a renamed column by its new name; load.lmd and
 * load.deletes.column may also name a column kept out of the table, by its
 * source name, since the engine still reads it.  What needs the source's
 * columns is checked when it opens (source/columns.c). */
#include "spec_read.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

ssize_t spec_list_index(const spec_list *l, const char *name)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcasecmp(l->v[i], name) == 0)
      return (ssize_t)i;
  return -1;
}

int spec_col_kept(const dwl_spec *s, const char *source_name)
{
  if (s->col_include_given)
    return spec_list_index(&s->col_include, source_name) >= 0;
  return spec_list_index(&s->col_exclude, source_name) < 0;
}

/* Why source column `src` does not reach the table, for messages. */
static const char *why_out(const dwl_spec *s)
{
  return s->col_include_given ? "is not in columns.include" : "is in columns.exclude";
}

/* A name of a load key: a renamed column's old name is refused (the key
 * names the table's column); with `table_only`, so is a column kept out of
 * the table. */
static int check_role(pctx *c, const char *key, const char *name, int table_only)
{
  const dwl_spec *s = c->s;
  int line, col;
  ssize_t from = spec_list_index(&s->rename_from, name);
  if (from >= 0 && spec_list_index(&s->rename_to, name) < 0) {
    key_pos(c, key, NULL, &line, &col);
    return perr(c, line, col, "%s: column '%s' is renamed to '%s' by columns.rename; %s names it '%s'", key, name,
                s->rename_to.v[from], key, s->rename_to.v[from]);
  }
  ssize_t to = spec_list_index(&s->rename_to, name);
  const char *src = to >= 0 ? s->rename_from.v[to] : name;
  if (table_only && !spec_col_kept(s, src)) {
    key_pos(c, key, NULL, &line, &col);
    return perr(c, line, col, "%s: column '%s' %s, but %s names columns of the table", key, src, why_out(s), key);
  }
  return 0;
}

int check_columns(pctx *c)
{
  const dwl_spec *s = c->s;
  int line, col;
  if (s->col_include_given && s->col_exclude.n) {
    int la, ca, lb, cb;
    key_pos(c, "columns.include", NULL, &la, &ca);
    key_pos(c, "columns.exclude", NULL, &lb, &cb);
    int b_later = lb > la || (lb == la && cb > ca);
    return perr(c, b_later ? lb : la, b_later ? cb : ca,
                "columns.%s: give columns.include or columns.exclude, not both", b_later ? "exclude" : "include");
  }
  for (size_t i = 0; i < s->rename_from.n; i++) {
    if (spec_col_kept(s, s->rename_from.v[i]))
      continue;
    char at[300];
    snprintf(at, sizeof at, "columns.rename.%s", s->rename_from.v[i]);
    key_pos(c, at, "columns.rename", &line, &col);
    return perr(c, line, col, "columns.rename: column '%s' %s, so it has no name in the table", s->rename_from.v[i],
                why_out(s));
  }
  const struct {
    const char *key;
    const spec_list *l;
  } lists[4] = {{"load.key", &s->key}, {"load.type2", &s->type2}, {"load.type1", &s->type1},
                {"load.partition", &s->partition}};
  for (int a = 0; a < 4; a++)
    for (size_t i = 0; i < lists[a].l->n; i++)
      if (check_role(c, lists[a].key, lists[a].l->v[i], 1) != 0)
        return -1;
  if (s->lmd && check_role(c, "load.lmd", s->lmd, 0) != 0)
    return -1;
  if (s->delete_column && check_role(c, "load.deletes.column", s->delete_column, 0) != 0)
    return -1;
  return 0;
}
