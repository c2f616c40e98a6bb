// The large-model layout search of `ddlsim plan` (llm_layout_search.hpp).
//
// Bounded as Megatron-LM users search by hand (Narayanan et al. 2021, section 3 "Performance
// Analysis of Parallelization Configurations"): TP only inside the NVLink domain (its traffic is
// per layer and would cross the slower network otherwise), PP dividing the layers, virtual stages
// from a small set, micro-batches from a small set, and per layout only the recomputation and
// ZeRO stages that can win (see enumerate_layouts). Every layout left is simulated on the
// scenario's engine, on as many threads as there are cores.
#include "ddlsim/runner/llm_layout_search.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/planning/plan.hpp"
#include "ddlsim/runner/llm_layout_bound.hpp"
#include "ddlsim/runner/point_evaluator.hpp"
#include "ddlsim/scenario/layout_search.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/sim/engine_spec.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>
#include <variant>

namespace ddlsim::runner {
namespace {

std::vector<int> divisors(std::int64_t n, std::int64_t at_most) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= std::min(n, at_most); ++d)
    if (n % d == 0) out.push_back(static_cast<int>(d));
  return out;
}

double gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

std::string percent(double fraction) {
  return format_fixed(fraction * 100, 1) + "%";
}

int nvlink_domain_of(const topo::ClusterSpec& cluster) {
  int domain = 0;
  for (const topo::NodeGroup& group : cluster.node_groups) {
    const int gpus =
        group.spec.nvlink_domain_gpus > 0 ? group.spec.nvlink_domain_gpus : group.spec.gpus;
    domain = domain == 0 ? gpus : std::min(domain, gpus);
  }
  return std::max(domain, 1);
}

void check_options(const LayoutSearchOptions& options) {
  if (options.micro_batches.empty())
    throw InputError("--micro-batches", "no micro-batch size to try; give sizes such as 1,2,4");
  for (int b : options.micro_batches)
    if (b < 1 || b > (1 << 16))
      throw InputError("--micro-batches",
                       "micro-batch sizes are 1 to 65536 sequences, found " + std::to_string(b));
  for (int v : options.vpps)
    if (v < 1) throw InputError("vpps", "virtual stages are at least 1");
}

// The lower bound of the layout's plan (llm_layout_bound.hpp); the plan is the one the engine
// runs (sim::simulate's options for an LLM).
Picoseconds iteration_bound(const Scenario& point, const topo::Topology& topology,
                            topo::Router& router) {
  const models::LlmPlan plan =
      models::plan_llm(point.workload.llm, sim::llm_plan_options(point.engine));
  return llm_iteration_lower_bound(plan, point.engine, topology, router, point.seed);
}

} // namespace

Json candidate_json(const Scenario& scenario, const LayoutCandidate& c) {
  Json json = scenario.resolved;
  json.erase("sweep");
  Json& workload = json["workload"];
  const models::LlmParallel& p = c.parallel;
  workload["parallel"] = {{"tp", p.tp},
                          {"pp", p.pp},
                          {"vpp", p.vpp},
                          {"dp", p.dp},
                          {"ep", p.ep},
                          {"zero", p.zero},
                          {"sequence_parallel", p.sequence_parallel}};
  workload["micro_batch"] = c.micro_batch;
  workload["recompute"] = std::string(models::to_string(c.recompute));
  return json;
}

std::string LayoutCandidate::describe() const {
  const models::LlmParallel& p = parallel;
  std::string text = "tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp);
  if (p.vpp > 1) text += " x vpp " + std::to_string(p.vpp);
  text += ", dp " + std::to_string(p.dp);
  if (p.ep > 1) text += ", ep " + std::to_string(p.ep);
  return text + ", ZeRO-" + std::to_string(p.zero) + ", mb " + std::to_string(micro_batch) +
         ", recompute " + std::string(models::to_string(recompute));
}

