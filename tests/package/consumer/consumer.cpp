// Built against an installed ddlsim: loads a scenario and times the first size of its collective
// workload on the scenario's engine through the public engine entry (ddlsim/sim/engine.hpp),
// printing `time_ps N` for the test to compare with what `ddlsim run --json` reports.
// Usage: consumer SCENARIO.json
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
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
    sim::CommonOptions options;
    options.seed = scenario.seed;
    const sim::EngineResult result =
        sim::simulate(call, topology, router, scenario.engine, options);
    std::cout << coll::to_string(call.op) << " " << result.algorithm << " on " << workload.ranks
              << " ranks, " << workload.sizes.front() << " bytes, "
              << sim::engine_name(scenario.engine) << " engine\n"
              << "time_ps " << result.time << "\n";
  } catch (const std::exception& error) {
    std::cerr << "consumer: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
