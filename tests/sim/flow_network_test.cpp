// Max-min fair sharing in the fluid model, checked against rates computed by hand.
#include "ddlsim/sim/flow_network.hpp"
#include "line_topology.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

// Runs the network from `from` until every flow finishes; returns finish time per tag.
std::map<std::uint64_t, Picoseconds> finish_times(FlowNetwork& network, Picoseconds from = 0) {
  std::map<std::uint64_t, Picoseconds> times;
  std::vector<std::uint64_t> finished;
  network.update_rates(from);
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

// FlowNetwork takes a flow that is alone on every link of its path straight to the bottleneck
// rate, without the component search; these two check that shortcut against the shared case.
TEST_CASE("a flow alone, then sharing, then alone again moves at the max-min rate throughout") {
  // Link 0 (2 GB/s) and link 2 (1 GB/s). a: 3 MB over both from 0, alone at 1 GB/s; b: 1 MB on
  // link 2 from 1 ms, when a has 2 MB left. They share link 2 at 0.5 GB/s until b ends at 3 ms;
  // a's last 1 MB is alone again at 1 GB/s, so a ends at 4 ms.
  const topo::Topology t = line({2e9, 1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> a{0, 2}, b{2};
  network.start(a, 3e6, 1, 0);
  network.update_rates(0);
  CHECK(network.next_completion() == 3'000'000'000);
  network.start(b, 1e6, 2, 1'000'000'000);
  network.update_rates(1'000'000'000);
  std::map<std::uint64_t, Picoseconds> times;
  std::vector<std::uint64_t> finished;
  while (network.active_flows() > 0) {
    const Picoseconds now = network.next_completion();
    finished.clear();
    network.collect_finished(now, finished);
    for (auto tag : finished) times[tag] = now;
    network.update_rates(now);
  }
  CHECK(times.at(2) == 3'000'000'000);
  CHECK(times.at(1) == 4'000'000'000);
}

TEST_CASE("a flow alone on its first link but sharing a later one is not taken for alone") {
  // c crosses links 0 and 2, d only link 2 (1 GB/s): c is alone on link 0 (2 GB/s) but shares
  // link 2, so both move at 0.5 GB/s and their 1 MB each take 2 ms, not 1 ms.
  const topo::Topology t = line({2e9, 1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> c{0, 2}, d{2};
  network.start(c, 1e6, 1, 0);
  network.start(d, 1e6, 2, 0);
  const auto times = finish_times(network);
  CHECK(times.at(1) == 2'000'000'000);
  CHECK(times.at(2) == 2'000'000'000);
}

// A component made of the same paths as one filled before takes its rates from the first fill
// (FlowNetwork::reuse_known_rates); each flow must get the rate of its own path.
TEST_CASE("a component of the same paths as an earlier one gets each path its max-min rate") {
  // As in "progressive filling gives the max-min fair rates": a = b = 0.5 GB/s, c = 1.5 GB/s,
  // all done at 1 ms. Then the same three paths again from 1 ms, with 0.5, 1 and 3 MB: a ends at
  // 2 ms; b (0.5 MB left) and c (1.5 MB left) then get 1 GB/s each (b is alone on link 0), b ends
  // at 2.5 ms, and c's last 1 MB alone at 2 GB/s ends at 3 ms.
  const topo::Topology t = line({1e9, 2e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> a{0}, b{0, 2}, c{2};
  network.start(a, 0.5e6, 1, 0);
  network.start(b, 0.5e6, 2, 0);
  network.start(c, 1.5e6, 3, 0);
  const auto first = finish_times(network);
  REQUIRE(first.at(3) == 1'000'000'000);
  network.start(a, 0.5e6, 4, 1'000'000'000);
  network.start(b, 1e6, 5, 1'000'000'000);
  network.start(c, 3e6, 6, 1'000'000'000);
  const auto second = finish_times(network, 1'000'000'000);
  CHECK(second.at(4) == 2'000'000'000);
  CHECK(second.at(5) == 2'500'000'000);
  CHECK(second.at(6) == 3'000'000'000);
}

TEST_CASE("a path whose links change at the same address gets the rates of its new links") {
  // Two flows of 1 MB on link 0 (1 GB/s) share it: 0.5 GB/s each, both done at 2 ms. Then the
  // same vector, at the same address, holds link 2 (4 GB/s): two flows of 1 MB get 2 GB/s each
  // and end 0.5 ms later. A component is known by its paths' links, never by their addresses.
  const topo::Topology t = line({1e9, 4e9});
  FlowNetwork network(t);
  std::vector<topo::LinkId> path{0};
  network.start(path, 1e6, 1, 0);
  network.start(path, 1e6, 2, 0);
  const auto first = finish_times(network);
  REQUIRE(first.at(2) == 2'000'000'000);
  path.front() = 2;
  network.start(path, 1e6, 3, 2'000'000'000);
  network.start(path, 1e6, 4, 2'000'000'000);
  const auto second = finish_times(network, 2'000'000'000);
  CHECK(second.at(3) == 2'500'000'000);
  CHECK(second.at(4) == 2'500'000'000);
}
