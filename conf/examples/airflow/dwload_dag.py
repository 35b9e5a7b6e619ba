"""dwload jobs in Apache Airflow (2.6 or later), with BashOperator.

Two jobs load the customer feed every morning: customer_changes (append)
and customer_dim (scd2).  refresh_marts, after customer_dim, reads its
summary from XCom through Jinja and runs only when the load was not
skipped; report reads both summaries in Python after both loads, loaded
or skipped.

How dwload's exit codes (dwload(1), EXIT STATUS) map to Airflow
(RETRY_EXITS and NO_RETRY_EXITS below; anything else is retried):

  0   success; the last stdout line, dwload's one-line JSON summary, is
      what BashOperator pushes to XCom (do_xcom_push, the default).
  1   the run failed, nothing was committed, maybe for a passing reason (a
      server down, a lost connection, a lock wait timeout): the task
      fails and Airflow retries it.
  3   another run of the job holds its lock: worth a retry later, same.
  5   the commit's outcome is unknown: retried, since a retry is safe (the
      data and the checkpoint commit together: it loads what is missing,
      or finds nothing and is skipped).
  128+N  interrupted by signal N and rolled back (a worker shutting down):
      retried.
  2   bad command line or job file: a retry cannot help, so the task
      fails at once, without using its retries (AirflowFailException).
  4   failed permanently (the table lacks a column, rejected rows over
      load.max_rejects, a deletion guard, a plugin not found): fails at
      once too; a person must change the table, the source or the job.
  6   the run committed but its summary could not be written (a full
      disk): fails at once, since a retry would find nothing new and be
      skipped, and the tasks after it would miss the load.
  99  --empty-exit 99: the run succeeded but found nothing past the
      checkpoint; skip_on_exit_code=99 marks the task skipped, and the
      tasks after it are skipped too.

Secrets: job files read them from the environment (${DW_PASSWORD}); here
the environment is filled from an Airflow connection, dw_warehouse (its
host, port, schema as the database, login and password), whose password
never appears in the DAG or the job file.  The connection itself
can come from the secrets backend or from the variable
AIRFLOW_CONN_DW_WAREHOUSE.  dwload never logs passwords.

Only the summary goes to stdout: the logs (one JSON object per line, with
--log-format json) go to stderr, which Airflow keeps in the task log.

Paths: BashOperator runs each command in a new temporary folder, so a
relative path would point somewhere else on every run; a SQLite warehouse
there would be a new, empty database each time, and every run would load
the whole feed again into a file that is then deleted.  So every path
comes from one absolute folder, DWLOAD_HOME (default /opt/dwload) on the
workers: the job files in DWLOAD_JOBS_DIR (default DWLOAD_HOME/jobs), the
SQLite warehouse of the SQLite jobs in DWLOAD_HOME/warehouse.db, given to
them as DWLOAD_WAREHOUSE.  A job file's source path is read relative to
the job file's folder.  DWLOAD_BIN names the dwload binary (default:
dwload on PATH).
"""

import json
import os
import re
from datetime import timedelta

import pendulum
from airflow import DAG
from airflow.exceptions import AirflowException, AirflowFailException, AirflowSkipException
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

DWLOAD = os.environ.get("DWLOAD_BIN", "dwload")
DWLOAD_HOME = os.environ.get("DWLOAD_HOME", "/opt/dwload")
JOBS_DIR = os.environ.get("DWLOAD_JOBS_DIR", os.path.join(DWLOAD_HOME, "jobs"))
# Relative, they would be read in each task's temporary folder: refuse them
# when the DAG is parsed, where the import error shows in Airflow's UI.
for _name, _path in (("DWLOAD_HOME", DWLOAD_HOME), ("DWLOAD_JOBS_DIR", JOBS_DIR)):
    if not os.path.isabs(_path):
        raise ValueError(f"{_name} must be an absolute path, not {_path!r}")
EMPTY_EXIT = 99  # BashOperator's default skip_on_exit_code
# dwload(1), EXIT STATUS; the module docstring says why each is here.
RETRY_EXITS = (1, 3, 5)  # and 128+N, a signal
NO_RETRY_EXITS = (2, 4, 6)

