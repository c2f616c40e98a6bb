#!/usr/bin/env bash
# The whole calibration loop without a GPU: the host backend measures a ring all-reduce over
# loopback, `calibrate` fits the simulator to that report, `validate` runs the simulator for every
# measured point with the calibration. Usage: real_calibrate_loop.sh DDLSIM SCENARIOS
set -u
ddlsim="$1"
scenarios="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
scenario="$scenarios/validation/host-loopback-4.json"
fail() { echo "FAIL: $*"; exit 1; }

"$ddlsim" real --backend host --op all_reduce --algo ring --ranks 4 -b 64KiB -e 4MiB -f 4 \
  --iters 2 --json "$work/real.json" >"$work/real.txt" 2>&1 || { cat "$work/real.txt"; fail "ddlsim real"; }
grep -q "wrote $work/real.json" "$work/real.txt" || fail "real wrote no report"
"$ddlsim" calibrate "$work/real.json" -o "$work/cal.json" --scenario "$scenario" \
  --max-iterations 30 >"$work/cal.txt" 2>&1 || { cat "$work/cal.txt"; fail "ddlsim calibrate"; }
/usr/bin/python3 -c "import json; c = json.load(open('$work/cal.json')); assert c, c" ||
  fail "calibration JSON unreadable"
"$ddlsim" validate --measured "$work/real.json" --scenario "$scenario" --calibration "$work/cal.json" \
  >"$work/val.txt" 2>&1 || { cat "$work/val.txt"; fail "ddlsim validate"; }
# Every measured size (64 KiB, 256 KiB, 1 MiB, 4 MiB) gets a simulated time and an error.
[[ $(grep -cE '^ +[0-9]+ +4 +[0-9.]+ +[0-9.]+ +-?[0-9.]+ +ring' "$work/val.txt") -eq 4 ]] ||
  { cat "$work/val.txt"; fail "validate table lacks the 4 measured points"; }
grep -q "median" "$work/val.txt" || fail "validate prints no summary"
echo "real -> calibrate -> validate: passed"
