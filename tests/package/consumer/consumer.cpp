// Built against an installed ddlsim: loads a scenario and times the first size of its collective
// workload on the analytic engine through the public headers, printing `time_ps N` for the test to
// compare with what `ddlsim run --json` reports. Usage: consumer SCENARIO.json
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer SCENARIO.json\n";
    return 2;
  }
  try {
    using namespace ddlsim;
    const Scenario scenario = load_scenario_file(argv[1]);
    const CollectiveWorkload& workload = scenario.workload.collective;
    const topo::Topology topology = topo::build_topology(scenario.topology);
    topo::Router router(topology);
    const coll::CollectiveCall call =
        make_collective_call(workload, scenario.topology, workload.sizes.front());
    sim::AnalyticOptions options;
    options.per_step_overhead = scenario.engine.per_step_overhead;
    options.reduce_bytes_per_second = scenario.engine.reduce_bytes_per_second;
    options.seed = scenario.seed;
    const sim::CollectiveTiming timing =
        sim::simulate_analytic(topology, router, coll::Schedule::make(call), options);
    std::cout << coll::to_string(call.op) << " " << call.algorithm << " on " << workload.ranks
              << " ranks, " << workload.sizes.front() << " bytes\n"
              << "time_ps " << timing.time + scenario.engine.launch_overhead << "\n";
  } catch (const std::exception& error) {
    std::cerr << "consumer: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
