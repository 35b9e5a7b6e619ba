/* dwload migrate: copies tables between warehouses (SQLite, PostgreSQL,
 * MariaDB in any direction) with their columns, types, NOT NULL and
 * primary keys, in primary-key chunks whose progress the target keeps,
 * and verifies every table at the end.  See dwload(1), MIGRATE.
 *
 * The command line (migrate_main, migrate_usage) is cmd/migrate_cmd.c;
 * it fills a mig_opts and hands it to migrate_run. */
#ifndef DWL_MIGRATE_H
#define DWL_MIGRATE_H

#include <stddef.h>

/* The target's record of each table's migration. */
#define PROGRESS_TABLE "dwload_migrate"
#define DEFAULT_CHUNK_ROWS 50000

typedef struct mig_opts {
  char *from, *to;
  char **tables;
  size_t ntables;
  int all, resume, verify;
  long jobs, chunk;
} mig_opts;

/* Copies and verifies the tables of o, prints the JSON summary on stdout
 * and returns the exit code. */
int migrate_run(const mig_opts *o);

/* `dwload migrate ...`: argv[0] is "migrate".  Prints the JSON summary on
 * stdout and returns the exit code. */
int migrate_main(int argc, char **argv);

extern const char migrate_usage[];

#endif
