#!/usr/bin/env bash
# scripts/validate-corpus end to end on systems of the modelling set (out of box; with its k-fold,
# extrapolation and fit columns; --plot), every modelling-set log with a scenario read as
# published, and the corpus's own invariants: every listed log exists with its source header, a
# scenario exists exactly where systems.tsv promises one, the scenarios are spec-only (no
# calibration), the split rule keeps about a third held out and refuses to evaluate a held-out
# system by name.
# Usage: validate_corpus_test.sh DDLSIM SOURCE_DIR
ddlsim="$1"
root="$2"
source "$(dirname "$0")/check_lib.sh"
script="$root/scripts/validate-corpus"
data="$root/tests/data/nccl-tests"
python=/usr/bin/python3

two_systems() {
  "$python" "$script" --ddlsim "$ddlsim" --no-fit \
    --systems v100-sxm2-8gpu-1node-hybrid-cube-mesh,aws-g5.2xlarge-2node-tcp-socket-a10g \
    --json "$work/corpus.json" >"$work/table" || return 1
  grep -q '^system  *op  *points  *n>=64K  *median>=64K  *max>=64K  *n<64K  *median<64K$' "$work/table" ||
    { echo "no table header"; cat "$work/table"; return 1; }
  for name in v100-sxm2-8gpu-1node-hybrid-cube-mesh aws-g5.2xlarge-2node-tcp-socket-a10g; do
    # name, op, three counts and three percentages
    grep -Eq "^$name +all_reduce +[0-9]+ +[0-9]+ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9.]+%$" "$work/table" ||
      { echo "no row for $name"; cat "$work/table"; return 1; }
  done
  grep -Eq '^# overall: 2 systems evaluated; median over systems of the per-system median \|error\|: >= 64 KiB [0-9.]+% \(2 systems\), < 64 KiB [0-9.]+% \(2 systems\)' "$work/table" ||
    { echo "no overall line"; cat "$work/table"; return 1; }
  # The JSON report carries the same systems with their point counts (> 0, so nothing vanished).
  "$python" - "$work/corpus.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
names = sorted(s["name"] for s in report["systems"])
assert names == ["aws-g5.2xlarge-2node-tcp-socket-a10g", "v100-sxm2-8gpu-1node-hybrid-cube-mesh"], names
for s in report["systems"]:
    assert s["points"] > 10 and s["large_points"] > 5 and s["large_median"] >= 0, s
EOF
}
check "two modelling systems: table, rows and overall line" two_systems

# Self-calibration columns on one system: k-fold, extrapolation and the fit check, each a
# percentage (a mismatch marked *) and the overall self-calibration line; --plot writes PNGs.
with_fit() {
  "$python" "$script" --ddlsim "$ddlsim" --systems v100-sxm2-8gpu-1node-hybrid-cube-mesh \
    --json "$work/fit.json" --plot "$work/plots" >"$work/fit" || { cat "$work/fit"; return 1; }
  grep -q '^system .* median<64K  *kfold>=64K  *extrap  *fit$' "$work/fit" ||
    { echo "no header with the fit columns"; cat "$work/fit"; return 1; }
  grep -Eq '^v100-sxm2-8gpu-1node-hybrid-cube-mesh +all_reduce( +[0-9.]+%| +[0-9]+)+ +[0-9.]+%\*? +[0-9.]+%\*? +(ok|mismatch)$' "$work/fit" ||
    { echo "no row with fit columns"; cat "$work/fit"; return 1; }
  grep -Eq '^# self-calibration \(k-fold k=4; extrapolation from sizes <= largest / 4\), >= 64 KiB, over the [01] systems whose fits stay physically possible: .*model mismatch .*: [01] of 1$' "$work/fit" ||
    { echo "no self-calibration line"; cat "$work/fit"; return 1; }
  [[ -s $work/plots/system-v100-sxm2-8gpu-1node-hybrid-cube-mesh.png ]] ||
    { echo "no system plot"; ls "$work/plots"; return 1; }
  ls "$work/plots"/overall-*.png >/dev/null 2>&1 || { echo "no overall plot"; ls "$work/plots"; return 1; }
  "$python" - "$work/fit.json" <<'EOF'
import json, sys
system = json.load(open(sys.argv[1]))["systems"][0]
assert system["fit"] in ("ok", "mismatch"), system["fit"]
assert system["kfold_points"] == system["large_points"], system  # every point >= 64 KiB predicted once
assert 0 < system["extrapolation_points"] < system["large_points"], system
assert all(row["bytes"] > max(r["bytes"] for r in system["rows"]) / 4
           for row in system["extrapolation_rows"]), "extrapolation predicts only the larger sizes"
EOF
}
check "k-fold, extrapolation and fit columns, and --plot" with_fit

