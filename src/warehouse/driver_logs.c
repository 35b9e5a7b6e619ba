/* The ODBC drivers' own log files.  Debian's odbcinst.ini registers
 * psqlODBC with CommLog=1, and psqlODBC then leaves a
 * /tmp/psqlodbc_<program>_<user><pid>.log behind every process that
 * connects (the directory is fixed at /tmp unless odbcinst.ini's Logdir=
 * says otherwise; TMPDIR does not move it).  A CommLog=0 in the connection
 * string does not stop it: psqlODBC 13.02 takes the process-wide switch
 * from odbcinst.ini when it loads (mylog.c getGlobalCommlog, from the
 * section named after the driver build, "PostgreSQL Unicode" or
 * "PostgreSQL ANSI", whatever the connection string's Driver= says), and
 * SQLDisconnect drops the connection's own switch (logs_on_off(-1, ...))
 * before it logs "PQfinish", so with no connection left the process-wide
 * 1 writes that line, and the file, anyway.  Nor can an ODBC call change
 * it: SQL_ATTR_PGOPT_COMMLOG only moves the connection's own switch.
 *
 * So the process connects through a view of odbcinst.ini of its own: a
 * copy in which the switches of the table below are 0, with the system
 * odbc.ini and ODBCDataSources linked beside it (ODBCSYSINI names the
 * folder of all three), removed when the process exits (and, when it was
 * killed before, by the next dwload that makes one).  A connection
 * string's (or DSN's) CommLog=1 or Debug=1 still turns the log on for
 * that connection: psqlODBC logs while any connection asks for it. */
#include "driver_logs.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* configure asks pkg-config for unixODBC's folder; a build without it (the
 * fuzz targets') takes Debian's. */
#ifndef DWL_ODBC_SYSCONFDIR
#define DWL_ODBC_SYSCONFDIR "/etc"
#endif

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Per driver: the odbcinst.ini section the driver reads its process-wide
 * log switch from, and the key.  psqlODBC: CommLog is its connection log
 * (psqlodbc_*.log), Debug its trace (mylog_*.log). */
static const struct quiet_key {
  const char *section, *key;
} quiet[] = {
  {"PostgreSQL Unicode", "CommLog"},
  {"PostgreSQL Unicode", "Debug"},
  {"PostgreSQL ANSI", "CommLog"},
  {"PostgreSQL ANSI", "Debug"},
};
#define NQUIET (sizeof quiet / sizeof quiet[0])

/* The files unixODBC reads from ODBCSYSINI's folder besides odbcinst.ini:
 * linked, so that DSN= connections find what they found before. */
static const char *const linked[] = {"odbc.ini", "ODBCDataSources"};
#define NLINKED (sizeof linked / sizeof linked[0])

static char view[PATH_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_rc;

static void view_path(char *out, size_t n, const char *file)
{
  snprintf(out, n, "%s/%s", view, file);
}

/* A view's files and its folder (only those: rmdir fails on anything
 * else left in it, which is then kept). */
static void dir_remove(const char *dir)
{
  char p[PATH_MAX + 32];
  snprintf(p, sizeof p, "%s/odbcinst.ini", dir);
  unlink(p);
  for (size_t i = 0; i < NLINKED; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, linked[i]);
    unlink(p);
  }
  rmdir(dir);
}

static void view_remove(void)
{
  if (view[0])
    dir_remove(view);
}

/* The views of processes that died before their atexit (SIGKILL, a
 * crash) stay in TMPDIR: a view is named dwload-odbc.<pid>.XXXXXX, and
 * those of this user whose process is gone are removed before a new one
 * is made.  A pid in use again by another process keeps its view until
 * that process is gone too. */
static void sweep_stale(const char *tmp)
{
  DIR *d = opendir(tmp);
  if (!d)
    return;
  static const char prefix[] = "dwload-odbc.";
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, sizeof prefix - 1) != 0)
      continue;
    char *end;
    errno = 0;
    long pid = strtol(e->d_name + sizeof prefix - 1, &end, 10);
    if (errno != 0 || *end != '.' || pid <= 0 || pid == (long)getpid())
      continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", tmp, e->d_name) >= (int)sizeof path || lstat(path, &st) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != getuid())
      continue;
    dir_remove(path);
  }
  closedir(d);
}

