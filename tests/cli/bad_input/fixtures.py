#!/usr/bin/env python3
"""Writes the input files of the bad-input corpus (cases.txt) into the current folder.

Scenarios are a small valid one (base.json: 16 cloud V100 on one switch, a 1 MiB ring
all-reduce) with one thing broken each; logs are a small valid nccl-tests table with one thing
broken each. Each variant breaks exactly one rule, so that a case's message can name it.
Usage: fixtures.py SCENARIOS_DIR (the repository's scenarios/, for "include" and $schema).
"""
import copy
import json
import os
import sys

scenarios = os.path.abspath(sys.argv[1])

BASE = {
    "name": "bad-input corpus base",
    "topology": {
        "nodes": [{"preset": "cloud-8xv100-25g", "count": 2}],
        "fabric": {"type": "single_switch", "latency_ns": 5000},
    },
    "workload": {
        "type": "collective",
        "op": "all_reduce",
        "algorithm": "ring",
        "dtype": "fp32",
        "sizes": ["1MiB"],
    },
    "engine": {"type": "analytic"},
    "seed": 1,
}

CUSTOM_NODE = {
    "gpus": 2,
    "gpu_model": "V100",
    "intra": "pcie_only",
    "pcie_bandwidth_gbps": 128,
    "nic_bandwidth_gbps": 100,
    "count": 2,
}

TRAINING = {
    "type": "training",
    "jobs": [{"model": "resnet50", "gpu": "V100", "batch_per_gpu": 32}],
}


def write(name, data):
    if isinstance(data, bytes):
        with open(name, "wb") as f:
            f.write(data)
        return
    with open(name, "w") as f:
        if isinstance(data, str):
            f.write(data)
        else:
            json.dump(data, f, indent=1)


def set_pointer(doc, pointer, value, delete=False):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    node = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    last = parts[-1]
    if isinstance(node, list):
        if delete:
            del node[int(last)]
        else:
            node[int(last)] = value
    elif delete:
        node.pop(last, None)
    else:
        node[last] = value


def variant(name, *changes, base=BASE):
    doc = copy.deepcopy(base)
    for change in changes:
        if len(change) == 1:
            set_pointer(doc, change[0], None, delete=True)
        else:
            set_pointer(doc, change[0], change[1])
    write(name, doc)


write("base.json", BASE)
# Time that cannot be counted: a transfer longer than an engine's 2^62 ps.
for engine in ("analytic", "flow", "packet"):
    for gbps, tag in ((1e-9, "1e-9"), (1e-11, "1e-11")):
        variant(f"slow-nic-{tag}-{engine}.json", ("/topology/nodes/0/nic_bandwidth_gbps", gbps),
                ("/engine", {"type": engine}))
    # 2.4e-9 Gb/s: one 1 MiB transfer takes 40 days (the loader passes it), the ring 2 x that.
    # (The packet engine without retransmission: its 1 ms RTO would fire every millisecond of
    # a packet that takes hours to serialise, and the run crawl through timeouts.)
    spec = {"type": engine}
    if engine == "packet":
        spec["transport"] = {"reliable": False}
    variant(f"slow-ring-{engine}.json", ("/topology/nodes/0/nic_bandwidth_gbps", 2.4e-9),
            ("/engine", spec))
variant("slow-fabric.json", ("/topology/fabric/bandwidth_gbps", 1e-12),
        ("/topology/fabric/type", "leaf_spine"), ("/topology/fabric/spines", 1),
        ("/topology/fabric/leaves", 1))
variant("slow-nvlink.json", ("/topology/nodes/0/nvlink_bandwidth_gbps", 1e-12))
variant("slow-pcie.json", ("/topology/nodes/0/pcie_bandwidth_gbps", 1e-12))
variant("slow-sweep.json", ("/sweep", [{"set": "/topology/nodes/0/nic_bandwidth_gbps",
                                        "values": [25, 1e-12]}]))
