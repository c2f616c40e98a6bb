// Shared switch buffers: one pool per switch under Choudhury-Hahne's dynamic threshold, against
// a fixed per-port share.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

constexpr topo::LinkId kDownlinkToRank0 = 1;

PacketTiming burst(BufferSharing sharing, double alpha) {
  const topo::Topology topology = star(5); // one switch, five ports
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.switch_spec.buffer_sharing = sharing;
  options.spec.switch_spec.dynamic_threshold_alpha = alpha;
  options.spec.transport.rto = 100 * kPsPerUs;
  std::vector<Flow> flows;
  for (int s = 1; s <= 4; ++s) flows.push_back({s, 0, 512 << 10, 0});
  return run_traffic(topology, 5, 1, flows, options);
}

TEST_CASE("a burst to one port uses more than a per-port share of a shared buffer") {
  const PacketTiming per_port = burst(BufferSharing::per_port, 1);
  const PacketTiming shared = burst(BufferSharing::shared, 1);
  REQUIRE(per_port.complete);
  REQUIRE(shared.complete);
  const std::uint64_t fixed_peak = link_stats(per_port, kDownlinkToRank0).peak_queue_bytes;
  const std::uint64_t shared_peak = link_stats(shared, kDownlinkToRank0).peak_queue_bytes;
  CHECK(fixed_peak <= (64 << 10));
  // The pool is 5 x 64 KiB; with alpha 1 one busy port may hold alpha x (pool - used), so it
  // levels off at half the pool, 160 KiB.
  CHECK(shared_peak > (64 << 10));
  CHECK(shared_peak <= (160 << 10) + 4160);
  CHECK(shared.drops < per_port.drops);
}

TEST_CASE("a small dynamic-threshold alpha limits one port's share") {
  const PacketTiming small = burst(BufferSharing::shared, 1.0 / 8);
  const PacketTiming large = burst(BufferSharing::shared, 4);
  REQUIRE(small.complete);
  REQUIRE(large.complete);
  const std::uint64_t small_peak = link_stats(small, kDownlinkToRank0).peak_queue_bytes;
  const std::uint64_t large_peak = link_stats(large, kDownlinkToRank0).peak_queue_bytes;
  // alpha 1/8: q <= (320 KiB - q) / 8, about 35.6 KiB, under the 64 KiB a port has alone.
  CHECK(small_peak < (36 << 10));
  // alpha 4: q <= 4 (320 KiB - q), 256 KiB.
  CHECK(large_peak > (200 << 10));
  CHECK(large_peak <= (256 << 10) + 4160);
  CHECK(small.drops > large.drops);
}

} // namespace
} // namespace ddlsim::sim::packet::test
