// The shared-cluster timeline and its contention cache (shared_cluster.hpp).
#include "ddlsim/jobs/shared_cluster.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/jobs/placement.hpp"
#include "ddlsim/jobs/queue.hpp"
#include "ddlsim/jobs/symmetry.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"
#include "job_links.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <variant>

namespace ddlsim::jobs {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Live {
  std::size_t job = 0; // index into the trace's jobs
  std::vector<int> gpus;
  double anchor_s = 0;  // when `remaining` was last brought up to date
  double remaining = 0; // iterations left at anchor_s (infinite: a time limit only)
  double iteration_s = 0;
  double limit_end_s = kNever;
  double end_s = 0;
  double segment_from_s = 0;
  std::vector<std::int64_t> resources; // job_resources, where groups are split by them
};

// Iteration times of groups of co-running jobs, simulated once per distinct group and iteration
// count up to an exact relabelling of the fabric (symmetry.hpp): the group is moved onto its
// canonical nodes, keyed and simulated there.
class ContentionCache {
public:
  ContentionCache(const Scenario& scenario, const topo::Topology& topology, topo::Router& router)
      : scenario_(scenario), topology_(topology), router_(router),
        node_of_gpu_(topo::algorithm_node_of_gpu(scenario.topology)),
        symmetry_(topology, router, node_of_gpu_) {}

  // The iterations a group of `jobs` that share links runs. A job alone runs until its iteration
  // time settles, as a training workload does. In a group the jobs iterate independently and
  // each reports its last iteration, so once the quickest has run its iterations the others run
  // on with less competition: more iterations measure them nearer to alone, not nearer to their
  // shared steady state (the settling test then passes on a job running alone). A group runs
  // the engine's kSettleIterations (one iteration from an idle start, one from a running start),
  // the fewest with a steady-state iteration and the most overlap of the group's jobs.
  int iterations(std::size_t jobs) const {
    const int given = scenario_.workload.job_trace.iterations_simulated;
    if (given == 0 && jobs > 1) return sim::kSettleIterations;
    return given;
  }

  // The iteration time of each member of `group` ((template, gpus) per job) running together
  // for `iterations` (as iterations(n) gives for the group of n they belong to).
  std::vector<double>
  times(const std::vector<std::pair<std::size_t, const std::vector<int>*>>& group, int iterations) {
    std::vector<const std::vector<int>*> placements;
    for (const auto& [t, gpus] : group) placements.push_back(gpus);
    std::optional<std::vector<std::vector<int>>> moved = symmetry_.canonical(placements);
    if (moved)
      for (std::size_t i = 0; i < group.size(); ++i) placements[i] = &(*moved)[i];
    // The relabelling keeps the order of ranks, so the members sort alike on either side.
    std::vector<std::size_t> order(group.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (group[a].first != group[b].first) return group[a].first < group[b].first;
      return *placements[a] < *placements[b];
    });
    std::vector<std::int64_t> key{iterations};
    for (std::size_t i : order) {
      key.push_back(std::int64_t(group[i].first));
      key.push_back(std::int64_t(placements[i]->size()));
      key.insert(key.end(), placements[i]->begin(), placements[i]->end());
    }
    auto [it, fresh] = cache_.emplace(std::move(key), std::vector<double>{});
    if (fresh) {
      sim::TrainingIteration iteration;
      iteration.iterations = iterations;
      for (std::size_t i : order) {
        models::JobSpec job = scenario_.workload.job_trace.templates[group[i].first].job;
        job.gpus = *placements[i];
        job.node_of_gpu.clear();
        for (int r : job.gpus) job.node_of_gpu.push_back(node_of_gpu_[std::size_t(r)]);
        job.name = "job" + std::to_string(iteration.jobs.size());
        iteration.jobs.push_back(std::move(job));
      }
      sim::CommonOptions options;
      options.seed = scenario_.seed;
      const sim::EngineResult result =
          sim::simulate(iteration, topology_, router_, scenario_.engine, options);
      for (const models::JobIteration& j : result.jobs) it->second.push_back(ps_to_seconds(j.time));
      ++simulations_;
    }
    std::vector<double> out(group.size());
    for (std::size_t k = 0; k < order.size(); ++k) out[order[k]] = it->second[k];
    return out;
  }
  std::size_t simulations() const { return simulations_; }

private:
  const Scenario& scenario_;
  const topo::Topology& topology_;
  topo::Router& router_;
  std::vector<int> node_of_gpu_;
  FabricSymmetry symmetry_;
  std::map<std::vector<std::int64_t>, std::vector<double>> cache_;
  std::size_t simulations_ = 0;
};