# Values out of range or of the wrong type.
variant("zero-nic.json", ("/topology/nodes/0/nic_bandwidth_gbps", 0))
variant("negative-nic.json", ("/topology/nodes/0/nic_bandwidth_gbps", -25))
variant("huge-nic.json", ("/topology/nodes/0/nic_bandwidth_gbps", 1e300))
variant("string-nic.json", ("/topology/nodes/0/nic_bandwidth_gbps", "fast"))
variant("negative-latency.json", ("/topology/fabric/latency_ns", -1))
variant("huge-latency.json", ("/topology/fabric/latency_ns", 1e30))
variant("zero-count.json", ("/topology/nodes/0/count", 0))
variant("fractional-count.json", ("/topology/nodes/0/count", 1.5))
variant("huge-count.json", ("/topology/nodes/0/count", 10**12))
variant("bool-count.json", ("/topology/nodes/0/count", True))
variant("unknown-preset.json", ("/topology/nodes/0/preset", "dgx-a1000"))
variant("unknown-fabric.json", ("/topology/fabric/type", "leaf_spin"))
variant("unknown-op.json", ("/workload/op", "all_reduc"))
variant("unknown-algorithm.json", ("/workload/algorithm", "rnig"))
variant("unknown-dtype.json", ("/workload/dtype", "fp64"))
variant("unknown-engine.json", ("/engine/type", "quantum"))
variant("unknown-workload-type.json", ("/workload/type", "inference"))
variant("unknown-top-key.json", ("/topolgy", {}))
variant("unknown-workload-key.json", ("/workload/szes", ["1MiB"]))
variant("missing-topology.json", ("/topology",))
variant("missing-workload.json", ("/workload",))
variant("missing-sizes.json", ("/workload/sizes",))
variant("missing-op.json", ("/workload/op",))
variant("missing-nodes.json", ("/topology/nodes",))
variant("empty-nodes.json", ("/topology/nodes", []))
variant("empty-sizes.json", ("/workload/sizes", []))
variant("bad-size-string.json", ("/workload/sizes", ["1 MiBB"]))
variant("negative-size.json", ("/workload/sizes", [-8]))
variant("odd-size.json", ("/workload/sizes", [6]))
variant("huge-size.json", ("/workload/sizes", ["1EiB"]))
variant("bad-range.json", ("/workload/sizes", {"from": "1MiB", "to": "1KiB"}))
variant("bad-factor.json", ("/workload/sizes", {"from": "1KiB", "to": "1MiB", "factor": 1}))
variant("too-many-ranks.json", ("/workload/ranks", 1000))
variant("bad-root.json", ("/workload/op", "broadcast"), ("/workload/root", 64))
variant("negative-seed.json", ("/seed", -1))
variant("string-seed.json", ("/seed", "one"))
variant("bad-chunks.json", ("/workload/params", {"chunks": 0}))
variant("bad-channels.json", ("/workload/params", {"channels": 100000}))
variant("bad-density.json", ("/workload/params", {"density": 2}))
variant("unknown-param.json", ("/workload/params", {"chunkz": 4}))
variant("bad-include.json", ("/include", "no-such-preset"))
variant("include-missing-file.json", ("/include", "./nowhere/missing.json"))
variant("self-include.json", ("/include", "./self-include.json"))
variant("bad-calibration-file.json", ("/calibration", "missing-calibration.json"))
variant("bad-sweep-pointer.json", ("/sweep", [{"set": "no-slash", "values": [1]}]))
variant("bad-sweep-value.json", ("/sweep", [{"set": "/topology/nodes/0/nic_bandwidth_gbps",
                                             "values": [25, -1]}]))
variant("sweep-of-sweep.json", ("/sweep", [{"set": "/sweep", "values": [1]}]))
variant("empty-sweep-values.json", ("/sweep", [{"set": "/seed", "values": []}]))
variant("bad-output.json", ("/output", {"json": ""}))
variant("bad-plan-goal.json", ("/plan", {"goals": {"min_scaling_efficiency": 2}}))
variant("bad-plan-prefer.json", ("/plan", {"prefer": "speed"}))
variant("plan-both-prices.json", ("/plan", {"price": {"per_gpu_hour": 1, "per_node_hour": 8}}))
variant("custom-node-missing-gpus.json",
        ("/topology/nodes", [{k: v for k, v in CUSTOM_NODE.items() if k != "gpus"}]))
variant("custom-node-typo.json",
        ("/topology/nodes", [dict(CUSTOM_NODE, **{"nic_bandwith_gbps": 100})]))
variant("custom-node-bad-intra.json", ("/topology/nodes", [dict(CUSTOM_NODE, intra="nvlinc")]))
variant("custom-node-zero-gpus.json", ("/topology/nodes", [dict(CUSTOM_NODE, gpus=0)]))
variant("leaf-spine-bad-leaves.json", ("/topology/fabric", {"type": "leaf_spine", "leaves": -2}))
variant("torus-bad-dims.json", ("/topology/fabric", {"type": "torus2d", "dims": [3, 3]}))
variant("fat-tree-odd-k.json", ("/topology/fabric", {"type": "fat_tree", "k": 3}))
variant("packet-bad-mtu.json", ("/engine", {"type": "packet", "mtu_bytes": 10}))
variant("packet-unknown-key.json", ("/engine", {"type": "packet", "mtu": 4096}))
variant("packet-bad-cc.json",
        ("/engine", {"type": "packet", "transport": {"congestion_control": "cubic"}}))
variant("flow-bad-model.json", ("/engine", {"type": "flow", "network_model": "lv09"}))
variant("engine-bad-overhead.json", ("/engine", {"type": "analytic", "per_step_overhead_ns": -5}))
variant("nccl-bad-protocol.json", ("/workload/algorithm", "nccl"),
        ("/workload/nccl", {"protocol": "ll256"}))
variant("training-no-jobs.json", ("/workload", {"type": "training", "jobs": []}))
variant("training-unknown-model.json",
        ("/workload", dict(TRAINING, jobs=[dict(TRAINING["jobs"][0], model="resnet5O")])))
