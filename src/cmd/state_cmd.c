/* dwload state: what the warehouse holds about a job (its checkpoint, its
 * last run's counts and status, the run id of the last commit, a run that
 * holds or held the lock), read without taking the job's lock; and the
 * repairs by hand: --reset, --set VALUE, --clear-running, which change the
 * row under the job's lock (warehouse/state_edit.c) and say before -> after. */
#include "state_cmd.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "state_edit.h"
#include "target.h"
#include "ts.h"

/* --set VALUE: a timestamp as the job's lmd is read (ISO 8601, as state
 * prints it, or load.lmd_format), or the integer of a sequence, into the
 * canonical text a run stores.
 * Not later than load.future_tolerance allows an lmd: such a checkpoint
 * would make every later run skip every row. */
static int first_value(const dwl_spec *spec, const char *v, const dwl_ts *parsed, int seq, char out[32],
                       dwl_error *err)
{
  dwl_ts ts;
  /* An integer sequence's checkpoint (the next run checks it is one). */
  if (parsed ? seq : ts_parse_seq(v, strlen(v), &ts) == 0) {
    ts_format_seq(parsed ? parsed : &ts, out);
    return 0;
  }
  if (parsed)
    ts = *parsed;
  else if (spec_parse_lmd_text(spec, v, &ts) != 0)
    return err_set(err, DWL_EXIT_USAGE,
                   "--set '%s' is not a timestamp: give one as `dwload state` prints it (YYYY-MM-DD[ HH:MM:SS], or an integer)%s%s",
                   v, spec->lmd_format ? " or as load.lmd_format says: " : "",
                   spec->lmd_format ? spec->lmd_format : "");
  dwl_ts now = ts_now();
  if (spec->future_tolerance_us >= 0 && ts.us - now.us > spec->future_tolerance_us) {
    char span[32];
    ts_format_duration(spec->future_tolerance_us, span);
    return err_set(err, DWL_EXIT_USAGE,
                   "--set '%s' is more than %s after now (load.future_tolerance): every later run would skip "
                   "every row",
                   v, span);
  }
  ts_format(&ts, out);
  return 0;
}

/* A composite load.lmd's checkpoint is given as `dwload state` prints it,
 * a JSON array of as many values as load.lmd lists (the next run checks
 * their types against the source's); a single value is refused. */
static int checkpoint_value(const dwl_spec *spec, const char *v, char *out, size_t n, dwl_error *err)
{
  if (!spec->lmd)
    return err_set(err, DWL_EXIT_USAGE, "job '%s' has no load.lmd: it keeps no checkpoint to set", spec->job);
  size_t want = spec->lmd_ties.n;
  if (want == 0 && v[0] != '[')
    return first_value(spec, v, NULL, 0, out, err);
  dwl_ts cp;
  int seq = 0;
  if (v[0] != '[' || state_checkpoint(spec->job, v, &cp, &seq, err) != 0 || (size_t)cp.nties != want) {
    err_init(err);
    return err_set(err, DWL_EXIT_USAGE,
                   "--set '%s': load.lmd %s; give %s",
                   v, want ? "is a composite sequence" : "is one column",
                   want ? "its checkpoint as `dwload state` prints it, a JSON array of one value per column "
                          "(an integer, or a quoted timestamp), such as '[\"2024-05-01 10:00:00\",7]'"
                        : "one value, a timestamp or an integer");
  }
  char c1[32];
  if (first_value(spec, v, &cp, seq, c1, err) != 0)
    return -1;
  state_checkpoint_compose(c1, seq, &cp, out, n);
  return 0;
}

static json_t *jtext(const char *s)
{
  return s[0] ? json_string(s) : json_null();
}

static json_t *jrow(const job_state *st)
{
  json_t *o = json_object();
  json_object_set_new(o, "checkpoint", jtext(st->checkpoint));
  json_object_set_new(o, "running_since", jtext(st->running_since));
  json_object_set_new(o, "running_host", jtext(st->running_host));
  json_object_set_new(o, "running_pid", st->running_since[0] ? json_integer(st->running_pid) : json_null());
  return o;
}

static void running_text(const job_state *st, char *out, size_t n)
{
  if (st->running_since[0])
    snprintf(out, n, "a run started at %s (host %s, pid %lld)", st->running_since,
             st->running_host[0] ? st->running_host : "?", st->running_pid);
  else
    snprintf(out, n, "(none)");
}

