// One Schedule on the engine an EngineSpec names, its timing in the engine layer's common form.
// The workloads (engine.cpp) build the Schedule and finish the result.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/sim/engine.hpp"

#include <cstdint>
#include <functional>

namespace ddlsim::sim {

// Called with every step's record: by the analytic engine as it times the step, by the others
// from the records they keep for it, in the order they keep them.
using StepSink = std::function<void(const StepRecord&)>;

// The analytic engine's options for the spec's per-step overhead and GPU rates (no step records).
AnalyticOptions analytic_options(const EngineSpec& spec, const CommonOptions& options);

// Runs `schedule` with the spec's per-step overhead and GPU rates (not its launch overhead: the
// caller applies that, once). Fills every EngineResult field but `algorithm`, `auto_reason` and
// `jobs`. `on_step_channels` names the channels on_step needs, a bit each (AnalyticOptions).
EngineResult run_schedule(const coll::Schedule& schedule, const topo::Topology& topology,
                          topo::Router& router, const EngineSpec& spec,
                          const CommonOptions& options, const StepSink& on_step = {},
                          const std::function<void()>& on_restart = {},
                          std::uint64_t on_step_channels = ~std::uint64_t{0});

} // namespace ddlsim::sim
