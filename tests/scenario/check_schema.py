#!/usr/bin/python3
"""Validates every scenario under scenarios/ (with its includes merged, as ddlsim does) against
scenarios/schema/scenario.schema.json, and checks that the schema rejects known-bad scenarios.
Exit status 0 when all hold; prints one line per file."""
import copy
import json
import pathlib
import sys

import jsonschema

root = pathlib.Path(sys.argv[1])
schema = json.loads((root / "schema" / "scenario.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)


def merge_patch(target, patch):
    """RFC 7386, as nlohmann::json::merge_patch does."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def resolve(path, seen=()):
    data = json.loads(path.read_text())
    include = data.get("include")
    if include is None:
        return data
    preset = root / "presets" / f"{include}.json"
    target = preset if preset.exists() else (path.parent / include)
    if target in seen:
        raise RuntimeError(f"include cycle at {target}")
    base = resolve(target, seen + (target,))
    data = dict(data)
    del data["include"]
    return merge_patch(base, data)


failures = 0
files = sorted(p for p in root.rglob("*.json") if "schema" not in p.parts)
for path in files:
    errors = sorted(validator.iter_errors(resolve(path)), key=lambda e: list(e.path))
    if errors:
        failures += 1
        for error in errors[:3]:
            print(f"FAIL {path}: /{'/'.join(map(str, error.path))}: {error.message}")
    else:
        print(f"ok   {path.relative_to(root)}")

# The schema must reject what the loader rejects (a few representative cases).
base = resolve(root / "default.json")
bad_patches = {
    "unknown top-level key": {"worklaod": {}},
    "unknown fabric key": {"topology": {"fabric": {"type": "single_switch", "spines": 2}}},
    "zero bandwidth": {"topology": {"fabric": {"bandwidth_gbps": 0}}},
    "bad size string": {"workload": {"sizes": ["12 parsecs"]}},
    "unknown engine": {"engine": {"type": "quantum"}},
    "odd fat tree k": {"topology": {"fabric": {"type": "fat_tree", "k": 5}}},
}
for name, patch in bad_patches.items():
    if validator.is_valid(merge_patch(base, patch)):
        failures += 1
        print(f"FAIL schema accepts a bad scenario: {name}")
    else:
        print(f"ok   schema rejects: {name}")

print(f"{len(files)} scenario files, {failures} failures")
sys.exit(1 if failures else 0)
