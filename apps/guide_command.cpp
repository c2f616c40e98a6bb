// `ddlsim guide SCENARIO`: the scaling-guideline calculator. From the scenario's training job
// (model, GPU, batch, precision, framework, all-reduce) and its cluster, answers five questions
// with the alpha-beta rules of planning/scaling_rules.hpp, shows each formula with its numbers,
// and cross-checks each answer with a quick analytic simulation of the scenario changed to the
// recommended point.
#include "commands.hpp"
#include "number_checks.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/training.hpp"
#include "ddlsim/planning/scaling_rules.hpp"
#include "ddlsim/runner/point_evaluator.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/router.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace ddlsim::cli {
namespace {

struct GuideOptions {
  std::string scenario;
  double target = 0.8;
  int gpus = 0; // 0: the job's GPU count
  int max_gpus = 16384;
  double server_gbps = 0; // 0: a GPU's share of a node's NIC (servers are GPUs of extra nodes)
  int max_check_gpus = 1024;
  bool check = true;
};

// The compute figures of the job's first GPU at `batch` samples, as the simulator plans them.
plan::ComputeFigures compute_at(const models::JobSpec& job, int batch) {
  models::JobSpec at = job;
  at.batch.assign(at.gpus.size(), batch);
  const models::TrainingPlan planned = models::plan_training({at});
  const models::JobPlan& j = planned.jobs.front();
  const models::ComputeProfile& profile = j.profiles[std::size_t(j.profile_of_gpu.front())];
  plan::ComputeFigures c;
  c.batch = batch;
  for (const models::ComputeStep& step : profile.steps) {
    const double seconds = ps_to_seconds(step.duration);
    if (step.layer < 0)
      c.optimizer_seconds += seconds;
    else if (step.backward)
      c.backward_seconds += seconds;
    else
      c.forward_seconds += seconds;
  }
  c.gradient_bytes = double(j.gradient_bytes);
  c.collectives = std::max<int>(1, int(j.collectives.size()));
  return c;
}

// The slowest link and the summed latency of the route between two GPUs.
std::pair<double, double> route(const topo::Topology& topology, topo::Router& router,
                                topo::VertexId a, topo::VertexId b) {
  const std::vector<topo::Path>& paths = router.paths(a, b);
  if (paths.empty()) throw InputError("topology", "no route between two GPUs");
  double bandwidth = 1e300, latency = 0;
  for (topo::LinkId id : paths.front()) {
    bandwidth = std::min(bandwidth, topology.link(id).bandwidth_bytes_per_second);
    latency += ps_to_seconds(topology.link(id).latency);
  }
  return {bandwidth, latency};
}

plan::ClusterFigures cluster_figures(const Scenario& scenario) {
  const topo::ClusterSpec& spec = scenario.topology;
  if (spec.node_groups.size() != 1)
    throw InputError("/topology/nodes", "the guide's rules need one kind of node (this cluster "
                                        "has " +
                                            std::to_string(spec.node_groups.size()) +
                                            "); use `ddlsim plan` for mixed clusters");
  const topo::NodeSpec& node = spec.node_groups.front().spec;
  if (spec.node_groups.front().count < 2)
    throw InputError("/topology/nodes/0/count",
                     "the guide measures the fabric between two nodes: give at least 2");
  const topo::Topology topology = topo::build_topology(spec);
  topo::Router router(topology);
  plan::ClusterFigures c;
  c.gpus_per_node = node.gpus;
  c.nic_bytes_per_second = node.nics * node.nic_bytes_per_second;
  const auto& gpus = topology.gpus();
  const auto [inter_bandwidth, inter_latency] =
      route(topology, router, gpus[0], gpus[std::size_t(node.gpus)]);
  c.fabric_latency_seconds = inter_latency;
  if (node.gpus > 1) {
    const auto [intra_bandwidth, intra_latency] = route(topology, router, gpus[0], gpus[1]);
    c.intra_bytes_per_second = intra_bandwidth;
    c.intra_latency_seconds = intra_latency;
  } else {
    c.intra_bytes_per_second = inter_bandwidth;
    c.intra_latency_seconds = inter_latency;
  }
  return c;
}

// The scenario with some values changed (JSON pointers), reloaded and validated.
Scenario variant(const Scenario& base, const std::string& file,
                 const std::vector<std::pair<std::string, Json>>& settings) {
  Json json = base.resolved;
  json.erase("sweep");
  for (const auto& [pointer, value] : settings) json[Json::json_pointer(pointer)] = value;
  return load_scenario(json, file, std::filesystem::path(file).parent_path());
}

struct Simulated {
  double efficiency = 0;
  double iteration_ms = 0;
  double exposed_ms = 0;
};

Simulated simulate(const Scenario& scenario) {
  const std::vector<models::JobIteration> jobs = runner::simulate_training(scenario).jobs;
  if (jobs.empty()) throw std::runtime_error("the simulation stopped");
  return {jobs.front().scaling_efficiency, ps_to_seconds(jobs.front().time) * 1e3,
          ps_to_seconds(jobs.front().max_exposed) * 1e3};
}

Json nodes_for(int gpus, int per_node) {
  return (gpus + per_node - 1) / per_node;
}

void print(const plan::Answer& answer, int number, std::ostream& out) {
  out << number << ". " << answer.question << "\n   answer: " << answer.answer << "\n";
  for (const std::string& line : answer.derivation) out << "   | " << line << "\n";
}

void run(const GuideOptions& options) {
  const Scenario scenario = load_scenario_file(options.scenario);
  if (scenario.workload.type != "training")
    throw InputError(options.scenario + ": /workload/type",
                     "the guide answers for a training job; give a workload of type "
                     "\"training\" (see scenarios/resnet50-cloud-vs-dgx.json)");
  if (!(options.target > 0 && options.target < 1))
    throw InputError("--target-efficiency", "must be between 0 and 1 (exclusive), not " +
                                                format_significant(options.target));
  const models::JobSpec& job = scenario.workload.training.jobs.front();
  const plan::ClusterFigures cluster = cluster_figures(scenario);
  const plan::ComputeFigures compute = compute_at(job, job.batch.front());
  const bool overlap = job.framework.type != models::Framework::none;
  const plan::GuideAlgorithm algorithm = job.algorithm == "hierarchical"
                                             ? plan::GuideAlgorithm::hierarchical
                                             : plan::GuideAlgorithm::ring;
  const int gpus = options.gpus > 0 ? options.gpus : int(job.gpus.size());
  const int g = cluster.gpus_per_node;
  // By default a server is a GPU of a server node, with its share of that node's NIC.
  const double server_bps =
      options.server_gbps > 0 ? options.server_gbps * 1e9 / 8 : cluster.nic_bytes_per_second / g;
  std::ostream& out = std::cout;

  out << "# ddlsim guide: " << (scenario.name.empty() ? options.scenario : scenario.name) << "\n";
  out << "# job: " << job.model->name << " on " << job.gpu.front().name << ", batch "
      << job.batch.front() << "/GPU, " << models::to_string(job.precision) << ", "
      << models::to_string(job.framework.type) << (overlap ? " (overlapped)" : " (no overlap)")
      << ", all-reduce " << job.algorithm << " (rules: " << plan::to_string(algorithm) << ")\n";
  out << "# cluster: " << g << " GPUs per node, NIC "
      << format_significant(cluster.nic_bytes_per_second * 8e-9) << " Gb/s per node, "
      << format_significant(cluster.intra_bytes_per_second * 8e-9)
      << " Gb/s per GPU inside the node, latency "
      << format_significant(cluster.fabric_latency_seconds * 1e6) << " us across the fabric and "
      << format_significant(cluster.intra_latency_seconds * 1e6) << " us inside; target efficiency "
      << format_significant(options.target) << "\n";
  if (job.compression != models::Compression::none || job.gpus.size() != job.batch.size())
    out << "# note: the rules assume dense gradients; the simulated cross-checks include the "
           "job's compression\n";

  const auto check = [&](const std::string& what, const std::function<std::string()>& body) {
    if (!options.check) return;
    try {
      out << "   simulated (analytic engine, this scenario " << what << "): " << body() << "\n";
    } catch (const std::exception& error) {
      out << "   simulated: not run (" << error.what() << ")\n";
    }
  };
  const auto at_gpus = [&](int p) {
    return std::vector<std::pair<std::string, Json>>{{"/topology/nodes/0/count", nodes_for(p, g)},
                                                     {"/workload/gpus", p}};
  };
  const auto too_big = [&](int p) {
    if (p > options.max_check_gpus)
      throw std::runtime_error(std::to_string(p) + " GPUs is above --max-check-gpus " +
                               std::to_string(options.max_check_gpus));
  };

  // 1. How far does it scale?
  const plan::Answer scale =
      plan::max_gpus(compute, cluster, algorithm, overlap, options.target, options.max_gpus);
  print(scale, 1, out);
  if (scale.possible) {
    const int p = int(scale.value);
    check("at " + std::to_string(p) + " and " + std::to_string(p + g) + " GPUs", [&] {
      too_big(p + g);
      const Simulated at = simulate(variant(scenario, options.scenario, at_gpus(p)));
      const Simulated next = simulate(variant(scenario, options.scenario, at_gpus(p + g)));
      return "E(" + std::to_string(p) + ") = " + format_significant(at.efficiency) + ", E(" +
             std::to_string(p + g) + ") = " + format_significant(next.efficiency);
    });
  }

  // 2. What NIC does the target need at this size?
  const plan::Answer nic =
      plan::nic_bandwidth_needed(compute, cluster, algorithm, overlap, gpus, options.target);
  print(nic, 2, out);
  if (nic.possible) {
    check("at " + std::to_string(gpus) + " GPUs with that NIC", [&] {
      too_big(gpus);
      const double per_nic_gbps =
          nic.value * 8e-9 / std::max(1, scenario.topology.node_groups.front().spec.nics);
      auto settings = at_gpus(gpus);
      settings.emplace_back("/topology/nodes/0/nic_bandwidth_gbps", per_nic_gbps);
      const Simulated s = simulate(variant(scenario, options.scenario, settings));
      const Simulated now = simulate(variant(scenario, options.scenario, at_gpus(gpus)));
      return "E = " + format_significant(s.efficiency) +
             " (with today's NIC: " + format_significant(now.efficiency) + ")";
    });
  }

  // 3. How many parameter servers?
  const plan::Answer servers =
      plan::parameter_servers_needed(compute, cluster, overlap, gpus, server_bps, options.target);
  print(servers, 3, out);
  check("with S and S/2 dedicated parameter servers (GPUs of extra nodes)", [&] {
    const int s = servers.possible ? int(servers.value) : std::max(1, gpus / 4);
    too_big(gpus + s);
    auto with = [&](int count) {
      auto settings = at_gpus(gpus);
      settings[0].second = nodes_for(gpus + count, g);
      settings.emplace_back("/workload/algorithm", "parameter_server");
      settings.emplace_back("/workload/parameter_servers", count);
      settings.emplace_back("/workload/params/dedicated_servers", true);
      return simulate(variant(scenario, options.scenario, settings));
    };
    const Simulated full = with(s), half = with(std::max(1, s / 2));
    std::string text = "E(S=" + std::to_string(s) + ") = " + format_significant(full.efficiency) +
                       ", E(S=" + std::to_string(std::max(1, s / 2)) +
                       ") = " + format_significant(half.efficiency);
    if (options.server_gbps > 0)
      text += " (simulated servers have the cluster's per-GPU NIC share, not --server-gbps)";
    return text;
  });

  // 4. The smallest batch that hides the all-reduce.
  const plan::Answer batch = plan::smallest_hiding_batch([&](int b) { return compute_at(job, b); },
                                                         cluster, algorithm, gpus, 4096);
  print(batch, 4, out);
  if (batch.possible) {
    check("at " + std::to_string(gpus) + " GPUs", [&] {
      too_big(gpus);
      const int b = int(batch.value);
      auto settings = at_gpus(gpus);
      settings.emplace_back("/workload/batch_per_gpu", b);
      const Simulated at = simulate(variant(scenario, options.scenario, settings));
      settings.back().second = std::max(1, b / 2);
      const Simulated half = simulate(variant(scenario, options.scenario, settings));
      return "exposed communication " + format_significant(at.exposed_ms) + " ms at batch " +
             std::to_string(b) + ", " + format_significant(half.exposed_ms) + " ms at batch " +
             std::to_string(std::max(1, b / 2)) + " (the last bucket can never hide)";
    });
  }

  // 5. Latency- vs bandwidth-optimal all-reduce.
  const plan::Answer crossover = plan::latency_bandwidth_crossover(cluster, gpus);
  print(crossover, 5, out);
  if (crossover.possible) {
    check("all-reduce on " + std::to_string(gpus) + " GPUs", [&] {
      too_big(gpus);
      const Scenario base = variant(scenario, options.scenario, at_gpus(gpus));
      const topo::Topology topology = topo::build_topology(base.topology);
      topo::Router router(topology);
      const sim::EngineSpec quick; // the default engine, without the scenario's overheads
      sim::CommonOptions seeded;
      seeded.seed = scenario.seed;
      CollectiveWorkload workload;
      workload.ranks = gpus;
      auto time_ms = [&](const std::string& algorithm_name, double bytes) {
        workload.algorithm = algorithm_name;
        const std::uint64_t rounded = std::max<std::uint64_t>(4, std::uint64_t(bytes) / 4 * 4);
        const coll::CollectiveCall call = make_collective_call(workload, base.topology, rounded);
        return ps_to_seconds(sim::simulate(call, topology, router, quick, seeded).time) * 1e3;
      };
      std::string text;
      for (double factor : {0.25, 4.0}) {
        const double n = crossover.value * factor;
        const double ring = time_ms("ring", n), rd = time_ms("recursive_doubling", n);
        text += (text.empty() ? "" : "; ") + format_significant(n / 1024) + " KiB: ring " +
                format_significant(ring) + " ms, recursive doubling " + format_significant(rd) +
                " ms (" + (ring < rd ? "ring" : "recursive doubling") + " faster)";
      }
      return text;
    });
  }
}

} // namespace

