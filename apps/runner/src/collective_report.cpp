// A collective workload's run report: one nccl-tests-style row per size.
#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/report.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "link_report.hpp"
#include "workload_reports.hpp"

#include <sstream>

namespace ddlsim::runner {

RunReport collective_report(const Scenario& scenario, const std::string& label,
                            const RunSettings& settings) {
  const CollectiveWorkload& workload = scenario.workload.collective;
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const std::string engine(sim::engine_name(scenario.engine));
  sim::CollectiveReport table{label, engine, workload.op, workload.ranks, scenario.seed, {}};
  std::vector<std::string> summaries; // the engine's lines under each row, if any
  sim::CommonOptions options = common_options(scenario, settings);
  options.record_counters = settings.trace;
  options.record_steps = settings.trace || settings.links; // the link report reads the steps
  RunReport report;
  Json link_sizes = Json::array();
  std::uint64_t largest_bytes = 0;
  sim::LinkLoadReport largest; // the link report of the largest size, for the table
  double all_bytes = 0, bytes_done = 0;
  for (std::uint64_t bytes : workload.sizes) all_bytes += static_cast<double>(bytes);
  for (std::size_t i = 0; i < workload.sizes.size(); ++i) {
    const std::uint64_t bytes = workload.sizes[i];
    const coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
    if (settings.begin)
      settings.begin(
          std::string(coll::to_string(call.op)) + " " + format_bytes(bytes) + " " + call.algorithm +
              " (" + std::to_string(i + 1) + "/" + std::to_string(workload.sizes.size()) + ")",
          sim::progress_unit(scenario.engine), all_bytes > 0 ? bytes_done / all_bytes : -1.0);
    bytes_done += static_cast<double>(bytes);
    sim::EngineResult result = sim::simulate(call, topology, router, scenario.engine, options);
    const bool go_on = !settings.end || settings.end();
    if (!result.complete || !go_on) {
      report.incomplete =
          "while simulating " + format_bytes(bytes) + "; the sizes above it are complete";
      break;
    }
    sim::CollectiveRow row;
    row.bytes = bytes;
    row.count = call.elements();
    row.dtype = call.dtype;
    row.reduction = call.reduction;
    row.algorithm = result.algorithm;
    row.why = result.auto_reason;
    row.nccl_choice = result.nccl_choice;
    row.nccl_model_us = result.nccl_model_seconds * 1e6;
    row.time = result.time;
    row.steps = result.steps;
    row.transfers = result.transfers;
    row.bytes_sent = result.bytes_sent;
    row.peak_flows_per_link = result.peak_flows_per_link;
    row.engine_details = std::move(result.details.json);
    table.rows.push_back(std::move(row));
    summaries.push_back(std::move(result.details.summary));
    if (settings.links) {
      sim::LinkLoadReport loads =
          sim::link_loads(topology, router, scenario.seed, result.steps_recorded, result.time);
      link_sizes.push_back(link_load_json(topology, loads, bytes));
      if (bytes >= largest_bytes) {
        largest = std::move(loads);
        largest_bytes = bytes;
      }
    }
    if (settings.trace)
      report.trace.push_back({std::string(coll::to_string(call.op)) + " " + format_bytes(bytes) +
                                  " " + result.algorithm,
                              std::move(result.steps_recorded),
                              std::move(result.details.counter_names),
                              std::move(result.details.counters)});
  }
  std::ostringstream text;
  sim::print_table(table, text);
  if (options.nccl) { // what NCCL's model sees, under the choices it made
    std::istringstream lines(options.nccl->system().summary());
    for (std::string line; std::getline(lines, line);) text << "# " << line << "\n";
  }
  for (std::size_t i = 0; i < summaries.size(); ++i)
    if (!summaries[i].empty())
      text << "# " << engine << " engine, " << format_bytes(table.rows[i].bytes) << ":\n"
           << summaries[i];
  if (settings.links && !table.rows.empty()) {
    text << "# busiest links, " << format_bytes(largest_bytes) << " (of "
         << format_fixed(ps_to_us(largest.time), 2) << " us):\n";
    print_busiest_links(topology, largest, 8, text);
    report.links = {{"sizes", std::move(link_sizes)}};
  }
  if (!scenario.sweep.empty())
    text << "# note: this scenario's sweep (" << scenario.sweep.size()
         << " axes) was validated but not run: `run` simulates the base scenario; `ddlsim plan` "
            "runs the sweep\n";
  report.table = text.str();
  report.json = sim::to_json(table);
  return report;
}

} // namespace ddlsim::runner
