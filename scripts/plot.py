#!/usr/bin/python3
"""Plots and compares ddlsim reports (the JSON of `ddlsim run --json`).

  scripts/plot.py busbw REPORT.json... -o busbw.png
      Prints, per scenario, a table of time per size for each algorithm, and writes a figure of
      bus bandwidth against size: one panel per scenario, one line per algorithm.

  scripts/plot.py throughput TRAINING_REPORT.json... -o throughput.png
      For reports of training workloads: prints, per scenario, samples/s and scaling efficiency
      against the GPU count for each all-reduce algorithm, and writes a figure of throughput
      against GPUs (one panel per scenario, one line per algorithm, the ideal linear scaling
      dashed).

  scripts/plot.py plan PLAN.json -o plan.png
      For `ddlsim plan --json`: two panels. Left, throughput (samples/s; for collective
      workloads 1 / time) against GPUs, one line per configuration (the settings other than the
      GPU count). Right, cost (or GPU-hours) against time, the Pareto front marked and joined,
      the recommended point circled.

  scripts/plot.py jobs JOB_TRACE_REPORT.json... -o jobs.png
      For reports of job_trace workloads (a shared cluster over time): prints per report the
      makespan, utilisation, mean wait and slowdown, and writes one timeline per report (a bar
      per job: waiting light, running coloured by slowdown against running alone) above the
      busy GPUs over time. Several reports (e.g. two placements of one trace) share the axes.

Uses Debian's matplotlib: run it with /usr/bin/python3.
"""
import argparse
import collections
import json
import pathlib
import sys


def load(paths):
    reports = []
    for path in paths:
        try:
            reports.append(json.loads(pathlib.Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as error:
            sys.exit(f"plot.py: error: cannot read report {path}: {error}")
    return reports


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:g} {unit}" if n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def by_scenario(reports):
    grouped = collections.OrderedDict()
    for report in reports:
        grouped.setdefault(report["scenario"], []).append(report)
    return grouped


def algorithm_of(report):
    names = {row["algorithm"] for row in report["results"]}
    return names.pop() if len(names) == 1 else "auto"


def print_tables(grouped):
    for scenario, reports in grouped.items():
        algorithms = [algorithm_of(r) for r in reports]
        print(f"\n{scenario}: time per all-reduce (ms); busbw (GB/s) in brackets")
        print(f"{'size':>10}" + "".join(f"{a:>26}" for a in algorithms) + "   fastest")
        sizes = [row["bytes"] for row in reports[0]["results"]]
        for i, size in enumerate(sizes):
            cells, best = [], None
            for algorithm, report in zip(algorithms, reports):
                row = report["results"][i]
                cells.append(f"{row['time_us'] / 1e3:14.3f} [{row['busbw_gbytes_per_second']:7.2f}]")
                if best is None or row["time_us"] < best[1]:
                    best = (algorithm, row["time_us"])
            print(f"{human_bytes(size):>10}" + "".join(f"{c:>26}" for c in cells) + f"   {best[0]}")


def plot_busbw(grouped, output):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(grouped), figsize=(6.5 * len(grouped), 4.5), squeeze=False)
    for axis, (scenario, reports) in zip(axes[0], grouped.items()):
        for report in reports:
            rows = report["results"]
            axis.plot([r["bytes"] for r in rows], [r["busbw_gbytes_per_second"] for r in rows],
                      marker="o", markersize=3, label=algorithm_of(report))
        axis.set_xscale("log", base=2)
        axis.set_xlabel("size per rank (bytes)")
        axis.set_ylabel("bus bandwidth (GB/s; lossy algorithms: dense equivalent)")
        axis.set_title(f"{scenario}\n{reports[0]['ranks']} ranks, {reports[0]['engine']} engine", fontsize=9)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    print(f"\nwrote {output}")


