/* ${VAR} expansion of job file values from the environment (dwload-job(5),
 * "Variables"). */
#ifndef DWL_EXPAND_H
#define DWL_EXPAND_H

/* What an expansion came to; only EXP_OK leaves a result. */
enum { EXP_OK = 0, EXP_UNSET, EXP_SYNTAX, EXP_NOMEM };

/* Expands ${VAR} and ${VAR:-default} in `in` into *res (a new string).
 * EXP_UNSET sets *bad_var (when bad_var is not NULL) to the first unset
 * variable's name, a new string; EXP_SYNTAX and EXP_NOMEM leave it NULL. */
int expand_env(const char *in, char **res, char **bad_var);
/* The same for an ODBC connection string (see spec_expand_conn). */
int expand_conn_string(const char *in, char **res, char **bad_var);

/* Expands ${VAR} and ${VAR:-default} from the environment.  Returns a new
 * string, or NULL with *bad_var set to the first unset variable's name
 * (a new string) or NULL for a syntax error. */
char *spec_expand_env(const char *in, char **bad_var);
/* The same for an ODBC connection string: a variable that is the whole
 * value of an attribute (Pwd=${PW}) is wrapped in braces, '}' doubled,
 * when its value holds ';', '{', '}' or spaces at either end; inside a
 * braced value its '}' are doubled; elsewhere it goes in as it is. */
char *spec_expand_conn(const char *in, char **bad_var);

#endif
