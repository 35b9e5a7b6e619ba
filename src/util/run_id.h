/* Run ids: a random UUID (version 4) per run (run_id.c). */
#ifndef DWL_RUN_ID_H
#define DWL_RUN_ID_H

/* Writes a new run id, 36 characters and a NUL, to out. */
void run_id_new(char out[40]);

#endif
