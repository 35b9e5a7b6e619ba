#!/bin/sh
# conf/bash-completion/dwload, in bash: the function called as bash calls
# it (COMP_WORDS, COMP_CWORD) completes the commands, the global options
# and each command's own, the values --log-level and --log-format take,
# and job files; and it reads all of them from the dwload it completes
# (a stand-in dwload with another help gets other completions), so there
# is no copy to drift.  Once, on SQLite: completion needs no warehouse.
. "$TOP_SRCDIR/tests/integration/lib.sh"

skip_unless_warehouse sqlite "completion does not depend on the warehouse (run on SQLite)"
command -v bash >/dev/null 2>&1 || {
  echo "1..0 # SKIP bash is not installed"
  exit 0
}
SCRIPT="$TOP_SRCDIR/conf/bash-completion/dwload"

# completions PROG WORD...: the completions of the last WORD (the one under
# the cursor; "" for a new word), one a line, run in the folder $WORK/jobs
mkdir "$WORK/jobs"
completions() {
  (cd "$WORK/jobs" && bash -c '. "$1" || exit 9
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _dwload
    printf "%s\n" "${COMPREPLY[@]}"' bash "$SCRIPT" "$@")
}
# words PROG WORD...: the completions, sorted, on one line
words() {
  completions "$@" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}
# has LIST WORD: LIST (words') holds WORD
has() {
  case " $1 " in *" $2 "*) return 0 ;; esac
  return 1
}

is "$(bash -c '. "$1" && complete -p dwload' bash "$SCRIPT")" "complete -F _dwload dwload" \
  "sourcing the script registers _dwload for dwload"

# ---- commands -------------------------------------------------------------------
CMDS=$(words "$DWLOAD" "")
has "$CMDS" run && has "$CMDS" check && has "$CMDS" migrate && has "$CMDS" plugins
is "$?" 0 "dwload <TAB>: the commands (run, check, migrate, plugins, ...)"
bad=
for c in $CMDS; do
  "$DWLOAD" help "$c" | head -n 1 | grep -q "^Usage: dwload $c " || bad="$bad $c"
done
is "$bad|$(echo "$CMDS" | wc -w)" "|$(echo "$CMDS" | tr ' ' '\n' | sort -u | wc -l)" \
  "dwload <TAB>: each a command dwload has a help for, once"
is "$(words "$DWLOAD" ch)" "check" "dwload ch<TAB>: check"
is "$(words "$DWLOAD" help pl)" "plan plugins" "dwload help pl<TAB>: the commands"

# ---- options ------------------------------------------------------------------------
G=$(words "$DWLOAD" --)
has "$G" --plugin-path && has "$G" --log-level && has "$G" --quiet && has "$G" --help
is "$?" 0 "dwload --<TAB>: the global options"
has "$G" --empty-exit
is "$?" 1 "dwload --<TAB>: no command's own option"
R=$(words "$DWLOAD" run --)
has "$R" --empty-exit && has "$R" --max-deletes && has "$R" --allow-empty && has "$R" --help
is "$?" 0 "dwload run --<TAB>: run's options"
has "$R" --sql || has "$R" --log-level
is "$?" 1 "dwload run --<TAB>: not plan's --sql, not a global option"
is "$(words "$DWLOAD" run --e)" "--empty-exit" "dwload run --e<TAB>: --empty-exit"
is "$(words "$DWLOAD" --log-level debug plan --s)" "--sql" \
  "dwload --log-level debug plan --s<TAB>: the command found past a global option and its value"
# Every option offered is one the command accepts: with it, dwload does not
# say "bad option" (its argument, where it takes one, is given as 1).
bad=
for c in $CMDS; do
  for o in $(words "$DWLOAD" "$c" --); do
    [ "$o" = --help ] && continue
    "$DWLOAD" "$c" "$o" 1 2>&1 | grep -q "bad option\|unrecognized option" && bad="$bad $c$o"
  done
done
is "$bad" "" "every option offered after a command is one the command accepts"

# ---- option values ----------------------------------------------------------------
LEVELS=$(words "$DWLOAD" --log-level "")
is "$(echo "$LEVELS" | wc -w)" 4 "dwload --log-level <TAB>: four levels"
bad=
for v in $LEVELS; do
  "$DWLOAD" --log-level "$v" --version >/dev/null 2>&1 || bad="$bad level:$v"
done
for v in $(words "$DWLOAD" --log-format ""); do
  "$DWLOAD" --log-format "$v" --version >/dev/null 2>&1 || bad="$bad format:$v"
done
is "$bad" "" "every value offered for --log-level and --log-format is one dwload accepts"
is "$(words "$DWLOAD" --log-format "")" "json text" "dwload --log-format <TAB>: json text"
is "$(words "$DWLOAD" run --empty-exit "")" "" "dwload run --empty-exit <TAB>: nothing (a number)"
mkdir "$WORK/jobs/plugdir"
is "$(words "$DWLOAD" --plugin-path plu)" "plugdir" "dwload --plugin-path <TAB>: directories"
mkdir "$WORK/jobs/my plugins"
is "$(completions "$DWLOAD" --plugin-path my)" "my plugins" "dwload --plugin-path my<TAB>: a directory with a space is one completion"
rmdir "$WORK/jobs/my plugins"

# ---- job files ------------------------------------------------------------------------
: >"$WORK/jobs/orders.yaml"
: >"$WORK/jobs/other.yml"
: >"$WORK/jobs/notes.txt"
is "$(words "$DWLOAD" run "")" "orders.yaml other.yml plugdir" \
  "dwload run <TAB>: the job files and directories, not notes.txt"
is "$(words "$DWLOAD" check or)" "orders.yaml" "dwload check or<TAB>: orders.yaml"
is "$(words "$DWLOAD" check --c)" "--connect" "dwload check --c<TAB>: --connect"
is "$(words "$DWLOAD" migrate "")" "" "dwload migrate <TAB>: no job file (migrate takes none)"

# ---- read from the program, not copied ---------------------------------------------
# A stand-in dwload whose help names another command and option: the
# completion follows it.
cat >"$WORK/fake" <<'FAKE'
#!/bin/sh
if [ "$1" = help ]; then
  echo "Usage: dwload $2 [--frobnicate] JOB.yaml"
else
  printf 'Usage: fake\n\nCommands:\n  frob JOB.yaml   frobs\n  list            lists\n\nGlobal options:\n  --colour WHEN   always or never\n\n'
fi
FAKE
chmod +x "$WORK/fake"
is "$(words "$WORK/fake" "")" "frob list" "the commands come from the program's --help"
is "$(words "$WORK/fake" frob --)" "--frobnicate --help" "a command's options come from its help"
is "$(words "$WORK/fake" --colour "")" "always never" "an option's values come from its help line"
is "$(words "$WORK/fake" frob "")|$(words "$WORK/fake" list "")" "orders.yaml other.yml plugdir|" \
  "job files only for the commands whose synopsis names JOB.yaml"
is "$(words "$WORK/nothing-here" "")" "" "no program: no completion, no error"

done_testing
