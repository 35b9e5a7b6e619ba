/* `dwload migrate`'s command line: its usage text, its options into a
 * mig_opts (with ${VAR} in the connection strings expanded from the
 * environment), then the migration itself (migrate/migrate.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "expand.h"
#include "migrate.h"
#include "spec.h"


const char migrate_usage[] =
    "Usage: dwload migrate --from CONN --to CONN (--table T ... | --all) [OPTIONS]\n\n"
    "Copies tables from one warehouse to another (any two that dwload speaks):\n"
    "columns, types, NOT NULL, primary keys and rows, in primary-key chunks whose\n"
    "progress the target keeps in " PROGRESS_TABLE ", then verifies each table (row\n"
    "count and a checksum of every value, computed on both sides).  The last line\n"
    "on stdout is a JSON summary.  ${VAR} in CONN is taken from the environment.\n"
    "  --from CONN        ODBC connection string of the source\n"
    "  --to CONN          ODBC connection string of the target\n"
    "  --table T          a table to copy (repeatable; schema.table allowed)\n"
    "  --all              every table of the source\n"
    "  --resume           continue a migration that stopped; done tables are verified\n"
    "  --jobs N           tables copied in parallel (default 1)\n"
    "  --chunk-rows N     rows per committed chunk (default 50000)\n"
    "  --no-verify        skip the verification\n";

static int usage_fail(const char *msg, const char *arg)
{
  fprintf(stderr, "dwload migrate: %s%s\nTry 'dwload migrate --help'.\n", msg, arg ? arg : "");
  return DWL_EXIT_USAGE;
}

static void opts_free(mig_opts *o)
{
  free(o->from);
  free(o->to);
  for (size_t i = 0; i < o->ntables; i++)
    free(o->tables[i]);
  free(o->tables);
}

/* ${VAR} in a connection string, from the environment. */
static int expand_conn(const char *in, char **out)
{
  char *bad = NULL;
  *out = spec_expand_conn(in, &bad);
  if (*out)
    return 0;
  fprintf(stderr, "dwload migrate: %s%s%s\n", bad ? "environment variable " : "bad ${...} in a connection string",
          bad ? bad : "", bad ? " is not set" : "");
  free(bad);
  return -1;
}

static int parse_opts(int argc, char **argv, mig_opts *o)
{
  static const struct option opts[] = {
    {"from", required_argument, NULL, 'f'}, {"to", required_argument, NULL, 't'},
    {"table", required_argument, NULL, 'T'}, {"all", no_argument, NULL, 'a'},
    {"resume", no_argument, NULL, 'r'},     {"jobs", required_argument, NULL, 'j'},
    {"chunk-rows", required_argument, NULL, 'c'}, {"no-verify", no_argument, NULL, 'n'},
    {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
  };
  const char *from = NULL, *to = NULL;
  int c;
  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    char *end;
    switch (c) {
    case 'f':
      from = optarg;
      break;
    case 't':
      to = optarg;
      break;
    case 'T': {
      char **nt = realloc(o->tables, (o->ntables + 1) * sizeof *nt);
      if (!nt)
        return usage_fail("out of memory", NULL);
      o->tables = nt;
      if (!(o->tables[o->ntables] = strdup(optarg)))
        return usage_fail("out of memory", NULL);
      o->ntables++;
      break;
    }
    case 'a':
      o->all = 1;
      break;
    case 'r':
      o->resume = 1;
      break;
    case 'n':
      o->verify = 0;
      break;
    case 'j':
      o->jobs = strtol(optarg, &end, 10);
      if (*end || o->jobs < 1 || o->jobs > 64)
        return usage_fail("--jobs must be a number from 1 to 64, not ", optarg);
      break;
    case 'c':
      o->chunk = strtol(optarg, &end, 10);
      if (*end || o->chunk < 1 || o->chunk > 10000000)
        return usage_fail("--chunk-rows must be a number from 1 to 10000000, not ", optarg);
      break;
    case 'h':
      fputs(migrate_usage, stdout);
      return -1;
    default:
      return usage_fail("bad option", NULL);
    }
  }
  if (optind < argc)
    return usage_fail("unexpected argument ", argv[optind]);
  if (!from || !to)
    return usage_fail("--from and --to are required", NULL);
  if (!o->all == !o->ntables)
    return usage_fail("give --all or one or more --table, not both", NULL);
  if (expand_conn(from, &o->from) != 0 || expand_conn(to, &o->to) != 0)
    return DWL_EXIT_USAGE;
  return 0;
}

int migrate_main(int argc, char **argv)
{
  mig_opts o = {.verify = 1, .jobs = 1, .chunk = DEFAULT_CHUNK_ROWS};
  int prc = parse_opts(argc, argv, &o);
  int rc = prc != 0 ? (prc < 0 ? DWL_EXIT_OK : prc) : migrate_run(&o);
  opts_free(&o);
  return rc;
}
