/* dwload migrate: copies tables between warehouses (SQLite, PostgreSQL,
 * MariaDB in any direction) with their columns, types, NOT NULL and
 * primary keys, in primary-key chunks whose progress the target keeps,
 * and verifies every table at the end.  See dwload(1), MIGRATE. */
#ifndef DWL_MIGRATE_H
#define DWL_MIGRATE_H

/* `dwload migrate ...`: argv[0] is "migrate".  Prints the JSON summary on
 * stdout and returns the exit code. */
int migrate_main(int argc, char **argv);

extern const char migrate_usage[];

#endif
