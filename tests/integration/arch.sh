#!/bin/sh
# The source tree keeps its architecture (issue 15, HACKING.md):
# - no code outside src/warehouse/ asks which warehouse it is: the DBMS
#   names (and is_dbms, strcasestr on a DBMS name) appear only in the
#   dialect files and the rest of src/warehouse/; everything else asks the
#   dialect's capabilities and builders.  Comments may name a warehouse to
#   explain why; code and strings may not (a message names the warehouse
#   through the dialect's dbms_prefix).
# - every source file stays within 800 lines and opens with a comment
#   saying what it owns.
. "$TOP_SRCDIR/tests/integration/lib.sh"

cd "$TOP_SRCDIR" || exit 1
CC=${CC:-cc}
files=$(find src plugins include -name '*.[ch]' | sort)

# Code and strings without comments (the compiler's own comment removal:
# no macro is expanded, no header read).
names='sqlite|postgres|mariadb|mysql|psql|is_dbms|strcasestr|update_style'
: >"$WORK/branches"
for f in $files; do
  case $f in src/warehouse/*) continue ;; esac
  "$CC" -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null | grep -inE "$names" | sed "s#^#$f: #" >>"$WORK/branches"
done
is "$(cat "$WORK/branches")" "" "no code outside src/warehouse/ names a warehouse"
is "$(wc -l <"$WORK/branches")" 0 "warehouse branches outside src/warehouse/"

# The check sees what it should: a name in code is found, in a comment not.
printf 'int f(const char *n) { return strcmp(n, "PostgreSQL"); } /* SQLite */\n' >"$WORK/probe.c"
is "$("$CC" -fpreprocessed -dD -E -P -x c "$WORK/probe.c" 2>/dev/null | grep -icE "$names")" 1 \
  "the check finds a name in code and skips it in a comment"

: >"$WORK/long"
: >"$WORK/untold"
for f in $files; do
  n=$(wc -l <"$f")
  [ "$n" -le 800 ] || echo "$f: $n lines" >>"$WORK/long"
  head -c 2 "$f" | grep -q '^/\*' || echo "$f" >>"$WORK/untold"
done
is "$(cat "$WORK/long")" "" "every source file has at most 800 lines"
is "$(cat "$WORK/untold")" "" "every source file opens with a comment saying what it owns"

done_testing
