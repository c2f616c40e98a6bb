#!/usr/bin/env python3
"""Writes the bundled Chakra example trace, scenarios/examples/chakra/tp-dp.<rank>.et.

An illustrative iteration of a 4-layer model on 16 ranks (two 8-GPU nodes): tensor parallel
inside each node (process groups tp0 = ranks 0-7, tp1 = 8-15), data parallel across the nodes
(dp0 = {0, 8}, ..., dp7 = {7, 15}). Per rank: a CPU data-loader op, then per layer a forward
GEMM and the TP all-reduce of its activations, then per layer (last first) a backward GEMM, its
TP all-reduce and the DP all-reduce of the layer's gradients (which overlaps the next backward
GEMM), then the optimizer step after every DP all-reduce. The durations and sizes are made up
for the example (they are no measurement); the sizes follow a 4096-hidden layer with sequence
2048 in bf16: activations 2048 x 4096 x 2 bytes = 16 MiB, a layer's 12 x 4096^2 weights over
8 TP ranks x 2 bytes = 24 MiB of gradients.

The files are encoded here by hand in the protobuf wire format (varint-delimited messages of
Chakra's schema, field numbers from mlcommons/chakra schema/protobuf/et_def.proto), without the
protobuf package, so ddlsim's reader is checked against an encoder of its own.
Run: /usr/bin/python3 scripts/gen_chakra_example.py
"""
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "scenarios", "examples", "chakra")

# Chakra's enums (et_def.proto).
METADATA_NODE, COMP_NODE, COMM_COLL_NODE = 1, 4, 7
ALL_REDUCE = 0


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3 | 0) + varint(value)


def field_bytes(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def attr(name, value):
    """An AttributeProto: name = 1; bool_val = 27, int64_val = 9, string_val = 29."""
    body = field_bytes(1, name.encode())
    if isinstance(value, bool):
        body += field_varint(27, int(value))
    elif isinstance(value, int):
        body += field_varint(9, value)
    else:
        body += field_bytes(29, value.encode())
    return body


def node(node_id, name, node_type, deps=(), micros=0, attrs=()):
    """A Node: id = 1, name = 2, type = 3, data_deps = 5 (packed), duration_micros = 7,
    attr = 10."""
    body = field_varint(1, node_id) + field_bytes(2, name.encode()) + field_varint(3, node_type)
    if deps:
        body += field_bytes(5, b"".join(varint(d) for d in deps))
    if micros:
        body += field_varint(7, micros)
    for a in attrs:
        body += field_bytes(10, a)
    return body


def delimited(message):
    return varint(len(message)) + message


MIB = 1 << 20
LAYERS = 4


def rank_nodes(rank):
    tp = f"tp{rank // 8}"
    dp = f"dp{rank % 8}"
    nodes = []
    next_id = [1]

    def add(name, node_type, deps=(), micros=0, attrs=()):
        node_id = next_id[0]
        next_id[0] += 1
        nodes.append(node(node_id, name, node_type, deps, micros, attrs))
        return node_id

    def gemm(name, micros, deps):
        return add(name, COMP_NODE, deps, micros, [attr("is_cpu_op", False)])

    def all_reduce(name, size, group, deps):
        return add(name, COMM_COLL_NODE, deps, 0,
                   [attr("is_cpu_op", False), attr("comm_type", ALL_REDUCE),
                    attr("comm_size", size), attr("pg_name", group)])

    start = add("iteration", METADATA_NODE)
    last = add("dataloader", COMP_NODE, [start], 50, [attr("is_cpu_op", True)])
    for layer in range(LAYERS):
        last = gemm(f"forward layer {layer}", 300, [last])
        last = all_reduce(f"tp all-reduce forward {layer}", 16 * MIB, tp, [last])
    gradients = []
    for layer in reversed(range(LAYERS)):
        backward = gemm(f"backward layer {layer}", 600, [last])
        last = all_reduce(f"tp all-reduce backward {layer}", 16 * MIB, tp, [backward])
        gradients.append(all_reduce(f"dp all-reduce layer {layer}", 24 * MIB, dp, [backward]))
    gemm("optimizer", 200, [last] + gradients)
    return nodes


def main():
    os.makedirs(OUT, exist_ok=True)
    metadata = field_bytes(1, b"0.0.4")  # GlobalMetadata.version
    for rank in range(16):
        path = os.path.join(OUT, f"tp-dp.{rank}.et")
        with open(path, "wb") as f:
            f.write(delimited(metadata))
            for n in rank_nodes(rank):
                f.write(delimited(n))
    print(f"wrote 16 ranks to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
