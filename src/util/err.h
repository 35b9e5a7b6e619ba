/* Error reporting inside the host: the first error message wins and travels
 * up unchanged, so the root cause reaches the user; each error carries the
 * exit code it maps to (see dwload(1), EXIT STATUS) and, where advice
 * follows from it, a cause: hint.c chooses the hint from the code, the
 * cause and the SQLSTATE, never from the message's words. */
#ifndef DWL_ERR_H
#define DWL_ERR_H

#include <stdarg.h>
#include <stddef.h>

enum dwl_exit {
  DWL_EXIT_OK = 0,
  DWL_EXIT_FAILED = 1,  /* source, target or data error, maybe passing (a lost connection); nothing committed */
  DWL_EXIT_USAGE = 2,   /* bad command line or invalid job spec */
  DWL_EXIT_LOCKED = 3,  /* another run of the same job holds its lock */
  DWL_EXIT_PERMANENT = 4, /* failed in a way a retry cannot fix (err.c's table of causes); nothing committed */
  DWL_EXIT_UNKNOWN = 5, /* the commit call failed and its outcome could not be checked */
  DWL_EXIT_SUMMARY = 6, /* the run's summary could not be written to stdout */
  DWL_EXIT_SIGNAL = 128 /* + N: interrupted by signal N (rolled back) */
};

/* What failed, for the errors that advice follows from (hint.c), where
 * the exit code alone does not tell: exit 1 and 2 have many causes, while
 * 3 (locked), 5 (commit unknown) and 128+N (a signal) name theirs.  The
 * permanent causes decide the exit code too: err.c's one table maps them
 * to DWL_EXIT_PERMANENT, so a scheduler retries exit 1 and not exit 4. */
enum dwl_cause {
  DWL_CAUSE_NONE = 0,
  DWL_CAUSE_SPEC,             /* the job file is wrong at a position (file:line:col) or key it names */
  DWL_CAUSE_CONNECT,          /* a warehouse connection could not be opened */
  DWL_CAUSE_PLUGIN_NOT_FOUND, /* no plugin of that name on the search path */
  DWL_CAUSE_NOT_PLUGIN,       /* a file that loads but has no plugin entry function */
  DWL_CAUSE_PLUGIN_OPTION,    /* an option the plugin does not declare */
  DWL_CAUSE_GUARD,            /* a deletes: absent guard refused the run (empty extract, load.max_deletes) */
  DWL_CAUSE_INTERRUPTED,      /* a signal stopped the run */
  DWL_CAUSE_NO_TABLE,         /* the target table does not exist yet (asof) */
  DWL_CAUSE_SCHEMA,           /* the target table does not fit the job (a missing column, too many columns) */
  DWL_CAUSE_REJECTS,          /* more rejected rows than load.max_rejects allows */
  DWL_CAUSE_REJECT_FILE,      /* load.reject_file cannot be created (no such folder, no permission) */
  DWL_CAUSE_PLUGIN_ABI,       /* a plugin file that loads but does not speak the plugin ABI */
  DWL_CAUSE_NON_ATOMIC,       /* a distributed target table whose servers would not commit together */
  DWL_CAUSE_PREPARED_XA,      /* a lock wait ran out while prepared XA transactions hold locks */
  DWL_CAUSE_COMMIT_APART      /* a failed commit on a table whose rows commit apart from the checkpoint */
};

/* The exit code an error with this cause ends the command with: the cause's
 * row in err.c's table, else `code`.  err_setc and err_cause apply it. */
int err_exit_for(int cause, int code);

typedef struct dwl_error {
  int code;        /* 0 while no error is recorded, else an enum dwl_exit */
  int cause;       /* an enum dwl_cause; the first error's, as its message */
  char msg[2048];
  /* A warehouse error: the driver's SQLSTATE and native code ("" and 0
   * otherwise), so a caller can tell a lock wait timeout from others. */
  char sqlstate[6];
  long native;
} dwl_error;

void err_init(dwl_error *e);
/* Records an error unless one is already recorded.  Returns -1. */
int err_set(dwl_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int err_vset(dwl_error *e, int code, const char *fmt, va_list ap);
/* err_set with a cause (enum dwl_cause); a permanent cause makes the code
 * DWL_EXIT_PERMANENT (err_exit_for). */
int err_setc(dwl_error *e, int code, int cause, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Gives the recorded error a cause unless it has one: for an error that a
 * callee recorded without one (an ODBC failure, a prefixed check), called
 * right after that callee failed; the code follows it (err_exit_for).
 * Returns -1. */
int err_cause(dwl_error *e, int cause);
/* Prefixes the recorded message with context ("loading plugin x: ..."). */
void err_prefix(dwl_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int err_isset(const dwl_error *e);

/* A value as a message quotes it: at most `max` of its len bytes, then
 * "..." when cut, with the bytes a terminal would not show visible: NUL
 * as \0, CR \r, LF \n, TAB \t, other control bytes as \xHH.  Returns out
 * (always terminated). */
const char *err_quote(char *out, size_t n, const char *s, size_t len, size_t max);

#endif
