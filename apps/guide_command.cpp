// `ddlsim guide SCENARIO`: the scaling-guideline calculator. From the scenario's training job
// (model, GPU, batch, precision, framework, all-reduce) and its cluster, answers five questions.
// Each answer is found by searching with the simulator (guide_search.hpp) and proved by it (the
// target holds at the answer and fails one step beyond); the alpha-beta rule of
// planning/scaling_rules.hpp is printed beside it as the first estimate, with its formula, its
// numbers and how far it is from the simulated answer.
#include "commands.hpp"
#include "guide_search.hpp"
#include "number_checks.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/training.hpp"
#include "ddlsim/planning/scaling_rules.hpp"
#include "ddlsim/scenario/scenario.hpp"
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

// The compute figures of the slowest of the job's first `gpus` GPUs at `batch` samples, as the
// simulator plans them (on one kind of GPU, every GPU's; the synchronous step waits for the
// slowest).
plan::ComputeFigures compute_at(const models::JobSpec& job, int batch, int gpus) {
  models::JobSpec at = job;
  at.batch.assign(at.gpus.size(), batch);
  const models::TrainingPlan planned = models::plan_training({at});
  const models::JobPlan& j = planned.jobs.front();
  plan::ComputeFigures c;
  c.batch = batch;
  // The profiles those GPUs use, each summed once (GPUs of one kind share one).
  const std::size_t first = std::min(j.profile_of_gpu.size(), std::size_t(std::max(1, gpus)));
  std::vector<bool> used(j.profiles.size(), false);
  for (std::size_t gpu = 0; gpu < first; ++gpu) used[std::size_t(j.profile_of_gpu[gpu])] = true;
  for (std::size_t profile = 0; profile < used.size(); ++profile) {
    if (!used[profile]) continue;
    plan::ComputeFigures p;
    for (const models::ComputeStep& step : j.profiles[profile].steps) {
      const double seconds = ps_to_seconds(step.duration);
      if (step.layer < 0)
        p.optimizer_seconds += seconds;
      else if (step.backward)
        p.backward_seconds += seconds;
      else
        p.forward_seconds += seconds;
    }
    if (p.compute_seconds() > c.compute_seconds()) {
      c.forward_seconds = p.forward_seconds;
      c.backward_seconds = p.backward_seconds;
      c.optimizer_seconds = p.optimizer_seconds;
    }
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

// The rules' cluster: one kind of node. On a mixed cluster, the first group's node and links and
// the slowest node's NICs (the rules' bound: a ring runs at its slowest link).
plan::ClusterFigures cluster_figures(const Scenario& scenario) {
  const topo::ClusterSpec& spec = scenario.topology;
  const topo::NodeSpec& node = spec.node_groups.front().spec;
  int nodes = 0;
  for (const topo::NodeGroup& group : spec.node_groups) nodes += group.count;
  if (nodes < 2)
    throw InputError("/topology/nodes/0/count",
                     "the guide measures the fabric between two nodes: give at least 2");
  const topo::Topology topology = topo::build_topology(spec);
  topo::Router router(topology);
  plan::ClusterFigures c;
  c.gpus_per_node = node.gpus;
  c.nic_bytes_per_second = node.nics * node.nic_bytes_per_second;
  for (const topo::NodeGroup& group : spec.node_groups)
    c.nic_bytes_per_second =
        std::min(c.nic_bytes_per_second, group.spec.nics * group.spec.nic_bytes_per_second);
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

void print_rule(const plan::Answer& rule, std::ostream& out) {
  out << "   rule estimate: " << rule.answer << "\n";
  for (const std::string& line : rule.derivation) out << "   | " << line << "\n";
}

// The answer line: the simulated answer with its proof, and how far the rule's estimate is.
void print_answer(int number, const std::string& question, const plan::Answer& rule,
                  const std::function<SimulatedAnswer()>& search, bool check, std::ostream& out) {
  out << number << ". " << question << "\n";
  if (!check) {
    out << "   answer: " << rule.answer << " (the rule alone: --no-check)\n";
    for (const std::string& line : rule.derivation) out << "   | " << line << "\n";
    return;
  }
  try {
    const SimulatedAnswer simulated = search();
    out << "   answer: " << simulated.answer << "\n   simulated: " << simulated.proof << " ("
        << simulated.simulations << (simulated.simulations == 1 ? " simulation" : " simulations")
        << ")\n";
    print_rule(rule, out);
    if (simulated.possible && !simulated.bound && rule.possible && simulated.value > 0) {
      const double off = 100 * (rule.value / simulated.value - 1);
      out << "   | the rule is " << (off > 0 ? "+" : "")
          << (std::fabs(off) >= 100 ? std::to_string(std::lround(off)) : format_significant(off, 3))
          << "% off the simulated answer\n";
    }
  } catch (const std::exception& error) {
    out << "   answer: " << rule.answer << " (the rule alone: not simulated, " << error.what()
        << ")\n";
    for (const std::string& line : rule.derivation) out << "   | " << line << "\n";
  }
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
  const int gpus = options.gpus > 0 ? options.gpus : int(job.gpus.size());
  // The scaling question's rule on every GPU of the job; the others' on the GPUs they ask about.
  const plan::ComputeFigures compute_all = compute_at(job, job.batch.front(), int(job.gpus.size()));
  const plan::ComputeFigures compute = compute_at(job, job.batch.front(), gpus);
  const bool overlap = job.framework.type != models::Framework::none;
  const plan::GuideAlgorithm algorithm = job.algorithm == "hierarchical"
                                             ? plan::GuideAlgorithm::hierarchical
                                             : plan::GuideAlgorithm::ring;
  const int g = cluster.gpus_per_node;
  const int nics = std::max(1, scenario.topology.node_groups.front().spec.nics);
  // By default a server is a GPU of a server node, with its share of that node's NIC.
  const double server_bps =
      options.server_gbps > 0 ? options.server_gbps * 1e9 / 8 : cluster.nic_bytes_per_second / g;
  constexpr int kMaxBatch = 4096;
  std::ostream& out = std::cout;
  SimulatedJob simulated(scenario, options.scenario, options.max_check_gpus);

  out << "# ddlsim guide: " << (scenario.name.empty() ? options.scenario : scenario.name) << "\n";
  out << "# job: " << job.model->name << " on " << job.gpu.front().name << ", batch "
      << job.batch.front() << "/GPU, " << models::to_string(job.precision) << ", "
      << models::to_string(job.framework.type) << (overlap ? " (overlapped)" : " (no overlap)")
      << ", all-reduce " << job.algorithm << " (rules: " << plan::to_string(algorithm) << ")\n";
  out << "# cluster: " << g << " GPUs per node, NIC "
      << format_significant(cluster.nic_bytes_per_second * 8e-9) << " Gb/s per node (" << nics
      << (nics == 1 ? " NIC), " : " NICs), ")
      << format_significant(cluster.intra_bytes_per_second * 8e-9)
      << " Gb/s per GPU inside the node, latency "
      << format_significant(cluster.fabric_latency_seconds * 1e6) << " us across the fabric and "
      << format_significant(cluster.intra_latency_seconds * 1e6) << " us inside; target efficiency "
      << format_significant(options.target) << "\n";
  if (scenario.topology.node_groups.size() > 1) {
    out << "# mixed cluster, in rank order:";
    const auto& groups = scenario.topology.node_groups;
    for (std::size_t i = 0; i < groups.size(); ++i)
      out << (i ? "," : "") << " group " << i + 1 << ": " << groups[i].count << " x "
          << groups[i].spec.gpus << " " << groups[i].spec.gpu_model << ", NIC "
          << format_significant(groups[i].spec.nics * groups[i].spec.nic_bytes_per_second * 8e-9)
          << " Gb/s per node (" << groups[i].spec.nics
          << (groups[i].spec.nics == 1 ? " NIC)" : " NICs)");
    out << "; a job of p GPUs takes the first p (more nodes of the last group past the end); the "
           "rules take the slowest GPU's compute, the slowest node's NIC and the first group's "
           "links\n";
  }
  if (options.check)
    out << "# answers: searched with the analytic engine (the target holds at the answer and "
           "fails one step beyond); the closed-form rule is the first estimate"
        << (simulated.engine_note().empty() ? "" : "; " + simulated.engine_note()) << "\n";
  if (job.compression != models::Compression::none || job.gpus.size() != job.batch.size())
    out << "# note: the rules assume dense gradients; the simulated answers include the "
           "job's compression\n";

  // 1. How far does it scale?
  const plan::Answer scale =
      plan::max_gpus(compute_all, cluster, algorithm, overlap, options.target, options.max_gpus);
  print_answer(
      1, scale.question, scale, [&] { return search_max_gpus(simulated, options.target, scale); },
      options.check, out);

  // 2. What NIC does the target need at this size?
  const plan::Answer nic =
      plan::nic_bandwidth_needed(compute, cluster, algorithm, overlap, gpus, options.target);
  print_answer(
      2, nic.question, nic,
      [&] {
        return search_nic(simulated, options.target, gpus, cluster.nic_bytes_per_second, nics, nic);
      },
      options.check, out);

  // 3. How many parameter servers?
  const plan::Answer servers =
      plan::parameter_servers_needed(compute, cluster, overlap, gpus, server_bps, options.target);
  print_answer(
      3, servers.question, servers,
      [&] {
        SimulatedAnswer a = search_servers(simulated, options.target, gpus, servers);
        if (options.server_gbps > 0)
          a.proof += " (simulated servers have the cluster's per-GPU NIC share, not "
                     "--server-gbps)";
        return a;
      },
      options.check, out);

  // 4. The smallest batch that reaches the target.
  const auto compute_of = [&](int b) { return compute_at(job, b, gpus); };
  const plan::Answer batch = plan::smallest_batch_for_efficiency(
      compute_of, cluster, algorithm, overlap, gpus, options.target, kMaxBatch);
  print_answer(
      4, batch.question, batch,
      [&] { return search_batch(simulated, options.target, gpus, kMaxBatch, batch); },
      options.check, out);

  // 5. Latency- vs bandwidth-optimal all-reduce.
  const plan::Answer crossover = plan::latency_bandwidth_crossover(cluster, gpus);
  print_answer(
      5, crossover.question, crossover,
      [&] { return search_crossover(simulated, gpus, crossover); }, options.check, out);
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
                  "Largest GPU count the simulated searches may simulate (default 1024); an "
                  "answer beyond it falls back to the rule alone")
      ->check(checks::positive());
  cmd->add_flag("!--no-check", options->check,
                "Answer with the closed-form rules alone (no simulated search)");
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
