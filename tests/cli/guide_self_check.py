#!/usr/bin/env python3
"""Every `ddlsim guide` answer passes its own simulated check, checked independently.

For each bundled training scenario with one kind of node and targets 0.7 / 0.8 / 0.9, the guide
answers on 16 GPUs (searches capped at 128 GPUs to keep the test short). Its GPU-count, NIC and
batch answers are then re-run with `ddlsim run` on the scenario changed to the answer and to one
step beyond it (analytic engine, as the guide searches): the efficiency must reach the target at
the answer and miss it one step beyond. Usage: guide_self_check.py DDLSIM SCENARIOS_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ddlsim, scenarios = sys.argv[1], sys.argv[2]
GPUS, MAX_CHECK = 16, 128


def resolved(path):  # the scenario as simulated: includes and presets merged
    text = subprocess.run([ddlsim, "check", "--resolved", path], check=True,
                          capture_output=True, text=True).stdout
    data = json.loads(text)
    data.pop("$schema", None)
    return data


def training_scenarios():
    for folder in ("", "examples", "papers"):
        d = os.path.join(scenarios, folder)
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not name.endswith(".json") or not os.path.isfile(path):
                continue
            data = resolved(path)
            if data.get("workload", {}).get("type") != "training":
                continue
            if len(data["topology"]["nodes"]) != 1:
                continue  # the guide's rules need one kind of node
            yield path, data


def efficiency(data, gpus, work, **changes):
    d = json.loads(json.dumps(data))
    d.pop("sweep", None)
    if d.get("engine", {}).get("type", "analytic") != "analytic":
        d["engine"] = {"type": "analytic"}  # as the guide searches
    node = d["topology"]["nodes"][0]
    if "nic_gbps" in changes:
        node["nic_bandwidth_gbps"] = changes["nic_gbps"]
    if "batch" in changes:
        d["workload"]["batch_per_gpu"] = changes["batch"]
    d["workload"]["gpus"] = gpus
    node["count"] = changes["nodes"]
    d.get("output", {}).clear()
    path = os.path.join(work, "variant.json")
    json.dump(d, open(path, "w"))
    out = os.path.join(work, "variant-report.json")
    subprocess.run([ddlsim, "run", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
    return json.load(open(out))["jobs"][0]["scaling_efficiency"]


failures, checked = [], 0
with tempfile.TemporaryDirectory() as work:
    for path, data in training_scenarios():
        for target in (0.7, 0.8, 0.9):
            text = subprocess.run([ddlsim, "guide", path, "--target-efficiency", str(target),
                                   "--gpus", str(GPUS), "--max-check-gpus", str(MAX_CHECK)],
                                  check=True, capture_output=True, text=True).stdout
            where = f"{os.path.basename(path)} at {target}"
            m = re.search(r"^# cluster: (\d+) GPUs per node", text, re.M)
            per_node = int(m.group(1))
            nodes = -(-GPUS // per_node)
            # 1. the largest GPU count: E(p) >= target and E(p + one node) < target.
            m = re.search(r"^   answer: (\d+) GPUs \((\d+) nodes?\)$", text, re.M)
            if m:
                p = int(m.group(1))
                at = efficiency(data, p, work, nodes=p // per_node)
                beyond = efficiency(data, p + per_node, work, nodes=p // per_node + 1)
                checked += 1
                if not (at >= target > beyond):
                    failures.append(f"{where}: {p} GPUs: E = {at}, E(+1 node) = {beyond}")
            # 2. the NIC: E(B) >= target and E(B / 1.01) < target (rates printed to 4 digits,
            # so the check allows the last printed digit).
            m = re.search(r"^   answer: ([0-9.e+]+) Gb/s per node \(now", text, re.M)
            if m:
                nics = int(re.search(r"Gb/s per node \((\d+) NICs?\)", text).group(1))
                b = float(m.group(1)) * 1.0005
                at = efficiency(data, GPUS, work, nodes=nodes, nic_gbps=b / nics)
                beyond = efficiency(data, GPUS, work, nodes=nodes, nic_gbps=b / 1.0105 / nics)
                checked += 1
                if not (at >= target > beyond):
                    failures.append(f"{where}: NIC {b} Gb/s: E = {at}, E(B/1.01) = {beyond}")
            # 4. the batch: E(b) >= target and E(b - 1) < target.
            m = re.search(r"^   answer: batch (\d+) per GPU$", text, re.M)
            if m:
                b = int(m.group(1))
                at = efficiency(data, GPUS, work, nodes=nodes, batch=b)
                checked += 1
                if b > 1:
                    beyond = efficiency(data, GPUS, work, nodes=nodes, batch=b - 1)
                    if not (at >= target > beyond):
                        failures.append(f"{where}: batch {b}: E = {at}, E(b-1) = {beyond}")
                elif at < target:
                    failures.append(f"{where}: batch 1: E = {at}")
            for line in re.findall(r"^   simulated: .*$", text, re.M):
                for e, op, t in re.findall(r"E\([^)]*\) = ([0-9.e+-]+) (>=|<) ([0-9.]+)", line):
                    if (float(e) >= float(t)) != (op == ">="):
                        failures.append(f"{where}: the printed check contradicts itself: {line}")

print(f"{checked} guide answers re-simulated")
if failures or checked < 20:
    print("\n".join(failures) or f"too few answers checked ({checked})")
    sys.exit(1)
