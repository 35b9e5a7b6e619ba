#!/bin/sh
# Secrets, continued (secrets.sh has the first part):
#  - a password holding ';', '}' and '{' given as Pwd=${DW_PW}: dwload
#    braces it ({...}, '}' doubled) so the driver gets all of it: a user of
#    the test's own, with that password, logs in (PostgreSQL, MariaDB), as
#    target, as the odbc source's connection and through migrate;
#  - psqlODBC's pqopt={... password=...} (libpq's own keyword), which logs
#    in on PostgreSQL too;
#  - connection errors for the password-carrying keywords of the three
#    drivers (Pwd, Password, PWD in braces, libpq's password and
#    sslpassword inside pqopt, MariaDB's key password, a URI's userinfo);
#  - and core dumps: a run holds passwords, so its core file limit is 0
#    and it is not dumpable, unless DWLOAD_ALLOW_CORE=1.
# Every part of every password is then searched for in standard output
# (text and JSON logs, summaries, check, state, plan) and error, and in
# dwload_state: none may hold any.
. "$TOP_SRCDIR/tests/integration/lib.sh"

rnd() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }
# The password's three parts, each unique, between the characters a
# connection string must brace.
P1="Pa$(rnd)" P2="Pb$(rnd)" P3="Pc$(rnd)"
PW="$P1;$P2}$P3{x"
PLAIN="Pq$(rnd)"   # for pqopt: libpq's conninfo would need quotes for the rest
WRONG="Wr$(rnd);Ws$(rnd)"
USER1="dwl_sec2_$$"
USER2="dwl_sec2q_$$"

case $WAREHOUSE in
  sqlite)
    # The SQLite driver takes no password; the attribute must still be
    # kept out of every message.
    PQ_CONN="Driver=SQLite3;Database=$WH;pqopt={user=u password=$PLAIN}"
    DOWN="Driver=SQLite3;Database=$WORK/no/such/dir/wh.db"
    ;;
  postgresql)
    wh_login_user "$USER1" "$PW"
    wh_login_user "$USER2" "$PLAIN"
    sql "GRANT \"$USER1\" TO \"$USER2\"" >/dev/null  # USER1's dwload_state
    PQ_CONN="Driver=PostgreSQL Unicode;Server=$DWL_PG_HOST;Port=$DWL_PG_PORT;Database=$WH_DB;pqopt={user=$USER2 password=$PLAIN}"
    DOWN="Driver=PostgreSQL Unicode;Server=no-such-host.invalid;Port=$DWL_PG_PORT;Database=$WH_DB"
    ;;
  mariadb)
    wh_login_user "$USER1" "$PW"
    # MariaDB's driver ignores pqopt: the attribute is still masked.
    PQ_CONN="$(wh_user_conn "$USER1" '${DW_PW}');pqopt={user=u password=$PLAIN}"
    DOWN="Driver=MariaDB Unicode;Server=no-such-host.invalid;Port=$DWL_MARIADB_PORT;Database=$WH_DB"
    ;;
esac
DW_PW=$PW
export DW_PW

