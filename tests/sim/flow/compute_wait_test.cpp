// The flow engine on compute steps (SimGrid executions of the given duration) and cross-program
// waits: the same timings as the analytic engine, to the picosecond under CM02 alpha-beta.
#include "../uniform_star.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;

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
Schedule two_streams(bool send_waits) {
  MaterializedSchedule m;
  m.call = test::make_call(Op::send_recv, "hand_made", 2, kBytes);
  m.call.root = 1;
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  Step send = transfer(StepKind::send, 1, kBytes);
  if (send_waits) send = waiting(send, 0, 0);
  m.programs = {{{compute(1e6)}, {send}},
                {{waiting(compute(2e6), 1, 0)}, {transfer(StepKind::recv, 0, kBytes)}}};
  return Schedule::from_materialized(std::move(m));
}

Picoseconds flow_time(bool send_waits) {
  const topo::Topology topology = test::star(2);
  topo::Router router(topology);
  flow::FlowOptions options;
  options.model.network_model = flow::NetworkModel::cm02;
  options.model.crosstraffic = false;
  options.model.tcp_gamma_bytes = 1e12;
  options.per_step_overhead = 123; // not charged on compute steps
  const CollectiveTiming timing =
      flow::simulate_flow(topology, router, two_streams(send_waits), options);
  REQUIRE(timing.complete);
  return timing.time;
}

} // namespace

TEST_CASE("flow compute and wait: a wait serializes compute and transfer exactly") {
  const double transfer = 123 + test::kAlpha + kBytes * test::kBeta;
  const Picoseconds waited = flow_time(true);
  CHECK(std::abs(static_cast<double>(waited) - (1e6 + transfer + 2e6)) <= 2);
  // Without the wait the transfer overlaps rank 0's compute.
  const Picoseconds free = flow_time(false);
  INFO("free " << free << " waited " << waited << " transfer " << transfer);
  CHECK(std::abs(static_cast<double>(free) - (transfer + 2e6)) <= 2);
  CHECK(free < waited);
}
