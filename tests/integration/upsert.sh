# Upsert (MERGE: update matched rows, insert the rest) through the real
# binary, on a TPC-DS store_sales slice (seed 004) whose 3-column match key
# holds NULLs: NULL-safe matching, no-op reruns, deletes by op column and
# by absence, and same-lmd conflicts.
. "$TOP_SRCDIR/tests/integration/lib.sh"

TYPES='  types: {ss_sold_date_sk: integer, ss_item_sk: integer, ss_customer_sk: integer, ss_ticket_number: integer, ss_quantity: integer, ss_sales_price: "numeric(7,2)", ss_net_profit: "numeric(7,2)"}'

# ujob NAME CSV TABLE: a csv -> upsert job with the store_sales column
# types; load: on stdin
ujob() {
  mkjob "$1" "$2" "$3" "$TYPES"
}

# dec FIELD...: on SQLite, which keeps numeric(p,s) values as REAL (2.8),
# prints those '|'-separated fields of each row with the two places
# PostgreSQL and MariaDB print for numeric(7,2) (2.80)
dec() {
  if is_warehouse sqlite; then
    awk -F'|' -v f="$*" 'BEGIN { OFS = "|"; n = split(f, fs, " ") }
      { for (i = 1; i <= n; i++) if ($fs[i] != "<null>" && $fs[i] != "") $fs[i] = sprintf("%.2f", $fs[i]); print }'
  else
    cat
  fi
}

SELECT='select ss_item_sk, ss_ticket_number, ss_sold_date_sk, ss_customer_sk, ss_quantity, ss_sales_price, ss_net_profit from'
ORDER="order by $(nulls_first ss_ticket_number ss_item_sk ss_sold_date_sk)"
KEYORDER="$(nulls_first ss_ticket_number ss_item_sk ss_sold_date_sk)"

# Rows of seed 004 (ticket 82355 with the all-NULL row for item 12183,
# ticket 1) plus two made up to put NULLs next to non-NULLs in the key:
# item 12183 of ticket 82355 once with and once without a date, and a row
# whose item and date are both NULL.
csv=$(file sales.csv <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit
2452252,32411,19575,82355,56,3.12,-67.76
2452252,9427,19575,82355,17,24.90,-847.11
,12183,,82355,,22.88,
2452252,12183,19575,82355,5,1.00,2.00
2451813,23993,43006,1,79,2.80,-779.73
,,94588,82356,41,3.31,13.12
EOF
)
j=$(ujob sales "$csv" ss <<'EOF'
load:
  mode: upsert
  key: [ss_item_sk, ss_ticket_number, ss_sold_date_sk]
EOF
)
run_ok "$j" "upsert: first load"
is "$(counts)" "read=6 skipped=0 inserted=6 expired=0 updated=0 deleted=0 unchanged=0" "upsert: every row inserted"
is "$(cols ss)" \
  "ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit" \
  "upsert: the table has the source columns only"
is "$(sqln "$SELECT ss $ORDER" | dec 6 7)" \
"23993|1|2451813|43006|79|2.80|-779.73
9427|82355|2452252|19575|17|24.90|-847.11
12183|82355|<null>|<null>|<null>|22.88|<null>
12183|82355|2452252|19575|5|1.00|2.00
32411|82355|2452252|19575|56|3.12|-67.76
<null>|82356|<null>|94588|41|3.31|13.12" "upsert: the rows, NULLs kept"
before=$(tdump ss "$KEYORDER")
run_ok "$j" "upsert: the same file again"
is "$(counts)" "read=6 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=6" \
  "upsert: rerun matches every row, NULL keys included"
is "$(tdump ss "$KEYORDER")" "$before" "upsert: rerun writes nothing"