def training_points(reports):
    """{scenario: {algorithm: [(gpus, samples/s, efficiency, single-GPU sum)]}} from job 0."""
    points = collections.defaultdict(lambda: collections.defaultdict(list))
    for report in reports:
        if report.get("workload") != "training":
            sys.exit(f"plot.py: error: report of {report.get('scenario')} is not a training report")
        job = report["jobs"][0]
        points[report["scenario"]][job["algorithm"]].append(
            (job["gpus"], job["samples_per_second"], job["scaling_efficiency"],
             job["single_gpu_samples_per_second"]))
    for per_algorithm in points.values():
        for rows in per_algorithm.values():
            rows.sort()
    return points


def plot_throughput(points, output):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for scenario, per_algorithm in points.items():
        print(f"\n{scenario}: samples/s (scaling efficiency)")
        gpus = sorted({row[0] for rows in per_algorithm.values() for row in rows})
        print(f"{'GPUs':>6}" + "".join(f"{a:>26}" for a in per_algorithm))
        for n in gpus:
            cells = []
            for rows in per_algorithm.values():
                row = next((r for r in rows if r[0] == n), None)
                cells.append(f"{row[1]:.0f} ({row[2]:.2f})" if row else "-")
            print(f"{n:>6}" + "".join(f"{c:>26}" for c in cells))
    fig, axes = plt.subplots(1, len(points), figsize=(6.5 * len(points), 4.5), squeeze=False,
                             sharey=True)
    for axis, (scenario, per_algorithm) in zip(axes[0], points.items()):
        ideal = None
        for algorithm, rows in per_algorithm.items():
            axis.plot([r[0] for r in rows], [r[1] for r in rows], marker="o", markersize=3,
                      label=algorithm)
            ideal = rows
        axis.plot([r[0] for r in ideal], [r[3] for r in ideal], "k--", linewidth=1,
                  label="linear (each GPU alone)")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("GPUs")
        axis.set_ylabel("samples/s")
        axis.set_title(scenario, fontsize=9)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    print(f"\nwrote {output}")


def plot_plan(report, output):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report["ranked"] if "error" not in r]
    if not rows:
        sys.exit("plot.py: error: the plan has no point that ran")
    cost_key = "cost" if report["cost_unit"] == "cost" else "gpu_hours"
    gpu_axes = {"/workload/gpus", "/workload/ranks", "/topology/nodes/0/count"}

    def configuration(row):
        label = ", ".join(f"{p.rsplit('/', 1)[-1]}={json.dumps(v) if not isinstance(v, str) else v}"
                          for p, v in row["settings"] if p not in gpu_axes)
        return label[:60] or "scenario"

    lines = collections.OrderedDict()
    for row in sorted(rows, key=lambda r: r["metrics"]["gpus"]):
        m = row["metrics"]
        y = m["samples_per_second"] if m["samples_per_second"] > 0 else 1 / max(row["time_seconds"], 1e-30)
        lines.setdefault(configuration(row), []).append((m["gpus"], y))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for label, points in lines.items():
        xs, ys = zip(*points)
        left.plot(xs, ys, marker="o", label=label)
    left.set_xlabel("GPUs")
    left.set_ylabel("samples/s" if any(r["metrics"]["samples_per_second"] > 0 for r in rows) else "1 / time (1/s)")
    left.set_title("throughput per configuration")
    left.legend(fontsize=7)
    xs = [r["time_seconds"] for r in rows]
    ys = [r[cost_key] for r in rows]
    right.scatter(xs, ys, s=14, color="0.6", label="points")
    front = sorted((r["time_seconds"], r[cost_key]) for r in rows if r["on_front"])
    if front:
        fx, fy = zip(*front)
        right.plot(fx, fy, color="C3", marker="*", markersize=10, label="Pareto front")
    best = [r for r in rows if r["index"] == report.get("recommended")]
    if best:
        right.scatter([best[0]["time_seconds"]], [best[0][cost_key]], s=160, facecolors="none",
                      edgecolors="C2", linewidths=2, label="recommended")
    right.set_xlabel(f"{report['time_axis']} (s)")
    right.set_ylabel(report["cost_unit"])
    right.set_title("cost vs time")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    print(f"wrote {output}")


