// `ddlsim run` on a training workload: plan the iteration, run it as one Schedule on the
// analytic engine, print per job and per GPU compute / communication / exposed / idle time,
// samples/s, scaling efficiency and time to train; optional JSON report and Chrome trace.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/models/iteration_metrics.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"

#include <string>

namespace ddlsim::cli {

// What an engine adds to the report beyond the iteration metrics: the packet engine's drops,
// retransmissions, ECN/PFC counts and per-link figures (empty for the other engines).
struct TrainingEngineDetails {
  Json details;        // null when the engine adds nothing
  std::string summary; // lines for under the table, each starting with "#   "
};

// One iteration of every job of the scenario's training workload on the analytic engine: the
// per-job metrics, (with `timing`) the engine's result with its step records and (with
// `details`) what the engine adds. Returns an empty list when engine.progress stopped the run.
std::vector<models::JobIteration> simulate_training(const Scenario& scenario,
                                                    sim::AnalyticOptions engine,
                                                    sim::CollectiveTiming* timing = nullptr,
                                                    TrainingEngineDetails* details = nullptr);

// Returns false when engine.progress stopped the run (nothing is printed then).
bool run_training(const Scenario& scenario, const std::string& label, sim::AnalyticOptions engine,
                  const std::string& json_path, const std::string& trace_path);

} // namespace ddlsim::cli
