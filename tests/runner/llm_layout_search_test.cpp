// `ddlsim plan`'s large-model layout search (runner/llm_layout_search.hpp): it ranks by simulated
// time, never ranks a layout over memory, enumerates only valid layouts, and refuses bad options.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/runner/llm_layout_bound.hpp"
#include "ddlsim/runner/llm_layout_search.hpp"
#include "ddlsim/scenario/layout_search.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using ddlsim::test_support::error_of;

namespace {

// One DGX H100 and an 8-layer model of about 8 B parameters, too large for some layouts (the
// layout written here does not fit: the search must load it anyway).
Scenario scenario() {
  const std::string text = R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 1}],
                                            "fabric": {"type": "single_switch"}},
      "workload": {"type": "llm_training",
                   "model": {"layers": 8, "hidden": 8192, "heads": 64, "kv_heads": 8,
                             "ffn": 28672, "seq_len": 4096, "vocab": 32000},
                   "parallel": {"tp": 1, "pp": 1}, "global_batch": 16, "algorithm": "ring"},
      "plan": {"price": {"per_gpu_hour": 2.0}}})";
  return load_scenario_for_layout_search(Json::parse(text), "test.json", ".");
}

// Two DGX H100 on a rail-optimized fabric, NCCL's choices (launch costs, lanes across the
// nodes), the same model: TP inside a node, DP and PP across the nodes.
Scenario two_node_scenario() {
  const std::string text = R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 2}],
          "fabric": {"type": "rail_optimized", "rail_spines": 8, "bandwidth_gbps": 400}},
      "workload": {"type": "llm_training",
                   "model": {"layers": 8, "hidden": 8192, "heads": 64, "kv_heads": 8,
                             "ffn": 28672, "seq_len": 4096, "vocab": 32000},
                   "parallel": {"tp": 8, "pp": 2}, "global_batch": 16}})";
  return load_scenario_for_layout_search(Json::parse(text), "test.json", ".");
}

} // namespace

TEST_CASE("llm plan: the analytic bound adds the collectives the compute waits for and stays below "
          "the time") {
  const Scenario s = two_node_scenario();
  runner::LayoutSearchOptions options;
  options.micro_batches = {1, 2};
  options.keep = 1000; // bounds computed, nothing skipped
  const runner::LayoutSearch search = runner::search_layouts(s, options);
  REQUIRE(search.ranked.size() >= 4);
  const topo::Topology topology = topo::build_topology(s.topology);
  topo::Router router(topology);
  sim::EngineSpec flow = s.engine;
  flow.kind = sim::flow::FlowEngineSpec{};
  int with_tp = 0;
  for (const runner::LayoutCandidate& c : search.ranked) {
    INFO(c.describe());
    // The layout's scenario as the search loads it (its NCCL choices are the layout's).
    const Json json = runner::candidate_json(s, c);
    const Scenario point = load_scenario_for_layout_search(json, "test.json", ".");
    const models::LlmPlan plan =
        models::plan_llm(point.workload.llm, sim::llm_plan_options(point.engine));
    // The search's bound is this one, and it never exceeds the simulated time.
    CHECK(runner::llm_iteration_lower_bound(plan, s.engine, topology, router, s.seed) ==
          c.compute_bound);
    CHECK(c.compute_bound <= c.iteration.time);
    // Compute and bubble alone (every engine) are below it: the analytic engine's collectives
    // add their launch and their transfers at the bottleneck rate.
    const Picoseconds compute = runner::llm_iteration_lower_bound(plan, flow, topology, router, 1);
    CHECK(compute > 0);
    CHECK(compute <= c.compute_bound);
    if (c.parallel.tp > 1) {
      ++with_tp;
      CHECK(compute < c.compute_bound);
      // Most of the TP collectives' exposed time is in the bound.
      CHECK(static_cast<double>(c.compute_bound - compute) >
            0.5 * static_cast<double>(c.iteration.exposed_tp));
    }
  }
  CHECK(with_tp > 0);
}

TEST_CASE("llm plan: layouts are ranked by simulated time and the best fits in memory") {
  const Scenario s = scenario();
  runner::LayoutSearchOptions options;
  options.micro_batches = {1, 2};
  std::size_t calls = 0;
  options.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    CHECK(done <= total);
  };
  const runner::LayoutSearch search = runner::search_layouts(s, options);
  REQUIRE(search.ranked.size() >= 3);
  CHECK(calls == search.ranked.size() + search.failed.size());
  CHECK(search.failed.empty());
  for (std::size_t i = 1; i < search.ranked.size(); ++i)
    CHECK(search.ranked[i - 1].iteration.time <= search.ranked[i].iteration.time);
  // Layouts over memory never rank, and some were dropped for it.
  for (const runner::LayoutCandidate& c : search.ranked) CHECK(c.memory_bytes <= c.capacity_bytes);
  for (const runner::LayoutCandidate& c : search.unfit) CHECK(c.memory_bytes > c.capacity_bytes);
  CHECK_THAT(search.reason, Catch::Contains("GiB"));
  std::ostringstream out;
  runner::print_layout_search(search, s, 5, true, out);
  CHECK_THAT(out.str(), Catch::Contains("# best: ") && Catch::Contains("cost/iteration"));
}

