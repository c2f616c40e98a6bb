#include "point_evaluator.hpp"
#include "engine_options.hpp"

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/auto_select.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "training_run.hpp"

#include <algorithm>
#include <set>

namespace ddlsim::cli {

namespace {

// A training point: job 0's iteration (a plan's sweep varies one job's cluster and settings).
plan::PointMetrics evaluate_training(const Scenario& scenario) {
  sim::AnalyticOptions engine;
  engine.per_step_overhead = scenario.engine.per_step_overhead;
  engine.reduce_bytes_per_second = scenario.engine.reduce_bytes_per_second;
  engine.seed = scenario.seed;
  const std::vector<models::JobIteration> jobs = simulate_training(scenario, engine);
  const models::JobSpec& spec = scenario.workload.training.jobs.at(0);
  const models::JobIteration& job = jobs.at(0);
  plan::PointMetrics metrics;
  metrics.gpus = static_cast<int>(spec.gpus.size());
  metrics.nodes =
      static_cast<int>(std::set<int>(spec.node_of_gpu.begin(), spec.node_of_gpu.end()).size());
  metrics.iteration_seconds = ps_to_seconds(job.time);
  metrics.samples_per_second = job.samples_per_second;
  metrics.scaling_efficiency = job.scaling_efficiency;
  const TrainingWorkload& training = scenario.workload.training;
  if (training.dataset_samples > 0)
    metrics.train_seconds = job.seconds_to_train(training.epochs, training.dataset_samples);
  metrics.what = "training " + spec.model->name + " " + spec.algorithm;
  return metrics;
}

} // namespace

plan::PointMetrics evaluate_point(const Scenario& scenario) {
  if (scenario.workload.type == "training") return evaluate_training(scenario);
  const CollectiveWorkload& workload = scenario.workload.collective;
  if (workload.sizes.empty()) throw InputError("/workload/sizes", "no size to simulate");
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  sim::AnalyticOptions engine;
  engine.per_step_overhead = scenario.engine.per_step_overhead;
  engine.reduce_bytes_per_second = scenario.engine.reduce_bytes_per_second;
  engine.seed = scenario.seed;
  const std::uint64_t bytes = *std::max_element(workload.sizes.begin(), workload.sizes.end());
  coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
  if (call.algorithm == "auto")
    call.algorithm = sim::choose_algorithm(topology, router, call, engine).algorithm;
  Picoseconds time = 0;
  if (scenario.engine.type == "packet") {
    sim::packet::PacketOptions options;
    options.spec = scenario.engine.packet;
    copy_shared_settings(engine, options);
    time = sim::packet::simulate_packet(topology, router, coll::Schedule::make(call), options).time;
  } else if (scenario.engine.type == "flow") {
    sim::flow::FlowOptions options;
    options.model = scenario.engine.flow;
    copy_shared_settings(engine, options);
    time = sim::flow::simulate_flow(topology, router, coll::Schedule::make(call), options).time;
  } else {
    time = sim::simulate_analytic(topology, router, coll::Schedule::make(call), engine).time;
  }
  plan::PointMetrics metrics;
  metrics.gpus = call.ranks;
  metrics.nodes =
      static_cast<int>(std::set<int>(call.node_of_rank.begin(), call.node_of_rank.end()).size());
  metrics.iteration_seconds = ps_to_seconds(time + scenario.engine.launch_overhead);
  metrics.what =
      std::string(coll::to_string(call.op)) + " " + format_bytes(bytes) + " " + call.algorithm;
  return metrics;
}

} // namespace ddlsim::cli
