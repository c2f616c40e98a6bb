// Compute slowed by the communication kernels beside it on the flow engine
// (FlowOptions::compute_slowdown), on the analytic engine's test schedules
// (compute_overlap.hpp): the same times as there, worked out by hand from the measured curve
// (tests/data/gpu-overlap/h200-overlap.tsv), to a few picoseconds under CM02 alpha-beta (SimGrid
// keeps time in seconds as doubles).
#include "../compute_overlap.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

struct Run {
  StepRecord compute; // rank 0's compute step on channel 0
  CollectiveTiming timing;
};

Run run(const Schedule& schedule, bool slowdown = true, const std::string& gpu = "H200") {
  const topo::Topology topology = pair_of(gpu);
  topo::Router router(topology);
  flow::FlowOptions options;
  options.model.network_model = flow::NetworkModel::cm02;
  options.model.crosstraffic = false;
  options.model.tcp_gamma_bytes = 1e12;
  options.compute_slowdown = slowdown;
  options.record_steps = true;
  Run result{{}, flow::simulate_flow(topology, router, schedule, options)};
  REQUIRE(result.timing.complete);
  for (const StepRecord& r : result.timing.steps_recorded)
    if (r.rank == 0 && r.channel == 0 && r.kind == StepKind::compute) result.compute = r;
  return result;
}

double compute_time(const Run& r) {
  return static_cast<double>(r.compute.end - r.compute.start);
}

constexpr double kPicoseconds = 3; // SimGrid's clock is seconds in a double

} // namespace

TEST_CASE("flow compute slowdown: compute beside k blocks for its whole life takes s(k) times "
          "as long") {
  const std::vector<std::pair<double, double>> cases{{8, kS8}, {16, kS16}, {32, kS32}, {64, kS64}};
  double last = kCompute;
  for (const auto& [blocks, s] : cases) {
    const Run r = run(overlap(1, blocks, kLongBytes));
    CHECK(r.compute.start == 0);
    CHECK(std::abs(compute_time(r) - static_cast<double>(kCompute) * s) <= kPicoseconds);
    CHECK(compute_time(r) > last); // monotone in k
    last = compute_time(r);
  }
  // The blocks of a rank's programs add up: 16 channels of one block each are 16 blocks.
  CHECK(std::abs(compute_time(run(overlap(16, 1, kLongBytes))) -
                 compute_time(run(overlap(1, 16, kLongBytes)))) <= kPicoseconds);
}

TEST_CASE("flow compute slowdown: compute with no communication beside it is unchanged") {
  CHECK(std::abs(compute_time(run(overlap(0, 16, kLongBytes))) - kCompute) <= kPicoseconds);
  CHECK(std::abs(compute_time(run(overlap(1, 16, kLongBytes), false)) - kCompute) <= kPicoseconds);
  CHECK(std::abs(compute_time(run(overlap(1, 16, kLongBytes), true, "B200")) - kCompute) <=
        kPicoseconds);
  CHECK(std::abs(compute_time(run(overlap(1, 0, kLongBytes))) - kCompute) <= kPicoseconds);
  // The communication itself is timed as before.
  CHECK(run(overlap(1, 16, kLongBytes)).timing.time ==
        run(overlap(1, 16, kLongBytes), false).timing.time);
}

TEST_CASE("flow compute slowdown: partial overlap gives the piecewise time") {
  // Communication from 4 us on: 4 us at full rate, the other 6 us of work at 1/s16.
  const Run late = run(overlap(1, 16, kLongBytes, 4'000'000));
  CHECK(std::abs(compute_time(late) - (4e6 + 6e6 * kS16)) <= kPicoseconds);
  // Communication ending at 3 us (1 us of latency, 20 kB at 100 ps a byte, exact under CM02):
  // 3 us at 1/s16, then the rest at full rate: the compute step ends earlier than its slowed
  // end, which the flow engine learns only when the send completes.
  const Run early = run(overlap(1, 16, 20'000));
  CHECK(std::abs(compute_time(early) - (3e6 + static_cast<double>(kCompute) - 3e6 / kS16)) <=
        kPicoseconds);
  // 4 channels of 8 blocks each from 2 us on (their sends share rank 0's link for 121 us):
  // 2 us at full rate, the other 8 us of work at 1/s32.
  const Run busy = run(overlap(4, 8, 300'000, 2'000'000));
  CHECK(std::abs(compute_time(busy) - (2e6 + 8e6 * kS32)) <= kPicoseconds);
}

TEST_CASE("flow compute slowdown: the same compute times as the analytic engine, and the same "
          "answer twice") {
  for (const Schedule& schedule :
       {overlap(1, 16, 20'000), overlap(4, 8, 300'000, 2'000'000), overlap(2, 24, 50'000, 500'000),
        overlap(1, 16, 20'000, 0, 1.0), overlap(4, 8, 300'000, 2'000'000, 0.3)}) {
    const topo::Topology topology = pair_of("H200");
    topo::Router router(topology);
    AnalyticOptions options;
    options.compute_slowdown = true;
    options.record_steps = true;
    const CollectiveTiming analytic = simulate_analytic(topology, router, schedule, options);
    const Run flow = run(schedule);
    for (const StepRecord& r : analytic.steps_recorded)
      if (r.rank == 0 && r.channel == 0 && r.kind == StepKind::compute)
        CHECK(std::abs(compute_time(flow) - static_cast<double>(r.end - r.start)) <= kPicoseconds);
  }
  const Run a = run(overlap(4, 8, 300'000, 2'000'000));
  const Run b = run(overlap(4, 8, 300'000, 2'000'000));
  REQUIRE(a.timing.steps_recorded.size() == b.timing.steps_recorded.size());
  for (std::size_t i = 0; i < a.timing.steps_recorded.size(); ++i) {
    CHECK(a.timing.steps_recorded[i].start == b.timing.steps_recorded[i].start);
    CHECK(a.timing.steps_recorded[i].end == b.timing.steps_recorded[i].end);
  }
  CHECK(a.timing.time == b.timing.time);
}
