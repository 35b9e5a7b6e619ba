# Deletes in scd2 through the real binary: by absence from a full extract
# (expire and tombstone styles), by an op column, revivals, and the counts
# the job state keeps.
. "$TOP_SRCDIR/tests/integration/lib.sh"

# UTC wall clock in the canonical form dwload writes
now() {
  date -u '+%Y-%m-%d %H:%M:%S'
}

# timed_run JOB MSG: run_ok, with T0/T1 the clock just before and after
timed_run() {
  T0=$(now)
  run_ok "$1" "$2"
  T1=$(now)
}

# plus1s TS: the time one second after TS
plus1s() {
  python3 -c '
import datetime, sys
t = datetime.datetime.strptime(sys.argv[1][:19], "%Y-%m-%d %H:%M:%S") + datetime.timedelta(seconds=1)
print(t.strftime("%Y-%m-%d %H:%M:%S") + sys.argv[1][19:])' "$1"
}

# ---- deletes: absent, expire style ----------------------------------------
csv=$(file full.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
3,Cy,2024-01-01 00:00:00
EOF
)
j=$(mkjob absent "$csv" d_abs <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: absent
EOF
)
run_ok "$j" "absent: first full extract"
# The next full extract: 1 and 2 unchanged (not past the checkpoint), 3 missing.
file full.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
EOF
timed_run "$j" "absent: a key missing"
is "$(counts)" "read=2 skipped=2 inserted=0 expired=0 updated=0 deleted=1 unchanged=0" \
  "absent: the missing key deleted; rows not past the checkpoint still count as present"
is "$(sqln 'select dim_id, id, name, valid_from, is_current, is_deleted from d_abs order by dim_id')" \
"1|1|Ann|2024-01-01 00:00:00|1|0
2|2|Bob|2024-01-01 00:00:00|1|0
3|3|Cy|2024-01-01 00:00:00|0|1" "absent: only the missing key's version is closed and flagged deleted"
vt3=$(sql "select valid_to from d_abs where id = '3'")
ok_in_run "$vt3" "absent: valid_to of the deleted version is the run's time"
dw state "$j"
like "$OUT" "counts:      read 2, skipped 2, inserted 0, expired 0, updated 0, deleted 1, unchanged 0, rejected 0" \
  "absent: the job state keeps the deletion count"
is "$(sql "select count(*) from d_abs where id <> '3' and valid_to is not null")" 0 "absent: the others stay open"
before=$(tdump d_abs dim_id)
run_ok "$j" "absent: the same extract again"
is "$(counts)" "read=2 skipped=2 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "absent: rerun deletes nothing again"
is "$(tdump d_abs dim_id)" "$before" "absent: rerun leaves the table as it was"

# Revival: key 3 is back with a change time of its own (in data time,
# before the run that deleted it).
file full.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
3,Cy,2024-03-01 00:00:00
EOF
run_ok "$j" "absent: revival"
is "$(counts)" "read=3 skipped=2 inserted=1 expired=0 updated=0 deleted=0 unchanged=0" "absent: revival counts"
is "$(sqln "select name, is_current, is_deleted, valid_to from d_abs where id = '3' order by dim_id")" \
"Cy|0|1|$vt3
Cy|1|0|<null>" "absent: revival adds a new current version, the deleted one stays closed"
# History must not overlap: the new version starts no earlier than the
# deleted one ended, so asof shows one row per key at any time.
is "$(sql "select count(*) from d_abs a join d_abs b on a.id = b.id and a.dim_id < b.dim_id
           where a.valid_from < coalesce(b.valid_to, '9999-12-31 23:59:59') and b.valid_from < coalesce(a.valid_to, '9999-12-31 23:59:59')")" 0 \
  "absent: the revived version does not overlap the deleted one"
dw asof "$j" --at "2025-01-01"
is "$(printf '%s\n' "$OUT" | grep -c '^[0-9]*,3,')" 1 "absent: asof between the revival's lmd and the deletion shows key 3 once"

# ---- deletes: absent, tombstone style --------------------------------------
csv=$(file tfull.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
EOF
)
j=$(mkjob tomb "$csv" d_tomb <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: absent
  delete_style: tombstone
EOF
)
run_ok "$j" "tombstone: first run"
file tfull.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
EOF
timed_run "$j" "tombstone: key 2 missing"
is "$(counts)" "read=1 skipped=1 inserted=1 expired=0 updated=0 deleted=1 unchanged=0" \
  "tombstone: one key deleted, the tombstone counted as inserted"
