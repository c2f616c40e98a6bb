// Priority by gradient magnitude: a message's top share is exactly ceil(fraction x packets) of
// its packets, taken where the magnitude profile over the receiver's buffer is highest, and at
// random among packets at one scale.
#include "magnitude_profile.hpp"
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

#include <set>

namespace ddlsim::sim::packet::test {
namespace {

std::size_t below(const std::vector<std::uint32_t>& seqs, std::uint32_t limit) {
  std::size_t n = 0;
  for (const std::uint32_t s : seqs) n += s < limit ? 1 : 0;
  return n;
}

TEST_CASE("by_magnitude: the top share lies where the magnitude profile is highest") {
  // The profile splits the buffer (read from its end, as by_layer) into two halves with
  // gradients 10x larger in the second, the buffer's front. A message covering the whole buffer
  // from its front (from 1 to 0) puts its first 50 packets there.
  const std::vector<double> profile = {1, 10};
  const std::vector<std::uint32_t> top = top_packets(profile, 0.2, 100, 1.0, 0.0, 7);
  CHECK(top.size() == 20);
  CHECK(below(top, 50) == 20);
  CHECK(std::set<std::uint32_t>(top.begin(), top.end()).size() == 20);
  // The same message laid the other way (from 0 to 1) has its large gradients at the back.
  CHECK(below(top_packets(profile, 0.2, 100, 0.0, 1.0, 7), 50) == 0);
  // A share larger than the large-gradient half takes all of it, then the rest at random.
  const std::vector<std::uint32_t> most = top_packets(profile, 0.7, 100, 1.0, 0.0, 7);
  CHECK(most.size() == 70);
  CHECK(below(most, 50) == 50);
  // A message lying inside one share of the profile has one scale: like a flat profile.
  const std::vector<std::uint32_t> inside = top_packets(profile, 0.2, 100, 0.4, 0.1, 7);
  CHECK(inside == top_packets({}, 0.2, 100, 0.4, 0.1, 7));
}

TEST_CASE("by_magnitude: with one scale the top share is exact, random and seeded per message") {
  // ceil(0.2 x 101) = 21: every message keeps at least its share, a one-packet message all.
  const std::vector<std::uint32_t> a = top_packets({}, 0.2, 101, 1.0, 0.0, 1);
  CHECK(a.size() == 21);
  CHECK(top_packets({}, 0.2, 1, 1.0, 0.0, 1).size() == 1);
  // Spread over the message, not its front: both halves hold some of a 1000-packet message's
  // 100 top packets (binomial around 50, far from 0).
  const std::vector<std::uint32_t> big = top_packets({}, 0.1, 1000, 1.0, 0.0, 1);
  CHECK(below(big, 500) > 25);
  CHECK(below(big, 500) < 75);
  CHECK(top_packets({}, 0.2, 101, 1.0, 0.0, 1) == a);
  CHECK(top_packets({}, 0.2, 101, 1.0, 0.0, 2) != a);
}

TEST_CASE("by_magnitude: the engine sends exactly the top share of each message as class 0") {
  const topo::Topology topology = star(2);
  PacketOptions options = star_options();
  options.spec.switch_spec.priorities = 2;
  options.spec.transport.priority_rule = TransportSpec::PriorityRule::by_magnitude;
  options.spec.transport.magnitude_top_fraction = 0.2;
  const std::vector<Flow> flows = {{1, 0, 1 << 20, 0}}; // 256 packets
  const PacketTiming flat = run_traffic(topology, 2, 1, flows, options);
  REQUIRE(flat.complete);
  CHECK(flat.drops == 0);
  CHECK(flat.data_packets_by_priority[0] == 52); // ceil(0.2 x 256)
  CHECK(flat.data_packets_by_priority[1] == 204);
  options.spec.transport.magnitude_profile = {1, 3, 10};
  const PacketTiming profiled = run_traffic(topology, 2, 1, flows, options);
  REQUIRE(profiled.complete);
  CHECK(profiled.data_packets_by_priority[0] == 52);
}

} // namespace
} // namespace ddlsim::sim::packet::test
