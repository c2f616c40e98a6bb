// Compute steps and cross-program waits on the host backend: a compute step takes its duration
// without blocking the other channels, and a step that waits for another channel starts only
// after that channel's step completed.
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/host_backend.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;

namespace {

Step make_step(StepKind kind, std::uint16_t channel) {
  Step step;
  step.kind = kind;
  step.channel = channel;
  return step;
}

Step compute(double picoseconds, std::uint16_t channel) {
  Step step = make_step(StepKind::compute, channel);
  step.param = picoseconds;
  return step;
}

Step waiting(Step step, std::uint16_t channel, std::uint32_t index) {
  step.wait_channel = channel;
  step.wait_step = index;
  return step;
}

// Two ranks, two channels: channel 0 computes for `ms`, channel 1 sends rank 0's input to rank 1
// once rank 0's compute is done; rank 1 computes again after the data arrived.
MaterializedSchedule two_streams(double ms) {
  MaterializedSchedule m;
  m.call.op = Op::send_recv;
  m.call.algorithm = "hand_made";
  m.call.ranks = 2;
  m.call.root = 1;
  m.call.bytes = 4000;
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  Step send = make_step(StepKind::send, 1);
  send.peer = 1;
  send.src = {Buffer::input, 0, 4000};
  send.bytes = 4000;
  Step recv = make_step(StepKind::recv, 1);
  recv.peer = 0;
  recv.dst = {Buffer::output, 0, 4000};
  recv.bytes = 4000;
  m.programs = {
      {{compute(ms * 1e9, 0)}, {waiting(send, 0, 0)}},
      {{waiting(compute(ms * 1e9, 0), 1, 0)}, {recv}},
  };
  return m;
}

const real::StepTiming& find(const real::RankOutcome& rank, std::uint16_t channel) {
  for (const auto& step : rank.timeline)
    if (step.channel == channel) return step;
  FAIL("no step on channel " << channel);
  return rank.timeline.front();
}

} // namespace

TEST_CASE("host: a compute step lasts its duration and a cross-channel wait orders the streams") {
  for (real::HostMode mode : {real::HostMode::threads, real::HostMode::processes}) {
    real::HostOptions options;
    options.mode = mode;
    options.iterations = 1;
    const double ms = 30;
    const real::HostRun run = real::run_host(Schedule::from_materialized(two_streams(ms)), options);
    INFO(run.error);
    REQUIRE(run.ok);
    CHECK(run.checked);
    const auto& r0 = run.ranks[0];
    const auto& r1 = run.ranks[1];
    const auto& compute0 = find(r0, 0);
    CHECK(compute0.kind == StepKind::compute);
    CHECK(compute0.end_ns - compute0.start_ns >= std::int64_t(ms * 1e6));
    // The send waited for the compute; rank 1's compute waited for the receive.
    CHECK(find(r0, 1).start_ns >= compute0.end_ns);
    CHECK(find(r1, 0).start_ns >= find(r1, 1).end_ns);
    // Both computes ran one after the other across the ranks: the iteration took both.
    // Each rank times from its own start after the barrier, and on a loaded machine the ranks
    // may leave the barrier milliseconds apart, so the chain of two computes is checked as more
    // than 1.5 x ms: overlapping computes (the bug this guards against) give about 1 x ms.
    CHECK(run.seconds >= 1.5 * ms / 1e3);
  }
}

TEST_CASE("host: a longer compute step makes the iteration longer") {
  real::HostOptions options;
  options.mode = real::HostMode::threads;
  const real::HostRun short_run =
      real::run_host(Schedule::from_materialized(two_streams(5)), options);
  const real::HostRun long_run =
      real::run_host(Schedule::from_materialized(two_streams(40)), options);
  REQUIRE(short_run.ok);
  REQUIRE(long_run.ok);
  CHECK(long_run.seconds > short_run.seconds);
}
