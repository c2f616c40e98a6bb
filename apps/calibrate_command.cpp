// `ddlsim calibrate FILE... -o calibration.json`: fits the simulator to nccl-tests logs and
// `ddlsim real --json` reports, writes a calibration a scenario references, and prints the
// parameters with their standard errors and the fit's residual per point.
#include "calibrate_inputs.hpp"
#include "commands.hpp"
#include "ddlsim/calibrate/fit_calibration.hpp"
#include "ddlsim/calibrate/validation.hpp"
#include "ddlsim/core/input_error.hpp"
#include "number_checks.hpp"

#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

namespace ddlsim::cli {
namespace {

struct CalibrateOptions {
  MeasuredInputs inputs;
  std::string output;
  std::string protocols; // empty: NCCL's default rule (choose_protocols)
  std::vector<std::string> node_groups;
  int max_iterations = 100;
  bool strict = false;                // a fit that needs a physically impossible value is an error
  bool allow_underdetermined = false; // write a fit with fewer distinct points than parameters
};

// The distinct measurements (collective, size, ranks) among the points: repeating a size adds
// no equation a parameter could be determined from.
std::size_t distinct_points(const std::vector<calib::MeasuredPoint>& points) {
  std::set<std::tuple<int, std::uint64_t, int>> seen;
  for (const calib::MeasuredPoint& p : points)
    seen.emplace(static_cast<int>(p.op), p.bytes, p.ranks);
  return seen.size();
}

Json system_json(const calib::MeasuredSet& set) {
  const calib::MeasuredSystem& s = set.system;
  return {{"file", set.source},
          {"kind", set.kind},
          {"points", set.points.size()},
          {"ranks", s.ranks},
          {"nodes", s.nodes},
          {"gpus_per_node", s.gpus_per_node},
          {"gpu", s.gpu_name},
          {"library", s.library_version},
          {"transport", s.transport},
          {"inferred", s.notes}};
}

void run(const CalibrateOptions& options) {
  LoadedMeasurements loaded = load_measurements(options.inputs);
  const calib::PointModel model(loaded.cluster, loaded.scenario ? loaded.scenario->seed : 1,
                                measured_nccl_force(loaded));
  calib::FitOptions fit_options;
  choose_protocols(options.protocols, loaded, fit_options);
  fit_options.max_iterations = options.max_iterations;
  const calib::FitReport fit = calib::fit_calibration(model, loaded.points, fit_options);
  // Fewer equations than unknowns: the priors, not the data, set most values, however small the
  // residuals (one point fitted 7 parameters and called several "determined").
  const std::size_t distinct = distinct_points(loaded.points);
  const bool underdetermined = distinct < fit.parameters.size();
  const std::string underdetermined_why =
      std::to_string(distinct) +
      " distinct measured point(s) (collective, size, ranks) cannot "
      "determine the " +
      std::to_string(fit.parameters.size()) + " fitted parameters";
  if (underdetermined && !options.allow_underdetermined)
    throw InputError(options.inputs.files.front(),
                     "underdetermined fit: " + underdetermined_why +
                         "; measure more sizes (nccl-tests -b 8 -e 8G -f 2), or pass "
                         "--allow-underdetermined to write it anyway, marked \"underdetermined\"");
  // A fit that needs an impossible value describes the data, not the hardware: the model is
  // missing a mechanism of this system (issue 16), and the calibration must not be used as if
  // it measured the links.
  Json impossible = Json::array();
  std::string mismatch;
  for (const calib::ImpossibleValue& value : fit.impossible) {
    impossible.push_back({{"parameter", value.parameter},
                          {"value", value.value},
                          {"why", value.why},
                          {"determined_by_data", value.determined}});
    mismatch += (mismatch.empty() ? "" : "; ") + calib::describe(value);
  }
  if (!mismatch.empty() && options.strict)
    throw InputError("--strict", "model mismatch: the fit needs physically impossible values (" +
                                     mismatch +
                                     "); the model lacks a mechanism of this system, so no "
                                     "calibration is written. Without --strict it is written "
                                     "with a warning and \"model_mismatch\": true");

  for (const std::string& note : loaded.notes) std::cout << "# inferred: " << note << "\n";
  for (const std::string& line : loaded.contradictions)
    std::cout << "# WARNING: the log contradicts --scenario: " << line << "\n";
  if (underdetermined) {
    std::cout << "# WARNING: underdetermined fit (--allow-underdetermined): " << underdetermined_why
              << "; no parameter is reported as determined by the data\n";
    std::cerr << "ddlsim calibrate: WARNING: underdetermined fit: " << underdetermined_why << "\n";
  }
  const bool library_chose = std::any_of(loaded.points.begin(), loaded.points.end(),
                                         [](const auto& p) { return p.algorithm.empty(); });
  if (library_chose) std::cout << "# assumed: " << model.choice_model() << "\n";
  if (!fit.protocol_selection.empty())
    std::cout << "# protocol selection: " << fit.protocol_selection << "\n";
  if (!mismatch.empty()) {
    std::cout << "# warning: model mismatch: the fit needs physically impossible values: "
              << mismatch << "\n";
    std::cerr << "ddlsim calibrate: warning: model mismatch: " << mismatch
              << " (a calibration that needs an impossible value describes the data, not the "
                 "hardware; --strict makes this an error)\n";
  }
  std::cout << "# fit: " << loaded.points.size() << " points, " << fit.iterations << " iterations, "
            << fit.evaluations << " model evaluations\n";
  std::cout << "# parameter                          value   rel. s.e.  determined by the data\n";
  char line[256];
  Json parameters = Json::array();
  for (calib::ParameterEstimate p : fit.parameters) {
    p.identified = p.identified && !underdetermined;
    std::snprintf(line, sizeof line, "  %-30s %12.4g %9.1f%%  %s\n", p.name.c_str(), p.value,
                  100 * p.relative_se,
                  p.identified ? "yes"
                  : p.relative_se > calib::kMaxDeterminedRelativeError
                      ? "no (rel. s.e. above 50%)"
                      : "no (kept near its prior)");
    std::cout << line;
    parameters.push_back({{"name", p.name},
                          {"value", p.value},
                          {"relative_standard_error", p.relative_se},
                          {"determined_by_data", p.identified}});
  }
  calib::ValidationReport in_sample;
  in_sample.mode = "fit residuals (in sample)";
  for (std::size_t i = 0; i < loaded.points.size(); ++i)
    in_sample.rows.push_back(
        {loaded.points[i], fit.predictions[i],
         100.0 * (fit.predictions[i].seconds - loaded.points[i].seconds) / loaded.points[i].seconds,
         true});
  in_sample.all = calib::summarize(in_sample.rows, 0);
  in_sample.large = calib::summarize(in_sample.rows, in_sample.min_bytes);
  calib::print_validation(in_sample, std::cout);

  calib::Calibration calibration = fit.calibration;
  calibration.node_groups = options.node_groups;
  // What it was fitted on (the first node group, as calibrate's model sees it), so that applying
  // it to another system can say what differs; the NCCL version as the widest log says.
  int nodes = 0;
  for (const topo::NodeGroup& group : loaded.cluster.node_groups) nodes += group.count;
  calibration.fitted_on = calib::fitted_on(loaded.cluster.node_groups.at(0).spec, nodes);
  const calib::MeasuredSet* widest = nullptr;
  for (const calib::MeasuredSet& set : loaded.sets)
    if (!widest || set.system.ranks > widest->system.ranks) widest = &set;
  if (widest) calibration.fitted_on->nccl_version = widest->system.library_version;
  {
    const calib::FittedOn& f = *calibration.fitted_on;
    std::cout << "# fitted on: " << f.nodes << " node(s) of " << f.gpus_per_node << " "
              << f.gpu_model << " (sm_" << f.compute_capability << "), " << f.intra << ", "
              << f.nics_per_node << " NIC(s), transport " << f.transport << ", "
              << (f.nccl_version.empty() ? "NCCL version not in the log" : f.nccl_version) << "\n";
  }
  Json sources = Json::array();
  for (const calib::MeasuredSet& set : loaded.sets) sources.push_back(system_json(set));
  Json assumed = Json::array();
  if (library_chose) assumed.push_back(model.choice_model());
  if (!fit.protocol_selection.empty()) assumed.push_back(fit.protocol_selection);
  for (const std::string& note : loaded.notes) assumed.push_back(note);
  Json residuals = Json::array();
  for (std::size_t i = 0; i < loaded.points.size(); ++i)
    residuals.push_back({{"where", loaded.points[i].where},
                         {"bytes", loaded.points[i].bytes},
                         {"measured_us", loaded.points[i].seconds * 1e6},
                         {"simulated_us", fit.predictions[i].seconds * 1e6},
                         {"algorithm", fit.predictions[i].algorithm},
                         {"protocol", fit.predictions[i].protocol},
                         {"huber_weight", fit.weights[i]}});
  calibration.source = {
      {"measurements", sources},
      {"scenario", options.inputs.scenario},
      {"assumptions", assumed},
      {"fit",
       {{"method", "Levenberg-Marquardt on log(simulated/measured), Huber-weighted IRLS, weak "
                   "log-normal priors"},
        {"iterations", fit.iterations},
        {"model_mismatch", !fit.impossible.empty()},
        {"underdetermined", underdetermined},
        {"distinct_points", distinct},
        {"layout_contradictions", loaded.contradictions},
        {"impossible_values", impossible},
        {"parameters", parameters},
        {"median_abs_error_percent", in_sample.all.median},
        {"max_abs_error_percent", in_sample.all.max},
        {"residuals", residuals}}}};
  calib::write_calibration_file(calibration, options.output);
  std::cout << "# wrote " << options.output << "\n";
}

} // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit link latencies and bandwidths, per-step and launch overheads, protocol "
                   "efficiency and the GPU reduction rate to nccl-tests logs and `ddlsim real "
                   "--json` reports; write a calibration JSON a scenario references");
  cmd->add_option("files", options->inputs.files, "nccl-tests logs and/or JSON reports")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", options->output, "Calibration JSON to write")->required();
  cmd->add_option("--max-iterations", options->max_iterations,
                  "Least-squares iterations at most (default 100; fewer for a quick check)")
      ->check(checks::positive());
  cmd->add_option("--protocols", options->protocols,
                  "Protocols to fit, the bandwidth one first (simple, ll, ll128); default: "
                  "NCCL's default rule for the measured system (printed)");
  cmd->add_option("--node-groups", options->node_groups,
                  "Node groups (names or presets) a scenario applies this calibration to "
                  "(default: every group); a heterogeneous cluster carries one per group")
      ->delimiter(',');
  cmd->add_flag("--strict", options->strict,
                "Fail (exit 2, no file written) when the fit needs a physically impossible value "
                "(an efficiency above 1 or at most 0, a negative overhead): a model mismatch");
  cmd->add_flag("--allow-underdetermined", options->allow_underdetermined,
                "Write a fit that has fewer distinct measured points than parameters (default: "
                "an error); no parameter of it is reported as determined by the data");
  add_measured_flags(*cmd, options->inputs);
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
