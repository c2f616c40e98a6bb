// Training iterations on the packet engine: the composite iteration Schedule (compute steps,
// cross-program waits, one all-reduce per bucket) runs, and by_layer priority puts the first
// layers' gradients, which the next forward pass needs first, in class 0.
#include "packet_training.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

using models::test::cluster;
using models::test::load_text;

// ResNet-50 in fp16 (51 MB of gradients, DDP buckets) on four single-GPU nodes, 25 Gb/s NICs.
const std::string kResnet4 = cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 32,
                                              "precision": "fp16")");

TEST_CASE("a training iteration runs on the packet engine near the analytic time") {
  const Scenario scenario = load_text(kResnet4);
  const models::test::TrainingRun analytic = models::test::run_training(scenario);
  const PacketIteration packet = run_packet_training(scenario, PacketEngineSpec{});
  REQUIRE(packet.timing.complete);
  REQUIRE(packet.jobs.size() == 1);
  const models::JobIteration& a = analytic.jobs.at(0);
  const models::JobIteration& p = packet.jobs.at(0);
  CHECK(p.max_compute == a.max_compute); // the same compute steps
  CHECK(packet.timing.drops == 0);
  CHECK(packet.timing.transfers > 0);
  // Packets add 64-byte headers per 4 KiB, store-and-forward and ACKs: a little slower, never
  // faster, than the fluid analytic engine on an uncongested switch.
  CHECK(p.time >= a.time);
  CHECK(static_cast<double>(p.time) < 1.05 * static_cast<double>(a.time));
  CHECK(p.max_communication > 0);
  // More gradient bytes per GPU (fp32) take longer on the packet engine too.
  const Scenario fp32 = load_text(cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 32)"));
  CHECK(run_packet_training(fp32, PacketEngineSpec{}).jobs.at(0).max_communication >
        p.max_communication);
}

TEST_CASE("by_layer priority gives the first layers' gradients class 0") {
  const Scenario scenario = load_text(kResnet4);
  PacketEngineSpec spec;
  spec.switch_spec.priorities = 2;
  spec.transport.priority_rule = TransportSpec::PriorityRule::by_layer;
  const PacketIteration by_layer = run_packet_training(scenario, spec);
  spec.transport.priority_rule = TransportSpec::PriorityRule::by_offset;
  const PacketIteration by_offset = run_packet_training(scenario, spec);
  REQUIRE(by_layer.timing.complete);
  REQUIRE(by_offset.timing.complete);
  // The plan lays buckets out in backward order: the last bucket holds layer 0 and ends the
  // gradient buffer, so the buffer's end is what the next forward pass needs first.
  const models::JobPlan& job = by_layer.plan->jobs.at(0);
  REQUIRE(job.collectives.size() > 1);
  CHECK(job.collectives.back().first_layer == 0);
  CHECK(job.collectives.back().gradient_offset + job.collectives.back().call.bytes ==
        job.gradient_bytes);
  CHECK(job.collectives.front().first_layer > job.collectives.back().last_layer);
  // Both classes carry packets, mirrored between the two rules.
  const auto& layer = by_layer.timing.data_packets_by_priority;
  const auto& offset = by_offset.timing.data_packets_by_priority;
  CHECK(layer[0] > 0);
  CHECK(layer[1] > 0);
  CHECK(layer[0] == offset[1]);
  CHECK(layer[1] == offset[0]);
}

} // namespace
} // namespace ddlsim::sim::packet::test
