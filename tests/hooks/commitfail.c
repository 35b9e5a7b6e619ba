/* An LD_PRELOAD hook for tests/integration/commit_fail.sh: makes dwload's
 * first SQLEndTran(SQL_COMMIT) fail the way a commit fails when the
 * server or the network dies during it.  DWL_TEST_COMMIT says how:
 *   after    commit for real, then report failure (the commit happened)
 *   before   cut the connection's sockets and report failure without
 *            committing (the server rolls the transaction back)
 *   unknown  as after, and every later connection attempt fails (the
 *            outcome cannot be checked)
 *   hold     create the file $DWL_TEST_COMMIT_FIFO.ready, wait for a line
 *            on the FIFO $DWL_TEST_COMMIT_FIFO (a signal does not end the
 *            wait; 60 s do), then commit for real: the test kills the
 *            session on the server meanwhile, or signals dwload at its
 *            commit
 * Unset: the calls pass through.  Built for the suite, never installed. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sql.h>
#include <sqlext.h>

typedef SQLRETURN (*endtran_fn)(SQLSMALLINT, SQLHANDLE, SQLSMALLINT);
typedef SQLRETURN (*driverconnect_fn)(SQLHDBC, SQLHWND, SQLCHAR *, SQLSMALLINT, SQLCHAR *, SQLSMALLINT,
                                      SQLSMALLINT *, SQLUSMALLINT);

static int fired;      /* the first commit has been failed */
static int no_connect; /* unknown: no connection after that */

/* Every socket of the process shut down: the server sees the client go. */
static void cut_sockets(void)
{
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    int fd = atoi(e->d_name);
    struct stat st;
    if (e->d_name[0] != '.' && fd != dirfd(d) && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
      shutdown(fd, SHUT_RDWR);
  }
  closedir(d);
}

/* hold: says it is at the commit, waits for the test's go */
static void hold(void)
{
  const char *fifo = getenv("DWL_TEST_COMMIT_FIFO");
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

SQLRETURN SQL_API SQLEndTran(SQLSMALLINT htype, SQLHANDLE h, SQLSMALLINT completion)
{
  endtran_fn real = (endtran_fn)(void (*)(void))dlsym(RTLD_NEXT, "SQLEndTran");
  const char *mode = getenv("DWL_TEST_COMMIT");
  if (!real)
    return SQL_ERROR;
  if (!mode || fired || completion != SQL_COMMIT || htype != SQL_HANDLE_DBC)
    return real(htype, h, completion);
  fired = 1;
  if (strcmp(mode, "before") == 0) {
    cut_sockets();
    return SQL_ERROR;
  }
  if (strcmp(mode, "hold") == 0) {
    hold();
    return real(htype, h, completion);
  }
  SQLRETURN rc = real(htype, h, completion);
  if (strcmp(mode, "unknown") == 0)
    no_connect = 1;
  return SQL_SUCCEEDED(rc) ? SQL_ERROR : rc;
}

SQLRETURN SQL_API SQLDriverConnect(SQLHDBC dbc, SQLHWND w, SQLCHAR *in, SQLSMALLINT inlen, SQLCHAR *out,
                                   SQLSMALLINT outmax, SQLSMALLINT *outlen, SQLUSMALLINT completion)
{
  driverconnect_fn real = (driverconnect_fn)(void (*)(void))dlsym(RTLD_NEXT, "SQLDriverConnect");
  if (!real || no_connect)
    return SQL_ERROR;
  return real(dbc, w, in, inlen, out, outmax, outlen, completion);
}
