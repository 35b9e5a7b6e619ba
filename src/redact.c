/* Text of messages about ODBC: connection strings with the values of PWD,
 * Password and similar attributes replaced by "***", and a handle's
 * diagnostics on one line.  Compiled into the host and into the odbc
 * source plugin. */
#include "redact.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "buf.h"

/* Attribute names whose values are secrets, compared case-insensitively. */
static const char *const secret_keys[] = {"PWD", "PASSWORD", "PASSWD", "AUTHENTICATION", "TOKEN", "SECRET", NULL};

static int is_secret_key(const char *k, size_t n)
{
  while (n && isspace((unsigned char)k[n - 1]))
    n--;
  while (n && isspace((unsigned char)*k))
    k++, n--;
  for (int i = 0; secret_keys[i]; i++)
    if (strlen(secret_keys[i]) == n && strncasecmp(k, secret_keys[i], n) == 0)
      return 1;
  return 0;
}

/* Connection strings are KEY=VALUE pairs separated by ';', where a value
 * may be wrapped in braces {..} to contain ';' ('}}' escapes a brace). */
char *odbc_redact(const char *cs)
{
  dwl_buf out;
  buf_init(&out, 0);
  const char *p = cs ? cs : "";
  while (*p) {
    const char *eq = p, *end;
    while (*eq && *eq != '=' && *eq != ';')
      eq++;
    if (*eq != '=') {  /* no value: copy through */
      end = *eq ? eq + 1 : eq;
      buf_add(&out, p, (size_t)(end - p));
      p = end;
      continue;
    }
    const char *v = eq + 1;
    while (*v == ' ')
      v++;
    if (*v == '{') {
      end = v + 1;
      while (*end) {
        if (end[0] == '}' && end[1] == '}')
          end += 2;
        else if (end[0] == '}') {
          end++;
          break;
        } else
          end++;
      }
      while (*end && *end != ';')
        end++;
    } else {
      end = v;
      while (*end && *end != ';')
        end++;
    }
    buf_add(&out, p, (size_t)(eq - p) + 1);
    if (is_secret_key(p, (size_t)(eq - p)))
      buf_adds(&out, "***");
    else
      buf_add(&out, eq + 1, (size_t)(end - eq - 1));
    if (*end == ';') {
      buf_addc(&out, ';');
      end++;
    }
    p = end;
  }
  return buf_steal(&out);
}

void odbc_diag_text(SQLSMALLINT htype, SQLHANDLE h, dwl_buf *b)
{
  SQLCHAR state[6] = "", msg[1024];
  SQLINTEGER native = 0;
  SQLSMALLINT len;
  for (SQLSMALLINT i = 1; i <= 3; i++) {
    if (!SQL_SUCCEEDED(SQLGetDiagRec(htype, h, i, state, &native, msg, sizeof msg, &len)))
      break;
    /* Drivers end messages with newlines; keep one line per diagnostic. */
    size_t n = strlen((char *)msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
      msg[--n] = '\0';
    buf_printf(b, "%s%s [%s %ld]", b->len ? "; " : "", (char *)msg, (char *)state, (long)native);
  }
  if (!b->data)
    buf_adds(b, "unknown ODBC error");
}
