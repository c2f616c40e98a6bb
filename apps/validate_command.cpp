// `ddlsim validate --measured FILE --scenario SCENARIO`: simulates every measured point and
// prints size, measured, simulated and error %, with the median / p90 / max |error|; with
// --cross-validate, fits on a subset and predicts the rest; --plot draws measured vs simulated.
#include "calibrate_inputs.hpp"
#include "commands.hpp"
#include "data_files.hpp"
#include "ddlsim/calibrate/validation.hpp"
#include "ddlsim/core/input_error.hpp"
#include "number_checks.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace ddlsim::cli {
namespace {

struct ValidateOptions {
  MeasuredInputs inputs;
  std::string calibration;
  std::string cross_validate;
  std::string plot;
  std::string json;
  std::string min_bytes = "64KiB";
  std::string protocols; // empty: NCCL's default rule (choose_protocols)
  int max_iterations = 100;
};

void write_plot(const calib::ValidationReport& report, const std::string& png) {
  const std::string data = png + ".json";
  {
    std::ofstream out(data);
    if (!out) throw InputError(data, "cannot write the plot data");
    out << calib::to_json(report).dump(1) << "\n";
  }
  const std::vector<std::string> command{
      "/usr/bin/python3", data_file("scripts/plot_validation.py").string(), data, "-o", png};
  if (run_program(command) != 0)
    throw InputError("--plot " + png, "the plot failed (/usr/bin/python3 " + command[1] +
                                          "); is matplotlib installed for /usr/bin/python3?");
  std::filesystem::remove(data);
  std::cout << "# wrote " << png << "\n";
}

void run(const ValidateOptions& options) {
  if (options.inputs.scenario.empty())
    throw InputError("--scenario", "validate needs the scenario of the measured system");
  const auto min_bytes = parse_byte_size(options.min_bytes);
  if (!min_bytes)
    throw InputError("--min-bytes " + options.min_bytes, "expected a byte size such as 64KiB");
  LoadedMeasurements loaded = load_measurements(options.inputs);
  const calib::PointModel model(loaded.cluster, loaded.scenario->seed, measured_nccl_force(loaded));
  calib::FitOptions fit;
  fit.max_iterations = options.max_iterations;
  if (!options.cross_validate.empty()) choose_protocols(options.protocols, loaded, fit);
  for (const std::string& note : loaded.notes) std::cout << "# inferred: " << note << "\n";
  if (std::any_of(loaded.points.begin(), loaded.points.end(),
                  [](const auto& p) { return p.algorithm.empty(); }))
    std::cout << "# assumed: " << model.choice_model() << "\n";

  calib::ValidationReport report;
  if (!options.cross_validate.empty()) {
    if (!options.calibration.empty())
      throw InputError("--calibration", "cross-validation fits its own calibrations; drop "
                                        "--calibration or --cross-validate");
    report = calib::cross_validate(model, loaded.points,
                                   calib::parse_cross_validation(options.cross_validate), fit,
                                   *min_bytes);
  } else {
    const std::vector<calib::Calibration> calibrations =
        options.calibration.empty()
            ? scenario_calibrations(options.inputs.scenario)
            : std::vector<calib::Calibration>{calib::read_calibration_file(options.calibration)};
    // A calibration carried from another system is the documented workflow; say what differs.
    for (const calib::Calibration& c : calibrations)
      for (const std::string& line : calib::calibration_differences(c, loaded.cluster))
        std::cerr << "ddlsim validate: warning: the calibration"
                  << (options.calibration.empty() ? "" : " " + options.calibration)
                  << " was fitted on another kind of system: " << line << "\n";
    report = calib::validate(model, calibrations, loaded.points, *min_bytes);
    report.mode = options.calibration.empty() ? "scenario " + options.inputs.scenario
                                              : "calibration " + options.calibration;
  }
  calib::print_validation(report, std::cout);
  if (!options.json.empty()) {
    std::ofstream out(options.json);
    if (!out) throw InputError(options.json, "cannot open the output file for writing");
    out << calib::to_json(report).dump(2) << "\n";
    std::cout << "# wrote " << options.json << "\n";
  }
  if (!options.plot.empty()) write_plot(report, options.plot);
}

} // namespace

void add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand(
      "validate", "Simulate every measured point of nccl-tests logs or reports on a scenario "
                  "and print measured vs simulated with median / p90 / max |error|");
  cmd->add_option("--measured", options->inputs.files, "nccl-tests logs and/or JSON reports")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--calibration", options->calibration,
                  "Calibration to apply (default: the scenario's own \"calibration\", if any)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--cross-validate", options->cross_validate,
                  "Fit on a subset and predict the rest: kfold:K, sizes:A,B,..., or ranks:N");
  cmd->add_option("--max-iterations", options->max_iterations,
                  "Least-squares iterations at most (default 100; fewer for a quick check)")
      ->check(checks::positive());
  cmd->add_option("--protocols", options->protocols,
                  "Protocols the cross-validation fits (simple, ll, ll128); default: NCCL's "
                  "default rule for the measured system (printed)");
  cmd->add_option("--min-bytes", options->min_bytes,
                  "Size from which the second summary line counts (default 64KiB)");
  cmd->add_option("--plot", options->plot, "Write measured vs simulated curves (PNG) to FILE");
  cmd->add_option("--json", options->json, "Write the table as JSON to FILE");
  add_measured_flags(*cmd, options->inputs);
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