is "$(sqln "select dim_id, name, is_current, is_deleted, valid_to is null from d_tomb where id = '2' order by dim_id")" \
"2|Bob|0|0|0
3|Bob|1|1|1" "tombstone: the closed version keeps deleted=0; the tombstone is current, deleted, open"
tvt=$(sql "select valid_to from d_tomb where dim_id = 2")
tvf=$(sql "select valid_from from d_tomb where dim_id = 3")
ok_in_run "$tvt" "tombstone: the old version closes at the run's time"
is "$tvf" "$tvt" "tombstone: the tombstone starts where the old version ends"
before=$(tdump d_tomb dim_id)
run_ok "$j" "tombstone: rerun"
is "$(counts)" "read=1 skipped=1 inserted=0 expired=0 updated=0 deleted=0 unchanged=0" "tombstone: a tombstoned key is not deleted again"
is "$(tdump d_tomb dim_id)" "$before" "tombstone: rerun writes nothing"
dw asof "$j" --at "$(plus1s "$tvt")"
is "$OUT" "dim_id,id,name,lmd,valid_from,valid_to
1,1,Ann,2024-01-01 00:00:00,2024-01-01 00:00:00," "tombstone: asof after the deletion leaves out the tombstone"
file tfull.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bobby,2024-02-01 00:00:00
EOF
run_ok "$j" "tombstone: revival"
is "$(counts)" "read=2 skipped=1 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" \
  "tombstone: revival closes the tombstone (expired) and inserts a version"
# The revival's lmd lies before the deletion (data time vs the run's clock):
# it starts when the tombstone did, so the history keeps no gap and no overlap.
is "$(sqln "select dim_id, name,
                   case when valid_from = '$tvf' then 1 when valid_from <> '$tvf' then 0 end,
                   case when valid_to = '$tvf' then 1 when valid_to <> '$tvf' then 0 end,
                   case when valid_to is null then 1 else 0 end, is_current, is_deleted
            from d_tomb where id = '2' and dim_id > 2 order by dim_id")" \
"3|Bob|1|1|0|0|1
4|Bobby|1|<null>|1|1|0" "tombstone: the tombstone is closed (still deleted), the revived version is current from the deletion on"

# The same revival with hash surrogate keys (sha256 of key and valid_from):
# the revived version must still get a key of its own.
csv=$(file thash.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bob,2024-01-01 00:00:00
EOF
)
j=$(mkjob tombhash "$csv" d_tombhash <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: absent
  delete_style: tombstone
dimension:
  surrogate_key: hk
  surrogate_strategy: hash
EOF
)
run_ok "$j" "tombstone + hash: first run"
file thash.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
EOF
run_ok "$j" "tombstone + hash: key 2 missing"
file thash.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bobby,2024-02-01 00:00:00
EOF
run_ok "$j" "tombstone + hash: revival"
is "$(sqln "select name, is_current, is_deleted from d_tombhash where id = '2' order by valid_from, is_deleted desc")" \
"Bob|0|0
Bob|0|1
Bobby|1|0" "tombstone + hash: the revival is written"
is "$(sql 'select count(*) - count(distinct hk) from d_tombhash')" 0 "tombstone + hash: every version has its own key"

# plan reports the deletion a run would make, and writes nothing.
file tfull.csv >/dev/null <<'EOF'
id,name,lmd
2,Bobby,2024-02-01 00:00:00
EOF
before=$(wh_dump)
dw plan "$WORK/tomb.yaml"
is "$RC" 0 "tombstone: plan of a deletion: exit 0"
is "$(counts)" "read=1 skipped=1 inserted=1 expired=0 updated=0 deleted=1 unchanged=0" "tombstone: plan counts the deletion"
is "$(wh_dump)" "$before" "tombstone: plan writes nothing"
dw plan --sql "$WORK/tomb.yaml"
# (the memory engine stages the closes and applies them in one UPDATE;
# pushdown stages the absent keys,
# and the tombstones take the values of the versions they follow)
if [ "${DWL_ENGINE:-}" = pushdown ]; then
  close_sql='"valid_to" = s.dwl_vt, '
  like "$OUT" 'FROM dwl_pd_ab' "tombstone: plan --sql closes the absent keys staged"
  tomb_sql='"valid_from", "valid_to", "is_current", "is_deleted") SELECT ? + s.dwl_n, d."id", d."name", d."lmd", s.dwl_at, d."valid_to", '
