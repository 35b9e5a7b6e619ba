/* The dwload command line: global options, then a command and its job
 * file.  Exit codes (dwload(1)): 0 ok, 1 run failed, 2 usage or spec
 * error, 3 the job is locked by another run, 4 failed permanently (a retry
 * cannot fix it), 5 the commit's outcome is
 * unknown, 6 the summary could not be written, 128+N interrupted by
 * signal N. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "asof.h"
#include "check_cmd.h"
#include "err.h"
#include "hint.h"
#include "interrupt.h"
#include "lineage.h"
#include "log.h"
#include "metrics.h"
#include "migrate.h"
#include "plugin_host.h"
#include "plugin_list.h"
#include "progress.h"
#include "refresh.h"
#include "run.h"
#include "run_many.h"
#include "runs_cmd.h"
#include "spec.h"
#include "state_cmd.h"
#include "summary.h"

static const char usage_text[] =
    "Usage: dwload [GLOBAL OPTIONS] COMMAND [OPTIONS] JOB.yaml\n"
    "\n"
    "Loads warehouse tables from connector plugins: appends, replaces, upserts and\n"
    "SCD type 2 history, one transaction per run, with an lmd checkpoint.\n"
    "\n"
    "Commands:\n"
    "  run JOB.yaml          run the job; the last stdout line is a JSON summary\n"
    "                        [--empty-exit N] [--max-deletes LIMIT] [--allow-empty]\n"
    "                        [--lineage-file F] [--lineage-url U] [--metrics-file P]\n"
    "  run JOB.yaml... | DIR several jobs, an overall JSON line last [--jobs N] [--fail-fast]\n"
    "  plan JOB.yaml         everything run does except writing [--sql]\n"
    "                        [--max-deletes LIMIT] [--allow-empty]\n"
    "  check JOB.yaml        validate the spec and the plugin's options offline\n"
    "                        [--json] [--spec-only | --connect]\n"
    "  state JOB.yaml        show the stored checkpoint and the last run\n"
    "  runs JOB.yaml         the job's last runs, newest first [--limit N] [--json]\n"
    "  asof JOB.yaml --at T  print the dimension as it stood at time T, as CSV\n"
    "  migrate --from CONN --to CONN (--table T ... | --all)\n"
    "                        copy tables between warehouses, resumable, verified\n"
    "  plugins               list the plugins found and their options [--json]\n"
    "\n"
    "Global options:\n"
    "  --plugin-path DIRS    colon-separated directories searched first for plugins\n"
    "  --log-level LEVEL     error, warn, info (default) or debug; logs go to stderr\n"
    "  --log-format FORMAT   text (default) or json (one object per line)\n"
    "  -q, --quiet           same as --log-level error (and no progress line)\n"
    "  --no-progress         no live progress line, even on a terminal\n"
    "  --progress-interval S without a terminal, a progress log line every S seconds (default 30; 0: none)\n"
    "  -h, --help            this help; `dwload COMMAND --help` for a command\n"
    "  -V, --version         print the version\n"
    "\n"
    "Exit status: 0 success, 1 the run failed (nothing committed), 2 bad command\n"
    "line or invalid job spec, 3 another run of the job holds its lock, 5 the\n"
    "commit call failed and its outcome is unknown (see `dwload state`), 6 the\n"
    "summary could not be written to stdout, 128+N interrupted by signal N\n"
    "(rolled back); N with run --empty-exit N when nothing was past the\n"
    "checkpoint.  1, 3, 5 and 128+N are worth a retry, 2 is not.\n"
    "See dwload(1) and dwload-job(5).\n";

/* What a job command's options asked for. */
typedef struct job_args {
  int sql;                  /* plan --sql */
  const char *at;           /* asof --at */
  int empty_exit;           /* run --empty-exit N; -1 none */
  spec_limit max_deletes;   /* --max-deletes */
  int have_max_deletes, allow_empty;
  long long memory_budget;  /* --memory-budget; 0 none */
  check_opts check;         /* check --json, --spec-only */
  state_opts state;         /* state --reset, --set, --clear-running, --json */
  int full_refresh;         /* run, plan --full-refresh */
  const char *backfill_from, *backfill_to;
  const char *as_of;        /* run, plan --as-of */
  run_many_opts many;       /* run --jobs N, --fail-fast: several jobs (run_many.h) */
  char *run_argv[21];        /* the run options each of several jobs repeats */
  const char *spec_path;    /* the job file */
  const char *lineage_file, *lineage_url, *metrics_file;  /* run --lineage-file, ... */
  const char *job_name;     /* the job name of a job file that did not load, or NULL */
  long limit;               /* runs --limit N */
} job_args;

