// DCTCP-style window control: ECN marks above a threshold keep the incast queue short.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

constexpr topo::LinkId kDownlinkToRank0 = 1;

PacketTiming incast(CongestionControl control, std::uint64_t ecn_threshold) {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 256 << 10;
  options.spec.switch_spec.ecn_threshold_bytes = ecn_threshold;
  options.spec.transport.congestion_control = control;
  options.spec.transport.initial_window_packets = 2;
  std::vector<Flow> flows;
  for (int s = 1; s <= 4; ++s) flows.push_back({s, 0, 4 << 20, 0});
  return run_traffic(topology, 5, 1, flows, options);
}

TEST_CASE("DCTCP keeps the incast queue near the ECN threshold and avoids drops") {
  const PacketTiming none = incast(CongestionControl::none, 32 << 10);
  REQUIRE(none.complete);
  CHECK(none.drops > 0);
  CHECK(link_stats(none, kDownlinkToRank0).peak_queue_bytes > (200 << 10));

  const PacketTiming dctcp = incast(CongestionControl::dctcp, 32 << 10);
  REQUIRE(dctcp.complete);
  CHECK(dctcp.drops == 0);
  CHECK(dctcp.ecn_marks > 0);
  const std::uint64_t peak = link_stats(dctcp, kDownlinkToRank0).peak_queue_bytes;
  CHECK(peak < (32 << 10) + (32 << 10)); // the threshold and a few packets in flight
  // The port stays busy: the window control costs little throughput.
  CHECK(link_stats(dctcp, kDownlinkToRank0).utilisation > 0.9);
  // A higher threshold lets the queue grow higher.
  CHECK(link_stats(incast(CongestionControl::dctcp, 96 << 10), kDownlinkToRank0).peak_queue_bytes >
        peak);
}

} // namespace
} // namespace ddlsim::sim::packet::test
