"""ddlsim from Python: load a scenario, run it, plan it, validate it against measurements.

Every result is a dict holding the same data as the matching `ddlsim ... --json` report, so a
notebook can sweep, tabulate and plot without going through files:

    import ddlsim
    report = ddlsim.run(ddlsim.bundled_scenario("default.json"))
    for row in report["results"]:
        print(row["bytes"], row["time_us"], row["busbw_gbytes_per_second"])

Bad input raises ddlsim.InputError (a ValueError) whose message names the place and the fix.
"""

import json
import os
from pathlib import Path

from . import _ddlsim
from ._ddlsim import InputError, __version__
from ._layout import DATA_DIR_FROM_PACKAGE

__all__ = ["InputError", "Scenario", "__version__", "bundled_scenario", "data_dir",
           "load_scenario", "plan", "run", "validate"]


class Scenario:
    """A loaded, validated scenario (includes resolved). Build it with load_scenario()."""

    def __init__(self, native, origin):
        self._native = native
        self.origin = origin  # the file it came from, or "<dict>"

    @property
    def name(self):
        return self._native.name

    @property
    def seed(self):
        return self._native.seed

    @property
    def workload_type(self):
        """"collective" or "training"."""
        return self._native.workload_type

    @property
    def engine_type(self):
        """"analytic", "flow" or "packet"."""
        return self._native.engine_type

    @property
    def sweep_points(self):
        """How many points its sweep has (1 without a sweep): what plan() evaluates."""
        return self._native.sweep_points

    def to_dict(self):
        """The scenario as validated: the JSON with every include merged in."""
        return json.loads(self._native.resolved_json())

    def __repr__(self):
        return (f"<ddlsim.Scenario {self.name or self.origin!r}: {self.workload_type} workload, "
                f"{self.engine_type} engine>")


def load_scenario(source, base_dir=None):
    """Loads a scenario from a file path or from a dict (the JSON a scenario file holds).

    Includes of bundled presets work by name; relative includes and files in a dict resolve
    against base_dir (default: the current directory)."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, dict):
        base = os.fspath(base_dir) if base_dir is not None else os.getcwd()
        return Scenario(_ddlsim.load_scenario_json(json.dumps(source), "<dict>", base), "<dict>")
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return Scenario(_ddlsim.load_scenario_file(path), path)
    raise TypeError(f"load_scenario: expected a file path or a dict, got {type(source).__name__}")


def run(scenario, *, seed=None, algorithm=None):
    """Simulates the scenario's workload on its engine: the `ddlsim run --json` report.

    seed and algorithm override the scenario's, as `ddlsim run --seed --algorithm` do."""
    loaded = load_scenario(scenario)
    return json.loads(_ddlsim.run(loaded._native, loaded.origin, seed, algorithm or ""))


def plan(scenario, *, threads=0):
    """Evaluates every point of the scenario's sweep and ranks them: the `ddlsim plan --json`
    report (one process, no result cache; threads=0 uses every core)."""
    loaded = load_scenario(scenario)
    return json.loads(_ddlsim.plan(loaded._native, loaded.origin, threads))


def validate(measured, scenario, *, calibration=None, min_bytes="64KiB", op="", column="mean",
             ranks=0):
    """Simulates every measured point (nccl-tests logs or ddlsim JSON reports) on the scenario
    file: the `ddlsim validate --json` report (measured vs simulated, |error| summaries)."""
    if isinstance(measured, (str, os.PathLike)):
        measured = [measured]
    return json.loads(_ddlsim.validate([os.fspath(m) for m in measured], os.fspath(scenario),
                                       os.fspath(calibration) if calibration else "",
                                       str(min_bytes), op, column, ranks))


def data_dir():
    """ddlsim's data folder: bundled scenarios (scenarios/), model zoo (zoo/), plot scripts."""
    return (Path(__file__).resolve().parent / DATA_DIR_FROM_PACKAGE).resolve()


def bundled_scenario(relative):
    """The path of a bundled scenario, e.g. bundled_scenario("examples/packet-cloud-v100.json")."""
    path = data_dir() / "scenarios" / relative
    if not path.is_file():
        raise InputError(f"{path}: no such bundled scenario; see {data_dir() / 'scenarios'}")
    return path