variant("training-bad-batch.json",
        ("/workload", dict(TRAINING, jobs=[dict(TRAINING["jobs"][0], batch_per_gpu=0)])))
variant("training-bad-gpu.json",
        ("/workload", dict(TRAINING, jobs=[dict(TRAINING["jobs"][0], gpu="V1000")])))
variant("training-bad-iterations.json",
        ("/workload", dict(TRAINING, jobs=[dict(TRAINING["jobs"][0]), ], iterations=0)))
variant("training-ok.json", ("/workload", TRAINING))
variant("four-by-two.json", ("/topology/nodes", [dict(CUSTOM_NODE, gpus=4)]))
variant("name-number.json", ("/name", 5))
variant("links-on-training.json", ("/workload", TRAINING))

# Not JSON, or JSON that is not a scenario.
write("empty.json", "")
write("whitespace.json", "   \n\t\n")
write("not-json.json", "topology: 16 nodes\n")
write("truncated.json", json.dumps(BASE)[:-20])
write("trailing-comma.json", '{"name": "x",}')
write("array-root.json", "[1, 2, 3]")
write("number-root.json", "42")
write("string-root.json", '"scenario"')
write("null-root.json", "null")
write("nan.json", json.dumps(BASE).replace('"seed": 1', '"seed": NaN'))
write("inf-number.json", json.dumps(BASE).replace('"latency_ns": 5000', '"latency_ns": 1e999'))
write("binary.json", "\x00\x01\x02\x03\xff\xfe")
write("bad-utf8.json", b'{"name": "\xff\xfe"}')
write("two-documents.json", json.dumps(BASE) + "\n" + json.dumps(BASE))
write("single-quotes.json", "{'name': 'x'}")
write("deep-array.json", "[" * 100000 + "]" * 100000)
write("deep-object.json", '{"a":' * 300 + "1" + "}" * 300)
write("dup-nested.json", json.dumps(BASE).replace('"op": "all_reduce"',
                                                  '"op": "all_reduce", "op": "broadcast"'))
write("dup-top.json", json.dumps(BASE).replace('"seed": 1', '"seed": 1, "seed": 2'))
write("long-string.json", json.dumps(dict(BASE, name="x" * 2_000_000)))

# Things that are not what the command reads.
write("calibration-bad.json", '{"format": 99}')
write("calibration-notjson.json", "not a calibration")
write("schedule-notjson.json", "not a schedule")
write("schedule-wrong.json", '{"ranks": -1}')
write("report-wrong.json", '{"kind": "something else"}')

# nccl-tests logs.
HEADER = """# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
{devices}#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
ROWS = [
    (8, 48.46), (1024, 48.88), (65536, 52.78), (262144, 60.26), (1048576, 89.27),
    (4194304, 147.4), (16777216, 324.1), (67108864, 992.7), (134217728, 1818.8),
]


def devices(gpu, ranks=8, hosts=1):
    per_host = ranks // hosts
    return "".join(f"#   Rank {r:2d} Pid    746 on node{r // per_host} device {r % per_host:2d}"
                   f" [0x4f] {gpu}\n" for r in range(ranks))


def row(size, us, size_text=None, time_text=None):
    algbw = size / us / 1e3
    busbw = algbw * 2 * 7 / 8
    return (f"{size_text or size:>12} {size // 4:>13}   float     sum {time_text or us:>8}"
            f" {algbw:7.2f} {busbw:7.2f}  2e-07 {us:>8} {algbw:7.2f} {busbw:7.2f}  2e-07\n")


def log(gpu="Tesla V100-SXM2-16GB", rows=ROWS, ranks=8, tool=True, extra_rows="", hosts=1):
    text = "$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8\n" if tool else ""
    text += HEADER.format(devices=devices(gpu, ranks, hosts))
    text += "".join(row(s, t) for s, t in rows) + extra_rows
    return text + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 40.0\n"


write("v100.txt", log())
write("a100.txt", log(gpu="NVIDIA A100-SXM4-40GB"))
write("one-row.txt", log(rows=ROWS[4:5]))
write("two-rows.txt", log(rows=ROWS[3:5]))
write("bad-size-row.txt", log(rows=ROWS[:4], extra_rows=row(1048576, 89.27, size_text="1M?")))
write("bad-time-row.txt", log(rows=ROWS[:4], extra_rows=row(1048576, 89.27, time_text="fast")))
write("zero-time-row.txt", log(rows=ROWS[:4], extra_rows=row(1048576, 89.27, time_text="0")))
write("short-row.txt", log(rows=ROWS[:4], extra_rows="     1048576        262144   float\n"))
write("header-only.txt", log(rows=[]))
write("no-table.txt", "this is not an nccl-tests log\nat all\n")
write("no-tool.txt", log(tool=False).replace("all_reduce_perf", ""))
write("4-ranks.txt", log(ranks=4))
write("16-ranks.txt", log(ranks=16))
write("2-nodes.txt", log(hosts=2))
