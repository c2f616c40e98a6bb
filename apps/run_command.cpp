// `ddlsim run SCENARIO`: simulate the scenario's workload and print the nccl-tests-style table.
#include "commands.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/runner/run_report.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "number_checks.hpp"
#include "progress.hpp"

#include <fstream>
#include <iostream>

namespace ddlsim::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string json;
  std::string trace;
  std::string trace_level = "steps";
  std::string links;
  std::string algorithm;
  std::int64_t seed = -1;
  double max_wall_seconds = 0;
  bool progress = false;         // draw progress even when stderr is not a terminal
  bool compute_slowdown = false; // engine.compute_slowdown on, whatever the scenario says
};

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path);
  if (!out) throw InputError(path, "cannot open the output file for writing");
  write(out);
  if (!out) throw InputError(path, "writing the output file failed (disk full?)");
}

void run(const RunOptions& options) {
  Scenario scenario = load_scenario_file(options.scenario);
  for (const std::string& warning : scenario.warnings)
    std::cerr << "ddlsim run: warning: " << warning << "\n";
  if (options.seed >= 0) scenario.seed = static_cast<std::uint64_t>(options.seed);
  // The engine layer refuses it on an engine that does not model it (sim::simulate).
  if (options.compute_slowdown) scenario.engine.compute_slowdown = true;
  if (options.algorithm == "auto" && scenario.workload.type != "collective" &&
      scenario.workload.type != "iterative")
    throw InputError("--algorithm auto",
                     "auto picks the fastest simulated algorithm per size of a collective "
                     "workload; " +
                         options.scenario + " has a " + scenario.workload.type +
                         " workload, whose buckets take one algorithm by name or nccl (NCCL's "
                         "own choice per bucket)");
  if (!options.algorithm.empty()) {
    scenario.workload.collective.algorithm = options.algorithm;
    for (models::JobSpec& job : scenario.workload.training.jobs) job.algorithm = options.algorithm;
    for (IterativeWorkload::Step& step : scenario.workload.iterative.steps)
      step.collective.algorithm = options.algorithm;
  }
  const std::string json_path = options.json.empty() ? scenario.output.json_path : options.json;
  const std::string trace_path = options.trace.empty() ? scenario.output.trace_path : options.trace;

  Progress progress(options.max_wall_seconds, options.progress);
  runner::RunSettings settings;
  settings.trace = !trace_path.empty();
  settings.links = !options.links.empty();
  if (settings.links && scenario.workload.type != "collective")
    throw InputError("--links", "the per-link load report is for a collective workload; this "
                                "scenario's workload is \"" +
                                    scenario.workload.type + "\": drop --links");
  settings.begin = [&progress](const std::string& what, std::string_view unit, double done) {
    progress.begin(what, std::string(unit), done);
  };
  settings.progress = [&progress](Picoseconds simulated, std::uint64_t done) {
    return progress.keep_going(simulated, done);
  };
  settings.end = [&progress] {
    progress.end();
    return !progress.deadline_passed();
  };
  const runner::RunReport report = [&] {
    try {
      return runner::run_scenario(
          scenario, scenario.name.empty() ? options.scenario : scenario.name, settings);
    } catch (const InputError& error) {
      // A problem found while running (a bucket no algorithm can take) names a JSON pointer
      // into the scenario: say which file it points into.
      if (!error.where().starts_with('/')) throw;
      throw InputError(options.scenario + ": " + error.where(), error.reason());
    }
  }();
  const std::string stopped = "stopped at --max-wall-seconds " +
                              format_significant(options.max_wall_seconds, 6) + " " +
                              report.incomplete;
  if (report.json.is_null()) throw IncompleteRun(stopped);

  std::cout << report.table;
  if (!json_path.empty()) {
    write_file(json_path, [&](std::ostream& out) { out << report.json.dump(2) << "\n"; });
    std::cout << "# wrote " << json_path << "\n";
  }
  if (settings.links) {
    write_file(options.links, [&](std::ostream& out) { out << report.links.dump(2) << "\n"; });
    std::cout << "# wrote " << options.links << "\n";
  }
  if (!trace_path.empty()) {
    write_file(trace_path, [&](std::ostream& out) {
      runner::write_trace(report, out, *sim::parse_trace_level(options.trace_level));
    });
    std::cout << "# wrote " << trace_path << " (open in https://ui.perfetto.dev)\n";
  }
  // The run's own jobs stand for the sweep point equal to the scenario, unless a flag changed
  // what ran.
  const bool as_loaded = options.seed < 0 && options.algorithm.empty() && !options.compute_slowdown;
  if (scenario.workload.type == "training" && !scenario.sweep.empty())
    runner::print_sweep_points(scenario, std::cout, as_loaded ? &report : nullptr);
  if (!report.incomplete.empty()) throw IncompleteRun(stopped);
}

} // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run", "Simulate a scenario and print the nccl-tests-style table (size, count, type, redop, "
             "time, algbw, busbw) for each size of its collective workload");
  cmd->add_option("scenario", options->scenario, "Scenario JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--json", options->json, "Write the machine-readable report to FILE");
  cmd->add_option("--trace", options->trace,
                  "Write a Chrome/Perfetto trace (one track per rank) to FILE");
  cmd->add_option("--trace-level", options->trace_level,
                  "What --trace holds: steps (every step; the default), collectives (one span "
                  "per collective per rank and channel) or iterations (one span per training "
                  "iteration per rank, with its compute and communication phases)")
      ->check(CLI::IsMember({"steps", "collectives", "iterations"}));
  cmd->add_option("--links", options->links,
                  "Write the per-link load of each size (bytes, busy time, utilisation, busiest "
                  "first) to FILE as JSON, and print the busiest links of the largest size");
  cmd->add_option(
      "--algorithm", options->algorithm,
      "Override workload.algorithm (a name, auto, or nccl: NCCL's own choice per size)");
  // Bounded below 2^63: CLI11 would clamp a larger seed to INT64_MAX without a word.
  cmd->add_option("--seed", options->seed, "Override the scenario's seed")
      ->check(checks::range(0, 9e18));
  cmd->add_option("--max-wall-seconds", options->max_wall_seconds,
                  "Stop cleanly after this much wall time, reporting the sizes finished (exit 4)")
      ->check(checks::positive());
  cmd->add_flag("--compute-slowdown", options->compute_slowdown,
                "Slow compute beside communication kernels (engine.compute_slowdown: true), "
                "every engine");
  cmd->add_flag("--progress", options->progress,
                "Print progress (what is simulated, steps or events per second, simulated time, "
                "ETA) once a second on stderr even when it is not a terminal (on a terminal it "
                "is always shown)");
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
