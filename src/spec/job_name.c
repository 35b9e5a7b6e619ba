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

int spec_job_name(const char *path, char *out, size_t n)
{
  out[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  yaml_parser_t p;
  yaml_document_t doc;
  int found = 0;
  if (!yaml_parser_initialize(&p)) {
    fclose(f);
    return 0;
  }
  yaml_parser_set_input_file(&p, f);
  if (yaml_parser_load(&p, &doc)) {
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE) {
      for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(&doc, pr->key), *v = yaml_document_get_node(&doc, pr->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE || strcmp((const char *)k->data.scalar.value, "job") != 0)
          continue;
        /* a repeated key is the parser's error: no name then */
        if (found || v->type != YAML_SCALAR_NODE ||
            !valid_job_name((const char *)v->data.scalar.value, v->data.scalar.length) ||
            v->data.scalar.length >= n) {
          found = -1;
          continue;
        }
        memcpy(out, v->data.scalar.value, v->data.scalar.length);
        out[v->data.scalar.length] = '\0';
        found = 1;
      }
    }
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&p);
  fclose(f);
  if (found != 1)
    out[0] = '\0';
  return found == 1;
}
