// The analytic engine on compute steps and cross-program waits: a compute step takes exactly its
// duration, a wait delays a step until the awaited step of another channel completes, and
// programs without waits overlap freely.
#include "uniform_star.hpp"

#include "ddlsim/collectives/schedule.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

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
  (kind == StepKind::send ? step.src : step.dst) =
      BufferRange{kind == StepKind::send ? Buffer::input : Buffer::output, 0, bytes};
  return step;
}
Step waiting(Step step, std::uint16_t channel, std::uint32_t index) {
  step.wait_channel = channel;
  step.wait_step = index;
  return step;
}

constexpr std::uint64_t kBytes = 1 << 20;

// Rank 0 computes 1 us on channel 0 and sends kBytes to rank 1 on channel 1; rank 1 computes
// 2 us on channel 0 after the receive. `send_waits` makes the send wait for rank 0's compute.
Picoseconds simulate_two_streams(bool send_waits) {
  MaterializedSchedule m;
  m.call = make_call(Op::send_recv, "hand_made", 2, kBytes);
  m.call.root = 1;
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  Step send = transfer(StepKind::send, 1, kBytes);
  if (send_waits) send = waiting(send, 0, 0);
  m.programs = {{{compute(1e6)}, {send}},
                {{waiting(compute(2e6), 1, 0)}, {transfer(StepKind::recv, 0, kBytes)}}};
  const Schedule schedule = Schedule::from_materialized(std::move(m));
  const topo::Topology topology = star(2);
  topo::Router router(topology);
  AnalyticOptions options;
  options.per_step_overhead = 123; // not charged on compute steps
  const CollectiveTiming timing = simulate_analytic(topology, router, schedule, options);
  REQUIRE(timing.complete);
  return timing.time;
}

} // namespace

TEST_CASE("analytic compute and wait: a wait serializes compute and transfer exactly") {
  const double transfer = 123 + kAlpha + kBytes * kBeta;
  CHECK(simulate_two_streams(true) == Picoseconds(1e6 + transfer + 2e6));
}

TEST_CASE("analytic compute and wait: without the wait the transfer overlaps the compute") {
  const double transfer = 123 + kAlpha + kBytes * kBeta;
  CHECK(simulate_two_streams(false) == Picoseconds(transfer + 2e6));
  CHECK(simulate_two_streams(false) < simulate_two_streams(true));
}