std::vector<LayoutCandidate> enumerate_layouts(const Scenario& scenario,
                                               const LayoutSearchOptions& options,
                                               LayoutSearch& search) {
  check_options(options);
  if (scenario.workload.type != "llm_training")
    throw InputError("/workload/type", "the layout search needs an llm_training workload");
  const models::LlmSpec& base = scenario.workload.llm;
  const models::LlmShape& m = base.shape;
  const int gpus = static_cast<int>(topo::total_gpus(scenario.topology));
  search.nvlink_domain = nvlink_domain_of(scenario.topology);
  const double capacity = base.gpu.memory_capacity_bytes;
  std::vector<LayoutCandidate> out;
  std::vector<int> micro_batches = options.micro_batches;
  std::sort(micro_batches.begin(), micro_batches.end());
  micro_batches.erase(std::unique(micro_batches.begin(), micro_batches.end()), micro_batches.end());
  for (int tp : divisors(gpus, search.nvlink_domain))
    for (int pp : divisors(m.layers, gpus / tp)) {
      if (gpus % (tp * pp) != 0) continue;
      const int dp = gpus / (tp * pp);
      const std::vector<int> eps = m.moe ? divisors(dp, m.moe->experts) : std::vector<int>{1};
      for (int vpp : options.vpps)
        for (int ep : eps)
          for (int mb : micro_batches) {
            if (vpp > 1 && pp <= 2) continue; // Megatron's rule: not a layout at all
            ++search.enumerated;
            models::LlmSpec spec = base;
            spec.parallel.tp = tp;
            spec.parallel.pp = pp;
            spec.parallel.vpp = vpp;
            spec.parallel.dp = dp;
            spec.parallel.ep = ep;
            spec.parallel.sequence_parallel = tp > 1; // Korthikanti et al. 2022: always with TP
            spec.parallel.tp_comm_overlap = base.parallel.tp_comm_overlap && tp > 1;
            spec.micro_batch = mb;
            try {
              models::validate_llm(spec, gpus, "/workload");
            } catch (const InputError&) {
              ++search.invalid;
              continue;
            }
            bool placed = false;
            for (models::Recompute r :
                 {models::Recompute::none, models::Recompute::selective, models::Recompute::full}) {
              spec.recompute = r;
              std::vector<int> zeros;
              for (int z : {0, 1, 2, 3}) {
                if (z >= 2 && !zeros.empty()) break;
                spec.parallel.zero = z;
                if (capacity <= 0 || models::llm_memory(spec).total() <= capacity)
                  zeros.push_back(z);
              }
              for (int z : zeros) {
                spec.parallel.zero = z;
                LayoutCandidate c;
                c.parallel = spec.parallel;
                c.micro_batch = mb;
                c.recompute = r;
                c.memory_bytes = models::llm_memory(spec).total();
                c.capacity_bytes = capacity;
                out.push_back(c);
              }
              if (!zeros.empty()) {
                placed = true;
                break;
              }
            }
            if (!placed) { // at its most frugal: full recomputation, ZeRO-3
              LayoutCandidate c;
              c.parallel = spec.parallel;
              c.micro_batch = mb;
              c.recompute = spec.recompute;
              c.memory_bytes = models::llm_memory(spec).total();
              c.capacity_bytes = capacity;
              search.unfit.push_back(c);
            }
          }
    }
  std::sort(search.unfit.begin(), search.unfit.end(),
            [](const LayoutCandidate& a, const LayoutCandidate& b) {
              return a.memory_bytes < b.memory_bytes;
            });
  return out;
}