OUTS="$WORK/outputs"
mkdir -p "$OUTS"
N=0
# probe WANT-RC NAME ARGS...: runs dwload --log-level debug ARGS, keeps its
# output, checks its exit status and that no part of a password is in it
probe() {
  _want=$1 _name=$2
  shift 2
  N=$((N + 1))
  "$DWLOAD" --log-level debug "$@" >"$OUTS/$N.out" 2>"$OUTS/$N.err"
  _rc=$?
  is "$_rc" "$_want" "$_name: exit $_want"
  [ "$_rc" = "$_want" ] || sed 's/^/#   /' "$OUTS/$N.err"
  is "$(cat "$OUTS/$N.out" "$OUTS/$N.err" | grep -c -F -e "$P1" -e "$P2" -e "$P3" -e "$PLAIN" -e "${WRONG%;*}" -e "${WRONG#*;}")" 0 \
    "$_name: no part of a password is in stdout or stderr"
}

FEED=$(file feed.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-02 00:00:00
EOF
)
# sjob NAME CONNECTION TABLE: an scd2 job of FEED
sjob() {
  conn_job "$1" "$2" "$3" "$FEED"
}

# ---- a password with ';', '}' and '{' from ${DW_PW} ------------------------------
J=$(sjob braced "$(wh_user_conn "$USER1" '${DW_PW}')" dim)
probe 0 "run, Pwd=\${DW_PW} holding ; } {" run "$J"
is "$(sql "SELECT count(*) FROM dim")" 2 "the user with that password loaded the rows"
probe 0 "check" check --connect "$J"
probe 0 "state" state "$J"
probe 0 "plan --sql" plan --sql "$J"
probe 0 "run with JSON logs" --log-format json run "$J"
like "$(cat "$OUTS/$N.err")" '=***' "the JSON log shows the connection with the password masked"
J=$(sjob userbraced "$(wh_user_conn "$USER1" '{${DW_PW}}')" dim2)
probe 0 "run, Pwd={\${DW_PW}} (braced by the job)" run "$J"
is "$(sql "SELECT count(*) FROM dim2")" 2 "Pwd={\${DW_PW}}: the rows are loaded"

# The odbc source plugin's connection gets the same treatment.
cat >"$WORK/odbcsrc.yaml" <<EOF
version: 1
job: odbcsrc
source:
  plugin: odbc
  connection: "$(wh_user_conn "$USER1" '${DW_PW}')"
  table: dim
target:
  connection: "$(wh_user_conn "$USER1" '${DW_PW}')"
  table: copy
EOF
probe 0 "the odbc source, Pwd=\${DW_PW}" run "$WORK/odbcsrc.yaml"
is "$(sql "SELECT count(*) FROM copy")" 2 "the odbc source read the rows"

# migrate expands ${VAR} in --from and --to itself.
probe 0 "migrate --from with Pwd=\${DW_PW}" migrate --from "$(wh_user_conn "$USER1" '${DW_PW}')" \
  --to "Driver=SQLite3;Database=$WORK/other.db" --table dim
is "$(sqlite3 -batch -noheader "$WORK/other.db" "SELECT count(*) FROM dim")" 2 "migrate copied the rows"

if ! is_warehouse sqlite; then
  DW_PW=$WRONG
  probe 1 "a wrong password holding ;" run "$(sjob wrong "$(wh_user_conn "$USER1" '${DW_PW}')" dim3)"
  DW_PW=$PW
else
  skip_tests 2 "the SQLite driver takes no password"
fi

# ---- pqopt ------------------------------------------------------------------------
J=$(sjob pqopt "$PQ_CONN" dim4)
probe 0 "run, pqopt={... password=...}" run "$J"
is "$(sql "SELECT count(*) FROM dim4")" 2 "pqopt: the rows are loaded (on PostgreSQL, by libpq's password)"
probe 0 "check, pqopt" check --connect "$J"
probe 0 "state, pqopt" state "$J"
probe 0 "run with JSON logs, pqopt" --log-format json run "$J"

# ---- the keywords, in connection errors ----------------------------------------------
for kw in "Pwd={$P1;$P2}}$P3}" "PASSWORD=$P1" "pwd=$P2" "Password = $P3" "pqopt={user=u password=$P1}" \
          "pqopt={sslpassword=$P2 password='$P3 x'}" "TLSKeyPwd=$P1" "Database=postgresql://u:$P2@h/db" \
          "Token=$P3" "UID=u;PWD={$P1"; do
  probe 1 "cannot connect, $(printf '%s' "$kw" | sed "s/$P1/P1/g; s/$P2/P2/g; s/$P3/P3/g")" \
    check --connect "$(sjob down "$DOWN;$kw" dim5)"
done

# ---- what stays behind -------------------------------------------------------------
STATE=$(sqln "SELECT * FROM dwload_state")
like "$STATE" "braced" "dwload_state has the runs' rows"
is "$(printf '%s\n' "$STATE" | grep -c -F -e "$P1" -e "$P2" -e "$P3" -e "$PLAIN")" 0 "dwload_state holds no part of a password"
if [ -d "$WORK/odbc" ]; then
  is "$(cat "$WORK"/odbc/* 2>/dev/null | grep -c -F -e "$P1" -e "$P2" -e "$P3" -e "$PLAIN")" 0 \
    "psqlODBC's own logs (CommLog) hold no part of a password"
fi
# The search finds what it looks for.
is "$(grep -c -F "$PLAIN" "$WORK/pqopt.yaml")" 1 "the search finds the password in the job file that holds it"

# ---- core dumps --------------------------------------------------------------------
# A run held on a FIFO it reads; its limits and a crash are looked at
# from outside.  core_pattern "core..." (relative) writes into the run's
# folder, where the control run (DWLOAD_ALLOW_CORE=1) must leave one.
FIFO="$WORK/feed.fifo"
mkfifo "$FIFO"
# held_run DIR JOB: starts a held run of a new job JOB in DIR; HELD is its
# pid, once it holds the job's lock (it has read the header, connected and
# begun)
held_run() {
  mkdir -p "$1"
  J=$(sjob "$2" "$WH_CONN" "$2")
  exec 3<>"$FIFO"
  (cd "$1" && ulimit -c unlimited 2>/dev/null; FEED="$FIFO" exec "$DWLOAD" run "$J" >"$1/out" 2>"$1/err" 3>&-) &
  HELD=$!
  printf 'id,name,lmd\n1,Ann,2024-01-01 00:00:00\n' >&3
  wh_wait_running "$2"
}
# core_limit PID: "soft hard" of its core file size
core_limit() {
  awk '/^Max core file size/ { print $5, $6 }' "/proc/$1/limits"
}
PATTERN=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
# In the sanitizer build (scripts/sanitize) ASan catches SIGSEGV and caps
# core files itself: both off here, so what is seen is dwload's own doing.
# A sanitized core holds ASan's mappings, so the control case that must
# write one is left out there.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:disable_coredump=0"
export ASAN_OPTIONS
SANITIZED=0
case $(ldd "$DWLOAD" 2>/dev/null) in *libasan*) SANITIZED=1 ;; esac

