// The engine layer (sim/engine.hpp): one entry for collectives and training iterations on every
// engine, the launch overhead applied exactly once, and each engine's details attached.
#include "../../models/training_harness.hpp"
#include "../uniform_star.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/engine.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

sim::EngineSpec spec_of(sim::EngineKind kind, Picoseconds launch_overhead = 0) {
  sim::EngineSpec spec;
  spec.kind = std::move(kind);
  spec.launch_overhead = launch_overhead;
  return spec;
}

const std::vector<sim::EngineKind> kEveryEngine = {
    sim::AnalyticEngineSpec{}, sim::flow::FlowEngineSpec{}, sim::packet::PacketEngineSpec{}};

sim::EngineResult run(const coll::CollectiveCall& call, const sim::EngineSpec& spec,
                      const sim::CommonOptions& options = {}) {
  const topo::Topology topology = sim::test::star(call.ranks);
  topo::Router router(topology);
  return sim::simulate(call, topology, router, spec, options);
}

sim::EngineResult run_training(const Scenario& scenario, const sim::EngineSpec& spec,
                               const sim::CommonOptions& options = {}) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  return sim::simulate(sim::TrainingIteration{scenario.workload.training.jobs,
                                              scenario.workload.training.iterations},
                       topology, router, spec, options);
}

} // namespace

TEST_CASE("the engine spec names its engine and what the engine's progress counts") {
  CHECK(sim::engine_name(sim::EngineSpec{}) == "analytic");
  CHECK(sim::engine_name(spec_of(sim::flow::FlowEngineSpec{})) == "flow");
  CHECK(sim::engine_name(spec_of(sim::packet::PacketEngineSpec{})) == "packet");
  CHECK(sim::progress_unit(sim::EngineSpec{}) == "steps");
  CHECK(sim::progress_unit(spec_of(sim::packet::PacketEngineSpec{})) == "events");
  CHECK(sim::runs_in_child_process(spec_of(sim::flow::FlowEngineSpec{})));
  CHECK_FALSE(sim::runs_in_child_process(sim::EngineSpec{}));
}

TEST_CASE("a collective through the engine layer times as the analytic engine itself") {
  const coll::CollectiveCall call = sim::test::make_call(coll::Op::all_reduce, "ring", 4, 1 << 20);
  const topo::Topology topology = sim::test::star(4);
  topo::Router router(topology);
  sim::AnalyticOptions direct;
  direct.per_step_overhead = 3 * kPsPerUs;
  direct.seed = 7;
  const Picoseconds expected =
      sim::simulate_analytic(topology, router, coll::Schedule::make(call), direct).time;
  sim::EngineSpec spec;
  spec.per_step_overhead = 3 * kPsPerUs;
  sim::CommonOptions options;
  options.seed = 7;
  const sim::EngineResult result = run(call, spec, options);
  CHECK(result.complete);
  CHECK(result.time == expected);
  CHECK(result.algorithm == "ring");
  CHECK(result.auto_reason.empty());
  CHECK(result.details.json.is_null());
  CHECK(result.details.summary.empty());
}

TEST_CASE("every engine adds a collective's launch overhead exactly once") {
  const coll::CollectiveCall call =
      sim::test::make_call(coll::Op::all_reduce, "ring", 4, 256 << 10);
  const Picoseconds launch = 25 * kPsPerUs;
  for (const sim::EngineKind& kind : kEveryEngine) {
    const sim::EngineResult without = run(call, spec_of(kind));
    const sim::EngineResult with = run(call, spec_of(kind, launch));
    INFO(sim::engine_name(spec_of(kind)));
    CHECK(without.time > 0);
    CHECK(with.time - without.time == launch);
    CHECK(with.transfers == without.transfers);
  }
}

