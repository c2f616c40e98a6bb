// Max-min fair sharing in the fluid model, checked against rates computed by hand.
#include "ddlsim/sim/flow_network.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

// Vertices 0..n-1 on a line; link i joins i and i+1 (ids 2i forward, 2i+1 backward).
topo::Topology line(const std::vector<double>& bandwidths) {
  topo::Topology t;
  for (std::size_t i = 0; i <= bandwidths.size(); ++i)
    t.add_vertex(topo::Vertex{topo::VertexKind::network_switch, "v" + std::to_string(i)});
  for (std::size_t i = 0; i < bandwidths.size(); ++i)
    t.add_duplex_link(static_cast<topo::VertexId>(i), static_cast<topo::VertexId>(i + 1),
                      bandwidths[i], 0, topo::LinkClass::fabric);
  return t;
}

// Runs the network until every flow finishes; returns finish time per tag.
std::map<std::uint64_t, Picoseconds> finish_times(FlowNetwork& network) {
  std::map<std::uint64_t, Picoseconds> times;
  std::vector<std::uint64_t> finished;
  network.update_rates(0);
  while (network.active_flows() > 0) {
    const Picoseconds now = network.next_completion();
    finished.clear();
    network.collect_finished(now, finished);
    for (auto tag : finished) times[tag] = now;
    network.update_rates(now);
  }
  return times;
}

} // namespace

TEST_CASE("one flow moves at the bottleneck bandwidth") {
  const topo::Topology t = line({2e9, 1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> path{0, 2};
  network.start(path, 1e6, 7, 0);
  CHECK(finish_times(network).at(7) == 1'000'000'000); // 1 MB at 1 GB/s = 1 ms
}

TEST_CASE("flows sharing a link split it and the survivor speeds up") {
  const topo::Topology t = line({1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> path{0};
  network.start(path, 1e6, 1, 0);
  network.start(path, 2e6, 2, 0);
  const auto times = finish_times(network);
  CHECK(times.at(1) == 2'000'000'000); // 1 MB at 0.5 GB/s
  CHECK(times.at(2) == 3'000'000'000); // then the last 1 MB alone at 1 GB/s
}

TEST_CASE("progressive filling gives the max-min fair rates") {
  // Link 0 (1 GB/s): flows a, b. Link 1 (2 GB/s): flows b, c.
  // Max-min: a = b = 0.5 GB/s (link 0 saturates first), c = 1.5 GB/s.
  const topo::Topology t = line({1e9, 2e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> a{0}, b{0, 2}, c{2};
  network.start(a, 0.5e6, 1, 0);
  network.start(b, 0.5e6, 2, 0);
  network.start(c, 1.5e6, 3, 0);
  const auto times = finish_times(network);
  CHECK(times.at(1) == 1'000'000'000);
  CHECK(times.at(2) == 1'000'000'000);
  CHECK(times.at(3) == 1'000'000'000);
}

TEST_CASE("a zero-byte flow finishes at once") {
  const topo::Topology t = line({1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> path{0};
  network.start(path, 0, 5, 42);
  std::vector<std::uint64_t> finished;
  network.collect_finished(42, finished);
  CHECK(finished == std::vector<std::uint64_t>{5});
}
