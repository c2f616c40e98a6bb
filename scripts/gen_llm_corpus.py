#!/usr/bin/python3
"""Writes scenarios/llm-corpus/NAME.json for every row of tests/data/llm/corpus.tsv.

Each scenario is the row's published setup and nothing else: the node preset times gpus / 8 on a
rail-optimized non-blocking fabric, the model (a zoo name or the row's shape), the layout, batch,
precision and recomputation. No efficiency, calibration or overhead is set: the corpus measures
the out-of-box answer.

A row whose layout the scenario format cannot express yet (interleaved stages beyond the schema's
`vpp` maximum, context parallelism while the schema has no `cp`) gets no file; `unsupported(row)`
says why, and scripts/validate-llm lists such rows as unscored with that reason. The schema is
read, not hard-coded, so the files appear once the format takes the layout: rerun this script.

  gen_llm_corpus.py          write the files (and remove stale ones)
  gen_llm_corpus.py --check  exit 1 when a file is missing, stale or extra (the test runs this)
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "tests", "data", "llm", "corpus.tsv")
OUT = os.path.join(ROOT, "scenarios", "llm-corpus")
SCHEMA = os.path.join(ROOT, "scenarios", "schema", "scenario.schema.json")

FIELDS = ["name", "source", "model", "layers", "hidden", "heads", "kv_heads", "ffn", "ffn_type",
          "vocab", "tied", "seq_len", "gpus", "node", "interconnect", "tp", "pp", "vpp", "cp", "dp",
          "ep", "zero", "sp", "global_batch", "micro_batch", "precision", "recompute", "published",
          "unit", "flops", "source_mfu", "split", "assumed"]
INTEGERS = ["gpus", "tp", "pp", "vpp", "cp", "dp", "ep", "zero", "global_batch", "micro_batch",
            "seq_len"]
SHAPE = ["layers", "hidden", "heads", "kv_heads", "ffn", "vocab"]
UNITS = ("tflops_per_gpu", "tokens_per_s_per_gpu")
FLOPS = ("megatron", "narayanan_full_recompute")
GPUS_PER_NODE = 8  # every node preset the corpus uses (DGX / HGX, 8 GPUs)


class TableError(Exception):
    """A malformed row of corpus.tsv: the message names the file, line and what to fix."""


# Sources whose runs all-gather the distributed optimizer's weights during the next forward pass
# (the corpus header names where each says so).
OVERLAPPED_PARAM_GATHER = {"megatron-h100-2024", "nemo-24.07-h100"}

# Rows whose runs overlap the TP collectives with the GEMMs (--tp-comm-overlap, NeMo's
# ub_tp_comm_overlap): per source, the rows that state it (None: every row); the corpus header
# names where each says so. Set only where the row has tp > 1 and sequence parallelism.
TP_COMM_OVERLAP = {"megatron-h100-2024": None, "nemo-24.07-h100": {"nemo2407-gpt3-20b-64xh100"}}


# Sources whose runs reduce the data-parallel gradients in BF16 rather than the FP32 default
# (NeMo optim.grad_sync_dtype=bf16, Megatron-Bridge ddp.grad_reduce_in_fp32 = False); the corpus
# header names where each says so.
GRAD_REDUCE_BF16 = {"nemo-24.07-h100", "megatron-bridge-25.11-h100"}


def tp_comm_overlap(row):
    """Whether the row's source states that its run overlapped TP communication."""
    if row["source"] not in TP_COMM_OVERLAP or row["tp"] < 2 or row["sp"] != "true":
        return False
    names = TP_COMM_OVERLAP[row["source"]]
    return names is None or row["name"] in names


