/* Connection strings with their secrets replaced, for messages. */
#ifndef DWL_REDACT_H
#define DWL_REDACT_H

/* A copy of a connection string with the values of PWD, Password and
 * similar attributes replaced by "***" (caller frees; NULL: no memory). */
char *odbc_redact(const char *connstr);

#endif
