# Partial updates (load.ignore_null_updates, AUTO CDC's term) through the
# real binary: a NULL in a delivered row's column means "unchanged": the
# key's previous row in the batch, else its current row, gives the value.
# upsert and scd2, every column or those listed; an all-NULL-but-key row
# is a no-op; deletes and new keys are not filled.  make check runs it
# with DWL_ENGINE=pushdown too, which takes both modes (pushdown_fill.c;
# pushdown_parity.sh compares both engines).
. "$TOP_SRCDIR/tests/integration/lib.sh"

first() {
  printf '%s\n' "id,name,city,op,ts" "1,Ann,Rome,U,2024-01-01 00:00:00" "2,Bob,Oslo,U,2024-01-01 00:00:00" \
    "4,Dan,Kyiv,U,2024-01-01 00:00:00" >"$WORK/p.csv"
}
# The second delivery: key 1 twice (a NULL name, then a NULL city: the
# second takes Paris from the first), key 2 all NULL, key 3 new with a
# NULL name, key 4 deleted (its NULLs stay NULLs).
second() {
  printf '%s\n' "id,name,city,op,ts" "1,,Paris,U,2024-01-02 00:00:00" "2,,,U,2024-01-02 00:00:00" \
    "3,,Lima,U,2024-01-02 00:00:00" "1,Anna,,U,2024-01-03 00:00:00" "4,,,D,2024-01-02 00:00:00" >"$WORK/p.csv"
}
first
csv="$WORK/p.csv"
# pjob NAME TABLE MODE IGNORE [MORE]: the job
pjob() {
  mkjob "$1" "$csv" "$2" <<EOF
columns:
  exclude: [op, ts]
load:
  mode: $3
  key: [id]
  lmd: ts
  deletes: {column: op, values: [D]}
  ignore_null_updates: $4
${5:-}
EOF
}

# ---- upsert, every column ----------------------------------------------------------
j=$(pjob pu t_pu upsert true)
run_ok "$j" "upsert: first run"
[ -z "${DWL_ENGINE:-}" ] || is "$(field engine)" "$DWL_ENGINE" "upsert: the engine DWL_ENGINE names took the job"
second
dw run "$j"
is "$RC|$(counts)" "0|read=5 skipped=0 inserted=1 expired=0 updated=1 deleted=1 unchanged=2" \
  "upsert: key 1 updated, key 2's all-NULL row unchanged, key 3 inserted, key 4 deleted"
is "$(tdump t_pu 1)" "1|Anna|Paris
2|Bob|Oslo
3|<null>|Lima" "upsert: the whole table: NULLs carried from the stored row and from the batch's previous row"

# ---- upsert, the columns listed --------------------------------------------------
first
j=$(pjob pl t_pl upsert "[city]")
run_ok "$j" "upsert, [city]: first run"
second
dw run "$j"
is "$(tdump t_pl 1)" "1|Anna|Paris
2|<null>|Oslo
3|<null>|Lima" "upsert, [city]: only city carries over; a NULL name is written"

# ---- upsert, the lmd kept in the table: it still advances ----------------------
first
j=$(mkjob pk "$csv" t_pk <<'EOF'
columns:
  exclude: [op]
load:
  mode: upsert
  key: [id]
  lmd: ts
  deletes: {column: op, values: [D]}
  ignore_null_updates: true
EOF
)
run_ok "$j" "upsert, lmd in the table: first run"
second
dw run "$j"
is "$(tdump t_pk 1)" "1|Anna|Paris|2024-01-03 00:00:00
2|Bob|Oslo|2024-01-02 00:00:00
3|<null>|Lima|2024-01-02 00:00:00" "upsert, lmd in the table: values carried, the lmd the row's own"

# ---- scd2 -----------------------------------------------------------------------
first
j=$(pjob ps t_ps scd2 true "dimension:
  surrogate_key: null
  current: null
  deleted: null")
run_ok "$j" "scd2: first run"
second
dw run "$j"
is "$RC|$(counts)" "0|read=5 skipped=0 inserted=3 expired=1 updated=0 deleted=1 unchanged=1" \
  "scd2: key 1 two new versions (its current one closed), key 2 no new version, key 3 inserted, key 4 deleted"
is "$(tdump t_ps '1, 4')" "1|Ann|Rome|2024-01-01 00:00:00|2024-01-02 00:00:00
1|Ann|Paris|2024-01-02 00:00:00|2024-01-03 00:00:00
1|Anna|Paris|2024-01-03 00:00:00|<null>
2|Bob|Oslo|2024-01-01 00:00:00|<null>
3|<null>|Lima|2024-01-02 00:00:00|<null>
4|Dan|Kyiv|2024-01-01 00:00:00|2024-01-02 00:00:00" \
  "scd2: the whole table: each new version carries the values a NULL left unchanged"

# ---- refusals -------------------------------------------------------------------------
before=$(tdump t_ps '1, 4')
dw run --backfill-from 2024-01-01 "$j"
is "$RC" 2 "scd2, --backfill-from: refused"
like "$ERR" "--backfill-from replays rows into the history, where load.ignore_null_updates would" \
  "scd2, --backfill-from: the message names the key"
is "$(tdump t_ps '1, 4')" "$before" "scd2, --backfill-from: the table as it was"

done_testing
