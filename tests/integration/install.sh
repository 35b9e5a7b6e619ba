#!/bin/sh
# make install DESTDIR=...: the binary, the csv plugin, the SDK header, the
# pkg-config file, the manual pages and the example plugin's source land
# where they belong; the example plugin builds out of the tree against the
# installed SDK with pkg-config, and the installed dwload runs a job with it.
# Once, on SQLite: installing does not depend on the warehouse.
. "$TOP_SRCDIR/tests/integration/lib.sh"

skip_unless_warehouse sqlite "installing does not depend on the warehouse (run on SQLite)"
TOP_BUILDDIR=${TOP_BUILDDIR:?TOP_BUILDDIR must name the build tree}
command -v pkg-config >/dev/null 2>&1 || {
  echo "1..0 # SKIP pkg-config is not installed"
  exit 0
}

# What configure chose, from the build tree's Makefile.
mkvar() {
  sed -n "s/^$1 = //p" "$TOP_BUILDDIR/Makefile" | head -n 1
}
prefix=$(mkvar prefix)
DEST="$WORK/dest"
# A make of its own: not the jobserver of the make check that runs this.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP_BUILDDIR" install DESTDIR="$DEST" >"$WORK/install.log" 2>&1
is "$?" 0 "make install DESTDIR=... succeeds"
[ "$T_FAILED" -eq 0 ] || sed 's/^/# /' "$WORK/install.log" | tail -n 20

# The directories, as make expands them for this prefix.
BIN="$DEST$prefix/bin/dwload"
printvar() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" -f Makefile -f - print-var V="$1" <<'EOF'
print-var:
	@echo $($(V))
EOF
}
LIBDIR="$DEST$(printvar libdir)"
PKGLIBDIR="$DEST$(printvar pkglibdir)"
INCLUDEDIR="$DEST$(printvar includedir)"
MANDIR="$DEST$(printvar mandir)"
DOCDIR="$DEST$(printvar docdir)"

# installed FILE WHAT: FILE is there
installed() {
  [ -f "$1" ] && pass "installed: $2" || fail "installed: $2" "no $1"
}
installed "$BIN" "bin/dwload"
installed "$PKGLIBDIR/csv.so" "the csv plugin in pkglibdir"
installed "$INCLUDEDIR/dwload/plugin.h" "dwload/plugin.h"
installed "$LIBDIR/pkgconfig/dwload-plugin.pc" "dwload-plugin.pc"
for m in man1/dwload.1 man5/dwload-job.5 man7/dwload-plugin.7; do
  installed "$MANDIR/$m" "$m"
done
installed "$DOCDIR/examples/plugin/seq.c" "the example plugin's source"
installed "$DOCDIR/examples/conf/customers.yaml" "the example jobs"
missing=""
for f in "$TOP_SRCDIR"/conf/examples/*; do
  [ -f "$f" ] && [ ! -f "$DOCDIR/examples/conf/$(basename "$f")" ] && missing="$missing $(basename "$f")"
done
is "$missing" "" "installed: every file of conf/examples"
installed "$DOCDIR/examples/airflow/dwload_dag.py" "the Airflow example"
installed "$DEST$(printvar bashcompletiondir)/dwload" "the bash completion"

# ---- the SDK, through pkg-config ---------------------------------------------
PKG="env PKG_CONFIG_SYSROOT_DIR=$DEST PKG_CONFIG_PATH=$LIBDIR/pkgconfig PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig pkg-config"
CFLAGS_PC=$($PKG --cflags dwload-plugin)
is "$?" 0 "pkg-config finds dwload-plugin"
like "$CFLAGS_PC" "-I$INCLUDEDIR" "pkg-config --cflags points at the installed headers"
is "$($PKG --modversion dwload-plugin)" "$(printvar PACKAGE_VERSION)" "pkg-config --modversion is dwload's version"
# (pkg-config puts the sysroot, here DESTDIR, before it)
is "$($PKG --variable=plugindir dwload-plugin)" "$PKGLIBDIR" "pkg-config's plugindir is where the plugins go"

# Out of the tree: the installed copy of the example, the installed header
# only (no -I into the source tree), warnings as errors.
mkdir "$WORK/oot"
cp "$DOCDIR/examples/plugin/seq.c" "$WORK/oot/seq.c"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -shared -fPIC $CFLAGS_PC -o "$WORK/oot/seq.so" "$WORK/oot/seq.c" \
  >"$WORK/cc.log" 2>&1
is "$?" 0 "the example plugin builds out of the tree against the installed SDK"
[ "$T_FAILED" -eq 0 ] || sed 's/^/# /' "$WORK/cc.log"
is "$(nm -D --defined-only "$WORK/oot/seq.so" | awk '$2 == "T" { print $3 }' | grep -v '^_')" "dwl_plugin_entry" \
  "the plugin exports dwl_plugin_entry alone"

# ---- the installed dwload ----------------------------------------------------
# From here on, dw runs the installed binary.
DWLOAD=$BIN
dw --version
like "$OUT" "dwload $(printvar PACKAGE_VERSION)" "the installed dwload runs"
# Not run from the build tree, it does not see the build tree's plugins.
dw plugins
unlike "$OUT" "$TOP_BUILDDIR" "the installed dwload does not search the build tree"
dw --plugin-path "$WORK/oot:$PKGLIBDIR" plugins
is "$RC" 0 "installed dwload plugins: exit 0"
# The ABI the tree's plugins are built with: the header's.
ABI=$(abi_version)
like "$OUT" "seq 1.0.0 (ABI $ABI) $WORK/oot/seq.so" "installed dwload plugins: the out-of-tree plugin"
like "$OUT" "csv 1.0.0 (ABI $ABI) $PKGLIBDIR/csv.so" "installed dwload plugins: the installed csv plugin"
J=$(job numbers <<EOF
version: 1
job: numbers
source:
  plugin: seq
  count: 4
target:
  connection: "$WH_CONN"
  table: numbers
load:
  mode: append
  lmd: updated_at
EOF
)
dw --plugin-path "$WORK/oot" run "$J"
is "$RC|$(field inserted)|$(field checkpoint)" "0|4|2024-01-01 00:04:00" \
  "the installed dwload runs a job with the out-of-tree plugin"
is "$(sql 'SELECT count(*), min(label) FROM numbers')" "4|row" "the rows are in the warehouse"
dw check "$J"
is "$RC" 4 "without the plugin path the installed dwload does not find seq"
like "$OUT" "plugin 'seq' not found" "... and says so"
MANWIDTH=80 man --warnings -l "$MANDIR/man1/dwload.1" >/dev/null 2>"$WORK/man.err"
is "$?|$(cat "$WORK/man.err")" "0|" "the installed dwload(1) formats without warnings"

done_testing
