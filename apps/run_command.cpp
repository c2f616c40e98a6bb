// `ddlsim run SCENARIO`: simulate the scenario's workload and print the nccl-tests-style table.
#include "commands.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/auto_select.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/sim/packet/packet_report.hpp"
#include "ddlsim/sim/report.hpp"
#include "ddlsim/sim/trace.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "engine_options.hpp"
#include "progress.hpp"
#include "training_run.hpp"

#include <fstream>
#include <iostream>

namespace ddlsim::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string json;
  std::string trace;
  std::string algorithm;
  std::int64_t seed = -1;
  double max_wall_seconds = 0;
};

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path);
  if (!out) throw InputError(path, "cannot open the output file for writing");
  write(out);
  if (!out) throw InputError(path, "writing the output file failed (disk full?)");
}

// The packet engine's run of one call: its row, its summary lines and its trace section.
sim::CollectiveRow run_packet_engine(const Scenario& scenario, const topo::Topology& topology,
                                     topo::Router& router, const coll::CollectiveCall& call,
                                     const sim::AnalyticOptions& analytic, bool& complete,
                                     std::string& summary, sim::TraceSection* trace,
                                     std::vector<sim::StepRecord>& steps) {
  sim::packet::PacketOptions options;
  options.spec = scenario.engine.packet;
  copy_shared_settings(analytic, options);
  options.record_steps = trace != nullptr;
  options.record_queues = trace != nullptr;
  sim::packet::PacketTiming timing =
      sim::packet::simulate_packet(topology, router, coll::Schedule::make(call), options);
  complete = timing.complete;
  sim::CollectiveRow row;
  row.time = timing.time + scenario.engine.launch_overhead; // a calibration's, as for analytic
  row.steps = timing.steps;
  row.transfers = timing.transfers;
  row.bytes_sent = timing.bytes_sent;
  row.engine_details = sim::packet::packet_details(timing, topology);
  summary = sim::packet::packet_summary(timing, topology);
  if (trace) {
    steps = std::move(timing.steps_recorded);
    std::vector<std::uint32_t> track_of(topology.link_count(), UINT32_MAX);
    for (const sim::packet::QueueSample& sample : timing.queue_samples) {
      std::uint32_t& track = track_of[sample.link];
      if (track == UINT32_MAX) {
        track = static_cast<std::uint32_t>(trace->counter_names.size());
        trace->counter_names.push_back("queue bytes " +
                                       sim::packet::link_name(topology, sample.link));
      }
      trace->counters.push_back({track, sample.time, static_cast<double>(sample.bytes)});
    }
  }
  return row;
}

