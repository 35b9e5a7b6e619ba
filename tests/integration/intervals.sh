# No version ends before it starts, under every close rule (issue 14):
# changes and delete rows less than one close step after a version's start
# (day_before with two changes on one day, second_before with sub-second
# lmds), in one batch and across runs, expire style and tombstones.  The
# memory engine replaces such a version (or closes it at its valid_from);
# pushdown hands such keys to it (pushdown_take_late: with load.late:
# repair, the default, and with ignore and reject, compared with the
# memory engine in the last section, with DWL_ENGINE=pushdown).  Whole
# tables are checked:
# valid_from <= valid_to everywhere, at most one version per key at every
# instant that matters by `dwload asof`, and reruns change nothing.
. "$TOP_SRCDIR/tests/integration/lib.sh"

PD=0
if [ "${DWL_ENGINE:-}" = pushdown ]; then PD=1; fi

# feed NAME ROW...: NAME.csv (id,name,op,lmd) holding the rows; prints its
# path
feed() {
  _f=$1
  shift
  printf 'id,name,op,lmd\n' >"$WORK/$_f.csv"
  printf '%s\n' "$@" >>"$WORK/$_f.csv"
  echo "$WORK/$_f.csv"
}

# ivjob NAME CSV TABLE CLOSE STYLE: an scd2 job on key id with delete rows
# (op = D), a sequence surrogate key, the close rule and delete style given
ivjob() {
  printf 'load:\n  mode: scd2\n  key: id\n  lmd: lmd\n  deletes: {column: op, values: [D]}
  delete_style: %s\ndimension:\n  surrogate_key: sk\n  close: %s\n' "$5" "$4" | mkjob "$1" "$2" "$3"
}

# negative TABLE: versions whose valid_to is before their valid_from
negative() {
  sql "select count(*) from $1 where valid_to is not null and valid_to < valid_from"
}

# overlapping JOB INSTANTS: the instants (comma-separated) at which
# `dwload asof` shows a key twice (none: empty)
overlapping() {
  _ifs=$IFS
  IFS=,
  set -- "$1" $2
  IFS=$_ifs
  _j=$1
  shift
  for _at in "$@"; do
    dw asof "$_j" --at "$_at"
    [ "$RC" = 0 ] || { echo "asof $_at: exit $RC"; continue; }
    if [ -n "$(printf '%s\n' "$OUT" | tail -n +2 | cut -d, -f1 | sort | uniq -d)" ]; then
      echo "$_at"
    fi
  done
}

# holds JOB TABLE MSG INSTANTS: no negative interval, no key twice at any
# of the instants, and a rerun changes nothing
holds() {
  is "$(negative "$2")" 0 "$3: no version ends before it starts"
  is "$(overlapping "$1" "$4")" "" "$3: at most one version per key at each instant"
  _before=$(tdump "$2")
  dw run "$1"
  is "$RC" 0 "$3: rerun: exit 0"
  is "$(tdump "$2")" "$_before" "$3: rerun changes nothing"
}

# versions TABLE ID: name|current|deleted of the key's versions in order
versions() {
  sql "select name, is_current, is_deleted from $1 where id = '$2' order by valid_from, is_deleted"
}

D1='2024-03-01'
DAYS="$D1 00:00:00,$D1 09:00:00,$D1 12:00:00,$D1 17:00:00,$D1 23:59:59,2024-03-02 08:00:00,2024-03-02 09:00:00,2024-03-02 10:00:00,2024-03-03 12:00:00"
SECS="$D1 08:00:00.2,$D1 08:00:00.5,$D1 08:00:00.7,$D1 08:00:00.9,$D1 08:00:01.1,$D1 08:00:01.2,$D1 08:00:01.5,$D1 08:00:02.2,$D1 08:00:03"

# ---- day_before: two changes of one key on one day, one batch --------------
for style in expire tombstone; do
  t=iv_day_$style
  csv=$(feed day_$style "1,Ann,,$D1 09:00:00" "1,Anna,,$D1 17:00:00" "2,Bob,,$D1 09:00:00" \
    "2,Bo,,2024-03-02 10:00:00")
  j=$(ivjob day_$style "$csv" $t day_before $style)
  run_ok "$j" "day_before $style in batch"
  [ $PD = 0 ] || is "$(field engine)" pushdown "day_before $style in batch: pushdown took the run"
  is "$(versions $t 1)" "Anna|1|0" "day_before $style in batch: the 17:00 change replaces the 09:00 version"
  is "$(sql "select count(*) from $t where id = '1' and valid_from = '$D1 09:00:00'")" 1 \
    "day_before $style in batch: the version keeps the first start"
  is "$(versions $t 2)" "Bob|0|0
