// Load balancing on a k=4 fat tree: per-flow ECMP collides, per-packet spraying balances.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

namespace ddlsim::sim::packet::test {
namespace {

constexpr int kHosts = 16;
constexpr std::uint64_t kBytes = 1 << 20;

// Every host sends to the same position in the next pod: all traffic crosses the core.
std::vector<Flow> permutation() {
  std::vector<Flow> flows;
  for (int h = 0; h < kHosts; ++h) flows.push_back({h, (h + 4) % kHosts, kBytes, 0});
  return flows;
}

// Bytes carried by every edge-to-aggregation and aggregation-to-core link.
std::vector<double> uplink_bytes(const topo::Topology& topology, const PacketTiming& t) {
  std::vector<double> bytes;
  for (topo::LinkId id = 0; id < topology.link_count(); ++id) {
    const topo::Link& link = topology.link(id);
    const topo::Vertex& src = topology.vertex(link.src);
    const topo::Vertex& dst = topology.vertex(link.dst);
    if (src.kind != topo::VertexKind::network_switch ||
        dst.kind != topo::VertexKind::network_switch || dst.tier <= src.tier)
      continue;
    bytes.push_back(static_cast<double>(link_stats(t, id).bytes));
  }
  return bytes;
}

PacketTiming run(const topo::Topology& topology, LoadBalancing balancing, std::uint64_t seed) {
  PacketOptions options;
  options.seed = seed;
  options.spec.load_balancing = balancing;
  options.spec.switch_spec.buffer_bytes = 4 << 20; // no drops: compare placement alone
  return run_traffic(topology, kHosts, 1, permutation(), options);
}

TEST_CASE("on a k=4 fat tree per-flow ECMP collides and per-packet spraying balances "
          "the uplinks") {
  const topo::Topology topology = fat_tree(4, kHosts, 100);
  // One flow's bytes on the wire (headers and ACKs of the reverse flow included) is what every
  // uplink carries when the load is perfectly balanced: 16 flows over 16 uplinks per tier.
  const PacketTiming ecmp = run(topology, LoadBalancing::ecmp, 1);
  REQUIRE(ecmp.complete);
  REQUIRE(ecmp.drops == 0);
  const std::vector<double> ecmp_bytes = uplink_bytes(topology, ecmp);
  REQUIRE(ecmp_bytes.size() == 32);
  double total = 0;
  for (double b : ecmp_bytes) total += b;
  const double balanced = total / static_cast<double>(ecmp_bytes.size());
  CHECK(*std::max_element(ecmp_bytes.begin(), ecmp_bytes.end()) >= 1.9 * balanced);
  CHECK(*std::min_element(ecmp_bytes.begin(), ecmp_bytes.end()) < 0.5 * balanced);

  for (const LoadBalancing spray :
       {LoadBalancing::spray_round_robin, LoadBalancing::spray_random, LoadBalancing::adaptive}) {
    INFO("load balancing " << to_string(spray));
    const PacketTiming sprayed = run(topology, spray, 1);
    REQUIRE(sprayed.complete);
    const std::vector<double> bytes = uplink_bytes(topology, sprayed);
    // Round robin is exact up to the ACKs; random spraying of 256 packets per flow varies by
    // about 1/sqrt(256 / 4) per link; adaptive follows the queues.
    const double tolerance = spray == LoadBalancing::spray_round_robin ? 0.03
                             : spray == LoadBalancing::spray_random    ? 0.15
                                                                       : 0.10;
    for (double b : bytes) CHECK(std::abs(b - balanced) <= tolerance * balanced);
    CHECK(sprayed.time < ecmp.time);
  }
  // Spraying reorders packets; single-path ECMP never does.
  CHECK(ecmp.reordered == 0);
  CHECK(run(topology, LoadBalancing::spray_random, 1).reordered > 0);
}

TEST_CASE("adaptive switches choose on arrival: flows that start together split over the "
          "uplinks instead of herding onto the one that looked idle") {
  // Hosts 0 and 1 share an edge switch and send to pod 1 at their full rate from time zero:
  // the edge's two uplinks carry exactly their load if every packet takes the uplink that is
  // free when it arrives. Chosen a link latency ahead, both flows' packets saw the same idle
  // uplink and went there together, queueing and dropping (a 16 KiB buffer holds 3 packets).
  const topo::Topology topology = fat_tree(4, kHosts, 100);
  PacketOptions options;
  options.spec.load_balancing = LoadBalancing::adaptive;
  options.spec.switch_spec.buffer_bytes = 16 << 10;
  options.record_steps = true;
  const std::vector<Flow> pair = {{0, 4, kBytes, 0}, {1, 5, kBytes, 0}};
  const PacketTiming both = run_traffic(topology, kHosts, 1, pair, options);
  REQUIRE(both.complete);
  CHECK(both.drops == 0);
  const PacketTiming alone = run_traffic(topology, kHosts, 1, {pair[0]}, options);
  REQUIRE(alone.drops == 0);
  for (const int dst : {4, 5})
    CHECK(static_cast<double>(receive_end(both, dst, dst - 4)) <=
          1.01 * static_cast<double>(receive_end(alone, 4, 0)));
  // And not slower than per-flow ECMP on the congested all-to-all of the permutation's hosts.
  std::vector<Flow> all;
  for (int h = 0; h < kHosts; ++h)
    for (int d = 1; d < 4; ++d) all.push_back({h, (h + 4 * d) % kHosts, kBytes / 4, 0});
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  const PacketTiming adaptive = run_traffic(topology, kHosts, 1, all, options);
  options.spec.load_balancing = LoadBalancing::ecmp;
  const PacketTiming ecmp = run_traffic(topology, kHosts, 1, all, options);
  REQUIRE(adaptive.complete);
  REQUIRE(ecmp.complete);
  CHECK(adaptive.time <= ecmp.time);
  CHECK(adaptive.drops <= ecmp.drops);
}

} // namespace
} // namespace ddlsim::sim::packet::test
