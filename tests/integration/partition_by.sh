# target.partition_by: the table dwload creates is hash-partitioned on key
# columns (PostgreSQL PARTITION BY HASH and its PARTITION OF tables,
# MariaDB PARTITION BY KEY), its primary key holds the partition columns,
# and scd2 and upsert jobs leave it holding what the same job leaves in an
# unpartitioned table; SQLite, without partitioning, is refused at the key,
# as are partition columns outside load.key and counts out of range.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# region bounded: MariaDB takes no unbounded TEXT in a primary key
TYPES='  types: {id: integer, region: "varchar(8)", amount: integer, lmd: timestamp}'

# parts TABLE: how many partitions the catalog lists for the table
parts() {
  case $WAREHOUSE in
  postgresql) sql "select count(*) from pg_inherits where inhparent = '$1'::regclass" ;;
  mariadb) sql "select count(*) from information_schema.PARTITIONS where TABLE_SCHEMA = database() and TABLE_NAME = '$1' and PARTITION_NAME is not null" ;;
  esac
}

# used TABLE N: how many of its N partitions hold rows
used() {
  case $WAREHOUSE in
  postgresql) sql "select count(distinct tableoid) from $1" ;;
  mariadb)
    _u=0
    for _p in $(seq 0 $(($2 - 1))); do
      [ "$(sql "select count(*) from $1 partition (p$_p)")" = 0 ] || _u=$((_u + 1))
    done
    echo $_u ;;
  esac
}

# initial: the first extract, into rows.csv (its path printed)
initial() {
  file rows.csv <<'EOF'
id,region,amount,op,lmd
1,eu,10,,2024-01-01 00:00:00
2,us,20,,2024-01-01 00:00:00
3,ap,30,,2024-01-01 00:00:00
4,sa,40,,2024-01-01 00:00:00
5,af,50,,2024-01-01 00:00:00
6,oc,60,,2024-01-01 00:00:00
7,eu,70,,2024-01-01 00:00:00
8,us,80,,2024-01-01 00:00:00
EOF
}
csv=$(initial)
# delta: the next extract: an update, two deletes, a new key
delta() {
  file rows.csv >/dev/null <<'EOF'
id,region,amount,op,lmd
1,eu,11,,2024-01-02 00:00:00
3,ap,30,D,2024-01-02 00:00:00
9,na,90,,2024-01-02 00:00:00
6,oc,61,,2024-01-02 00:00:00
8,us,80,D,2024-01-02 00:00:00
EOF
}

# Spec refusals, on every warehouse, before any connection.
bad() {
  j=$(mkjob "$1" "$csv" bad "$TYPES" <<EOF
$2
load:
  mode: ${3:-scd2}
  key: [id, region]
  lmd: lmd
EOF
)
  dw check "$j"
  is "$RC" 2 "$1: exit 2"
  like "$ERR" "$j:$4: target.$5" "$1: the key named at file:line:col"
}
# target.partition_by is line 10 of these files, partitions line 11
bad notkey '  partition_by: [amount]' scd2 10:3 "partition_by: column 'amount' is not in load.key"
bad zero '  partition_by: [region]
  partitions: 0' scd2 11:3 "partitions: expected 1 to 1024, found 0"
bad many '  partition_by: [region]
  partitions: 1025' scd2 11:3 "partitions: expected 1 to 1024, found 1025"
bad append '  partition_by: [region]' append 10:3 "partition_by: needs load.mode scd2 or upsert"
bad alone '  partitions: 4' scd2 10:3 "partitions: needs target.partition_by"

# job NAME TABLE MODE PARTITION_LINES
pj() {
  mkjob "$1" "$csv" "$2" "$TYPES" <<EOF
$4
load:
  mode: $3
  key: [id, region]
  lmd: lmd
  deletes: {column: op, values: [D]}
EOF
}

if is_warehouse sqlite; then
  j=$(pj sq sq scd2 '  partition_by: [region]')
  dw run "$j"
  is "$RC" 2 "sqlite: exit 2"
  like "$ERR" "$j:10:3: target.partition_by: SQLite has no partitioned tables" "sqlite: refused at the key"
  is "$(table_exists sq)" 0 "sqlite: no table made"
  done_testing
fi

if is_warehouse mariadb; then
  j=$(mkjob longtext "$csv" longtext '  types: {id: integer, amount: integer, lmd: timestamp}' <<'EOF'
  partition_by: [region]
load:
  mode: upsert
  key: [id, region]
EOF
)
  dw run "$j"
  is "$RC" 2 "mariadb: text without a length: exit 2"
  like "$ERR" "$j:10:3: target.partition_by: column 'region' is text without a length" "mariadb: refused at the key"
  is "$(table_exists longtext)" 0 "mariadb: no table made"
fi

for mode in scd2 upsert; do
  initial >/dev/null
  p=$(pj "p$mode" "p$mode" $mode '  partition_by: [region]
  partitions: 4')
  u=$(pj "u$mode" "u$mode" $mode '')
  dw plan --sql "$p"
  is "$RC" 0 "$mode: plan --sql: exit 0"
  if is_warehouse postgresql; then
    like "$OUT" ') PARTITION BY HASH ("region");' "$mode: plan: the partitioned table"
    like "$OUT" "CREATE TABLE \"p${mode}_p3\" PARTITION OF \"p$mode\" FOR VALUES WITH (MODULUS 4, REMAINDER 3);" \
      "$mode: plan: its partitions"
  else
    like "$OUT" ') PARTITION BY KEY (`region`) PARTITIONS 4;' "$mode: plan: the partitioned table"
  fi
  run_ok "$p" "$mode: partitioned initial load"
  run_ok "$u" "$mode: unpartitioned initial load"
  is "$(parts "p$mode")" 4 "$mode: the catalog lists 4 partitions"
  is "$(parts "u$mode")" 0 "$mode: the other table has none"
  if is_warehouse postgresql; then
    is "$(sql "select count(*) from pg_partitioned_table where partrelid = 'p$mode'::regclass")" 1 \
      "$mode: pg_partitioned_table lists it"
  fi
  n=$(used "p$mode" 4)
  [ "$n" -gt 1 ] && pass "$mode: rows in $n partitions" || fail "$mode: rows in $n partitions"
  is "$(tdump "p$mode")" "$(tdump "u$mode")" "$mode: initial load: tables equal"
  delta
  run_ok "$p" "$mode: partitioned delta with deletes"
  run_ok "$u" "$mode: unpartitioned delta with deletes"
  like "$(counts)" "deleted=2" "$mode: deletes applied"
  is "$(tdump "p$mode")" "$(tdump "u$mode")" "$mode: after the delta: tables equal"
  run_ok "$p" "$mode: rerun on the existing table"
  like "$ERR" "target.partition_by applies only to a table dwload creates" "$mode: existing table: logged, left"
done
if is_warehouse postgresql; then
  like "$(sql "select pg_get_constraintdef(oid) from pg_constraint where conrelid = 'pscd2'::regclass and contype = 'p'")" \
    "PRIMARY KEY (dim_id, region)" "scd2: the primary key holds the partition column"
else
  is "$(sql "select group_concat(column_name order by seq_in_index) from information_schema.STATISTICS where table_schema = database() and table_name = 'pscd2' and index_name = 'PRIMARY'")" \
    "dim_id,region" "scd2: the primary key holds the partition column"
fi
done_testing
