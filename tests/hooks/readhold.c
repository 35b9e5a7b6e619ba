/* An LD_PRELOAD hook for tests/integration/progress_tty.sh: holds dwload
 * in its read phase.  getline() (the csv plugin reads its file a line at
 * a time with it; glibc's inline getline is __getdelim, so that is the
 * symbol wrapped) on the file DWL_TEST_READ_FILE waits at its
 * DWL_TEST_READ_LINE-th line until a line arrives on the FIFO
 * DWL_TEST_READ_FIFO (hold.h), then reads on: the run is mid-read for as
 * long as the test wants, with no sleep.  Other streams, and everything
 * when unset, pass through.  Built for the suite, never installed. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "hold.h"

typedef ssize_t (*getdelim_fn)(char **, size_t *, int, FILE *);

static FILE *seen;      /* the last stream judged, and whether it is the file */
static int seen_is_file;
static long lines;

/* Is `fp` open on DWL_TEST_READ_FILE?  Judged once per stream. */
static int is_the_file(FILE *fp)
{
  if (fp == seen)
    return seen_is_file;
  seen = fp;
  seen_is_file = 0;
  const char *want = getenv("DWL_TEST_READ_FILE");
  char link[64], path[PATH_MAX], real[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(fp));
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (want && n > 0 && realpath(want, real)) {
    path[n] = '\0';
    seen_is_file = strcmp(path, real) == 0;
  }
  return seen_is_file;
}

static void maybe_hold(FILE *fp, int delim)
{
  const char *at = getenv("DWL_TEST_READ_LINE");
  if (at && fp && delim == '\n' && is_the_file(fp) && ++lines == atol(at))
    hook_hold(getenv("DWL_TEST_READ_FIFO"));
}

ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *fp)
{
  getdelim_fn real = (getdelim_fn)(void (*)(void))dlsym(RTLD_NEXT, "__getdelim");
  if (!real)
    return -1;
  maybe_hold(fp, delim);
  return real(line, cap, delim, fp);
}

ssize_t getline(char **line, size_t *cap, FILE *fp)
{
  return __getdelim(line, cap, '\n', fp);
}
