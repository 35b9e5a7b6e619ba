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
#include "log.h"
#include "migrate.h"
#include "plugin_host.h"
#include "plugin_list.h"
#include "progress.h"
#include "run.h"
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
    "  plan JOB.yaml         everything run does except writing [--sql]\n"
    "                        [--max-deletes LIMIT] [--allow-empty]\n"
    "  check JOB.yaml        validate the spec, load the plugin, connect, report\n"
    "                        [--json] [--spec-only]\n"
    "  state JOB.yaml        show the stored checkpoint and the last run\n"
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
  check_opts check;         /* check --json, --spec-only */
  const char *spec_path;    /* the job file */
} job_args;

/* The options a job command takes (command.opts). */
enum {
  OPT_SQL = 1 << 0,
  OPT_AT = 1 << 1,
  OPT_EMPTY_EXIT = 1 << 2,
  OPT_MAX_DELETES = 1 << 3,  /* and --allow-empty */
  OPT_CHECK = 1 << 4,        /* --json and --spec-only */
  OPT_SIGNALS = 1 << 5,      /* a signal rolls the run back and reports */
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
static int job_run(const command *cmd, const job_args *a, dwl_spec *spec, dwl_error *err)
{
  if (!spec)
    return summary_for_failure(NULL, NULL, err->code);
  int is_run = strcmp(cmd->name, "run") == 0;
  run_opts o = {.plan = !is_run,
                .sqlout = a->sql ? stdout : NULL,
                .max_deletes = a->have_max_deletes ? &a->max_deletes : NULL,
                .allow_empty = a->allow_empty};
  run_summary sum;
  progress_begin(show_progress && log_get_level() >= LOG_INFO && log_get_format() == LOG_TEXT);
  int rc = run_job(spec, &o, &sum, err);
  interrupt_shutdown();  /* the run is over: a signal now changes nothing */
  progress_end();
  if (rc != 0)
    log_error(err);
  int code = rc == 0 ? DWL_EXIT_OK : err->code ? err->code : DWL_EXIT_FAILED;
  if (rc == 0 && a->empty_exit >= 0 && run_was_empty(&sum)) {
    log_msg(LOG_INFO, "nothing past the checkpoint: exit %d (--empty-exit)", a->empty_exit);
    code = a->empty_exit;
  }
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
  (void)a;
  if (!spec)
    return err->code;
  int rc = state_job(spec, stdout, err);
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
    {"json", no_argument, NULL, 'j'},
    {"spec-only", no_argument, NULL, 'S'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  job_args a;
  memset(&a, 0, sizeof a);
  a.empty_exit = -1;
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
      break;
    case 'm':
    case 'E':
      if (!(cmd->opts & OPT_MAX_DELETES))
        return usage_error("--%s applies only to run and plan", c == 'm' ? "max-deletes" : "allow-empty");
      if (c == 'E')
        a.allow_empty = 1;
      else if (spec_parse_limit(optarg, &a.max_deletes) != 0)
        return usage_error("--max-deletes must be a number of keys, a percentage from 0%% to 100%% or all, not '%s'",
                           optarg);
      else
        a.have_max_deletes = 1;
      break;
    case 'j':
    case 'S':
      if (!(cmd->opts & OPT_CHECK))
        return usage_error("--%s applies only to check", c == 'j' ? "json" : "spec-only");
      if (c == 'j')
        a.check.json = 1;
      else
        a.check.spec_only = 1;
      break;
    case 'h':
      fputs(cmd->usage, stdout);
      return DWL_EXIT_OK;
    default:
      return usage_error("bad option for %s", cmd->name);
    }
  }
  if (optind != argc - 1)
    return optind >= argc ? usage_error("%s needs a job file", cmd->name)
                          : usage_error("%s takes one job file", cmd->name);
  if ((cmd->opts & OPT_AT) && !a.at)
    return usage_error("asof needs --at TIMESTAMP");

  /* A run stopped by a signal rolls back and reports (dwload(1), SIGNALS). */
  if (cmd->opts & OPT_SIGNALS)
    interrupt_install();
  dwl_error err;
  err_init(&err);
  a.spec_path = argv[optind];
  dwl_spec *spec = spec_load(argv[optind], &err);
  if (!spec) {
    err_cause(&err, DWL_CAUSE_SPEC);  /* the job file: unreadable, or wrong where perr says */
    log_error(&err);
    return cmd->job(cmd, &a, NULL, &err);
  }
  log_set_job(spec->job);
  int code = cmd->job(cmd, &a, spec, &err);
  spec_free(spec);
  return code;
}

static const command commands[] = {
  {"run", cmd_job, job_run, OPT_EMPTY_EXIT | OPT_MAX_DELETES | OPT_SIGNALS,
   "Usage: dwload run [--empty-exit N] [--max-deletes LIMIT] [--allow-empty] JOB.yaml\n\n"
   "Runs the job: reads the rows past the checkpoint, computes the changes and\n"
   "commits them with the new checkpoint in one transaction.  Logs go to stderr;\n"
   "the last line on stdout is a one-line JSON summary.\n"
   "  --empty-exit N   exit N (0, or 7 to 127) when the run succeeded but found no\n"
   "                   row past the checkpoint and changed nothing\n"
   "  --max-deletes LIMIT  this run may delete so many keys by absence: a count,\n"
   "                   a percentage of the current keys (50%) or all; overrides\n"
   "                   load.max_deletes\n"
   "  --allow-empty    a source without rows may delete by absence, or empty a\n"
   "                   replace job's table (as load.allow_empty: true)\n"},
  {"plan", cmd_job, job_run, OPT_SQL | OPT_MAX_DELETES | OPT_SIGNALS,
   "Usage: dwload plan [--sql] [--max-deletes LIMIT] [--allow-empty] JOB.yaml\n\n"
   "Does everything run does except writing, and prints the same summary.\n"
   "  --sql    also print each statement run would execute, with its parameters\n"
   "  --max-deletes LIMIT, --allow-empty  as for run\n"},
  {"check", cmd_job, job_check, OPT_CHECK,
   "Usage: dwload check [--json] [--spec-only] JOB.yaml\n\n"
   "Validates the spec, loads the plugin, opens the source, connects to the\n"
   "target and reports each step.\n"
   "  --json       one JSON document instead of lines; it also names the engine\n"
   "               the job uses and why, and whether pushdown would take it\n"
   "  --spec-only  check the spec alone: no plugin, no connection\n"},
  {"state", cmd_job, job_state, 0,
   "Usage: dwload state JOB.yaml\n\n"
   "Prints the job's stored checkpoint and the counts of its last run.\n"},
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
  int rc = cmd->main(cmd, argc - optind, argv + optind);
  plugin_set_extra_path(NULL);
  return rc;
}
