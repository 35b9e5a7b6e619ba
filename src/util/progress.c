/* The live progress line on a terminal.  A thread redraws it five times a
 * second, so the elapsed time moves during long statements too, when the
 * run itself calls nothing; one mutex orders its writes with the log's,
 * and with the count lines a command draws itself (progress_count).
 * Without a terminal the same thread logs the figures at a steady
 * interval instead: the liveness a scheduler's log shows.
 *
 * A counted phase (progress_phase_total) shows what it has done, and with
 * a known total the percent and an ETA from its own rate.  The run's hot
 * loops only store a counter (progress_step: one relaxed atomic store, no
 * lock, no clock); the thread reads it when it redraws, so the loops pay
 * nothing for the redraws' cadence.  The read phase counts rows, and
 * when the source can say how far it is in a known total (a file's
 * bytes: progress_read) the percent and an ETA of the reading too. */
#include "progress.h"

#include "log.h"

#include <pthread.h>
#include <stdatomic.h>
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
  /* the counted phase: done of total (-1: unknown), from phase_start */
  int counted;
  _Atomic long long done;
  long long total;
  double phase_start;
  struct timespec t0;
  double read_start, read_end;  /* seconds since t0; rows/s is over reading */
  long long read_done, read_total;  /* the source's own measure; total 0: unknown */
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

/* In the read phase, its percent (-1: another phase, or no known total)
 * and seconds left (-1: not known yet) at t; with the mutex held. */
