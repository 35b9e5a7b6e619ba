/* The LD_PRELOAD hooks' one way to hold dwload at a point the test chose:
 * create FIFO.ready, then wait for a line on the FIFO (60 s at most; a
 * signal does not end the wait).  Included by each hook (commitfail.c,
 * pace.c), built for the suite, never installed. */
#ifndef DWL_TEST_HOLD_H
#define DWL_TEST_HOLD_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void hook_hold(const char *fifo)
{
  if (!fifo)
    return;
  char ready[4096];
  snprintf(ready, sizeof ready, "%s.ready", fifo);
  int rfd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (rfd >= 0)
    close(rfd);
  /* Opened read-write, so the open does not wait for the test; the wait
   * for its line is bounded (60 s), so a test that fails leaves no run
   * behind.  dwload's signal handlers do not restart calls: retried. */
  int fd = open(fifo, O_RDWR);
  if (fd < 0)
    return;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    long left = 60000 - (long)((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
    if (left <= 0)
      break;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n = poll(&p, 1, (int)left);
    char c;
    if (n > 0 && read(fd, &c, 1) == 1 && c == '\n')
      break;
    if (n < 0 && errno != EINTR)
      break;
  }
  close(fd);
}

#endif