/* The options a job command takes (command.opts). */
enum {
  OPT_SQL = 1 << 0,
  OPT_AT = 1 << 1,
  OPT_EMPTY_EXIT = 1 << 2,
  OPT_MAX_DELETES = 1 << 3,  /* and --allow-empty */
  OPT_CHECK = 1 << 4,        /* --json, --spec-only and --connect */
  OPT_SIGNALS = 1 << 5,      /* a signal rolls the run back and reports */
  OPT_STATE = 1 << 6,        /* --reset, --set, --clear-running (and --json) */
  OPT_REFRESH = 1 << 7,      /* --full-refresh, --backfill-from, --backfill-to, --as-of */
  OPT_MANY = 1 << 8,         /* several job files or a folder: --jobs, --fail-fast */
  OPT_OBSERVE = 1 << 9,      /* --lineage-file, --lineage-url, --metrics-file */
  OPT_RUNS = 1 << 10,         /* runs: --limit and --json */
};

typedef struct command command;
/* A command's driver: the command line from its name on; exit status. */
typedef int (*command_fn)(const command *cmd, int argc, char **argv);
/* A job command's own part, once its job file is loaded; spec is NULL
 * when it did not load (err says why, already logged).  Exit status. */
typedef int (*job_fn)(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err);

/* One row per command: main dispatches on name, help prints usage. */
struct command {
  const char *name;
  command_fn main;
  job_fn job;        /* for main = cmd_job */
  unsigned opts;     /* for main = cmd_job: OPT_* */
  const char *usage;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "dwload: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'dwload --help'.\n");
  return DWL_EXIT_USAGE;
}

/* The error that ends a command, with what to do next. */
static void log_error(const dwl_error *err)
{
  log_field f = {"exit", NULL, err->code ? err->code : DWL_EXIT_FAILED};
  log_fields(LOG_ERROR, &f, 1, hint_for(err), "%s", err->msg);
}

/* Exit codes a scheduler reads as dwload's own: --empty-exit avoids them,
 * so "nothing to do" is never mistaken for a failure, a lock, a permanent failure, an unknown
 * commit, a lost summary (1 to 6) or a signal (128 and up). */
static int parse_empty_exit(const char *s, int *out)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < 0 || (v >= DWL_EXIT_FAILED && v <= DWL_EXIT_SUMMARY) ||
      v >= DWL_EXIT_SIGNAL)
    return -1;
  *out = (int)v;
  return 0;
}

/* Nothing past the checkpoint and nothing changed: what --empty-exit means. */
static int run_was_empty(const run_summary *s)
{
  return s->read - s->skipped == 0 && s->inserted + s->expired + s->updated + s->deleted == 0;
}

static int show_progress = 1;
/* argv[0] and the global options, which each job of several repeats. */
static char **global_argv;
static int global_argc;

/* state's options: one change at most. */
static int state_option(state_opts *s, int c, const char *arg)
{
  if (s->action != STATE_SHOW)
    return usage_error("state takes one of --reset, --set and --clear-running");
  s->action = c == 'R' ? STATE_DO_RESET : c == 'T' ? STATE_DO_SET : STATE_DO_CLEAR_RUNNING;
  s->value = arg;
  return 0;
}

