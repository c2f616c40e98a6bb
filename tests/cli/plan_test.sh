#!/usr/bin/env bash
# End-to-end checks of `ddlsim plan`. Usage: plan_test.sh DDLSIM SCENARIOS [MPIRUN]
# Prints "N passed, M failed" and exits non-zero on any failure.
set -u
ddlsim="$1"
scenarios="$2"
mpirun="${3:-}"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
cd "$work" || exit 1
plan="$scenarios/examples/plan-cloud-allreduce.json"

check "plan ranks every point and recommends one" bash -c \
  "'$ddlsim' plan '$plan' --no-cache >p.txt && grep -q '24 points, ranked' p.txt && grep -q '^# recommendation: the cheapest point that meets every goal' p.txt"
check "plan is byte-identical with 1 and 2 threads" bash -c \
  "'$ddlsim' plan '$plan' --no-cache --threads 1 --json t1.json >/dev/null && '$ddlsim' plan '$plan' --no-cache --threads 2 --json t2.json >/dev/null && cmp t1.json t2.json"
check "a second run takes every point from the cache and prints the same plan" bash -c \
  "'$ddlsim' plan '$plan' --cache c --json c1.json >/dev/null && [ \$(ls c | wc -l) -eq 24 ] && '$ddlsim' plan '$plan' --cache c --json c2.json >/dev/null && cmp c1.json c2.json && cmp c1.json t1.json"
check "--axis adds an axis and only the new points are simulated" bash -c \
  "'$ddlsim' plan '$plan' --cache c --axis /seed=1,2 --json a.json >/dev/null && [ \$(ls c | wc -l) -eq 48 ] && grep -q '\"/seed\"' a.json"
check "--csv writes one row per point" bash -c \
  "'$ddlsim' plan '$plan' --no-cache --csv p.csv >/dev/null && [ \$(wc -l <p.csv) -eq 25 ] && head -1 p.csv | grep -q '^rank,index,/topology/nodes/0/count'"
check "a bad --axis is bad input (exit 2)" bash -c \
  "'$ddlsim' plan '$plan' --axis nodes=3 2>e.txt; [ \$? -eq 2 ] && grep -q 'POINTER=V1,V2' e.txt"
check "a sweep value the scenario cannot take is bad input naming the point" bash -c \
  "'$ddlsim' plan '$plan' --axis /workload/algorithm=rnig 2>e.txt; [ \$? -eq 2 ] && grep -q 'did you mean \"ring\"' e.txt"
if [[ -n "$mpirun" ]]; then
  check "mpirun -np 2 gives the single-process plan" bash -c \
    "'$mpirun' --allow-run-as-root --oversubscribe -np 2 '$ddlsim' plan '$plan' --no-cache --json m.json >m.txt && cmp m.json t1.json && grep -q 'on 2 MPI ranks' m.txt"
else
  echo "skipped: mpirun -np 2 (no mpirun found)"
fi

finish