def plot_jobs(reports, output):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import cm, colors

    reports = [r for r in reports if r.get("workload") == "job_trace"]
    if not reports:
        sys.exit("plot.py jobs: no job_trace report among the files")
    print(f"{'placement':>14} {'queue':>6} {'makespan_s':>11} {'util_%':>7} {'wait_s':>8} {'slowdown':>9}")
    for r in reports:
        print(f"{r['placement']:>14} {r['queue']:>6} {r['makespan_s']:11.1f} {100 * r['utilisation']:7.1f} "
              f"{r['mean_queueing_s']:8.1f} {r['mean_slowdown']:9.3f}")
    end = max(max(j["end_s"] for j in r["jobs"]) for r in reports)
    worst = max(max(j["slowdown"] for j in r["jobs"]) for r in reports)
    norm = colors.Normalize(vmin=1.0, vmax=max(worst, 1.01))
    cmap = cm.get_cmap("viridis_r")
    fig, axes = plt.subplots(2, len(reports), figsize=(6 * len(reports), 6.5), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 1]}, sharex=True)
    for col, r in enumerate(reports):
        ax = axes[0][col]
        for row, j in enumerate(r["jobs"]):
            ax.barh(row, j["start_s"] - j["arrival_s"], left=j["arrival_s"], color="0.85", height=0.8)
            ax.barh(row, j["run_s"], left=j["start_s"], color=cmap(norm(j["slowdown"])), height=0.8)
        ax.set_yticks(range(len(r["jobs"])))
        ax.set_yticklabels([f"{j['id']} ({j['gpus']})" for j in r["jobs"]], fontsize=6)
        ax.invert_yaxis()
        ax.set_title(f"{r['placement']} / {r['queue']}: makespan {r['makespan_s']:.0f} s, "
                     f"mean slowdown {r['mean_slowdown']:.2f}", fontsize=9)
        busy = axes[1][col]
        times = [p["time_s"] for p in r["busy_gpus"]] + [end]
        gpus = [p["busy_gpus"] for p in r["busy_gpus"]] + [r["busy_gpus"][-1]["busy_gpus"]]
        busy.step(times, gpus, where="post")
        busy.set_ylim(0, r["cluster_gpus"] * 1.05)
        busy.set_ylabel("busy GPUs")
        busy.set_xlabel("time (s)")
    fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=axes[0].tolist(), label="slowdown vs alone")
    fig.savefig(output, dpi=120)
    print(f"wrote {output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    busbw = sub.add_parser("busbw", help="busbw vs size per algorithm, one panel per scenario")
    busbw.add_argument("reports", nargs="+")
    busbw.add_argument("-o", "--output", default="busbw.png")
    throughput = sub.add_parser("throughput", help="training samples/s vs GPUs per algorithm")
    throughput.add_argument("reports", nargs="+")
    throughput.add_argument("-o", "--output", default="throughput.png")
    plan = sub.add_parser("plan", help="throughput vs GPUs per configuration, cost vs time with the front")
    plan.add_argument("report")
    plan.add_argument("-o", "--output", default="plan.png")
    jobs = sub.add_parser("jobs", help="a shared cluster's job timeline and busy GPUs")
    jobs.add_argument("reports", nargs="+")
    jobs.add_argument("-o", "--output", default="jobs.png")
    args = parser.parse_args()
    if args.command == "jobs":
        plot_jobs(load(args.reports), args.output)
        return
    if args.command == "plan":
        plot_plan(load([args.report])[0], args.output)
        return
    if args.command == "throughput":
        plot_throughput(training_points(load(args.reports)), args.output)
        return
    grouped = by_scenario(load(args.reports))
    print_tables(grouped)
    plot_busbw(grouped, args.output)


if __name__ == "__main__":
    main()
