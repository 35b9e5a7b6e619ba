# Throwaway PostgreSQL and MariaDB servers for the integration tests.
# Sourced (not run) by scripts/test; by hand:
#
#   . tests/servers.sh && servers_start   # then make check, or one test:
#   WAREHOUSE=postgresql DWLOAD=$PWD/src/dwload TOP_SRCDIR=$PWD sh tests/integration/append.sh
#   servers_stop
#
#   servers_start   starts both servers, each in a fresh temp dir, listening
#                   on 127.0.0.1 only on a free port, and exports for the
#                   tests DWL_PG_{HOST,PORT,USER,PASSWORD},
#                   DWL_MARIADB_{HOST,PORT,USER,PASSWORD} and DWL_WAREHOUSES
#                   ("sqlite" plus the servers that started); with
#                   DWL_SPIDER=1, or CI=true (unless DWL_SPIDER=0), also
#                   the Spider servers (spider_start, below).  Returns
#                   non-zero when a server did not start, after printing its
#                   log to stderr, and names it in SERVERS_FAILED
#                   (postgresql, mariadb, spider); the others are still
#                   usable.
#   servers_stop    stops what servers_start started and removes the temp
#                   dirs; safe to call more than once, and when nothing ran.
#   spider_start, spider_stop   the MariaDB Spider head and its two shards
#                   alone (see "MariaDB Spider" below).
#
# It installs nothing (scripts/lib-deps.sh does): PostgreSQL's binaries are
# looked up under /usr/lib/postgresql/*/bin (newest first) or on PATH,
# MariaDB's on PATH.  As root, PostgreSQL runs as the postgres OS user (it
# refuses root) and MariaDB as root (--user=root); as anyone else both run
# as that user.  Both servers are for tests only: no fsync, no binary log,
# and each has a superuser dwload with the password dwload-test-pw.
# MariaDB's InnoDB buffer pool is 64M unless DWL_MARIADB_BUFFER_POOL says
# otherwise (bench/run gives it room for its 1M-row dimensions).
#
# Every wait is a bounded poll of something observable (pg_ctl -w, a
# mariadb-admin ping, a process gone); nothing sleeps in their stead.

DWL_TEST_USER=dwload
DWL_TEST_PASSWORD=dwload-test-pw

_srv_pg_dir=""
_srv_mdb_dir=""
_srv_mdb_pid=""

