// The entries as the libraries offer them before the engine layer: the analytic engine runs a
// collective workload (the table `ddlsim run` makes of it), and the command's point evaluator
// (compiled in from apps/) evaluates plan points.
#include "engine_entry.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/auto_select.hpp"
#include "ddlsim/sim/report.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "point_evaluator.hpp"

namespace ddlsim::python {

Json run_report(const Scenario& scenario, const std::string& label) {
  if (scenario.workload.type != "collective" || scenario.engine.type != "analytic")
    throw InputError("/engine/type", "the Python module runs collective workloads on the "
                                     "analytic engine in this version; use `ddlsim run` for \"" +
                                         scenario.engine.type + "\" and training workloads");
  const CollectiveWorkload& workload = scenario.workload.collective;
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  sim::AnalyticOptions engine;
  engine.per_step_overhead = scenario.engine.per_step_overhead;
  engine.reduce_bytes_per_second = scenario.engine.reduce_bytes_per_second;
  engine.seed = scenario.seed;
  sim::CollectiveReport report{label,          scenario.engine.type, workload.op,
                               workload.ranks, scenario.seed,        {}};
  for (const std::uint64_t bytes : workload.sizes) {
    coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
    sim::CollectiveRow row;
    if (call.algorithm == "auto") {
      const sim::AlgorithmChoice choice = sim::choose_algorithm(topology, router, call, engine);
      call.algorithm = choice.algorithm;
      row.why = choice.reason;
    }
    const sim::CollectiveTiming timing =
        sim::simulate_analytic(topology, router, coll::Schedule::make(call), engine);
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
  }
  return sim::to_json(report);
}

plan::PointMetrics evaluate_plan_point(const Scenario& scenario) {
  return cli::evaluate_point(scenario);
}

std::string engine_name(const Scenario& scenario) {
  return scenario.engine.type;
}

bool runs_in_child_process(const Scenario& scenario) {
  return scenario.engine.type == "flow";
}

} // namespace ddlsim::python
