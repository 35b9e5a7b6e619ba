/* The live progress line of a run on a terminal: phase, rows read, rows
 * per second (or a counted phase's count, percent and ETA) and elapsed
 * time, redrawn in place on stderr a few times a
 * second.  Every function is a no-op while no line is active.  And the
 * count line of a command that draws it itself, step by step (migrate). */
#ifndef DWL_PROGRESS_H
#define DWL_PROGRESS_H

/* Starts the line when `want` and stderr is a terminal.  Otherwise (cron,
 * Airflow: no terminal to draw on) and while log lines of level info are
 * written, a log line of the same figures every progress_set_interval
 * seconds, so a run that hangs is seen to. */
void progress_begin(int want);
/* Seconds between those log lines; 0: none.  Default PROGRESS_LOG_DEFAULT. */
#define PROGRESS_LOG_DEFAULT 30
void progress_set_interval(int seconds);
/* Names the run's current phase (a static string) and redraws at once. */
void progress_phase(const char *phase);
/* Names a counted phase: the line shows how many of `total` it has done
 * (progress_step), the percent and an ETA; with a total of -1 (not known
 * beforehand) how many rows it has scanned and their rate.  The phase it ends is drawn
 * once more with its last count. */
void progress_phase_total(const char *phase, long long total);
/* How many the counted phase has done so far.  Cheap enough for a loop
 * over rows: a relaxed atomic store, read by the redraws. */
void progress_step(long long done);
/* Source rows read so far. */
void progress_rows(long long rows);
/* How far the read phase is in the source's own measure: done of total
 * (bytes of a file, say; total 0: not known).  With a total, the read
 * line shows the percent and an ETA beside the rows. */
void progress_read(long long done, long long total);
/* Stops the line and erases it. */
void progress_end(void);

/* Around every other write to stderr: erase the line and keep it erased
 * until release (the next tick redraws it). */
void progress_hold(void);
void progress_release(void);

/* For a command without the live line: "COMMAND: WHAT: N rows, R rows/s"
 * (R over `seconds`) drawn in place of the last such line, and kept,
 * ended with a newline, when `end`.  On a terminal only; lines drawn from
 * several threads do not mix. */
void progress_count(const char *command, const char *what, long long rows, double seconds, int end);

#endif
