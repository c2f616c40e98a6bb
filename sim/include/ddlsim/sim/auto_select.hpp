// `auto`: chooses the algorithm for one call by timing every exact candidate with the analytic
// engine on the actual topology, the way NCCL's tuner picks by modelled cost, and says why.
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"

#include <string>

namespace ddlsim::sim {

struct AlgorithmChoice {
  std::string algorithm;
  std::string reason; // "ring 1.23 ms < rabenseifner 1.40 ms < ..."
};

// Candidates: every registered algorithm for call.op that accepts the call and computes the
// exact result (lossy compression is never chosen implicitly).
AlgorithmChoice choose_algorithm(const topo::Topology& topology, topo::Router& router,
                                 coll::CollectiveCall call, const AnalyticOptions& options);

} // namespace ddlsim::sim
