#include "ddlsim/runner/point_evaluator.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/runner/run_report.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace ddlsim::runner {
namespace {

// The nodes and GPUs of each kind that units (GPUs or ranks) on nodes `node_of` use: node i of
// the cluster is of its node group's preset, the groups' nodes numbered in order.
std::vector<plan::KindCount> kinds_used(const topo::ClusterSpec& cluster,
                                        const std::vector<int>& node_of) {
  std::vector<std::string> kind_of_node;
  for (const topo::NodeGroup& group : cluster.node_groups)
    kind_of_node.insert(kind_of_node.end(), static_cast<std::size_t>(group.count),
                        group.spec.preset);
  std::map<std::string, plan::KindCount> counts;
  std::set<int> seen;
  for (int node : node_of) {
    const std::string& kind = kind_of_node.at(static_cast<std::size_t>(node));
    plan::KindCount& count = counts[kind];
    count.kind = kind;
    ++count.gpus;
    if (seen.insert(node).second) ++count.nodes;
  }
  std::vector<plan::KindCount> kinds;
  for (auto& [kind, count] : counts) kinds.push_back(std::move(count));
  return kinds;
}

// Job 0's iteration (a plan's sweep varies one job's cluster and settings).
plan::PointMetrics training_metrics(const Scenario& scenario,
                                    const std::vector<models::JobIteration>& jobs) {
  const models::JobSpec& spec = scenario.workload.training.jobs.at(0);
  const models::JobIteration& job = jobs.at(0);
  plan::PointMetrics metrics;
  metrics.gpus = static_cast<int>(spec.gpus.size());
  metrics.nodes =
      static_cast<int>(std::set<int>(spec.node_of_gpu.begin(), spec.node_of_gpu.end()).size());
  metrics.kinds = kinds_used(scenario.topology, spec.node_of_gpu);
  metrics.iteration_seconds = ps_to_seconds(job.time);
  metrics.samples_per_second = job.samples_per_second;
  metrics.scaling_efficiency = job.scaling_efficiency;
  const TrainingWorkload& training = scenario.workload.training;
  if (training.dataset_samples > 0)
    metrics.train_seconds = job.seconds_to_train(training.epochs, training.dataset_samples);
  metrics.what = "training " + spec.model->name + " " + spec.algorithm;
  return metrics;
}

plan::PointMetrics evaluate_training(const Scenario& scenario) {
  return training_metrics(scenario, simulate_training(scenario).jobs);
}

} // namespace

plan::PointMetrics whole_cluster(const topo::ClusterSpec& cluster) {
  plan::PointMetrics metrics;
  std::vector<int> every_gpu;
  for (const topo::NodeGroup& group : cluster.node_groups)
    for (int i = 0; i < group.count; ++i, ++metrics.nodes)
      every_gpu.insert(every_gpu.end(), static_cast<std::size_t>(group.spec.gpus), metrics.nodes);
  metrics.gpus = static_cast<int>(every_gpu.size());
  metrics.kinds = kinds_used(cluster, every_gpu);
  return metrics;
}

sim::EngineResult simulate_training(const Scenario& scenario) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  sim::CommonOptions options;
  options.seed = scenario.seed;
  return sim::simulate(sim::TrainingIteration{scenario.workload.training.jobs,
                                              scenario.workload.training.iterations},
                       topology, router, scenario.engine, options);
}

