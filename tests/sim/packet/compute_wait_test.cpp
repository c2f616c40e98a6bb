// Compute steps and cross-program waits in the packet engine: a compute step takes exactly its
// duration (no per-step overhead), a wait delays a step until the awaited step of another channel
// of the same rank completes, and programs without waits overlap.
#include "../two_streams.hpp"
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

constexpr std::uint64_t kBytes = 1 << 20;
constexpr Picoseconds kOverhead = 123;

// The two-stream schedule (two_streams.hpp) on star(2).
Picoseconds two_streams(bool send_waits) {
  const coll::Schedule schedule = sim::test::two_streams_schedule(send_waits, kBytes);
  const topo::Topology topology = star(2);
  topo::Router router(topology);
  PacketOptions options = star_options();
  options.per_step_overhead = kOverhead;
  const PacketTiming timing = simulate_packet(topology, router, schedule, options);
  REQUIRE(timing.complete);
  return timing.time;
}

// The message's time on star(2): 256 full packets, the last one serialized twice.
const Picoseconds kTransfer = kOverhead + 257 * star_serialization(4096 + 64) + 2 * kLinkLatency;

TEST_CASE("a wait serializes compute and transfer exactly") {
  CHECK(two_streams(true) == 1'000'000 + kTransfer + 2'000'000);
}

TEST_CASE("without the wait the transfer overlaps the compute") {
  CHECK(two_streams(false) == kTransfer + 2'000'000);
  CHECK(two_streams(false) < two_streams(true));
}

} // namespace
} // namespace ddlsim::sim::packet::test
