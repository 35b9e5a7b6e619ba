# The user's seed documents (/work/shared/seeds, see its README) reproduced
# as dwload jobs: each job spec and its feeds live in tests/data/seeds/, and
# each test asserts the exact table the seed shows or implies.
. "$TOP_SRCDIR/tests/integration/lib.sh"

S="$DATA/seeds"
# The seed specs read the warehouse's connection and the feed from the
# environment.
DWL_CONN=$WH_CONN
export DWL_CONN

# feed FILE JOB: runs the job on feed FILE (a name in $S)
feed() {
  FEED=$1 dw run "$S/$2.yaml"
}

# The seeds keep their upper- and mixed-case names (DIM_CUSTOMER, EMPNO,
# ExpiryDate), which PostgreSQL folds to lower case unless quoted, and
# names MariaDB reserves (key).  Queries write such names in double
# quotes; sqlq and sqlnq turn those into backquotes on MariaDB.
# q NAME: NAME quoted as an identifier
q() {
  if is_warehouse mariadb; then printf '`%s`' "$1"; else printf '"%s"' "$1"; fi
}
sqlq() {
  if is_warehouse mariadb; then sql "$(printf '%s' "$1" | tr '"' '`')"; else sql "$1"; fi
}
sqlnq() {
  if is_warehouse mariadb; then sqln "$(printf '%s' "$1" | tr '"' '`')"; else sqln "$1"; fi
}

# coltype TABLE COLUMN: the column's declared type, in lower case
coltype() {
  if is_warehouse sqlite; then
    sql "SELECT type FROM pragma_table_info('$1') WHERE name = '$2'"
  elif is_warehouse mariadb; then
    sql "SELECT data_type FROM information_schema.columns
         WHERE table_schema = database() AND table_name = '$1' AND column_name = '$2'"
  else
    sql "SELECT data_type FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = '$1' AND column_name = '$2'"
  fi | tr 'A-Z' 'a-z'
}

ok_rc() {
  is "$RC" 0 "$1: exit 0"
  if [ "$RC" != 0 ]; then echo "# stderr: $ERR"; fi
}

# ==== seed 000 (1): Kimball DIM_CUSTOMER ====================================
# Two feeds.  The first has E222222 and A048901's first two versions; the
# second, in no particular order, C999666's three rows (one batch), B787555
# and A048901's move to Wellington.  Every lmd of the second feed is past
# the first's checkpoint (2015-03-24).
feed 000_feed_customer_1.csv 000_dim_customer
ok_rc "seed 000 DIM_CUSTOMER: first feed"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=0" "seed 000 DIM_CUSTOMER: first feed counts"
feed 000_feed_customer_2.csv 000_dim_customer
ok_rc "seed 000 DIM_CUSTOMER: second feed"
# C999666's 2016-12-16 row repeats the 2016-12-15 values (Mumbai, 50000):
# it is a no-change row, counted unchanged (see below).
is "$(counts)" "read=5 skipped=0 inserted=4 expired=1 updated=0 deleted=0 unchanged=1" "seed 000 DIM_CUSTOMER: second feed counts"
is "$(cols DIM_CUSTOMER)" \
  "DWH_KEY,CUST_CODE,CUST_NAME,ADDRESS_CITY,SALARY,VALID_DT,VALID_FROM_DT,VALID_TO_DT" \
  "seed 000 DIM_CUSTOMER: the sample's columns (plus the feed's VALID_DT)"
# The seed's sample table, DWH_KEY aside (we number in source order), with
# one difference: the sample keeps C999666 2016-12-15 -> 2016-12-15 and
# 2016-12-16 -> 2099-12-31 as two versions although both hold Mumbai,
# 50000 -- the write-up calls these "dummy entries" its algorithm cannot
# avoid.  dwload collapses consecutive equal versions (semantic 2), so
# C999666 has one version from 2016-12-15 on.
is "$(sqlnq 'select "CUST_CODE", "CUST_NAME", "ADDRESS_CITY", "SALARY", "VALID_FROM_DT", "VALID_TO_DT"
             from "DIM_CUSTOMER" order by "CUST_CODE", "VALID_FROM_DT"')" \
"A048901|John Alexander|Calgary|15000|2014-03-24|2015-03-23
A048901|John Alexander|Calgary|22000|2015-03-24|2017-10-22
A048901|John Alexander|Wellington|47000|2017-10-23|2099-12-31
B787555|Mark de Wit|Johannesburg|49500|2017-10-02|2099-12-31
C999666|Daya Dumar|Mumbai|49000|2016-11-11|2016-12-14
C999666|Daya Dumar|Mumbai|50000|2016-12-15|2099-12-31
E222222|Pete Saunders|Leeds|75000|2013-03-09|2099-12-31" \
  "seed 000 DIM_CUSTOMER: the sample table (the dummy C999666 version collapsed)"
