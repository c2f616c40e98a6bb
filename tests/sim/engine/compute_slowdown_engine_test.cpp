// engine.compute_slowdown through the engine layer and the scenario: a training iteration whose
// backward pass overlaps its gradient all-reduces gets slower on the analytic engine, by no more
// than the curve allows; the flow and packet engines refuse the option instead of ignoring it.
#include "../../models/training_harness.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/compute_slowdown.hpp"
#include "ddlsim/sim/engine.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;
using ddlsim::test_support::error_of;

namespace {

// 4 nodes of one V100 (80 SMs) on 25 Gb/s NICs: ResNet-50's all-reduces overlap its backward.
const std::string kResnet = models::test::cluster(
    4, 25, R"("model": "resnet50", "batch_per_gpu": 32, "precision": "fp16")");

sim::EngineResult run_training(const Scenario& scenario, const sim::EngineSpec& spec) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  return sim::simulate(sim::TrainingIteration{scenario.workload.training.jobs,
                                              scenario.workload.training.iterations},
                       topology, router, spec, {});
}

} // namespace

TEST_CASE("compute slowdown engine: a data-parallel iteration slows where compute overlaps its "
          "all-reduces") {
  const Scenario scenario = models::test::load_text(kResnet);
  sim::EngineSpec off;
  sim::EngineSpec on;
  on.compute_slowdown = true;
  const sim::EngineResult before = run_training(scenario, off);
  const sim::EngineResult after = run_training(scenario, on);
  REQUIRE(after.complete);
  CHECK(after.time > before.time);
  // Compute is at most s(its blocks) slower; communication is timed as before.
  CHECK(static_cast<double>(after.time) <
        sim::compute_slowdown(1e9, 80) * static_cast<double>(before.time));
  CHECK(after.steps == before.steps);
  CHECK(after.bytes_sent == before.bytes_sent);
  // Same scenario, same answer.
  CHECK(run_training(scenario, on).time == after.time);
}

TEST_CASE("compute slowdown engine: the flow and packet engines refuse it, naming themselves") {
  const Scenario scenario = models::test::load_text(kResnet);
  sim::EngineSpec flow;
  flow.kind = sim::flow::FlowEngineSpec{};
  flow.compute_slowdown = true;
  CHECK_THAT(error_of([&] { run_training(scenario, flow); }),
             Contains("/engine/compute_slowdown") && Contains("flow engine"));
  sim::EngineSpec packet;
  packet.kind = sim::packet::PacketEngineSpec{};
  packet.compute_slowdown = true;
  CHECK_THAT(error_of([&] { run_training(scenario, packet); }),
             Contains("/engine/compute_slowdown") && Contains("packet engine"));
}

TEST_CASE("compute slowdown engine: the scenario key is read, and refused beside another "
          "engine") {
  std::string text = kResnet;
  text.insert(text.size() - 1, R"(, "engine": {"type": "analytic", "compute_slowdown": true})");
  CHECK(models::test::load_text(text).engine.compute_slowdown);
  CHECK_FALSE(models::test::load_text(kResnet).engine.compute_slowdown);
  std::string packet = kResnet;
  packet.insert(packet.size() - 1, R"(, "engine": {"type": "packet", "compute_slowdown": true})");
  CHECK_THAT(error_of([&] { models::test::load_text(packet); }),
             Contains("/engine/compute_slowdown") && Contains("packet engine"));
}
