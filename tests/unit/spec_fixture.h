/* The fixture of the job spec parser's unit tests (test_spec.c,
 * test_spec_rules.c): each test gets a fresh folder holding job.yaml, which
 * it writes and loads with spec_load, then compares the spec or the exact
 * error (FILE:LINE:COL, exit code 2).  BASE and SCD2_LOAD are the smallest
 * valid job and an scd2 load section that tests append to.  Included by
 * each test program once; its helpers are static, and a program that does
 * not call one of them says nothing about it. */
#ifndef DWL_SPEC_FIXTURE_H
#define DWL_SPEC_FIXTURE_H

#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "spec.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

static char g_dir[PATH_MAX];
static char g_path[PATH_MAX + 16];

static void setup(void)
{
  const char *t = getenv("TMPDIR");
  char cwd[PATH_MAX / 2];
  if (!t || !*t)
    t = "/tmp";
  /* spec->dir is absolute, so the fixture folder must be too for the
   * comparisons below, even with a relative $TMPDIR. */
  if (t[0] == '/')
    snprintf(g_dir, sizeof g_dir, "%s/dwl_spec_XXXXXX", t);
  else {
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(g_dir, sizeof g_dir, "%s/%s/dwl_spec_XXXXXX", cwd, t);
  }
  ck_assert_ptr_nonnull(mkdtemp(g_dir));
  snprintf(g_path, sizeof g_path, "%s/job.yaml", g_dir);
}

static void teardown(void)
{
  DIR *d = opendir(g_dir);
  if (d) {
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(g_dir);
}

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

static dwl_spec *load_text(const char *text, dwl_error *err)
{
  write_text(g_path, text);
  err_init(err);
  return spec_load(g_path, err);
}

static dwl_spec *load_ok(const char *text)
{
  dwl_error err;
  dwl_spec *s = load_text(text, &err);
  ck_assert_msg(s != NULL, "unexpected error: %s", err.msg);
  ck_assert_int_eq(err.code, 0);
  return s;
}

/* Loads `text`, expects failure with exit code 2, message starting with
 * "FILE:LINE:COL: " and containing `needle`. */
static void expect_error(const char *text, int line, int col, const char *needle)
{
  dwl_error err;
  char prefix[PATH_MAX + 64];
  dwl_spec *s = load_text(text, &err);
  if (s)
    spec_free(s);
  ck_assert_msg(s == NULL, "spec loaded but should fail with '%s'", needle);
  ck_assert_int_eq(err.code, DWL_EXIT_USAGE);
  snprintf(prefix, sizeof prefix, "%s:%d:%d: ", g_path, line, col);
  ck_assert_msg(strncmp(err.msg, prefix, strlen(prefix)) == 0,
                "message '%s' does not start with '%s'", err.msg, prefix);
  ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
}

/* Lines 1-7; sections appended after it start at line 8. */
#define BASE                   \
  "job: customers\n"           \
  "source:\n"                  \
  "  plugin: csv\n"            \
  "  path: feed.csv\n"         \
  "target:\n"                  \
  "  connection: db\n"         \
  "  table: customer_dim\n"

#define SCD2_LOAD              \
  "load:\n"                    \
  "  mode: scd2\n"             \
  "  lmd: lmd\n"               \
  "  key: [id]\n"

#pragma GCC diagnostic pop

#endif