/* One line of odbcinst.ini, copied, or with its value 0 when it is a
 * switch of the table in its section; 1 when that changed the value. */
static int copy_line(const char *line, const char *section, FILE *out)
{
  const char *eq = strchr(line, '=');
  if (section[0] && eq && line[0] != ';' && line[0] != '#') {
    const char *k = line;
    while (*k == ' ' || *k == '\t')
      k++;
    size_t kn = (size_t)(eq - k);
    while (kn > 0 && (k[kn - 1] == ' ' || k[kn - 1] == '\t'))
      kn--;
    for (size_t i = 0; i < NQUIET; i++)
      if (strcasecmp(section, quiet[i].section) == 0 && strlen(quiet[i].key) == kn &&
          strncasecmp(k, quiet[i].key, kn) == 0) {
        fprintf(out, "%s=0\n", quiet[i].key);
        return atoi(eq + 1) != 0;
      }
  }
  fputs(line, out);
  return 0;
}

/* The section a "[name]" line opens, into section. */
static void section_of(const char *line, char *section, size_t n)
{
  const char *b = line + strspn(line, " \t");
  if (*b != '[')
    return;
  const char *e = strchr(b, ']');
  if (!e)
    return;
  snprintf(section, n, "%.*s", (int)(e - b - 1), b + 1);
}

/* 1 when the copy turned a switch off, 0 when it changed nothing, -1 */
static int copy_registry(const char *from, const char *to)
{
  FILE *in = fopen(from, "r");
  if (!in)
    return -1;
  FILE *out = fopen(to, "w");
  if (!out) {
    fclose(in);
    return -1;
  }
  char line[4096], section[256] = "";
  int changed = 0;
  while (fgets(line, sizeof line, in)) {
    section_of(line, section, sizeof section);
    changed |= copy_line(line, section, out);
  }
  int bad = ferror(in);
  fclose(in);
  return (fclose(out) != 0 || bad) ? -1 : changed;
}

/* Where unixODBC reads odbcinst.ini from, as it finds it
 * (odbcinst_system_file_path/_name): ODBCSYSINI's folder, or the one it
 * was built with; ODBCINSTINI's name there, or odbcinst.ini.  Not asked of
 * libodbcinst: it keeps its first answer for the life of the process, so
 * the view must be in place before any ODBC call, this one included. */
static void registry_path(char *dir, size_t dn, char *file, size_t fn)
{
  const char *d = getenv("ODBCSYSINI"), *n = getenv("ODBCINSTINI");
  snprintf(dir, dn, "%s", d && d[0] ? d : DWL_ODBC_SYSCONFDIR);
  snprintf(file, fn, "%s/%s", dir, n && n[0] ? n : "odbcinst.ini");
}

static void make_view(void)
{
  char sysdir[PATH_MAX], from[2 * PATH_MAX + 2];
  registry_path(sysdir, sizeof sysdir, from, sizeof from);
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0])
    tmp = "/tmp";
  sweep_stale(tmp);
  snprintf(view, sizeof view, "%s/dwload-odbc.%ld.XXXXXX", tmp, (long)getpid());
  once_rc = -1;
  if (!mkdtemp(view)) {
    view[0] = '\0';
    return;
  }
  char p[PATH_MAX + 32], target[2 * PATH_MAX + 2];
  view_path(p, sizeof p, "odbcinst.ini");
  int rc = copy_registry(from, p);
  if (rc <= 0) {
    /* No switch on (or no registry to read): nothing to hide. */
    once_rc = rc;
    view_remove();
    view[0] = '\0';
    return;
  }
  rc = 0;
  for (size_t i = 0; rc == 0 && i < NLINKED; i++) {
    view_path(p, sizeof p, linked[i]);
    snprintf(target, sizeof target, "%s/%s", sysdir, linked[i]);
    rc = symlink(target, p);
  }
  /* unixODBC reads the variables at the process's first ODBC call and
   * keeps them: set once, before it. */
  if (rc == 0 && atexit(view_remove) == 0 && setenv("ODBCSYSINI", view, 1) == 0 &&
      setenv("ODBCINSTINI", "odbcinst.ini", 1) == 0) {
    once_rc = 0;
    return;
  }
  view_remove();
  view[0] = '\0';
}

int driver_logs_quiet(void)
{
  pthread_once(&once, make_view);
  return once_rc;
}
