# python3_direct DIR: puts DIR, holding a link named python3 to a Python
# interpreter itself, first on PATH (exported), once per process tree
# (DWL_PYTHON3 names the interpreter chosen).  The tests start python
# hundreds of times a script (norm_run, field, the JSON checks), and a
# version manager's python3 is a shim: pyenv's is a shell script that
# costs ~0.4 s a start, against ~0.03 s for Debian's /usr/bin/python3.
# The interpreter chosen is the first that has the modules the tests
# import (jsonschema, for lineage.sh): Debian's, which scripts/lib-deps.sh
# installs with python3-jsonschema, else the one `python3` starts.
# None has them: PATH is left alone.  Sourced by scripts/test and
# tests/integration/lib.sh.
python3_direct() {
  [ -z "${DWL_PYTHON3:-}" ] || return 0
  for _p3 in /usr/bin/python3 "$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)"; do
    if [ -n "$_p3" ] && [ -x "$_p3" ] && "$_p3" -c 'import jsonschema' 2>/dev/null; then
      mkdir -p "$1" && ln -sf "$_p3" "$1/python3" || return 1
      PATH=$1:$PATH
      DWL_PYTHON3=$_p3
      export PATH DWL_PYTHON3
      return 0
    fi
  done
  return 0
}