static int cmd_plugins(const command *cmd, int argc, char **argv)
{
  static const struct option opts[] = {
    {"plugin-path", required_argument, NULL, 'P'},
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int json = 0, c;
  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'P':
      plugin_set_extra_path(optarg);
      break;
    case 'j':
      json = 1;
      break;
    case 'h':
      fputs(cmd->usage, stdout);
      return DWL_EXIT_OK;
    default:
      return usage_error("bad option for plugins");
    }
  }
  if (optind != argc)
    return usage_error("plugins takes no job file");
  return plugin_list(stdout, json) == 0 ? DWL_EXIT_OK : DWL_EXIT_FAILED;
}

/* Prints the summary line of run and plan; a summary that cannot be
 * written (stdout on a full disk, a closed pipe) is said on stderr, with
 * whether the run committed, and makes a successful run exit 6.  A failed
 * run keeps its own exit status. */
static int print_summary(const run_summary *s, int committed, int rc)
{
  if (summary_print(s, stdout) == 0)
    return rc;
  int e = errno;
  log_msg(LOG_ERROR, "could not write the run's summary to stdout (%s): it is lost; the run %s", strerror(e),
          committed                  ? "committed"
          : rc == DWL_EXIT_UNKNOWN   ? "may or may not have committed (see the error above)"
                                     : "did not commit");
  return rc == DWL_EXIT_OK ? DWL_EXIT_SUMMARY : rc;
}

/* Prints the summary line for run and plan, also when the spec is bad, so
 * a scheduler always finds one. */
static int summary_for_failure(const char *job, const char *mode, int rc)
{
  run_summary s;
  summary_init(&s, job, mode);
  return print_summary(&s, 0, rc);
}

static int cmd_migrate(const command *cmd, int argc, char **argv)
{
  (void)cmd;
  return migrate_main(argc, argv);
}

/* run and plan: the summary line is printed in every case, also when the
 * spec is bad, so a scheduler always finds one. */
/* Keeps a run option for the child runs of several jobs (run_many.c),
 * which repeat it: a usage error rather than an overflow when an option is
 * given over and over. */
static int many_arg(job_args *a, char *arg)
{
  if (a->many.run_argc >= (int)(sizeof a->run_argv / sizeof a->run_argv[0]))
    return usage_error("too many run options");
  a->run_argv[a->many.run_argc++] = arg;
  return 0;
}

static int job_run(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err)
{
  if (!spec)
    return summary_for_failure(a->job_name, NULL, err->code);
  int is_run = strcmp(cmd->name, "run") == 0;
  run_opts o = {.plan = !is_run,
                .sqlout = a->sql ? stdout : NULL,
                .max_deletes = a->have_max_deletes ? &a->max_deletes : NULL,
                .allow_empty = a->allow_empty,
                .memory_budget = a->memory_budget,
                .full_refresh = a->full_refresh,
                .backfill_from = a->backfill_from,
                .backfill_to = a->backfill_to,
                .as_of = a->as_of};
  run_summary sum;
  dwl_spec copy;
  const dwl_spec *use;
  if (refresh_check(spec, &o, &copy, &use, err) != 0) {
    interrupt_shutdown();  /* no run: the signal thread ends here */
    log_error(err);
    return summary_for_failure(spec->job, run_mode_name(spec->mode), err->code);
  }
  lineage *lin = is_run ? lineage_open(spec, a->lineage_file, a->lineage_url) : NULL;
  o.on_start = lineage_start;
  o.start_ud = lin;
  progress_begin(show_progress && log_get_level() >= LOG_INFO && log_get_format() == LOG_TEXT);
  int rc = run_job(use, &o, &sum, err);
  interrupt_shutdown();  /* the run is over: a signal now changes nothing */
  progress_end();
  if (rc != 0)
    log_error(err);
  int code = rc == 0 ? DWL_EXIT_OK : err->code ? err->code : DWL_EXIT_FAILED;
  if (rc == 0 && a->empty_exit >= 0 && run_was_empty(&sum)) {
    log_msg(LOG_INFO, "nothing past the checkpoint: exit %d (--empty-exit)", a->empty_exit);
    code = a->empty_exit;
  }
  lineage_end(lin, &sum, rc, err);
  lineage_free(lin);
  if (is_run)
    metrics_write(a->metrics_file, &sum, code);
  return print_summary(&sum, rc == 0 && is_run, code);
}

