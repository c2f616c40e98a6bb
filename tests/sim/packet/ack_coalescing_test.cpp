// Coalesced ACKs: one ACK per N new packets of a message, flushed when the receive completes or
// a duplicate arrives; fewer control packets and events, the same delivery.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

PacketTiming ring(std::uint32_t every) {
  const topo::Topology topology = star(8);
  PacketOptions options = star_options();
  options.spec.transport.ack_every_packets = every;
  return run_packet(topology, make_call(coll::Op::all_reduce, "ring", 8, 8 << 20), options);
}

TEST_CASE("coalesced ACKs cut control packets and events, not the uncongested time") {
  const PacketTiming one = ring(1);
  const PacketTiming four = ring(4);
  REQUIRE(one.complete);
  REQUIRE(four.complete);
  CHECK(four.data_packets == one.data_packets);
  CHECK(one.control_packets == one.data_packets);
  // One ACK per 4 packets, plus one at the end of each message.
  CHECK(four.control_packets <= one.data_packets / 4 + one.transfers);
  CHECK(four.control_packets >= one.data_packets / 4);
  CHECK(four.events < one.events);
  // ACKs share the reverse links with data; fewer of them can only help, and on an
  // uncongested star the time hardly moves.
  CHECK(four.time <= one.time);
  CHECK(static_cast<double>(four.time) > 0.99 * static_cast<double>(one.time));
}

TEST_CASE("coalesced ACKs still recover losses and feed DCTCP") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.transport.rto = 50 * kPsPerUs;
  options.spec.transport.ack_every_packets = 8;
  std::vector<Flow> flows;
  for (int s = 1; s <= 4; ++s) flows.push_back({s, 0, 1 << 20, 0});
  const PacketTiming lossy = run_traffic(topology, 5, 1, flows, options);
  REQUIRE(lossy.complete);
  CHECK(lossy.drops > 0);
  CHECK(lossy.retransmissions >= lossy.drops);

  options.spec.switch_spec.buffer_bytes = 256 << 10;
  options.spec.switch_spec.ecn_threshold_bytes = 32 << 10;
  options.spec.transport.congestion_control = CongestionControl::dctcp;
  options.spec.transport.initial_window_packets = 2;
  options.spec.transport.rto = 1000 * kPsPerUs;
  const PacketTiming dctcp = run_traffic(topology, 5, 1, flows, options);
  REQUIRE(dctcp.complete);
  CHECK(dctcp.drops == 0);
  CHECK(dctcp.ecn_marks > 0);
  CHECK(link_stats(dctcp, 1).peak_queue_bytes < (96 << 10));
}

} // namespace
} // namespace ddlsim::sim::packet::test
