/* The monotonic clock of the log's and the summary's timings (the run, the
 * pushdown statements, migrate), in one place instead of a copy per file. */
#include "clock.h"

#include <time.h>

double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
