// One flow simulation inside the current process: SimGrid started, the platform built, one
// actor per (rank, channel) program, run to the end. SimGrid can run only one simulation per
// process, so simulate_flow calls this in a forked child (child_process.hpp).
#pragma once

#include "child_process.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

namespace ddlsim::sim::flow {

// Throws like simulate_flow; a SimGrid failure may abort the process. When options.progress
// asks to stop, the timing so far goes to `report_now`, which does not return: SimGrid cannot
// stop a run halfway and tear down cleanly, and the process ends anyway.
CollectiveTiming run_flow_in_this_process(const topo::Topology& topology, topo::Router& router,
                                          const coll::Schedule& schedule,
                                          const FlowOptions& options, const ReportNow& report_now);

} // namespace ddlsim::sim::flow
