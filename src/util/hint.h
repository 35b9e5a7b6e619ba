/* What to do next after an error: a one-line hint for the common
 * failures, from the error's exit code, cause and SQLSTATE. */
#ifndef DWL_HINT_H
#define DWL_HINT_H

#include "err.h"

/* A static hint, or NULL when the message says enough already. */
const char *hint_for(const dwl_error *err);

#endif
