/* dwload run JOB... / run FOLDER: several jobs, at most --jobs N at once.
 * Each job is a child process running the same binary as a single `dwload
 * run` (so each one is exactly today's run: its own connection, lock,
 * transaction, signal handling and summary).  A child's stdout is a pipe
 * read here and printed whole when the child ends, so the lines of two
 * jobs never interleave; its stderr (the logs, each line one write naming
 * the job) is passed through.  The last stdout line is the overall one.
 *
 * Signals: each child is in a process group of its own, so a terminal's
 * Ctrl-C reaches only this process, which passes SIGINT, SIGTERM and
 * SIGHUP on once to every running child (each rolls back as a single run
 * does), starts no more jobs, waits for them and exits 128+N.  A child
 * whose parent dies is sent SIGTERM (PR_SET_PDEATHSIG). */
#include "run_many.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "log.h"

enum { JOB_PENDING, JOB_RUNNING, JOB_DONE, JOB_SKIPPED };

typedef struct job {
  char *path;
  int state;
  pid_t pid;
  int fd;        /* the read end of its stdout while running */
  dwl_buf out;   /* its stdout so far */
  int code;      /* its exit status once done */
} job;

/* The running children, for the signal handler to pass a signal on. */
static volatile sig_atomic_t got;
static pid_t *live;
static int nlive;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
static int caught[3];  /* 1: this process catches forwarded[i] (not ignored at start) */

static void on_signal(int sig)
{
  int e = errno;
  got = sig;
  for (int i = 0; i < nlive; i++)
    if (live[i] > 0)
      kill(live[i], sig);
  errno = e;
}