void run(const RunOptions& options) {
  Scenario scenario = load_scenario_file(options.scenario);
  if (options.seed >= 0) scenario.seed = static_cast<std::uint64_t>(options.seed);
  CollectiveWorkload& workload = scenario.workload.collective;
  if (!options.algorithm.empty()) workload.algorithm = options.algorithm;
  if (!options.algorithm.empty())
    for (models::JobSpec& job : scenario.workload.training.jobs) job.algorithm = options.algorithm;
  const std::string json_path = options.json.empty() ? scenario.output.json_path : options.json;
  const std::string trace_path = options.trace.empty() ? scenario.output.trace_path : options.trace;

  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  sim::AnalyticOptions engine;
  engine.per_step_overhead = scenario.engine.per_step_overhead;
  engine.reduce_bytes_per_second = scenario.engine.reduce_bytes_per_second;
  engine.seed = scenario.seed;
  engine.record_steps = !trace_path.empty();

  sim::CollectiveReport report{scenario.name.empty() ? options.scenario : scenario.name,
                               scenario.engine.type,
                               workload.op,
                               workload.ranks,
                               scenario.seed,
                               {}};
  std::vector<std::vector<sim::StepRecord>> traces;
  std::vector<sim::TraceSection> sections;
  Progress progress(options.max_wall_seconds);
  engine.progress = [&progress](Picoseconds simulated, std::uint64_t steps) {
    return progress.keep_going(simulated, steps);
  };
  if (scenario.workload.type == "training") {
    progress.begin("training iteration");
    const bool complete = run_training(scenario, report.scenario, engine, json_path, trace_path);
    progress.end();
    if (!complete || progress.deadline_passed())
      throw IncompleteRun("stopped at --max-wall-seconds " +
                          std::to_string(options.max_wall_seconds) +
                          " while simulating the training iteration");
    return;
  }
  // engine.type = "flow": SimGrid, one child process per size (sim/flow/flow_engine.hpp).
  sim::flow::FlowOptions flow_engine;
  flow_engine.model = scenario.engine.flow;
  copy_shared_settings(engine, flow_engine);
  flow_engine.record_steps = engine.record_steps;
  std::string stopped_at;
  std::vector<std::string> summaries;             // packet engine: lines under each row
  std::vector<sim::TraceSection> packet_sections; // packet engine: queue counters per row
  for (std::size_t i = 0; i < workload.sizes.size() && stopped_at.empty(); ++i) {
    const std::uint64_t bytes = workload.sizes[i];
    coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
    progress.begin(std::string(coll::to_string(call.op)) + " " + format_bytes(bytes) + " " +
                       call.algorithm + " (" + std::to_string(i + 1) + "/" +
                       std::to_string(workload.sizes.size()) + ")",
                   scenario.engine.type == "packet" ? "events" : "steps");
    sim::CollectiveRow row;
    if (scenario.engine.type == "packet") {
      if (call.algorithm == "auto")
        throw InputError("/workload/algorithm",
                         "\"auto\" chooses with the analytic engine; name an algorithm for the "
                         "packet engine (e.g. \"ring\")");
      bool complete = true;
      std::string summary;
      sim::TraceSection section{std::string(coll::to_string(call.op)) + " " + format_bytes(bytes) +
                                    " " + call.algorithm,
                                nullptr,
                                {},
                                {}};
      std::vector<sim::StepRecord> steps;
      row = run_packet_engine(scenario, topology, router, call, engine, complete, summary,
                              engine.record_steps ? &section : nullptr, steps);
      progress.end();
      if (!complete || progress.deadline_passed()) {
        stopped_at = format_bytes(bytes);
        break;
      }
      row.bytes = bytes;
      row.count = call.elements();
      row.dtype = call.dtype;
      row.reduction = call.reduction;
      row.algorithm = call.algorithm;
      report.rows.push_back(row);
      summaries.push_back(std::move(summary));
      if (engine.record_steps) {
        traces.push_back(std::move(steps));
        packet_sections.push_back(std::move(section));
      }
      continue;
    }
    if (call.algorithm == "auto") {
      sim::AnalyticOptions quiet = engine;
      quiet.record_steps = false;
      const sim::AlgorithmChoice choice = sim::choose_algorithm(topology, router, call, quiet);
      call.algorithm = choice.algorithm;
      row.why = choice.reason;
    }
    const coll::Schedule schedule = coll::Schedule::make(call);
    sim::CollectiveTiming timing =
        scenario.engine.type == "flow"
            ? sim::flow::simulate_flow(topology, router, schedule, flow_engine)
            : sim::simulate_analytic(topology, router, schedule, engine);
    progress.end();
    if (!timing.complete || progress.deadline_passed()) {
      stopped_at = format_bytes(bytes);
      break;
    }
    row.bytes = bytes;
    row.count = call.elements();
    row.dtype = call.dtype;
    row.reduction = call.reduction;
    row.algorithm = call.algorithm;
    row.time = timing.time + scenario.engine.launch_overhead;
    row.steps = timing.steps;
    row.transfers = timing.transfers;
    row.bytes_sent = timing.bytes_sent;
    row.peak_flows_per_link = timing.peak_flows_per_link;
    report.rows.push_back(row);
    if (engine.record_steps) traces.push_back(std::move(timing.steps_recorded));
  }
  sim::print_table(report, std::cout);
  for (std::size_t i = 0; i < summaries.size(); ++i)
    std::cout << "# packet engine, " << format_bytes(report.rows[i].bytes) << ":\n" << summaries[i];
  if (!scenario.sweep.empty())
    std::cout << "# note: this scenario's sweep (" << scenario.sweep.size()
              << " axes) was validated but not run: `run` simulates the base scenario; sweeps "
                 "belong to `ddlsim plan`, which is not in this version yet\n";
  if (!json_path.empty()) {
    write_file(json_path, [&](std::ostream& out) { out << sim::to_json(report).dump(2) << "\n"; });
    std::cout << "# wrote " << json_path << "\n";
  }
  if (!trace_path.empty()) {
    for (std::size_t i = 0; i < traces.size(); ++i) {
      if (i < packet_sections.size()) {
        sections.push_back(std::move(packet_sections[i]));
        sections.back().steps = &traces[i];
        continue;
      }
      sections.push_back({std::string(coll::to_string(workload.op)) + " " +
                              format_bytes(report.rows[i].bytes) + " " + report.rows[i].algorithm,
                          &traces[i]});
    }
    write_file(trace_path, [&](std::ostream& out) { sim::write_chrome_trace(sections, out); });
    std::cout << "# wrote " << trace_path << " (open in https://ui.perfetto.dev)\n";
  }
  if (!stopped_at.empty()) {
    throw IncompleteRun("stopped at --max-wall-seconds " +
                        std::to_string(options.max_wall_seconds) + " while simulating " +
                        stopped_at + "; the sizes above it are complete");
  }
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
  cmd->add_option("--algorithm", options->algorithm,
                  "Override workload.algorithm (a name or auto)");
  cmd->add_option("--seed", options->seed, "Override the scenario's seed")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-wall-seconds", options->max_wall_seconds,
                  "Stop cleanly after this much wall time, reporting the sizes finished (exit 4)")
      ->check(CLI::PositiveNumber);
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
