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
# - so does every test and script: tests/unit's files, tests/integration/*.sh,
#   tests/*.sh, scripts/* and bench's scripts (not its .md results, which
#   are data); a script's comment comes first or right after its #! line.
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

# opens_told FILE: whether FILE opens with a comment (C's /*, a script's #
# after an optional #! line, a Python file's docstring).
opens_told() {
  case $1 in
    *.[ch]) head -c 2 "$1" | grep -q '^/\*' ;;
    *.py) sed -n '1{/^#!/d;}; p; q' "$1" | grep -qE '^(#|""")' ;;
    *) sed -n '1{/^#!/d;}; p; q' "$1" | grep -q '^#' ;;
  esac
}
printf '#!/bin/sh\nset -u\n# too late\n' >"$WORK/probe_untold.sh"
printf '#!/bin/sh\n# what it owns\nset -u\n' >"$WORK/probe_told.sh"
is "$(opens_told "$WORK/probe_untold.sh" && echo untold; opens_told "$WORK/probe_told.sh" && echo told)" "told" \
  "the check finds a script whose comment comes after code, and takes one after #!"

scripts=$({
  find tests/unit -maxdepth 1 -name '*.[ch]'
  find tests/integration tests -maxdepth 1 -name '*.sh'
  find scripts bench -maxdepth 1 -type f ! -name '*.md'
} | sort)
: >"$WORK/long_scripts"
: >"$WORK/untold_scripts"
for f in $scripts; do
  n=$(wc -l <"$f")
  [ "$n" -le 800 ] || echo "$f: $n lines" >>"$WORK/long_scripts"
  opens_told "$f" || echo "$f" >>"$WORK/untold_scripts"
done
is "$(cat "$WORK/long_scripts")" "" "every test and script has at most 800 lines"
is "$(cat "$WORK/untold_scripts")" "" "every test and script opens with a comment saying what it owns"
like "$scripts" "tests/unit/test_csv.c" "the test and script files are found (tests/unit)"
like "$scripts" "bench/run" "the test and script files are found (bench)"

done_testing
