#!/usr/bin/env bash
# The bad-input corpus (tests/cli/bad_input/cases.txt) end to end: each case runs `ddlsim ARGS` on
# the files bad_input/fixtures.py writes and must exit with its status and print its words on
# stderr: no crash, no hang (each case has 30 s), no success that is not one.
# Usage: bad_input_test.sh DDLSIM SCENARIOS [SHARD SHARDS]: with SHARD/SHARDS, only the cases
# whose index is SHARD modulo SHARDS (ctest runs the shards side by side). Prints "N passed, M
# failed".
set -u
ddlsim="$1"
S="$(cd "$2" && pwd)"
shard="${3:-0}"
shards="${4:-1}"
V="$S/validation/v100-sxm2-8gpu-1node.json"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/check_lib.sh"
cd "$work" || exit 1
python3 "$here/bad_input/fixtures.py" "$S" || { echo "fixtures.py failed"; exit 1; }

# run_case STATUS WORDS ARGS...: like expect_error, with a time limit.
run_case() {
  local status="$1" text="$2"
  shift 2
  timeout 30 "$ddlsim" "$@" >"$work/stdout" 2>"$work/stderr"
  local got=$?
  [[ $got -eq $status ]] || { echo "exit status $got, expected $status"; cat "$work/stderr"; return 1; }
  grep -qF -- "$text" "$work/stderr" || { echo "stderr lacks: $text"; cat "$work/stderr"; return 1; }
}

cases=0
index=0
while IFS= read -r line; do
  [[ -z "${line// /}" || "$line" == \#* ]] && continue
  index=$((index + 1))
  cases=$((cases + 1))
  ((index % shards == shard)) || continue
  status="${line%% :: *}"
  rest="${line#* :: }"
  words="${rest%% :: *}"
  args="${rest#* :: }"
  [[ "$rest" == *" :: "* ]] || args="" # a case with no arguments ends in " :: "
  [[ "$args" == "$rest" ]] && args=""
  eval "set -- $args"
  check "ddlsim $args  ->  $status: $words" run_case "$status" "$words" "$@"
done <"$here/bad_input/cases.txt"
echo "$cases cases in the corpus, $((passed + failed)) in shard $shard of $shards"
[[ $cases -ge 150 ]] || { echo "FAIL: the corpus has fewer than 150 cases"; failed=$((failed + 1)); }
finish
