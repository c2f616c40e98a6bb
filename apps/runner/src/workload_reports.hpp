// The kinds of run report: run_scenario (run_report.cpp) picks by workload type.
#pragma once

#include "ddlsim/runner/run_report.hpp"
#include "ddlsim/sim/engine.hpp"

namespace ddlsim::runner {

RunReport collective_report(const Scenario& scenario, const std::string& label,
                            const RunSettings& settings);
RunReport training_report(const Scenario& scenario, const std::string& label,
                          const RunSettings& settings);
// A collective workload with "traffic" (op send_recv): per-flow completion times.
RunReport traffic_report(const Scenario& scenario, const std::string& label,
                         const RunSettings& settings);
// A chakra workload: Chakra execution traces (models/chakra.hpp).
RunReport chakra_report(const Scenario& scenario, const std::string& label,
                        const RunSettings& settings);
RunReport llm_report(const Scenario& scenario, const std::string& label,
                     const RunSettings& settings);
// A job_trace workload: jobs arriving on a shared cluster (jobs/shared_cluster.hpp).
RunReport jobs_report(const Scenario& scenario, const std::string& label,
                      const RunSettings& settings);
RunReport iterative_report(const Scenario& scenario, const std::string& label,
                           const RunSettings& settings);

// The engine options of a run: the scenario's seed, the trace and the progress callback.
sim::CommonOptions common_options(const Scenario& scenario, const RunSettings& settings);

} // namespace ddlsim::runner
