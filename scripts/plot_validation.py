#!/usr/bin/python3
"""Plots a validation (the JSON of `ddlsim validate --json`, which `validate --plot` writes and
passes here): measured and simulated time against size, and the error per size.

  scripts/plot_validation.py VALIDATION.json... -o validation.png

One panel pair per file. Uses Debian's matplotlib: run it with /usr/bin/python3.
"""
import argparse
import json
import pathlib
import sys


def load(paths):
    reports = []
    for path in paths:
        try:
            reports.append((path, json.loads(pathlib.Path(path).read_text())))
        except (OSError, json.JSONDecodeError) as error:
            sys.exit(f"plot_validation.py: error: cannot read {path}: {error}")
    return reports


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+")
    parser.add_argument("-o", "--output", default="validation.png")
    args = parser.parse_args()
    reports = load(args.reports)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(reports), figsize=(6.5 * len(reports), 7), squeeze=False,
                             sharex="col", gridspec_kw={"height_ratios": [3, 1.4]})
    for column, (path, report) in enumerate(reports):
        top, bottom = axes[0][column], axes[1][column]
        by_ranks = {}
        for row in report["rows"]:
            by_ranks.setdefault(row["ranks"], []).append(row)
        for ranks, rows in sorted(by_ranks.items()):
            rows.sort(key=lambda r: r["bytes"])
            sizes = [r["bytes"] for r in rows]
            top.plot(sizes, [r["measured_us"] for r in rows], "o", markersize=4,
                     label=f"measured, {ranks} ranks")
            top.plot(sizes, [r["simulated_us"] for r in rows], "-", label=f"simulated, {ranks} ranks")
            bottom.plot(sizes, [r["error_percent"] for r in rows], "o-", markersize=3, label=f"{ranks} ranks")
        summary = report["summary_large"]
        top.set_xscale("log", base=2)
        top.set_yscale("log")
        top.set_ylabel("time (us)")
        top.set_title(f"{report['mode']}\n|error| for sizes >= {report['min_bytes']} B: median "
                      f"{summary['median_abs_error_percent']:.1f}%, max {summary['max_abs_error_percent']:.1f}%",
                      fontsize=9)
        top.grid(True, which="both", alpha=0.3)
        top.legend(fontsize=8)
        bottom.axhline(0, color="black", linewidth=0.8)
        bottom.axvline(report["min_bytes"], color="gray", linestyle=":", linewidth=0.8)
        bottom.set_xscale("log", base=2)
        bottom.set_xlabel("size (bytes)")
        bottom.set_ylabel("error (%)")
        bottom.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
