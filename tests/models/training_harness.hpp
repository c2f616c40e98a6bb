// Runs a training scenario given as JSON text the way `ddlsim run` does (load,
// plan, one Schedule on the analytic engine, metrics), with the engine's default GPU rates.
#pragma once

#include "ddlsim/models/iteration_metrics.hpp"
#include "ddlsim/models/iteration_schedule.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"

#include <memory>
#include <string>

namespace ddlsim::models::test {

struct TrainingRun {
  std::shared_ptr<const TrainingPlan> plan;
  std::vector<JobIteration> jobs;
  sim::CollectiveTiming timing;
};

inline Scenario load_text(const std::string& text) {
  return load_scenario(Json::parse(text), "test.json", ".");
}

// The message of the InputError loading `text` throws, or "no error".
inline std::string load_error_of(const std::string& text) {
  return test_support::error_of([&] { (void)load_text(text); });
}

inline TrainingRun run_training(const Scenario& scenario) {
  TrainingRun run;
  run.plan = std::make_shared<const TrainingPlan>(plan_training(scenario.workload.training.jobs));
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  sim::AnalyticOptions options;
  options.record_steps = true;
  run.timing = sim::simulate_analytic(topology, router, iteration_schedule(run.plan), options);
  IterationRecorder steps(run.plan->ranks);
  for (const sim::StepRecord& r : run.timing.steps_recorded)
    steps.add(r.rank, r.channel, r.start, r.end);
  run.jobs = summarize_iteration(*run.plan, steps);
  return run;
}

inline TrainingRun run_training(const std::string& text) {
  return run_training(load_text(text));
}

// A cluster of `nodes` nodes of `gpus` V100 on NVLink (cube mesh needs 8) with one NIC of
// `nic_gbps` each on one switch, and a training workload whose keys are `workload` (JSON
// members without braces, after "type": "training").
inline std::string cluster(int nodes, double nic_gbps, const std::string& workload, int gpus = 1) {
  return R"({"topology": {"nodes": [{"count": )" + std::to_string(nodes) + R"(, "gpus": )" +
         std::to_string(gpus) +
         R"(, "gpu_model": "V100-SXM2-16GB", "intra": "pcie_only", "pcie_bandwidth_gbps": 128,
         "nics": 1, "nic_bandwidth_gbps": )" +
         std::to_string(nic_gbps) +
         R"(}], "fabric": {"type": "single_switch"}},
      "workload": {"type": "training", )" +
         workload + "}}";
}

} // namespace ddlsim::models::test
