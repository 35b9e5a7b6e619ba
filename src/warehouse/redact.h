/* Text of messages about ODBC: connection strings with their secrets
 * replaced, and a handle's diagnostics. */
#ifndef DWL_REDACT_H
#define DWL_REDACT_H

#include <sql.h>

#include "buf.h"

/* A copy of a connection string with the values of PWD, Password and
 * similar attributes replaced by "***" (caller frees; NULL: no memory). */
char *odbc_redact(const char *connstr);

/* Does the connection string set the attribute NAME (the whole name,
 * case-insensitively: "Fetch" is not "UseDeclareFetch"; text inside a
 * braced value is no attribute)? */
int odbc_conn_has_attr(const char *connstr, const char *name);

/* Where the first attribute with a braced value ("PWD={a;b}") starts in
 * the connection string: its offset, or the string's length when none. */
size_t odbc_conn_first_braced(const char *connstr);

/* Appends "message [SQLSTATE native]" for each of the handle's first three
 * diagnostics, "; "-separated, to b ("unknown ODBC error" when none). */
void odbc_diag_text(SQLSMALLINT htype, SQLHANDLE h, dwl_buf *b);

#endif