# _srv_port_free PORT [HOST]: true when nothing listens on HOST:PORT
# (default 127.0.0.1; tried by binding it, as the server will, with
# SO_REUSEADDR)
_srv_port_free() {
  python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind((sys.argv[2], int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1" "${2:-127.0.0.1}" 2>/dev/null
}

# _srv_free_port FROM [HOST]: the first free port from FROM upwards (100
# tried)
_srv_free_port() {
  _p=$1
  while [ "$_p" -lt $(($1 + 100)) ]; do
    if _srv_port_free "$_p" "${2:-127.0.0.1}"; then
      echo "$_p"
      return 0
    fi
    _p=$((_p + 1))
  done
  echo "servers: no free port in $1..$(($1 + 99))" >&2
  return 1
}

# _srv_show_log TITLE FILE...: prints the files to stderr
_srv_show_log() {
  _t=$1
  shift
  for _f in "$@"; do
    [ -f "$_f" ] || continue
    echo "==== $_t: $_f ====" >&2
    tail -n 100 "$_f" >&2
  done
}

# ---- PostgreSQL -------------------------------------------------------------

# _srv_pg_bindir: the directory of initdb and pg_ctl, newest version first
_srv_pg_bindir() {
  for _d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5nr); do
    if [ -x "$_d/initdb" ] && [ -x "$_d/pg_ctl" ]; then
      echo "$_d"
      return 0
    fi
  done
  _d=$(command -v pg_ctl 2>/dev/null) || return 1
  _d=$(dirname "$_d")
  [ -x "$_d/initdb" ] && echo "$_d"
}

# _srv_as_pg CMD...: runs CMD as the postgres OS user when we are root
_srv_as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

_srv_pg_start() {
  _bin=$(_srv_pg_bindir) || {
    echo "servers: PostgreSQL not found (no /usr/lib/postgresql/*/bin/pg_ctl; Debian: postgresql)" >&2
    return 1
  }
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "servers: PostgreSQL refuses to run as root and there is no postgres user" >&2
    return 1
  fi
  _srv_pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/dwl_pg.XXXXXX") || return 1
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$_srv_pg_dir" || return 1
    # The postgres user must reach it: not so under a private TMPDIR.
    if ! runuser -u postgres -- test -w "$_srv_pg_dir"; then
      rm -rf "$_srv_pg_dir"
      _srv_pg_dir=$(mktemp -d /tmp/dwl_pg.XXXXXX) || return 1
      chown postgres: "$_srv_pg_dir" || return 1
    fi
  fi
  _log="$_srv_pg_dir/postgres.log"
  printf '%s\n' "$DWL_TEST_PASSWORD" >"$_srv_pg_dir/pwfile"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$_srv_pg_dir/pwfile"
  # C collation (byte order, as SQLite compares) and UTF-8; password
  # (SCRAM) on TCP, trust on the socket, which only its owner can reach.
  if ! _srv_as_pg "$_bin/initdb" -D "$_srv_pg_dir/data" -U "$DWL_TEST_USER" \
       --pwfile="$_srv_pg_dir/pwfile" --auth-host=scram-sha-256 --auth-local=trust \
       -E UTF8 --no-locale --no-sync >"$_srv_pg_dir/initdb.log" 2>&1 </dev/null; then
    echo "servers: PostgreSQL initdb failed" >&2
    _srv_show_log "PostgreSQL initdb" "$_srv_pg_dir/initdb.log"
    return 1
  fi
  rm -f "$_srv_pg_dir/pwfile"
  _port=54328
  for _try in 1 2 3; do
    _port=$(_srv_free_port $((_port + 1))) || return 1
    # Appended settings win over initdb's.  Speed over safety: the cluster
    # is thrown away after the tests.
    _srv_as_pg sh -c 'cat >>"$1"' sh "$_srv_pg_dir/data/postgresql.conf" <<EOF
# ---- dwload tests (tests/servers.sh) ----
listen_addresses = '127.0.0.1'
port = $_port
unix_socket_directories = '$_srv_pg_dir'
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
timezone = 'UTC'
log_timezone = 'UTC'
EOF
    # pg_ctl puts the postmaster in a session of its own: a Ctrl-C on the
    # terminal does not reach it, servers_stop does.
    if _srv_as_pg "$_bin/pg_ctl" -D "$_srv_pg_dir/data" -l "$_log" -w -t 60 start \
         >"$_srv_pg_dir/pg_ctl.log" 2>&1 </dev/null; then
      DWL_PG_HOST=127.0.0.1
      DWL_PG_PORT=$_port
      DWL_PG_USER=$DWL_TEST_USER
      DWL_PG_PASSWORD=$DWL_TEST_PASSWORD
      export DWL_PG_HOST DWL_PG_PORT DWL_PG_USER DWL_PG_PASSWORD
      echo "servers: PostgreSQL $("$_bin/pg_ctl" --version | sed 's/^[^0-9]*\([0-9.]*\).*/\1/') on 127.0.0.1:$_port ($_srv_pg_dir)"
      return 0
    fi
    # Someone took the port between the check and the start: next one.
    grep -q 'could not bind\|Address already in use' "$_log" 2>/dev/null || break
    _srv_as_pg "$_bin/pg_ctl" -D "$_srv_pg_dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1
  done
  echo "servers: PostgreSQL did not start" >&2
  _srv_show_log "PostgreSQL" "$_srv_pg_dir/pg_ctl.log" "$_log"
  return 1
}

_srv_pg_stop() {
  [ -n "$_srv_pg_dir" ] || return 0
  if [ -f "$_srv_pg_dir/data/postmaster.pid" ]; then
    _bin=$(_srv_pg_bindir)
    if ! _srv_as_pg "$_bin/pg_ctl" -D "$_srv_pg_dir/data" -m fast -w -t 30 stop \
         >/dev/null 2>&1 </dev/null; then
      # Not stopped within 30 s: the postmaster takes its children with it.
      _pid=$(head -n 1 "$_srv_pg_dir/data/postmaster.pid" 2>/dev/null)
      if [ -n "$_pid" ]; then
        kill -KILL "$_pid" 2>/dev/null
        _srv_wait_gone "$_pid" 10
      fi
    fi
  fi
  rm -rf "$_srv_pg_dir"
  _srv_pg_dir=""
  unset DWL_PG_HOST DWL_PG_PORT DWL_PG_USER DWL_PG_PASSWORD
}

# ---- MariaDB ----------------------------------------------------------------

# _srv_wait_gone PID SECONDS: polls until PID is gone (or a zombie); false if
# it is still there after SECONDS
_srv_wait_gone() {
  _i=0
  while [ "$_i" -lt $(($2 * 10)) ]; do
    if ! kill -0 "$1" 2>/dev/null ||
       [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; then
      return 0
    fi
    sleep 0.1
    _i=$((_i + 1))
  done
  return 1
}

# _srv_mdb_root SOCKET [ARGS...]: the mariadb client as root over a
# server's socket (root has no password: an exported MYSQL_PWD must not be
# sent)
_srv_mdb_root() {
  _rs=$1
  shift
  env -u MYSQL_PWD mariadb --no-defaults --protocol=socket --socket="$_rs" -uroot "$@"
}

# _srv_mdb_launch DIR HOST PORT MARIADBD-ARGS...: a mariadbd on a fresh
# datadir in DIR (which exists), listening on HOST (a loopback address) on
# the first free port above PORT, with the dwload user and the extra
# mariadbd arguments; sets _srv_launch_pid and _srv_launch_port.  False, after printing its log, when it did not start
# (nothing of it is left running then).
_srv_mdb_launch() {
  _ldir=$1
  _lhost=$2
  _port=$3
  shift 3
  for _c in mariadbd mariadb-install-db mariadb-admin mariadb; do
    if ! command -v "$_c" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$_c" ]; then
      echo "servers: MariaDB not found ($_c missing; Debian: mariadb-server mariadb-client)" >&2
      return 1
    fi
  done
  _mariadbd=$(command -v mariadbd 2>/dev/null || echo /usr/sbin/mariadbd)
  _asroot=""
  [ "$(id -u)" -ne 0 ] || _asroot=--user=root
  # Root (over the socket only) has no password: the dir is private.
  if ! mariadb-install-db --no-defaults --datadir="$_ldir/data" $_asroot \
       --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
       >"$_ldir/install.log" 2>&1 </dev/null; then
    echo "servers: mariadb-install-db failed" >&2
    _srv_show_log "MariaDB install" "$_ldir/install.log"
    return 1
  fi
  for _try in 1 2 3; do
    _port=$(_srv_free_port $((_port + 1)) "$_lhost") || return 1
    # setsid: a session of its own, so that a Ctrl-C on the terminal does
    # not reach it; servers_stop does.  utf8mb4_bin compares as SQLite and
    # the C-locale PostgreSQL do (byte order, case-sensitive); UTC as both.
    setsid "$_mariadbd" --no-defaults --datadir="$_ldir/data" $_asroot \
      --bind-address="$_lhost" --port="$_port" --socket="$_ldir/mysqld.sock" \
      --pid-file="$_ldir/mysqld.pid" --log-error="$_ldir/error.log" \
      --tmpdir="$_ldir" \
      --skip-log-bin --skip-name-resolve \
      --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-flush-method=nosync \
      --sync-binlog=0 --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
      --default-time-zone=+00:00 "$@" \
      </dev/null >"$_ldir/mariadbd.out" 2>&1 &
    _srv_launch_pid=$!
    # Up to 60 s for it to answer, or to die.
    _i=0
    while [ "$_i" -lt 300 ]; do
      if env -u MYSQL_PWD mariadb-admin --no-defaults --protocol=socket --socket="$_ldir/mysqld.sock" \
           -uroot --connect-timeout=2 ping >/dev/null 2>&1; then
        break
      fi
      kill -0 "$_srv_launch_pid" 2>/dev/null || break
      sleep 0.2
      _i=$((_i + 1))
    done
    if kill -0 "$_srv_launch_pid" 2>/dev/null && [ "$_i" -lt 300 ]; then
      if ! _srv_mdb_root "$_ldir/mysqld.sock" >"$_ldir/users.log" 2>&1 <<EOF
CREATE USER '$DWL_TEST_USER'@'127.0.0.1' IDENTIFIED BY '$DWL_TEST_PASSWORD';
CREATE USER '$DWL_TEST_USER'@'localhost' IDENTIFIED BY '$DWL_TEST_PASSWORD';
GRANT ALL PRIVILEGES ON *.* TO '$DWL_TEST_USER'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$DWL_TEST_USER'@'localhost' WITH GRANT OPTION;
EOF
      then
        echo "servers: MariaDB: creating the user failed" >&2
        _srv_show_log "MariaDB" "$_ldir/users.log" "$_ldir/error.log"
        _srv_mdb_kill "$_srv_launch_pid"
        return 1
      fi
      _srv_launch_port=$_port
      return 0
    fi
    # Not up: stop what may be left of it, and retry on another port only
    # if that was the trouble.
    _srv_mdb_kill "$_srv_launch_pid"
    grep -q 'Address already in use\|Can.t start server: Bind' "$_ldir/error.log" 2>/dev/null || break
    rm -f "$_ldir/error.log"
  done
  echo "servers: MariaDB did not start" >&2
  _srv_show_log "MariaDB" "$_ldir/mariadbd.out" "$_ldir/error.log"
  return 1
}

_srv_mdb_start() {
  _srv_mdb_dir=$(mktemp -d "${TMPDIR:-/tmp}/dwl_mariadb.XXXXXX") || return 1
  _srv_mdb_launch "$_srv_mdb_dir" 127.0.0.1 33068 \
    --innodb-buffer-pool-size="${DWL_MARIADB_BUFFER_POOL:-64M}" || return 1
  _srv_mdb_pid=$_srv_launch_pid
  DWL_MARIADB_HOST=127.0.0.1
  DWL_MARIADB_PORT=$_srv_launch_port
  DWL_MARIADB_USER=$DWL_TEST_USER
  DWL_MARIADB_PASSWORD=$DWL_TEST_PASSWORD
  export DWL_MARIADB_HOST DWL_MARIADB_PORT DWL_MARIADB_USER DWL_MARIADB_PASSWORD
  echo "servers: MariaDB $("$_mariadbd" --version | sed 's/.*Ver \([0-9.]*\).*/\1/') on 127.0.0.1:$DWL_MARIADB_PORT ($_srv_mdb_dir)"
}

# _srv_mdb_kill PID: stops a mariadbd (SIGTERM is a clean shutdown),
# waiting at most 30 s before SIGKILL
_srv_mdb_kill() {
  [ -n "$1" ] || return 0
  if kill -TERM "$1" 2>/dev/null && ! _srv_wait_gone "$1" 30; then
    kill -KILL "$1" 2>/dev/null
    _srv_wait_gone "$1" 10
  fi
  # Reap it when it is our child (it is, when started from this shell).
  wait "$1" 2>/dev/null
}

_srv_mdb_stop() {
  [ -n "$_srv_mdb_dir" ] || return 0
  _srv_mdb_kill "$_srv_mdb_pid"
  _srv_mdb_pid=""
  rm -rf "$_srv_mdb_dir"
  _srv_mdb_dir=""
  unset DWL_MARIADB_HOST DWL_MARIADB_PORT DWL_MARIADB_USER DWL_MARIADB_PASSWORD
}

# ---- MariaDB Spider -----------------------------------------------------------
# A head with the Spider engine (ha_spider; Debian: mariadb-plugin-spider)
# and two shards of plain MariaDB: three small mariadbd (16M buffer pools
# unless DWL_SPIDER_BUFFER_POOL says otherwise: bench/spider.sh; no binary
# log), each in a dir of one temp dir.  The shards listen on
# loopback addresses of their own, 127.0.0.2 and 127.0.0.3: Spider's XA
# (spider_internal_xa) tells the servers of a transaction apart by host,
# not port, and fails two shards on one host with "This xid member already
# exists".  The tests create their SERVERs and Spider tables themselves.
# spider_start exports DWL_SPIDER_HOST and DWL_SPIDER_PORT (the head),
# DWL_SPIDER_SHARD1_HOST, DWL_SPIDER_SHARD1_PORT, DWL_SPIDER_SHARD2_HOST,
# DWL_SPIDER_SHARD2_PORT, DWL_SPIDER_USER and DWL_SPIDER_PASSWORD (the
# same user on all three); false when one did not start (its log printed),
# after stopping the others.  spider_stop stops all three.

_srv_spider_dir=""
_srv_spider_pids=""

spider_start() {
  [ -z "$_srv_spider_dir" ] || return 0
  if [ ! -f /usr/lib/mysql/plugin/ha_spider.so ] &&
     [ ! -f "$(mariadb_config --plugindir 2>/dev/null)/ha_spider.so" ]; then
    echo "servers: the Spider engine is not installed (no ha_spider.so; Debian: mariadb-plugin-spider)" >&2
    return 1
  fi
  _srv_spider_dir=$(mktemp -d "${TMPDIR:-/tmp}/dwl_spider.XXXXXX") || return 1
  _sp_from=33168
  for _n in shard1 shard2 head; do
    mkdir "$_srv_spider_dir/$_n" || { spider_stop; return 1; }
    # Only the head loads the engine (an empty list for the shards).
    case $_n in
      shard1) _sp_host=127.0.0.2 _sp_plugin=--loose-plugin-load-add= ;;
      shard2) _sp_host=127.0.0.3 _sp_plugin=--loose-plugin-load-add= ;;
      head) _sp_host=127.0.0.1 _sp_plugin=--plugin-load-add=ha_spider ;;
    esac
    if ! _srv_mdb_launch "$_srv_spider_dir/$_n" "$_sp_host" "$_sp_from" \
         --innodb-buffer-pool-size="${DWL_SPIDER_BUFFER_POOL:-16M}" \
         "$_sp_plugin"; then
      echo "servers: Spider $_n did not start" >&2
      spider_stop
      return 1
    fi
    _srv_spider_pids="$_srv_spider_pids $_srv_launch_pid"
    _sp_from=$_srv_launch_port
    case $_n in
      shard1) DWL_SPIDER_SHARD1_HOST=$_sp_host DWL_SPIDER_SHARD1_PORT=$_srv_launch_port ;;
      shard2) DWL_SPIDER_SHARD2_HOST=$_sp_host DWL_SPIDER_SHARD2_PORT=$_srv_launch_port ;;
      head) DWL_SPIDER_HOST=$_sp_host DWL_SPIDER_PORT=$_srv_launch_port ;;
    esac
  done
  # The plugin loads at startup: its engine must be there.
  if [ "$(_srv_mdb_root "$_srv_spider_dir/head/mysqld.sock" -N -e \
          "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'SPIDER'" 2>&1)" != YES ]; then
    echo "servers: the Spider head has no SPIDER engine" >&2
    _srv_show_log "Spider head" "$_srv_spider_dir/head/error.log"
    spider_stop
    return 1
  fi
  DWL_SPIDER_USER=$DWL_TEST_USER
  DWL_SPIDER_PASSWORD=$DWL_TEST_PASSWORD
  export DWL_SPIDER_HOST DWL_SPIDER_PORT DWL_SPIDER_SHARD1_HOST DWL_SPIDER_SHARD1_PORT \
    DWL_SPIDER_SHARD2_HOST DWL_SPIDER_SHARD2_PORT DWL_SPIDER_USER DWL_SPIDER_PASSWORD
  echo "servers: MariaDB Spider head on $DWL_SPIDER_HOST:$DWL_SPIDER_PORT, shards on" \
    "$DWL_SPIDER_SHARD1_HOST:$DWL_SPIDER_SHARD1_PORT and $DWL_SPIDER_SHARD2_HOST:$DWL_SPIDER_SHARD2_PORT" \
    "($_srv_spider_dir)"
}

