# Shared by scripts/test and scripts/demo (sourced, not run): installs the
# Debian packages dwload needs to build and test, and builds the tree.
#
#   deps_install    installs what is missing (as root), or says what is
#                   missing and exits 1 (as anyone else)
#   dwload_build    autoreconf / configure when needed, then make
#
# Both work from the top of the source tree; DWLOAD_CONFIGURE_FLAGS is
# passed to ./configure when it runs.

# The second line: the warehouses of the integration tests (tests/servers.sh
# starts throwaway PostgreSQL and MariaDB servers, and a MariaDB Spider head
# with two shards), their clients and ODBC drivers.  util-linux (setsid, runuser) is essential on Debian.  clang and
# its runtime (libFuzzer, sanitizers) build the fuzz targets (scripts/fuzz).
# The debhelper line builds and checks the Debian packages
# (tests/integration/deb.sh; debhelper brings dh-autoreconf).
# python3-jsonschema validates the OpenLineage events (lineage.sh); strace
# shows metrics.sh that the metrics file is only renamed into place.
DWLOAD_PACKAGES="build-essential autoconf automake libtool pkg-config unixodbc unixodbc-dev
libsqliteodbc sqlite3 postgresql odbc-postgresql mariadb-server mariadb-client odbc-mariadb mariadb-plugin-spider
libyaml-dev libcurl4-openssl-dev libjansson-dev libxxhash-dev libssl-dev
libcsv-dev check python3 python3-jsonschema strace valgrind mandoc clang-14 libclang-rt-14-dev openssl
debhelper lintian bash-completion"

# deps_missing: prints the packages of DWLOAD_PACKAGES not installed
deps_missing() {
  for p in $DWLOAD_PACKAGES; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
      printf '%s ' "$p"
    fi
  done
}

deps_install() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "scripts: dpkg-query not found: not Debian; install the equivalents of: $DWLOAD_PACKAGES" >&2
    return 0
  fi
  missing=$(deps_missing)
  missing=${missing% }
  if [ -z "$missing" ]; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "scripts: missing Debian packages: $missing" >&2
    echo "scripts: run this as root, or first: sudo apt-get install $missing" >&2
    exit 1
  fi
  echo "scripts: installing $missing"
  # No stdin in CI: nothing may prompt.
  export DEBIAN_FRONTEND=noninteractive
  apt-get update </dev/null || exit 1
  # shellcheck disable=SC2086  # one word per package
  apt-get install -y --no-install-recommends $missing </dev/null || exit 1
  still=$(deps_missing)
  still=${still% }
  if [ -n "$still" ]; then
    echo "scripts: still missing after apt-get install: $still" >&2
    exit 1
  fi
}

dwload_build() {
  if [ ! -f configure ] || [ configure.ac -nt configure ]; then
    autoreconf -fi || exit 1
  fi
  if [ ! -f Makefile ]; then
    if [ "${DWLOAD_SANITIZE:-0}" = 1 ]; then
      # shellcheck disable=SC2086  # the flags are words
      ./configure ${DWLOAD_CONFIGURE_FLAGS:-} \
        CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
        LDFLAGS="-fsanitize=address,undefined" || exit 1
    else
      # shellcheck disable=SC2086  # the flags are words
      ./configure ${DWLOAD_CONFIGURE_FLAGS:-} || exit 1
    fi
  fi
  make -j"$(nproc 2>/dev/null || echo 2)" || exit 1
}