if is_warehouse sqlite; then
  is "$(sql 'select typeof(SALARY), count(*) from DIM_CUSTOMER group by 1')" "integer|7" "seed 000 DIM_CUSTOMER: SALARY stored as integer"
  int_type=integer
else
  int_type=bigint
fi
is "$(coltype DIM_CUSTOMER SALARY)" "$int_type" "seed 000 DIM_CUSTOMER: SALARY an integer column ($int_type)"
is "$(sqlq 'select count(distinct "DWH_KEY"), min("DWH_KEY"), max("DWH_KEY") from "DIM_CUSTOMER"')" "7|1|7" \
  "seed 000 DIM_CUSTOMER: DWH_KEY a max+1 sequence over both feeds"
is "$(sqlq 'select count(*) from "DIM_CUSTOMER" a join "DIM_CUSTOMER" b on a."CUST_CODE" = b."CUST_CODE"
            and a."VALID_FROM_DT" < b."VALID_FROM_DT" and a."DWH_KEY" > b."DWH_KEY"')" 0 \
  "seed 000 DIM_CUSTOMER: within a customer, later versions get larger keys (as 300 < 400 < 402)"
# day_before ranges include their last day: asof on the boundary days.
FEED=000_feed_customer_2.csv dw asof "$S/000_dim_customer.yaml" --at 2016-12-14
like "$OUT" "C999666,Daya Dumar,Mumbai,49000,2016-11-11,2016-11-11,2016-12-14" "seed 000 DIM_CUSTOMER: asof 2016-12-14 is still the 49000 version"
FEED=000_feed_customer_2.csv dw asof "$S/000_dim_customer.yaml" --at 2016-12-15
like "$OUT" "C999666,Daya Dumar,Mumbai,50000,2016-12-15,2016-12-15,2099-12-31" "seed 000 DIM_CUSTOMER: asof 2016-12-15 the 50000 one"
is "$(printf '%s\n' "$OUT" | sed 1d | cut -d, -f2 | tr '\n' ' ')" "A048901 C999666 E222222 " \
  "seed 000 DIM_CUSTOMER: asof 2016-12-15: one row for each customer known then"
before=$(tdump DIM_CUSTOMER "$(q DWH_KEY)")
feed 000_feed_customer_2.csv 000_dim_customer
ok_rc "seed 000 DIM_CUSTOMER: second feed again"
is "$(counts)" "read=5 skipped=5 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "seed 000 DIM_CUSTOMER: a repeated feed is skipped"
is "$(tdump DIM_CUSTOMER "$(q DWH_KEY)")" "$before" "seed 000 DIM_CUSTOMER: and changes nothing"

# ==== seed 000 (3): deduplicateScd2 =========================================
# The seed's own sample has k1 foo and k1 baz both on 2020-02-01 (and k2
# likewise on 2019-02-01): two different states at one instant.  dwload
# refuses to pick one (semantic 3).
feed 000_dedup_conflict.csv 000_dedup
is "$RC" 1 "seed 000 dedup: the seed's conflicting sample: exit 1"
like "$ERR" "key (key='k1') has two different source rows with the same lmd 2020-02-01 (000_dedup_conflict.csv:3 and 000_dedup_conflict.csv:4)" \
  "seed 000 dedup: the key and both source rows named"
no_table dedup_scd2 "seed 000 dedup: nothing written"
# Without the conflict the repeated foo collapses, as deduplicateScd2's
# output shows (valid_to of the last version open, not current_date).
feed 000_dedup.csv 000_dedup
ok_rc "seed 000 dedup: the sample without the conflict"
is "$(counts)" "read=6 skipped=0 inserted=4 expired=0 updated=0 deleted=0 unchanged=2" "seed 000 dedup: the repeated foo rows unchanged"
is "$(sqlnq 'select "key", value_1, valid_from, valid_to from dedup_scd2 order by "key", valid_from')" \
"k1|foo|2020-01-01|2020-02-01
k1|baz|2020-02-01|<null>
k2|foo|2019-01-01|2019-02-01
k2|baz|2019-02-01|<null>" "seed 000 dedup: deduplicateScd2's result table"

