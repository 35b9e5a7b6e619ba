#!/bin/sh
# Names: every place a table or column name enters a statement (target
# table, CSV header columns, key, lmd, type 1 and type 2 lists, the deletes
# column, the bookkeeping columns, the key index derived from the table's
# name, the staged keys of keyed lookups and staged updates) gets names
# with quotes of every dialect, semicolons, spaces, unicode, reserved words
# and SQL written to escape a quote.  Each run must work, create exactly
# those names (read back from the catalog), and run none of the injected
# SQL: a canary table stays, with its row.  Names the warehouse cannot hold
# are refused with a message before anything is written.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# q NAME: NAME as a quoted SQL name for the test's own client (all three
# take "..." here, with " doubled)
q() {
  printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"
}

# lit TEXT: TEXT as an SQL string literal
lit() {
  printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"
}

# columns_of TABLE: the table's column names in order, one a line
columns_of() {
  case $WAREHOUSE in
    sqlite) sql "SELECT name FROM pragma_table_info($(lit "$1")) ORDER BY cid" ;;
    postgresql) sql "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()
                     AND table_name = $(lit "$1") ORDER BY ordinal_position" ;;
    mariadb) sql "SELECT column_name FROM information_schema.columns WHERE table_schema = database()
                  AND table_name = $(lit "$1") ORDER BY ordinal_position" ;;
  esac
}

canary_ok() {
  is "$(sql "SELECT note FROM canary")" "still here" "$1: the canary table and its row are still there"
}

sql "CREATE TABLE canary (note VARCHAR(20))" >/dev/null
sql "INSERT INTO canary VALUES ('still here')" >/dev/null

# Injection attempts that close each dialect's quote.
INJ_D='x"); DROP TABLE canary; --'
INJ_B='y`); DROP TABLE canary; --'
INJ_S="z'); DROP TABLE canary; --"
# Reserved words, blanks, punctuation, unicode, printf directives.
KEY='select'
NAME='na"me'
T1='sp ace;'
OP='op`'
LMD='order'
PCT='%s%n%x'
UNI='prénom ünï 名前'
DOT='a.b'

# MariaDB cannot hold a trailing blank or a name of more than 64
# characters; every name here fits all three.
TABLE='dim "x"; `y`; '"'z'"'; DROP TABLE canary; --'
VF='vf"); DROP TABLE canary; --'
VT="vt'"
CUR='cur`x'
DEL='del; DELETE FROM canary'
SK='sk "k"'

hdr() {
  for n in "$KEY" "$NAME" "$T1" "$OP" "$LMD" "$INJ_D" "$INJ_B" "$INJ_S" "$PCT" "$UNI" "$DOT"; do
    printf '"%s",' "$(printf '%s' "$n" | sed 's/"/""/g')"
  done | sed 's/,$//'
  echo
}

F1=$(file day1.csv <<EOF
$(hdr)
1,Ann,a,U,2024-01-01 00:00:00,d1,b1,s1,p1,u1,x1
2,Bob,b,U,2024-01-01 00:00:00,d2,b2,s2,p2,u2,x2
3,Cat,c,U,2024-01-01 00:00:00,d3,b3,s3,p3,u3,x3
EOF
)
# day 2: 1 changes a type 2 column, 2 a type 1 column, 3 is deleted
F2=$(file day2.csv <<EOF
$(hdr)
1,Ann2,a,U,2024-01-02 00:00:00,d1,b1,s1,p1,u1,x1
2,Bob,b2,U,2024-01-02 00:00:00,d2,b2,s2,p2,u2,x2
3,Cat,c,D,2024-01-02 00:00:00,d3,b3,s3,p3,u3,x3
EOF
)

