"""Runs conf/examples/airflow/dwload_dag.py as Airflow would, without Airflow.

Airflow is not installable here, so stand-in modules (airflow, its
exceptions and operators, pendulum) take the parts of its API the DAG
uses: they record each operator's arguments, and BashOperator.execute does
what Airflow 2's does (the env, merged into the worker's with append_env;
the command run by bash in a NEW temporary folder when cwd is unset; exit
skip_on_exit_code -> AirflowSkipException, another non-zero exit ->
AirflowException "... non-zero exit code N.", else the last stdout line,
the XCom value).  The templated fields (bash_command, env, cwd) are
rendered first, their {{ ... }} evaluated against fixed connection values,
as Jinja would.

Usage: airflow_dag.py WORK DAG_FILE COMMAND [ARGS]
  run TASK_ID...   runs each task twice; one line per run:
                   TASK_ID RUN CWD_WAS_EMPTY CWD OUTCOME (the rest of the line)
  codes CODE...    runs the DAG's dwload operator on `exit CODE`; one line
                   per code: CODE OUTCOME
  import           imports the DAG only (prints "imported" or the error)
The connection's fields come from DW_CONN_HOST, _PORT, _SCHEMA, _LOGIN,
_PASSWORD in the environment.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

STANDINS = {
    "airflow/__init__.py": '''
class DAG:
    def __init__(self, dag_id, **kw):
        self.dag_id, self.kw = dag_id, kw
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False
''',
    "airflow/exceptions.py": '''
class AirflowException(Exception):
    pass
class AirflowSkipException(AirflowException):
    pass
class AirflowFailException(AirflowException):
    pass
''',
    "airflow/operators/__init__.py": "",
    "airflow/operators/bash.py": '''
import os, subprocess, tempfile
from airflow.exceptions import AirflowException, AirflowSkipException
CREATED = []
class BashOperator:
    template_fields = ("bash_command", "env", "cwd")
    def __init__(self, *, task_id, bash_command, env=None, append_env=False, skip_on_exit_code=99, cwd=None, **kw):
        self.task_id, self.bash_command, self.env, self.append_env = task_id, bash_command, env, append_env
        self.skip_on_exit_code, self.cwd, self.kw = skip_on_exit_code, cwd, kw
        self.last_cwd = None
        CREATED.append(self)
    def __rshift__(self, other):
        return other
    def __rrshift__(self, other):
        return self
    def execute(self, context):
        # Airflow 2: env replaces the worker's environment unless append_env
        if self.env is None:
            env = dict(os.environ)
        elif self.append_env:
            env = dict(os.environ, **self.env)
        else:
            env = dict(self.env)
        with tempfile.TemporaryDirectory(prefix="airflowtmp") as tmp:
            cwd = self.cwd or tmp
            self.last_cwd = cwd
            self.cwd_was_empty = not os.listdir(cwd)
            r = subprocess.run(["bash", "-c", self.bash_command], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, text=True)
        if self.skip_on_exit_code is not None and r.returncode == self.skip_on_exit_code:
            raise AirflowSkipException(f"Bash command returned exit code {r.returncode}. Skipping.")
        if r.returncode != 0:
            raise AirflowException(f"Bash command failed. The command returned a non-zero exit code {r.returncode}.")
        lines = r.stdout.splitlines()
        return lines[-1] if lines else None
''',
    "airflow/operators/python.py": '''
class PythonOperator:
    def __init__(self, *, task_id, python_callable, op_kwargs=None, **kw):
        self.task_id, self.python_callable, self.op_kwargs = task_id, python_callable, op_kwargs or {}
    def __rshift__(self, other):
        return other
    def __rrshift__(self, other):
        return self
''',
    "pendulum.py": '''
def datetime(*a, **kw):
    return (a, kw)
''',
}


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def conn_values():
    e = os.environ.get
    port = e("DW_CONN_PORT")
    return Obj(dw_warehouse=Obj(host=e("DW_CONN_HOST"), port=int(port) if port else None,
                                schema=e("DW_CONN_SCHEMA"), login=e("DW_CONN_LOGIN"),
                                password=e("DW_CONN_PASSWORD")))


def render(value, names):
    """A templated field as Jinja renders it: each {{ expr }} evaluated
    (the DAG's are attribute look-ups and `or`, which mean the same in
    Python), None as "None" as Jinja prints it."""
    if isinstance(value, dict):
        return {k: render(v, names) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    return re.sub(r"\{\{(.*?)\}\}", lambda m: str(eval(m.group(1).strip(), {}, names)), value)


def load_dag(work, dag_file):
    root = os.path.join(work, "standins")
    for rel, text in STANDINS.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location("dwload_dag_under_test", dag_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def outcome(op):
    from airflow.exceptions import AirflowException, AirflowFailException, AirflowSkipException
    try:
        line = op.execute({})
        return "ok:" + (json.dumps(json.loads(line), separators=(",", ":")) if line else "")
    except AirflowSkipException:
        return "skipped"
    except AirflowFailException:
        return "failed-no-retry"
    except AirflowException:
        return "failed-retry"


def main():
    work, dag_file, command, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    try:
        dag = load_dag(work, dag_file)
    except Exception as exc:  # the DAG's own refusal, as Airflow's UI would show it
        print(f"import error: {type(exc).__name__}: {exc}")
        return 0
    if command == "import":
        print("imported")
        return 0
    from airflow.operators.bash import CREATED
    names = {"conn": conn_values()}
    if command == "run":
        by_id = {op.task_id: op for op in CREATED}
        for task_id in args:
            op = by_id[task_id]
            for run in (1, 2):
                for field in op.template_fields:
                    setattr(op, field, render(getattr(op, field), names))
                got = outcome(op)
                print(task_id, run, "empty" if op.cwd_was_empty else "not-empty", op.last_cwd, got)
    elif command == "codes":
        for code in args:
            op = dag.DwloadRunOperator(task_id=f"code_{code}", job_file="none.yaml")
            op.bash_command = f"exit {int(code)}"
            print(code, outcome(op))
        print("RETRY_EXITS", ",".join(str(c) for c in dag.RETRY_EXITS))
        print("NO_RETRY_EXITS", ",".join(str(c) for c in dag.NO_RETRY_EXITS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
