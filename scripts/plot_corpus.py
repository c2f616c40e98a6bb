#!/usr/bin/python3
"""Plots the corpus validation (the report `scripts/validate-corpus --json` writes, which
`validate-corpus --plot DIR` passes here): signed error against size.

  scripts/plot_corpus.py CORPUS.json DIR

Writes DIR/system-NAME.png per system (out of the box, and where fitted the k-fold and
extrapolation predictions) and DIR/overall-ALGORITHM-PROTOCOL.png per algorithm/protocol the
model chose out of the box, with every system's points of that choice. Uses Debian's
matplotlib: run it with /usr/bin/python3.
"""
import argparse
import json
import os
import re
import sys

SMALL_LIMIT = 64 * 1024


def safe(name):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def series(rows):
    rows = sorted(rows, key=lambda row: row["bytes"])
    return [row["bytes"] for row in rows], [row["error_percent"] for row in rows]


def style(axis, title):
    axis.set_xscale("log", base=2)
    axis.axhline(0, color="black", linewidth=0.8)
    axis.axvline(SMALL_LIMIT, color="grey", linewidth=0.8, linestyle=":")
    axis.set_xlabel("size (bytes)")
    axis.set_ylabel("error % (simulated - measured) / measured")
    axis.set_title(title, fontsize=9)
    axis.grid(True, which="major", alpha=0.3)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    parser.add_argument("directory")
    args = parser.parse_args()
    try:
        with open(args.report, encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        sys.exit(f"plot_corpus.py: error: cannot read {args.report}: {error}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(args.directory, exist_ok=True)
    written = []
    by_choice = {}
    for system in report["systems"]:
        figure, axis = plt.subplots(figsize=(7, 4.5))
        sizes, errors = series(system["rows"])
        axis.plot(sizes, errors, "o-", label="out of the box", markersize=4)
        for key, label, marker in (("kfold", f"k-fold (k={report.get('folds', 4)})", "s"),
                                   ("extrapolation", "extrapolation (fit <= largest/4)", "^")):
            if system.get(key + "_rows"):
                sizes, errors = series(system[key + "_rows"])
                mismatch = " (model mismatch)" if system.get("fit") == "mismatch" else ""
                axis.plot(sizes, errors, marker + "--", label=label + mismatch, markersize=4)
        style(axis, f"{system['name']} ({system['op']})")
        axis.legend(fontsize=8)
        path = os.path.join(args.directory, f"system-{safe(system['name'])}.png")
        figure.tight_layout()
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
        for row in system["rows"]:
            choice = f"{row.get('algorithm') or 'unknown'}-{row.get('protocol') or 'unknown'}"
            by_choice.setdefault(choice, {}).setdefault(system["name"], []).append(row)
    for choice, systems in sorted(by_choice.items()):
        figure, axis = plt.subplots(figsize=(8, 5))
        for name, rows in sorted(systems.items()):
            sizes, errors = series(rows)
            axis.plot(sizes, errors, "o", label=name, markersize=4)
        style(axis, f"out of the box, {report['set']} set: points where the model chose "
                    f"{choice.replace('-', '/')}")
        axis.legend(fontsize=6, loc="best")
        path = os.path.join(args.directory, f"overall-{safe(choice)}.png")
        figure.tight_layout()
        figure.savefig(path, dpi=110)
        plt.close(figure)
        written.append(path)
    for path in written:
        print(f"# wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
