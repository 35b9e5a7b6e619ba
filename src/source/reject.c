/* Rejected rows: counting against load.max_rejects, the reject file's CSV
 * and its publication at commit.  The CSV is written by hand: libcsv only
 * parses, and RFC 4180 quoting is a few lines. */
#include "reject.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

/* Rows named one by one in the log; the rest are in the file. */
#define REJECTS_LOGGED 10

static const char header[] = "source,origin,reason,row\n";

/* One field, quoted when it holds a comma, a quote, a line break or
 * leading/trailing blanks (which some readers trim). */
static int csv_field(dwl_buf *b, const char *s, size_t n)
{
  int quote = n == 0 || s[0] == ' ' || s[n - 1] == ' ';
  for (size_t i = 0; i < n && !quote; i++)
    quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
  if (!quote)
    return buf_add(b, s, n);
  int rc = buf_addc(b, '"');
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (s[i] == '"')
      rc = buf_addc(b, '"');
    if (rc == 0)
      rc = buf_addc(b, s[i]);
  }
  return rc == 0 ? buf_addc(b, '"') : rc;
}

/* The values as one CSV record: NULL is an empty unquoted field, the empty
 * string "" (the CSV plugin reads them back the same way). */
static int csv_record(dwl_buf *b, const dwl_value *vals, size_t n)
{
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (i)
      rc = buf_addc(b, ',');
    if (rc == 0 && !vals[i].is_null)
      rc = csv_field(b, vals[i].data ? vals[i].data : "", vals[i].len);
  }
  return rc;
}

int rejects_open(rejects *rj, const dwl_spec *spec, int write_file, dwl_error *err)
{
  memset(rj, 0, sizeof *rj);
  rj->max = spec->max_rejects;
  if (!spec->reject_file)
    return 0;
  dwl_buf p;
  buf_init(&p, 0);
  if (spec->reject_file[0] != '/')
    buf_printf(&p, "%s/", spec->dir);
  buf_adds(&p, spec->reject_file);
  rj->path = buf_steal(&p);
  if (!rj->path)
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  if (!write_file)
    return 0;
  size_t n = strlen(rj->path) + 5;
  if (!(rj->tmp = malloc(n)))
    return err_set(err, DWL_EXIT_FAILED, "out of memory");
  /* One name for every run: the job's lock keeps runs apart, and a killed
   * run's leftover is simply overwritten. */
  snprintf(rj->tmp, n, "%s.tmp", rj->path);
  rj->fp = fopen(rj->tmp, "w");
  if (!rj->fp)  /* no such folder, no permission: a person must fix it */
    return err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_REJECT_FILE, "load.reject_file: cannot write %s: %s", rj->tmp, strerror(errno));
  if (fputs(header, rj->fp) == EOF)
    return err_set(err, DWL_EXIT_FAILED, "load.reject_file: cannot write %s: %s", rj->tmp, strerror(errno));
  return 0;
}

int rejects_add(rejects *rj, const char *name, uint64_t origin, const char *raw, size_t raw_len,
                const dwl_value *vals, size_t nvals, const char *reason, dwl_error *err)
{
  rj->count++;
  int over = rj->count > rj->max;
  if (over && rj->max == 0)
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_REJECTS, "%s:%llu: %s", name, (unsigned long long)origin, reason);
  else if (over)
    err_setc(err, DWL_EXIT_FAILED, DWL_CAUSE_REJECTS, "%s:%llu: %s; that is %lld rejected rows, more than load.max_rejects (%lld)", name,
            (unsigned long long)origin, reason, rj->count, rj->max);
  else if (rj->count <= REJECTS_LOGGED)
    log_msg(LOG_WARN, "rejected %s:%llu: %s", name, (unsigned long long)origin, reason);
  else if (rj->count == REJECTS_LOGGED + 1)
    log_msg(LOG_WARN, "more rows rejected%s%s", rj->path ? "; see " : "", rj->path ? rj->path : "");
  /* The row that is one too many is written too: PATH.failed then holds
   * every bad row the failed run met. */
  if (!rj->fp)
    return over ? -1 : 0;
  dwl_buf b, row;
  char num[24];
  buf_init(&b, 0);
  buf_init(&row, 0);
  snprintf(num, sizeof num, ",%llu,", (unsigned long long)origin);
  /* || evaluates in order and stops at the first failure */
  int bad = csv_field(&b, name, strlen(name)) || buf_adds(&b, num) || csv_field(&b, reason, strlen(reason)) ||
            buf_addc(&b, ',');
  if (!bad && raw)
    bad = csv_field(&b, raw, raw_len);
  else if (!bad)
    bad = csv_record(&row, vals, nvals) || csv_field(&b, row.data ? row.data : "", row.len);
  bad = bad || buf_addc(&b, '\n');
  int rc = 0;
  if (bad)
    rc = err_set(err, DWL_EXIT_FAILED, "out of memory writing a rejected row");
  else if (fwrite(b.data, 1, b.len, rj->fp) != b.len)
    rc = err_set(err, DWL_EXIT_FAILED, "load.reject_file: cannot write %s: %s", rj->tmp, strerror(errno));
  buf_free(&b);
  buf_free(&row);
  return over ? -1 : rc;
}

int rejects_flush(rejects *rj, dwl_error *err)
{
  if (!rj->fp)
    return 0;
  if (fflush(rj->fp) != 0 || fsync(fileno(rj->fp)) != 0)
    return err_set(err, DWL_EXIT_FAILED, "load.reject_file: cannot write %s: %s", rj->tmp, strerror(errno));
  return 0;
}

static int close_file(rejects *rj)
{
  int rc = fclose(rj->fp);
  rj->fp = NULL;
  return rc;
}

void rejects_publish(rejects *rj)
{
  if (!rj->fp)
    return;
  if (close_file(rj) != 0 || rename(rj->tmp, rj->path) != 0) {
    log_msg(LOG_ERROR, "the run committed, but its reject file could not be put in place: %s; its %lld rows are in %s",
            strerror(errno), rj->count, rj->tmp);
    return;
  }
  if (rj->count)
    log_msg(LOG_WARN, "%lld rows rejected, written to %s", rj->count, rj->path);
  /* The rows of an earlier failed run are history now. */
  size_t n = strlen(rj->path) + 8;
  char *failed = malloc(n);
  if (failed) {
    snprintf(failed, n, "%s.failed", rj->path);
    unlink(failed);
    free(failed);
  }
}

void rejects_abandon(rejects *rj)
{
  if (!rj->fp)
    return;
  size_t n = strlen(rj->path) + 8;
  char *failed = malloc(n);
  int rc = close_file(rj);
  if (failed)
    snprintf(failed, n, "%s.failed", rj->path);
  /* An older failed run's list would claim rows this run did not meet. */
  if (failed && !rj->count)
    unlink(failed);
  if (rc == 0 && rj->count && failed) {
    if (rename(rj->tmp, failed) == 0)
      log_msg(LOG_INFO, "the %lld bad rows of this failed run are in %s; %s is unchanged", rj->count, failed,
              rj->path);
  }
  unlink(rj->tmp);
  free(failed);
}

void rejects_free(rejects *rj)
{
  if (rj->fp)
    rejects_abandon(rj);
  free(rj->path);
  free(rj->tmp);
  memset(rj, 0, sizeof *rj);
}