# yq TEXT: TEXT as a YAML double-quoted scalar
yq() {
  printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

evil_job() {
  cat >"$WORK/evil.yaml" <<EOF
version: 1
job: evil
source:
  plugin: csv
  path: $1
target:
  connection: "$WH_CONN"
  table: $(yq "$TABLE")
load:
  mode: scd2
  key: [$(yq "$KEY")]
  lmd: $(yq "$LMD")
  type1: [$(yq "$T1")]
  type2: [$(yq "$NAME"), $(yq "$INJ_D"), $(yq "$UNI")]
  deletes: {column: $(yq "$OP"), values: [D]}
  lookup: ${2:-scan}
dimension:
  surrogate_key: $(yq "$SK")
  valid_from: $(yq "$VF")
  valid_to: $(yq "$VT")
  current: $(yq "$CUR")
  deleted: $(yq "$DEL")
EOF
  echo "$WORK/evil.yaml"
}

J=$(evil_job "$F1")
dw plan --sql "$J"
is "$RC" 0 "plan --sql with hostile names: exit 0"
canary_ok "plan"
run_ok "$J" "day 1 with hostile names"
canary_ok "day 1"
is "$(wh_tables | grep -c -x -F "$TABLE")" 1 "the table has exactly its hostile name"
EXPECT_COLS=$(printf '%s\n' "$SK" "$KEY" "$NAME" "$T1" "$OP" "$LMD" "$INJ_D" "$INJ_B" "$INJ_S" "$PCT" "$UNI" "$DOT" \
  "$VF" "$VT" "$CUR" "$DEL")
is "$(columns_of "$TABLE")" "$EXPECT_COLS" "every column has exactly its name (read back from the catalog)"
is "$(sql "SELECT $(q "$KEY"), $(q "$NAME"), $(q "$PCT"), $(q "$UNI"), $(q "$DOT") FROM $(q "$TABLE") ORDER BY 1")" \
  "1|Ann|p1|u1|x1
2|Bob|p2|u2|x2
3|Cat|p3|u3|x3" "the values went to the right columns"

J=$(evil_job "$F2" keys)
run_ok "$J" "day 2 (type 2 change, type 1 change, delete; keyed lookup through a staged key table)"
canary_ok "day 2"
is "$(sql "SELECT $(q "$KEY"), $(q "$NAME"), $(q "$T1"), $(q "$CUR"), $(q "$DEL") FROM $(q "$TABLE")
           ORDER BY 1, $(q "$SK")")" "1|Ann|a|0|0
1|Ann2|a|1|0
2|Bob|b2|1|0
3|Cat|c|0|1" "history kept: expired, opened, updated in place, deleted"
is "$(field expired)" 1 "one version expired"
is "$(field updated)" 1 "one type 1 update"
is "$(field deleted)" 1 "one deletion"

dw asof "$J" --at '2024-01-01 12:00:00'
is "$RC" 0 "asof on hostile names: exit 0"
like "$OUT" "Bob" "asof prints the rows"
dw state "$J"
is "$RC" 0 "state: exit 0"
canary_ok "asof and state"

# ---- upsert and append on a table named with every quote ------------------
U=$(file up.csv <<EOF
$(hdr)
1,Ann,a,U,2024-01-01 00:00:00,d1,b1,s1,p1,u1,x1
EOF
)
for mode in upsert append replace; do
  T="$mode \"q\" \`b\` 'a'; DROP TABLE canary"
  cat >"$WORK/$mode.yaml" <<EOF
version: 1
job: evil-$mode
source:
  plugin: csv
  path: $U
target:
  connection: "$WH_CONN"
  table: $(yq "$T")
load:
  mode: $mode
  lmd: $(yq "$LMD")
$([ "$mode" = upsert ] && printf '  key: [%s, %s]\n' "$(yq "$KEY")" "$(yq "$INJ_S")")
EOF
  run_ok "$WORK/$mode.yaml" "$mode on hostile names"
  run_ok "$WORK/$mode.yaml" "$mode on hostile names, again"
  is "$(sql "SELECT count(*) FROM $(q "$T")")" 1 "$mode: one row"
  canary_ok "$mode"
done

# ---- a table name at the limit: the key index's name (TABLE_dwl_key) is
# derived to fit (cut, with a hash), and the table's name is kept whole ----
L60="t$(printf 'x%.0s' $(seq 1 59))"
printf 'id,v,lmd\n1,a,2024-01-01 00:00:00\n' >"$WORK/l60.csv"
J=$(mkjob l60 "$WORK/l60.csv" "$L60" <<'EOF'
load:
  mode: scd2
  key: id
  lmd: lmd
EOF
)
run_ok "$J" "scd2 on a 60-character table name (its index name would be 68)"
is "$(table_exists "$L60")" 1 "the table has its whole name"

# ---- source columns named as the stages' own columns: the stages' get
# other names (a type 1 column dwl_valid_from was a stage column twice) ----
file stagecols.csv >/dev/null <<'EOF'
id,dwl_valid_from,dwl_valid_to,dwl_deleted,lmd
1,a,x,n,2024-01-01 00:00:00
2,b,y,n,2024-01-01 00:00:00
EOF
sj=$(mkjob stagecols "$WORK/stagecols.csv" stagecols <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  type1: [dwl_valid_from, dwl_deleted]
EOF
)
dw run "$sj"
is "$RC" 0 "columns named dwl_valid_from, dwl_valid_to, dwl_deleted: first run exit 0"
file stagecols.csv >/dev/null <<'EOF'
id,dwl_valid_from,dwl_valid_to,dwl_deleted,lmd
1,a2,x,m,2024-02-01 00:00:00
2,b,y2,n,2024-02-01 00:00:00
EOF
dw run "$sj"
is "$RC" 0 "a type 1 change and a type 2 change in them: exit 0"
is "$(sql "SELECT id, dwl_valid_from, dwl_valid_to, dwl_deleted FROM stagecols ORDER BY id, lmd")" "1|a2|x|m
2|b|y|n
2|b|y2|n" "key 1 overwritten in place, key 2 with a new version"

# ---- names the warehouse cannot hold: refused before anything is written --
refused() {
  # refused WHAT TABLE COLUMN FRAGMENT
  printf '"id","%s",lmd\n1,a,2024-01-01 00:00:00\n' "$(printf '%s' "$3" | sed 's/"/""/g')" >"$WORK/long.csv"
  cat >"$WORK/long.yaml" <<EOF
version: 1
job: long
source:
  plugin: csv
  path: $WORK/long.csv
target:
  connection: "$WH_CONN"
  table: $(yq "$2")
load:
  mode: append
  lmd: lmd
EOF
  BEFORE=$(wh_tables)
  dw run "$WORK/long.yaml"
  is "$RC" 2 "$1: refused with exit 2"
  like "$ERR" "$4" "$1: the message says why"
  is "$(wh_tables)" "$BEFORE" "$1: no table created"
}
L64=$(printf 'c%.0s' $(seq 1 64))
L129=$(printf 'c%.0s' $(seq 1 129))
case $WAREHOUSE in
  postgresql)
    # PostgreSQL would cut a longer name to 63 bytes without a word
    refused "a 64-byte column name" t_long "$L64" "longer than PostgreSQL's 63 bytes"
    refused "a 64-byte table name" "$L64" ok "longer than PostgreSQL's 63 bytes"
    refused "a 22-character, 66-byte unicode name" t_long "$(printf '名%.0s' $(seq 1 22))" "longer than PostgreSQL's 63 bytes"
    ;;
  mariadb)
    refused "a 65-character column name" t_long "c$L64" "longer than MariaDB's 64 characters"
    refused "a name ending in a blank" t_long "trail " "ends with a blank"
    refused "a character outside the BMP" t_long "emoji😀" "outside the Basic Multilingual Plane"
    ;;
  sqlite)
    refused "a 129-byte column name" t_long "$L129" "identifier longer than 128 bytes"
    ;;
esac
canary_ok "refusals"

done_testing
