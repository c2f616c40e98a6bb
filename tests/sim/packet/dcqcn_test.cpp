// DCQCN-style rate control: CNPs from the receivers of ECN-marked packets cut the senders'
// paced rates, which keeps an incast queue bounded without drops and shares the port fairly.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

constexpr topo::LinkId kDownlinkToRank0 = 1;

PacketOptions incast_options(CongestionControl control) {
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = 2 << 20;
  options.spec.switch_spec.ecn_threshold_bytes = 64 << 10;
  options.spec.transport.congestion_control = control;
  options.record_steps = true;
  return options;
}

// How far apart the receives from senders 1..n to rank 0 ended, as a share of the last end.
double end_spread(const PacketTiming& t, int senders) {
  Picoseconds first = std::numeric_limits<Picoseconds>::max(), last = 0;
  for (int s = 1; s <= senders; ++s) {
    const Picoseconds end = receive_end(t, 0, s);
    first = std::min(first, end);
    last = std::max(last, end);
  }
  return static_cast<double>(last - first) / static_cast<double>(last);
}

TEST_CASE("DCQCN keeps an incast queue bounded, drops nothing, and shares the port") {
  // Four senders at line rate (80 Gb/s) to one receiver, 8 MiB each, 2 MiB of buffer.
  const topo::Topology topology = star(5);
  const std::uint64_t bytes = 8 << 20;
  const PacketTiming none =
      run_traffic(topology, 5, 1, incast(4, bytes), incast_options(CongestionControl::none));
  REQUIRE(none.complete);
  CHECK(none.drops > 0); // the queue grows by 3/4 of everything sent
  CHECK(none.cnps == 0);

  const PacketTiming dcqcn =
      run_traffic(topology, 5, 1, incast(4, bytes), incast_options(CongestionControl::dcqcn));
  REQUIRE(dcqcn.complete);
  CHECK(dcqcn.drops == 0);
  CHECK(dcqcn.retransmissions == 0);
  CHECK(dcqcn.cnps > 0);
  CHECK(dcqcn.rate_cuts == dcqcn.cnps);
  // CNPs are rate limited to one per flow per 50 us.
  CHECK(static_cast<double>(dcqcn.cnps) <= 4.0 * static_cast<double>(dcqcn.time) / 50e6 + 4);
  const LinkStats down = link_stats(dcqcn, kDownlinkToRank0);
  CHECK(down.peak_queue_bytes < (1 << 20));
  // Fair share: the four equal flows finish within 1% of each other.
  CHECK(end_spread(dcqcn, 4) < 0.01);
  // The paper's defaults react once per 50 us while alpha is near 1, so the rates over-cut
  // (the queue is marked while it drains) and then climb back by 40 Mb/s per 55 us: the port is
  // busy well under half the time on this short incast.
  CHECK(down.utilisation > 0.35);
  CHECK(down.utilisation < 0.45);
}

TEST_CASE("faster DCQCN recovery keeps the port busier") {
  const topo::Topology topology = star(5);
  const std::uint64_t bytes = 8 << 20;
  const PacketTiming paper =
      run_traffic(topology, 5, 1, incast(4, bytes), incast_options(CongestionControl::dcqcn));
  PacketOptions fast = incast_options(CongestionControl::dcqcn);
  fast.spec.transport.dcqcn.additive_bytes_per_second = 1e9 / 8; // R_AI 1 Gb/s
  fast.spec.transport.dcqcn.hyper_bytes_per_second = 10e9 / 8;   // R_HAI 10 Gb/s
  fast.spec.transport.dcqcn.byte_counter = 1 << 20;
  const PacketTiming quick = run_traffic(topology, 5, 1, incast(4, bytes), fast);
  REQUIRE(quick.complete);
  CHECK(quick.drops == 0);
  CHECK(quick.time < paper.time);
  CHECK(link_stats(quick, kDownlinkToRank0).utilisation > 0.75);
  CHECK(quick.cnps > paper.cnps); // climbing back into the threshold more often
  CHECK(end_spread(quick, 4) < 0.01);
}

TEST_CASE("DCQCN rates converge: a late flow gets its share from one at line rate") {
  // Flow 1 runs alone at line rate; flow 2 joins after 200 us. Fair sharing from then on gives
  // flow 2 half the port: its 4 MiB take about 2 x 4 MiB / line rate.
  const topo::Topology topology = star(3);
  const Picoseconds join = 200 * kPsPerUs;
  const std::vector<Flow> flows = {{1, 0, 16 << 20, 0, 0}, {2, 0, 4 << 20, 0, join}};
  const PacketTiming t =
      run_traffic(topology, 3, 1, flows, incast_options(CongestionControl::dcqcn));
  REQUIRE(t.complete);
  CHECK(t.drops == 0);
  CHECK(t.cnps > 0);
  const double late = static_cast<double>(receive_end(t, 0, 2) - join);
  const double fair = 2.0 * (4 << 20) * 100; // ps at 100 ps per byte, half the port
  CHECK(late > 0.8 * fair);
  CHECK(late < 1.35 * fair);
}

TEST_CASE("without congestion DCQCN never cuts and times equal no control") {
  const topo::Topology topology = star(3);
  const std::vector<Flow> flows = {{1, 0, 1 << 20, 0}, {2, 1, 1 << 20, 0}};
  const PacketTiming none =
      run_traffic(topology, 3, 1, flows, incast_options(CongestionControl::none));
  const PacketTiming dcqcn =
      run_traffic(topology, 3, 1, flows, incast_options(CongestionControl::dcqcn));
  CHECK(dcqcn.cnps == 0);
  CHECK(dcqcn.time == none.time);
}

} // namespace
} // namespace ddlsim::sim::packet::test
