/* dwload check: a job checked step by step without writing anything, as
 * lines or as one JSON document that also says which engine the job uses
 * and whether pushdown would take it. */
#ifndef DWL_CHECK_CMD_H
#define DWL_CHECK_CMD_H

#include <stdio.h>

#include "err.h"
#include "spec.h"

typedef struct check_opts {
  int json;       /* --json: one JSON document on out instead of lines */
  int spec_only;  /* --spec-only: the spec alone; no plugin, no connection */
  int connect;    /* --connect: also the warehouse, the source and the table (else offline) */
} check_opts;

/* Validates, loads the plugin, checks the declared types and the reject
 * folder; with o->connect connects, opens the source and compares the
 * table.  Reports each step on out; stops at the first step that fails
 * (-1, err set), except the table's differences, which are all reported
 * (exit 4, DWL_CAUSE_SCHEMA). */
int check_job(const dwl_spec *spec, const check_opts *o, FILE *out, dwl_error *err);

/* check --json of a job file that did not load: the document with its
 * failed spec step (nothing without --json: the error is logged). */
void check_spec_failed(const char *path, const check_opts *o, const dwl_error *err, FILE *out);

#endif