static void install_handlers(void)
{
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  signal(SIGPIPE, SIG_IGN);  /* a closed stdout is a write error, as in a single run */
  for (int i = 0; i < 3; i++) {
    /* A signal ignored when dwload starts (nohup) stays ignored, also in the children. */
    caught[i] = !(sigaction(forwarded[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN);
    if (caught[i])
      sigaction(forwarded[i], &sa, NULL);
  }
}

static void block_signals(sigset_t *old)
{
  sigset_t set;
  sigemptyset(&set);
  for (int i = 0; i < 3; i++)
    sigaddset(&set, forwarded[i]);
  sigprocmask(SIG_BLOCK, &set, old);
}

static int is_job_file(const char *name)
{
  size_t n = strlen(name);
  /* Hidden files and _shared.yaml (an include: file) are not jobs. */
  if (name[0] == '.' || name[0] == '_')
    return 0;
  return (n > 5 && strcmp(name + n - 5, ".yaml") == 0) || (n > 4 && strcmp(name + n - 4, ".yml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_dir(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int run_many_parse_jobs(const char *s, int *out)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < 1 || v > 64)
    return -1;
  *out = (int)v;
  return 0;
}

int run_many_wanted(int npaths, char **paths)
{
  return npaths > 1 || (npaths == 1 && is_dir(paths[0]));
}

/* Adds path to the list, or a folder's job files in name order. */
static int add_path(job **jobs, int *n, const char *path, dwl_error *err)
{
  char **names = NULL;
  int nn = 0;
  if (is_dir(path)) {
    DIR *d = opendir(path);
    if (!d)
      return err_set(err, DWL_EXIT_USAGE, "cannot read the job folder %s: %s", path, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (!is_job_file(de->d_name))
        continue;
      char **nx = realloc(names, (size_t)(nn + 1) * sizeof *names);
      size_t len = strlen(path) + strlen(de->d_name) + 2;
      char *full = nx ? malloc(len) : NULL;
      if (!full) {
        names = nx ? nx : names;
        break;
      }
      names = nx;
      snprintf(full, len, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
      names[nn++] = full;
    }
    closedir(d);
    if (de)
      err_set(err, DWL_EXIT_FAILED, "out of memory listing %s", path);
    else if (nn == 0)
      err_set(err, DWL_EXIT_USAGE, "the job folder %s holds no job file (*.yaml, *.yml)", path);
    if (nn > 0)  /* qsort of NULL, even of 0 items, is undefined (UBSan) */
      qsort(names, (size_t)nn, sizeof *names, cmp_str);
  } else {
    names = malloc(sizeof *names);
    if (names && (names[0] = strdup(path)) != NULL)
      nn = 1;
    else
      err_set(err, DWL_EXIT_FAILED, "out of memory");
  }
  job *nx = err_isset(err) ? NULL : realloc(*jobs, (size_t)(*n + nn) * sizeof **jobs);
  if (!nx && !err_isset(err))
    err_set(err, DWL_EXIT_FAILED, "out of memory");
  for (int i = 0; i < nn; i++) {
    if (nx) {
      memset(&nx[*n], 0, sizeof nx[*n]);
      nx[*n].path = names[i];
      nx[*n].fd = -1;
      buf_init(&nx[*n].out, 0);
      (*n)++;
    } else {
      free(names[i]);
    }
  }
  if (nx)
    *jobs = nx;
  free(names);
  return err_isset(err) ? -1 : 0;
}

/* In the child: its own process group, the parent's death ends it, the
 * signals this process caught back to their defaults, then the single run. */
/* This binary, read once before any child starts: /proc/self/exe named
 * as a path (readlink, which valgrind answers with the program it runs,
 * not itself). */
static char self_exe[4096];

static void exec_child(const run_many_opts *o, const job *j, int wfd, pid_t parent, const sigset_t *mask)
{
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    _exit(DWL_EXIT_SIGNAL + SIGTERM);
  for (int i = 0; i < 3; i++)
    if (caught[i])
      signal(forwarded[i], SIG_DFL);
  sigprocmask(SIG_SETMASK, mask, NULL);
  if (dup2(wfd, STDOUT_FILENO) < 0)
    _exit(DWL_EXIT_FAILED);
  close(wfd);
  char **argv = calloc((size_t)(o->global_argc + o->run_argc + 4), sizeof *argv);
  if (!argv)
    _exit(DWL_EXIT_FAILED);
  int k = 0;
  for (int i = 0; i < o->global_argc; i++)
    argv[k++] = o->global_argv[i];
  argv[k++] = "run";
  for (int i = 0; i < o->run_argc; i++)
    argv[k++] = o->run_argv[i];
  argv[k++] = "--";
  argv[k++] = j->path;
  execv(self_exe, argv);
  fprintf(stderr, "dwload: cannot start the run of %s: %s\n", j->path, strerror(errno));
  _exit(DWL_EXIT_FAILED);
}

static int start_job(const run_many_opts *o, job *j, int slot, dwl_error *err)
{
  int p[2];
  /* Close-on-exec: a later child must not hold this one's pipe (dup2 to
   * its stdout clears the flag on the copy the child keeps). */
  if (pipe2(p, O_CLOEXEC) != 0)
    return err_set(err, DWL_EXIT_FAILED, "cannot start %s: pipe: %s", j->path, strerror(errno));
  fflush(NULL);
  sigset_t old;
  block_signals(&old);  /* so a signal sees the child's pid in live[] */
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    exec_child(o, j, p[1], parent, &old);
  }
  int e = errno;
  close(p[1]);
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(p[0]);
    return err_set(err, DWL_EXIT_FAILED, "cannot start %s: fork: %s", j->path, strerror(e));
  }
  live[slot] = pid;
  if (got)
    kill(pid, got);  /* the signal came before the child was known */
  sigprocmask(SIG_SETMASK, &old, NULL);
  j->pid = pid;
  j->fd = p[0];
  j->state = JOB_RUNNING;
  log_msg(LOG_DEBUG, "started %s (pid %ld)", j->path, (long)pid);
  return 0;
}

static int job_ok(const run_many_opts *o, const job *j)
{
  return j->state == JOB_DONE && (j->code == 0 || (o->empty_exit >= 0 && j->code == o->empty_exit));
}

/* The child's stdout ended: wait for it, print what it printed. */
static void finish_job(const run_many_opts *o, job *j, int slot, int *write_failed)
{
  int st;
  close(j->fd);
  j->fd = -1;
  while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
    ;
  live[slot] = 0;
  j->code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? DWL_EXIT_SIGNAL + WTERMSIG(st) : DWL_EXIT_FAILED;
  j->state = JOB_DONE;
  if (j->out.len && (fwrite(j->out.data, 1, j->out.len, stdout) != j->out.len || fflush(stdout) != 0))
    *write_failed = errno ? errno : EIO;
  if (buf_failed(&j->out))
    log_msg(LOG_ERROR, "the output of %s was too large to keep", j->path);
  buf_free(&j->out);
  if (!job_ok(o, j))
    log_msg(LOG_ERROR, "job %s failed: exit %d", j->path, j->code);
}

/* Reads what the running children wrote; finishes those whose stdout ended. */
static void poll_children(const run_many_opts *o, job *jobs, int n, int *running, int *write_failed)
{
  struct pollfd pfd[o->jobs];
  int idx[o->jobs], np = 0;
  for (int i = 0; i < n && np < o->jobs; i++)
    if (jobs[i].state == JOB_RUNNING) {
      pfd[np].fd = jobs[i].fd;
      pfd[np].events = POLLIN;
      idx[np++] = i;
    }
  if (poll(pfd, (nfds_t)np, -1) < 0)
    return;  /* EINTR: a signal, passed on already; the caller looks */
  for (int k = 0; k < np; k++) {
    if (!pfd[k].revents)
      continue;
    job *j = &jobs[idx[k]];
    char chunk[4096];
    ssize_t r = read(j->fd, chunk, sizeof chunk);
    if (r > 0) {
      buf_add(&j->out, chunk, (size_t)r);
    } else if (r == 0 || errno != EINTR) {
      int slot = 0;
      while (live[slot] != j->pid)
        slot++;
      finish_job(o, j, slot, write_failed);
      (*running)--;
    }
  }
}

/* The overall line: counts and each job's file and exit status. */
static int print_overall(const run_many_opts *o, const job *jobs, int n, int code)
{
  int ok = 0, failed = 0, skipped = 0;
  json_t *res = json_array();
  for (int i = 0; i < n; i++) {
    json_t *r = json_object();
    json_object_set_new(r, "file", json_string(jobs[i].path));
    json_object_set_new(r, "exit", jobs[i].state == JOB_DONE ? json_integer(jobs[i].code) : json_null());
    json_array_append_new(res, r);
    if (jobs[i].state != JOB_DONE)
      skipped++;
    else if (job_ok(o, &jobs[i]))
      ok++;
    else
      failed++;
  }
  json_t *top = json_object();
  json_object_set_new(top, "jobs", json_integer(n));
  json_object_set_new(top, "ok", json_integer(ok));
  json_object_set_new(top, "failed", json_integer(failed));
  json_object_set_new(top, "skipped", json_integer(skipped));
  json_object_set_new(top, "exit", json_integer(code));
  json_object_set_new(top, "results", res);
  char *line = json_dumps(top, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(top);
  int rc = line && fprintf(stdout, "%s\n", line) >= 0 && fflush(stdout) == 0 ? 0 : -1;
  free(line);
  return rc;
}

/* The overall status: 128+N when this process was interrupted; else the
 * status of the first job, in the order given, that failed; else the
 * --empty-exit code when every job exited with it; else 0. */
static int overall_code(const run_many_opts *o, const job *jobs, int n)
{
  if (got)
    return DWL_EXIT_SIGNAL + got;
  int all_empty = o->empty_exit >= 0;
  for (int i = 0; i < n; i++) {
    if (jobs[i].state == JOB_DONE && !job_ok(o, &jobs[i]))
      return jobs[i].code;
    if (jobs[i].state != JOB_DONE || jobs[i].code != o->empty_exit)
      all_empty = 0;
  }
  return all_empty ? o->empty_exit : DWL_EXIT_OK;
}

int run_many(const run_many_opts *o, int npaths, char **paths)
{
  dwl_error err;
  err_init(&err);
  job *jobs = NULL;
  int n = 0;
  for (int i = 0; i < npaths && !err_isset(&err); i++)
    add_path(&jobs, &n, paths[i], &err);
  ssize_t sl = err_isset(&err) ? -1 : readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  if (sl > 0)
    self_exe[sl] = '\0';
  else if (!err_isset(&err))
    err_set(&err, DWL_EXIT_FAILED, "cannot find the dwload binary to run the jobs: %s", strerror(errno));
  live = err_isset(&err) ? NULL : calloc((size_t)o->jobs, sizeof *live);
  if (!live && !err_isset(&err))
    err_set(&err, DWL_EXIT_FAILED, "out of memory");
  if (err_isset(&err)) {
    log_msg(LOG_ERROR, "%s", err.msg);
    for (int i = 0; i < n; i++)
      free(jobs[i].path);
    free(jobs);
    return err.code;
  }
  nlive = o->jobs;
  install_handlers();
  log_msg(LOG_INFO, "running %d jobs, at most %d at once", n, o->jobs);
  int next = 0, running = 0, stop = 0, write_failed = 0;
  for (;;) {
    while (!stop && !got && running < o->jobs && next < n) {
      int slot = 0;
      while (live[slot])
        slot++;
      if (start_job(o, &jobs[next], slot, &err) != 0) {
        log_msg(LOG_ERROR, "%s", err.msg);
        jobs[next].state = JOB_DONE;
        jobs[next].code = err.code;
        err_init(&err);
        stop = o->fail_fast;
      } else {
        running++;
      }
      next++;
    }
    if (running == 0)
      break;
    int before = running;
    poll_children(o, jobs, n, &running, &write_failed);
    for (int i = 0; before != running && o->fail_fast && i < next; i++)
      if (jobs[i].state == JOB_DONE && !job_ok(o, &jobs[i]))
        stop = 1;
  }
  for (int i = next; i < n; i++)
    jobs[i].state = JOB_SKIPPED;
  if (stop && next < n)
    log_msg(LOG_ERROR, "--fail-fast: %d jobs not started", n - next);
  int code = overall_code(o, jobs, n);
  if (print_overall(o, jobs, n, code) != 0 || write_failed) {
    log_msg(LOG_ERROR, "could not write the jobs' summaries to stdout (%s)", strerror(write_failed ? write_failed : errno));
    if (code == DWL_EXIT_OK)
      code = DWL_EXIT_SUMMARY;
  }
  for (int i = 0; i < n; i++) {
    free(jobs[i].path);
    buf_free(&jobs[i].out);
  }
  free(jobs);
  free(live);
  live = NULL;
  nlive = 0;
  return code;
}