void add_guide_command(CLI::App& app) {
  auto options = std::make_shared<GuideOptions>();
  auto* cmd = app.add_subcommand(
      "guide", "Scaling guidelines for the scenario's training job: the largest GPU count above a "
               "target efficiency, the NIC bandwidth it needs, parameter servers, the smallest "
               "batch that hides communication, and the latency/bandwidth crossover size; each "
               "with its formula and a simulated cross-check");
  cmd->add_option("scenario", options->scenario, "Scenario JSON file with a training workload")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--target-efficiency", options->target, "Scaling efficiency goal (default 0.8)");
  cmd->add_option("--gpus", options->gpus,
                  "GPU count for the NIC, server, batch and crossover questions (default: the "
                  "job's)")
      ->check(checks::positive());
  cmd->add_option("--max-gpus", options->max_gpus, "Largest GPU count searched (default 16384)")
      ->check(checks::positive());
  cmd->add_option("--server-gbps", options->server_gbps,
                  "NIC bandwidth of one parameter server (default: a GPU's share of a node's NIC, "
                  "as the simulated check has)")
      ->check(checks::positive());
  cmd->add_option("--max-check-gpus", options->max_check_gpus,
                  "Skip simulated cross-checks above this many GPUs (default 1024)")
      ->check(checks::positive());
  cmd->add_flag("!--no-check", options->check, "Skip the simulated cross-checks");
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