elif is_warehouse sqlite; then
  close_sql='UPDATE "d_tomb" AS d SET "valid_to" = s."dwl_valid_to", "is_deleted" = s."dwl_deleted", "is_current" = 0 FROM dwl_stage_expire AS s WHERE d."id" = s."id" AND d."valid_from" = s."dwl_valid_from" AND d."is_current" = 1;'
elif is_warehouse postgresql; then
  close_sql='UPDATE "d_tomb" AS d SET "valid_to" = s."dwl_valid_to", "is_deleted" = s."dwl_deleted", "is_current" = FALSE FROM dwl_stage_expire AS s WHERE d."id" = s."id" AND d."valid_from" = s."dwl_valid_from" AND d."is_current" = TRUE;'
else
  close_sql='UPDATE "d_tomb" AS d JOIN dwl_stage_expire AS s ON d."id" = s."id" AND d."valid_from" = s."dwl_valid_from" AND d."is_current" = 1 SET d."valid_to" = s."dwl_valid_to", d."is_deleted" = s."dwl_deleted", d."is_current" = 0;'
fi
like "$OUT" "$(sqltext "$close_sql")" "tombstone: plan --sql shows the closing UPDATE"
if [ "${DWL_ENGINE:-}" = pushdown ]; then
  like "$OUT" "$(sqltext "$tomb_sql")" "tombstone: plan --sql shows the tombstone's values"
else
  like "$OUT" "'1', 'Ann', '2024-01-01 00:00:00'" "tombstone: plan --sql shows the tombstone's values"
  pass "tombstone: (pushdown only)"
fi
# (the tombstone job's state is checked at the end; restore its feed)
file tfull.csv >/dev/null <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
2,Bobby,2024-02-01 00:00:00
EOF

# Tombstones from an op column: deterministic times.
csv=$(file top.csv <<'EOF'
id,name,op,lmd
1,Ann,I,2024-01-01 00:00:00
1,Ann,D,2024-02-01 00:00:00
EOF
)
j=$(mkjob tombop "$csv" d_tombop <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D]}
  delete_style: tombstone
EOF
)
run_ok "$j" "tombstone by op: insert and delete"
is "$(counts)" "read=2 skipped=0 inserted=2 expired=0 updated=0 deleted=1 unchanged=0" "tombstone by op: counts"
is "$(sqln 'select dim_id, name, op, valid_from, valid_to, is_current, is_deleted from d_tombop order by dim_id')" \
"1|Ann|I|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|Ann|D|2024-02-01 00:00:00|<null>|1|1" "tombstone by op: version closed at the delete's lmd, tombstone from then"
dw asof "$j" --at "2024-02-15"
is "$OUT" "dim_id,id,name,op,lmd,valid_from,valid_to" "tombstone by op: asof after the delete has no row"
file top.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,I,2024-03-01 00:00:00
EOF
run_ok "$j" "tombstone by op: revival"
is "$(counts)" "read=1 skipped=0 inserted=1 expired=1 updated=0 deleted=0 unchanged=0" "tombstone by op: revival counts"
is "$(sqln 'select dim_id, op, valid_from, valid_to, is_current, is_deleted from d_tombop order by dim_id')" \
"1|I|2024-01-01 00:00:00|2024-02-01 00:00:00|0|0
2|D|2024-02-01 00:00:00|2024-03-01 00:00:00|0|1
3|I|2024-03-01 00:00:00|<null>|1|0" "tombstone by op: the tombstone closed at the revival"
dw asof "$j" --at "2024-02-15"
is "$OUT" "dim_id,id,name,op,lmd,valid_from,valid_to" "tombstone by op: still nothing between delete and revival"
dw asof "$j" --at "2024-03-01"
is "$OUT" "dim_id,id,name,op,lmd,valid_from,valid_to
3,1,Ann,I,2024-03-01 00:00:00,2024-03-01 00:00:00," "tombstone by op: the revived version from its lmd"