Bo|1|0" "day_before $style in batch: a change a day later closes as before"
  is "$(counts)" "read=4 skipped=0 inserted=3 expired=0 updated=0 deleted=0 unchanged=1" \
    "day_before $style in batch: the replaced row counts as unchanged"
  holds "$j" $t "day_before $style in batch" "$DAYS"
done

# ---- day_before across runs: a stored current version replaced in place -----
t=iv_dayrun
csv=$(feed dayrun "1,Ann,,$D1 09:00:00")
j=$(ivjob dayrun "$csv" $t day_before expire)
run_ok "$j" "day_before across runs: first run"
sk=$(sql "select sk from $t where id = '1'")
feed dayrun "1,Ann,,$D1 09:00:00" "1,Anna,,$D1 17:00:00" >/dev/null
run_ok "$j" "day_before across runs: a change the same day"
is "$(counts)" "read=2 skipped=1 inserted=0 expired=0 updated=1 deleted=0 unchanged=0" \
  "day_before across runs: the stored version counts as updated"
is "$(sql "select name, sk, is_current from $t where id = '1'")" "Anna|$sk|1" \
  "day_before across runs: one version, its surrogate key kept, its values replaced"
holds "$j" $t "day_before across runs" "$DAYS"
feed dayrun "1,Ann,,$D1 09:00:00" "1,Anna,,$D1 17:00:00" "1,Annie,,2024-03-02 10:00:00" >/dev/null
run_ok "$j" "day_before across runs: a change the next day"
is "$(versions $t 1)" "Anna|0|0
Annie|1|0" "day_before across runs: a change a day later closes the version"
holds "$j" $t "day_before across runs, next day" "$DAYS"

# ---- second_before: sub-second changes and delete rows, one batch -----------
for style in expire tombstone; do
  t=iv_sec_$style
  csv=$(feed sec_$style \
    "1,Ann,,$D1 08:00:00.2" "1,Anna,,$D1 08:00:00.7" "1,Annie,,$D1 08:00:01.5" \
    "2,Bob,,$D1 08:00:00.2" "2,Bob,D,$D1 08:00:00.7" \
    "3,Cy,,$D1 08:00:00.2" "3,Cy,D,$D1 08:00:00.5" "3,Cyd,,$D1 08:00:00.9")
  j=$(ivjob sec_$style "$csv" $t second_before $style)
  run_ok "$j" "second_before $style in batch"
  is "$(versions $t 1)" "Anna|0|0
Annie|1|0" "second_before $style in batch: the change at .7 replaces the version of .2"
  is "$(sql "select count(*) from $t where id = '2' and valid_to = valid_from")" 1 \
    "second_before $style in batch: a delete within the step closes the version at its start"
  if [ $style = tombstone ]; then
    is "$(versions $t 2)" "Bob|0|0
Bob|1|1" "second_before tombstone in batch: the tombstone follows"
    is "$(versions $t 3)" "Cy|0|0
Cy|0|1
Cyd|1|0" "second_before tombstone in batch: a revival follows the tombstone"
  else
    is "$(versions $t 2)" "Bob|0|1" "second_before expire in batch: the key is deleted"
    is "$(versions $t 3)" "Cy|0|1
Cyd|1|0" "second_before expire in batch: a revival follows the deletion"
  fi
  holds "$j" $t "second_before $style in batch" "$SECS"
done

# ---- second_before across runs: a later run's rows within the step ----------
for style in expire tombstone; do
  t=iv_secrun_$style
  csv=$(feed secrun_$style "1,Ann,,$D1 08:00:00.2" "2,Bob,,$D1 08:00:00.2")
  j=$(ivjob secrun_$style "$csv" $t second_before $style)
  run_ok "$j" "second_before $style across runs: first run"
  feed secrun_$style "1,Ann,,$D1 08:00:00.2" "2,Bob,,$D1 08:00:00.2" \
    "1,Anna,,$D1 08:00:00.7" "2,Bob,D,$D1 08:00:00.7" >/dev/null
  run_ok "$j" "second_before $style across runs: a change and a delete within the step"
  is "$(versions $t 1)" "Anna|1|0" "second_before $style across runs: the stored version is replaced"
  is "$(sql "select count(*) from $t where id = '2' and valid_to = valid_from")" 1 \
    "second_before $style across runs: the delete closes the stored version at its start"
  holds "$j" $t "second_before $style across runs" "$SECS"
done