/* The exit status of a job command that failed with err, or succeeded. */
static int job_exit(int rc, const dwl_error *err)
{
  return rc == 0 ? DWL_EXIT_OK : err->code ? err->code : DWL_EXIT_FAILED;
}

/* check reports a failed step itself, not as a logged error. */
static int job_check(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err)
{
  (void)cmd;
  if (!spec) {
    check_spec_failed(a->spec_path, &a->check, err, stdout);
    return err->code;
  }
  return job_exit(check_job(spec, &a->check, stdout, err), err);
}

static int job_state(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err)
{
  (void)cmd;
  if (!spec)
    return err->code;
  int rc = state_job(spec, &a->state, stdout, err);
  if (rc != 0)
    log_error(err);
  return job_exit(rc, err);
}

static int job_runs(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err)
{
  (void)cmd;
  if (!spec)
    return err->code;
  int rc = runs_job(spec, a->limit, a->check.json, stdout, err);
  if (rc != 0)
    log_error(err);
  return job_exit(rc, err);
}

static int job_asof(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err)
{
  (void)cmd;
  if (!spec)
    return err->code;
  int rc = asof_job(spec, a->at, stdout, err);
  if (rc != 0)
    log_error(err);
  return job_exit(rc, err);
}

/* The job commands: their options (each allowed by cmd->opts), then the
 * job file, loaded and handed to cmd->job. */