LayoutSearch search_layouts(const Scenario& scenario, const LayoutSearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LayoutSearch search;
  search.keep = options.keep;
  std::vector<LayoutCandidate> candidates = enumerate_layouts(scenario, options, search);
  // Each candidate's scenario is loaded once, and its plan gives the compute bound; the points
  // are kept for the simulation.
  std::vector<std::optional<Scenario>> points(candidates.size());
  unsigned threads = options.threads > 0 ? options.threads : std::thread::hardware_concurrency();
  // Forking from several threads at once is not safe (as in `ddlsim plan`'s sweeps).
  if (sim::runs_in_child_process(scenario.engine)) threads = 1;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(candidates.size())));
  const auto in_parallel = [threads](const std::function<void()>& work) {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  };
  std::atomic<std::size_t> next{0};
  in_parallel([&] {
    const topo::Topology topology = topo::build_topology(scenario.topology);
    topo::Router router(topology);
    for (std::size_t i = next++; i < candidates.size(); i = next++) {
      LayoutCandidate& c = candidates[i];
      try {
        points[i] = load_scenario_for_layout_search(candidate_json(scenario, c), scenario.origin,
                                                    scenario.base_dir);
        if (options.keep > 0) c.compute_bound = iteration_bound(*points[i], topology, router);
      } catch (const InputError& error) {
        c.error = error.what();
      }
    }
  });
  // Simulated in order of their bounds, so that the fastest come first and the threshold falls
  // early; each layout's result does not depend on the order.
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return candidates[a].compute_bound < candidates[b].compute_bound;
  });
  std::vector<bool> skipped(candidates.size(), false);
  std::vector<Picoseconds> fastest; // the `keep` fastest times simulated so far, sorted
  std::size_t done = 0;
  std::mutex mutex;
  next = 0;
  in_parallel([&] {
    const topo::Topology topology = topo::build_topology(scenario.topology);
    topo::Router router(topology);
    for (std::size_t k = next++; k < order.size(); k = next++) {
      const std::size_t i = order[k];
      LayoutCandidate& c = candidates[i];
      bool skip = !c.error.empty();
      if (!skip && options.keep > 0) {
        const std::lock_guard lock(mutex);
        // Strictly above: a layout tied with the keep-th time could still rank before it.
        skip = fastest.size() >= options.keep && c.compute_bound > fastest.back();
        skipped[i] = skip;
      }
      if (!skip) try {
          const Scenario& point = *points[i];
          sim::CommonOptions common;
          common.seed = point.seed;
          const sim::EngineResult result = sim::simulate(sim::LlmTraining{point.workload.llm},
                                                         topology, router, point.engine, common);
          if (!result.complete) throw InputError("engine", "the simulation did not complete");
          c.iteration = result.llm;
        } catch (const InputError& error) {
          c.error = error.what();
        }
      points[i].reset();
      const std::lock_guard lock(mutex);
      if (!skip && c.error.empty() && options.keep > 0) {
        fastest.insert(std::upper_bound(fastest.begin(), fastest.end(), c.iteration.time),
                       c.iteration.time);
        if (fastest.size() > options.keep) fastest.pop_back();
      }
      ++done;
      if (options.progress) options.progress(done, candidates.size());
    }
  });
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    LayoutCandidate& c = candidates[i];
    (skipped[i]        ? search.pruned
     : c.error.empty() ? search.ranked
                       : search.failed)
        .push_back(std::move(c));
  }
  std::stable_sort(search.ranked.begin(), search.ranked.end(),
                   [](const LayoutCandidate& a, const LayoutCandidate& b) {
                     if (a.iteration.time != b.iteration.time)
                       return a.iteration.time < b.iteration.time;
                     return a.memory_bytes < b.memory_bytes;
                   });
  if (!search.ranked.empty()) {
    const LayoutCandidate& w = search.ranked.front();
    const models::LlmParallel& p = w.parallel;
    std::string reason = p.tp > 1 ? "TP=" + std::to_string(p.tp) +
                                        " keeps TP traffic on NVLink (domain of " +
                                        std::to_string(search.nvlink_domain) + " GPUs)"
                                  : "TP=1: no per-layer TP traffic";
    if (p.pp > 1)
      reason += "; PP=" + std::to_string(p.pp) +
                (p.vpp > 1 ? " x VPP=" + std::to_string(p.vpp) : std::string()) + " bubble " +
                percent(w.iteration.bubble_fraction);
    reason += "; DP=" + std::to_string(p.dp) + " with ZeRO-" + std::to_string(p.zero) +
              " exposes " + format_fixed(ps_to_seconds(w.iteration.exposed_dp) * 1e3, 1) +
              " ms of DP traffic";
    if (w.recompute != models::Recompute::none)
      reason += "; recompute " + std::string(models::to_string(w.recompute)) + " to fit";
    reason += "; " + format_fixed(gib(w.memory_bytes), 1) + " of " +
              format_fixed(gib(w.capacity_bytes), 1) + " GiB";
    if (search.ranked.size() > 1)
      reason += "; " +
                percent(1.0 - static_cast<double>(w.iteration.time) /
                                  static_cast<double>(search.ranked[1].iteration.time)) +
                " faster than the next";
    search.reason = reason;
  }
  search.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return search;
}

