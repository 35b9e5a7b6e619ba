/* dwload run with several job files or a folder: each job runs in a
 * child process of its own (the same binary, started as a single run),
 * at most --jobs N at a time; each child's stdout is captured and printed
 * whole when it ends, so jobs' lines never interleave, and an overall
 * JSON line ends stdout. */
#ifndef DWL_RUN_MANY_H
#define DWL_RUN_MANY_H

/* How run_many starts each child: the dwload command line up to the
 * command (argv[0] and the global options), the run options to repeat
 * for every job, and what the overall exit status reads as success. */
typedef struct run_many_opts {
  char **global_argv;   /* argv[0] and the global options */
  int global_argc;
  char **run_argv;      /* --empty-exit N, --max-deletes L, --allow-empty */
  int run_argc;
  int jobs;             /* --jobs N: at most N children at once (>= 1) */
  int fail_fast;        /* --fail-fast: start no job after one failed */
  int empty_exit;       /* run --empty-exit N; -1 none */
} run_many_opts;

/* 1 when a run's job arguments ask for several jobs (more than one
 * argument, or a folder), 0 for one job file: today's single run. */
int run_many_wanted(int npaths, char **paths);

/* --jobs N: 1 to 64.  0, or -1 when s is not such a number. */
int run_many_parse_jobs(const char *s, int *out);

/* Expands paths (files, and folders to their *.yaml and *.yml sorted),
 * runs the jobs and prints their lines and the overall line.  Returns the
 * overall exit status (dwload(1), RUNNING SEVERAL JOBS). */
int run_many(const run_many_opts *o, int npaths, char **paths);

#endif