static int cmd_job(const command *cmd, int argc, char **argv)
{
  static const struct option opts[] = {
    {"sql", no_argument, NULL, 's'},
    {"at", required_argument, NULL, 'a'},
    {"empty-exit", required_argument, NULL, 'e'},
    {"max-deletes", required_argument, NULL, 'm'},
    {"allow-empty", no_argument, NULL, 'E'},
    {"memory-budget", required_argument, NULL, 'G'},
    {"json", no_argument, NULL, 'j'},
    {"spec-only", no_argument, NULL, 'S'},
    {"connect", no_argument, NULL, 'K'},
    {"reset", no_argument, NULL, 'R'},
    {"set", required_argument, NULL, 'T'},
    {"clear-running", no_argument, NULL, 'C'},
    {"full-refresh", no_argument, NULL, 'f'},
    {"backfill-from", required_argument, NULL, 'b'},
    {"backfill-to", required_argument, NULL, 'B'},
    {"as-of", required_argument, NULL, 'A'},
    {"jobs", required_argument, NULL, 'J'},
    {"fail-fast", no_argument, NULL, 'x'},
    {"lineage-file", required_argument, NULL, 'l'},
    {"lineage-url", required_argument, NULL, 'u'},
    {"metrics-file", required_argument, NULL, 'M'},
    {"limit", required_argument, NULL, 'W'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  job_args a;
  memset(&a, 0, sizeof a);
  a.empty_exit = -1;
  a.many.jobs = 1;
  a.limit = 20;
  int c;
  optind = 0;  /* 0 makes glibc getopt start afresh on the new argv */
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (!(cmd->opts & OPT_SQL))
        return usage_error("--sql applies only to plan");
      a.sql = 1;
      break;
    case 'a':
      if (!(cmd->opts & OPT_AT))
        return usage_error("--at applies only to asof");
      a.at = optarg;
      break;
    case 'e':
      if (!(cmd->opts & OPT_EMPTY_EXIT))
        return usage_error("--empty-exit applies only to run");
      if (parse_empty_exit(optarg, &a.empty_exit) != 0)
        return usage_error("--empty-exit must be 0 or 7 to 127 (1 to 6 and 128 to 255 are dwload's own exit codes), not '%s'", optarg);
      if (many_arg(&a, "--empty-exit") != 0 || many_arg(&a, optarg) != 0)
        return DWL_EXIT_USAGE;
      break;
    case 'm':
    case 'E':
      if (!(cmd->opts & OPT_MAX_DELETES))
        return usage_error("--%s applies only to run and plan", c == 'm' ? "max-deletes" : "allow-empty");
      if (c == 'E' && !a.allow_empty)
        if (many_arg(&a, "--allow-empty") != 0)
          return DWL_EXIT_USAGE;
      if (c == 'E')
        a.allow_empty = 1;
      else if (spec_parse_limit(optarg, &a.max_deletes) != 0)
        return usage_error("--max-deletes must be a number of keys, a percentage from 0%% to 100%% or all, not '%s'",
                           optarg);
      else if (!a.have_max_deletes) {
        a.have_max_deletes = 1;
        if (many_arg(&a, "--max-deletes") != 0 || many_arg(&a, optarg) != 0)
          return DWL_EXIT_USAGE;
      }
      break;
    case 'G':
      if (!(cmd->opts & OPT_MAX_DELETES))
        return usage_error("--memory-budget applies only to run and plan");
      if (a.memory_budget)  /* once: several jobs' runs repeat it */
        return usage_error("--memory-budget given twice");
      if (spec_parse_size(optarg, &a.memory_budget) != 0)
        return usage_error("--memory-budget must be " SPEC_SIZE_FORMS " (more than 0, at most 1 PiB), not '%s'",
                           optarg);
      if (many_arg(&a, "--memory-budget") != 0 || many_arg(&a, optarg) != 0)
        return DWL_EXIT_USAGE;
      break;
    case 'J':
    case 'x':
      if (!(cmd->opts & OPT_MANY))
        return usage_error("--%s applies only to run", c == 'J' ? "jobs" : "fail-fast");
      if (c == 'x')
        a.many.fail_fast = 1;
      else if (run_many_parse_jobs(optarg, &a.many.jobs) != 0)
        return usage_error("--jobs must be a number from 1 to 64, not '%s'", optarg);
      break;
    case 'R':
    case 'T':
    case 'C':
      if (!(cmd->opts & OPT_STATE))
        return usage_error("--%s applies only to state", c == 'R' ? "reset" : c == 'T' ? "set" : "clear-running");
      if (state_option(&a.state, c, optarg) != 0)
        return DWL_EXIT_USAGE;
      break;
    case 'f':
    case 'b':
    case 'B':
    case 'A': {
      char *name = c == 'f' ? "--full-refresh" : c == 'b' ? "--backfill-from" : c == 'B' ? "--backfill-to" : "--as-of";
      if (!(cmd->opts & OPT_REFRESH))
        return usage_error("%s applies only to run and plan", name);
      if (c == 'f')
        a.full_refresh = 1;
      else
        *(c == 'b' ? &a.backfill_from : c == 'B' ? &a.backfill_to : &a.as_of) = optarg;
      if (many_arg(&a, name) != 0 ||
          (c != 'f' && many_arg(&a, optarg) != 0))
        return DWL_EXIT_USAGE;
      break;
    }
    case 'K':
      if (!(cmd->opts & OPT_CHECK))
        return usage_error("--connect applies only to check");
      a.check.connect = 1;
      break;
    case 'j':
    case 'S':
      if (c == 'j' && (cmd->opts & OPT_STATE)) {
        a.state.json = 1;
        break;
      }
      if (!(cmd->opts & (c == 'j' ? OPT_CHECK | OPT_RUNS : OPT_CHECK)))
        return usage_error("--%s applies only to check%s", c == 'j' ? "json" : "spec-only", c == 'j' ? ", state and runs" : "");
      if (c == 'j')
        a.check.json = 1;
      else
        a.check.spec_only = 1;
      break;
    case 'l':
    case 'u':
    case 'M':
      if (!(cmd->opts & OPT_OBSERVE))
        return usage_error("--%s applies only to run",
                           c == 'l' ? "lineage-file" : c == 'u' ? "lineage-url" : "metrics-file");
      *(c == 'l' ? &a.lineage_file : c == 'u' ? &a.lineage_url : &a.metrics_file) = optarg;
      if (many_arg(&a, c == 'l' ? "--lineage-file" : c == 'u' ? "--lineage-url" : "--metrics-file") != 0 ||
          many_arg(&a, optarg) != 0)
        return DWL_EXIT_USAGE;
      break;
    case 'W': {
      char *end;
      if (!(cmd->opts & OPT_RUNS))
        return usage_error("--limit applies only to runs");
      a.limit = strtol(optarg, &end, 10);
      if (end == optarg || *end || a.limit < 1 || a.limit > 1000000)
        return usage_error("--limit must be a number from 1 to 1000000, not '%s'", optarg);
      break;
    }
    case 'h':
      fputs(cmd->usage, stdout);
      return DWL_EXIT_OK;
    default:
      return usage_error("bad option for %s", cmd->name);
    }
  }
  if ((cmd->opts & OPT_MANY) && run_many_wanted(argc - optind, argv + optind)) {
    /* Each job's run would replace the one file with its own metrics. */
    if (a.metrics_file)
      return usage_error("--metrics-file takes one job: with several, each job would overwrite the others' metrics");
    a.many.global_argv = global_argv;
    a.many.global_argc = global_argc;
    a.many.run_argv = a.run_argv;
    a.many.empty_exit = a.empty_exit;
    return run_many(&a.many, argc - optind, argv + optind);
  }
  if (optind != argc - 1)
    return optind >= argc ? usage_error("%s needs a job file", cmd->name)
                          : usage_error("%s takes one job file", cmd->name);
  if ((cmd->opts & OPT_AT) && !a.at)
    return usage_error("asof needs --at TIMESTAMP");
  if ((cmd->opts & OPT_STATE) && a.state.json && a.state.action == STATE_SHOW)
    return usage_error("state --json goes with --reset, --set or --clear-running");

  /* A run stopped by a signal rolls back and reports (dwload(1), SIGNALS). */
  if (cmd->opts & OPT_SIGNALS)
    interrupt_install();
  dwl_error err;
  err_init(&err);
  a.spec_path = argv[optind];
  /* a spec error after the job name: the logs and the summary name the job */
  char job[80];
  dwl_spec *spec = spec_load_job(argv[optind], job, sizeof job, &err);
  if (!spec) {
    err_cause(&err, DWL_CAUSE_SPEC);  /* the job file: unreadable, or wrong where perr says */
    if (job[0])
      log_set_job(job);
    log_error(&err);
    a.job_name = job[0] ? job : NULL;
    return cmd->job(cmd, &a, NULL, &err);
  }
  log_set_job(spec->job);
  int code = cmd->job(cmd, &a, spec, &err);
  spec_free(spec);
  return code;
}

