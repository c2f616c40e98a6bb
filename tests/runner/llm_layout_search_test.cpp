// `ddlsim plan`'s large-model layout search (runner/llm_layout_search.hpp): it ranks by simulated
// time, never ranks a layout over memory, enumerates only valid layouts, and refuses bad options.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/runner/llm_layout_search.hpp"
#include "ddlsim/scenario/layout_search.hpp"
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

} // namespace

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