# The job files read these: the SQLite warehouse's absolute path, and the
# server's parts, which Jinja fills from the dw_warehouse connection when
# the task runs ('' for a part the connection lacks: the job file's
# ${DW_PORT:-5432} then takes its default).
WAREHOUSE_ENV = {
    "DWLOAD_WAREHOUSE": os.path.join(DWLOAD_HOME, "warehouse.db"),
    "DW_HOST": "{{ conn.dw_warehouse.host }}",
    "DW_PORT": "{{ conn.dw_warehouse.port or '' }}",
    "DW_DATABASE": "{{ conn.dw_warehouse.schema or '' }}",
    "DW_USER": "{{ conn.dw_warehouse.login or '' }}",
    "DW_PASSWORD": "{{ conn.dw_warehouse.password }}",
}


class DwloadRunOperator(BashOperator):
    """`dwload run` of one job file: skipped on exit 99, failed without
    retries on NO_RETRY_EXITS (2, 4, 6), retried (per the task's retries)
    on the others (1, 3, 5, 128+N)."""

    def __init__(self, *, job_file, **kwargs):
        command = (
            f"{DWLOAD} --log-format json run --empty-exit {EMPTY_EXIT} "
            f"{os.path.join(JOBS_DIR, job_file)}"
        )
        super().__init__(
            bash_command=command,
            env=WAREHOUSE_ENV,
            append_env=True,  # keep PATH, ODBCSYSINI, DWLOAD_PLUGIN_PATH, ...
            skip_on_exit_code=EMPTY_EXIT,
            **kwargs,
        )

    def execute(self, context):
        try:
            return super().execute(context)
        except AirflowSkipException:
            raise
        except AirflowException as exc:
            # BashOperator reports "... returned a non-zero exit code N."
            code = re.search(r"exit code (\d+)", str(exc))
            if code and int(code.group(1)) in NO_RETRY_EXITS:
                raise AirflowFailException(
                    f"dwload exit {code.group(1)}: a retry would not help (see the task log and "
                    "dwload(1), EXIT STATUS)"
                ) from exc
            raise


def report_summaries(ti, task_ids):
    """Reads each load's summary line from XCom and logs one line per job;
    returns the totals (pushed to XCom in turn)."""
    totals = {"inserted": 0, "expired": 0, "updated": 0, "deleted": 0, "rejected": 0}
    for task_id in task_ids:
        line = ti.xcom_pull(task_ids=task_id)
        if not line:
            continue  # the load was skipped: nothing past its checkpoint
        summary = json.loads(line)
        print(
            f"{summary['job']}: {summary['status']}, read {summary['read']}, "
            f"inserted {summary['inserted']}, expired {summary['expired']}, "
            f"updated {summary['updated']}, deleted {summary['deleted']}, "
            f"checkpoint {summary['checkpoint']}, {summary['seconds']}s"
        )
        for key in totals:
            totals[key] += summary.get(key, 0)
    return totals


with DAG(
    dag_id="dwload_customers",
    description="Customer feed into the warehouse with dwload",
    schedule="0 6 * * *",
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,  # dwload would refuse a second run anyway (exit 3)
    default_args={
        "retries": 3,
        "retry_delay": timedelta(minutes=5),
        "retry_exponential_backoff": True,
        "execution_timeout": timedelta(hours=2),
    },
    tags=["dwload"],
) as dag:
    load_changes = DwloadRunOperator(task_id="load_customer_changes", job_file="append.yaml")
    load_dim = DwloadRunOperator(task_id="load_customer_dim", job_file="scd2.yaml")

    # Runs only when load_customer_dim loaded something (a skipped load
    # skips it); reads the summary through Jinja.
    refresh_marts = BashOperator(
        task_id="refresh_marts",
        bash_command='echo "refreshing the marts after: $SUMMARY"',
        env={"SUMMARY": "{{ ti.xcom_pull(task_ids='load_customer_dim') }}"},
        append_env=True,
    )

    # Runs after both loads whether they loaded or were skipped.
    report = PythonOperator(
        task_id="report",
        python_callable=report_summaries,
        op_kwargs={"task_ids": ["load_customer_changes", "load_customer_dim"]},
        trigger_rule="none_failed",
    )

    load_dim >> refresh_marts
    [load_changes, load_dim] >> report
