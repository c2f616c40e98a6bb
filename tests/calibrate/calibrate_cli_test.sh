#!/usr/bin/env bash
# `ddlsim calibrate` and `ddlsim validate` end to end, as a user runs them: each shared nccl-tests
# log calibrates and validates against its scenario, a `ddlsim run --json` report closes the loop
# without a GPU, a scenario referencing the calibration runs with it, and bad input exits 2
# naming the place. Usage: calibrate_cli_test.sh DDLSIM SOURCE_DIR
set -u
ddlsim="$1"
source_dir="$2"
data="$source_dir/tests/calibrate/data"
scenarios="$source_dir/scenarios/validation"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/check_lib.sh"

# The |error| summary line for sizes >= 64 KiB: "median X%, p90 Y%, max Z%"; fails above $2 (max).
max_error_below() {  # max_error_below FILE LIMIT
  local max
  max=$(grep '>= 64 KiB' "$1" | sed -E 's/.*max ([0-9.]+)%.*/\1/')
  [[ -n "$max" ]] || { echo "no summary in $1"; cat "$1"; return 1; }
  awk -v m="$max" -v l="$2" 'BEGIN { exit !(m < l) }' || { echo "max |error| $max% >= $2%"; cat "$1"; return 1; }
}

calibrate_and_validate() {  # LOG SCENARIO LIMIT EXTRA...
  local log="$1" scenario="$2" limit="$3"
  shift 3
  "$ddlsim" calibrate "$data/$log" --scenario "$scenarios/$scenario" -o "$work/$log.cal.json" "$@" \
    >"$work/$log.calibrate.txt" || return 1
  grep -q '"format": "ddlsim-calibration-2"' "$work/$log.cal.json" || return 1
  grep -q '"fitted_on"' "$work/$log.cal.json" || return 1
  grep -q '^# assumed: NCCL chose' "$work/$log.calibrate.txt" || return 1
  "$ddlsim" validate --measured "$data/$log" --scenario "$scenarios/$scenario" \
    --calibration "$work/$log.cal.json" "$@" >"$work/$log.validate.txt" || return 1
  max_error_below "$work/$log.validate.txt" "$limit"
}

# In-sample limits well above what the fits reach (docs/calibration-and-validation.md), so the
# test is about the loop.
check "V100 log calibrates and validates" calibrate_and_validate \
  v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt v100-sxm2-8gpu-1node.json 25
check "g5 log (2-rank run; 1-rank baselines left out by default) calibrates and validates" \
  calibrate_and_validate aws-g5.2xlarge-2node-tcp-socket-a10g.txt g5-2node-tcp.json 30
check "... saying it left the 1-rank runs out and why LL128 is off" bash -c "
  grep -q 'left out 25 points of 1-rank runs' '$work/aws-g5.2xlarge-2node-tcp-socket-a10g.txt.calibrate.txt' &&
  grep -q 'protocols simple, ll (LL128 off' '$work/aws-g5.2xlarge-2node-tcp-socket-a10g.txt.calibrate.txt'"
check "p4de log calibrates and validates (quick fit)" calibrate_and_validate \
  aws-p4de.24xlarge-2node-efa-a100.txt p4de-2node-efa.json 60 --max-iterations 6
check "the calibration says what was inferred" \
  grep -q 'ranks 16 inferred from busbw / algbw' "$work/aws-p4de.24xlarge-2node-efa-a100.txt.calibrate.txt"
check "cross-validation on held-out sizes" bash -c \
  "'$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --scenario '$scenarios/v100-sxm2-8gpu-1node.json' --cross-validate sizes:8,4KiB,1MiB,128MiB --max-iterations 15 > '$work/cv.txt' && grep -q 'cross-validation sizes' '$work/cv.txt' && grep -q '21 points' '$work/cv.txt'"

# The loop without a GPU: a ddlsim report (the format `ddlsim real --json` writes) calibrates
# the simulator to itself, exactly. Its 8 sizes cannot determine the fit's 9 parameters
# (calibrate refuses that by default): the loop checks the fit reproduces them, so it allows it.
cat >"$work/loop.json" <<'JSON'
{
  "topology": {
    "nodes": [{ "count": 2, "gpus": 2, "gpu_model": "A100", "intra": "nvswitch",
                "nvlink_bandwidth_gbps": 800, "pcie_bandwidth_gbps": 128,
                "nics": 1, "nic_bandwidth_gbps": 50, "nic_latency_ns": 3000 }]
  },
  "workload": { "type": "collective", "op": "all_reduce", "algorithm": "ring",
                "sizes": { "from": "4KiB", "to": "64MiB", "factor": 4 } },
  "engine": { "type": "analytic", "per_step_overhead_ns": 2000 }
}
JSON
check "a ddlsim report calibrates and validates itself" bash -c "
  '$ddlsim' run '$work/loop.json' --json '$work/report.json' >/dev/null &&
  '$ddlsim' calibrate '$work/report.json' --scenario '$work/loop.json' --protocols simple --allow-underdetermined -o '$work/loop.cal.json' >'$work/loop.cal.txt' &&
  '$ddlsim' validate --measured '$work/report.json' --scenario '$work/loop.json' --calibration '$work/loop.cal.json' >'$work/loop.val.txt' &&
  grep -q '>= 64 KiB: 6 points' '$work/loop.val.txt'"