# ---- late rows: a history rebuilt by the same rule (lookback: memory engine) -
t=iv_late
csv=$(feed late "1,Ann,,$D1 08:00:05")
j=$(printf 'load:\n  mode: scd2\n  key: id\n  lmd: lmd\n  lookback: 1h\ndimension:\n  surrogate_key: sk
  close: second_before\n' | mkjob late "$csv" $t)
run_ok "$j" "late row: first run"
feed late "1,Ann,,$D1 08:00:05" "1,Bea,,$D1 08:00:04.5" "1,Cat,,$D1 08:00:07" >/dev/null
run_ok "$j" "late row within the step of the version after it"
is "$(versions $t 1)" "Ann|0|0
Cat|1|0" "late row: the stored version, within the late row's step, replaces the late row's"
holds "$j" $t "late row" "$D1 08:00:04.5,$D1 08:00:05,$D1 08:00:05.5,$D1 08:00:06.9,$D1 08:00:07"

# ---- at_next: nothing changes (a version may end at any later instant) ------
t=iv_next
csv=$(feed next "1,Ann,,$D1 08:00:00.2" "1,Anna,,$D1 08:00:00.7" "2,Bob,,$D1 08:00:00.2" \
  "2,Bob,D,$D1 08:00:00.5")
j=$(ivjob next "$csv" $t at_next tombstone)
run_ok "$j" "at_next"
is "$(versions $t 1)" "Ann|0|0
Anna|1|0" "at_next: a sub-second change still closes the version"
is "$(versions $t 2)" "Bob|0|0
Bob|1|1" "at_next: a sub-second delete row still closes the version"
holds "$j" $t "at_next" "$SECS"

# ---- pushdown with late: ignore or reject: such keys go to the memory engine
# too, their late rows with them; other keys' late rows stay pushdown's.
# The same feeds go into a pushdown table and a memory one; exit codes,
# counts, reject files and whole tables are compared.  Round 1 (a new
# table): key 1 changes twice on one day.  Round 2: key 1 changes on the
# day its current version started, key 2 has a late row only, key 3 a late
# row and a change within the day, key 4 is deleted (a tombstone).
# Round 3: key 4 has a row at its tombstone's instant.
if [ $PD = 1 ]; then
  for late in ignore reject; do
    for e in pushdown memory; do
      printf 'load:\n  mode: scd2\n  engine: %s\n  key: id\n  lmd: lmd\n  lookback: 30d\n  late: %s\n  max_rejects: 5
  reject_file: %s\n  deletes: {column: op, values: [D]}\n  delete_style: tombstone
dimension:\n  surrogate_key: sk\n  surrogate_strategy: hash\n  close: day_before\n' \
        $e $late "$WORK/ws_${late}_$e.rejects.csv" | mkjob "ws_${late}_$e" "$WORK/ws.csv" "iv_ws_${late}_$e" >/dev/null
    done
    # wround N MSG ROW...: both jobs on the rows; everything compared
    wround() {
      _n=$1 _m=$2
      shift 2
      feed ws "$@" >/dev/null
      for e in pushdown memory; do
        rm -f "$WORK/ws_${late}_$e.rejects.csv"
        dw run "$WORK/ws_${late}_$e.yaml"
        eval "_rc_$e=\$RC _c_$e=\"\$(counts) \$(field late_ignored) \$(field late_rejected) \$(field rejected)\""
        eval "_eng_$e=\$(field engine)"
        [ $e = memory ] || _hand=$(printf '%s\n' "$ERR" | grep -c "go to the memory engine")
      done
      is "$_eng_pushdown|$_hand" "pushdown|1" "$late round $_n, $_m: pushdown took the run and handed keys over"
      is "$_rc_pushdown|$_c_pushdown" "$_rc_memory|$_c_memory" "$late round $_n, $_m: the same exit code and counts"
      is "$(cut -d, -f2- "$WORK/ws_${late}_pushdown.rejects.csv" 2>/dev/null)" \
        "$(cut -d, -f2- "$WORK/ws_${late}_memory.rejects.csv" 2>/dev/null)" "$late round $_n, $_m: the same rejects"
      is "$(tdump "iv_ws_${late}_pushdown")" "$(tdump "iv_ws_${late}_memory")" "$late round $_n, $_m: the same rows"
    }
    wround 1 "two changes on one day" "1,Ann,,$D1 09:00:00" "1,Anna,,$D1 17:00:00" "2,Bob,,$D1 09:00:00" \
      "3,Cy,,$D1 09:00:00" "4,Di,,$D1 09:00:00"
    is "$_rc_pushdown" 0 "$late round 1: exit 0"
    wround 2 "within a day, late rows" "1,Annie,,$D1 20:00:00" "2,Bobby,,2024-02-28 10:00:00" \
      "3,Cyd,,2024-02-27 10:00:00" "3,Cyrus,,$D1 11:00:00" "4,Di,D,2024-03-02 09:00:00"
    like "$_c_pushdown" "$([ $late = ignore ] && echo ' 2 0 0' || echo ' 0 2 2')" \
      "$late round 2: the two late rows $([ $late = ignore ] && echo ignored || echo rejected)"
    wround 3 "a row at a tombstone's instant" "4,Dina,,2024-03-02 09:00:00"
  done
fi

done_testing
