// Runs one call of a scenario whose workload says "algorithm": "nccl" through the engine layer,
// with the NCCL tuner the scenario describes, and returns the result next to the tuner's choice
// (shared by the engine-layer NCCL tests).
#pragma once

#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/router.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace ddlsim::test_support {

// A scenario of an all_reduce that NCCL chooses for, on `topology` (the JSON of a "topology"
// object), with `nccl` as the workload's "nccl" object.
inline Scenario nccl_scenario(const std::string& topology, const std::string& nccl = "{}") {
  const Json json = Json::parse(R"({"topology": )" + topology + R"(,
    "workload": {"type": "collective", "op": "all_reduce", "algorithm": "nccl",
                 "sizes": ["8B"], "nccl": )" +
                                nccl + "}}");
  return load_scenario(json, "s.json", ".");
}

struct NcclRun {
  sim::EngineResult result;
  models::NcclChoice choice;
};

inline NcclRun run_nccl(const Scenario& scenario, std::uint64_t bytes) {
  const CollectiveWorkload& workload = scenario.workload.collective;
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  sim::CommonOptions options;
  auto tuner = std::make_shared<const models::NcclTuner>(*workload.nccl_system, workload.nccl);
  options.nccl = tuner;
  const coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
  return {sim::simulate(call, topology, router, scenario.engine, options),
          tuner->choose(workload.op, bytes)};
}

} // namespace ddlsim::test_support