static int read_figures(double t, double *left)
{
  *left = -1;
  if (pg.counted || strcmp(pg.phase, "read") != 0 || pg.read_total <= 0)
    return -1;
  double spent = (pg.read_end > 0 ? pg.read_end : t) - pg.read_start;
  if (pg.read_done >= pg.read_total)
    *left = 0;
  else if (pg.read_done > 0 && spent > 0)
    *left = spent * (double)(pg.read_total - pg.read_done) / (double)pg.read_done;
  return (int)(pg.read_done * 100 / pg.read_total);
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

/* s seconds as hh:mm:ss (00:00:00 for what cannot be shown). */
static void hms(double s, char out[16])
{
  int secs = s > 0 && s < 360000 ? (int)s : 0;
  snprintf(out, 16, "%02d:%02d:%02d", secs / 3600, secs / 60 % 60, secs % 60);
}

/* The figures of a counted phase at t: done, percent (-1: no total) and
 * the seconds left (-1: not known yet), from the phase's rate so far. */
static long long phase_figures(double t, int *pct, double *left)
{
  long long done = atomic_load_explicit(&pg.done, memory_order_relaxed);
  double spent = t - pg.phase_start;
  *pct = -1;
  *left = -1;
  if (pg.total >= 0) {
    if (done > pg.total)
      done = pg.total;
    *pct = pg.total > 0 ? (int)(done * 100 / pg.total) : 100;  /* nothing to do is done */
    if (done == pg.total)
      *left = 0;
    else if (done > 0 && spent > 0)
      *left = spent * (double)(pg.total - done) / (double)done;
  }
  return done;
}

/* Called with the mutex held. */
static void draw(void)
{
  double t = since_start();
  char el[16];
  hms(t, el);
  /* Short enough for an 80-column terminal: a wrapped line cannot be
   * redrawn in place. */
  double rleft;
  int rpct = read_figures(t, &rleft);
  if (rpct >= 0) {
    char eta[16] = "--:--:--";
    if (rleft >= 0)
      hms(rleft, eta);
    fprintf(stderr, "\r\033[K%-7s %12lld rows  %10lld rows/s  %3d%%  ETA %s  %s", pg.phase, pg.rows,
            read_rate(t), rpct, eta, el);
  } else if (!pg.counted) {
    fprintf(stderr, "\r\033[K%-7s %12lld rows  %10lld rows/s  %s", pg.phase, pg.rows, read_rate(t), el);
  } else {
    int pct;
    double left;
    long long done = phase_figures(t, &pct, &left);
    if (pct < 0) {
      double spent = t - pg.phase_start;
      fprintf(stderr, "\r\033[K%-7s %12lld rows scanned  %10lld rows/s  %s", pg.phase, done,
              spent > 0 ? (long long)((double)done / spent) : 0, el);
    } else {
      char eta[16] = "--:--:--";
      if (left >= 0)
        hms(left, eta);
      fprintf(stderr, "\r\033[K%-7s %10lld/%-10lld %3d%%  ETA %s  %s", pg.phase, done, pg.total, pct, eta, el);
    }
  }
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
  int counted = pg.counted, pct;
  double left, spent = t - pg.phase_start;
  long long done = counted ? phase_figures(t, &pct, &left) : 0, total = pg.total;
  double rleft;
  int rpct = read_figures(t, &rleft);
  pthread_mutex_unlock(&pg.mu);
  if (rpct >= 0 && rleft < 0)
    log_msg(LOG_INFO, "progress: read, %lld rows read, %d%% of the source, ETA unknown, %lld rows/s, %.0fs elapsed",
            rows, rpct, rate, t);
  else if (rpct >= 0)
    log_msg(LOG_INFO, "progress: read, %lld rows read, %d%% of the source, ETA %.0fs, %lld rows/s, %.0fs elapsed",
            rows, rpct, rleft, rate, t);
  else if (!counted)
    log_msg(LOG_INFO, "progress: %s, %lld rows read, %lld rows/s, %.0fs elapsed", phase, rows, rate, t);
  else if (pct < 0)
    log_msg(LOG_INFO, "progress: %s, %lld rows scanned, %lld rows/s, %.0fs elapsed", phase, done,
            spent > 0 ? (long long)((double)done / spent) : 0, t);
  else if (left < 0)
    log_msg(LOG_INFO, "progress: %s, %lld of %lld (%d%%), ETA unknown, %.0fs elapsed", phase, done, total, pct, t);
  else
    log_msg(LOG_INFO, "progress: %s, %lld of %lld (%d%%), ETA %.0fs, %.0fs elapsed", phase, done, total, pct,
            left, t);
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
  pg.counted = 0;
  pg.read_start = pg.read_end = 0;
  pg.read_done = pg.read_total = 0;
  pg.stop = 0;
  pg.drawn = 0;
  /* Without the thread there is simply no live line. */
  if (pthread_create(&pg.thread, NULL, ticker, NULL) != 0) {
    pthread_cond_destroy(&pg.cv);
    return;
  }
  pg.active = 1;
}

/* Names the phase; with `counted`, from a count of 0 of `total`. */
static void set_phase(const char *phase, int counted, long long total)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  double t = since_start();
  if (strcmp(phase, "read") == 0 && pg.read_start == 0)
    pg.read_start = t;
  else if (strcmp(pg.phase, "read") == 0)
    pg.read_end = t;
  /* The phase that ends shows its last count once: a short phase is seen
   * to finish (100%) even between two ticks; so does a read with a known
   * total. */
  if ((pg.counted || (pg.read_total > 0 && strcmp(pg.phase, "read") == 0)) && !pg.to_log)
    draw();
  pg.phase = phase;
  pg.counted = counted;
  pg.total = total >= 0 ? total : -1;
  pg.phase_start = t;
  atomic_store_explicit(&pg.done, 0, memory_order_relaxed);
  if (!pg.to_log)
    draw();
  pthread_mutex_unlock(&pg.mu);
}

void progress_phase(const char *phase)
{
  set_phase(phase, 0, 0);
}

void progress_phase_total(const char *phase, long long total)
{
  set_phase(phase, 1, total);
}

void progress_step(long long done)
{
  if (pg.active)
    atomic_store_explicit(&pg.done, done, memory_order_relaxed);
}

void progress_rows(long long rows)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  pg.rows = rows;
  pthread_mutex_unlock(&pg.mu);
}

void progress_read(long long done, long long total)
{
  if (!pg.active)
    return;
  pthread_mutex_lock(&pg.mu);
  pg.read_done = done;
  pg.read_total = total;
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
