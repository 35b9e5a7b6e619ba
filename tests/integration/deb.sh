#!/bin/sh
# The Debian packages (debian/): dpkg-buildpackage builds dwload and
# dwload-dev from the tree as it ships (make distdir), lintian finds no
# error, dpkg -i installs them; the installed dwload runs the installed
# demo job, an out-of-tree plugin builds against the installed dwload-dev
# with pkg-config and loads, the installed bash completion loads through
# bash-completion; dpkg -r removes both at the end (and at exit, whatever
# happened).  Once, on SQLite, as root: it installs into the system.
. "$TOP_SRCDIR/tests/integration/lib.sh"

skip_unless_warehouse sqlite "packaging does not depend on the warehouse (run on SQLite)"
TOP_BUILDDIR=${TOP_BUILDDIR:?TOP_BUILDDIR must name the build tree}
skip() {
  echo "1..0 # SKIP $1"
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "not root: dpkg -i installs into the system"
for t in dpkg-buildpackage dpkg-checkbuilddeps dpkg-parsechangelog pkg-config bash timeout; do
  command -v "$t" >/dev/null 2>&1 || skip "$t is not installed (Debian: dpkg-dev, pkg-config, bash, coreutils)"
done
# Not someone's installed dwload: this test would replace, then remove it.
for p in dwload dwload-dev; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
    skip "the package $p is installed already: the test would replace and remove it"
  fi
done

# What configure chose, from the build tree's Makefile.
mkvar() {
  sed -n "s/^$1 = //p" "$TOP_BUILDDIR/Makefile" | head -n 1
}
VERSION=$(mkvar PACKAGE_VERSION)
# A make of its own: not the jobserver of the make check that runs this.
mk() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP_BUILDDIR" "$@"
}

# ---- build --------------------------------------------------------------------
SRC="$WORK/src/dwload-$VERSION"
mkdir "$WORK/src"
mk distdir distdir="$SRC" >"$WORK/distdir.log" 2>&1
is "$?" 0 "make distdir: the tree as it ships, debian/ included"
[ -f "$SRC/debian/control" ] && [ -x "$SRC/debian/rules" ]
is "$?" 0 "the distributed tree holds debian/ (EXTRA_DIST)"
[ "$T_FAILED" -eq 0 ] || { sed 's/^/# /' "$WORK/distdir.log" | tail -n 20; done_testing; }
unmet=$(cd "$SRC" && dpkg-checkbuilddeps 2>&1) ||
  skip "$(printf '%s' "$unmet" | sed 's/^dpkg-checkbuilddeps: error: //' | head -n 1)"
is "$(cd "$SRC" && dpkg-parsechangelog -S Version)" "$VERSION" \
  "debian/changelog's version is configure.ac's"

# nocheck: the suite that runs this is the check; parallel=2: the build is
# the slow part.  Bounded: 15 minutes.
(cd "$SRC" && DEB_BUILD_OPTIONS="nocheck parallel=2" timeout 900 dpkg-buildpackage -us -uc -b) \
  >"$WORK/build.log" 2>&1
is "$?" 0 "dpkg-buildpackage -us -uc -b succeeds"
[ "$T_FAILED" -eq 0 ] || { sed 's/^/# /' "$WORK/build.log" | tail -n 30; done_testing; }
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null || dpkg --print-architecture)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
DEB="$WORK/src/dwload_${VERSION}_$ARCH.deb"
DEVDEB="$WORK/src/dwload-dev_${VERSION}_$ARCH.deb"
[ -f "$DEB" ] && [ -f "$DEVDEB" ]
is "$?" 0 "it builds dwload_${VERSION}_$ARCH.deb and dwload-dev_${VERSION}_$ARCH.deb"

if command -v lintian >/dev/null 2>&1; then
  timeout 300 lintian --fail-on error "$WORK/src/dwload_${VERSION}_$ARCH.changes" >"$WORK/lintian.log" 2>&1
  is "$?" 0 "lintian --fail-on error: no error"
  grep -E '^[EW]: ' "$WORK/lintian.log" | sed 's/^/# /'
else
  skip_tests 1 "lintian is not installed"
fi

# ---- install ------------------------------------------------------------------
remove_packages() {
  dpkg -r dwload-dev dwload >"$WORK/remove.log" 2>&1
}
trap 'remove_packages; _wh_drop_db; if [ "$T_FAILED" -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "# work files kept in $WORK"; fi' EXIT
DEBIAN_FRONTEND=noninteractive dpkg -i "$DEB" "$DEVDEB" >"$WORK/install.log" 2>&1
is "$?" 0 "dpkg -i installs both packages"
[ "$T_FAILED" -eq 0 ] || { sed 's/^/# /' "$WORK/install.log" | tail -n 20; done_testing; }

# owned PACKAGE PATH: PACKAGE installed PATH
owned() {
  if dpkg -L "$1" | grep -qx -- "$2" && [ -f "$2" ]; then
    pass "$1 installs $2"
  else
    fail "$1 installs $2" "dpkg -L $1: $(dpkg -L "$1" | tr '\n' ' ')"
  fi
}
PLUGINDIR=/usr/lib/$MA/dwload
EXAMPLES=/usr/share/doc/dwload/examples
owned dwload /usr/bin/dwload
for p in csv odbc http_json; do
  owned dwload "$PLUGINDIR/$p.so"
