// The large-model iteration's Schedule on the analytic engine's two evaluations: the
// dependency-order one (which forgets step ends by each rank's floor and hands over only the
// channels the metrics read) must give exactly the event-driven one's times.
#include "ddlsim/models/llm.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

using namespace ddlsim;
using namespace ddlsim::models;

namespace {

// Two DGX H100 on one switch, a small dense transformer and the parallel keys given, on the ring:
// NCCL's choice charges network posts, which the dependency-order evaluation declines.
std::string scenario_text(const std::string& parallel, int global_batch) {
  return R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 2}],
                          "fabric": {"type": "single_switch"}},
             "workload": {"type": "llm_training", "algorithm": "ring",
                          "model": {"layers": 8, "hidden": 2048, "heads": 16, "ffn": 8192,
                                    "seq_len": 1024, "vocab": 1024},
                          "parallel": )" +
         parallel + R"(, "global_batch": )" + std::to_string(global_batch) + "}}";
}

struct Timed {
  sim::CollectiveTiming timing;
  std::vector<std::tuple<std::int32_t, std::uint16_t, Picoseconds, Picoseconds>> records;
};

Timed time_iteration(const std::string& text, bool dependency_order) {
  const Scenario scenario = load_scenario(Json::parse(text), "test.json", ".");
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const auto plan = std::make_shared<const LlmPlan>(
      plan_llm(scenario.workload.llm, sim::llm_plan_options(scenario.engine)));
  Timed out;
  sim::AnalyticOptions options;
  options.try_dependency_order = dependency_order;
  options.on_step = [&out](const sim::StepRecord& r) {
    if (r.channel == kLlmComputeChannel || r.channel == kLlmPpChannel)
      out.records.emplace_back(r.rank, r.channel, r.start, r.end);
  };
  options.on_step_channels = LlmRecorder::kChannels;
  // An attempt that found links shared hands its steps over again in the next.
  options.on_restart = [&out] { out.records.clear(); };
  out.timing = sim::simulate_analytic(topology, router, llm_schedule(plan), options);
  std::sort(out.records.begin(), out.records.end());
  return out;
}

} // namespace

TEST_CASE("llm: the dependency-order evaluation times the iteration as the event-driven one") {
  for (const auto& [parallel, batch] : std::vector<std::pair<std::string, int>>{
           {R"({"tp": 4, "pp": 2, "dp": 2, "zero": 1, "sequence_parallel": true})", 8},
           {R"({"tp": 2, "pp": 2, "dp": 4, "zero": 3})", 8},
           {R"({"tp": 2, "pp": 1, "dp": 8, "zero": 1, "sequence_parallel": true,
                "tp_comm_overlap": true, "overlap_param_gather": true})",
            16}}) {
    INFO(parallel);
    const std::string text = scenario_text(parallel, batch);
    const Timed fast = time_iteration(text, true);
    const Timed events = time_iteration(text, false);
    CHECK(fast.timing.evaluated_in_dependency_order);
    CHECK_FALSE(events.timing.evaluated_in_dependency_order);
    CHECK(fast.timing.time == events.timing.time);
    CHECK(fast.timing.steps == events.timing.steps);
    CHECK(fast.timing.bytes_sent == events.timing.bytes_sent);
    // Every compute and pipeline step at the same instants.
    CHECK(fast.records == events.records);
    CHECK(!fast.records.empty());
  }
}
