// Runs a training scenario given as JSON text on the packet engine with a given PacketEngineSpec
// (plan, one iteration Schedule, metrics), for the packet training tests.
#pragma once

#include "ddlsim/sim/packet/packet_engine.hpp"

#include "../../models/training_harness.hpp"

#include <memory>
#include <vector>

namespace ddlsim::sim::packet::test {

struct PacketIteration {
  PacketTiming timing;
  std::vector<models::JobIteration> jobs;
  std::shared_ptr<const models::TrainingPlan> plan;
};

// `iterations` back to back (the plan's one by default).
inline PacketIteration run_packet_training(const Scenario& scenario, const PacketEngineSpec& spec,
                                           int iterations = 1) {
  PacketIteration run;
  models::TrainingPlan plan = models::plan_training(scenario.workload.training.jobs);
  plan.iterations = iterations;
  run.plan = std::make_shared<const models::TrainingPlan>(std::move(plan));
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  PacketOptions options;
  options.spec = spec;
  options.record_steps = true;
  run.timing = simulate_packet(topology, router, models::iteration_schedule(run.plan), options);
  models::IterationRecorder steps(run.plan->ranks);
  for (const StepRecord& r : run.timing.steps_recorded)
    steps.add(r.rank, r.channel, r.start, r.end);
  run.jobs = models::summarize_iteration(*run.plan, steps);
  return run;
}

} // namespace ddlsim::sim::packet::test
