/* SIGINT, SIGTERM and SIGHUP during a run: the first one makes the run
 * stop at its next check, roll back and report; the second ends the
 * process at once.  SIGPIPE is ignored, so a closed stdout is an error
 * the run reports (exit 6), not a silent death. */
#ifndef DWL_INTERRUPT_H
#define DWL_INTERRUPT_H

#include <sql.h>

#include "err.h"

/* Installs the handlers and starts the thread that cancels the statement
 * in progress when a signal arrives.  Once per process. */
void interrupt_install(void);
/* The signal that interrupted the run, 0 when none did. */
int interrupt_signal(void);
/* -1 with err set ("interrupted by SIGTERM", exit 128+N) while an
 * interruption is pending, else 0.  Checked between batches and before
 * every statement. */
int interrupt_check(dwl_error *err);
/* The run has seen the interruption and is cleaning up (rolling back,
 * recording it): interrupt_check passes again, the signal stays known. */
void interrupt_ack(void);

/* The run is over: acknowledges any signal and ends the watcher thread
 * (joined), so dwload exits with no thread of its own still running (a
 * leak checker stopping every thread at exit need not look at it). */
void interrupt_shutdown(void);
/* Replaces err with the interruption's error (the root cause of whatever
 * failed after the signal). */
void interrupt_err(dwl_error *err);
/* A statement executing (or fetching) that a signal should cancel, and
 * its end.  Up to a few at once (the writer's sender thread, a reader).
 * begin fails like interrupt_check (and registers nothing) when an
 * interruption is pending. */
int interrupt_stmt_begin(SQLHSTMT h, dwl_error *err);
void interrupt_stmt_end(SQLHSTMT h);

#endif