static const command commands[] = {
  {"run", cmd_job, job_run, OPT_EMPTY_EXIT | OPT_MAX_DELETES | OPT_SIGNALS | OPT_REFRESH | OPT_MANY | OPT_OBSERVE,
   "Usage: dwload run [--empty-exit N] [--max-deletes LIMIT] [--allow-empty] [--memory-budget SIZE]\n"
   "                  [--full-refresh | --backfill-from TS [--backfill-to TS]] [--as-of TS]\n"
   "                  [--lineage-file FILE] [--lineage-url URL] [--metrics-file PATH] JOB.yaml\n"
   "       dwload run [--jobs N] [--fail-fast] [RUN OPTIONS] JOB.yaml... | FOLDER\n\n"
   "Runs the job: reads the rows past the checkpoint, computes the changes and\n"
   "commits them with the new checkpoint in one transaction.  Logs go to stderr;\n"
   "the last line on stdout is a one-line JSON summary.\n"
   "  --empty-exit N   exit N (0, or 7 to 127) when the run succeeded but found no\n"
   "                   row past the checkpoint and changed nothing\n"
   "  --max-deletes LIMIT  this run may delete so many keys by absence: a count,\n"
   "                   a percentage of the current keys (50%) or all; overrides\n"
   "                   load.max_deletes\n"
   "  --allow-empty    a source without rows may delete by absence, or empty a\n"
   "                   replace job's table (as load.allow_empty: true)\n"
   "  --memory-budget SIZE  the memory engine's budget (512MiB, 2GiB): with\n"
   "                   load.engine: auto, pushdown above it; overrides\n"
   "                   load.memory_budget (default: a quarter of RAM)\n"
   "  --full-refresh   append, upsert, replace: ignore the checkpoint, load every\n"
   "                   source row and replace the table's rows (one transaction);\n"
   "                   refused for scd2, which would lose its history\n"
   "  --backfill-from TS  scd2: also replay the rows with lmd from TS (to\n"
   "                   --backfill-to TS) into the history, whatever the checkpoint\n"
   "  --as-of TS       scd2 without load.lmd (a snapshot load): date the load TS\n"
   "                   (ISO 8601, UTC) instead of the run's clock; refused before\n"
   "                   the job's last load\n"
   "  --jobs N         with several job files or a FOLDER (its *.yaml, *.yml):\n"
   "                   run at most N at once (default 1); each job's summary,\n"
   "                   then an overall JSON line last (dwload(1))\n"
   "  --fail-fast      with several jobs: start no more after one failed\n"

   "  --lineage-file FILE  append OpenLineage run events to FILE (JSON lines)\n"
   "  --lineage-url URL    POST them to the OpenLineage endpoint at URL\n"
   "                   (default $OPENLINEAGE_URL)\n"
   "  --metrics-file PATH  write the run's metrics to PATH, a Prometheus textfile\n"},
  {"plan", cmd_job, job_run, OPT_SQL | OPT_MAX_DELETES | OPT_SIGNALS | OPT_REFRESH,
   "Usage: dwload plan [--sql] [--max-deletes LIMIT] [--allow-empty] [--memory-budget SIZE]\n"
   "                   [--full-refresh | --backfill-from TS [--backfill-to TS]] [--as-of TS] JOB.yaml\n\n"
   "Does everything run does except writing, and prints the same summary.\n"
   "  --sql    also print each statement run would execute, with its parameters\n"
   "  --max-deletes LIMIT, --allow-empty, --memory-budget SIZE, --full-refresh,\n"
   "  --backfill-from, --backfill-to, --as-of  as for run\n"},
  {"check", cmd_job, job_check, OPT_CHECK,
   "Usage: dwload check [--json] [--spec-only | --connect] JOB.yaml\n\n"
   "Validates the spec, loads the plugin, checks the declared columns and types\n"
   "and the reject folder, and reports each step, without connecting.\n"
   "  --connect    also connect, open the source and compare the target table\n"
   "               with the job: every difference on its own line, exit 4\n"
   "  --json       one JSON document instead of lines; it also names the engine\n"
   "               the job uses and why, and whether pushdown would take it\n"
   "  --spec-only  check the spec alone: no plugin, no connection\n"},
  {"state", cmd_job, job_state, OPT_STATE,
   "Usage: dwload state [--reset | --set TIMESTAMP | --clear-running] [--json] JOB.yaml\n\n"
   "Prints the job's stored checkpoint and the counts of its last run.  With an\n"
   "option, changes the job's state row in one transaction, refused (exit 3)\n"
   "while a run holds the job's lock, and prints before -> after:\n"
   "  --reset          forget the checkpoint: the next run reads every row\n"
   "  --set TIMESTAMP  set the checkpoint (as the job's lmd; never in the future)\n"
   "  --clear-running  clear the running mark a killed run left behind\n"
   "  --json           print the change as one JSON line\n"},
  {"runs", cmd_job, job_runs, OPT_RUNS,
   "Usage: dwload runs [--limit N] [--json] JOB.yaml\n\n"
   "Prints the job's last runs from the run table " "dwload_runs" ", newest first:\n"
   "run id, start, status, counts, checkpoints and error.\n"
   "  --limit N  this many runs (default 20)\n"
   "  --json     one JSON object per run and line\n"},
  {"asof", cmd_job, job_asof, OPT_AT,
   "Usage: dwload asof JOB.yaml --at TIMESTAMP\n\n"
   "Prints, as CSV on stdout, the dimension as it stood at TIMESTAMP: one row\n"
   "per key whose version was valid then (scd2 jobs).\n"},
  {"migrate", cmd_migrate, NULL, 0, migrate_usage},
  {"plugins", cmd_plugins, NULL, 0,
   "Usage: dwload plugins [--plugin-path DIRS] [--json]\n\n"
   "Lists the plugins on the search path, in search order: name, version, ABI,\n"
   "file and options (name, type, required or default, help).  Exits 1 when a\n"
   "file on the path does not load as a plugin.\n"
   "  --plugin-path DIRS  as the global option: directories searched first\n"
   "  --json              one JSON document instead of text\n"},
};

