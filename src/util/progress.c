/* The live progress line on a terminal.  A thread redraws it five times a
 * second, so the elapsed time moves during long statements too, when the
 * run itself calls nothing; one mutex orders its writes with the log's,
 * and with the count lines a command draws itself (progress_count).
 * Without a terminal the same thread logs the figures at a steady
 * interval instead: the liveness a scheduler's log shows. */
#include "progress.h"

#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_PERIOD_NS 200000000L  /* 5 Hz: alive, without flicker */

static struct {
  int active;
  int stop;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  const char *phase;
  long long rows;
  struct timespec t0;
  double read_start, read_end;  /* seconds since t0; rows/s is over reading */
  int drawn;                    /* the line is on the screen */
  int to_log;                   /* no terminal: log lines every `interval` s */
  int interval;
} pg = {.mu = PTHREAD_MUTEX_INITIALIZER, .interval = PROGRESS_LOG_DEFAULT};

void progress_set_interval(int seconds)
{
  pg.interval = seconds > 0 ? seconds : 0;
}

/* rows/s over the reading so far; with the mutex held. */
static long long read_rate(double t)
{
  double reading = (pg.read_end > 0 ? pg.read_end : t) - pg.read_start;
  return pg.read_start > 0 && reading > 0 ? (long long)((double)pg.rows / reading) : 0;
}

static double since_start(void)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - pg.t0.tv_sec) + (double)(now.tv_nsec - pg.t0.tv_nsec) / 1e9;
}

/* Called with the mutex held. */
static void erase(void)
{
  if (!pg.drawn)
    return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  pg.drawn = 0;
}

/* Called with the mutex held. */
static void draw(void)
{
  double t = since_start();
  long long rate = read_rate(t);
  int secs = (int)t;
  /* Short enough for an 80-column terminal: a wrapped line cannot be
   * redrawn in place. */
  fprintf(stderr, "\r\033[K%-7s %12lld rows  %10lld rows/s  %02d:%02d:%02d", pg.phase, pg.rows, rate, secs / 3600,
          secs / 60 % 60, secs % 60);
  fflush(stderr);
  pg.drawn = 1;
}

/* With the mutex held; gives it up while it logs, since the log's own
 * writes take it (progress_hold). */
static void log_line(void)
{
  double t = since_start();
  const char *phase = pg.phase;
  long long rows = pg.rows, rate = read_rate(t);
  pthread_mutex_unlock(&pg.mu);
  log_msg(LOG_INFO, "progress: %s, %lld rows read, %lld rows/s, %.0fs elapsed", phase, rows, rate, t);
  pthread_mutex_lock(&pg.mu);
}

static void *ticker(void *unused)
{
  (void)unused;
  pthread_mutex_lock(&pg.mu);
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  while (!pg.stop) {
    if (pg.to_log) {
      until.tv_sec += pg.interval;  /* steady: from the last tick, not from the log line's end */
    } else {
      clock_gettime(CLOCK_MONOTONIC, &until);
      until.tv_nsec += PROGRESS_PERIOD_NS;
      if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
      }
    }
    /* Until the tick or the stop; a spurious wake-up waits on. */
    while (!pg.stop && pthread_cond_timedwait(&pg.cv, &pg.mu, &until) == 0)
      ;
    if (pg.stop)
      break;
    if (pg.to_log)
      log_line();
    else
      draw();
  }
  pthread_mutex_unlock(&pg.mu);
  return NULL;
}

void progress_begin(int want)
{
  if (pg.active)
    return;
  pg.to_log = !(want && isatty(STDERR_FILENO));
  if (pg.to_log && (pg.interval == 0 || log_get_level() < LOG_INFO))
    return;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(&pg.cv, &ca);
  pthread_condattr_destroy(&ca);
  if (rc != 0)
    return;
  clock_gettime(CLOCK_MONOTONIC, &pg.t0);
  pg.phase = "connect";
  pg.rows = 0;
  pg.read_start = pg.read_end = 0;
  pg.stop = 0;
  pg.drawn = 0;
  /* Without the thread there is simply no live line. */
  if (pthread_create(&pg.thread, NULL, ticker, NULL) != 0) {
    pthread_cond_destroy(&pg.cv);
    return;
  }
  pg.active = 1;
}

void progress_phase(const char *phase)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  if (strcmp(phase, "read") == 0 && pg.read_start == 0)
    pg.read_start = since_start();
  else if (strcmp(pg.phase, "read") == 0)
    pg.read_end = since_start();
  pg.phase = phase;
  if (!pg.to_log)
    draw();
  pthread_mutex_unlock(&pg.mu);
}

void progress_rows(long long rows)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  pg.rows = rows;
  pthread_mutex_unlock(&pg.mu);
}

void progress_end(void)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  pg.stop = 1;
  pthread_cond_signal(&pg.cv);
  pthread_mutex_unlock(&pg.mu);
  pthread_join(pg.thread, NULL);
  pthread_cond_destroy(&pg.cv);
  erase();
  pg.active = 0;
}

void progress_hold(void)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  erase();
}

void progress_release(void)
{
  if (!pg.active)
    return;
  pthread_mutex_unlock(&pg.mu);
}

void progress_count(const char *command, const char *what, long long rows, double seconds, int end)
{
  if (!isatty(STDERR_FILENO))
    return;
  pthread_mutex_lock(&pg.mu);
  fprintf(stderr, "\r\033[K%s: %s: %lld rows, %.0f rows/s%s", command, what, rows,
          seconds > 0 ? (double)rows / seconds : 0.0, end ? "\n" : "");
  fflush(stderr);
  pthread_mutex_unlock(&pg.mu);
}
