// A chakra workload's run report: the iteration time, the GPU stream's compute, the exposed
// communication, and per collective type (and point-to-point) the calls, bytes, busy and exposed
// time (models/chakra.hpp defines them).
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

#include <sstream>

namespace ddlsim::runner {

RunReport chakra_report(const Scenario& scenario, const std::string& label,
                        const RunSettings& settings) {
  const ChakraWorkload& chakra = scenario.workload.chakra;
  const models::ChakraPlan& plan = *chakra.plan;
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const std::string engine(sim::engine_name(scenario.engine));
  const sim::CommonOptions options = common_options(scenario, settings);
  const std::string what =
      "chakra " +
      (chakra.prefix.empty() ? std::to_string(chakra.files.size()) + " files" : chakra.prefix) +
      ", " + std::to_string(plan.ranks) + " ranks";
  if (settings.begin) settings.begin(what, sim::progress_unit(scenario.engine), 0.0);
  sim::EngineResult result =
      sim::simulate(sim::ChakraTrace{chakra.plan}, topology, router, scenario.engine, options);
  const bool go_on = !settings.end || settings.end();
  RunReport report;
  if (!result.complete || !go_on) {
    report.incomplete = "while simulating the trace; nothing is complete";
    report.table = "# " + label + ": " + what + " on the " + engine + " engine: incomplete\n";
    return report;
  }
  const models::ChakraIteration& it = result.chakra;
  std::ostringstream text;
  text << "# " << label << ": " << what << ", " << plan.nodes << " nodes (" << plan.skipped
       << " skipped, " << plan.cpu_nodes << " on the CPU, " << plan.roofline_nodes
       << " timed on the roofline";
  if (plan.dropped_dependencies > 0)
    text << ", " << plan.dropped_dependencies << " dependencies on unknown nodes dropped";
  text << "), " << engine << " engine\n";
  char row[256];
  std::snprintf(row, sizeof row, "#  %14s %14s %14s %14s\n", "iteration_us", "compute_us",
                "exposed_comm_us", "comm_us");
  text << row;
  std::snprintf(row, sizeof row, "   %14.3f %14.3f %14.3f %14.3f\n", ps_to_us(it.time),
                ps_to_us(it.compute), ps_to_us(it.exposed), ps_to_us(it.communication));
  text << row;
  std::snprintf(row, sizeof row, "#  %-16s %8s %16s %14s %14s\n", "kind", "calls", "bytes",
                "busy_us", "exposed_us");
  text << row;
  Json kinds = Json::array();
  for (const models::ChakraIteration::Kind& k : it.kinds) {
    std::snprintf(row, sizeof row, "   %-16s %8llu %16llu %14.3f %14.3f\n", k.what.name.c_str(),
                  static_cast<unsigned long long>(k.what.calls),
                  static_cast<unsigned long long>(k.what.bytes), ps_to_us(k.busy),
                  ps_to_us(k.exposed));
    text << row;
    kinds.push_back({{"kind", k.what.name},
                     {"calls", k.what.calls},
                     {"bytes", k.what.bytes},
                     {"busy_us", ps_to_us(k.busy)},
                     {"exposed_us", ps_to_us(k.exposed)}});
  }
  text << "#  compute, exposed and busy: the largest over ranks; calls count each group's call "
          "once\n";
  if (!result.details.summary.empty())
    text << "# " << engine << " engine:\n" << result.details.summary;
  report.table = text.str();
  report.json = {{"scenario", label},
                 {"engine", engine},
                 {"workload", "chakra"},
                 {"ranks", plan.ranks},
                 {"files", chakra.files},
                 {"nodes", plan.nodes},
                 {"skipped_nodes", plan.skipped},
                 {"cpu_nodes", plan.cpu_nodes},
                 {"roofline_nodes", plan.roofline_nodes},
                 {"dropped_dependencies", plan.dropped_dependencies},
                 {"iteration_us", ps_to_us(it.time)},
                 {"compute_us", ps_to_us(it.compute)},
                 {"exposed_communication_us", ps_to_us(it.exposed)},
                 {"communication_us", ps_to_us(it.communication)},
                 {"kinds", std::move(kinds)},
                 {"steps", result.steps},
                 {"transfers", result.transfers},
                 {"bytes_sent", result.bytes_sent}};
  if (!result.details.json.is_null()) report.json[engine] = std::move(result.details.json);
  if (settings.trace)
    report.trace.push_back({what, std::move(result.steps_recorded),
                            std::move(result.details.counter_names),
                            std::move(result.details.counters)});
  return report;
}

} // namespace ddlsim::runner
