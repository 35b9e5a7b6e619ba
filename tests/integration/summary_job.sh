#!/bin/sh
# The summary line of a run whose job file is invalid names the job when
# its name was readable (a spec error further down), and says null when it
# was not (no such file, bad YAML, an invalid or missing name); the logs
# name it the same way.
. "$TOP_SRCDIR/tests/integration/lib.sh"

printf 'a,lmd\n1,2024-01-01\n' >"$WORK/f.csv"
JOB=$(mkjob sumjob "$WORK/f.csv" t_sumjob <<'Y'
load:
  mode: bogus
Y
)
dw run "$JOB"
is "$RC|$(field job)|$(field status)" "2|sumjob|failed" "a spec error after the job name: the summary names the job"
like "$ERR" "dwload[sumjob] error:" "a spec error after the job name: the log line names the job"
dw plan "$JOB"
is "$RC|$(field job)" "2|sumjob" "plan: the same"

sed 's/^job: sumjob/job: "bad name!"/' "$JOB" >"$WORK/badname.yaml"
dw run "$WORK/badname.yaml"
is "$RC|$(field job)" "2|null" "an invalid job name is not quoted as the job's"
printf 'version: 1\njob: [x\n' >"$WORK/badyaml.yaml"
dw run "$WORK/badyaml.yaml"
is "$RC|$(field job)" "2|null" "bad YAML: no job name"
sed '/^job:/d' "$JOB" >"$WORK/noname.yaml"
dw run "$WORK/noname.yaml"
is "$RC|$(field job)" "2|null" "no job key: no job name"
dw run "$WORK/missing.yaml"
is "$RC|$(field job)" "2|null" "no such file: no job name"

done_testing
