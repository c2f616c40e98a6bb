// A call's protocol in the packet engine: the wire bytes make the packets, the hop latency waits
// with the per-step overhead before the first packet, and a recv_reduce in flight reduces from
// the first packet's arrival on.
#include "../protocol_cases.hpp"
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

namespace ddlsim::sim::packet::test {
namespace {

TEST_CASE("packet: LL doubles the packets of a transfer and its hop latency comes first") {
  const std::uint64_t mtu = 4096, header = 64, bytes = 1 << 20;
  coll::CollectiveCall call = point_to_point(bytes);
  call.protocol = sim::test::ll();
  call.protocol.inter_hop_ps = 1'500'000;
  call.protocol.intra_hop_ps = 99'000'000; // a GPU per node: never charged here
  const PacketTiming t = run_packet(star(2), call, star_options());
  REQUIRE(t.complete);
  const std::uint64_t wire = 2 * bytes;
  const std::uint64_t packets = wire / mtu;
  // As the uncongested point-to-point (uncongested_test.cpp), of the wire bytes, after the hop:
  // the hop covers the path's latency (max(hop, path)), so it waits what the hop adds to it.
  const Picoseconds full = star_serialization(mtu + header);
  const Picoseconds expected = static_cast<Picoseconds>(packets) * full + full +
                               std::max<Picoseconds>(2 * kLinkLatency, 1'500'000);
  CHECK(t.time == expected);
  CHECK(t.data_packets == packets);
  CHECK(t.bytes_sent == bytes); // the payload: what the schedule moved
}

TEST_CASE("packet: LL128 puts 128 wire bytes on the wire per 120 of payload") {
  const std::uint64_t bytes = 120 * 4096; // 120 packets of payload, 128 of wire bytes
  coll::CollectiveCall call = point_to_point(bytes);
  const PacketTiming simple = run_packet(star(2), call, star_options());
  call.protocol = sim::test::ll128();
  const PacketTiming ll128 = run_packet(star(2), call, star_options());
  CHECK(simple.data_packets == 120);
  CHECK(ll128.data_packets == 128);
  CHECK(ll128.time > simple.time);
}

TEST_CASE("packet: the reduction in flight hides a fast reduction and never slows a slow one") {
  const int p = 4;
  const std::uint64_t bytes = 8u << 20;
  const double n = static_cast<double>(bytes);
  for (const double reduce : {kReduceBytesPerSecond, kLinkBytesPerSecond / 4}) {
    INFO("reduce " << reduce << " B/s");
    PacketOptions options = star_options();
    options.reduce_bytes_per_second = reduce;
    coll::CollectiveCall call = make_call(coll::Op::all_reduce, "ring", p, bytes);
    const PacketTiming after = run_packet(star(p), call, options);
    call.protocol.reduce_in_flight = true;
    const PacketTiming overlapped = run_packet(star(p), call, options);
    REQUIRE(after.complete);
    REQUIRE(overlapped.complete);
    CHECK(overlapped.time < after.time);
    if (reduce == kReduceBytesPerSecond) {
      // Faster than the link: the (p - 1) reductions of n / p bytes vanish.
      const double gamma_term = n * (p - 1) / p * (1e12 / reduce);
      const double saved = static_cast<double>(after.time - overlapped.time);
      CHECK(std::abs(saved - gamma_term) <= 0.01 * gamma_term);
    }
  }
}

} // namespace
} // namespace ddlsim::sim::packet::test
