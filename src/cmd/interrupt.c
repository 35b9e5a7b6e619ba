/* Interruption by SIGINT, SIGTERM and SIGHUP (a person's Ctrl-C, a
 * scheduler's timeout, a closed terminal).  The handler only records the
 * signal and wakes a watcher thread through a pipe: that thread cancels
 * the statements in progress (SQLCancel may be called from another
 * thread), so a run blocked in a long statement notices at once, and
 * pokes the main thread (SIGRTMIN, a handler that does nothing, no
 * SA_RESTART) until the run has seen the interruption: a read blocked
 * there (a FIFO, a slow pipe, a plugin's socket) returns EINTR, also one
 * that began just after the signal.  Everything else is the run's
 * ordinary failure path: the statement or the read fails, the run rolls
 * back and reports.  A signal ignored when dwload starts (nohup) stays
 * ignored. */
#include "interrupt.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlext.h>

static volatile sig_atomic_t got;  /* the first signal, 0 none */
static atomic_int acked;
static int wake[2] = {-1, -1};
static pthread_t main_thread;
static pthread_t watcher_thread;
static int have_watcher;

/* The statements executing now, for the watcher to cancel. */
#define MAX_ACTIVE 8
static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static SQLHSTMT active[MAX_ACTIVE];

static void on_signal(int sig)
{
  if (got)
    _exit(DWL_EXIT_SIGNAL + sig);  /* the second signal: at once */
  got = sig;
  int e = errno;
  if (wake[1] >= 0) {
    ssize_t n = write(wake[1], "x", 1);
    (void)n;
  }
  errno = e;
}

/* Both under active_mu, as interrupt_ack is: once the run has seen the
 * signal, its failure path (the rollback, recording the interruption in
 * dwload_state) runs statements of its own, which a watcher scheduled
 * late must neither cancel nor interrupt. */
static void cancel_active(void)
{
  pthread_mutex_lock(&active_mu);
  for (int i = 0; i < MAX_ACTIVE && !atomic_load(&acked); i++)
    if (active[i])
      SQLCancel(active[i]);
  pthread_mutex_unlock(&active_mu);
}

static void poke_main(void)
{
  pthread_mutex_lock(&active_mu);
  if (!atomic_load(&acked))
    pthread_kill(main_thread, SIGRTMIN);
  pthread_mutex_unlock(&active_mu);
}

static void on_poke(int sig)
{
  (void)sig;
}

static void *watcher(void *arg)
{
  (void)arg;
  char c;
  for (;;) {
    ssize_t n = read(wake[0], &c, 1);
    if (n == 1)
      break;
    if (n == 0 || errno != EINTR)
      return NULL;
  }
  cancel_active();
  /* Until the run has seen it (a bounded wait each time: 50 ms). */
  while (!atomic_load(&acked)) {
    poke_main();
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* The handler for sig, unless dwload was started with sig ignored. */
static void catch_signal(int sig, const struct sigaction *sa)
{
  struct sigaction old;
  if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN && sig != SIGRTMIN)
    return;
  sigaction(sig, sa, NULL);
}

void interrupt_install(void)
{
  static int done;
  if (done)
    return;
  done = 1;
  signal(SIGPIPE, SIG_IGN);
  main_thread = pthread_self();
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGRTMIN);
  if (pipe(wake) == 0) {
    pthread_t th;
    pthread_sigmask(SIG_BLOCK, &set, &old);
    if (pthread_create(&th, NULL, watcher, NULL) == 0) {
      watcher_thread = th;
      have_watcher = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  /* no SA_RESTART: a blocked read returns EINTR */
  catch_signal(SIGINT, &sa);
  catch_signal(SIGTERM, &sa);
  catch_signal(SIGHUP, &sa);
  sa.sa_handler = on_poke;
  catch_signal(SIGRTMIN, &sa);
}

int interrupt_signal(void)
{
  return got;
}

static const char *signame(int sig)
{
  switch (sig) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  default: return "a signal";
  }
}

int interrupt_check(dwl_error *err)
{
  if (!got || atomic_load(&acked))
    return 0;
  return err_setc(err, DWL_EXIT_SIGNAL + got, DWL_CAUSE_INTERRUPTED, "interrupted by %s", signame(got));
}

void interrupt_ack(void)
{
  pthread_mutex_lock(&active_mu);
  atomic_store(&acked, 1);
  pthread_mutex_unlock(&active_mu);
}

void interrupt_shutdown(void)
{
  interrupt_ack();  /* also ends the watcher's pokes */
  if (!have_watcher)
    return;
  have_watcher = 0;
  /* The handler (on this thread) no longer writes to it; the watcher's
   * read then sees the end of the pipe and returns. */
  int w = wake[1];
  wake[1] = -1;
  close(w);
  pthread_join(watcher_thread, NULL);
}

void interrupt_err(dwl_error *err)
{
  err_init(err);
  err_setc(err, DWL_EXIT_SIGNAL + got, DWL_CAUSE_INTERRUPTED, "interrupted by %s", signame(got));
}

int interrupt_stmt_begin(SQLHSTMT h, dwl_error *err)
{
  pthread_mutex_lock(&active_mu);
  for (int i = 0; i < MAX_ACTIVE; i++)
    if (!active[i]) {
      active[i] = h;
      break;
    }
  pthread_mutex_unlock(&active_mu);
  /* A signal between the check and the registration found nothing to
   * cancel: checked again, now that it would. */
  if (interrupt_check(err) != 0) {
    interrupt_stmt_end(h);
    return -1;
  }
  return 0;
}

void interrupt_stmt_end(SQLHSTMT h)
{
  pthread_mutex_lock(&active_mu);
  for (int i = 0; i < MAX_ACTIVE; i++)
    if (active[i] == h)
      active[i] = NULL;
  pthread_mutex_unlock(&active_mu);
}
