/* The dwload command line: global options, then a command and its job
 * file.  Exit codes (dwload(1)): 0 ok, 1 run failed, 2 usage or spec
 * error, 3 the job is locked by another run. */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "asof.h"
#include "err.h"
#include "log.h"
#include "migrate.h"
#include "plugin_host.h"
#include "run.h"
#include "spec.h"
#include "summary.h"

static const char usage_text[] =
    "Usage: dwload [GLOBAL OPTIONS] COMMAND [OPTIONS] JOB.yaml\n"
    "\n"
    "Loads warehouse tables from connector plugins: appends, replaces, upserts and\n"
    "SCD type 2 history, one transaction per run, with an lmd checkpoint.\n"
    "\n"
    "Commands:\n"
    "  run JOB.yaml          run the job; the last stdout line is a JSON summary\n"
    "  plan JOB.yaml         everything run does except writing [--sql]\n"
    "  check JOB.yaml        validate the spec, load the plugin, connect, report\n"
    "  state JOB.yaml        show the stored checkpoint and the last run\n"
    "  asof JOB.yaml --at T  print the dimension as it stood at time T, as CSV\n"
    "  migrate --from CONN --to CONN (--table T ... | --all)\n"
    "                        copy tables between warehouses, resumable, verified\n"
    "\n"
    "Global options:\n"
    "  --plugin-path DIRS    colon-separated directories searched first for plugins\n"
    "  --log-level LEVEL     error, warn, info (default) or debug; logs go to stderr\n"
    "  -q, --quiet           same as --log-level error\n"
    "  -h, --help            this help; `dwload COMMAND --help` for a command\n"
    "  -V, --version         print the version\n"
    "\n"
    "Exit status: 0 success, 1 the run failed (nothing committed), 2 bad command\n"
    "line or invalid job spec, 3 another run of the job holds its lock.\n"
    "See dwload(1) and dwload-job(5).\n";

typedef struct command {
  const char *name;
  const char *usage;
} command;

static const command commands[] = {
  {"run", "Usage: dwload run JOB.yaml\n\n"
          "Runs the job: reads the rows past the checkpoint, computes the changes and\n"
          "commits them with the new checkpoint in one transaction.  Logs go to stderr;\n"
          "the last line on stdout is a one-line JSON summary.\n"},
  {"plan", "Usage: dwload plan [--sql] JOB.yaml\n\n"
           "Does everything run does except writing, and prints the same summary.\n"
           "  --sql    also print each statement run would execute, with its parameters\n"},
  {"check", "Usage: dwload check JOB.yaml\n\n"
            "Validates the spec, loads the plugin, opens the source, connects to the\n"
            "target and reports each step.\n"},
  {"state", "Usage: dwload state JOB.yaml\n\n"
            "Prints the job's stored checkpoint and the counts of its last run.\n"},
  {"asof", "Usage: dwload asof JOB.yaml --at TIMESTAMP\n\n"
           "Prints, as CSV on stdout, the dimension as it stood at TIMESTAMP: one row\n"
           "per key whose version was valid then (scd2 jobs).\n"},
  {"migrate", migrate_usage},
};

static const command *find_command(const char *name)
{
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

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

static int parse_level(const char *s)
{
  static const char *const names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; i++)
    if (strcasecmp(s, names[i]) == 0)
      return i;
  return -1;
}

/* Prints the summary line for run and plan, also when the spec is bad, so
 * a scheduler always finds one. */
static void summary_for_failure(const char *job, const char *mode)
{
  run_summary s;
  summary_init(&s, job, mode);
  summary_print(&s, stdout);
}

static int cmd_main(const command *cmd, int argc, char **argv)
{
  static const struct option opts[] = {
    {"sql", no_argument, NULL, 's'},
    {"at", required_argument, NULL, 'a'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  int sql = 0;
  const char *at = NULL;
  int c;
  optind = 0;  /* 0 makes glibc getopt start afresh on the new argv */
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (strcmp(cmd->name, "plan") != 0)
        return usage_error("--sql applies only to plan");
      sql = 1;
      break;
    case 'a':
      if (strcmp(cmd->name, "asof") != 0)
        return usage_error("--at applies only to asof");
      at = optarg;
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
  if (strcmp(cmd->name, "asof") == 0 && !at)
    return usage_error("asof needs --at TIMESTAMP");

  int is_run = strcmp(cmd->name, "run") == 0, is_plan = strcmp(cmd->name, "plan") == 0;
  dwl_error err;
  err_init(&err);
  dwl_spec *spec = spec_load(argv[optind], &err);
  if (!spec) {
    log_msg(LOG_ERROR, "%s", err.msg);
    if (is_run || is_plan)
      summary_for_failure(NULL, NULL);
    return err.code;
  }
  log_set_job(spec->job);
  int rc;
  if (is_run || is_plan) {
    run_opts o = {.plan = is_plan, .sqlout = sql ? stdout : NULL};
    run_summary sum;
    rc = run_job(spec, &o, &sum, &err);
    if (rc != 0)
      log_msg(LOG_ERROR, "%s", err.msg);
    summary_print(&sum, stdout);
  } else if (strcmp(cmd->name, "check") == 0) {
    rc = check_job(spec, stdout, &err);
  } else if (strcmp(cmd->name, "state") == 0) {
    rc = state_job(spec, stdout, &err);
    if (rc != 0)
      log_msg(LOG_ERROR, "%s", err.msg);
  } else {
    rc = asof_job(spec, at, stdout, &err);
    if (rc != 0)
      log_msg(LOG_ERROR, "%s", err.msg);
  }
  spec_free(spec);
  return rc == 0 ? DWL_EXIT_OK : err.code ? err.code : DWL_EXIT_FAILED;
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
    {"plugin-path", required_argument, NULL, 'P'},
    {"log-level", required_argument, NULL, 'L'},
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
      int level = parse_level(optarg);
      if (level < 0)
        return usage_error("--log-level must be error, warn, info or debug, not '%s'", optarg);
      log_set_level(level);
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
  if (strcmp(name, "migrate") == 0)
    return migrate_main(argc - optind, argv + optind);
  int rc = cmd_main(cmd, argc - optind, argv + optind);
  plugin_set_extra_path(NULL);
  return rc;
}
