#include "guide_search.hpp"

#include "ddlsim/core/units.hpp"
#include "ddlsim/planning/boundary_search.hpp"
#include "ddlsim/runner/point_evaluator.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/router.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace ddlsim::cli {
namespace {

std::string fmt(double value) {
  return format_significant(value);
}

std::string key_of(const Settings& settings) {
  std::string key;
  for (const auto& [pointer, value] : settings) key += pointer + "=" + value.dump() + ";";
  return key;
}

// "E(x) = e >= t" or "E(x) = e < t".
std::string versus(const std::string& at, double e, double target) {
  // Enough digits that a value just below the target does not print as the target.
  int digits = 4;
  while (digits < 9 && format_significant(e, digits) == format_significant(target, digits))
    ++digits;
  return "E(" + at + ") = " + format_significant(e, digits) + (e >= target ? " >= " : " < ") +
         fmt(target);
}

} // namespace

SimulatedJob::SimulatedJob(const Scenario& scenario, std::string file, int max_gpus)
    : scenario_(scenario), file_(std::move(file)), max_gpus_(max_gpus) {
  for (const topo::NodeGroup& group : scenario.topology.node_groups)
    groups_.push_back({group.count, std::max(1, group.spec.gpus), std::max(1, group.spec.nics),
                       group.spec.nics * group.spec.nic_bytes_per_second * 8e-9});
  bool replaced = false;
  sim::searchable_engine(scenario.engine, &replaced);
  if (replaced)
    engine_note_ = "the scenario's " + std::string(sim::engine_name(scenario.engine)) +
                   " engine is too slow to search with: answers use the analytic engine";
}

int SimulatedJob::gpus_of_nodes(int nodes) const {
  int gpus = 0;
  for (std::size_t i = 0; i < groups_.size() && nodes > 0; ++i) {
    const int take = i + 1 == groups_.size() ? nodes : std::min(nodes, groups_[i].count);
    gpus += take * groups_[i].gpus;
    nodes -= take;
  }
  return gpus;
}

int SimulatedJob::nodes_within(int gpus) const {
  int nodes = 0;
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    const bool last = i + 1 == groups_.size();
    const int fit = gpus / groups_[i].gpus;
    const int take = last ? fit : std::min(fit, groups_[i].count);
    nodes += take;
    gpus -= take * groups_[i].gpus;
    if (!last && take < groups_[i].count) break;
  }
  return std::max(1, nodes);
}

Settings SimulatedJob::at_gpus(int gpus) const {
  return at_gpus(gpus, gpus);
}

Settings SimulatedJob::at_gpus(int gpus, int job_gpus) const {
  if (!mixed()) {
    const int per_node = groups_.front().gpus;
    return {{"/topology/nodes/0/count", (gpus + per_node - 1) / per_node},
            {"/workload/gpus", job_gpus}};
  }
  // The node groups in rank order, cut after the node that holds the last GPU, the last group
  // grown when the cluster has too few.
  Json nodes = Json::array();
  int left = gpus;
  for (std::size_t i = 0; i < groups_.size() && left > 0; ++i) {
    const int need = (left + groups_[i].gpus - 1) / groups_[i].gpus;
    const int take = i + 1 == groups_.size() ? need : std::min(need, groups_[i].count);
    Json group = scenario_.resolved["topology"]["nodes"][i];
    group["count"] = take;
    nodes.push_back(std::move(group));
    left -= take * groups_[i].gpus;
  }
  return {{"/topology/nodes", std::move(nodes)}, {"/workload/gpus", job_gpus}};
}

Scenario SimulatedJob::variant(const Settings& settings) const {
  Json json = scenario_.resolved;
  json.erase("sweep");
  for (const auto& [pointer, value] : settings) json[Json::json_pointer(pointer)] = value;
  Scenario changed = load_scenario(json, file_, std::filesystem::path(file_).parent_path());
  changed.engine = sim::searchable_engine(changed.engine);
  return changed;
}