TEST_CASE("the packet engine's figures come attached, its queue counters on request") {
  const coll::CollectiveCall call =
      sim::test::make_call(coll::Op::all_to_all, "pairwise", 4, 4 << 20);
  const sim::EngineSpec packet = spec_of(sim::packet::PacketEngineSpec{});
  const sim::EngineResult plain = run(call, packet);
  CHECK(plain.details.json.contains("data_packets"));
  CHECK_THAT(plain.details.summary, StartsWith("#   packets "));
  CHECK(plain.details.counters.empty());
  CHECK(plain.steps_recorded.empty());
  sim::CommonOptions traced;
  traced.record_steps = true;
  traced.record_counters = true;
  const sim::EngineResult recorded = run(call, packet, traced);
  CHECK(recorded.time == plain.time);
  CHECK(recorded.steps_recorded.size() == recorded.steps);
  REQUIRE_FALSE(recorded.details.counters.empty());
  CHECK_THAT(recorded.details.counter_names.front(), StartsWith("queue bytes "));
  for (const sim::TraceCounterPoint& point : recorded.details.counters)
    CHECK(point.track < recorded.details.counter_names.size());
}

TEST_CASE("auto is chosen on the analytic engine, and refused for the packet engine") {
  const coll::CollectiveCall call = sim::test::make_call(coll::Op::all_reduce, "auto", 4, 1 << 20);
  const sim::EngineResult chosen = run(call, sim::EngineSpec{});
  CHECK(chosen.algorithm != "auto");
  CHECK_THAT(chosen.auto_reason, Contains(chosen.algorithm));
  CHECK_THROWS_WITH(run(call, spec_of(sim::packet::PacketEngineSpec{})),
                    Contains("/workload/algorithm") && Contains("name an algorithm"));
}

TEST_CASE("a training iteration runs on every engine through the same entry") {
  const Scenario scenario = models::test::load_text(
      models::test::cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 32,
                                      "precision": "fp16")"));
  Picoseconds analytic_time = 0;
  for (const sim::EngineKind& kind : kEveryEngine) {
    INFO(sim::engine_name(spec_of(kind)));
    const sim::EngineResult result = run_training(scenario, spec_of(kind));
    REQUIRE(result.complete);
    REQUIRE(result.jobs.size() == 1);
    // The run is the iterations back to back; the job's time is the last (steady) one.
    Picoseconds iterations = 0;
    for (Picoseconds t : result.jobs[0].iteration_times) iterations += t;
    CHECK(iterations == result.time);
    CHECK(result.jobs[0].time == result.jobs[0].iteration_times.back());
    CHECK(result.jobs[0].max_communication > 0);
    CHECK(result.steps_recorded.empty()); // not asked for
    if (analytic_time == 0) analytic_time = result.time;
    // Every engine times the same iteration within a few percent on an uncongested switch.
    CHECK(static_cast<double>(result.time) < 1.05 * static_cast<double>(analytic_time));
    CHECK(static_cast<double>(result.time) > 0.95 * static_cast<double>(analytic_time));
  }
  sim::CommonOptions traced;
  traced.record_steps = true;
  const sim::EngineResult recorded =
      run_training(scenario, spec_of(sim::packet::PacketEngineSpec{}), traced);
  CHECK(recorded.steps_recorded.size() == recorded.steps);
}

TEST_CASE("a training iteration's launch overhead delays its collectives, not its end twice") {
  const Scenario scenario = models::test::load_text(models::test::cluster(
      4, 25, R"("model": "resnet50", "batch_per_gpu": 32, "precision": "fp16")"));
  const Picoseconds launch = 50 * kPsPerUs;
  const sim::EngineResult without = run_training(scenario, sim::EngineSpec{});
  const sim::EngineResult with = run_training(scenario, spec_of(sim::AnalyticEngineSpec{}, launch));
  CHECK(with.time > without.time);
  // One launch per collective, on the communication stream: the end moves by at most all of
  // them, never by an extra one added after the iteration.
  const int collectives = with.jobs.at(0).collectives;
  CHECK(with.time - without.time <= launch * collectives);
}

TEST_CASE("a collective stops when the progress callback says so") {
  coll::CollectiveCall call = sim::test::make_call(coll::Op::all_reduce, "ring", 64, 64 << 20);
  call.params.chunks = 16; // 2 x 63 x 16 steps per rank: past the first progress call
  std::uint64_t calls = 0;
  sim::CommonOptions options;
  options.progress = [&calls](Picoseconds, std::uint64_t) {
    ++calls;
    return false;
  };
  CHECK_FALSE(run(call, sim::EngineSpec{}, options).complete);
  CHECK(calls == 1);
}
