#!/usr/bin/python3
"""Every corpus scenario (scenarios/corpus/*.json) is written from the public spec only, so that
scripts/validate-corpus measures ddlsim out of the box (issue 16):

- no "calibration" key anywhere in it (a calibration is fitted to a log);
- no key that overrides an efficiency or a software overhead, at any depth: the engine's
  `per_step_overhead_ns` and `reduce_bandwidth_gbps`, the GPU's `memory_efficiency`,
  `kernel_overhead_us`, `fp32_efficiency`, `fp16_efficiency`, the model's `layer_efficiency`
  (docs/scenario-reference.md), and any other key naming an efficiency, an overhead, a
  calibration or a derating, so that keys added later are caught too;
- its description says it was written from the public spec and names where the figures come
  from (a datasheet, whitepaper, vendor documentation or page, instance table, spec, paper...).

Usage: check_corpus_spec_only.py SOURCE_DIR   (prints one line per violation; exit 1 if any)
       check_corpus_spec_only.py --self-test   (the checker refuses each kind of violation)
"""
import json
import pathlib
import re
import sys

OVERRIDE_KEYS = {"calibration", "per_step_overhead_ns", "reduce_bandwidth_gbps",
                 "memory_efficiency", "kernel_overhead_us", "fp32_efficiency", "fp16_efficiency",
                 "layer_efficiency"}
OVERRIDE_WORDS = re.compile(r"efficien|overhead|calibrat|derat", re.IGNORECASE)
# Keys that carry one of those words but are no model input (a planning goal).
ALLOWED = {"min_scaling_efficiency"}
SPEC_ONLY = re.compile(r"written from the public spec", re.IGNORECASE)
SOURCE = re.compile(r"datasheet|data sheet|whitepaper|white paper|documentation|\bdocs?\b|page|"
                    r"instance table|spec sheet|product brief|paper|manual|guide|PCI-SIG|"
                    r"https?://", re.IGNORECASE)


def violations(scenario, where):
    found = []

    def walk(node, pointer):
        if isinstance(node, dict):
            for key, value in node.items():
                path = f"{pointer}/{key}"
                if key not in ALLOWED and (key in OVERRIDE_KEYS or OVERRIDE_WORDS.search(key)):
                    found.append(f"{where}: {path}: a spec-only scenario overrides no efficiency, "
                                 f"overhead or calibration; remove it")
                walk(value, path)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{pointer}/{index}")

    walk(scenario, "")
    description = scenario.get("description", "") if isinstance(scenario, dict) else ""
    if not SPEC_ONLY.search(description):
        found.append(f"{where}: /description: must say it was \"Written from the public spec\"")
    if not SOURCE.search(description):
        found.append(f"{where}: /description: names no source of its figures (a datasheet, "
                     f"whitepaper, vendor documentation or page, instance table...)")
    return found


def self_test():
    good = {"description": "Written from the public spec only. H100 datasheet: 900 GB/s.",
            "topology": {"nodes": [{"preset": "dgx-h100", "count": 2}]}}
    assert violations(good, "good") == [], violations(good, "good")
    cases = {
        "/calibration": {**good, "calibration": "fit.json"},
        "/engine/per_step_overhead_ns": {**good, "engine": {"per_step_overhead_ns": 500}},
        "/topology/nodes/0/gpu/memory_efficiency":
            {**good, "topology": {"nodes": [{"gpu": {"memory_efficiency": 0.9}}]}},
        "/engine/launch_overhead_us": {**good, "engine": {"launch_overhead_us": 5}},
        "/engine/nic_efficiency": {**good, "engine": {"nic_efficiency": 0.8}},
    }
    for pointer, scenario in cases.items():
        found = violations(scenario, "case")
        assert any(pointer + ":" in line for line in found), (pointer, found)
    unsourced = {**good, "description": "Written from the public spec only: 900 GB/s."}
    assert any("names no source" in line for line in violations(unsourced, "u"))
    fitted = {**good, "description": "Fitted to the log; H100 datasheet."}
    assert any("Written from the public spec" in line for line in violations(fitted, "f"))
    goal = {**good, "goals": {"min_scaling_efficiency": 0.8}}
    assert violations(goal, "goal") == []
    print("self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    scenarios = sorted((root / "scenarios" / "corpus").glob("*.json"))
    if not scenarios:
        sys.exit(f"check_corpus_spec_only.py: error: no scenarios in {root}/scenarios/corpus")
    found = []
    for path in scenarios:
        found += violations(json.loads(path.read_text()), str(path.relative_to(root)))
    for line in found:
        print(line)
    print(f"{len(scenarios)} corpus scenarios checked, {len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