# ==== seed 000 (5): customer_source -> customer_dim, lmd checkpoint ==========
feed 000_customer_source_1.csv 000_customer_dim
ok_rc "seed 000 customer_dim: initial load"
FEED=x dw state "$S/000_customer_dim.yaml"
like "$OUT" "checkpoint:  2023-11-22 00:00:00" "seed 000 customer_dim: the last checkpoint is 2023-11-22 00:00:00"
# The source now: Alice touched without a change, Bob moved, Carol still at
# the checkpoint (not past it: lmd > checkpoint, as the seed's WHERE), Dave new.
feed 000_customer_source_2.csv 000_customer_dim
ok_rc "seed 000 customer_dim: the recurring run"
is "$(counts)" "read=4 skipped=1 inserted=2 expired=1 updated=0 deleted=0 unchanged=1" \
  "seed 000 customer_dim: the row with no change is ignored"
is "$(cols customer_dim)" \
  "id,name,address,phone,lmd,effective_start,effective_end,is_current" "seed 000 customer_dim: columns"
is "$(sqln 'select id, name, address, phone, effective_start, effective_end, is_current from customer_dim order by id, effective_start')" \
"1|Alice|1 Main St|555-0101|2023-11-01 09:00:00|<null>|1
2|Bob|2 Oak Ave|555-0102|2023-11-10 14:30:00|2023-11-23 08:00:00|0
2|Bob|22 Elm St|555-0102|2023-11-23 08:00:00|<null>|1
3|Carol|3 Pine Rd|555-0103|2023-11-22 00:00:00|<null>|1
4|Dave|4 Birch Ln|555-0104|2023-11-25 12:00:00|<null>|1" \
  "seed 000 customer_dim: the old version ends at the new lmd, is_current 0; new rows current, open"
FEED=x dw state "$S/000_customer_dim.yaml"
like "$OUT" "checkpoint:  2023-11-25 12:00:00" "seed 000 customer_dim: the checkpoint moved to the greatest lmd"

# ==== seed 001: hybrid type 1 + type 2, dd-MM-yyyy dates =====================
feed 001_employee_1.csv 001_employee
ok_rc "seed 001: the 1550 history"
is "$(cols employee_dim)" \
  "EMPNO,ROW_EFF_DT,STATE_CODE,CITY_NAME,EMP_STATUS,ROW_EXPIRY_DT,IS_CURRENT" \
  "seed 001: the seed's employee_dim columns (ROW_EFF_DT doubles as valid_from)"
# The seed's rows, dates as given: '21-01-2020' (GRAPEVIN) is January 2020,
# before the other two, although the seed's ROW_EXPIRY_DT column chains
# FORTWORTH -> RONOLE -> GRAPEVIN (it likely meant 21-01-2021).  dwload
# orders a key's rows by lmd, so GRAPEVIN is the first version and RONOLE
# the current one.
is "$(sqlnq 'select "EMPNO", "ROW_EFF_DT", "STATE_CODE", "CITY_NAME", "EMP_STATUS", "ROW_EXPIRY_DT", "IS_CURRENT"
             from employee_dim order by "ROW_EFF_DT"')" \
"1550|2020-01-21|TX|GRAPEVIN|ACTIVE|2020-10-19|0
1550|2020-10-19|TA|FORTWORTH|ACTIVE|2020-10-20|0
1550|2020-10-20|TX|RONOLE|ACTIVE|<null>|1" \
  "seed 001: dd-MM-yyyy parsed to dates, versions in date order, NULL expiry on the current one"
