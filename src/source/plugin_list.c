/* dwload plugins: loads every NAME.so of every directory of the search
 * path, in search order, and prints each plugin's descriptor and option
 * table: the same table that validates job files, so the listing cannot
 * drift from what a job accepts. */
#include "plugin_list.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "plugin_host.h"

static const char *opt_type_name(int type)
{
  static const char *const names[] = {"string", "path", "int", "bool", "list", "map"};
  return type >= 0 && type <= DWL_OPT_MAP ? names[type] : "?";
}

static int is_so(const struct dirent *d)
{
  size_t n = strlen(d->d_name);
  return n > 3 && strcmp(d->d_name + n - 3, ".so") == 0 && d->d_name[0] != '.';
}

static json_t *options_json(const dwl_option *o)
{
  json_t *a = json_array();
  for (; o && o->name; o++)
    json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:s?, s:s?}", "name", o->name, "type", opt_type_name(o->type),
                                       "required", o->required != 0, "default", o->def, "help", o->help));
  return a;
}

static void print_text(FILE *out, const plugin_lib *lib, const char *shadowed_by)
{
  const dwl_plugin *p = lib->p;
  fprintf(out, "%s %s (ABI %u.%u) %s\n", p->name, p->version ? p->version : "?",
          (unsigned)DWL_ABI_MAJOR_OF(p->abi_version), (unsigned)(p->abi_version & 0xffffu), lib->path);
  if (shadowed_by)
    fprintf(out, "    not used: %s comes first on the search path\n", shadowed_by);
  if (p->description && *p->description)
    fprintf(out, "    %s\n", p->description);
  for (const dwl_option *o = p->options; o && o->name; o++) {
    char when[96];
    if (o->required)
      snprintf(when, sizeof when, "required");
    else if (o->def)
      snprintf(when, sizeof when, "default %s", o->def);
    else
      snprintf(when, sizeof when, "optional");
    fprintf(out, "    %-16s %-6s  %-18s  %s\n", o->name, opt_type_name(o->type), when, o->help ? o->help : "");
  }
}

/* Names already listed, to mark the files they shadow. */
typedef struct seen {
  char **name, **path;
  size_t n;
} seen;

static const char *seen_path(const seen *s, const char *name)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->name[i], name) == 0)
      return s->path[i];
  return NULL;
}

static void seen_add(seen *s, const char *name, const char *path)
{
  char **nn = realloc(s->name, (s->n + 1) * sizeof *nn);
  if (!nn)
    return;
  s->name = nn;
  char **np = realloc(s->path, (s->n + 1) * sizeof *np);
  if (!np)
    return;
  s->path = np;
  s->name[s->n] = strdup(name);
  s->path[s->n] = strdup(path);
  if (s->name[s->n] && s->path[s->n])
    s->n++;
  else {
    free(s->name[s->n]);
    free(s->path[s->n]);
  }
}

static void seen_free(seen *s)
{
  for (size_t i = 0; i < s->n; i++) {
    free(s->name[i]);
    free(s->path[i]);
  }
  free(s->name);
  free(s->path);
}

int plugin_list(FILE *out, int json)
{
  char **dirs = plugin_search_dirs();
  if (!dirs) {
    fprintf(stderr, "dwload: out of memory\n");
    return 1;
  }
  json_t *doc = json_object(), *plugins = json_array(), *errors = json_array(), *path = json_array();
  seen s = {0};
  int nfound = 0, nbad = 0;
  for (char **d = dirs; *d; d++) {
    json_array_append_new(path, json_string(*d));
    struct dirent **ents;
    int n = scandir(*d, &ents, is_so, alphasort);
    if (n < 0)
      continue;  /* a directory of the path that does not exist: nothing there */
    for (int i = 0; i < n; i++) {
      /* Jobs name a plugin by its file name: that is what shadows. */
      char file[4096], stem[256];
      snprintf(file, sizeof file, "%s/%s", *d, ents[i]->d_name);
      snprintf(stem, sizeof stem, "%.*s", (int)(strlen(ents[i]->d_name) - 3), ents[i]->d_name);
      free(ents[i]);
      plugin_lib *lib;
      dwl_error err;
      err_init(&err);
      if (plugin_load(file, &lib, &err) != 0) {
        nbad++;
        if (json)
          json_array_append_new(errors, json_pack("{s:s, s:s}", "path", file, "error", err.msg));
        else
          fprintf(out, "%s: not loaded: %s\n", file, err.msg);
        continue;
      }
      nfound++;
      const char *first = seen_path(&s, stem);
      if (json) {
        const dwl_plugin *p = lib->p;
        char abi[24];
        snprintf(abi, sizeof abi, "%u.%u", (unsigned)DWL_ABI_MAJOR_OF(p->abi_version),
                 (unsigned)(p->abi_version & 0xffffu));
        json_t *o = json_pack("{s:s, s:s?, s:s, s:s, s:s?, s:b, s:o}", "name", p->name, "version", p->version, "abi",
                              abi, "path", lib->path, "description", p->description, "used", first == NULL, "options",
                              options_json(p->options));
        if (o)
          json_array_append_new(plugins, o);
      } else {
        print_text(out, lib, first);
        fputc('\n', out);
      }
      if (!first)
        seen_add(&s, stem, lib->path);
      plugin_unload(lib);
    }
    free(ents);
  }
  if (json) {
    json_object_set_new(doc, "search_path", path);
    json_object_set_new(doc, "plugins", plugins);
    json_object_set_new(doc, "errors", errors);
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text) {
      fprintf(out, "%s\n", text);
      free(text);
    }
  } else {
    json_decref(path);
    json_decref(plugins);
    json_decref(errors);
    if (nfound == 0)
      fprintf(out, "no plugins found\n");
    fprintf(out, "searched, in this order:");
    for (char **d = dirs; *d; d++)
      fprintf(out, " %s", *d);
    fputc('\n', out);
  }
  json_decref(doc);
  seen_free(&s);
  plugin_free_dirs(dirs);
  return nbad ? 1 : 0;
}
