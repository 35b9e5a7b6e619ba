/* Row preparation: a source row as the engine takes it.  Each value is
 * checked and normalized by its column's declared type (and against what
 * an existing target column can take), the lmd parsed into the table's
 * canonical form, and a bad row described so the run can set it aside or
 * fail.  Also the source's configuration as the job spec gives it. */
#include "prepare.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "norm.h"
#include "scd.h"

source_config source_config_for(const dwl_spec *spec, const char *checkpoint)
{
  source_config cfg = {
    .plugin = spec->source_plugin,
    .opts = spec->source_opts,
    .nopts = spec->n_source_opts,
    .spec_path = spec->path,
    .include_path = spec->include,
    .base_dir = spec->dir,
    .job = spec->job,
    .lmd_column = columns_source_name(spec, spec->lmd),
    .spec = spec,
    .checkpoint = checkpoint,
  };
  return cfg;
}

/* A composite lmd's tie-breakers: source columns the source declares an
 * integer, a date or a timestamp, compared as such; text is refused (its
 * order would be the text's: '9' after '10'). */
static int prep_ties_init(prep *p, const dwl_spec *spec, dwl_error *err)
{
  for (size_t k = 0; k < spec->lmd_ties.n; k++) {
    const char *name = spec->lmd_ties.v[k];
    char at[300];
    int line = 0, col = 0;
    snprintf(at, sizeof at, "load.lmd[%s]", name);
    const char *file = spec_key_at(spec, at, &line, &col);
    ssize_t i = scd_col_index(p->cols, p->ncols, name);
    if (i < 0)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: load.lmd: column '%s' is not in the source",
                      file, line, col, name);
    int type = p->cols[i].type;
    if (type != DWL_TYPE_INTEGER && type != DWL_TYPE_DATE && type != DWL_TYPE_TIMESTAMP)
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC,
                      "%s:%d:%d: load.lmd: the tie-breaking column '%s' is not an integer, a date or a timestamp "
                      "(declare its type, such as source.types: {%s: integer}): it would order as text",
                      file, line, col, name, name);
    p->ties[k] = (size_t)i;
    if (type != DWL_TYPE_INTEGER)
      p->tie_time |= 1u << k;
  }
  p->nties = (int)spec->lmd_ties.n;
  return 0;
}

int prep_init(prep *p, const dwl_spec *spec, const dwl_source *src, dwl_error *err)
{
  memset(p, 0, sizeof *p);
  p->spec = spec;
  p->cols = src->cols;
  p->ncols = src->ncols;
  p->lmd = -1;
  if (spec->lmd) {
    p->lmd = scd_col_index(src->cols, src->ncols, spec->lmd);
    if (p->lmd < 0) {
      int line = 0, col = 0;
      const char *file = spec_key_at(spec, "load.lmd", &line, &col);
      return err_setc(err, DWL_EXIT_USAGE, DWL_CAUSE_SPEC, "%s:%d:%d: load.lmd: column '%s' is not in the source",
                      file, line, col, spec->lmd);
    }
  }
  if (prep_ties_init(p, spec, err) != 0)
    return -1;
  p->row = calloc(p->ncols, sizeof *p->row);
  p->scratch = calloc(p->ncols, sizeof *p->scratch);
  if (!p->row || !p->scratch)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (size_t i = 0; i < p->ncols; i++)
    buf_init(&p->scratch[i], 0);
  snprintf(p->origin_name, sizeof p->origin_name, "%s", src->origin_name);
  if (spec->null_keys == NULLKEYS_REJECT) {
    if (!(p->nokey = calloc(spec->key.n, sizeof *p->nokey)))
      return err_set(err, DWL_EXIT_FAILED, "out of memory");
    for (size_t i = 0; i < spec->key.n; i++) {
      ssize_t ix = scd_col_index(src->cols, src->ncols, spec->key.v[i]);
      if (ix >= 0)  /* an unknown key column is reported by the engine */
        p->nokey[p->nnokey++] = (size_t)ix;
    }
  }
  return 0;
}