spider_stop() {
  [ -n "$_srv_spider_dir" ] || return 0
  for _p in $_srv_spider_pids; do
    _srv_mdb_kill "$_p"
  done
  _srv_spider_pids=""
  # A server a test restarted (spider.sh kills a shard at the commit) has
  # a pid of its own: its pid file says which.
  for _f in "$_srv_spider_dir"/*/mysqld.pid; do
    [ ! -f "$_f" ] || _srv_mdb_kill "$(cat "$_f")"
  done
  rm -rf "$_srv_spider_dir"
  _srv_spider_dir=""
  unset DWL_SPIDER_HOST DWL_SPIDER_PORT DWL_SPIDER_SHARD1_HOST DWL_SPIDER_SHARD1_PORT \
    DWL_SPIDER_SHARD2_HOST DWL_SPIDER_SHARD2_PORT DWL_SPIDER_USER DWL_SPIDER_PASSWORD
}

# ---- both ---------------------------------------------------------------------

# servers_start: see the top; SERVERS_FAILED names the servers that did not
# start ("postgresql mariadb", say), empty when both did
servers_start() {
  SERVERS_FAILED=""
  DWL_WAREHOUSES=sqlite
  if [ -n "$_srv_pg_dir" ] || _srv_pg_start; then
    DWL_WAREHOUSES="$DWL_WAREHOUSES postgresql"
  else
    SERVERS_FAILED=postgresql
    _srv_pg_stop
  fi
  if [ -n "$_srv_mdb_dir" ] || _srv_mdb_start; then
    DWL_WAREHOUSES="$DWL_WAREHOUSES mariadb"
  else
    SERVERS_FAILED="${SERVERS_FAILED:+$SERVERS_FAILED }mariadb"
    _srv_mdb_stop
  fi
  # The Spider servers are three more mariadbd: with DWL_SPIDER=1, and in
  # CI (CI=true) unless DWL_SPIDER=0; tests/integration/spider.sh needs them.
  if [ "${DWL_SPIDER:-}" = 1 ] || { [ "${CI:-}" = true ] && [ "${DWL_SPIDER:-}" != 0 ]; }; then
    spider_start || SERVERS_FAILED="${SERVERS_FAILED:+$SERVERS_FAILED }spider"
  fi
  export DWL_WAREHOUSES
  [ -z "$SERVERS_FAILED" ]
}

servers_stop() {
  _srv_pg_stop
  _srv_mdb_stop
  spider_stop
  DWL_WAREHOUSES=sqlite
}
