#!/usr/bin/env bash
# Hostile, huge and absurd input end to end (issue "hostile input"): each case exits with the
# status ddlsim promises (2: bad input) and a message naming the place and the fix, without
# reading without end or crashing. Usage: hostile_input_test.sh DDLSIM SCENARIOS
# Prints "N passed, M failed" and exits non-zero on any failure.
set -u
ddlsim="$1"
scenarios="$2"
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
cd "$work" || exit 1
default="$scenarios/default.json"

# Subcommands and flags.
check "an unknown subcommand is named, with the nearest one" \
  expect_error 2 'unknown subcommand "rnu" (did you mean "run"?)' rnu "$default"
check "a negative seed says the bound readably" expect_error 2 '"-1" must be in [0, 9e+18]' \
  run "$default" --seed -1
check "the bound message is short (no 309-digit DBL_MAX)" bash -c \
  "'$ddlsim' run '$default' --seed -1 2>&1 | awk 'length > 200 { exit 1 }'"
check "--max-wall-seconds nan is refused" expect_error 2 '"nan" is not a finite number' \
  run "$default" --max-wall-seconds nan
check "--max-wall-seconds inf is refused" expect_error 2 'is not a finite number' \
  run "$default" --max-wall-seconds inf
check "real -f barely above 1 is refused (it made no progress for 1e11 iterations)" \
  expect_error 2 'must be in [1.01, 1024]' real -f 1.0000000001
check "real --loss without --emulate is refused, not ignored" expect_error 2 '--emulate' \
  real --loss 5

# Files that are not files, too big or too deep.
check "a device as scenario is refused before reading" expect_error 2 'not a regular file' \
  run /dev/zero
check "a device as nccl-tests log is refused before reading" expect_error 2 'not a regular file' \
  validate --scenario "$default" --measured /dev/zero
truncate -s 65M big.json
check "a scenario above 64 MiB is refused with its size and the limit" \
  expect_error 2 'above the limit of 64 MiB for a scenario' check big.json
python3 -c "print('{\"a\":' * 100000 + '1' + '}' * 100000)" >deep.json
check "JSON nested 100000 deep is an error, not a segfault" \
  expect_error 2 'nested deeper than 256 levels' check deep.json
sed '0,/{/s//{"seed": 1, "seed": 2,/' "$default" >dup.json
check "a duplicate key names both places" expect_error 2 'duplicate key "seed" (first at line' \
  check dup.json

# Work without bound.
check "schedule refuses a dump of more steps than --max-steps" \
  expect_error 2 'steps (rank' schedule --ranks 1024 --chunks 4096 --bytes 1GiB
check "schedule --check refuses buffers above --check-limit" \
  expect_error 2 'above --check-limit' schedule --check --ranks 64 --bytes 1GiB --max-steps 1000000000
check "schedule --max-steps raises the bound" bash -c \
  "'$ddlsim' schedule --ranks 64 --chunks 64 --max-steps 10000000 >/dev/null"

# plan: a cache that cannot be written loses no result.
touch not-a-directory
plan="$scenarios/examples/plan-cloud-allreduce.json"
check "a plan whose cache cannot be written warns and still succeeds" bash -c \
  "'$ddlsim' plan '$plan' --cache not-a-directory/c >p.txt 2>e.txt && grep -q 'could not be cached' e.txt && grep -q 'recommendation' p.txt"

# Progress and the wall-clock deadline on every engine: 128 cloud V100, 200 sizes of 1 GiB (far
# more work than the deadline allows on any machine).
for engine in analytic flow packet; do
  python3 - "$default" "$engine" >"long-$engine.json" <<'PY'
import json, sys
print(json.dumps({"include": sys.argv[1], "workload": {"sizes": ["1GiB"] * 200},
                  "engine": {"type": sys.argv[2]}}))
PY
  check "$engine engine: --max-wall-seconds stops the run with exit 4 and says what completed" \
    expect_error 4 'stopped at --max-wall-seconds 0.3 while simulating 1 GiB' \
    run "long-$engine.json" --max-wall-seconds 0.3
  check "$engine engine: --progress prints progress lines when stderr is not a terminal" \
    expect_error 4 'progress: all_reduce 1 GiB ring (1/200): ' \
    run "long-$engine.json" --max-wall-seconds 0.3 --progress
done
check "without --progress nothing is drawn off a terminal" bash -c \
  "'$ddlsim' run long-analytic.json --max-wall-seconds 0.3 2>&1 | grep -c progress: | grep -qx 0"
check "a job trace's progress counts the jobs ended as a whole number" bash -c \
  "'$ddlsim' run '$scenarios/jobs/placement-packed-vs-spread.json' --progress 2>&1 >/dev/null | grep -q '^progress: job trace (4 jobs): 0 jobs ended, '"

finish