feed 001_employee_2.csv 001_employee
ok_rc "seed 001: a status change"
is "$(counts)" "read=1 skipped=0 inserted=0 expired=0 updated=1 deleted=0 unchanged=0" "seed 001: type 1 change updates in place"
is "$(sqlnq 'select "ROW_EFF_DT", "CITY_NAME", "EMP_STATUS", "ROW_EXPIRY_DT", "IS_CURRENT" from employee_dim order by "ROW_EFF_DT"')" \
"2020-01-21|GRAPEVIN|ACTIVE|2020-10-19|0
2020-10-19|FORTWORTH|ACTIVE|2020-10-20|0
2020-10-20|RONOLE|INACTIVE|<null>|1" "seed 001: only the current version's EMP_STATUS overwritten"
feed 001_employee_3.csv 001_employee
ok_rc "seed 001: a move and a new employee"
is "$(counts)" "read=2 skipped=0 inserted=2 expired=1 updated=0 deleted=0 unchanged=0" "seed 001: move counts"
is "$(sqlnq 'select "EMPNO", "ROW_EFF_DT", "STATE_CODE", "CITY_NAME", "EMP_STATUS", "ROW_EXPIRY_DT", "IS_CURRENT"
             from employee_dim order by "EMPNO", "ROW_EFF_DT"')" \
"1550|2020-01-21|TX|GRAPEVIN|ACTIVE|2020-10-19|0
1550|2020-10-19|TA|FORTWORTH|ACTIVE|2020-10-20|0
1550|2020-10-20|TX|RONOLE|INACTIVE|2020-12-15|0
1550|2020-12-15|TX|DALLAS|INACTIVE|<null>|1
1551|2020-12-15|CA|FRESNO|ACTIVE|<null>|1" "seed 001: the final employee_dim"
FEED=x dw asof "$S/001_employee.yaml" --at 2020-10-19
is "$OUT" "EMPNO,ROW_EFF_DT,STATE_CODE,CITY_NAME,EMP_STATUS,ROW_EXPIRY_DT
1550,2020-10-19,TA,FORTWORTH,ACTIVE,2020-10-20" "seed 001: asof 2020-10-19: FORTWORTH (IS_CURRENT left out)"

# ==== seed 002: composite merge key, hash surrogate, soft delete =============
feed 002_source_1.csv 002_silver_scd2
ok_rc "seed 002: initial load"
T0=$(date -u '+%Y-%m-%d %H:%M:%S')
feed 002_source_2.csv 002_silver_scd2
ok_rc "seed 002: the seed's source (BY updated, TX new, HE missing)"
T1=$(date -u '+%Y-%m-%d %H:%M:%S')
is "$(counts)" "read=4 skipped=0 inserted=2 expired=1 updated=0 deleted=1 unchanged=2" "seed 002: counts"
is "$(cols silver_scd2_table)" \
  "surrogate_key,state,Code,Name,value,insert_datetime,ExpiryDate,is_current" "seed 002: the seed's target columns"
is "$(sqlnq "select state, \"Code\", \"Name\", \"value\", insert_datetime, \"ExpiryDate\", is_current
             from silver_scd2_table where state <> 'HE' order by state, insert_datetime")" \
"BY|BY001|Bayern|120|2024-01-01 00:00:00|2024-02-01 00:00:00|0
BY|BY001|Bayern|150|2024-02-01 00:00:00|<null>|1
CA|CA001|California|100|2024-01-01 00:00:00|<null>|1
NY|NY001|New York|200|2024-01-01 00:00:00|<null>|1
TX|TX001|Texas|300|2024-02-01 00:00:00|<null>|1" "seed 002: BY versioned, TX inserted, CA and NY untouched"
he=$(sqlq "select \"ExpiryDate\", is_current from silver_scd2_table where state = 'HE'")
is "${he#*|}" 0 "seed 002: the missing HE row soft-deleted (is_current false)"
ok_in_run "${he%|*}" "seed 002: its ExpiryDate is the run's time"
# The surrogate: sha256 of the merge key and valid_from (dwload's
# documented encoding), not the seed's sha2(concat_ws('|', ..., value)).
is "$(sql 'select count(*), count(distinct surrogate_key), sum(case when length(surrogate_key) = 64 then 1 else 0 end)
           from silver_scd2_table')|$(sql 'select surrogate_key from silver_scd2_table' | grep -c '[^0-9a-f]')" \
  "6|6|6|0" "seed 002: 64-hex surrogate keys, distinct per version"
expect=$(python3 - <<'EOF'
import hashlib, struct
def enc(s):
    b = s.encode()
    return b"\x01" + struct.pack("<Q", len(b)) + b
print(hashlib.sha256(b"".join(enc(v) for v in ("BY", "BY001", "Bayern", "2024-02-01 00:00:00"))).hexdigest())
EOF
)
is "$(sqlq "select surrogate_key from silver_scd2_table where state = 'BY' and \"value\" = 150")" "$expect" \
  "seed 002: the surrogate of BY's new version is sha256 over (state, Code, Name, valid_from)"