// What a placement can share with others: its nodes, and when it crosses leaves, the leaves'
// switches (and the fabric above them where every crossing job shares it).
std::vector<std::int64_t> tokens(const ClusterView& view, const std::vector<int>& gpus) {
  std::vector<std::int64_t> out;
  std::vector<int> switches;
  for (int r : gpus) {
    const int node = view.node_of_gpu[std::size_t(r)];
    out.push_back(node);
    for (int s : view.switches_of_node[std::size_t(node)]) switches.push_back(s);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::sort(switches.begin(), switches.end());
  switches.erase(std::unique(switches.begin(), switches.end()), switches.end());
  if (out.size() > 1 && switches.size() > 1) {
    const std::int64_t base = std::int64_t(view.first_gpu.size());
    for (int s : switches) out.push_back(base + s);
    if (view.shared_upper_fabric) out.push_back(-1);
  }
  return out;
}

std::size_t find(std::vector<std::size_t>& parent, std::size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

} // namespace

SharedClusterResult simulate_shared_cluster(const Scenario& scenario,
                                            const topo::Topology& topology, topo::Router& router,
                                            const SharedClusterOptions& options) {
  const JobTraceWorkload& w = scenario.workload.job_trace;
  const ClusterView view = view_of(topology);
  const std::unique_ptr<Placement> placement = make_placement(w.placement);
  const std::unique_ptr<QueuePolicy> queue = make_queue(w.queue);
  ContentionCache cache(scenario, topology, router);
  // Groups split into link-disjoint sets only where that is exact: the analytic engine
  // (job_links.hpp).
  const bool split_by_links = options.split_by_links &&
                              std::holds_alternative<sim::AnalyticEngineSpec>(scenario.engine.kind);
  SharedClusterResult result;
  result.cluster_gpus = view.gpus;
  for (const TraceJob& job : w.jobs) {
    JobOutcome o;
    o.id = job.id;
    o.workload = w.workload_names[job.workload];
    o.gpus = job.gpus;
    o.arrival_s = job.arrival_seconds;
    result.jobs.push_back(std::move(o));
  }
  // Run time alone on the template's GPUs (the cluster's first): the backfilling estimate.
  std::vector<double> estimate_iteration(w.templates.size(), 0);
  auto estimate = [&](const TraceJob& job) {
    double& it = estimate_iteration[job.template_index];
    if (it == 0)
      it = cache.times({{job.template_index, &w.templates[job.template_index].job.gpus}},
                       cache.iterations(1))[0];
    double run = job.iterations > 0 ? double(job.iterations) * it : kNever;
    if (job.time_limit_seconds > 0) run = std::min(run, job.time_limit_seconds);
    return run;
  };

  ClusterState state{&view, std::vector<char>(std::size_t(view.gpus), 1), {}};
  std::vector<Live> running;
  std::deque<std::size_t> waiting;
  std::size_t next_arrival = 0, ended = 0;
  int busy = 0;
  double now = 0;
  auto close_segment = [&](Live& live, double t) {
    if (t > live.segment_from_s)
      result.segments.push_back({live.job, live.segment_from_s, t, live.iteration_s});
    live.segment_from_s = t;
  };
  // New iteration times for every running job, group by group; re-anchor those that changed.
  auto update_rates = [&]() {
    std::vector<std::vector<std::int64_t>> toks;
    for (const Live& live : running) toks.push_back(tokens(view, live.gpus));
    std::vector<std::size_t> parent(running.size());
    std::iota(parent.begin(), parent.end(), 0);
    std::map<std::int64_t, std::size_t> owner;
    for (std::size_t i = 0; i < running.size(); ++i)
      for (std::int64_t t : toks[i]) {
        auto [it, fresh] = owner.emplace(t, i);
        if (!fresh) parent[find(parent, i)] = find(parent, it->second);
      }
    std::map<std::size_t, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < running.size(); ++i) groups[find(parent, i)].push_back(i);
    for (const auto& [root, group_members] : groups) {
      // The group's iteration count, then its link-disjoint sets simulated apart (exact on the
      // analytic engine: job_links.hpp), each as part of a group of this size.
      const int iterations = cache.iterations(group_members.size());
      std::vector<std::vector<std::size_t>> sets{{}};
      if (split_by_links && group_members.size() > 1) {
        std::vector<const std::vector<std::int64_t>*> resources;
        for (std::size_t i : group_members) resources.push_back(&running[i].resources);
        sets = resource_components(resources);
        for (std::vector<std::size_t>& set : sets)
          for (std::size_t& k : set) k = group_members[k];
      } else {
        sets.front() = group_members;
      }
      // Each set's times, then the members re-anchored in the group's order (as one simulation
      // of the group would give them).
      std::map<std::size_t, double> time_of;
      for (const std::vector<std::size_t>& members : sets) {
        std::vector<std::pair<std::size_t, const std::vector<int>*>> group;
        for (std::size_t i : members)
          group.emplace_back(w.jobs[running[i].job].template_index, &running[i].gpus);
        const std::vector<double> times = cache.times(group, iterations);
        for (std::size_t k = 0; k < members.size(); ++k) time_of[members[k]] = times[k];
      }
      for (std::size_t i : group_members) {
        Live& live = running[i];
        const double time = time_of.at(i);
        if (time == live.iteration_s) continue;
        if (live.iteration_s > 0) {
          live.remaining -= (now - live.anchor_s) / live.iteration_s;
          close_segment(live, now);
        }
        live.anchor_s = now;
        live.iteration_s = time;
        live.end_s = std::min(live.limit_end_s, now + std::max(0.0, live.remaining) * time);
      }
    }
  };
  auto try_start = [&](std::size_t job_index) {
    const TraceJob& job = w.jobs[job_index];
    if (state.free_count() < job.gpus) return false;
    std::optional<std::vector<int>> gpus = placement->place(state, job.gpus);
    if (!gpus) return false;
    // Rank order: collectives want each node's ranks together, nodes in rank order.
    std::sort(gpus->begin(), gpus->end());
    for (int r : *gpus) state.free[std::size_t(r)] = 0;
    state.running.push_back(*gpus);
    Live live;
    live.job = job_index;
    live.gpus = *gpus;
    live.anchor_s = now;
    live.segment_from_s = now;
    live.remaining = job.iterations > 0 ? double(job.iterations) : kNever;
    if (job.time_limit_seconds > 0) live.limit_end_s = now + job.time_limit_seconds;
    if (split_by_links) live.resources = job_resources(topology, router, live.gpus);
    running.push_back(std::move(live));
    busy += job.gpus;
    JobOutcome& o = result.jobs[job_index];
    o.start_s = now;
    o.placement = *gpus;
    return true;
  };

  while (ended < w.jobs.size()) {
    double next = next_arrival < w.jobs.size() ? w.jobs[next_arrival].arrival_seconds : kNever;
    for (const Live& live : running) next = std::min(next, live.end_s);
    if (next == kNever) {
      const TraceJob& job = w.jobs[waiting.front()];
      throw InputError(job.where, "job \"" + job.id + "\" (" + std::to_string(job.gpus) +
                                      " GPUs) cannot be placed by \"" + w.placement +
                                      "\" placement even on the empty cluster; choose another "
                                      "placement or change its GPU count");
    }
    now = next;
    ++result.events;
    bool changed = false;
    // Ends.
    for (std::size_t i = 0; i < running.size();) {
      Live& live = running[i];
      if (live.end_s > now) {
        ++i;
        continue;
      }
      close_segment(live, now);
      JobOutcome& o = result.jobs[live.job];
      o.ended = true;
      o.end_s = now;
      o.iterations = live.remaining == kNever || live.end_s == live.limit_end_s
                         ? 0 // summed from the segments below
                         : double(w.jobs[live.job].iterations);
      for (int r : live.gpus) state.free[std::size_t(r)] = 1;
      state.running.erase(std::find(state.running.begin(), state.running.end(), live.gpus));
      busy -= int(live.gpus.size());
      running.erase(running.begin() + std::ptrdiff_t(i));
      ++ended;
      changed = true;
    }
    // Arrivals.
    while (next_arrival < w.jobs.size() && w.jobs[next_arrival].arrival_seconds <= now)
      waiting.push_back(next_arrival++);
    // Starts.
    std::vector<WaitingJob> list;
    for (std::size_t j : waiting) list.push_back({w.jobs[j].gpus, estimate(w.jobs[j])});
    std::vector<RunningJob> ends;
    for (const Live& live : running)
      ends.push_back(
          {int(live.gpus.size()), live.end_s > 0 ? live.end_s : now + estimate(w.jobs[live.job])});
    std::vector<char> started(waiting.size(), 0);
    queue->schedule(now, list, ends, state.free_count(), [&](std::size_t i) {
      const bool ok = try_start(waiting[i]);
      started[i] = ok;
      changed |= ok;
      return ok;
    });
    std::deque<std::size_t> still;
    for (std::size_t i = 0; i < waiting.size(); ++i)
      if (!started[i]) still.push_back(waiting[i]);
    waiting.swap(still);
    if (changed) {
      update_rates();
      if (result.busy_gpus.empty() || result.busy_gpus.back().second != busy)
        result.busy_gpus.emplace_back(now, busy);
    }
    if (options.progress && !options.progress(ended, w.jobs.size(), now, cache.simulations())) {
      result.complete = false;
      break;
    }
  }

  // Per-job figures from the segments: iterations done and the mean iteration time.
  std::vector<double> done(result.jobs.size(), 0), run(result.jobs.size(), 0);
  for (const RateSegment& s : result.segments) {
    done[s.job] += (s.to_s - s.from_s) / s.iteration_s;
    run[s.job] += s.to_s - s.from_s;
  }
  double first = kNever, last = 0, wait = 0, completion = 0, slowdown = 0, busy_seconds = 0;
  for (std::size_t j = 0; j < result.jobs.size(); ++j) {
    JobOutcome& o = result.jobs[j];
    if (!o.ended) continue; // the run stopped first: no figures
    if (o.iterations == 0) o.iterations = done[j];
    o.mean_iteration_s = o.iterations > 0 ? run[j] / o.iterations : 0;
    o.alone_iteration_s =
        cache.times({{w.jobs[j].template_index, &o.placement}}, cache.iterations(1))[0];
    std::vector<int> nodes;
    for (int r : o.placement) nodes.push_back(view.node_of_gpu[std::size_t(r)]);
    std::sort(nodes.begin(), nodes.end());
    o.nodes = int(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
    o.leaves = std::max<int>(1, int(crossed_leaves(view, o.placement).size()));
    first = std::min(first, o.arrival_s);
    last = std::max(last, o.end_s);
    wait += o.queueing_s();
    completion += o.completion_s();
    slowdown += o.slowdown();
    busy_seconds += o.run_s() * o.gpus;
  }
  const double n = double(std::max<std::size_t>(1, ended));
  result.makespan_s = ended > 0 ? last - first : 0;
  result.utilisation = result.makespan_s > 0 ? busy_seconds / (result.makespan_s * view.gpus) : 0;
  result.mean_queueing_s = wait / n;
  result.mean_completion_s = completion / n;
  result.mean_slowdown = slowdown / n;
  result.simulations = cache.simulations();
  return result;
}

} // namespace ddlsim::jobs