def read_rows(path=TABLE):
    """The rows of corpus.tsv as dicts ('#' lines are comments), checked for form."""
    rows = []
    with open(path, encoding="utf-8") as table:
        for number, line in enumerate(table, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            where = f"{path}:{number}"
            if len(fields) != len(FIELDS):
                raise TableError(f"{where}: expected {len(FIELDS)} tab-separated fields "
                                 f"({', '.join(FIELDS)}), found {len(fields)}")
            row = dict(zip(FIELDS, fields))
            row["line"] = number
            try:
                for key in INTEGERS:
                    row[key] = int(row[key])
                row["published"] = float(row["published"])
                if row["model"] == "inline":
                    for key in SHAPE:
                        row[key] = int(row[key])
            except ValueError as error:
                raise TableError(f"{where}: {row['name']}: {error}")
            if row["unit"] not in UNITS:
                raise TableError(f"{where}: {row['name']}: unit must be one of {UNITS}")
            if row["unit"] == "tflops_per_gpu" and row["flops"] not in FLOPS:
                raise TableError(f"{where}: {row['name']}: a TFLOP/s row names how its source "
                                 f"counts FLOPs, one of {FLOPS}")
            if row["split"] not in ("modelling", "holdout"):
                raise TableError(f"{where}: {row['name']}: split must be modelling or holdout")
            layout = row["tp"] * row["pp"] * row["cp"] * row["dp"]
            if layout != row["gpus"] or row["gpus"] % GPUS_PER_NODE:
                raise TableError(f"{where}: {row['name']}: tp x pp x cp x dp = {layout} must equal "
                                 f"gpus {row['gpus']}, a multiple of {GPUS_PER_NODE}")
            rows.append(row)
    names = [r["name"] for r in rows]
    for name in names:
        if names.count(name) > 1:
            raise TableError(f"{path}: the name {name} is used twice")
    return rows


def split_errors(rows):
    """Rows whose split column breaks the rule in the table's header: within each source, in
    table order, every third row (3rd, 6th, ...) is held out."""
    seen, wrong = {}, []
    for row in rows:
        seen[row["source"]] = seen.get(row["source"], 0) + 1
        expected = "holdout" if seen[row["source"]] % 3 == 0 else "modelling"
        if row["split"] != expected:
            wrong.append(f"{row['name']}: split is {row['split']}, the rule says {expected}")
    return wrong


def schema_limits():
    """What the scenario format takes today: the largest vpp, and whether it knows cp."""
    with open(SCHEMA, encoding="utf-8") as source:
        schema = json.load(source)
    parallel = schema["$defs"]["llm_workload"]["properties"]["parallel"]["properties"]
    return {"vpp": parallel.get("vpp", {}).get("maximum"), "cp": "cp" in parallel}


def unsupported(row, limits=None):
    """Why the scenario format cannot express this row's published layout yet, or None."""
    limits = limits or schema_limits()
    if limits["vpp"] is not None and row["vpp"] > limits["vpp"]:
        return (f"vpp {row['vpp']}: interleaved 1F1B is not modelled by this build (the schema "
                f"takes vpp <= {limits['vpp']})")
    if row["cp"] > 1 and not limits["cp"]:
        return f"cp {row['cp']}: context parallelism is not modelled by this build"
    return None


def scenario(row):
    """The scenario document of one row."""
    if row["model"] == "inline":
        model = {"name": row["name"], "layers": row["layers"], "hidden": row["hidden"],
                 "heads": row["heads"], "kv_heads": row["kv_heads"], "ffn": row["ffn"],
                 "seq_len": row["seq_len"], "vocab": row["vocab"], "ffn_type": row["ffn_type"],
                 "tied_embeddings": row["tied"] == "true"}
    else:
        model = row["model"]
    parallel = {"tp": row["tp"], "pp": row["pp"], "dp": row["dp"]}
    if row["vpp"] > 1:
        parallel["vpp"] = row["vpp"]
    if row["cp"] > 1:
        parallel["cp"] = row["cp"]
    if row["ep"] > 1:
        parallel["ep"] = row["ep"]
    parallel["zero"] = row["zero"]
    parallel["sequence_parallel"] = row["sp"] == "true"
    if row["source"] in OVERLAPPED_PARAM_GATHER and row["zero"] in (1, 2):
        parallel["overlap_param_gather"] = True
    if tp_comm_overlap(row):
        parallel["tp_comm_overlap"] = True
    workload = {"type": "llm_training", "model": model, "parallel": parallel,
                "global_batch": row["global_batch"], "micro_batch": row["micro_batch"],
                "precision": row["precision"], "recompute": row["recompute"]}
    if row["source"] in GRAD_REDUCE_BF16 and row["precision"] in ("bf16", "fp8"):
        workload["grad_reduce_dtype"] = "bf16"
    if row["model"] != "inline":
        workload["seq_len"] = row["seq_len"]
    nodes = row["gpus"] // GPUS_PER_NODE
    fabric = {"type": "single_switch"} if nodes == 1 else {"type": "rail_optimized", "rail_spines": 8}
    published = (f"{row['published']:g} "
                 + ("TFLOP/s per GPU" if row["unit"] == "tflops_per_gpu" else "tokens/s per GPU"))
    return {
        "$schema": "../schema/scenario.schema.json",
        "name": f"{row['name']}: published {published} ({row['source']})",
        "description": (
            f"Generated by scripts/gen_llm_corpus.py from tests/data/llm/corpus.tsv (row "
            f"{row['name']}; its source and the reasons for assumed fields are in that file's "
            f"header). Published system: {row['interconnect']}. Modelled as {nodes} x "
            f"{row['node']} on a rail-optimized non-blocking fabric (NVIDIA's reference "
            f"architectures: full non-blocking fat tree, rail-optimized). Assumed (not in the "
            f"source): {row['assumed'] or 'nothing'}. Spec only: no calibration or efficiency."),
        "topology": {"nodes": [{"preset": row["node"], "count": nodes}], "fabric": fabric},
        "workload": workload,
        "engine": {"type": "analytic"},
    }


def render(row):
    return json.dumps(scenario(row), indent=2) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a scenario is missing, stale or extra; write nothing")
    args = parser.parse_args()
    try:
        rows = read_rows()
    except TableError as error:
        sys.exit(f"gen_llm_corpus: error: {error}")
    wrong = split_errors(rows)
    if wrong:
        sys.exit("gen_llm_corpus: error: the split column breaks the hold-out rule:\n  "
                 + "\n  ".join(wrong))
    limits = schema_limits()
    wanted = {row["name"] + ".json": render(row) for row in rows if not unsupported(row, limits)}
    present = set(os.listdir(OUT)) if os.path.isdir(OUT) else set()
    problems = []
    for name, text in sorted(wanted.items()):
        path = os.path.join(OUT, name)
        current = open(path, encoding="utf-8").read() if name in present else None
        if current != text:
            problems.append(("missing " if current is None else "stale ") + path)
            if not args.check:
                os.makedirs(OUT, exist_ok=True)
                with open(path, "w", encoding="utf-8") as out:
                    out.write(text)
    for name in sorted(present - set(wanted)):
        if name.endswith(".json"):
            problems.append("extra " + os.path.join(OUT, name))
            if not args.check:
                os.remove(os.path.join(OUT, name))
    if args.check:
        if problems:
            sys.exit("gen_llm_corpus: scenarios/llm-corpus is out of date with corpus.tsv and the "
                     "schema (run scripts/gen_llm_corpus.py):\n  " + "\n  ".join(problems))
        print(f"gen_llm_corpus: {len(wanted)} scenarios up to date, "
              f"{len(rows) - len(wanted)} rows the format cannot express yet")
        return 0
    print(f"gen_llm_corpus: wrote {len(problems)} changes; {len(wanted)} scenarios, "
          f"{len(rows) - len(wanted)} rows the format cannot express yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