# ==== seed 003: Hudi product catalog ========================================
feed 003_catalog_1.csv 003_hudi_product_catalog
ok_rc "seed 003: the catalog before the increment"
feed 003_catalog_2.csv 003_hudi_product_catalog
ok_rc "seed 003: the seed's incremental data"
is "$(counts)" "read=3 skipped=0 inserted=3 expired=2 updated=0 deleted=0 unchanged=0" "seed 003: counts"
is "$(cols hudi_product_catalog)" \
  "seller_id,prod_category,product_name,product_package,discount_percentage,eff_start_ts,eff_end_ts,actv_ind" \
  "seed 003: the seed's columns, no surrogate, no deleted flag"
# The insert-only record is exactly the seed's insDf row.
is "$(sqln "select * from hudi_product_catalog where seller_id = 3345")" \
  "3345|Stationary|Sticky Notes|4|12|2022-07-09 21:30:45|9999-12-31 23:59:59|1" \
  "seed 003: the insert-only record (3345 Stationary) as in the seed's insDf"
is "$(sqln 'select * from hudi_product_catalog order by seller_id, eff_start_ts')" \
"1234|Detergent|Tide 5L|6|20|2021-12-01 08:00:00|2022-01-31 10:00:30|0
1234|Detergent|Tide 5L|6|25|2022-01-31 10:00:30|9999-12-31 23:59:59|1
3345|Stationary|Sticky Notes|4|12|2022-07-09 21:30:45|9999-12-31 23:59:59|1
4565|Gourmet|Dairy Milk Almond|12|40|2022-01-15 09:15:00|2022-06-12 20:30:40|0
4565|Gourmet|Dairy Milk Almond|12|45|2022-06-12 20:30:40|9999-12-31 23:59:59|1" \
  "seed 003: updates close eff_end_ts at the new eff_start_ts, actv_ind 0"
before=$(tdump hudi_product_catalog "seller_id, eff_start_ts")
feed 003_catalog_2.csv 003_hudi_product_catalog
is "$(counts)" "read=3 skipped=3 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "seed 003: the increment again is skipped"
is "$(tdump hudi_product_catalog "seller_id, eff_start_ts")" "$before" "seed 003: and writes nothing"

# ==== seed 004: store_sales: replace, append, upsert, time travel ===========
# The feeds are the seed's own rows: 004_store_sales_v1.csv its first
# INSERT OVERWRITE (version 1), _append.csv the ten rows its INSERT INTO
# added (version 2), _update.csv the UPDATE's rows (ss_net_profit 100.00),
# _update1.csv the table store_sales_delta_update1 it merged from; the
# 004_tt_N.csv the same with a load time.  004_expected_v2.txt is the
# seed's version 2 listing and 004_expected_merge.txt its step-13 result,
# both sorted by the MERGE key.
# The 23 columns as the seed prints them: NULL, decimals with two places
# (numeric(7,2) prints so on PostgreSQL and MariaDB; SQLite keeps such
# values as REAL, 2.8, and the test gives them their two places).
SS_COLS="ss_sold_date_sk ss_sold_time_sk ss_item_sk ss_customer_sk ss_cdemo_sk ss_hdemo_sk ss_addr_sk ss_store_sk ss_promo_sk ss_ticket_number ss_quantity"
SS_DEC="ss_wholesale_cost ss_list_price ss_sales_price ss_ext_discount_amt ss_ext_sales_price ss_ext_wholesale_cost ss_ext_list_price ss_ext_tax ss_coupon_amt ss_net_paid ss_net_paid_inc_tax ss_net_profit"
SS_SEL=$(printf '%s, ' $SS_COLS $SS_DEC)
SS_SEL=${SS_SEL%, }
SS_ORDER=$(nulls_first ss_sold_date_sk ss_item_sk ss_customer_sk)
if is_warehouse sqlite; then DEC2=1; else DEC2=0; fi
ss_table() {
  sqln "select $SS_SEL from $1 order by $SS_ORDER" |
    awk -F'|' -v dec2="$DEC2" 'BEGIN { OFS = "|" }
      { for (i = 1; i <= NF; i++)
          if ($i == "<null>") $i = "NULL"
          else if (i >= 12 && dec2) $i = sprintf("%.2f", $i)
        print }'
}
# asof output (CSV) in the same form: the first 23 fields
ss_asof() {
  printf '%s\n' "$OUT" | python3 -c '
import csv, sys
dec2 = sys.argv[1] == "1"
rows = list(csv.reader(sys.stdin))[1:]
for r in rows:
    out = []
    for i, v in enumerate(r[:23]):
        if v == "":
            out.append("NULL")
        elif i >= 11 and dec2:
            out.append("%.2f" % float(v))
        else:
            out.append(v)
    print("|".join(out))' "$DEC2"
}

