// The analytic engine keeps a program's started steps as done bits over a 64-step window, and
// steps done further ahead apart (program_state.hpp). Here a step 70 places ahead of the oldest
// unfinished one completes first, a later step depends on it, and the old steps complete last:
// timing, records and completion must come out as the rules say.
#include "uniform_star.hpp"

#include "ddlsim/collectives/schedule.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

constexpr std::uint64_t kBytes = 10'000; // 1 us on a link
constexpr int kEarlySends = 70;          // more than the 64 steps of the done bits

Step transfer(StepKind kind, int peer) {
  Step step;
  step.kind = kind;
  step.peer = peer;
  step.bytes = kBytes;
  (kind == StepKind::send ? step.src : step.dst) =
      BufferRange{kind == StepKind::send ? Buffer::input : Buffer::output, 0, kBytes};
  return step;
}
Step with_dep(Step step, std::uint32_t dep) {
  step.deps[step.dep_count++] = dep;
  return step;
}
Step compute(double picoseconds) {
  Step step;
  step.kind = StepKind::compute;
  step.param = picoseconds;
  return step;
}

} // namespace

TEST_CASE("analytic engine: a step done 70 places ahead satisfies a dep and retires in order") {
  // Rank 0 starts 70 sends to rank 1 and one to rank 2 at once, then computes 1 us once the send
  // to rank 2 (step 70) is done. Rank 1 computes 5 us before its receives may start.
  MaterializedSchedule m;
  m.call = make_call(Op::send_recv, "hand_made", 3, kBytes);
  m.call.root = 1;
  m.algorithm = "hand_made";
  m.ranks = 3;
  m.channels = 1;
  m.scratch_bytes = {0, 0, kBytes}; // rank 2 has no output: it receives into scratch
  std::vector<Step> rank0(kEarlySends, transfer(StepKind::send, 1));
  rank0.push_back(transfer(StepKind::send, 2));
  rank0.push_back(with_dep(compute(1e6), kEarlySends));
  std::vector<Step> rank1{compute(5e6)};
  for (int i = 0; i < kEarlySends; ++i) rank1.push_back(with_dep(transfer(StepKind::recv, 0), 0));
  Step into_scratch = transfer(StepKind::recv, 0);
  into_scratch.dst.buffer = Buffer::scratch;
  m.programs = {{rank0}, {rank1}, {{into_scratch}}};
  const Schedule schedule = Schedule::from_materialized(std::move(m));
  const topo::Topology topology = star(3);
  topo::Router router(topology);
  AnalyticOptions options;
  options.record_steps = true;
  const CollectiveTiming timing = simulate_analytic(topology, router, schedule, options);
  REQUIRE(timing.complete);
  CHECK(timing.steps == 2 * kEarlySends + 4);
  REQUIRE(timing.steps_recorded.size() == timing.steps);

  const double one_transfer = kAlpha + kBytes * kBeta; // 2 us
  const StepRecord* late_compute = nullptr;
  for (const StepRecord& record : timing.steps_recorded)
    if (record.rank == 0 && record.kind == StepKind::compute) late_compute = &record;
  REQUIRE(late_compute != nullptr);
  CHECK(late_compute->start == Picoseconds(one_transfer));
  CHECK(late_compute->end == Picoseconds(one_transfer + 1e6));
  // The 70 transfers to rank 1 share its link after its compute: 5 us + alpha + 70 x 1 us.
  CHECK(static_cast<double>(timing.time) ==
        Approx(5e6 + kAlpha + kEarlySends * kBytes * kBeta).epsilon(1e-9));
}
