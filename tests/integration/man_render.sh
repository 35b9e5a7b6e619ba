#!/bin/sh
# The manual pages as a reader sees them: each page rendered by groff
# (-man -Tutf8 -ww) and by mandoc (-T ascii), and in the text every command
# and every option of `dwload COMMAND --help` is its own item of
# dwload(1), every key of the spec's key table (spec/keys.c, as
# tests/unit/test_spec_keys prints it) its own item under its section of
# dwload-job(5), and no line carries markup that was meant for the
# formatter, nor an identifier hyphenated across two lines.  docs.sh
# checks the roff source (lint, names present); a
# missing .TP or .RE passes that and still runs two entries into one
# paragraph, which only the rendered text shows.
. "$TOP_SRCDIR/tests/integration/lib.sh"

MAN=${MAN_RENDER_DIR:-$TOP_SRCDIR/man}
RENDERERS="groff mandoc"
NTESTS=14

if ! is_warehouse sqlite; then
  skip_tests $NTESTS "the manual pages are rendered once, on SQLite"
  done_testing
fi

# render RENDERER PAGE: the page as plain text (no overstrike, tabs
# expanded), 80 columns; the renderer's warnings go to $WORK/PAGE.RENDERER.err
render() {
  case $1 in
    groff) groff -man -Tutf8 -ww -rLL=80n -P-cbou "$MAN/$2" 2>"$WORK/$2.$1.err" ;;
    mandoc) mandoc -T ascii -O width=80 "$MAN/$2" 2>"$WORK/$2.$1.err" | col -bx ;;
  esac
}

# items: the items of rendered text on stdin, one a line as
# "SECTION|SUBSECTION|INDENT|TAG".  An item is a line at some indent I whose text
# starts with a tag and whose description is at a deeper indent B: on the
# next lines, and on the tag's own line after a gap when the tag fits in
# B - I columns (B is then the next line's indent, or I + 7, man's default,
# for a one-line item between blank lines).  A paragraph's line (the next
# line at the same indent) is no item.  SECTION is the last heading at
# column 0, SUBSECTION the last at column 3.
items() {
  awk '
    function indent(s) { match(s, /^ */); return RLENGTH }
    { line[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) {
        s = line[i]
        if (s ~ /^[^ ]/) { sec = s; sub_ = ""; continue }
        if (s ~ /^   [^ ]/) { sub_ = s; sub(/^ +/, "", sub_); continue }
        if (s ~ /^ *$/) continue
        ind = indent(s)
        nxt = (i < NR && line[i + 1] !~ /^ *$/) ? indent(line[i + 1]) : -1
        prev_blank = i == 1 || line[i - 1] ~ /^ *$/ || indent(line[i - 1]) <= 3
        if (nxt > ind) b = nxt
        else if (nxt == -1 && prev_blank) b = ind + 7
        else continue
        tag = substr(s, ind + 1)
        # the description on the tag line: a blank just before column b
        if (length(s) > b && substr(s, b, 1) == " " && substr(s, b + 1, 1) != " ")
          tag = substr(s, ind + 1, b - ind)
        else if (nxt == -1)
          continue
        sub(/ +$/, "", tag)
        print sec "|" sub_ "|" ind "|" tag
      }
    }'
}

# first_words: the names an item tag gives ("-h, --help" -> -h and --help,
# "plugins [--json]" -> plugins, "DWLOAD_BIN, DWLOAD_JOBS_DIR" -> both)
first_words() {
  sed 's/^[^|]*|[^|]*|[^|]*|//' | tr ',' '\n' | sed 's/^ *//; s/[ [].*//' | sort -u
}