void prep_free(prep *p)
{
  for (size_t i = 0; p->scratch && i < p->ncols; i++)
    buf_free(&p->scratch[i]);
  free(p->scratch);
  free(p->row);
  free(p->nokey);
}

/* A bad row: why, without its position (the caller adds it).  Returns 1. */
static int bad_row(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad_row(char *why, size_t n, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return 1;
}

int prep_bad_value(const prep *p, size_t col, const dwl_value *v, const char *what, char *why, size_t n)
{
  char q[300];
  return bad_row(why, n, "column '%s': '%s' %s", p->cols[col].name, err_quote(q, sizeof q, v->data, v->len, 60),
                 what);
}

/* Characters of UTF-8 text (the CSV plugin has checked it is UTF-8):
 * every byte that does not continue a sequence. */
static size_t utf8_chars(const char *s, size_t len)
{
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

/* A value target_value_fits found its column cannot take (*w says why,
 * maybe in fit): one a wider column would hold widens it with
 * schema.widen: widen (target_widen applies it before the writes), and
 * fits (0); else the row is bad (1), and with schema.widen: fail the
 * message names the type the value needs. */
static int too_narrow(prep *p, size_t i, const char *v, size_t len, const char **w, char *fit, size_t n)
{
  char need[64], have[64];
  int widen = p->spec->widen == WIDEN_WIDEN;
  if (!target_widen_value(p->t, i, v, len, widen, need, have, sizeof need))
    return 1;
  if (widen)
    return 0;
  if (*w != fit)
    snprintf(fit, n, "%s", *w);
  size_t l = strlen(fit);
  snprintf(fit + l, n - l, "; the column is %s, the value needs %s (schema.widen: fail)", have, need);
  *w = fit;
  return 1;
}

/* A composite lmd's tie-breakers into *lmd, from the normalized row. */
static int prep_ties(prep *p, dwl_ts *lmd, char *why, size_t whylen)
{
  lmd->nties = p->nties;
  lmd->tie_time = p->tie_time;
  for (int k = 0; k < p->nties; k++) {
    size_t i = p->ties[k];
    const dwl_value *v = &p->row[i];
    dwl_ts t;
    if (v->is_null)
      return bad_row(why, whylen, "the lmd column '%s' (a tie-breaker of load.lmd) is NULL", p->cols[i].name);
    if (((p->tie_time >> k) & 1) ? ts_parse(v->data, v->len, &t) != 0 : ts_parse_seq(v->data, v->len, &t) != 0)
      return prep_bad_value(p, i, v, "is not a 64-bit integer or a timestamp (a tie-breaker of load.lmd)", why,
                            whylen);
    lmd->tie[k] = t.us;
  }
  return 0;
}

/* Normalizes one source row into p->row and parses its lmd.  Returns 0,
 * 1 for a bad row (why says what is wrong: the run rejects it or fails),
 * or -1 with err set. */
int prep_row(prep *p, const dwl_value *in, dwl_ts *lmd, char *why, size_t whylen, dwl_error *err)
{
  for (size_t i = 0; i < p->nnokey; i++)
    if (in[p->nokey[i]].is_null)
      return bad_row(why, whylen, "key column '%s' is NULL (load.null_keys: reject)", p->cols[p->nokey[i]].name);
  for (size_t i = 0; i < p->ncols; i++) {
    const dwl_value *v = &in[i];
    p->row[i] = *v;
    if (v->is_null) {
      if ((ssize_t)i == p->lmd)
        return bad_row(why, whylen, "the lmd column '%s' is NULL", p->cols[i].name);
      continue;
    }
    if ((ssize_t)i == p->lmd && p->t->vseq) {
      /* An integer sequence: its canonical integer text, compared as one. */
      const char *w;
      if (norm_value_col(&p->cols[i], v->data, v->len, &p->scratch[i], &p->row[i].data, &p->row[i].len, &w) != 0)
        return prep_bad_value(p, i, v, w, why, whylen);
      if (ts_parse_seq(p->row[i].data, p->row[i].len, lmd) != 0)
        return prep_bad_value(p, i, v, "is not a 64-bit integer sequence value", why, whylen);
      continue;
    }
    if ((ssize_t)i == p->lmd) {
      int rc = p->spec->lmd_format ? ts_parse_format(v->data, v->len, p->spec->lmd_format, lmd)
                                   : ts_parse(v->data, v->len, lmd);
      if (rc != 0)
        return prep_bad_value(p, i, v,
                         p->spec->lmd_format ? "does not match load.lmd_format" : "is not an ISO 8601 timestamp",
                         why, whylen);
      if (p->t->vdate && lmd->us % DWL_US_PER_DAY != 0)
        return prep_bad_value(p, i, v, "has a time of day, but the column is declared a date", why, whylen);
      dwl_buf *b = &p->scratch[i];
      buf_reset(b);
      if (buf_grow(b, 32) != 0)
        return err_set(err, DWL_EXIT_FAILED, "out of memory");
      b->len = target_ts_text(p->t, lmd, b->data);
      p->row[i].data = b->data;
      p->row[i].len = b->len;
      continue;
    }
    const char *w;
    char fit[400];
    if (p->cols[i].type == DWL_TYPE_TEXT && target_value_fits(p->t, i, v->data, v->len, &w, fit, sizeof fit) != 0 &&
        too_narrow(p, i, v->data, v->len, &w, fit, sizeof fit))
      return prep_bad_value(p, i, v, w, why, whylen);
    if (p->cols[i].type == DWL_TYPE_TEXT) {
      /* Longer than varchar(n): PostgreSQL would fail the run, MariaDB
       * (strict) too, SQLite would keep it; the same rule everywhere. */
      if (p->cols[i].precision > 0 && v->len > (size_t)p->cols[i].precision &&
          utf8_chars(v->data, v->len) > (size_t)p->cols[i].precision) {
        char what[80];
        snprintf(what, sizeof what, "is longer than the column's %d characters", p->cols[i].precision);
        return prep_bad_value(p, i, v, what, why, whylen);
      }
      continue;
    }
    if (norm_value_col(&p->cols[i], v->data, v->len, &p->scratch[i], &p->row[i].data, &p->row[i].len, &w) != 0)
      return prep_bad_value(p, i, v, w, why, whylen);
    int fits = target_value_fits(p->t, i, p->row[i].data, p->row[i].len, &w, fit, sizeof fit);
    if (fits > 0 && !too_narrow(p, i, p->row[i].data, p->row[i].len, &w, fit, sizeof fit))
      fits = 0;
    if (fits > 0)
      return prep_bad_value(p, i, v, w, why, whylen);
    /* Not the row's fault but the table's: every row like it would be
     * rounded, so the run fails rather than setting rows aside. */
    if (fits < 0) {
      prep_bad_value(p, i, v, w, why, whylen);
      return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_SCHEMA, "%s; %s", why, fit);
    }
  }
  return p->nties ? prep_ties(p, lmd, why, whylen) : 0;
}

/* The key of a rejected row, normalized as prep_row would (into p->row,
 * the other columns NULL), so that the row still counts as present for
 * deletes: absent.  Returns 0, or 1 when a key value cannot be read. */
int prep_key(prep *p, const size_t *key, size_t nkey, const dwl_value *in)
{
  for (size_t i = 0; i < p->ncols; i++)
    p->row[i] = (dwl_value){NULL, 0, 1};
  for (size_t k = 0; k < nkey; k++) {
    size_t i = key[k];
    p->row[i] = in[i];
    const char *w;
    if (!in[i].is_null && p->cols[i].type != DWL_TYPE_TEXT &&
        norm_value_col(&p->cols[i], in[i].data, in[i].len, &p->scratch[i], &p->row[i].data, &p->row[i].len, &w) != 0)
      return 1;
  }
  return 0;
}