held_run "$WORK/c1" held1
HARD=$(core_limit "$HELD" | cut -d' ' -f2)
is "$(core_limit "$HELD")" "0 $HARD" "a run's core file size limit is 0"
# Raised again from outside (as far as the hard limit goes, which needs
# no privilege), only the dumpable flag keeps a core from being written.
if [ "$HARD" != 0 ] && prlimit --pid "$HELD" --core="$HARD:$HARD" 2>/dev/null; then
  is "$(core_limit "$HELD")" "$HARD $HARD" "the run's core limit was raised from outside"
else
  skip_tests 1 "the hard core limit is 0 here, or prlimit cannot raise it"
fi
kill -SEGV "$HELD"
wait "$HELD"
is "$?" 139 "the crashed run died of SIGSEGV"
exec 3>&-
is "$(ls "$WORK/c1" | grep -c '^core')" 0 "the crash wrote no core file (the run is not dumpable)"

case $SANITIZED:$PATTERN:$(sh -c 'ulimit -c unlimited 2>/dev/null; ulimit -c') in
  1:*) skip_tests 3 "a sanitizer build: ASan's core files are not dwload's" ;;
  0:core*:unlimited)
    DWLOAD_ALLOW_CORE=1
    export DWLOAD_ALLOW_CORE
    held_run "$WORK/c2" held2
    is "$(core_limit "$HELD")" "unlimited unlimited" "DWLOAD_ALLOW_CORE=1: the core limit is the inherited one"
    kill -SEGV "$HELD"
    wait "$HELD"
    is "$?" 139 "DWLOAD_ALLOW_CORE=1: the crashed run died of SIGSEGV"
    exec 3>&-
    unset DWLOAD_ALLOW_CORE
    is "$(ls "$WORK/c2" | grep -c '^core')" 1 "DWLOAD_ALLOW_CORE=1: the crash wrote a core file (the check above can fail)"
    rm -f "$WORK"/c2/core*
    ;;
  *) skip_tests 3 "core_pattern \"$PATTERN\" is not a file in the crashed process's folder, or cores are capped" ;;
esac

done_testing