file sales.csv >/dev/null <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit
2452252,32411,19575,82355,56,3.12,-67.76
2452252,9427,19575,82355,17,24.90,-847.11
,12183,,82355,,22.88,99.00
2452252,12183,19575,82355,5,1.00,2.00
2451813,23993,43006,1,79,2.80,-779.73
,,94588,82356,42,3.31,13.12
2452179,4529,160943,85336,58,67.74,1447.10
EOF
dw plan --sql "$j"
is "$RC" 0 "upsert: plan --sql: exit 0"
# NULL-safe equality: IS on SQLite, IS NOT DISTINCT FROM on PostgreSQL, <=>
# on MariaDB
case ${WAREHOUSE:-sqlite} in
  postgresql) nseq='IS NOT DISTINCT FROM' ;;
  mariadb) nseq='<=>' ;;
  *) nseq='IS' ;;
esac
if [ "${DWL_ENGINE:-memory}" = pushdown ]; then
  # pushdown binds the values when it stages them; the statement that
  # applies the staged rows joins them on the key, NULL-safely
  like "$OUT" "$(sqltext "d.\"ss_item_sk\" $nseq s.\"ss_item_sk\" AND d.\"ss_ticket_number\" $nseq s.\"ss_ticket_number\" AND d.\"ss_sold_date_sk\" $nseq s.\"ss_sold_date_sk\"")" \
    "upsert: plan --sql: pushdown joins the staged rows on the key NULL-safely"
  unlike "$OUT" "  -- (" "upsert: plan --sql: pushdown prints no per-row parameters"
else
like "$OUT" "$(sqltext "UPDATE \"ss\" SET \"ss_customer_sk\" = ?, \"ss_quantity\" = ?, \"ss_sales_price\" = ?, \"ss_net_profit\" = ? WHERE \"ss_item_sk\" $nseq ? AND \"ss_ticket_number\" $nseq ? AND \"ss_sold_date_sk\" $nseq ?;")" \
  "upsert: plan --sql: the UPDATE matches the key NULL-safely"
like "$OUT" "  -- (NULL, NULL, '22.88', '99.00', '12183', '82355', NULL)" "upsert: plan --sql: a NULL key bound as NULL (numeric(7,2) padded to its scale)"
fi
is "$(tdump ss "$KEYORDER")" "$before" "upsert: plan --sql writes nothing"
run_ok "$j" "upsert: changes"
is "$(counts)" "read=7 skipped=0 inserted=1 expired=0 updated=2 deleted=0 unchanged=4" \
  "upsert: only the changed rows updated, the new one inserted"
is "$(sqln "$SELECT ss $ORDER" | dec 6 7)" \
"23993|1|2451813|43006|79|2.80|-779.73
9427|82355|2452252|19575|17|24.90|-847.11
12183|82355|<null>|<null>|<null>|22.88|99.00
12183|82355|2452252|19575|5|1.00|2.00
32411|82355|2452252|19575|56|3.12|-67.76
<null>|82356|<null>|94588|42|3.31|13.12
4529|85336|2452179|160943|58|67.74|1447.10" \
  "upsert: exactly the NULL-key rows changed; the same item with a date did not"

# ---- same key several times in one run ------------------------------------
csv=$(file dupl.csv <<'EOF'
id,v,lmd
1,a,2024-01-01 00:00:00
1,b,2024-01-03 00:00:00
1,c,2024-01-02 00:00:00
2,x,2024-01-01 00:00:00
2,x,2024-01-01 00:00:00
EOF
)
j=$(cat >"$WORK/dupl.yaml" <<EOF
version: 1
job: dupl
source:
  plugin: csv
  path: $csv
target:
  connection: "$WH_CONN"
  table: dupl
load:
  mode: upsert
  key: [id]
  lmd: lmd
EOF
echo "$WORK/dupl.yaml")
run_ok "$j" "upsert with lmd"
is "$(counts)" "read=5 skipped=0 inserted=2 expired=0 updated=0 deleted=0 unchanged=3" \
  "upsert with lmd: superseded rows and the identical copy unchanged"
is "$(sqln 'select id, v, lmd from dupl order by id')" \
"1|b|2024-01-03 00:00:00
2|x|2024-01-01 00:00:00" "upsert with lmd: the latest row by lmd wins, not the last in the file"
before=$(tdump dupl id)
file dupl.csv >/dev/null <<'EOF'
id,v,lmd
1,d,2024-02-01 00:00:00
3,n,2024-02-01 00:00:00
1,e,2024-02-01 00:00:00
EOF
dw run "$j"
is "$RC" 1 "upsert: conflicting same-lmd rows: exit 1"
like "$ERR" "key (id='1') has two different source rows with the same lmd 2024-02-01 00:00:00 (dupl.csv:2 and dupl.csv:4)" \
  "upsert: conflicting same-lmd rows: key and both rows named"
