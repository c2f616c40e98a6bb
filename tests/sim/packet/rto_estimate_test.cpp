// The estimated retransmission timer (transport.rto_min, RFC 6298): it follows the measured
// round trip, so queues longer than its floor cause no spurious resends, and a real loss still
// waits at least the floor.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

TEST_CASE("an estimated timer follows queues longer than its floor and resends nothing") {
  // 64 senders into one port with a deep buffer: each message gets a packet through about every
  // 64 packet times (27 us), while queueing grows to about 1.6 ms. Nothing is dropped.
  const topo::Topology topology = star(65);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 32 << 20;
  const std::vector<Flow> flows = incast(64, 256 << 10);
  PacketOptions fixed = options;
  fixed.spec.transport.rto = 20 * kPsPerUs; // under the gaps between a message's ACKs
  const PacketTiming storm = run_traffic(topology, 65, 1, flows, fixed);
  PacketOptions estimated = options;
  estimated.spec.transport.rto_min = 20 * kPsPerUs; // the same floor, initial rto 1 ms
  const PacketTiming t = run_traffic(topology, 65, 1, flows, estimated);
  REQUIRE(storm.complete);
  REQUIRE(t.complete);
  // A fixed timer under the gaps resends what is only queued, until the copies overflow even
  // this buffer.
  CHECK(storm.retransmissions > 1000);
  CHECK(storm.retransmissions > storm.drops);
  CHECK(t.drops == 0);
  CHECK(t.retransmissions == 0);
  CHECK(t.time <= storm.time);
}

TEST_CASE("an estimated timer recovers a real loss no sooner than its floor") {
  // As "without NACKs (spraying) lost packets come back after the timeout" (incast_test.cpp):
  // a sprayed incast into a 64 KiB buffer drops, and only the sender's timer resends.
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.load_balancing = LoadBalancing::spray_round_robin;
  options.spec.transport.rto_min = 200 * kPsPerUs;
  options.spec.transport.rto = 200 * kPsPerUs;
  const std::vector<Flow> flows = incast(4, 1 << 20);
  const PacketTiming t = run_traffic(topology, 5, 1, flows, options);
  REQUIRE(t.complete);
  CHECK(t.drops > 0);
  CHECK(t.retransmissions >= t.drops);
  PacketOptions big = options;
  big.spec.switch_spec.buffer_bytes = 16 << 20;
  const Picoseconds lossless = run_traffic(topology, 5, 1, flows, big).time;
  CHECK(t.time >= lossless + options.spec.transport.rto_min / 2);
  PacketOptions higher = options;
  higher.spec.transport.rto_min = 400 * kPsPerUs;
  higher.spec.transport.rto = 400 * kPsPerUs;
  CHECK(run_traffic(topology, 5, 1, flows, higher).time > t.time);
}

} // namespace
} // namespace ddlsim::sim::packet::test
