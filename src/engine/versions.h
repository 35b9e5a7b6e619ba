/* The version rules both engines implement, defined once: what an incoming
 * row does to a key's current version (the transition table), the close
 * rule (dimension.close) and the messages both engines fail with.
 *
 * The memory engine (scd_walk.c) looks each row up in the table; pushdown
 * (pushdown_stage.c) generates the CASE expressions of its walk from the
 * same table, so a rule changes here and both engines follow.  What the
 * table does not say stays with each engine: how a change is written
 * (sink calls or set-based SQL), its counts, and what pushdown refuses
 * instead of computing (an event within the close step of the version it
 * closes: the memory engine replaces the version or moves the event, see
 * ver_within_step). */
#ifndef DWL_VERSIONS_H
#define DWL_VERSIONS_H

#include "err.h"
#include "spec.h"
#include "ts.h"

/* A key's state before a row.  The numbers are pushdown's too: its staged
 * dwl_ck (the stored current version) and dwl_sb (the state before each
 * row) hold them in SQL. */
enum ver_state {
  VS_NONE = 0,  /* no version, or deleted without a tombstone */
  VS_LIVE = 1,  /* a live current version */
  VS_TOMB = 2,  /* a tombstone is the current version */
  VS_N
};

/* A row, against the key's current version (or its predecessor). */
enum ver_event {
  VE_SAME,    /* the same type 2 and type 1 values */
  VE_TYPE1,   /* the same type 2 values, other type 1 values */
  VE_CHANGE,  /* other type 2 values */
  VE_DELETE,  /* a delete row (load.deletes: column) */
  VE_N
};

enum ver_action {
  VA_NOOP,    /* unchanged */
  VA_TYPE1,   /* overwrite the current version's type 1 values */
  VA_START,   /* close the current version, if any, and start one at the row */
  VA_DELETE   /* close the current version deleted; a tombstone starts with delete_style: tombstone */
};

/* What an event does when it comes less than one close step after the start
 * of the version it would close (its valid_to would fall before its
 * valid_from).  Pushdown refuses every such event but VW_NONE. */
enum ver_within {
  VW_NONE,     /* closes nothing: no rule */
  VW_REPLACE,  /* memory: the row replaces the version in place (same valid_from) */
  VW_MOVE      /* memory: the event takes effect one close step after the version's start */
};

typedef struct ver_rule {
  unsigned char action;     /* enum ver_action */
  unsigned char next;       /* state after, delete_style: expire */
  unsigned char next_tomb;  /* state after, delete_style: tombstone */
  unsigned char within;     /* enum ver_within */
} ver_rule;

/* The rule for `event` in `state` (both in range). */
const ver_rule *ver_rule_at(int state, int event);

/* The state after `event` in `state`. */
int ver_next(int state, int event, int tombstones);

/* 1 when the rule's action is an event of the key's history: it closes the
 * current version or starts one (pushdown's dwl_ev). */
int ver_is_event(int action);

/* ---- the close rule (dimension.close) ---------------------------------------- */

/* valid_to for a version that ends when the next one starts at `next`,
 * following dimension.close. */
dwl_ts scd_close_at(const dwl_spec *spec, dwl_ts next);

/* The instant a version closed at valid_to ended: the inverse of the close
 * rule. */
int64_t ver_end_instant(const dwl_spec *spec, int64_t valid_to);

/* The close step: how long after its start a version can end without its
 * valid_to, after the close rule, falling before its valid_from (0 with
 * close: same_instant). */
int64_t ver_close_gap(const dwl_spec *spec);

/* ---- the messages both engines fail with --------------------------------------
 * key: "(id='A1')"; on: the source's name ("feed.csv", "source"); a and b:
 * the two rows' positions in it, as text. */

/* Two different source rows of one key at one lmd (when; NULL when the job
 * has no lmd to order them). */
int ver_err_conflict(dwl_error *err, const char *key, const char *when, const char *on, const char *a,
                     const char *b);

/* A row at the instant a version of the key started, with other type 2
 * values.  stored: the memory engine's wording (a stored version of the
 * key); 0: pushdown's (the key's current version, the only one it sees). */
int ver_err_same_start(dwl_error *err, const char *on, const char *pos, const char *key, const char *when,
                       int stored);

#endif
