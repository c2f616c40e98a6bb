#include "ddlsim/sim/flow/flow_engine.hpp"

#include "child_process.hpp"
#include "flow_run.hpp"

namespace ddlsim::sim::flow {

CollectiveTiming simulate_flow(const topo::Topology& topology, topo::Router& router,
                               const coll::Schedule& schedule, const FlowOptions& options) {
  return run_in_child_process([&](const ReportNow& report_now) {
    return run_flow_in_this_process(topology, router, schedule, options, report_now);
  });
}

} // namespace ddlsim::sim::flow
