// Uncongested traffic on one switch: the packet engine's time is the analytic time plus the
// store-and-forward and header terms, computed here by hand.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

TEST_CASE("point-to-point on one switch equals the store-and-forward time exactly") {
  const std::uint64_t mtu = 4096, header = 64;
  for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{1000000}}) {
    INFO("bytes " << bytes);
    const topo::Topology topology = star(2);
    const PacketTiming t = run_packet(topology, point_to_point(bytes), star_options());
    REQUIRE(t.complete);
    const std::uint64_t packets = (bytes + mtu - 1) / mtu;
    const std::uint64_t last = bytes - (packets - 1) * mtu;
    // The first link streams every packet back to back; the second forwards each one once it has
    // arrived whole, so the last packet is serialized twice, and a short last packet also waits
    // for the full one ahead of it on the second link.
    const Picoseconds full = star_serialization(mtu + header);
    const Picoseconds tail = star_serialization(last + header);
    const Picoseconds expected = static_cast<Picoseconds>(packets - 1) * full + tail +
                                 std::max(full, tail) + 2 * kLinkLatency;
    CHECK(t.time == expected);
    // The same, read as analytic time + header bytes + one store-and-forward of the last packet.
    const double analytic = 2.0 * kLinkLatency + static_cast<double>(bytes) * 100.0;
    const double by_hand = analytic + static_cast<double>(packets * header) * 100.0 +
                           static_cast<double>(mtu + header) * 100.0;
    CHECK(std::abs(static_cast<double>(t.time) - by_hand) <= 0.005 * by_hand);
    CHECK(t.data_packets == packets);
    CHECK(t.control_packets == packets); // one ACK per data packet
    CHECK(t.drops == 0);
    CHECK(t.retransmissions == 0);
    CHECK(t.reordered == 0);
  }
}

TEST_CASE("ring all-reduce on one switch is the closed form plus header, ACK and "
          "store-and-forward terms within 0.5%") {
  for (const int p : {4, 8}) {
    const std::uint64_t bytes = 8u << 20;
    INFO("ranks " << p);
    const topo::Topology topology = star(p);
    const PacketTiming t =
        run_packet(topology, make_call(coll::Op::all_reduce, "ring", p, bytes), star_options());
    REQUIRE(t.complete);
    const double n = static_cast<double>(bytes), chunk = n / p;
    const double packets = std::ceil(chunk / 4096);
    const double beta = 100, gamma = 50, alpha = 2.0 * kLinkLatency;
    const double closed =
        2 * (p - 1) * alpha + 2 * n * (p - 1) / p * beta + n * (p - 1) / p * gamma;
    // Per step: every data packet carries a 64-byte header, every rank's uplink also carries one
    // 64-byte ACK per packet it received, and the last packet is serialized twice.
    const double per_step = (packets * (64 + 64) + (4096 + 64)) * beta;
    const double by_hand = closed + 2 * (p - 1) * per_step;
    INFO("packet " << t.time << " ps, by hand " << by_hand << " ps, closed form " << closed);
    CHECK(std::abs(static_cast<double>(t.time) - by_hand) <= 0.005 * by_hand);
    CHECK(static_cast<double>(t.time) > closed);
    CHECK(t.drops == 0);
  }
}

TEST_CASE("time responds to message size and bandwidth") {
  const topo::Topology topology = star(2);
  const auto time_of = [&](std::uint64_t bytes) {
    return run_packet(topology, point_to_point(bytes), star_options()).time;
  };
  CHECK(time_of(2 << 20) > time_of(1 << 20));
  CHECK(time_of(1 << 20) > time_of(4096));
  CHECK(time_of(4096) > time_of(8));
  CHECK(time_of(8) > 2 * kLinkLatency); // a tiny packet still pays its header twice
}

} // namespace
} // namespace ddlsim::sim::packet::test