done
owned dwload /usr/share/man/man1/dwload.1.gz
owned dwload /usr/share/man/man5/dwload-job.5.gz
owned dwload /usr/share/man/man7/dwload-plugin.7.gz
owned dwload "$EXAMPLES/conf/customers.yaml"
owned dwload "$EXAMPLES/plugin/seq.c"
owned dwload /usr/share/bash-completion/completions/dwload
owned dwload-dev /usr/include/dwload/plugin.h
owned dwload-dev "/usr/lib/$MA/pkgconfig/dwload-plugin.pc"

# ---- the installed dwload -------------------------------------------------------
DWLOAD=/usr/bin/dwload
dw --version
like "$OUT" "dwload $VERSION" "the installed dwload runs"
dw plugins
like "$OUT" "csv 1.0.0 (ABI $(abi_version)) $PLUGINDIR/csv.so" "it finds its plugins in $PLUGINDIR"
unlike "$OUT" "$TOP_BUILDDIR" "... and not the build tree's"

# The demo job, from where the package put it, in a folder of its own (its
# warehouse is a SQLite file relative to the current folder).
mkdir "$WORK/demo"
DEMO="$EXAMPLES/conf/customers.yaml"
demo() {
  (cd "$WORK/demo" && "$DWLOAD" run "$DEMO") >"$WORK/stdout" 2>"$WORK/stderr"
  RC=$?
  LAST=$(tail -n 1 "$WORK/stdout")
  ERR=$(cat "$WORK/stderr")
}
demo
is "$RC|$(field status)" "0|ok" "the installed demo job runs (day 1)"
[ "$RC" = 0 ] || echo "# $ERR"
DAY1=$(($(wc -l <"$EXAMPLES/conf/customers_day1.csv") - 1))
is "$(field inserted)" "$DAY1" "day 1 inserts one version per customer of the feed"
DWLOAD_FEED=customers_day2.csv demo
is "$RC|$(field status)" "0|ok" "the installed demo job runs (day 2)"
IDS=$(tail -q -n +2 "$EXAMPLES/conf/customers_day1.csv" "$EXAMPLES/conf/customers_day2.csv" | cut -d, -f1 | sort -u | wc -l)
is "$(sql 'SELECT count(*) FROM customer_dim WHERE is_current = 1' "$WORK/demo/warehouse.db")" "$IDS" \
  "the demo's dimension has one current version per customer"

# ---- an out-of-tree plugin against the installed dwload-dev ---------------------
is "$(pkg-config --modversion dwload-plugin)" "$VERSION" "pkg-config finds the installed dwload-plugin"
is "$(pkg-config --variable=plugindir dwload-plugin)" "$PLUGINDIR" "its plugindir is where the package put the plugins"
mkdir "$WORK/oot"
cp "$EXAMPLES/plugin/seq.c" "$WORK/oot/seq.c"
# shellcheck disable=SC2046  # the flags are words
${CC:-cc} -std=c11 -Wall -Wextra -Werror -shared -fPIC $(pkg-config --cflags dwload-plugin) \
  -o "$WORK/oot/seq.so" "$WORK/oot/seq.c" >"$WORK/cc.log" 2>&1
is "$?" 0 "the installed example plugin builds with pkg-config --cflags dwload-plugin"
[ "$T_FAILED" -eq 0 ] || sed 's/^/# /' "$WORK/cc.log"
J=$(job numbers <<JOB
version: 1
job: numbers
source:
  plugin: seq
  count: 3
target:
  connection: "$WH_CONN"
  table: numbers
load:
  mode: append
  lmd: updated_at
JOB
)
dw --plugin-path "$WORK/oot" run "$J"
is "$RC|$(field inserted)" "0|3" "the installed dwload loads the out-of-tree plugin and runs its job"
[ "$RC" = 0 ] || echo "# $ERR"

# ---- the installed bash completion ------------------------------------------------
# bash-completion loads it on demand, by the command's name.
if [ -f /usr/share/bash-completion/bash_completion ]; then
  out=$(bash -c '. /usr/share/bash-completion/bash_completion; _completion_loader dwload; complete -p dwload' 2>&1)
  is "$out" "complete -F _dwload dwload" "bash-completion loads the installed completion for dwload"
else
  skip_tests 1 "bash-completion is not installed"
fi
out=$(bash -c '. /usr/share/bash-completion/completions/dwload; COMP_WORDS=(dwload ch); COMP_CWORD=1; _dwload; echo "${COMPREPLY[*]}"')
is "$out" "check" "the installed completion completes the installed dwload's commands"

# ---- remove -------------------------------------------------------------------------
remove_packages
is "$?" 0 "dpkg -r removes both packages"
[ ! -e /usr/bin/dwload ] && [ ! -e "$PLUGINDIR" ] && [ ! -e /usr/include/dwload/plugin.h ]
is "$?" 0 "... and their files"

done_testing
