/* The job's name from a job file that did not load: the summary line and
 * the logs of a run whose spec is invalid name the job when its top-level
 * `job` key was readable (a spec error further down), instead of null.
 * Only a plain, valid name is taken (the rules of keys.c's job key, no
 * ${VAR}): a name dwload cannot vouch for is no name. */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "spec.h"

static int valid_job_name(const char *s, size_t len)
{
  if (len == 0 || len > 64 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
    return 0;
  for (size_t i = 0; i < len; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
          ch == '.' || ch == '-'))
      return 0;
  }
  return 1;
}

/* Events, not yaml_parser_load: a hostile file nesting 200,000 levels
 * deep must be refused as fast as read.c refuses it, so the walk gives up
 * past the depth read.c allows and never builds a document.  The whole
 * stream is read: a file with a YAML error anywhere names no job. */
int spec_job_name(const char *path, char *out, size_t n)
{
  out[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) {
    fclose(f);
    return 0;
  }
  yaml_parser_set_input_file(&p, f);
  /* depth 1 is inside the root mapping, where keys and values alternate */
  int found = 0, depth = 0, expect_key = 1, want_value = 0, docs = 0;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      found = 0;
      break;
    }
    yaml_event_type_t type = ev.type;
    int node = type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT || type == YAML_MAPPING_START_EVENT ||
               type == YAML_SEQUENCE_START_EVENT;
    if (type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
      found = 0;  /* several documents: read.c refuses the file */
    if (node && depth == 0 && type != YAML_MAPPING_START_EVENT)
      found = 0;  /* the root is not a mapping */
    if (node && depth == 1) {
      if (expect_key)
        want_value = type == YAML_SCALAR_EVENT && strcmp((const char *)ev.data.scalar.value, "job") == 0;
      else if (want_value) {
        const char *v = type == YAML_SCALAR_EVENT ? (const char *)ev.data.scalar.value : "";
        size_t len = type == YAML_SCALAR_EVENT ? ev.data.scalar.length : 0;
        /* a repeated key is the parser's error: no name then */
        if (found || type != YAML_SCALAR_EVENT || !valid_job_name(v, len) || len >= n)
          found = -1;
        else {
          memcpy(out, v, len);
          out[len] = '\0';
          found = 1;
        }
        want_value = 0;
      }
      expect_key = !expect_key;
    }
    if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT)
      depth++;
    else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT)
      depth--;
    yaml_event_delete(&ev);
    if (depth > 64) {
      found = 0;  /* read.c refuses such nesting */
      break;
    }
    if (type == YAML_STREAM_END_EVENT)
      break;
  }
  yaml_parser_delete(&p);
  fclose(f);
  if (found != 1)
    out[0] = '\0';
  return found == 1;
}
