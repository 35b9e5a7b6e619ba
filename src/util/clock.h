/* The clock that times a run's stages for the log and the summary. */
#ifndef DWL_CLOCK_H
#define DWL_CLOCK_H

/* Seconds on the monotonic clock: only differences mean anything, and a
 * change of the wall clock during a run does not disturb them. */
double now_s(void);

#endif
