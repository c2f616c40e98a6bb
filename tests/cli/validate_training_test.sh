#!/usr/bin/env bash
# scripts/validate-training end to end on two modelling-set entries, its loud failure on entries
# it cannot read or run, the split rule, and the corpus's invariants: every entry's source file
# has its provenance header, a scenario exists exactly where entries.tsv promises one, and the
# scenarios are spec-only (no calibration, no measured compute: the script adds that itself).
# Usage: validate_training_test.sh DDLSIM SOURCE_DIR
ddlsim="$1"
root="$2"
source "$(dirname "$0")/check_lib.sh"
script="$root/scripts/validate-training"
data="$root/tests/data/training"
python=/usr/bin/python3

# Two modelling-set entries, one of each framework, taken by the split rule.
pick() {
  "$python" "$script" --list | awk -F'\t' -v src="$1" '$2 == src && $3 == "modelling" {print $1; exit}'
}

two_entries() {
  local a b
  a=$(pick dle-tensorflow-resnet50v1.5)
  b=$(pick dle-pytorch-resnet50v1.5)
  [[ -n $a && -n $b ]] || { echo "no modelling entries"; return 1; }
  "$python" "$script" --ddlsim "$ddlsim" --names "$a,$b" --json "$work/training.json" >"$work/table" ||
    return 1
  grep -Eq '^entry +GPUs +measured +roofline +error +measured1 +error +eff meas +eff sim +points$' "$work/table" ||
    { echo "no table header"; cat "$work/table"; return 1; }
  for name in "$a" "$b"; do
    grep -Eq "^$name +[0-9]+ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+% +[0-9.]+ +[-+][0-9.]+% +[0-9.]+% +[0-9.]+% +[-+][0-9.]+$" "$work/table" ||
      { echo "no row for $name"; cat "$work/table"; return 1; }
  done
  grep -Eq '^# overall: 2 entries; samples/s \|error\| median [0-9.]+% \(p90 [0-9.]+%\) with the roofline, [0-9.]+% \(p90 [0-9.]+%\) with the measured 1-GPU throughput; scaling efficiency \|error\| median [0-9.]+ points' "$work/table" ||
    { echo "no overall line"; cat "$work/table"; return 1; }
  "$python" - "$work/training.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
assert len(report["entries"]) == 2 and not report["broken"], report
for e in report["entries"]:
    # The measured-compute run's scaling efficiency is measured against the measured 1-GPU figure.
    assert 0 < e["simulated_efficiency"] <= 1.0 + 1e-9, e
    assert e["measured"] > 0 and e["roofline"] > 0 and e["with_measured_1gpu"] > 0, e
EOF
}
check "two modelling entries: table, rows, overall line and JSON" two_entries

# An entry whose scenario is missing or unreadable fails the run with its name, not silently.
unreadable() {
  local a
  a=$(pick dle-pytorch-resnet50v1.5)
  grep -v '^#' "$data/entries.tsv" | awk -F'\t' -v n="$a" '$1 == n' >"$work/one.tsv"
  printf 'broken-entry\ttest-only-source\tnowhere\tresnet50\t8\t1\tfp32\t64\t1\tddp\t100\t20\t1\tscenarios/training-corpus/no-such-file.json\n' >>"$work/one.tsv"
  ! "$python" "$script" --ddlsim "$ddlsim" --entries "$work/one.tsv" >"$work/out" 2>"$work/err2" || return 1
  grep -q "validate-training: error: broken-entry: cannot read its scenario" "$work/err2" ||
    { cat "$work/err2"; return 1; }
  # A malformed table is refused with its file and line.
  printf 'bad\tline\n' >"$work/bad.tsv"
  ! "$python" "$script" --ddlsim "$ddlsim" --entries "$work/bad.tsv" >"$work/out" 2>"$work/err3" &&
    grep -q "bad.tsv:1: expected 14 tab-separated fields" "$work/err3"
}
check "an unreadable entry or table fails loudly" unreadable

refuses_held_out() {
  local held
  held=$("$python" "$script" --list | awk -F'\t' '$3 == "held-out" {print $1; exit}')
  [[ -n $held ]] || { echo "no held-out entry"; return 1; }
  ! "$python" "$script" --ddlsim "$ddlsim" --names "$held" >"$work/out" 2>"$work/err4" &&
    grep -q "it is in the held-out set" "$work/err4"
}
check "a held-out entry is refused in the modelling set" refuses_held_out

corpus_files() {
  "$python" - "$root" <<'EOF'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
data, scenarios = root / "tests/data/training", root / "scenarios/training-corpus"
names, sources = [], set()
for line in (data / "entries.tsv").read_text().splitlines():
    if not line or line.startswith("#"):
        continue
    fields = line.split("\t")
    name, source, promise = fields[0], fields[1], fields[-1]
    names.append(name)
    sources.add(source)
    scenario = scenarios / (name + ".json")
    assert scenario.exists() == (not promise.startswith("-")), f"{scenario}: entries.tsv says {promise!r}"
    if scenario.exists():
        assert promise == f"scenarios/training-corpus/{name}.json", promise
        workload = json.loads(scenario.read_text())["workload"]
        assert "compute" not in workload, f"{scenario}: spec-only scenarios carry no measured compute"
        assert "calibration" not in json.loads(scenario.read_text()), f"{scenario} has a calibration"
for source in sources:
    head = [l for l in (data / (source + ".txt")).read_text().splitlines() if l.startswith("## ")]
    for key in ("SOURCE", "SYSTEM", "MEASURED"):
        assert any(l.startswith(f"## {key}:") for l in head), f"{source}.txt: no '## {key}:' line"
for scenario in scenarios.glob("*.json"):
    assert scenario.stem in names, f"{scenario} has no row in entries.tsv"
assert len(names) >= 20, len(names)
EOF
}
check "every entry has its source header; scenarios exist as promised and are spec-only" corpus_files

finish