SimulatedJob::Point SimulatedJob::at(const Settings& settings, int gpus) {
  if (gpus > max_gpus_)
    throw std::runtime_error(std::to_string(gpus) + " GPUs is above --max-check-gpus " +
                             std::to_string(max_gpus_));
  const std::string key = key_of(settings);
  if (const auto it = points_.find(key); it != points_.end()) return it->second;
  const std::vector<models::JobIteration> jobs = runner::simulate_training(variant(settings)).jobs;
  if (jobs.empty()) throw std::runtime_error("the simulation stopped");
  ++simulations_;
  return points_[key] = {jobs.front().scaling_efficiency,
                         ps_to_seconds(jobs.front().max_exposed) * 1e3};
}

double SimulatedJob::allreduce_ms(int gpus, const std::string& algorithm, double bytes) {
  if (gpus > max_gpus_)
    throw std::runtime_error(std::to_string(gpus) + " GPUs is above --max-check-gpus " +
                             std::to_string(max_gpus_));
  const std::uint64_t rounded = std::max<std::uint64_t>(4, std::uint64_t(bytes) / 4 * 4);
  const std::string key = std::to_string(gpus) + algorithm + std::to_string(rounded);
  if (const auto it = allreduces_.find(key); it != allreduces_.end()) return it->second;
  const Scenario base = variant(at_gpus(gpus));
  const topo::Topology topology = topo::build_topology(base.topology);
  topo::Router router(topology);
  sim::CommonOptions seeded;
  seeded.seed = scenario_.seed;
  CollectiveWorkload workload;
  workload.ranks = gpus;
  workload.algorithm = algorithm;
  const coll::CollectiveCall call = make_collective_call(workload, base.topology, rounded);
  ++simulations_;
  return allreduces_[key] =
             ps_to_seconds(sim::simulate(call, topology, router, base.engine, seeded).time) * 1e3;
}

SimulatedAnswer search_max_gpus(SimulatedJob& job, double target, const plan::Answer& rule) {
  // Whole nodes in rank order (on a mixed cluster the next node may be of another kind).
  const int top = job.nodes_within(job.max_gpus());
  const auto e = [&](int nodes) {
    const int gpus = job.gpus_of_nodes(nodes);
    return job.at(job.at_gpus(gpus), gpus).efficiency;
  };
  const int start = rule.possible ? job.nodes_within(int(rule.value)) : 1;
  const int before = job.simulations();
  const plan::IntBoundary b =
      plan::largest_passing(1, top, start, [&](int nodes) { return e(nodes) >= target; });
  SimulatedAnswer a;
  a.simulations = job.simulations() - before;
  if (!b.found) {
    const int g = job.gpus_of_nodes(1);
    a.answer = "none: one node of " + std::to_string(g) + " GPUs already misses the target";
    a.proof = versus(std::to_string(g), e(1), target);
    return a;
  }
  const int p = job.gpus_of_nodes(b.value);
  a.possible = true;
  a.value = p;
  a.answer = std::to_string(p) + " GPUs (" + std::to_string(b.value) +
             (b.value == 1 ? " node)" : " nodes)");
  a.proof = versus(std::to_string(p), e(b.value), target);
  a.bound = b.at_limit;
  if (b.at_limit)
    a.answer = "at least " + a.answer + ": the search stops at --max-check-gpus " +
               std::to_string(job.max_gpus());
  else
    a.proof +=
        ", " + versus(std::to_string(job.gpus_of_nodes(b.value + 1)), e(b.value + 1), target);
  return a;
}