# ---- deletes by an op column, expire style ---------------------------------
csv=$(file op.csv <<'EOF'
id,name,op,lmd
1,Ann,I,2024-01-01 00:00:00
2,Bob,I,2024-01-01 00:00:00
3,Cy,I,2024-01-01 00:00:00
4,Di,I,2024-01-01 00:00:00
EOF
)
j=$(mkjob op "$csv" d_op <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: {column: op, values: [D, X]}
EOF
)
run_ok "$j" "op: first run"
file op.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,D,2024-02-01 00:00:00
2,Bob,X,2024-02-02 00:00:00
3,Cy,U,2024-02-03 00:00:00
9,Zed,D,2024-02-04 00:00:00
4,Di,D,2024-02-05 00:00:00
4,Dina,I,2024-02-06 00:00:00
5,Ed,I,2024-02-07 00:00:00
5,Ed,D,2024-02-08 00:00:00
5,Eddy,I,2024-02-09 00:00:00
EOF
run_ok "$j" "op: deletes, a re-insert, an unknown key"
# 1, 2, 4 and 5 deleted (D and X); 3's op alone changed nothing; 9 is
# unknown (unchanged); 4 re-inserted after its delete; 5 new, deleted and
# re-inserted in the same run.
is "$(counts)" "read=9 skipped=0 inserted=3 expired=0 updated=0 deleted=4 unchanged=2" "op: counts"
is "$(sqln 'select id, name, op, valid_from, valid_to, is_current, is_deleted from d_op order by id, valid_from')" \
"1|Ann|I|2024-01-01 00:00:00|2024-02-01 00:00:00|0|1
2|Bob|I|2024-01-01 00:00:00|2024-02-02 00:00:00|0|1
3|Cy|I|2024-01-01 00:00:00|<null>|1|0
4|Di|I|2024-01-01 00:00:00|2024-02-05 00:00:00|0|1
4|Dina|I|2024-02-06 00:00:00|<null>|1|0
5|Ed|I|2024-02-07 00:00:00|2024-02-08 00:00:00|0|1
5|Eddy|I|2024-02-09 00:00:00|<null>|1|0" \
  "op: deleted as of the delete row's lmd; re-inserts start new versions; unknown key writes nothing"
is "$(sql "select count(*) from d_op where id = '9'")" 0 "op: the delete of an unknown key inserts nothing"
before=$(tdump d_op dim_id)
file op.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,D,2024-03-01 00:00:00
EOF
run_ok "$j" "op: deleting a deleted key"
is "$(counts)" "read=1 skipped=0 inserted=0 expired=0 updated=0 deleted=0 unchanged=1" "op: a deleted key's delete is unchanged"
is "$(tdump d_op dim_id)" "$before" "op: and writes nothing"
file op.csv >/dev/null <<'EOF'
id,name,op,lmd
1,Ann,I,2024-04-01 00:00:00
EOF
run_ok "$j" "op: revival"
is "$(counts)" "read=1 skipped=0 inserted=1 expired=0 updated=0 deleted=0 unchanged=0" "op: revival counts"
is "$(sqln "select name, valid_from, valid_to, is_current, is_deleted from d_op where id = '1' order by valid_from")" \
"Ann|2024-01-01 00:00:00|2024-02-01 00:00:00|0|1
Ann|2024-04-01 00:00:00|<null>|1|0" "op: the deleted key comes back as a new current version"

# ---- tombstones need a deleted column ----------------------------------------
# Without one a tombstone cannot be told from a live version: asof would show
# deleted keys and a revival would compare against the tombstone.  The spec
# must be refused (exit 2) before anything is written.
csv=$(file tnodel.csv <<'EOF'
id,name,lmd
1,Ann,2024-01-01 00:00:00
EOF
)
j=$(mkjob tnodel "$csv" d_tnodel <<'EOF'
load:
  mode: scd2
  key: [id]
  lmd: lmd
  deletes: absent
  delete_style: tombstone
dimension:
  deleted: null
EOF
)
dw run "$j"
is "$RC" 2 "tombstone without a deleted column: refused as an invalid spec (exit 2)"
like "$ERR" "delete_style" "tombstone without a deleted column: the message names delete_style"
is "$(table_exists d_tnodel)" 0 "tombstone without a deleted column: no table created"

# ---- the counts kept in the job state --------------------------------------
dw state "$WORK/op.yaml"
is "$RC" 0 "state: exit 0"
like "$OUT" "checkpoint:  2024-04-01 00:00:00" "state: checkpoint"
like "$OUT" "counts:      read 1, skipped 0, inserted 1, expired 0, updated 0, deleted 0, unchanged 0, rejected 0" \
  "state: the last run's counts"
like "$OUT" "status:      ok" "state: status ok"
dw state "$WORK/tomb.yaml"
like "$OUT" "counts:      read 2, skipped 1, inserted 1, expired 1, updated 0, deleted 0, unchanged 0, rejected 0" \
  "state: the tombstone job's last run"

done_testing
