/* The job spec's keys as data: one table per mapping of the job file
 * (top level, source, target, load, load.deletes, dimension, schema,
 * columns), each entry
 * naming a key, its type, its default as dwload-job(5) writes it, its
 * allowed values, a short help, and where dwload-job(5) describes it.
 * The parser walks these tables (keys.c): a key that is not in its table
 * is unknown ("did you mean" from the table), an enum value is checked
 * against the entry's names, a required key that is missing is named.
 * Fluent Bit's flb_config_map is the model.  tests/unit/test_spec_keys.c
 * checks every entry against dwload-job(5). */
#ifndef DWL_SPEC_KEYS_H
#define DWL_SPEC_KEYS_H

#include <stddef.h>
#include <yaml.h>

#include "spec.h"

enum spec_key_type {
  SPEC_T_STRING = 0,  /* text, ${VAR}-expanded */
  SPEC_T_INT,         /* a whole number (version) */
  SPEC_T_BOOL,        /* true/yes/on/1 or false/no/off/0 */
  SPEC_T_COUNT,       /* a whole number, 0 or more */
  SPEC_T_DURATION,    /* 90s, 15m, 2h, 1d, 1h30m */
  SPEC_T_ENUM,        /* one of `values` */
  SPEC_T_COLUMNS,     /* a list of column names */
  SPEC_T_LIST,        /* a list of strings */
  SPEC_T_LIMIT,       /* a count, a percentage or all */
  SPEC_T_MAPPING,     /* a mapping of the keys of `sub` */
  SPEC_T_NAMES,       /* a mapping of names to names (columns.rename) */
  SPEC_T_SIZE         /* 512MiB, 2GiB, or bytes (spec_parse_size) */
};

enum {
  SPEC_K_REQUIRED = 1,  /* its mapping must give it */
  SPEC_K_NULLABLE = 2,  /* null is a value: the column is left out, the mapping is empty */
  SPEC_K_NONEMPTY = 4,  /* a string must not be empty */
  SPEC_K_CONN = 8       /* an ODBC connection string: expanded as one */
};

/* The most keys one mapping may declare (load has 19). */
#define SPEC_MAX_SECTION_KEYS 32

/* The key has no field of its own in dwl_spec (version, the mappings). */
#define SPEC_NO_FIELD ((size_t)-1)

struct pctx;
typedef struct spec_key spec_key;
typedef struct spec_section spec_section;

/* A key whose reading is more than its type's (a check, a second field):
 * reads value v of key `name` (dotted) into dst, the key's field. */
typedef int (*spec_key_reader)(struct pctx *c, const spec_key *k, const yaml_node_t *v,
                               const char *name, void *dst);

struct spec_key {
  const char *name;
  int type;                    /* enum spec_key_type */
  int flags;                   /* SPEC_K_* */
  size_t offset;               /* of its field in dwl_spec, or SPEC_NO_FIELD */
  const char *def;             /* the default as dwload-job(5) gives it; NULL: none */
  const char *const *values;   /* SPEC_T_ENUM: the names, NULL-terminated, indexed by the field's enum */
  const char *help;            /* one line */
  const spec_section *sub;     /* SPEC_T_MAPPING: its keys */
  spec_key_reader read;        /* NULL: the type's reader */
};

struct spec_section {
  const char *name;    /* prefix of its dotted keys: NULL at top level, "load", "load.deletes" */
  const char *where;   /* for messages: "at top level", "in load", ... */
  const char *man;     /* the .SS of dwload-job(5)'s KEYS that lists its keys (.TP items);
                          NULL: they are described in the item of the key that holds them */
  int options;         /* 1: any other key is a plugin option (source) */
  const spec_key *keys;
  size_t n;
};

/* Every section, the top level first; NULL-terminated. */
extern const spec_section *const spec_sections[];
/* load.mode's names, indexed by enum spec_mode. */
extern const char *const spec_mode_names[];
/* "string", "duration", ... */
const char *spec_type_name(int type);
/* A job name's rules (it names files): 0, or -1 with why filled (n
 * bytes), said as read_job says it after "job: ". */
int spec_job_name_check(const char *name, char *why, size_t n);

#endif
