/* Checks before work (precheck.h): a run that would fail on its plugin's
 * options or its reject folder fails before it connects, with the exit
 * code the failure has, not the warehouse's; check reports the same
 * steps before its target step. */
#include "precheck.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_host.h"
#include "prepare.h"

int precheck_plugin(const dwl_spec *spec, char *about, size_t n, dwl_error *err)
{
  source_config cfg = source_config_for(spec, NULL);
  return source_precheck(&cfg, about, n, err);
}

int precheck_rejects(const dwl_spec *spec, char *about, size_t n, dwl_error *err)
{
  if (about && n)
    about[0] = '\0';
  if (!spec->reject_file)
    return 0;
  /* The folder as rejects_open (reject.c) builds the path: relative to the job file's. */
  char path[4096];
  int len = snprintf(path, sizeof path, "%s%s%s", spec->reject_file[0] == '/' ? "" : spec->dir,
                     spec->reject_file[0] == '/' ? "" : "/", spec->reject_file);
  if (len < 0 || (size_t)len >= sizeof path)
    return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_REJECT_FILE, "load.reject_file: the path is too long");
  if (about)
    snprintf(about, n, "%s", path);
  char *slash = strrchr(path, '/');
  if (slash == path)
    slash[1] = '\0';
  else
    *slash = '\0';
  int line, col;
  const char *file = spec_key_at(spec, "load.reject_file", &line, &col);
  struct stat st;
  const char *why = NULL;
  if (stat(path, &st) != 0)
    why = strerror(errno);
  else if (!S_ISDIR(st.st_mode))
    why = "not a folder";
  else if (access(path, W_OK | X_OK) != 0)
    why = strerror(errno);
  if (!why)
    return 0;
  return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_REJECT_FILE,
                  "%s:%d:%d: load.reject_file: its folder %s cannot take the reject file: %s", file, line, col,
                  path, why);
}

int precheck_job(const dwl_spec *spec, int writes, dwl_error *err)
{
  if (precheck_plugin(spec, NULL, 0, err) != 0 || precheck_types(spec, NULL, 0, err) != 0 ||
      (writes && precheck_rejects(spec, NULL, 0, err) != 0))
    return -1;
  return 0;
}
