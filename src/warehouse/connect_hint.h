/* Hints for a failed connection, from the driver's diagnostics. */
#ifndef DWL_CONNECT_HINT_H
#define DWL_CONNECT_HINT_H

#include "err.h"

/* The hint for an error of cause DWL_CAUSE_CONNECT (a static string). */
const char *connect_hint(const dwl_error *err);

#endif
