// Incast: several senders to one receiver through one switch port.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

// The switch port towards rank 0 of star(): the reverse of rank 0's uplink (link 0).
constexpr topo::LinkId kDownlinkToRank0 = 1;

TEST_CASE("incast with enough buffer queues at the receiver's port and drops nothing") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 16 << 20;
  const std::uint64_t bytes = 1 << 20;
  const PacketTiming t = run_traffic(topology, 5, 1, incast(4, bytes), options);
  REQUIRE(t.complete);
  CHECK(t.drops == 0);
  CHECK(t.retransmissions == 0);
  const LinkStats down = link_stats(t, kDownlinkToRank0);
  // Four senders at line rate into one port: it drains 1/4 of what arrives, so the queue grows
  // to about 3/4 of all data.
  CHECK(down.peak_queue_bytes > 2 * bytes);
  CHECK(down.utilisation > 0.95);
  // The port's serialization of all the data bounds the time from below.
  CHECK(static_cast<double>(t.time) > 4.0 * bytes * 100);
}

TEST_CASE("incast with a small buffer tail-drops and recovers by retransmission") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.transport.rto = 50 * kPsPerUs;
  const std::uint64_t bytes = 1 << 20;
  const PacketTiming t = run_traffic(topology, 5, 1, incast(4, bytes), options);
  REQUIRE(t.complete);
  CHECK(t.drops > 0);
  CHECK(t.retransmissions > 0);
  CHECK(t.retransmissions >= t.drops); // every dropped packet was sent again (some twice)
  CHECK(link_stats(t, kDownlinkToRank0).peak_queue_bytes <= (64 << 10));
  PacketOptions big = options;
  big.spec.switch_spec.buffer_bytes = 16 << 20;
  // NACKs resend a lost packet while the port is still busy with others, so the port can stay
  // busy throughout; losses never make the incast faster.
  CHECK(t.time >= run_traffic(topology, 5, 1, incast(4, bytes), big).time);
}

TEST_CASE("without NACKs (spraying) lost packets come back after the timeout") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.load_balancing = LoadBalancing::spray_round_robin; // reordering: no gap NACKs
  options.spec.transport.rto = 200 * kPsPerUs;
  const std::uint64_t bytes = 1 << 20;
  const PacketTiming t = run_traffic(topology, 5, 1, incast(4, bytes), options);
  REQUIRE(t.complete);
  CHECK(t.drops > 0);
  CHECK(t.retransmissions >= t.drops);
  PacketOptions big = options;
  big.spec.switch_spec.buffer_bytes = 16 << 20;
  const Picoseconds lossless = run_traffic(topology, 5, 1, incast(4, bytes), big).time;
  CHECK(t.time >= lossless + options.spec.transport.rto / 2);
  // A longer timeout recovers later.
  PacketOptions slow = options;
  slow.spec.transport.rto = 400 * kPsPerUs;
  CHECK(run_traffic(topology, 5, 1, incast(4, bytes), slow).time > t.time);
}

TEST_CASE("incast with PFC pauses the senders and drops nothing") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.switch_spec.pfc.enabled = true;
  const PacketTiming t = run_traffic(topology, 5, 1, incast(4, 1 << 20), options);
  REQUIRE(t.complete);
  CHECK(t.drops == 0);
  CHECK(t.retransmissions == 0);
  CHECK(t.pfc_pauses > 0);
  CHECK(t.pfc_pauses_by_priority[0] == t.pfc_pauses);
  CHECK(t.headroom_drops == 0);
  // Each of the four ingress links holds at most xoff (a quarter of the buffer) + headroom
  // (2 x 5,000 bytes in flight on a 0.5 us, 10 GB/s link + 2 packets + a pause frame).
  const std::uint64_t per_ingress = (16 << 10) + 10'000 + 2 * 4160 + 64;
  CHECK(link_stats(t, kDownlinkToRank0).peak_queue_bytes <= 4 * per_ingress);
  CHECK(link_stats(t, kDownlinkToRank0).peak_queue_bytes > (16 << 10));
  // Lossless and work-conserving: the port is busy from the first packet to the last.
  CHECK(link_stats(t, kDownlinkToRank0).utilisation > 0.95);
}

TEST_CASE("an unreliable transport that loses a packet is an input error") {
  const topo::Topology topology = star(5);
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.transport.reliable = false;
  CHECK_THROWS_WITH(run_traffic(topology, 5, 1, incast(4, 1 << 20), options),
                    Catch::Contains("/engine/transport/reliable"));
}

} // namespace
} // namespace ddlsim::sim::packet::test