TEST_CASE("llm plan: only valid layouts are enumerated, TP inside the NVLink domain") {
  const Scenario s = scenario();
  runner::LayoutSearch search;
  runner::LayoutSearchOptions options;
  const std::vector<runner::LayoutCandidate> candidates =
      runner::enumerate_layouts(s, options, search);
  REQUIRE_FALSE(candidates.empty());
  CHECK(search.nvlink_domain == 8);
  for (const runner::LayoutCandidate& c : candidates) {
    INFO(c.describe());
    models::LlmSpec spec = s.workload.llm;
    spec.parallel = c.parallel;
    spec.micro_batch = c.micro_batch;
    spec.recompute = c.recompute;
    CHECK_NOTHROW(models::validate_llm(spec, 8, "/workload"));
    CHECK(c.parallel.tp <= 8);
    CHECK(c.parallel.gpus() == 8);
    CHECK(models::llm_memory(spec).total() <= spec.gpu.memory_capacity_bytes);
    if (c.parallel.vpp > 1) CHECK(c.parallel.pp > 2);
  }
}

TEST_CASE("llm plan: bad search options are errors naming the flag") {
  const Scenario s = scenario();
  runner::LayoutSearch search;
  runner::LayoutSearchOptions options;
  options.micro_batches = {0};
  CHECK_THAT(error_of([&] { runner::enumerate_layouts(s, options, search); }),
             Catch::Contains("--micro-batches"));
  options.micro_batches = {};
  CHECK_THAT(error_of([&] { runner::enumerate_layouts(s, options, search); }),
             Catch::Contains("--micro-batches"));
}

TEST_CASE("llm plan: the compute bound never exceeds a simulated time") {
  const Scenario s = scenario();
  runner::LayoutSearchOptions options;
  options.micro_batches = {1, 2};
  options.keep = 1000; // bounds computed, nothing skipped
  const runner::LayoutSearch search = runner::search_layouts(s, options);
  REQUIRE(search.ranked.size() >= 3);
  CHECK(search.pruned.empty());
  for (const runner::LayoutCandidate& c : search.ranked) {
    INFO(c.describe());
    CHECK(c.compute_bound > 0);
    CHECK(c.compute_bound <= c.iteration.time);
  }
}

TEST_CASE("llm plan: skipping layouts that cannot reach the top rows keeps those rows exact") {
  const Scenario s = scenario();
  runner::LayoutSearchOptions options;
  options.micro_batches = {1, 2, 4};
  const runner::LayoutSearch all = runner::search_layouts(s, options); // brute force
  CHECK(all.pruned.empty());
  for (std::size_t keep : {std::size_t(1), std::size_t(2), std::size_t(3)}) {
    for (unsigned threads : {1u, 2u}) {
      options.keep = keep;
      options.threads = threads;
      std::size_t calls = 0;
      std::size_t last_total = 0;
      options.progress = [&](std::size_t done, std::size_t total) {
        ++calls;
        last_total = total;
        CHECK(done <= total);
      };
      const runner::LayoutSearch fast = runner::search_layouts(s, options);
      INFO("keep " << keep << ", threads " << threads);
      // Every layout is accounted for: simulated, refused or skipped.
      CHECK(fast.ranked.size() + fast.failed.size() + fast.pruned.size() ==
            all.ranked.size() + all.failed.size());
      CHECK(calls == last_total);
      REQUIRE(fast.ranked.size() >= keep);
      for (std::size_t i = 0; i < keep; ++i) {
        CHECK(fast.ranked[i].describe() == all.ranked[i].describe());
        CHECK(fast.ranked[i].iteration.time == all.ranked[i].iteration.time);
        CHECK(fast.ranked[i].iteration.mfu == all.ranked[i].iteration.mfu);
      }
      for (const runner::LayoutCandidate& c : fast.pruned)
        CHECK(c.compute_bound > fast.ranked[keep - 1].iteration.time);
      std::ostringstream a, b;
      runner::LayoutSearch all_but_reason = all, fast_but_reason = fast;
      all_but_reason.reason = fast_but_reason.reason = "";
      runner::print_layout_search(all_but_reason, s, keep, false, a);
      runner::print_layout_search(fast_but_reason, s, keep, false, b);
      // The table's rows and the winner are the same (the header's counts and the line counting
      // the rows not shown differ); so is the reason where the runner-up is ranked exactly too.
      const auto body = [](const std::string& text) {
        std::istringstream in(text);
        std::string out;
        for (std::string line; std::getline(in, line);)
          if (line.rfind("# layouts of", 0) != 0 &&
              line.find("slower layouts not shown") == std::string::npos)
            out += line + "\n";
        return out;
      };
      if (keep >= 2) CHECK(fast.reason == all.reason);
      CHECK(body(a.str()) == body(b.str()));
    }
  }
  options.keep = 1;
  options.threads = 1;
  CHECK_FALSE(runner::search_layouts(s, options).pruned.empty()); // the bound does prune here
}