feed 004_store_sales_v1.csv 004_replace
ok_rc "seed 004: INSERT OVERWRITE (replace)"
feed 004_store_sales_v1.csv 004_replace
ok_rc "seed 004: INSERT OVERWRITE again"
is "$(counts)" "read=10 skipped=0 inserted=10 expired=0 updated=0 deleted=0 unchanged=0" "seed 004: replace counts"
is "$(ss_table store_sales_delta)" "$(grep '^2451813|' "$S/004_expected_v2.txt")" \
  "seed 004: replace leaves the 10 rows once (version 1 of the seed)"
feed 004_store_sales_append.csv 004_append
ok_rc "seed 004: INSERT INTO (append)"
is "$(counts)" "read=10 skipped=0 inserted=10 expired=0 updated=0 deleted=0 unchanged=0" "seed 004: append counts"
is "$(ss_table store_sales_delta)" "$(cat "$S/004_expected_v2.txt")" "seed 004: version 2 of the seed, the NULL row included"
# UPDATE ... SET ss_net_profit = 100.00 WHERE ss_sold_date_sk = 2452252, as an upsert of those rows
feed 004_store_sales_update.csv 004_upsert
ok_rc "seed 004: the UPDATE as an upsert"
is "$(counts)" "read=8 skipped=0 inserted=0 expired=0 updated=8 deleted=0 unchanged=0" "seed 004: 8 rows updated"
exp_v3=$(awk -F'|' 'BEGIN { OFS = "|" } $1 == "2452252" { $23 = "100.00" } { print }' "$S/004_expected_v2.txt")
is "$(ss_table store_sales_delta)" "$exp_v3" "seed 004: version 3 of the seed (the NULL row untouched)"
feed 004_store_sales_update1.csv 004_upsert
ok_rc "seed 004: MERGE INTO from store_sales_delta_update1"
is "$(counts)" "read=18 skipped=0 inserted=5 expired=0 updated=13 deleted=0 unchanged=0" \
  "seed 004: MERGE: 13 matched rows updated, 5 inserted"
is "$(ss_table store_sales_delta)" "$(cat "$S/004_expected_merge.txt")" "seed 004: the table after MERGE INTO, as step 13 of the seed"
before=$(tdump store_sales_delta "$SS_ORDER")
feed 004_store_sales_update1.csv 004_upsert
is "$(counts)" "read=18 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=18" "seed 004: the MERGE again changes nothing"
is "$(tdump store_sales_delta "$SS_ORDER")" "$before" "seed 004: and writes nothing"

# Time travel: the same four loads into an scd2 history, one load time each.
for n in 1 2 3 4; do
  feed 004_tt_$n.csv 004_timetravel
  ok_rc "seed 004 time travel: load $n"
done
is "$(counts)" "read=18 skipped=0 inserted=18 expired=13 updated=0 deleted=0 unchanged=0" "seed 004 time travel: the MERGE load's counts"
tt() {
  FEED=x dw asof "$S/004_timetravel.yaml" --at "$1"
}
tt "2022-06-01 09:59:59"
is "$OUT" "$(printf '%s,' $SS_COLS $SS_DEC)ts,valid_to" "seed 004 time travel: before the first load, header only"
tt "2022-06-01 10:30:00"
is "$(ss_asof)" "$(grep '^2451813|' "$S/004_expected_v2.txt")" "seed 004 time travel: version 1 (versionAsOf 1)"
tt "2022-06-01 11:30:00"
is "$(ss_asof)" "$(cat "$S/004_expected_v2.txt")" "seed 004 time travel: version 2"
tt "2022-06-01 12:30:00"
is "$(ss_asof)" "$exp_v3" "seed 004 time travel: version 3 (ss_net_profit 100.00)"
tt "2022-06-01 13:00:00"
is "$(ss_asof)" "$(cat "$S/004_expected_merge.txt")" "seed 004 time travel: after the MERGE"

done_testing
