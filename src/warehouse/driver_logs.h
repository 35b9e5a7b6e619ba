/* The ODBC drivers' own log files, which a run should not leave behind
 * unless its connection string asks for them (driver_logs.c). */
#ifndef DWL_DRIVER_LOGS_H
#define DWL_DRIVER_LOGS_H

/* Before a process's first ODBC connection (dwload's or a source
 * plugin's, both in this process): when the drivers' registry
 * (odbcinst.ini) turns a driver's process-wide log on, points unixODBC
 * (ODBCSYSINI) at a copy of it, private to this run, with that switch at
 * 0.  Once per process; later calls return at once.  0, or -1 when no
 * copy could be made (the run goes on: the log is a nuisance, not a
 * fault). */
int driver_logs_quiet(void);

#endif
