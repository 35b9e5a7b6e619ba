/* Unit tests for the job spec's key table (src/spec/spec_keys.h): every
 * declared key is an item of dwload-job(5) under its section, with its
 * allowed values and its default; every declared default is what the
 * parser gives when the key is left out; the table is well formed.  The
 * table is printed first, as TAP comments, for the reader of the log. */
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "spec.h"
#include "spec_keys.h"

#ifndef DWL_TOP_SRCDIR
#define DWL_TOP_SRCDIR "."
#endif

/* ---- dwload-job(5) as lines, roff escapes undone -------------------------------- */

static char **g_man;
static size_t g_nman;

static void unescape(char *s)
{
  char *o = s;
  for (const char *p = s; *p;) {
    if (p[0] == '\\' && p[1] == '-') {
      *o++ = '-';
      p += 2;
    } else if (p[0] == '\\' && p[1] == '&') {
      p += 2;
    } else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
      p += 3;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
}

static void man_load(void)
{
  const char *top = getenv("TOP_SRCDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/man/dwload-job.5", top && *top ? top : DWL_TOP_SRCDIR);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    unescape(line);
    char **nv = realloc(g_man, (g_nman + 1) * sizeof *nv);
    ck_assert_ptr_nonnull(nv);
    g_man = nv;
    g_man[g_nman] = strdup(line);
    ck_assert_ptr_nonnull(g_man[g_nman]);
    g_nman++;
  }
  fclose(f);
}

static void man_free(void)
{
  for (size_t i = 0; i < g_nman; i++)
    free(g_man[i]);
  free(g_man);
  g_man = NULL;
  g_nman = 0;
}

static int is_macro(const char *line, const char *m)
{
  size_t n = strlen(m);
  return strncmp(line, m, n) == 0 && (line[n] == '\0' || line[n] == ' ');
}

/* Where a range of lines ends: at the next line of any of the macros. */
static size_t range_end(size_t from, const char *const *enders)
{
  for (size_t i = from; i < g_nman; i++)
    for (size_t j = 0; enders[j]; j++)
      if (is_macro(g_man[i], enders[j]))
        return i;
  return g_nman;
}

/* Lines [*a, *b) of ".SS heading" inside ".SH KEYS"; 0 when absent. */
static int man_subsection(const char *heading, size_t *a, size_t *b)
{
  static const char *const sh[] = {".SH", NULL};
  static const char *const ss[] = {".SS", ".SH", NULL};
  size_t keys = g_nman;
  for (size_t i = 0; i < g_nman && keys == g_nman; i++)
    if (strcmp(g_man[i], ".SH KEYS") == 0)
      keys = i;
  size_t end = range_end(keys + 1, sh);
  for (size_t i = keys + 1; i < end; i++) {
    /* ".SS" and a space before the heading: a shorter line ends first. */
    if (!is_macro(g_man[i], ".SS") || strlen(g_man[i]) < 4)
      continue;
    const char *h = g_man[i] + 4;
    size_t n = strlen(heading);
    int quoted = h[0] == '"';
    if (strncmp(h + quoted, heading, n) == 0 && h[quoted + n] == (quoted ? '"' : '\0')) {
      *a = i + 1;
      *b = range_end(i + 1, ss);
      return 1;
    }
  }
  return 0;
}