plan::PointMetrics evaluate_point(const Scenario& scenario) {
  if (scenario.workload.type == "training") return evaluate_training(scenario);
  if (scenario.workload.type == "iterative") {
    const RunReport report = run_scenario(scenario, scenario.name);
    const IterativeWorkload& w = scenario.workload.iterative;
    plan::PointMetrics metrics;
    for (const IterativeWorkload::Step& step : w.steps) { // the widest step's GPUs and nodes
      const coll::CollectiveCall call =
          make_collective_call(step.collective, scenario.topology, step.collective.sizes.front());
      if (call.ranks <= metrics.gpus) continue;
      metrics.gpus = call.ranks;
      metrics.nodes = static_cast<int>(
          std::set<int>(call.node_of_rank.begin(), call.node_of_rank.end()).size());
      metrics.kinds = kinds_used(scenario.topology, call.node_of_rank);
    }
    metrics.iteration_seconds = report.json.at("total_seconds").get<double>() / w.iterations;
    metrics.train_seconds = report.json.at("total_seconds").get<double>(); // the whole run
    metrics.what = "iterative " + std::to_string(w.iterations) + " iterations";
    return metrics;
  }
  if (scenario.workload.type == "job_trace") { // a sweep may vary the scheduler's policies
    const RunReport report = run_scenario(scenario, scenario.name);
    const JobTraceWorkload& w = scenario.workload.job_trace;
    plan::PointMetrics metrics = whole_cluster(scenario.topology); // the trace holds all of it
    metrics.gpus = report.json.at("cluster_gpus").get<int>();
    metrics.iteration_seconds = report.json.at("mean_completion_s").get<double>(); // per job
    metrics.train_seconds = report.json.at("makespan_s").get<double>();            // the trace
    metrics.what =
        "job_trace " + std::to_string(w.jobs.size()) + " jobs, " + w.queue + ", " + w.placement;
    return metrics;
  }
  if (scenario.workload.type == "chakra")
    throw InputError("/workload/type", "a chakra trace is one fixed run: simulate it with `ddlsim "
                                       "run` (a sweep there varies the cluster and the engine)");
  if (scenario.workload.type == "llm_training")
    throw InputError("/workload/type", "a large-model scenario is planned by `ddlsim plan`'s "
                                       "layout search, not point by point");
  const CollectiveWorkload& workload = scenario.workload.collective;
  if (workload.sizes.empty()) throw InputError("/workload/sizes", "no size to simulate");
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const std::uint64_t bytes = *std::max_element(workload.sizes.begin(), workload.sizes.end());
  const coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
  sim::CommonOptions options;
  options.seed = scenario.seed;
  options.nccl = nccl_tuner(scenario);
  const sim::EngineResult result = sim::simulate(call, topology, router, scenario.engine, options);
  plan::PointMetrics metrics;
  metrics.gpus = call.ranks;
  metrics.nodes =
      static_cast<int>(std::set<int>(call.node_of_rank.begin(), call.node_of_rank.end()).size());
  metrics.kinds = kinds_used(scenario.topology, call.node_of_rank);
  metrics.iteration_seconds = ps_to_seconds(result.time);
  metrics.what =
      std::string(coll::to_string(call.op)) + " " + format_bytes(bytes) + " " + result.algorithm;
  return metrics;
}

void print_sweep_points(const Scenario& scenario, std::ostream& out, const RunReport* as_run) {
  Json as_run_json = scenario.resolved; // what a point equal to the scenario itself resolves to
  as_run_json.erase("sweep");
  const std::size_t count = sweep_point_count(scenario);
  out << "# sweep: " << count << " points (ranked by `ddlsim plan`, which also caches them)\n";
  out << "# point  GPUs  iteration(ms)   samples/s  efficiency  settings\n";
  for (std::size_t i = 0; i < count; ++i) {
    const SweepPoint point = sweep_point(scenario, i);
    std::string settings;
    for (const auto& [pointer, value] : point.settings)
      settings += (settings.empty() ? "" : " ") + pointer + "=" +
                  (value.is_string() ? value.get<std::string>() : value.dump());
    const bool ran = as_run != nullptr && !as_run->jobs.empty() &&
                     point.scenario.workload.type == "training" &&
                     point.scenario.resolved == as_run_json;
    const plan::PointMetrics m =
        ran ? training_metrics(point.scenario, as_run->jobs) : evaluate_point(point.scenario);
    char line[160];
    std::snprintf(line, sizeof line, "%7zu %5d %14.3f %11.1f %11.3f  ", i, m.gpus,
                  m.iteration_seconds * 1e3, m.samples_per_second, m.scaling_efficiency);
    out << line << settings << "\n";
  }
}

} // namespace ddlsim::runner
