/* An LD_PRELOAD hook for tests/integration/progress_tty.sh: holds dwload
 * at the first DWL_TEST_PACE_HOLDS (default 1) executions of an INSERT
 * whose text names DWL_TEST_PACE_TABLE, each until a line arrives on the
 * FIFO DWL_TEST_PACE_FIFO (hold.h), then runs it for real.  The run is
 * then mid-phase for as long as the test wants: it reads the progress
 * line meanwhile, with no sleep and no dependence on the machine's speed.
 * An INSERT sent on the connection's own thread (the writer's array
 * batches) holds the run at its next use of the connection instead.
 * Unset: the calls pass through.  Built for the suite, never installed. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sql.h>
#include <sqlext.h>

#include "hold.h"

typedef SQLRETURN (*prepare_fn)(SQLHSTMT, SQLCHAR *, SQLINTEGER);
typedef SQLRETURN (*execute_fn)(SQLHSTMT);
typedef SQLRETURN (*execdirect_fn)(SQLHSTMT, SQLCHAR *, SQLINTEGER);

#define MAX_PACED 64
static SQLHSTMT paced[MAX_PACED];  /* statements prepared with a paced INSERT */
static atomic_int held;  /* (the INSERT may go on the connection's own thread) */

/* An INSERT naming the table: the one statement the test paces. */
static int matches(const SQLCHAR *sql, SQLINTEGER len)
{
  const char *table = getenv("DWL_TEST_PACE_TABLE");
  if (!table || !sql)
    return 0;
  size_t n = len == SQL_NTS ? strlen((const char *)sql) : (size_t)len;
  char *s = strndup((const char *)sql, n);
  int m = s && strncasecmp(s, "INSERT", 6) == 0 && strstr(s, table) != NULL;
  free(s);
  return m;
}

static void maybe_hold(void)
{
  const char *holds = getenv("DWL_TEST_PACE_HOLDS");
  if (atomic_fetch_add(&held, 1) < (holds ? atoi(holds) : 1))
    hook_hold(getenv("DWL_TEST_PACE_FIFO"));
}

SQLRETURN SQL_API SQLPrepare(SQLHSTMT h, SQLCHAR *sql, SQLINTEGER len)
{
  prepare_fn real = (prepare_fn)(void (*)(void))dlsym(RTLD_NEXT, "SQLPrepare");
  if (!real)
    return SQL_ERROR;
  int m = matches(sql, len), free_slot = -1;
  for (int i = 0; i < MAX_PACED; i++) {
    if (paced[i] == h)
      paced[i] = NULL;  /* prepared anew: judged anew */
    if (!paced[i] && free_slot < 0)
      free_slot = i;
  }
  if (m && free_slot >= 0)
    paced[free_slot] = h;
  return real(h, sql, len);
}

SQLRETURN SQL_API SQLExecute(SQLHSTMT h)
{
  execute_fn real = (execute_fn)(void (*)(void))dlsym(RTLD_NEXT, "SQLExecute");
  if (!real)
    return SQL_ERROR;
  for (int i = 0; h && i < MAX_PACED; i++)
    if (paced[i] == h)
      maybe_hold();
  return real(h);
}

SQLRETURN SQL_API SQLExecDirect(SQLHSTMT h, SQLCHAR *sql, SQLINTEGER len)
{
  execdirect_fn real = (execdirect_fn)(void (*)(void))dlsym(RTLD_NEXT, "SQLExecDirect");
  if (!real)
    return SQL_ERROR;
  if (matches(sql, len))
    maybe_hold();
  return real(h, sql, len);
}