namespace {
// The words of a NIC answer: `x` is the searched quantity (Gb/s per node, or a factor).
struct NicWords {
  std::function<std::string(double)> point;  // "12.5 Gb/s", "1.5x"
  std::function<std::string(double)> answer; // the answer line at x
  std::string none;                          // even the top of the range misses the target
  std::function<std::string(double)> any;    // even the bottom of the range meets it
};

// The smallest x in [lo, hi] (1% steps: finer than any NIC catalogue) whose efficiency e(x)
// reaches the target, from `start`; `bytes_per_second(x)` is the answer's value for the rule.
SimulatedAnswer search_nic_range(SimulatedJob& job, double target, double lo, double hi,
                                 double start, const std::function<double(double)>& e,
                                 const std::function<double(double)>& bytes_per_second,
                                 const NicWords& words) {
  const int before = job.simulations();
  const plan::RealBoundary b =
      plan::smallest_passing_real(lo, hi, start, 0.01, [&](double x) { return e(x) >= target; });
  SimulatedAnswer a;
  a.simulations = job.simulations() - before;
  if (!b.found) {
    a.answer = words.none;
    a.proof = versus(words.point(hi), e(hi), target);
    return a;
  }
  a.possible = true;
  a.value = bytes_per_second(b.value);
  a.answer = words.answer(b.value);
  a.proof = versus(words.point(b.value), e(b.value), target);
  a.bound = b.at_limit;
  if (b.at_limit)
    a.answer = words.any(b.value);
  else
    a.proof += ", " + versus(words.point(b.below), e(b.below), target);
  return a;
}

// On a mixed cluster: every node's NICs scaled by one factor.
SimulatedAnswer search_nic_factor(SimulatedJob& job, double target, int gpus, double nic_now_bps,
                                  const plan::Answer& rule) {
  const std::vector<SimulatedJob::Group>& groups = job.groups();
  const Settings cluster = job.at_gpus(gpus);
  const std::size_t present = cluster.front().second.size(); // the groups the job's nodes are in
  const auto e = [&](double factor) {
    Settings settings = cluster;
    for (std::size_t i = 0; i < present; ++i)
      settings.emplace_back("/topology/nodes/" + std::to_string(i) + "/nic_bandwidth_gbps",
                            groups[i].nic_gbps_per_node * factor / groups[i].nics);
    return job.at(settings, gpus).efficiency;
  };
  NicWords words;
  words.point = [](double x) { return fmt(x) + "x"; };
  words.answer = [&](double x) {
    std::string text = fmt(x) + "x today's NIC bandwidth on every node (";
    for (std::size_t i = 0; i < present; ++i)
      text += (i ? ", " : "") + std::string("group ") + std::to_string(i + 1) + ": " +
              fmt(groups[i].nic_gbps_per_node * x) + " Gb/s per node";
    return text + ")";
  };
  words.none = "none: even 1000x today's NICs miss the target";
  words.any = [](double x) { return "any NIC: even " + fmt(x) + "x today's (1/1000) meets it"; };
  // The rule's NIC is the slowest node's (nic_now_bps): its factor is the start.
  const double start = rule.possible ? std::clamp(rule.value / nic_now_bps, 1e-3, 1e3) : 1;
  return search_nic_range(
      job, target, 1e-3, 1e3, start, e, [&](double x) { return x * nic_now_bps; }, words);
}
} // namespace

SimulatedAnswer search_nic(SimulatedJob& job, double target, int gpus, double nic_now_bps,
                           int nics_per_node, const plan::Answer& rule) {
  if (job.mixed()) return search_nic_factor(job, target, gpus, nic_now_bps, rule);
  // Per node, in Gb/s; each of the node's NICs gets its share.
  const double now = nic_now_bps * 8e-9;
  const auto e = [&](double node_gbps) {
    Settings settings = job.at_gpus(gpus);
    settings.emplace_back("/topology/nodes/0/nic_bandwidth_gbps",
                          node_gbps / std::max(1, nics_per_node));
    return job.at(settings, gpus).efficiency;
  };
  const double lo = now / 1000, hi = now * 1000;
  NicWords words;
  words.point = [](double x) { return fmt(x) + " Gb/s"; };
  words.answer = [&](double x) { return fmt(x) + " Gb/s per node (now " + fmt(now) + " Gb/s)"; };
  words.none = "none: even " + fmt(hi) + " Gb/s per node misses the target";
  words.any = [](double x) {
    return "any NIC: even " + fmt(x) + " Gb/s per node (1/1000 of today's) meets it";
  };
  const double start = rule.possible ? std::clamp(rule.value * 8e-9, lo, hi) : now;
  return search_nic_range(
      job, target, lo, hi, start, e, [](double x) { return x / 8e-9; }, words);
}