/* The first word of a .B/.BR/.BI/.IR line ("" for other lines). */
static void first_word(const char *line, char *out, size_t n)
{
  out[0] = '\0';
  if (!is_macro(line, ".B") && !is_macro(line, ".BR") && !is_macro(line, ".BI") && !is_macro(line, ".IR"))
    return;
  const char *p = strchr(line, ' ');
  if (!p)
    return;
  p += strspn(p, " \"");
  size_t len = strcspn(p, " \"");
  snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

/* The item ".TP\n.B name" in lines [a, b): its lines [*ia, *ib). */
static int man_item(size_t a, size_t b, const char *name, size_t *ia, size_t *ib)
{
  static const char *const enders[] = {".TP", ".PP", ".SS", ".SH", NULL};
  char want[256];
  snprintf(want, sizeof want, ".B %s", name);
  for (size_t i = a; i + 1 < b; i++) {
    if (strcmp(g_man[i], ".TP") == 0 && strcmp(g_man[i + 1], want) == 0) {
      *ia = i + 1;
      *ib = range_end(i + 2, enders);
      if (*ib > b)
        *ib = b;
      return 1;
    }
  }
  return 0;
}

/* The line of [a, b) whose first word (of a bold line) is `word`, or b. */
static size_t man_bold(size_t a, size_t b, const char *word)
{
  char w[256];
  for (size_t i = a; i < b; i++) {
    first_word(g_man[i], w, sizeof w);
    if (strcmp(w, word) == 0)
      return i;
  }
  return b;
}

static int word_char(char ch)
{
  return ch == '_' || ch == '%' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* `word` is a word of lines [a, b): letters, digits, '_' and '%'. */
static int man_has_word(size_t a, size_t b, const char *word)
{
  size_t n = strlen(word);
  for (size_t i = a; i < b; i++)
    for (const char *p = strstr(g_man[i], word); p; p = strstr(p + 1, word))
      if ((p == g_man[i] || !word_char(p[-1])) && !word_char(p[n]))
        return 1;
  return 0;
}

/* The key of the table that holds section `sec`, and the section it is
 * in; NULL for the top level. */
static const spec_key *parent_of(const spec_section *sec, const spec_section **in)
{
  for (size_t i = 0; spec_sections[i]; i++)
    for (size_t j = 0; j < spec_sections[i]->n; j++)
      if (spec_sections[i]->keys[j].sub == sec) {
        *in = spec_sections[i];
        return &spec_sections[i]->keys[j];
      }
  return NULL;
}

static void dotted(const spec_section *sec, const spec_key *k, char *out, size_t n)
{
  snprintf(out, n, "%s%s%s", sec->name ? sec->name : "", sec->name ? "." : "", k->name);
}

/* ---- the table as documentation ------------------------------------------------ */

START_TEST(test_every_key_is_documented)
{
  man_load();
  for (size_t i = 0; spec_sections[i]; i++) {
    const spec_section *sec = spec_sections[i];
    size_t a, b;
    const char *heading = sec->man;
    const spec_section *in = NULL;
    const spec_key *parent = NULL;
    if (!heading) {
      /* Keys of a nested mapping are described in its key's item. */
      parent = parent_of(sec, &in);
      ck_assert_msg(parent && in->man, "section %s has no man section and no documented parent", sec->name);
      heading = in->man;
    }
    ck_assert_msg(man_subsection(heading, &a, &b), "dwload-job(5) has no .SS %s under KEYS", heading);
    if (parent)
      ck_assert_msg(man_item(a, b, parent->name, &a, &b), "dwload-job(5) has no item %s in %s", parent->name, heading);
    for (size_t j = 0; j < sec->n; j++) {
      const spec_key *k = &sec->keys[j];
      char name[128];
      size_t ia, ib;
      dotted(sec, k, name, sizeof name);
      if (parent) {
        ck_assert_msg(man_bold(a, b, k->name) < b, "dwload-job(5): %s is not named (.B %s) in the item of %s",
                      name, k->name, parent->name);
        continue;
      }
      ck_assert_msg(man_item(a, b, k->name, &ia, &ib),
                    "dwload-job(5): %s is not documented: no \".TP\" + \".B %s\" item in .SS %s", name, k->name,
                    heading);
      for (size_t v = 0; k->values && k->values[v]; v++)
        ck_assert_msg(man_bold(ia, ib, k->values[v]) < ib, "dwload-job(5): %s does not name its value %s",
                      name, k->values[v]);
      if (!k->def)
        continue;
      ck_assert_msg(man_has_word(ia, ib, k->def), "dwload-job(5): %s does not give its default %s", name, k->def);
      /* A keyword's default is marked where the keyword is listed (after
       * the item's heading, which a default may share: schema.widen). */
      if (k->type == SPEC_T_ENUM || k->type == SPEC_T_BOOL) {
        size_t at = man_bold(ia + 1, ib, k->def);
        ck_assert_msg(at < ib && strstr(g_man[at], "(default)"),
                      "dwload-job(5): %s: its default %s is not marked \"(default)\"", name, k->def);
      }
    }
  }
  man_free();
}
END_TEST

START_TEST(test_table_is_well_formed)
{
  for (size_t i = 0; spec_sections[i]; i++) {
    const spec_section *sec = spec_sections[i];
    ck_assert_msg(sec->n > 0 && sec->n <= SPEC_MAX_SECTION_KEYS, "section %s: %zu keys", sec->where, sec->n);
    ck_assert_ptr_nonnull(sec->where);
    for (size_t j = 0; j < sec->n; j++) {
      const spec_key *k = &sec->keys[j];
      ck_assert_msg(k->help && *k->help, "%s has no help", k->name);
      for (size_t m = j + 1; m < sec->n; m++)
        ck_assert_msg(strcmp(k->name, sec->keys[m].name) != 0, "%s is declared twice", k->name);
      ck_assert_msg((k->type == SPEC_T_MAPPING) == (k->offset == SPEC_NO_FIELD) || k->type == SPEC_T_INT,
                    "%s: only a mapping or the version has no field", k->name);
      ck_assert_msg(k->type != SPEC_T_MAPPING || k->sub, "%s: a mapping without keys", k->name);
      ck_assert_msg(k->type != SPEC_T_ENUM || k->values, "%s: an enum without values", k->name);
      ck_assert_msg(strcmp(spec_type_name(k->type), "?") != 0, "%s: unnamed type", k->name);
      /* A spec starts zeroed, so an enum's default must be its first name
       * unless the parser sets another. */
      if (k->type == SPEC_T_ENUM && k->def)
        ck_assert_msg(strcmp(k->values[0], k->def) == 0, "%s: default %s is not its first value %s", k->name,
                      k->def, k->values[0]);
    }
  }
}
END_TEST

/* ---- the declared defaults are the parser's --------------------------------------- */

/* Base jobs with a hole ("@section") per mapping for one more key; a key
 * is tried in each until one takes it both with and without that key. */
static const char *const bases[] = {
  "@\njob: j\nsource:\n  plugin: csv\n@source\ntarget:\n  connection: c\n  table: t\n@target\n"
  "load:\n@load\ndimension:\n@dimension\n",
  "@\njob: j\nsource:\n  plugin: csv\n@source\ntarget:\n  connection: c\n  table: t\n@target\n"
  "load:\n  mode: scd2\n  lmd: u\n  key: [id]\n  deletes: absent\n@load\ndimension:\n@dimension\n",
  /* target.partitions needs target.partition_by */
  "@\njob: j\nsource:\n  plugin: csv\n@source\ntarget:\n  connection: c\n  table: t\n  partition_by: [id]\n@target\n"
  "load:\n  mode: scd2\n  lmd: u\n  key: [id]\n@load\ndimension:\n@dimension\n",
};

/* bases[b] with "KEY: DEF" in section sec (or nowhere when k is NULL). */
static void make_job(char *out, size_t n, size_t b, const spec_section *sec, const spec_key *k)
{
  char hole[64];
  snprintf(hole, sizeof hole, "@%s\n", k && sec->name ? sec->name : "");
  size_t used = 0;
  for (const char *p = bases[b]; *p && used + 1 < n;) {
    if (*p != '@') {
      out[used++] = *p++;
      continue;
    }
    size_t len = strcspn(p, "\n") + 1;
    if (k && strncmp(p, hole, strlen(hole)) == 0)
      used += (size_t)snprintf(out + used, n - used, "%s%s: %s\n", sec->name ? "  " : "", k->name, k->def);
    p += len;
  }
  out[used < n ? used : n - 1] = '\0';
}

static int same_field(const spec_key *k, const dwl_spec *a, const dwl_spec *b)
{
  const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;
  switch (k->type) {
  case SPEC_T_STRING: {
    const char *sa = *(char *const *)fa, *sb = *(char *const *)fb;
    return sa == sb || (sa && sb && strcmp(sa, sb) == 0);
  }
  case SPEC_T_BOOL:
  case SPEC_T_ENUM: return *(const int *)fa == *(const int *)fb;
  case SPEC_T_COUNT:
  case SPEC_T_DURATION: return *(const long long *)fa == *(const long long *)fb;
  case SPEC_T_LIMIT: {
    const spec_limit *la = (const spec_limit *)fa, *lb = (const spec_limit *)fb;
    return la->kind == lb->kind && la->value == lb->value;
  }
  default: return 0;
  }
}

START_TEST(test_defaults_are_the_parsers)
{
  for (size_t i = 0; spec_sections[i]; i++) {
    const spec_section *sec = spec_sections[i];
    for (size_t j = 0; j < sec->n; j++) {
      const spec_key *k = &sec->keys[j];
      if (!k->def)
        continue;
      int checked = 0;
      for (size_t b = 0; b < sizeof bases / sizeof bases[0] && !checked; b++) {
        char with[1024], without[1024];
        dwl_error e1, e2;
        make_job(with, sizeof with, b, sec, k);
        make_job(without, sizeof without, b, sec, NULL);
        err_init(&e1);
        err_init(&e2);
        dwl_spec *sw = spec_parse("/t/job.yaml", with, strlen(with), &e1);
        dwl_spec *so = spec_parse("/t/job.yaml", without, strlen(without), &e2);
        if (sw && so) {
          checked = 1;
          ck_assert_msg(k->offset == SPEC_NO_FIELD || same_field(k, sw, so),
                        "%s%s%s: the declared default %s is not the parser's", sec->name ? sec->name : "",
                        sec->name ? "." : "", k->name, k->def);
        }
        spec_free(sw);
        spec_free(so);
      }
      ck_assert_msg(checked, "no base job takes %s: %s", k->name, k->def);
    }
  }
}
END_TEST

/* The table, for the log: "# load.mode  one of  default append  (append,
 * replace, scd2, upsert)  how rows are loaded". */
static void print_table(void)
{
  for (size_t i = 0; spec_sections[i]; i++) {
    const spec_section *sec = spec_sections[i];
    for (size_t j = 0; j < sec->n; j++) {
      const spec_key *k = &sec->keys[j];
      char name[128], vals[256] = "";
      dotted(sec, k, name, sizeof name);
      for (size_t v = 0; k->values && k->values[v]; v++)
        snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%s", v ? ", " : "(", k->values[v]);
      if (*vals)
        snprintf(vals + strlen(vals), sizeof vals - strlen(vals), ")");
      printf("# %-28s %-8s %-9s %-18s %s%s%s  [dwload-job(5): %s]\n", name, spec_type_name(k->type),
             k->flags & SPEC_K_REQUIRED ? "required" : "", k->def ? k->def : "", vals, *vals ? "  " : "", k->help,
             sec->man ? sec->man : "in its key's item");
    }
  }
  fflush(stdout);
}

static Suite *make_suite(void)
{
  print_table();
  Suite *s = suite_create("spec_keys");
  TCase *tc = tcase_create("spec_keys");
  tcase_add_test(tc, test_every_key_is_documented);
  tcase_add_test(tc, test_table_is_well_formed);
  tcase_add_test(tc, test_defaults_are_the_parsers);
  suite_add_tcase(s, tc);
  return s;
}
