/* SQL type names as a data engineer writes them ("numeric(12, 2)",
 * "VARCHAR(40)", "double precision", ...), parsed into a dwl_column's
 * type, precision and scale: the one type parser.  It is part of the
 * host's library (unit-tested there, tests/unit/test_coltype.c), and the
 * plugins that read a `types` option (csv, http_json) compile in their own
 * copy, since a plugin links no host symbol. */
#include "coltype.h"

#include <stdio.h>
#include <string.h>

typedef struct type_name {
  const char *name;
  int type;
  int maxargs;
} type_name;

static const type_name type_names[] = {
  {"text", DWL_TYPE_TEXT, 0},        {"string", DWL_TYPE_TEXT, 0},
  {"clob", DWL_TYPE_TEXT, 0},        {"varchar", DWL_TYPE_TEXT, 1},
  {"character varying", DWL_TYPE_TEXT, 1},
  {"char", DWL_TYPE_TEXT, 1},        {"character", DWL_TYPE_TEXT, 1},
  {"nvarchar", DWL_TYPE_TEXT, 1},    {"nchar", DWL_TYPE_TEXT, 1},
  {"integer", DWL_TYPE_INTEGER, 0},  {"int", DWL_TYPE_INTEGER, 0},
  {"bigint", DWL_TYPE_INTEGER, 0},   {"smallint", DWL_TYPE_INTEGER, 0},
  {"tinyint", DWL_TYPE_INTEGER, 0},  {"int2", DWL_TYPE_INTEGER, 0},
  {"int4", DWL_TYPE_INTEGER, 0},     {"int8", DWL_TYPE_INTEGER, 0},
  {"numeric", DWL_TYPE_NUMERIC, 2},  {"decimal", DWL_TYPE_NUMERIC, 2},
  {"dec", DWL_TYPE_NUMERIC, 2},      {"number", DWL_TYPE_NUMERIC, 2},
  {"real", DWL_TYPE_REAL, 0},        {"float", DWL_TYPE_REAL, 0},
  {"double", DWL_TYPE_REAL, 0},      {"double precision", DWL_TYPE_REAL, 0},
  {"float4", DWL_TYPE_REAL, 0},      {"float8", DWL_TYPE_REAL, 0},
  {"boolean", DWL_TYPE_BOOLEAN, 0},  {"bool", DWL_TYPE_BOOLEAN, 0},
  {"date", DWL_TYPE_DATE, 0},
  {"timestamp", DWL_TYPE_TIMESTAMP, 1}, {"datetime", DWL_TYPE_TIMESTAMP, 0},
};

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Parses "numeric(12, 2)", "VARCHAR(40)", "double precision", ... into a
 * column's type fields.  Returns 0, or -1 with *why set. */
int coltype_parse(const char *s, dwl_column *col, const char **why)
{
  char base[32] = "";
  size_t n = 0;
  *why = "unknown type";
  while (is_blank(*s))
    s++;
  for (; *s && *s != '('; s++) {
    char c = *s;
    if (is_blank(c)) {
      /* "double  precision" and "double precision" are the same name */
      if (n && base[n - 1] != ' ' && n < sizeof base - 1)
        base[n++] = ' ';
      continue;
    }
    if (n >= sizeof base - 1)
      return -1;
    base[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  while (n && base[n - 1] == ' ')
    n--;
  base[n] = '\0';

  const type_name *tn = NULL;
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (strcmp(base, type_names[i].name) == 0)
      tn = &type_names[i];
  if (!tn)
    return -1;

  long args[2] = {0, 0};
  int nargs = 0;
  if (*s == '(') {
    s++;
    for (;;) {
      while (is_blank(*s))
        s++;
      if (*s < '0' || *s > '9' || nargs == 2) {
        *why = "malformed type arguments";
        return -1;
      }
      long v = 0;
      while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s++ - '0');
        if (v > 10000000) {
          *why = "type argument out of range";
          return -1;
        }
      }
      args[nargs++] = v;
      while (is_blank(*s))
        s++;
      if (*s == ',') {
        s++;
        continue;
      }
      if (*s != ')') {
        *why = "malformed type arguments";
        return -1;
      }
      s++;
      break;
    }
    while (is_blank(*s))
      s++;
  }
  if (*s) {
    *why = "unexpected text after the type";
    return -1;
  }
  if (nargs > tn->maxargs) {
    *why = tn->maxargs ? "too many type arguments" : "this type takes no arguments";
    return -1;
  }
  col->type = tn->type;
  col->precision = 0;
  col->scale = 0;
  if (tn->type == DWL_TYPE_TEXT && nargs == 1) {
    if (args[0] < 1) {
      *why = "length must be at least 1";
      return -1;
    }
    col->precision = (int)args[0];
  } else if (tn->type == DWL_TYPE_NUMERIC && nargs >= 1) {
    if (args[0] < 1 || args[0] > 1000) {
      *why = "precision must be between 1 and 1000";
      return -1;
    }
    if (args[1] > args[0]) {
      *why = "scale must not exceed precision";
      return -1;
    }
    col->precision = (int)args[0];
    col->scale = (int)args[1];
  } else if (tn->type == DWL_TYPE_TIMESTAMP && nargs == 1 && args[0] > 9) {
    /* fractional-second digits; the exchange form is text, so only checked */
    *why = "fractional-second precision must be between 0 and 9";
    return -1;
  }
  return 0;
}