check "... to within 2%" max_error_below "$work/loop.val.txt" 2

# A scenario referencing the calibration runs with it (and validates with it by default).
check "a scenario with \"calibration\" runs calibrated" bash -c "
  cp '$work/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt.cal.json' '$work/v100.cal.json' &&
  sed 's|\"name\"|\"calibration\": \"v100.cal.json\", \"name\"|' '$scenarios/v100-sxm2-8gpu-1node.json' | sed 's|../schema|$source_dir/scenarios/schema|' > '$work/v100-cal.json' &&
  '$ddlsim' run '$scenarios/v100-sxm2-8gpu-1node.json' | grep '^ *134217728' > '$work/raw.txt' &&
  '$ddlsim' run '$work/v100-cal.json' | grep '^ *134217728' > '$work/cal.txt' &&
  ! cmp -s '$work/raw.txt' '$work/cal.txt' &&
  '$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --scenario '$work/v100-cal.json' | grep -q '^# scenario'"

# Per node group: a two-group cluster whose first group carries the V100 calibration gives the
# V100 log's 8 ranks (all on node 0) exactly the times the one-node scenario gives with that
# calibration; targeting the g5 calibration at node 0 instead changes them.
het_scenario() {  # OUT GROUP0_CAL GROUP1_CAL
  cat >"$1" <<JSON
{ "topology": { "nodes": [ { "preset": "cloud-8xv100-25g", "count": 1 }, { "preset": "dgx-a100", "count": 1 } ] },
  "workload": { "type": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"] },
  "calibration": [ { "file": "$2", "node_groups": ["cloud-8xv100-25g"] },
                   { "file": "$3", "node_groups": ["/topology/nodes/1"] } ] }
JSON
}
cp "$work/aws-g5.2xlarge-2node-tcp-socket-a10g.txt.cal.json" "$work/g5.cal.json"
het_scenario "$work/het.json" v100.cal.json v100.cal.json
het_scenario "$work/het-swapped.json" g5.cal.json v100.cal.json
simulated_column() { grep -E '^ +[0-9]+ +8 ' "$1" | awk '{ print $1, $4 }'; }
export -f simulated_column
check "per-group calibrations: node 0's calibration gives the one-node times" bash -c "
  '$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --scenario '$work/het.json' >'$work/het.txt' &&
  '$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --scenario '$scenarios/v100-sxm2-8gpu-1node.json' --calibration '$work/v100.cal.json' >'$work/one.txt' &&
  '$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --scenario '$work/het-swapped.json' >'$work/swapped.txt' &&
  [[ \$(grep -cE '^ +[0-9]+ +8 ' '$work/het.txt') -eq 25 ]] &&
  cmp -s <(simulated_column '$work/het.txt') <(simulated_column '$work/one.txt') &&
  ! cmp -s <(simulated_column '$work/het.txt') <(simulated_column '$work/swapped.txt')"
sed 's|"/topology/nodes/1"|"dgx-h100"|' "$work/het.json" >"$work/het-bad.json"
check "a node-group selector that matches no group is an error naming the groups (exit 2)" \
  expect_error 2 'no node group has the preset, GPU model or pointer "dgx-h100"' run "$work/het-bad.json"

# Calibrations that carry over (issue 17): a calibration fitted on another kind of system applies
# (its efficiencies scale this system's nominal rates) with a warning naming what differs.
check "validate with a calibration from another system warns what differs, on stderr" bash -c "
  '$ddlsim' validate --measured '$data/aws-g5.2xlarge-2node-tcp-socket-a10g.txt' \
    --scenario '$scenarios/g5-2node-tcp.json' --calibration '$work/v100.cal.json' \
    >'$work/carried.out' 2>'$work/carried.err' &&
  grep -q 'warning: the calibration .*v100.cal.json was fitted on another kind of system: ' '$work/carried.err' &&
  grep -q 'sm_70) fitted' '$work/carried.err' && grep -q 'GPUs per node 8 fitted, 1 here' '$work/carried.err' &&
  ! grep -q warning '$work/carried.out' && grep -q '>= 64 KiB: 12 points' '$work/carried.out'"
check "run with a scenario whose calibration is from another system warns on stderr" bash -c "
  '$ddlsim' run '$work/het-swapped.json' >/dev/null 2>'$work/run.err' &&
  grep -q 'ddlsim run: warning: calibration .*g5.cal.json was fitted on another kind of system: /topology/nodes/0: ' '$work/run.err'"
{ echo '# nccl-tests version 2.18.2 nccl-headers=22602 nccl-library=22602'
  cat "$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt"; } >"$work/versioned.txt"
check "the fit records the log's NCCL version where it says one" bash -c "
  '$ddlsim' calibrate '$work/versioned.txt' --scenario '$scenarios/v100-sxm2-8gpu-1node.json' \
    --max-iterations 3 -o '$work/versioned.cal.json' >'$work/versioned.out' &&
  grep -q '\"nccl_version\": \"NCCL 2.26.2\"' '$work/versioned.cal.json' &&
  grep -q 'NCCL 2.26.2 from the .nccl-library. header' '$work/versioned.out' &&
  grep -q '^# fitted on: 1 node(s) of 8 V100' '$work/versioned.out'"

# Logs as people publish them: no silent loss, no perfect score for nothing.
printf '%s\n' '#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong' \
  '        0      0  float    sum    -1   5.10   0.00   0.00       0   5.00   0.00   0.00       0' \
  >"$work/zero-only.txt"
check "validate with 0 points is an error, never a 0.00% median (exit 2)" \
  expect_error 2 "leaves no measured points" validate --measured "$work/zero-only.txt" \
  --scenario "$scenarios/v100-sxm2-8gpu-1node.json" --op all_reduce
check "no points above --min-bytes prints no median, not 0.00%" bash -c "
  '$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' \
    --scenario '$scenarios/v100-sxm2-8gpu-1node.json' --min-bytes 1GiB >'$work/none.txt' &&
  grep -q '>= 1 GiB: 0 points (no median)' '$work/none.txt' && ! grep -q '0.00%' '$work/none.txt'"
awk 'NR == 50 { print "        1024           256     float     sum      -1    10.00"; next } { print }' \
  "$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt" >"$work/cut-row.txt"
check "a row that does not parse is an error naming file:line (exit 2)" \
  expect_error 2 "cut-row.txt:50" validate --measured "$work/cut-row.txt" \
  --scenario "$scenarios/v100-sxm2-8gpu-1node.json"
check "--lenient skips it with a warning naming file:line, and keeps the other rows" bash -c "
  '$ddlsim' validate --measured '$work/cut-row.txt' --scenario '$scenarios/v100-sxm2-8gpu-1node.json' \
    --lenient >'$work/lenient.out' 2>'$work/lenient.err' &&
  grep -q 'ddlsim: warning: .*cut-row.txt:50: .*row skipped: --lenient' '$work/lenient.err' &&
  grep -q 'all sizes: 24 points' '$work/lenient.out'"

if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  check "--plot writes a PNG" bash -c "
    '$ddlsim' validate --measured '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --scenario '$scenarios/v100-sxm2-8gpu-1node.json' --calibration '$work/v100.cal.json' --plot '$work/v.png' >/dev/null &&
    [[ -s '$work/v.png' ]]"
fi

check "a log that does not say its nodes needs --nodes or a scenario (exit 2)" \
  expect_error 2 "--nodes and --gpus-per-node" calibrate "$data/broadcast-and-alltoall.txt" -o "$work/x.json"
check "a malformed log names file:line (exit 2)" \
  expect_error 2 "bad-time.txt:3" calibrate "$data/bad-time.txt" -o "$work/x.json"
check "a bad --cross-validate says what is expected (exit 2)" \
  expect_error 2 "expected kfold:K" validate --measured "$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt" \
  --scenario "$scenarios/v100-sxm2-8gpu-1node.json" --cross-validate halves
check "more ranks than the scenario has GPUs is an error naming the row (exit 2)" \
  expect_error 2 "aws-p4de.24xlarge-2node-efa-a100.txt:7" validate \
  --measured "$data/aws-p4de.24xlarge-2node-efa-a100.txt" --scenario "$scenarios/v100-sxm2-8gpu-1node.json"
check "an unknown protocol is an error (exit 2)" \
  expect_error 2 "unknown protocol" calibrate "$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt" \
  --scenario "$scenarios/v100-sxm2-8gpu-1node.json" --protocols simple,fast -o "$work/x.json"

# A scenario that says the V100s' NVLinks are a tenth of their rate (20 Gb/s per link): the fit
# needs NVLink far above that nominal rate, so --strict refuses to write it.
sed 's/"gpu_model": "V100-SXM2-16GB"}/"gpu_model": "V100-SXM2-16GB", "nvlink_bandwidth_gbps": 20}/' \
  "$source_dir/scenarios/corpus/v100-sxm2-8gpu-1node-hybrid-cube-mesh.json" >"$work/slow-nvlink.json"
check "--strict: a fit that needs an impossible efficiency is an error, no file (exit 2)" bash -c "
  grep -q '\"nvlink_bandwidth_gbps\": 20' '$work/slow-nvlink.json' &&
  ! '$ddlsim' calibrate '$data/v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt' --max-iterations 10 \
    --scenario '$work/slow-nvlink.json' \
    --strict -o '$work/strict.json' >'$work/strict.out' 2>&1 &&
  grep -q 'error: --strict: model mismatch: .*efficiency = .*an efficiency above 1' '$work/strict.out' &&
  [[ ! -e '$work/strict.json' ]]"

finish