is "$(tdump dupl id)" "$before" "upsert: conflicting same-lmd rows: nothing written"

# Without an lmd every row of a key has the same (no) time: two different
# rows of one key conflict.
csv=$(file nolmd.csv <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit
,12183,,82355,,22.88,
,12183,,82355,,22.88,1.00
EOF
)
j=$(ujob nolmd "$csv" ss_nolmd <<'EOF'
load:
  mode: upsert
  key: [ss_item_sk, ss_ticket_number, ss_sold_date_sk]
EOF
)
dw run "$j"
is "$RC" 1 "upsert without lmd: two different rows of a NULL key: exit 1"
like "$ERR" "(ss_item_sk='12183', ss_ticket_number='82355', ss_sold_date_sk=NULL)" \
  "upsert without lmd: the NULL key named"
like "$ERR" "nolmd.csv:2 and nolmd.csv:3" "upsert without lmd: both rows named"
no_table ss_nolmd "upsert without lmd: the table was not even created"

# ---- deletes by op column ---------------------------------------------------
csv=$(file opdel.csv <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit,op
2452252,32411,19575,82355,56,3.12,-67.76,I
,12183,,82355,,22.88,,I
2452252,12183,19575,82355,5,1.00,2.00,I
EOF
)
j=$(ujob opdel "$csv" ss_op <<'EOF'
load:
  mode: upsert
  key: [ss_item_sk, ss_ticket_number, ss_sold_date_sk]
  deletes: {column: op, values: [D]}
EOF
)
run_ok "$j" "upsert op: load"
file opdel.csv >/dev/null <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit,op
,12183,,82355,,22.88,,D
2452252,99999,19575,82355,1,1.00,1.00,D
EOF
run_ok "$j" "upsert op: delete rows"
is "$(counts)" "read=2 skipped=0 inserted=0 expired=0 updated=0 deleted=1 unchanged=1" \
  "upsert op: the known key deleted, the unknown one unchanged"
is "$(sqln "select ss_item_sk, ss_ticket_number, ss_sold_date_sk, op from ss_op $ORDER")" \
"12183|82355|2452252|I
32411|82355|2452252|I" "upsert op: exactly the NULL-key row removed"

# ---- deletes: absent --------------------------------------------------------
csv=$(file full.csv <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit
2452252,32411,19575,82355,56,3.12,-67.76
,12183,,82355,,22.88,
2452252,12183,19575,82355,5,1.00,2.00
,,94588,82356,41,3.31,13.12
EOF
)
j=$(ujob full "$csv" ss_full <<'EOF'
load:
  mode: upsert
  key: [ss_item_sk, ss_ticket_number, ss_sold_date_sk]
  deletes: absent
EOF
)
run_ok "$j" "upsert absent: load"
file full.csv >/dev/null <<'EOF'
ss_sold_date_sk,ss_item_sk,ss_customer_sk,ss_ticket_number,ss_quantity,ss_sales_price,ss_net_profit
2452252,32411,19575,82355,56,3.12,-67.76
2452252,12183,19575,82355,5,1.00,2.00
EOF
run_ok "$j" "upsert absent: two keys missing"
is "$(counts)" "read=2 skipped=0 inserted=0 expired=0 updated=0 deleted=2 unchanged=2" "upsert absent: counts"
is "$(sqln "select ss_item_sk, ss_ticket_number, ss_sold_date_sk from ss_full $ORDER")" \
"12183|82355|2452252
32411|82355|2452252" "upsert absent: the missing keys (both with NULLs) removed"
before=$(tdump ss_full "$KEYORDER")
run_ok "$j" "upsert absent: again"
is "$(counts)" "read=2 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=2" "upsert absent: nothing more to delete"
is "$(tdump ss_full "$KEYORDER")" "$before" "upsert absent: rerun writes nothing"

done_testing
