// A lower bound on a layout's iteration time, from its plan alone, for `ddlsim plan`'s pruning
// (llm_layout_search.cpp): a layout whose bound is above the keep-th fastest time simulated so
// far cannot reach the ranked rows and is not simulated.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/models/llm.hpp"
#include "ddlsim/sim/engine_spec.hpp"
#include "ddlsim/topologies/router.hpp"

#include <cstdint>

namespace ddlsim::runner {

// At or below the iteration time every run of `plan` on `engine` reports (0 for a plan whose
// pipeline deadlocks). On every engine: the pipeline of each stage's compute stream with
// transfers and collectives free (compute plus bubble). On the analytic engine also what the
// compute stream waits for a collective at least: its launch step, and its first lane's steps
// walked on every member together with every transfer alone on its path; and no less than the
// busiest link takes to carry the bytes every collective of the iteration sends over it
// (llm_layout_bound.cpp says why each term holds). `topology`, `router` and `seed` are the
// simulation's (the same ECMP paths).
Picoseconds llm_iteration_lower_bound(const models::LlmPlan& plan, const sim::EngineSpec& engine,
                                      const topo::Topology& topology, topo::Router& router,
                                      std::uint64_t seed);

} // namespace ddlsim::runner
