// DLCP's per-layer packet priority in steady-state training (Wang et al., "Domain-specific
// Communication Optimization for Distributed DNN Training", arXiv 2008.08445: packet-level
// prioritization by layer, the front layers' gradients first because the next iteration's
// forward pass needs them first). Its effect needs several layers' transfers in the network at
// once (framework.streams > 1), a next iteration whose forward pass waits per layer
// (ByteScheduler's per-layer update) and a bottleneck where packets of both classes queue.
#include "packet_training.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

using models::test::load_text;

// ResNet-50 in fp16 on `hosts` one-GPU V100 hosts with 50 Gb/s NICs; ByteScheduler's partitions
// (one ring all-reduce each) on `streams` streams. `leaves` > 1: a leaf-spine of that many leaves
// and 2 spines, 2:1 oversubscribed; else one switch.
std::string resnet_streams(int hosts, int leaves, int streams = 64) {
  const std::string fabric = leaves > 1
                                 ? R"({"type": "leaf_spine", "leaves": )" + std::to_string(leaves) +
                                       R"(, "spines": 2, "latency_ns": 1000,
                                              "oversubscription": 2})"
                                 : R"({"type": "single_switch", "latency_ns": 1000})";
  return R"({"topology": {"nodes": [{"preset": "single-gpu-host", "count": )" +
         std::to_string(hosts) + R"(, "nic_bandwidth_gbps": 50, "nic_latency_ns": 1000}],
             "fabric": )" +
         fabric + R"(},
      "workload": {"type": "training", "model": "resnet50", "batch_per_gpu": 32,
                   "precision": "fp16", "algorithm": "ring",
                   "framework": {"type": "bytescheduler", "startup_us": 50,
                                 "bandwidth_gbps": 25, "streams": )" +
         std::to_string(streams) + "}}}";
}

// Tail drop into 256 KiB per switch port, 200 us RTO, no congestion control; `classes`
// strict-priority classes, class 0 the front layers' gradients (by_layer) or, mirrored, the
// back layers' (by_offset).
PacketEngineSpec engine(int classes,
                        TransportSpec::PriorityRule rule = TransportSpec::PriorityRule::by_layer) {
  PacketEngineSpec spec;
  spec.switch_spec.buffer_bytes = 256 << 10;
  spec.switch_spec.priorities = classes;
  spec.transport.rto = 200 * kPsPerUs;
  if (classes > 1) spec.transport.priority_rule = rule;
  return spec;
}

// The last iteration, measured from the end of the one before (the first alone: from zero).
Picoseconds last(const PacketIteration& run) {
  REQUIRE(run.timing.complete);
  return run.jobs.at(0).time;
}

TEST_CASE("per-layer priority shortens the congested steady-state iteration") {
  // 8 hosts, two per leaf, 2:1 oversubscribed: the ring's hops between leaves share uplinks
  // of half a NIC's rate, and the partitions of many layers cross them together.
  const Scenario scenario = load_text(resnet_streams(8, 4));
  const PacketIteration one_class = run_packet_training(scenario, engine(1), 2);
  const PacketIteration by_layer = run_packet_training(scenario, engine(2), 2);
  const double without = static_cast<double>(last(one_class));
  const double with = static_cast<double>(last(by_layer));
  INFO("steady state: one class " << without << " ps, by_layer " << with << " ps");
  CHECK(by_layer.timing.data_packets_by_priority[0] > 0);
  CHECK(by_layer.timing.data_packets_by_priority[1] > 0);
  CHECK(one_class.timing.drops > 0); // congested
  CHECK(by_layer.jobs.at(0).max_compute == one_class.jobs.at(0).max_compute);
  // The front layers' partitions go first where both classes queue, so the next forward pass
  // starts earlier.
  CHECK(with < 0.95 * without);
}

TEST_CASE("per-layer priority changes nothing with one collective in flight") {
  // One stream on the same congested fabric: a GPU has one partition in the network at a time,
  // whose packets all carry one class, so no packet overtakes another, whatever the queues.
  const Scenario scenario = load_text(resnet_streams(8, 4, 1));
  for (int iterations : {1, 2}) {
    const PacketIteration one_class = run_packet_training(scenario, engine(1), iterations);
    const PacketIteration by_layer = run_packet_training(scenario, engine(2), iterations);
    CHECK(by_layer.timing.data_packets_by_priority[0] > 0);
    CHECK(by_layer.timing.data_packets_by_priority[1] > 0);
    CHECK(last(by_layer) == last(one_class));
    CHECK(by_layer.timing.time == one_class.timing.time);
    CHECK(by_layer.timing.drops == one_class.timing.drops);
  }
}

TEST_CASE("streams run their collectives at the same time, each stream in order") {
  const Scenario scenario = load_text(resnet_streams(4, 1));
  models::TrainingPlan plan = models::plan_training(scenario.workload.training.jobs);
  const models::JobPlan& job = plan.jobs.at(0);
  REQUIRE(job.collectives.size() > 64);
  for (std::size_t i = 0; i < job.collectives.size(); ++i)
    CHECK(job.collectives[i].first_channel == 1 + static_cast<int>(i % 64));
  CHECK(models::iteration_channels(plan) == 65); // compute, then one channel per stream
}

} // namespace
} // namespace ddlsim::sim::packet::test
