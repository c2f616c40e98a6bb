// Per-class PFC: PAUSE and RESUME per priority class from the switch's ingress accounting, with
// xoff / xon thresholds, headroom, and frames that take the reverse link's latency to arrive.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

// Senders 1 and 2 on channel 0 (class 0), senders 3 and 4 on channel 1 (class 1), all to rank 0.
std::vector<Flow> two_class_incast(std::uint64_t bytes) {
  return {{1, 0, bytes, 0}, {2, 0, bytes, 0}, {3, 0, bytes, 1}, {4, 0, bytes, 1}};
}

PacketOptions two_classes(std::uint8_t lossless) {
  PacketOptions options = star_options();
  options.spec.switch_spec.priorities = 2;
  options.spec.switch_spec.buffer_bytes = 128 << 10;
  options.spec.switch_spec.pfc.enabled = true;
  options.spec.switch_spec.pfc.lossless_classes = lossless;
  options.spec.transport.priority_rule = TransportSpec::PriorityRule::by_channel;
  options.spec.transport.rto = 100 * kPsPerUs;
  return options;
}

TEST_CASE("PFC on the lossless class: it never drops while the lossy class does") {
  const topo::Topology topology = star(5);
  const PacketTiming t = run_traffic(topology, 5, 2, two_class_incast(1 << 20), two_classes(0b01));
  REQUIRE(t.complete);
  CHECK(t.drops_by_priority[0] == 0);
  CHECK(t.drops_by_priority[1] > 0);
  CHECK(t.headroom_drops == 0);
  CHECK(t.pfc_pauses_by_priority[0] > 0);
  CHECK(t.pfc_pauses_by_priority[1] == 0);
  CHECK(t.pfc_pauses == t.pfc_pauses_by_priority[0]);

  // Both classes lossless: nothing drops anywhere, both classes pause. (Class 1 waits behind
  // class 0 for ~200 us under strict priority: a longer timeout keeps it from resending.)
  PacketOptions lossless = two_classes(0b11);
  lossless.spec.transport.rto = 1000 * kPsPerUs;
  const PacketTiming both = run_traffic(topology, 5, 2, two_class_incast(1 << 20), lossless);
  REQUIRE(both.complete);
  CHECK(both.drops == 0);
  CHECK(both.retransmissions == 0);
  CHECK(both.pfc_pauses_by_priority[0] > 0);
  CHECK(both.pfc_pauses_by_priority[1] > 0);
}

TEST_CASE("PFC headroom must cover the pause frame's round trip") {
  // 5 us links: 50 KB arrive in the time a PAUSE takes to reach the sender and the last
  // packets take to come in. Headroom from the link (the default) drops nothing; none drops.
  const topo::Topology topology = star_with(5, {}, std::vector<Picoseconds>(5, 5 * kPsPerUs));
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 256 << 10;
  options.spec.switch_spec.pfc.enabled = true;
  options.spec.transport.rto = 200 * kPsPerUs;
  std::vector<Flow> flows;
  for (int s = 1; s <= 4; ++s) flows.push_back({s, 0, 1 << 20, 0});
  const PacketTiming enough = run_traffic(topology, 5, 1, flows, options);
  REQUIRE(enough.complete);
  CHECK(enough.drops == 0);
  CHECK(enough.pfc_pauses > 0);

  options.spec.switch_spec.pfc.headroom_bytes = 0;
  const PacketTiming none = run_traffic(topology, 5, 1, flows, options);
  REQUIRE(none.complete); // recovered by retransmission
  CHECK(none.headroom_drops > 0);
  CHECK(none.drops == none.headroom_drops);
}

TEST_CASE("a later XOFF threshold lets the queue grow deeper before pausing") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 1 << 20;
  options.spec.switch_spec.pfc.enabled = true;
  std::vector<Flow> flows;
  for (int s = 1; s <= 4; ++s) flows.push_back({s, 0, 1 << 20, 0});
  options.spec.switch_spec.pfc.xoff_bytes = 16 << 10;
  const PacketTiming low = run_traffic(topology, 5, 1, flows, options);
  options.spec.switch_spec.pfc.xoff_bytes = 64 << 10;
  const PacketTiming high = run_traffic(topology, 5, 1, flows, options);
  REQUIRE(low.complete);
  REQUIRE(high.complete);
  CHECK(low.drops == 0);
  CHECK(high.drops == 0);
  const std::uint64_t low_peak = link_stats(low, 1).peak_queue_bytes;
  const std::uint64_t high_peak = link_stats(high, 1).peak_queue_bytes;
  CHECK(high_peak > low_peak);
  CHECK(low.pfc_pauses > high.pfc_pauses);
  // Either way the port toward the receiver never idles: PFC is work conserving here.
  CHECK(link_stats(low, 1).utilisation > 0.95);
}

} // namespace
} // namespace ddlsim::sim::packet::test
