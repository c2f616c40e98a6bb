// Same scenario and seed: the same result to the picosecond and byte; another seed: other
// ECMP choices.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

std::vector<std::uint64_t> link_bytes(const PacketTiming& t) {
  std::vector<std::uint64_t> bytes;
  for (const LinkStats& s : t.links) {
    bytes.push_back(s.link);
    bytes.push_back(s.bytes);
    bytes.push_back(s.peak_queue_bytes);
    bytes.push_back(s.drops);
  }
  return bytes;
}

PacketTiming ring_on_fat_tree(std::uint64_t seed, LoadBalancing balancing) {
  const topo::Topology topology = fat_tree(4, 16, 100);
  PacketOptions options;
  options.seed = seed;
  options.spec.load_balancing = balancing;
  options.spec.switch_spec.buffer_bytes = 64 << 10; // some drops, so recovery is exercised too
  options.record_steps = true;
  coll::CollectiveCall call = make_call(coll::Op::all_reduce, "ring", 16, 4 << 20);
  call.params.channels = 2;
  return run_packet(topology, call, options);
}

TEST_CASE("the same seed gives the same result and another seed other ECMP paths") {
  for (const LoadBalancing balancing : {LoadBalancing::ecmp, LoadBalancing::spray_random}) {
    INFO("load balancing " << to_string(balancing));
    const PacketTiming a = ring_on_fat_tree(7, balancing);
    const PacketTiming b = ring_on_fat_tree(7, balancing);
    REQUIRE(a.complete);
    CHECK(a.time == b.time);
    CHECK(a.events == b.events);
    CHECK(a.drops == b.drops);
    CHECK(a.retransmissions == b.retransmissions);
    CHECK(a.reordered == b.reordered);
    CHECK(link_bytes(a) == link_bytes(b));
    REQUIRE(a.steps_recorded.size() == b.steps_recorded.size());
    for (std::size_t i = 0; i < a.steps_recorded.size(); ++i)
      CHECK(a.steps_recorded[i].end == b.steps_recorded[i].end);
    const PacketTiming c = ring_on_fat_tree(8, balancing);
    CHECK(link_bytes(a) != link_bytes(c));
  }
}

} // namespace
} // namespace ddlsim::sim::packet::test