SimulatedAnswer search_servers(SimulatedJob& job, double target, int gpus,
                               const plan::Answer& rule) {
  const auto e = [&](int servers) {
    // The servers are GPUs of the nodes after the workers'.
    Settings settings = job.at_gpus(gpus + servers, gpus);
    settings.emplace_back("/workload/algorithm", "parameter_server");
    settings.emplace_back("/workload/parameter_servers", servers);
    settings.emplace_back("/workload/params/dedicated_servers", true);
    return job.at(settings, gpus + servers).efficiency;
  };
  // Up to one server per worker, and no more GPUs than the search may simulate.
  const int top = std::min(gpus, job.max_gpus() - gpus);
  SimulatedAnswer a;
  if (top < 1) {
    a.answer = "not searched: " + std::to_string(gpus) +
               " workers and a server exceed "
               "--max-check-gpus " +
               std::to_string(job.max_gpus());
    return a;
  }
  const int start = rule.possible ? std::clamp(int(rule.value), 1, top) : std::max(1, top / 4);
  const int before = job.simulations();
  const plan::IntBoundary b =
      plan::smallest_passing(1, top, start, [&](int s) { return e(s) >= target; });
  a.simulations = job.simulations() - before;
  if (!b.found) {
    a.answer = "none: even " + std::to_string(top) + " dedicated servers miss the target";
    a.proof = versus("S=" + std::to_string(top), e(top), target);
    return a;
  }
  a.possible = true;
  a.value = b.value;
  a.answer = std::to_string(b.value) + (b.value == 1 ? " server" : " servers");
  a.proof = versus("S=" + std::to_string(b.value), e(b.value), target);
  if (!b.at_limit)
    a.proof += ", " + versus("S=" + std::to_string(b.value - 1), e(b.value - 1), target);
  return a;
}

SimulatedAnswer search_batch(SimulatedJob& job, double target, int gpus, int max_batch,
                             const plan::Answer& rule) {
  const auto e = [&](int batch) {
    Settings settings = job.at_gpus(gpus);
    settings.emplace_back("/workload/batch_per_gpu", batch);
    return job.at(settings, gpus).efficiency;
  };
  const int start = rule.possible ? std::clamp(int(rule.value), 1, max_batch) : max_batch / 4;
  const int before = job.simulations();
  const plan::IntBoundary b =
      plan::smallest_passing(1, max_batch, start, [&](int batch) { return e(batch) >= target; });
  SimulatedAnswer a;
  a.simulations = job.simulations() - before;
  if (!b.found) {
    a.answer = "none up to batch " + std::to_string(max_batch) + " per GPU";
    a.proof = versus("b=" + std::to_string(max_batch), e(max_batch), target);
    return a;
  }
  a.possible = true;
  a.value = b.value;
  a.answer = "batch " + std::to_string(b.value) + " per GPU";
  a.proof = versus("b=" + std::to_string(b.value), e(b.value), target);
  if (!b.at_limit)
    a.proof += ", " + versus("b=" + std::to_string(b.value - 1), e(b.value - 1), target);
  return a;
}

SimulatedAnswer search_crossover(SimulatedJob& job, int gpus, const plan::Answer& rule) {
  const auto ring_wins = [&](double bytes) {
    return job.allreduce_ms(gpus, "ring", bytes) <=
           job.allreduce_ms(gpus, "recursive_doubling", bytes);
  };
  const double lo = 1024, hi = 4.0 * (1u << 30);
  const double start = rule.possible ? std::clamp(rule.value, lo, hi) : 1 << 20;
  const int before = job.simulations();
  // 2% steps in size.
  const plan::RealBoundary b = plan::smallest_passing_real(lo, hi, start, 0.02, ring_wins);
  SimulatedAnswer a;
  a.simulations = job.simulations() - before;
  const auto times = [&](double bytes) {
    return format_bytes(std::uint64_t(bytes) / 4 * 4) + ": ring " +
           fmt(job.allreduce_ms(gpus, "ring", bytes)) + " ms, recursive doubling " +
           fmt(job.allreduce_ms(gpus, "recursive_doubling", bytes)) + " ms";
  };
  if (!b.found) {
    a.answer = "none up to " + format_bytes(std::uint64_t(hi)) + ": recursive doubling is faster";
    a.proof = times(hi);
    return a;
  }
  a.possible = true;
  a.value = b.value;
  a.bound = b.at_limit;
  if (b.at_limit) {
    a.answer = "none from " + format_bytes(std::uint64_t(lo)) + ": the ring is already faster";
    a.proof = times(lo);
    return a;
  }
  a.answer = "about " + format_bytes(std::uint64_t(b.value) / 4 * 4) +
             ": recursive doubling below, ring above";
  a.proof = times(b.value) + "; " + times(b.below);
  return a;
}

} // namespace ddlsim::cli