static int print_change(const dwl_spec *spec, const state_opts *o, const job_state *b, const job_state *a,
                        FILE *out)
{
  static const char *const names[] = {"show", "reset", "set", "clear-running"};
  int running = o->action == STATE_DO_CLEAR_RUNNING;
  int changed = running ? strcmp(b->running_since, a->running_since) != 0 || b->running_pid != a->running_pid
                        : b->found != a->found || strcmp(b->checkpoint, a->checkpoint) != 0;
  if (o->json) {
    json_t *j = json_object();
    json_object_set_new(j, "job", json_string(spec->job));
    json_object_set_new(j, "action", json_string(names[o->action]));
    json_object_set_new(j, "changed", json_boolean(changed));
    json_object_set_new(j, "before", b->found ? jrow(b) : json_null());
    json_object_set_new(j, "after", a->found ? jrow(a) : json_null());
    char *line = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!line)
      return -1;
    fprintf(out, "%s\n", line);
    free(line);
    return 0;
  }
  fprintf(out, "job:         %s\n", spec->job);
  if (!a->found) {
    fprintf(out, "state:       no run yet: nothing to change\n");
    return 0;
  }
  char bt[300], at[300];
  if (running) {
    running_text(b, bt, sizeof bt);
    running_text(a, at, sizeof at);
  } else {
    snprintf(bt, sizeof bt, "%s", b->found && b->checkpoint[0] ? b->checkpoint : "(none)");
    snprintf(at, sizeof at, "%s", a->checkpoint[0] ? a->checkpoint : "(none)");
  }
  fprintf(out, "%s %s -> %s%s\n", running ? "running:    " : "checkpoint: ", bt, at, changed ? "" : " (unchanged)");
  return 0;
}

static int state_change(const dwl_spec *spec, const state_opts *o, FILE *out, dwl_error *err)
{
  char cp[128] = "";
  if (o->action == STATE_DO_SET && checkpoint_value(spec, o->value, cp, sizeof cp, err) != 0)
    return -1;
  static const state_action act[] = {0, STATE_RESET, STATE_SET, STATE_CLEAR_RUNNING};
  target *t;
  if (target_connect(spec, &t, err) != 0)
    return -1;
  job_state before, after;
  int rc = state_edit(t, spec->job, act[o->action], cp, &before, &after, err);
  target_free(t);
  if (rc == 0 && print_change(spec, o, &before, &after, out) != 0)
    rc = err_set(err, DWL_EXIT_FAILED, "out of memory");
  return rc;
}

int state_job(const dwl_spec *spec, const state_opts *o, FILE *out, dwl_error *err)
{
  if (o->action != STATE_SHOW)
    return state_change(spec, o, out, err);

  target *t;
  if (target_connect(spec, &t, err) != 0)
    return -1;
  job_state st;
  int rc = state_read(t, spec->job, &st, err);
  if (rc == 0) {
    fprintf(out, "job:         %s\n", spec->job);
    fprintf(out, "target:      %s (%s)\n", spec->target_table, t->c->redacted);
    if (!st.found) {
      fprintf(out, "state:       no run yet\n");
    } else {
      /* a snapshot load keeps no checkpoint, but its last load time there (snapshot.c) */
      if (snapshot_job(spec))
        fprintf(out, "load time:   %s (a snapshot load: no checkpoint)\n", st.checkpoint[0] ? st.checkpoint : "(none)");
      else
        fprintf(out, "checkpoint:  %s\n", st.checkpoint[0] ? st.checkpoint : "(none)");
      fprintf(out, "last run:    %s, %s\n", st.last_run_at[0] ? st.last_run_at : "(none)",
              st.last_mode[0] ? st.last_mode : "-");
      fprintf(out, "counts:      read %lld, skipped %lld, inserted %lld, expired %lld, updated %lld, deleted %lld, "
                   "unchanged %lld, rejected %lld (%.3fs)\n",
              st.read, st.skipped, st.inserted, st.expired, st.updated, st.deleted, st.unchanged, st.rejected,
              st.seconds);
      fprintf(out, "status:      %s\n", st.last_status[0] ? st.last_status : "-");
      if (st.last_error[0])
        fprintf(out, "last error:  %s\n", st.last_error);
      /* (best effort: a table of an older dwload has no run_id yet) */
      char id[40];
      dwl_error e2;
      err_init(&e2);
      if (state_read_run_id(t->c, t->d, spec->job, 0, NULL, id, sizeof id, &e2) == 0 && id[0])
        fprintf(out, "run id:      %s (the last committed run)\n", id);
      /* Set while a run holds the lock; a run killed outright leaves it
       * behind, but not the lock, which dies with its transaction. */
      if (st.running_since[0])
        fprintf(out, "started:     a run started at %s (host %s, pid %lld) is running or was killed\n",
                st.running_since, st.running_host, st.running_pid);
    }
  }
  target_free(t);
  return rc;
}