# Every modelling-set log that has a scenario is read as published (elisions, stripped or
# markdown tables, busbw-only tables): nothing is "not evaluated" except for want of a scenario.
all_read() {
  "$python" "$script" --ddlsim "$ddlsim" --no-fit >"$work/all" || { cat "$work/all"; return 1; }
  if grep '^# not evaluated: ' "$work/all" | grep -v ': no scenario: '; then return 1; fi
  grep -q '^aws-p5.48xlarge-2node-efa-h100-excerpt ' "$work/all" &&
    grep -q '^azure-nd-h200-v5-1node-nvswitch-h200-busbw ' "$work/all" &&
    grep -q '^gcp-a4-highgpu-8g-2node-roce-b200 ' "$work/all" &&
    grep -q '^gcp-a3-megagpu-8g-2node-tcpxo-h100-all-gather ' "$work/all"
}
check "every modelling-set log with a scenario is read as published" all_read

# The GH200 nodes (NVLink all-to-all, Slingshot over cxi or NCCL's sockets) have scenarios now:
# they are scored, not listed as unexpressible.
gh200_scored() {
  "$python" "$script" --ddlsim "$ddlsim" --no-fit --systems cscs-alps-gh200-2node-socket-fallback >"$work/out" || return 1
  grep -q '^cscs-alps-gh200-2node-socket-fallback  *all_reduce ' "$work/out" &&
    grep -q '^# overall: 1 systems evaluated' "$work/out"
}
check "the GH200 socket-fallback system is scored" gh200_scored

# Held-out systems are not evaluated by name from the modelling set.
refuses_held_out() {
  local held
  held=$("$python" "$script" --list | awk '$3 == "held-out" {print $1; exit}')
  [[ -n $held ]] || { echo "no held-out system"; return 1; }
  ! "$python" "$script" --ddlsim "$ddlsim" --systems "$held" >"$work/out" 2>"$work/err" &&
    grep -q "it is in the held-out set" "$work/err"
}
check "a held-out system is refused in the modelling set" refuses_held_out

# The split: every family split by the rule, about a third held out overall.
split_size() {
  "$python" "$script" --list >"$work/list" || return 1
  local total held
  total=$(wc -l <"$work/list")
  held=$(grep -c ' held-out$' "$work/list")
  [[ $total -ge 15 ]] || { echo "only $total systems"; return 1; }
  # a third, give or take the rounding of each family
  [[ $((3 * held)) -ge $((total - 4)) && $((3 * held)) -le $((total + 4)) ]] ||
    { echo "$held of $total held out"; return 1; }
}
check "at least 15 systems, about a third held out" split_size

# Every row of systems.tsv has its log with a source line, and a scenario exactly when promised;
# every scenario is spec-only (no calibration key anywhere in it).
corpus_files() {
  "$python" - "$root" <<'EOF'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
data, scenarios = root / "tests/data/nccl-tests", root / "scenarios/corpus"
names = []
for line in (data / "systems.tsv").read_text().splitlines():
    if not line or line.startswith("#"):
        continue
    name, *_, promise = line.split("\t")
    names.append(name)
    log = data / (name + ".txt")
    assert log.exists(), f"{log} missing"
    head = [l for l in log.read_text(errors="replace").splitlines() if l.startswith("## ")]
    assert any(l.startswith("## SOURCE:") for l in head), f"{log}: no '## SOURCE:' header line"
    assert any(l.startswith("## SYSTEM:") for l in head), f"{log}: no '## SYSTEM:' header line"
    scenario = scenarios / (name + ".json")
    assert scenario.exists() == (promise == "-"), f"{scenario}: exists={scenario.exists()}, systems.tsv says {promise!r}"
for scenario in scenarios.glob("*.json"):
    assert scenario.stem in names, f"{scenario} has no row in systems.tsv"
    text = scenario.read_text()
    assert "calibration" not in json.loads(text), f"{scenario} has a calibration"
    assert "calibrat" not in text.replace("no calibration", ""), f"{scenario} mentions a calibration"
logs = {p.stem for p in data.glob("*.txt")}
assert logs == set(names), f"logs without a row: {sorted(logs - set(names))}"
EOF
}
check "every log has its source header; scenarios exist as promised and are spec-only" corpus_files

finish
