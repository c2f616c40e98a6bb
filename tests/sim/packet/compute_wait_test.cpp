// Compute steps and cross-program waits in the packet engine: a compute step takes exactly its
// duration (no per-step overhead), a wait delays a step until the awaited step of another channel
// of the same rank completes, and programs without waits overlap.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

using coll::Step;
using coll::StepKind;

Step compute(double picoseconds) {
  Step step;
  step.kind = StepKind::compute;
  step.param = picoseconds;
  return step;
}
Step transfer(StepKind kind, int peer, std::uint64_t bytes) {
  Step step;
  step.kind = kind;
  step.peer = peer;
  step.channel = 1;
  step.bytes = bytes;
  (kind == StepKind::send ? step.src : step.dst) = coll::BufferRange{
      kind == StepKind::send ? coll::Buffer::input : coll::Buffer::output, 0, bytes};
  return step;
}
Step waiting(Step step, std::uint16_t channel, std::uint32_t index) {
  step.wait_channel = channel;
  step.wait_step = index;
  return step;
}

constexpr std::uint64_t kBytes = 1 << 20;
constexpr Picoseconds kOverhead = 123;

// Rank 0 computes 1 us on channel 0 and sends kBytes to rank 1 on channel 1; rank 1 computes
// 2 us on channel 0 after the receive. `send_waits` makes the send wait for rank 0's compute.
Picoseconds two_streams(bool send_waits) {
  coll::MaterializedSchedule m;
  m.call = point_to_point(kBytes);
  m.call.algorithm = "hand_made";
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  Step send = transfer(StepKind::send, 1, kBytes);
  if (send_waits) send = waiting(send, 0, 0);
  m.programs = {{{compute(1e6)}, {send}},
                {{waiting(compute(2e6), 1, 0)}, {transfer(StepKind::recv, 0, kBytes)}}};
  const coll::Schedule schedule = coll::Schedule::from_materialized(std::move(m));
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
