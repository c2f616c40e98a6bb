// engine.compute_slowdown through the engine layer and the scenario: a training iteration whose
// backward pass overlaps its gradient all-reduces gets slower on the analytic engine, by no more
// than the curve allows, and on the packet and flow engines by as much.
#include "../../models/training_harness.hpp"
#include "ddlsim/sim/compute_slowdown.hpp"
#include "ddlsim/sim/engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;

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

TEST_CASE("compute slowdown engine: the packet engine slows compute as the analytic one does") {
  const Scenario scenario = models::test::load_text(kResnet);
  sim::EngineSpec analytic;
  analytic.compute_slowdown = true;
  sim::EngineSpec packet;
  packet.kind = sim::packet::PacketEngineSpec{};
  const sim::EngineResult packet_off = run_training(scenario, packet);
  packet.compute_slowdown = true;
  const sim::EngineResult packet_on = run_training(scenario, packet);
  const sim::EngineResult analytic_on = run_training(scenario, analytic);
  CHECK(packet_on.time > packet_off.time);
  // Within the 5% the engines keep on an uncongested switch without it.
  CHECK(static_cast<double>(packet_on.time) < 1.05 * static_cast<double>(analytic_on.time));
  CHECK(static_cast<double>(packet_on.time) > 0.95 * static_cast<double>(analytic_on.time));
  // And it slows by about as much: the difference each engine sees agrees within 5% of the
  // iteration too.
  const sim::EngineResult analytic_off = run_training(scenario, sim::EngineSpec{});
  const double packet_slower = static_cast<double>(packet_on.time - packet_off.time);
  const double analytic_slower = static_cast<double>(analytic_on.time - analytic_off.time);
  CHECK(std::abs(packet_slower - analytic_slower) < 0.05 * static_cast<double>(analytic_on.time));
}

TEST_CASE("compute slowdown engine: the flow engine slows compute as the analytic one does") {
  const Scenario scenario = models::test::load_text(kResnet);
  sim::EngineSpec analytic;
  analytic.compute_slowdown = true;
  sim::EngineSpec flow;
  flow.kind = sim::flow::FlowEngineSpec{};
  const sim::EngineResult flow_off = run_training(scenario, flow);
  flow.compute_slowdown = true;
  const sim::EngineResult flow_on = run_training(scenario, flow);
  const sim::EngineResult analytic_on = run_training(scenario, analytic);
  CHECK(flow_on.time > flow_off.time);
  // Within the 5% the engines keep on an uncongested switch without it.
  CHECK(static_cast<double>(flow_on.time) < 1.05 * static_cast<double>(analytic_on.time));
  CHECK(static_cast<double>(flow_on.time) > 0.95 * static_cast<double>(analytic_on.time));
  // And it slows by about as much.
  const sim::EngineResult analytic_off = run_training(scenario, sim::EngineSpec{});
  const double flow_slower = static_cast<double>(flow_on.time - flow_off.time);
  const double analytic_slower = static_cast<double>(analytic_on.time - analytic_off.time);
  CHECK(std::abs(flow_slower - analytic_slower) < 0.05 * static_cast<double>(analytic_on.time));
}

TEST_CASE("compute slowdown engine: the scenario key is read for every engine") {
  std::string text = kResnet;
  text.insert(text.size() - 1, R"(, "engine": {"type": "analytic", "compute_slowdown": true})");
  CHECK(models::test::load_text(text).engine.compute_slowdown);
  CHECK_FALSE(models::test::load_text(kResnet).engine.compute_slowdown);
  std::string packet = kResnet;
  packet.insert(packet.size() - 1, R"(, "engine": {"type": "packet", "compute_slowdown": true})");
  CHECK(models::test::load_text(packet).engine.compute_slowdown);
  std::string flow = kResnet;
  flow.insert(flow.size() - 1, R"(, "engine": {"type": "flow", "compute_slowdown": true})");
  CHECK(models::test::load_text(flow).engine.compute_slowdown);
}