void print_layout_search(const LayoutSearch& search, const Scenario& scenario, std::size_t top,
                         bool show_unfit, std::ostream& out) {
  const models::LlmSpec& base = scenario.workload.llm;
  const PlanSpec& prices = scenario.plan;
  const int gpus = static_cast<int>(topo::total_gpus(scenario.topology));
  // Cost of one iteration: every layout uses every GPU, so cost ranks as time does.
  const plan::PointMetrics cluster = whole_cluster(scenario.topology);
  const bool priced = prices.price_per_gpu_hour.given() || prices.price_per_node_hour.given() ||
                      prices.price_per_kwh > 0;
  auto cost_of = [&](double seconds) {
    return seconds / 3600 * plan::hourly_price(prices, cluster) +
           plan::energy_kwh(prices, cluster, seconds) * prices.price_per_kwh;
  };
  out << "# layouts of " << base.shape.name << " on " << gpus << " x " << base.gpu.name
      << ", global batch " << base.global_batch << ": " << search.enumerated << " enumerated, "
      << search.invalid << " invalid, " << search.unfit.size() << " over memory, "
      << search.ranked.size() + search.failed.size() << " simulated ("
      << sim::engine_name(scenario.engine) << " engine)";
  if (!search.pruned.empty())
    out << ", " << search.pruned.size() << " not simulated (their lower bound is slower than "
        << "the " << search.keep << " fastest)";
  out << " in " << format_fixed(search.seconds, 1) << " s\n";
  out << "rank  tp  pp vpp    dp  ep  mb  recompute  zero  memory(GiB)  iteration(s)    MFU  "
         "bubble  exposed tp/pp/dp(ms)";
  if (priced) out << "  cost/iteration";
  out << "\n";
  const std::size_t rows = std::min(top, search.ranked.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const LayoutCandidate& c = search.ranked[i];
    const models::LlmParallel& p = c.parallel;
    const models::LlmIteration& it = c.iteration;
    const std::string exposed = format_fixed(ps_to_seconds(it.exposed_tp) * 1e3, 0) + "/" +
                                format_fixed(ps_to_seconds(it.exposed_pp) * 1e3, 0) + "/" +
                                format_fixed(ps_to_seconds(it.exposed_dp) * 1e3, 0);
    char line[256];
    std::snprintf(line, sizeof line, "%4zu %3d %3d %3d %5d %3d %3d %10s %5d %12s %13s %6s %7s %21s",
                  i + 1, p.tp, p.pp, p.vpp, p.dp, p.ep, c.micro_batch,
                  std::string(models::to_string(c.recompute)).c_str(), p.zero,
                  format_fixed(gib(c.memory_bytes), 1).c_str(),
                  format_fixed(ps_to_seconds(it.time), 3).c_str(), percent(it.mfu).c_str(),
                  percent(it.bubble_fraction).c_str(), exposed.c_str());
    out << line;
    if (priced) out << "  " << format_fixed(cost_of(ps_to_seconds(it.time)), 4);
    out << "\n";
  }
  if (search.ranked.size() > rows)
    out << "# " << search.ranked.size() - rows << " slower layouts not shown (--top)\n";
  if (!search.ranked.empty())
    out << "# best: " << search.ranked.front().describe() << "\n# why: " << search.reason << "\n";
  else
    out << "# no layout fits in memory and runs; see --show-unfit\n";
  for (const LayoutCandidate& c : search.failed)
    out << "# failed: " << c.describe() << ": " << c.error << "\n";
  if (show_unfit) {
    for (const LayoutCandidate& c : search.unfit)
      out << "# over memory: " << c.describe() << ": " << format_fixed(gib(c.memory_bytes), 1)
          << " GiB, over by " << format_fixed(gib(c.memory_bytes - c.capacity_bytes), 1)
          << " GiB\n";
  } else if (!search.unfit.empty()) {
    out << "# " << search.unfit.size()
        << " layouts do not fit in memory even with full recomputation and ZeRO-3 "
           "(--show-unfit lists them)\n";
  }
}

} // namespace ddlsim::runner
