// The native part of the `ddlsim` Python module (ddlsim._ddlsim): load a scenario, run it, plan
// it, validate it against measurements. Reports cross into Python as JSON text, which the Python
// side (ddlsim/__init__.py) turns into dicts: the same data the command's --json reports hold.
// Simulations release the GIL, so a notebook's threads can run several at once.
#include "calibrate_inputs.hpp"
#include "ddlsim/calibrate/validation.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/planning/plan.hpp"
#include "ddlsim/planning/plan_report.hpp"
#include "ddlsim/planning/point_runner.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "engine_entry.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace ddlsim::python {
namespace {

Scenario load_from_text(const std::string& json_text, const std::string& origin,
                        const std::filesystem::path& base_dir) {
  Json json;
  try {
    json = Json::parse(json_text);
  } catch (const Json::parse_error& error) {
    throw InputError(origin, std::string("not valid JSON: ") + error.what());
  }
  return load_scenario(json, origin, base_dir);
}

std::string label_of(const Scenario& scenario, const std::string& origin) {
  return scenario.name.empty() ? origin : scenario.name;
}

// `ddlsim run --seed --algorithm` applied to a copy of the scenario.
std::string run(Scenario scenario, const std::string& origin, std::optional<std::uint64_t> seed,
                const std::string& algorithm) {
  if (seed) scenario.seed = *seed;
  if (!algorithm.empty()) {
    scenario.workload.collective.algorithm = algorithm;
    for (models::JobSpec& job : scenario.workload.training.jobs) job.algorithm = algorithm;
  }
  return run_report(scenario, label_of(scenario, origin)).dump();
}

// `ddlsim plan --json` in one process, without the result cache: every sweep point evaluated on
// `threads` workers (0: one per hardware thread), ranked, with the Pareto front.
std::string plan(const Scenario& scenario, const std::string& origin, unsigned threads) {
  std::vector<std::size_t> indices(sweep_point_count(scenario));
  std::iota(indices.begin(), indices.end(), std::size_t{0});
  const auto evaluate = [&](std::size_t index) {
    SweepPoint point = sweep_point(scenario, index);
    plan::PointResult result;
    result.index = index;
    result.settings = point.settings;
    try {
      result.metrics = evaluate_plan_point(point.scenario);
    } catch (const std::exception& error) {
      result.error = error.what();
    }
    return result;
  };
  // The flow engine forks a SimGrid child per simulation; forking from several threads at once
  // is not safe, so flow points run one at a time (as in `ddlsim plan`).
  const bool forks =
      runs_in_child_process(scenario) ||
      std::any_of(scenario.sweep.begin(), scenario.sweep.end(),
                  [](const SweepAxis& axis) { return axis.pointer.starts_with("/engine"); });
  std::vector<plan::PointResult> results =
      plan::run_points(indices, evaluate, forks ? 1u : threads);
  // `ddlsim plan` gathers its points as JSON (from MPI ranks); the same round trip here gives
  // the same numbers to the last digit.
  std::vector<plan::PointResult> gathered;
  for (const plan::PointResult& result : results)
    gathered.push_back(plan::point_result_from_json(plan::to_json(result), origin));
  Json report = plan::to_json(plan::make_plan(std::move(gathered), scenario.plan));
  report["scenario"] = label_of(scenario, origin);
  return report.dump();
}

// `ddlsim validate --json` (without --cross-validate).
std::string validate(const std::vector<std::string>& measured, const std::string& scenario_file,
                     const std::string& calibration, const std::string& min_bytes_text,
                     const std::string& op, const std::string& column, int ranks) {
  cli::MeasuredInputs inputs;
  inputs.files = measured;
  inputs.scenario = scenario_file;
  inputs.op = op;
  inputs.column = column;
  inputs.ranks = ranks;
  const auto min_bytes = parse_byte_size(min_bytes_text);
  if (!min_bytes)
    throw InputError("min_bytes " + min_bytes_text, "expected a byte size such as 64KiB");
  const cli::LoadedMeasurements loaded = cli::load_measurements(inputs);
  const calib::PointModel model(loaded.cluster, loaded.scenario->seed);
  const std::vector<calib::Calibration> calibrations =
      calibration.empty()
          ? cli::scenario_calibrations(scenario_file)
          : std::vector<calib::Calibration>{calib::read_calibration_file(calibration)};
  calib::ValidationReport report = calib::validate(model, calibrations, loaded.points, *min_bytes);
  report.mode = calibration.empty() ? "scenario " + scenario_file : "calibration " + calibration;
  return calib::to_json(report).dump();
}

} // namespace
} // namespace ddlsim::python

PYBIND11_MODULE(_ddlsim, m) {
  using namespace ddlsim;
  using ddlsim::python::load_from_text;
  namespace native = ddlsim::python;
  m.doc() = "ddlsim's native part; use the `ddlsim` package, which wraps it.";
  m.attr("__version__") = DDLSIM_VERSION;
  // Bad input (a wrong key, an impossible scenario) names the place and the fix, as in the CLI.
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<Scenario>(m, "Scenario")
      .def_readonly("name", &Scenario::name)
      .def_readonly("seed", &Scenario::seed)
      .def_property_readonly("workload_type", [](const Scenario& s) { return s.workload.type; })
      .def_property_readonly("engine_type", &native::engine_name)
      .def_property_readonly("sweep_points", [](const Scenario& s) { return sweep_point_count(s); })
      .def("resolved_json", [](const Scenario& s) { return s.resolved.dump(); });

  const auto release = py::call_guard<py::gil_scoped_release>();
  m.def(
      "load_scenario_file",
      [](const std::filesystem::path& file) { return load_scenario_file(file); }, py::arg("file"),
      release);
  m.def("load_scenario_json", &load_from_text, py::arg("json"), py::arg("origin"),
        py::arg("base_dir"), release);
  m.def("run", &native::run, py::arg("scenario"), py::arg("origin"), py::arg("seed"),
        py::arg("algorithm"), release);
  m.def("plan", &native::plan, py::arg("scenario"), py::arg("origin"), py::arg("threads"), release);
  m.def("validate", &native::validate, py::arg("measured"), py::arg("scenario_file"),
        py::arg("calibration"), py::arg("min_bytes"), py::arg("op"), py::arg("column"),
        py::arg("ranks"), release);
}
