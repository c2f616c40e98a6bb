"""The ddlsim Python module: the same reports as the command's --json, scenarios from files and
dicts, errors that name the place, results that respond to their inputs."""
import copy
import re

import pytest

import ddlsim
from conftest import MEASURED_DIR

DEFAULT = ddlsim.bundled_scenario("default.json")


def test_version_is_the_projects():
    assert re.fullmatch(r"\d+\.\d+\.\d+", ddlsim.__version__)


def test_data_dir_holds_the_bundled_scenarios_zoo_and_plot_scripts():
    data = ddlsim.data_dir()
    assert (data / "scenarios" / "default.json").is_file()
    assert (data / "zoo" / "resnet50.json").is_file()
    assert (data / "scripts" / "plot.py").is_file()
    with pytest.raises(ddlsim.InputError, match="no such bundled scenario"):
        ddlsim.bundled_scenario("no-such.json")


def test_scenario_from_a_file():
    scenario = ddlsim.load_scenario(DEFAULT)
    assert scenario.name.startswith("default: 128 V100")
    assert scenario.workload_type == "collective"
    assert scenario.engine_type == "analytic"
    assert scenario.sweep_points == 1
    resolved = scenario.to_dict()
    assert "topology" in resolved and "include" not in resolved


def test_run_gives_the_report_of_ddlsim_run_json(command_report):
    assert ddlsim.run(DEFAULT) == command_report("run", DEFAULT)


def test_run_with_seed_and_algorithm_matches_the_command_flags(command_report):
    ours = ddlsim.run(DEFAULT, seed=7, algorithm="double_binary_tree")
    assert {row["algorithm"] for row in ours["results"]} == {"double_binary_tree"}
    assert ours == command_report("run", DEFAULT, "--seed", 7, "--algorithm", "double_binary_tree")


@pytest.mark.parametrize("relative", ["resnet50-cloud-vs-dgx.json",
                                      "examples/flow-leaf-spine-lv08.json",
                                      "examples/packet-cloud-v100.json",
                                      "examples/packet-training-resnet50.json"])
def test_training_and_every_engine_give_the_report_of_ddlsim_run_json(relative, command_report):
    scenario = ddlsim.bundled_scenario(relative)
    assert ddlsim.run(scenario) == command_report("run", scenario)


def test_a_dict_runs_like_the_file_it_equals():
    as_dict = {"include": "cloud-v100-25g", "name": "from a dict"}
    from_dict = ddlsim.run(as_dict)
    from_file = ddlsim.run(DEFAULT)
    assert from_dict["scenario"] == "from a dict"
    assert from_dict["results"] == from_file["results"]


def test_time_responds_to_bandwidth_and_size():
    base = ddlsim.load_scenario(DEFAULT).to_dict()
    faster = copy.deepcopy(base)
    for group in faster["topology"]["nodes"]:
        group["nic_bandwidth_gbps"] = 4 * group.get("nic_bandwidth_gbps", 25)
    slow = ddlsim.run(base)["results"]
    fast = ddlsim.run(faster)["results"]
    assert fast[-1]["time_ps"] < slow[-1]["time_ps"]
    times = [row["time_ps"] for row in slow]
    assert times == sorted(times) and times[-1] > 10 * times[0]


def test_bad_input_names_the_place_and_the_fix():
    with pytest.raises(ddlsim.InputError, match=r"/workload/sizez.*sizes"):
        ddlsim.run({"include": "cloud-v100-25g", "workload": {"sizez": [1024]}})
    with pytest.raises(ddlsim.InputError, match="no-such-file.json"):
        ddlsim.load_scenario("no-such-file.json")
    with pytest.raises(TypeError, match="file path or a dict"):
        ddlsim.load_scenario(42)


def test_plan_gives_the_report_of_ddlsim_plan_json(command_report):
    scenario = ddlsim.bundled_scenario("examples/plan-cloud-allreduce.json")
    ours = ddlsim.plan(scenario, threads=2)
    assert len(ours["ranked"]) == ddlsim.load_scenario(scenario).sweep_points
    assert ours == command_report("plan", scenario, "--no-cache", "--threads", 2)


def test_validate_gives_the_report_of_ddlsim_validate_json(command_report):
    log = MEASURED_DIR / "v100-sxm2-8gpu-1node-hybrid-cube-mesh.txt"
    scenario = ddlsim.bundled_scenario("validation/v100-sxm2-8gpu-1node.json")
    ours = ddlsim.validate(log, scenario)
    assert ours == command_report("validate", "--measured", log, "--scenario", scenario)
    with pytest.raises(ddlsim.InputError, match="byte size"):
        ddlsim.validate(log, scenario, min_bytes="lots")
