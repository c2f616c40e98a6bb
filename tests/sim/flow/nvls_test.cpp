// The flow engine does not model in-switch reduction (NVLS): a schedule with switch steps is an
// InputError at "engine" that names the analytic engine.
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("flow: NVLS switch steps are rejected naming the analytic engine") {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({*topo::find_node_preset("dgx-h100"), 1});
  const topo::Topology topology = topo::build_topology(spec);
  topo::Router router(topology);
  coll::CollectiveCall call;
  call.ranks = 8;
  call.bytes = 1 << 20;
  call.algorithm = "nvls";
  const coll::Schedule schedule = coll::Schedule::make(call);
  const std::string error = test_support::error_of(
      [&] { sim::flow::simulate_flow(topology, router, schedule, sim::flow::FlowOptions{}); });
  CHECK_THAT(error, Catch::Contains("does not model in-switch reduction") &&
                        Catch::Contains("analytic engine"));
}