# ---- what must be an item -------------------------------------------------------
"$DWLOAD" --help >"$WORK/help.all"
COMMANDS=$(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' "$WORK/help.all" | sort -u)
COMMANDS="$COMMANDS help"
for c in $COMMANDS; do
  [ "$c" = help ] && continue
  "$DWLOAD" "$c" --help >>"$WORK/help.all"
done
# the options a help text defines: the words of its lines that start with "-"
OPTIONS=$(grep '^ *-' "$WORK/help.all" | grep -o -- '\(^\|[ ,]\)--*[a-zA-Z][a-z-]*' | tr -d ' ,' | sort -u)
is "$(echo "$COMMANDS" | wc -w | tr -d ' '):$(echo "$OPTIONS" | grep -c -- '--json')" "9:1" \
  "the --help texts name 9 commands and their options (--json among them)"
# the environment variables the sources and the example DAG read
ENVVARS=$( (grep -ho 'getenv("[A-Za-z_]*")' "$TOP_SRCDIR"/src/*/*.c "$TOP_SRCDIR"/plugins/*/*.c |
  sed 's/getenv("\(.*\)")/\1/'
  sed -n 's/.*os\.environ\.get("\([A-Z_]*\)".*/\1/p' "$TOP_SRCDIR/conf/examples/airflow/dwload_dag.py") | sort -u)
# the key table: "# load.mode  one of  ...  [dwload-job(5): load]"; the keys
# of a nested mapping (load.deletes.*) are described inside their key's item
"$TOP_BUILDDIR/tests/unit/test_spec_keys" 2>/dev/null |
  sed -n 's/^# \([a-z0-9_.]*\) .*\[dwload-job(5): \([^]]*\)\]$/\2|\1/p' | grep -v "^in its key's item|" >"$WORK/keys"
NKEYS=$(wc -l <"$WORK/keys" | tr -d ' ')
[ "$NKEYS" -ge 30 ] && grep -qx 'load|load.type1_scope' "$WORK/keys" &&
  pass "the key table lists the spec's keys ($NKEYS)" || fail "the key table lists the spec's keys ($NKEYS)"

for r in $RENDERERS; do
  if ! command -v "$r" >/dev/null 2>&1; then
    skip_tests 6 "$r is not installed"
    continue
  fi
  for page in dwload.1 dwload-job.5 dwload-plugin.7; do
    render "$r" "$page" >"$WORK/$page.$r.txt"
  done
  is "$(cat "$WORK"/*."$r".err)" "" "$r renders the three pages without a warning"

  # ---- dwload(1): every command and option is an item ----------------------------
  items <"$WORK/dwload.1.$r.txt" >"$WORK/dwload.1.$r.items"
  # a command at the section's tag indent, not inside another's options
  grep '^COMMANDS||7|' "$WORK/dwload.1.$r.items" | first_words >"$WORK/cmd.$r"
  grep '^ENVIRONMENT|' "$WORK/dwload.1.$r.items" | first_words >"$WORK/env.$r"
  first_words <"$WORK/dwload.1.$r.items" >"$WORK/opt.$r"
  missing=""
  for c in $COMMANDS; do grep -qx -- "$c" "$WORK/cmd.$r" || missing="$missing $c"; done
  for o in $OPTIONS; do grep -qx -- "$o" "$WORK/opt.$r" || missing="$missing $o"; done
  is "$missing" "" "$r: dwload(1) has every command (under COMMANDS) and every --help option as an item of its own"
  missing=""
  for v in $ENVVARS; do grep -qx -- "$v" "$WORK/env.$r" || missing="$missing $v"; done
  is "$missing" "" "$r: dwload(1) has every environment variable dwload, its plugins and the Airflow DAG read as an item of ENVIRONMENT"

  # ---- dwload-job(5): every key is an item under its subsection of KEYS ----------
  items <"$WORK/dwload-job.5.$r.txt" | grep '^KEYS|' >"$WORK/job.5.$r.items"
  missing=""
  while IFS='|' read -r ss key; do
    k=${key##*.}
    grep -q "^KEYS|$ss|[0-9]*|$k\( \|\$\)" "$WORK/job.5.$r.items" || missing="$missing $key"
  done <"$WORK/keys"
  is "$missing" "" "$r: dwload-job(5) has every key of the key table as an item under its section of KEYS"

  # ---- no stray markup -------------------------------------------------------------
  # roff that reached the text (a font escape, a request at a line's start)
  # or a line that starts with a comma, a semicolon, a closing parenthesis
  # or "***,": the rest of a sentence whose start went elsewhere (the pages are rendered 80 columns wide, so
  # where lines break is fixed)
  stray=$(for page in dwload.1 dwload-job.5 dwload-plugin.7; do
    awk -v p="$page" '
      /\\f|\\\(|\\\*|^ *\.(TP|PP|IP|RS|RE|SH|SS|B|BR|BI|IR|I|EX|EE|PD)( |$)/ { print p ":" NR ": " $0; next }
      /^ +(\*\*\*,|[,;)] )/ { print p ":" NR ": " $0 }' "$WORK/$page.$r.txt"
  done)
  is "$stray" "" "$r: no rendered line carries roff markup or starts a paragraph mid-sentence"
  # an identifier hyphenated across two lines ("spi-" then
  # "der_internal_xa") is copied wrong: the pages turn hyphenation off
  broken=$(for page in dwload.1 dwload-job.5 dwload-plugin.7; do
    awk -v p="$page" 'prev ~ /[A-Za-z_](‐|-)$/ && $1 ~ /_/ { print p ":" NR ": " prev " / " $1 } { prev = $0 }' \
      "$WORK/$page.$r.txt"
  done)
  is "$broken" "" "$r: no identifier is hyphenated across lines"
done

# ---- the checks can fail ---------------------------------------------------------
# The same checks on a copy of dwload(1) with one .TP taken away (the one
# before "help") and a stray bold line put back at the end of LOGS.
if command -v groff >/dev/null 2>&1; then
  mkdir "$WORK/broken"
  awk '/^\.BR help / && prev == ".TP" { n-- } { lines[n++] = $0; prev = $0 }
       END { for (i = 0; i < n; i++) print lines[i] }' "$MAN/dwload.1" |
    sed '/^\.SH PROGRESS/i .BR *** ,\nin both formats.' >"$WORK/broken/dwload.1"
  MAN="$WORK/broken"
  render groff dwload.1 | items | grep '^COMMANDS||7|' | first_words >"$WORK/cmd.broken"
  grep -qx help "$WORK/cmd.broken" && fail "without its .TP, help is no item" || pass "without its .TP, help is no item"
  like "$(render groff dwload.1 | grep '^ *\*\*\*')" '***, in both' \
    "a stray line at the end of LOGS is found"
  MAN=${MAN_RENDER_DIR:-$TOP_SRCDIR/man}
else
  skip_tests 2 "groff is not installed"
fi

done_testing
