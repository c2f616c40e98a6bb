// A port has at most one tx_done event pending, and none that does nothing: two flows into one
// switch port, whose times follow from the port draining back to back (computed by hand).
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

TEST_CASE("two flows into one port: the port drains back to back, one tx_done per packet") {
  // Ranks 1 and 2 each send P full packets to rank 0 of a star. Their packets reach the switch
  // together, one of each every full-packet time, while its port towards rank 0 sends one per
  // packet time: the port is busy from the first arrival (L + full) on, for 2P packets, and the
  // last one reaches rank 0 a link latency later. The flow whose packets queue first ends a
  // packet earlier. Each of these instants has an arrival and the port's tx_done at once: the
  // engine must not leave a second tx_done behind at such an instant.
  const std::uint64_t mtu = 4096, header = 64, packets = 256;
  const topo::Topology topology = star(3);
  PacketOptions options = star_options();
  options.record_steps = true;
  options.spec.switch_spec.buffer_bytes = 16 << 20; // no drops
  const PacketTiming t =
      run_traffic(topology, 3, 1, {{1, 0, packets * mtu, 0}, {2, 0, packets * mtu, 0}}, options);
  REQUIRE(t.complete);
  REQUIRE(t.drops == 0);
  const Picoseconds full = star_serialization(mtu + header);
  const auto p = static_cast<Picoseconds>(packets);
  const Picoseconds first = std::min(receive_end(t, 0, 1), receive_end(t, 0, 2));
  const Picoseconds last = std::max(receive_end(t, 0, 1), receive_end(t, 0, 2));
  CHECK(last == 2 * kLinkLatency + (2 * p + 1) * full);
  CHECK(first == 2 * kLinkLatency + 2 * p * full);
  CHECK(t.time == last);
  // A port transmits each packet once per hop (two hops on a star); a tx_done follows at most
  // one transmission, so the events are bounded by the transmissions, not growing with the
  // instants at which an arrival and a tx_done coincide.
  const std::uint64_t transmissions = 2 * (t.data_packets + t.control_packets + t.retransmissions);
  CHECK(t.tx_done_events <= transmissions);
  // The only tx_done that starts nothing is each sender's after its last packet: its message
  // leaves the GPU's round robin only then.
  CHECK(t.idle_tx_done_events <= 2);
}

} // namespace
} // namespace ddlsim::sim::packet::test
