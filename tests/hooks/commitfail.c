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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sql.h>
#include <sqlext.h>

#include "hold.h"

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
    hook_hold(getenv("DWL_TEST_COMMIT_FIFO"));
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
