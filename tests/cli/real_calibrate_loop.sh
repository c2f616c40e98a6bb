#!/usr/bin/env bash
# The whole calibration loop without a GPU: the host backend measures a ring all-reduce on the
# emulated network (`ddlsim real --emulate`: one network namespace per rank, links shaped to
# 1 Gb/s), `calibrate` fits the simulator to that report, `validate` runs the simulator for every
# measured point with the calibration. Where network namespaces cannot be made (not root, no
# iproute2, a kernel without them) it says why and runs the loop on loopback instead.
# Usage: real_calibrate_loop.sh DDLSIM SCENARIOS
set -u
ddlsim="$1"
scenarios="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

emulate_reason=""
if [[ $(id -u) -ne 0 ]]; then
  emulate_reason="not root (uid $(id -u))"
elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  emulate_reason="iproute2 (ip, tc) not installed"
elif ! ip netns add "ddlsim-loop-probe-$$" 2>"$work/probe.txt"; then
  emulate_reason="cannot create a network namespace: $(head -1 "$work/probe.txt")"
else
  ip netns del "ddlsim-loop-probe-$$"
fi
if [[ -z "$emulate_reason" ]]; then
  scenario="$scenarios/validation/host-emulated-4.json"
  where=(--emulate "$scenario")
  echo "measuring on the emulated network ($scenario)"
else
  scenario="$scenarios/validation/host-loopback-4.json"
  where=()
  echo "SKIP emulation: $emulate_reason; measuring on loopback instead"
fi

"$ddlsim" real --backend host --op all_reduce --algo ring --ranks 4 -b 64KiB -e 16MiB -f 4 \
  --iters 2 "${where[@]}" --json "$work/real.json" >"$work/real.txt" 2>&1 ||
  { cat "$work/real.txt"; fail "ddlsim real"; }
grep -q "wrote $work/real.json" "$work/real.txt" || fail "real wrote no report"
if [[ -z "$emulate_reason" ]]; then
  grep -q '"emulated: ' "$work/real.json" ||
    { cat "$work/real.txt"; fail "the report does not say it ran on the emulated network"; }
fi
# Five sizes cannot determine the fit's 7 parameters (calibrate refuses that by default): the loop
# checks that the file reproduces the fit, not that the data determine every parameter.
"$ddlsim" calibrate "$work/real.json" -o "$work/cal.json" --scenario "$scenario" \
  --max-iterations 30 --allow-underdetermined >"$work/cal.txt" 2>&1 || { cat "$work/cal.txt"; fail "ddlsim calibrate"; }
grep -q "^# inferred: protocols simple only" "$work/cal.txt" ||
  { cat "$work/cal.txt"; fail "calibrate did not say it fits one protocol for a ddlsim report"; }
"$ddlsim" validate --measured "$work/real.json" --scenario "$scenario" --calibration "$work/cal.json" \
  >"$work/val.txt" 2>&1 || { cat "$work/val.txt"; fail "ddlsim validate"; }
# Every measured size (64 KiB, 256 KiB, 1 MiB, 4 MiB, 16 MiB) gets a simulated time and an error.
rows='^ +[0-9]+ +4 +[0-9.]+ +[0-9.]+ +-?[0-9.]+ +ring'
[[ $(grep -cE "$rows" "$work/val.txt") -eq 5 ]] ||
  { cat "$work/val.txt"; fail "validate table lacks the 5 measured points"; }
grep -q "median" "$work/val.txt" || fail "validate prints no summary"
# The calibration file reproduces the fit: validate simulates exactly calibrate's in-sample times.
cmp -s <(grep -E "$rows" "$work/cal.txt" | awk '{ print $1, $4 }') \
  <(grep -E "$rows" "$work/val.txt" | awk '{ print $1, $4 }') ||
  { cat "$work/cal.txt" "$work/val.txt"; fail "validate with the calibration differs from the fit"; }
if [[ -z "$emulate_reason" ]]; then
  # The emulated links run at 1 Gb/s (tbf): the fitted network rate cannot exceed that much,
  # unlike the preset's 10 Gb/s or loopback's tens of Gb/s (on a loaded machine the CPU's
  # reductions and scheduling make it lower, hence the wide lower bound).
  /usr/bin/python3 - "$work/cal.json" <<'PY' || fail "fitted network rate is not the emulated 1 Gb/s"
import json, sys
cal = json.load(open(sys.argv[1]))
# Format 2 stores an efficiency relative to the nominal rate and, for people, the fitted rate.
rate = cal["links"]["network"]["fitted_bandwidth_gbps"]
print(f"fitted network rate {rate:.3f} Gb/s (emulated: 1 Gb/s)")
sys.exit(0 if 0.1 <= rate <= 1.3 else 1)
PY
  grep '>= 64 KiB' "$work/val.txt" | sed 's/^# /in-sample on the emulated network: /'
fi
echo "real -> calibrate -> validate: passed"