static const command *find_command(const char *name)
{
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

/* A core dump of a run holds its connection strings, and so their
 * passwords: none is written, nor may another process of the user read
 * this one's memory (not dumpable), unless DWLOAD_ALLOW_CORE=1 asks for
 * them, to debug a crash.  Both are inherited by what dwload starts. */
static void no_core_dumps(void)
{
  const char *allow = getenv("DWLOAD_ALLOW_CORE");
  if (allow && strcmp(allow, "1") == 0)
    return;
  /* The soft limit is the one that counts; either flag alone stops a
   * core file, and each covers where the other may not (a core_pattern
   * pipe ignores the limit; a later exec would reset the flag). */
  struct rlimit lim = {0, 0};
  int rc = getrlimit(RLIMIT_CORE, &lim);
  lim.rlim_cur = 0;
  if (rc != 0 || setrlimit(RLIMIT_CORE, &lim) != 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    fprintf(stderr, "dwload: warning: cannot turn core dumps off; a crash could write passwords to disk\n");
}

int main(int argc, char **argv)
{
  no_core_dumps();
  static const struct option opts[] = {
    {"plugin-path", required_argument, NULL, 'P'},
    {"log-level", required_argument, NULL, 'L'},
    {"log-format", required_argument, NULL, 'F'},
    {"no-progress", no_argument, NULL, 'N'},
    {"progress-interval", required_argument, NULL, 'I'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  int c;
  /* '+': stop at the command; its own options follow it. */
  while ((c = getopt_long(argc, argv, "+qhV", opts, NULL)) != -1) {
    switch (c) {
    case 'P':
      plugin_set_extra_path(optarg);
      break;
    case 'L': {
      int level = log_parse_level(optarg);
      if (level < 0)
        return usage_error("--log-level must be error, warn, info or debug, not '%s'", optarg);
      log_set_level(level);
      break;
    }
    case 'F':
      if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
        return usage_error("--log-format must be text or json, not '%s'", optarg);
      log_set_format(strcmp(optarg, "json") == 0 ? LOG_JSON : LOG_TEXT);
      break;
    case 'N':
      show_progress = 0;
      break;
    case 'I': {
      char *end;
      long s = strtol(optarg, &end, 10);
      if (end == optarg || *end || s < 0 || s > 86400)
        return usage_error("--progress-interval must be a number of seconds from 0 to 86400, not '%s'", optarg);
      progress_set_interval((int)s);
      break;
    }
    case 'q':
      log_set_level(LOG_ERROR);
      break;
    case 'h':
      fputs(usage_text, stdout);
      return DWL_EXIT_OK;
    case 'V':
      printf("dwload %s (plugin ABI %d.%d)\n", PACKAGE_VERSION, DWL_ABI_MAJOR, DWL_ABI_MINOR);
      return DWL_EXIT_OK;
    default:
      fprintf(stderr, "Try 'dwload --help'.\n");
      return DWL_EXIT_USAGE;
    }
  }
  if (optind >= argc)
    return usage_error("%s", "no command given");
  const char *name = argv[optind];
  if (strcmp(name, "help") == 0) {
    const command *h = optind + 1 < argc ? find_command(argv[optind + 1]) : NULL;
    fputs(h ? h->usage : usage_text, stdout);
    return DWL_EXIT_OK;
  }
  const command *cmd = find_command(name);
  if (!cmd)
    return usage_error("unknown command '%s'", name);
  global_argv = argv;
  global_argc = optind;
  int rc = cmd->main(cmd, argc - optind, argv + optind);
  plugin_set_extra_path(NULL);
  return rc;
}
