#!/usr/bin/env python3
"""Every `ddlsim guide` answer passes its own simulated check, checked independently.

For each bundled training scenario and targets 0.7 / 0.8 / 0.9, the guide answers on 16 GPUs
(searches capped at 128 GPUs to keep the test short). Its GPU-count, NIC, parameter-server and
batch answers are then re-run with `ddlsim run` on the scenario changed to the answer and to one
step beyond it (analytic engine, as the guide searches): the efficiency must reach the target at
the answer and miss it one step beyond; an answer at the search's limit ("at least N GPUs") must
reach it at N. On a mixed cluster a job of p GPUs takes the first p GPUs, whole nodes
in rank order (more nodes of the last group past the end), and a NIC answer is one factor on every
node's NICs. Usage: guide_self_check.py DDLSIM SCENARIOS_DIR
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
            yield path, data


def sizes_for(data):
    """(GPUs asked about, --max-check-gpus). Many concurrent streams
    (papers/dlcp-layer-priority-training: 64) share every link at once, and the analytic engine's
    max-min sharing costs grow about as p^2 with them: one simulation of that scenario takes 0.5,
    2.1 and 10.2 CPU s on 16, 32 and 64 hosts (ddlsim run), and a guide answer takes 5-25 of them.
    Such a job is asked about at its own size, 8 GPUs, with searches capped at 16."""
    if data["workload"].get("framework", {}).get("streams", 1) > 8:
        return 8, 16
    return GPUS, MAX_CHECK


def groups_of(text, data):
    """[(count, GPUs per node, NICs per node, Gb/s per node)] in rank order, from the report."""
    m = re.search(r"^# mixed cluster, in rank order: (.*?); a job", text, re.M)
    if not m:
        per_node = int(re.search(r"^# cluster: (\d+) GPUs per node", text, re.M).group(1))
        return [(data["topology"]["nodes"][0].get("count", 1), per_node, None, None)]
    return [(int(c), int(g), int(n), float(b)) for c, g, b, n in re.findall(
        r"group \d+: (\d+) x (\d+) \S+, NIC ([0-9.e+]+) Gb/s per node \((\d+) NICs?\)",
        m.group(1))]


def first_nodes(groups, nodes):
    """Per group, the count of the first `nodes` nodes in rank order (the last group grows)."""
    counts = []
    for i, (count, *_rest) in enumerate(groups):
        take = nodes if i == len(groups) - 1 else min(nodes, count)
        if take == 0:
            break
        counts.append(take)
        nodes -= take
    return counts


def gpus_on(groups, nodes):
    return sum(c * groups[i][1] for i, c in enumerate(first_nodes(groups, nodes)))


def efficiency(data, gpus, work, groups, **changes):
    d = json.loads(json.dumps(data))
    d.pop("sweep", None)
    if d.get("engine", {}).get("type", "analytic") != "analytic":
        d["engine"] = {"type": "analytic"}  # as the guide searches
    counts = first_nodes(groups, changes["nodes"])
    d["topology"]["nodes"] = d["topology"]["nodes"][:len(counts)]
    for node, count in zip(d["topology"]["nodes"], counts):
        node["count"] = count
    node = d["topology"]["nodes"][0]
    if "nic_gbps" in changes:
        node["nic_bandwidth_gbps"] = changes["nic_gbps"]
    if "nic_factor" in changes:  # a mixed cluster: every node's NICs scaled
        for i, group in enumerate(d["topology"]["nodes"]):
            group["nic_bandwidth_gbps"] = groups[i][3] / groups[i][2] * changes["nic_factor"]
    if "batch" in changes:
        d["workload"]["batch_per_gpu"] = changes["batch"]
    if "servers" in changes:  # on the GPUs after the job's, as the guide places them
        d["workload"]["algorithm"] = "parameter_server"
        d["workload"]["parameter_servers"] = changes["servers"]
        d["workload"].setdefault("params", {})["dedicated_servers"] = True
    d["workload"]["gpus"] = gpus
    d.get("output", {}).clear()
    path = os.path.join(work, "variant.json")
    json.dump(d, open(path, "w"))
    out = os.path.join(work, "variant-report.json")
    subprocess.run([ddlsim, "run", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
    return json.load(open(out))["jobs"][0]["scaling_efficiency"]


failures, checked = [], 0
with tempfile.TemporaryDirectory() as work:
    for path, data in training_scenarios():
        gpus, max_check = sizes_for(data)
        for target in (0.7, 0.8, 0.9):
            text = subprocess.run([ddlsim, "guide", path, "--target-efficiency", str(target),
                                   "--gpus", str(gpus), "--max-check-gpus", str(max_check)],
                                  check=True, capture_output=True, text=True).stdout
            where = f"{os.path.basename(path)} at {target}"
            groups = groups_of(text, data)
            nodes = next(n for n in range(1, gpus + 1) if gpus_on(groups, n) >= gpus)
            # 1. the largest GPU count: E(p) >= target and E(p + one node) < target.
            m = re.search(r"^   answer: (\d+) GPUs \((\d+) nodes?\)$", text, re.M)
            if m:
                p, n = int(m.group(1)), int(m.group(2))
                if gpus_on(groups, n) != p:
                    failures.append(f"{where}: {p} GPUs are not the first {n} nodes' GPUs")
                at = efficiency(data, p, work, groups, nodes=n)
                beyond = efficiency(data, gpus_on(groups, n + 1), work, groups, nodes=n + 1)
                checked += 1
                if not (at >= target > beyond):
                    failures.append(f"{where}: {p} GPUs: E = {at}, E(+1 node) = {beyond}")
            # ... or, at the search's limit, E(p) >= target.
            m = re.search(r"^   answer: at least (\d+) GPUs \((\d+) nodes?\): the search stops",
                          text, re.M)
            if m:
                p, n = int(m.group(1)), int(m.group(2))
                at = efficiency(data, p, work, groups, nodes=n)
                checked += 1
                if not (p <= max_check and at >= target):
                    failures.append(f"{where}: at least {p} GPUs: E = {at}")
            # 2. the NIC: E(B) >= target and E(B / 1.01) < target (rates printed to 4 digits,
            # so the check allows the last printed digit).
            m = re.search(r"^   answer: ([0-9.e+]+) Gb/s per node \(now", text, re.M)
            if m:
                nics = int(re.search(r"Gb/s per node \((\d+) NICs?\)", text).group(1))
                b = float(m.group(1)) * 1.0005
                at = efficiency(data, gpus, work, groups, nodes=nodes, nic_gbps=b / nics)
                beyond = efficiency(data, gpus, work, groups, nodes=nodes,
                                    nic_gbps=b / 1.0105 / nics)
                checked += 1
                if not (at >= target > beyond):
                    failures.append(f"{where}: NIC {b} Gb/s: E = {at}, E(B/1.01) = {beyond}")
            m = re.search(r"^   answer: ([0-9.e+]+)x today's NIC bandwidth on every node", text,
                          re.M)
            if m:
                f = float(m.group(1)) * 1.0005
                at = efficiency(data, gpus, work, groups, nodes=nodes, nic_factor=f)
                beyond = efficiency(data, gpus, work, groups, nodes=nodes, nic_factor=f / 1.0105)
                checked += 1
                if not (at >= target > beyond):
                    failures.append(f"{where}: NIC x{f}: E = {at}, E(x/1.01) = {beyond}")
            # 3. the parameter servers: E(S) >= target and E(S - 1) < target, the servers on the
            # GPUs after the job's.
            m = re.search(r"^   answer: (\d+) servers?$", text, re.M)
            if m:
                servers = int(m.group(1))
                at_nodes = lambda s: next(n for n in range(1, gpus + s + 1)
                                          if gpus_on(groups, n) >= gpus + s)
                at = efficiency(data, gpus, work, groups, nodes=at_nodes(servers), servers=servers)
                checked += 1
                if servers > 1:
                    beyond = efficiency(data, gpus, work, groups, nodes=at_nodes(servers - 1),
                                        servers=servers - 1)
                    if not (at >= target > beyond):
                        failures.append(f"{where}: {servers} servers: E = {at}, E(S-1) = {beyond}")
                elif at < target:
                    failures.append(f"{where}: 1 server: E = {at}")
            # 4. the batch: E(b) >= target and E(b - 1) < target.
            m = re.search(r"^   answer: batch (\d+) per GPU$", text, re.M)
            if m:
                b = int(m.group(1))
                at = efficiency(data, gpus, work, groups, nodes=nodes, batch=b)
                checked += 1
                if b > 1:
                    beyond = efficiency(data, gpus, work, groups, nodes=nodes, batch=b - 1)
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
