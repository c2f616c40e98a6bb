// Compute slowed by the communication kernels beside it (AnalyticOptions::compute_slowdown,
// sim/compute_slowdown.hpp) on the analytic engine, on the schedules of compute_overlap.hpp.
// Times are worked out by hand from the measured curve
// (tests/data/gpu-overlap/h200-overlap.tsv).
#include "compute_overlap.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/compute_slowdown.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

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
  AnalyticOptions options;
  options.compute_slowdown = slowdown;
  options.record_steps = true;
  Run result{{}, simulate_analytic(topology, router, schedule, options)};
  for (const StepRecord& r : result.timing.steps_recorded)
    if (r.rank == 0 && r.channel == 0 && r.kind == StepKind::compute) result.compute = r;
  return result;
}

Picoseconds compute_time(const Run& r) {
  return r.compute.end - r.compute.start;
}

} // namespace

TEST_CASE("compute slowdown: the curve is the measured GEMM table by SM share, monotone") {
  CHECK(compute_slowdown(0, 132) == 1.0);
  CHECK(compute_slowdown(8, 132) == Approx(kS8));
  CHECK(compute_slowdown(16, 132) == Approx(kS16));
  CHECK(compute_slowdown(32, 132) == Approx(kS32));
  CHECK(compute_slowdown(64, 132) == Approx(kS64));
  CHECK(compute_slowdown(100, 132) == Approx(kS64)); // held past the last measured share
  CHECK(compute_slowdown(16, 0) == 1.0);             // a GPU without an SM figure
  // By share: 8 blocks on 80 SMs (a V100) take a larger share than on 132.
  CHECK(compute_slowdown(8, 80) > compute_slowdown(8, 132));
  double last = 1.0;
  for (int k = 1; k <= 132; ++k) {
    const double s = compute_slowdown(k, 132);
    CHECK(s >= last);
    last = s;
  }
}

TEST_CASE("compute slowdown: compute beside k blocks for its whole life takes s(k) times as "
          "long") {
  const std::vector<std::pair<double, double>> cases{{8, kS8}, {16, kS16}, {32, kS32}, {64, kS64}};
  Picoseconds last = kCompute;
  for (const auto& [blocks, s] : cases) {
    const Run r = run(overlap(1, blocks, kLongBytes));
    CHECK(r.compute.start == 0);
    CHECK(compute_time(r) == std::llround(static_cast<double>(kCompute) * s));
    CHECK(compute_time(r) > last); // monotone in k
    last = compute_time(r);
  }
  // The blocks of a rank's programs add up: 16 channels of one block each are 16 blocks.
  CHECK(compute_time(run(overlap(16, 1, kLongBytes))) ==
        compute_time(run(overlap(1, 16, kLongBytes))));
}

TEST_CASE("compute slowdown: memory-bound kernels follow the measured elementwise curve") {
  CHECK(compute_slowdown(8, 132, 1) == Approx(kM8));
  CHECK(compute_slowdown(16, 132, 1) == Approx(kM16));
  CHECK(compute_slowdown(32, 132, 1) == Approx(kM32));
  CHECK(compute_slowdown(64, 132, 1) == Approx(kM64));
  CHECK(compute_slowdown(100, 132, 1) == Approx(kM64)); // held past the last measured share
  CHECK(compute_slowdown(16, 0, 1) == 1.0);
  // Share 0 is the GEMM curve exactly; a mix is the time-weighted mean of the two.
  CHECK(compute_slowdown(16, 132, 0) == compute_slowdown(16, 132));
  CHECK(compute_slowdown(16, 132, 0.25) == Approx(0.75 * kS16 + 0.25 * kM16));
  for (int k = 1; k <= 132; ++k) {
    CHECK(compute_slowdown(k, 132, 1) >= 1.0);
    CHECK(compute_slowdown(k, 132, 1) < compute_slowdown(k, 132, 0.5));
    CHECK(compute_slowdown(k, 132, 0.5) < compute_slowdown(k, 132, 0));
  }
}

TEST_CASE("compute slowdown: a memory-bound step beside k blocks is slowed by the elementwise "
          "curve only") {
  const std::vector<std::pair<double, double>> cases{{8, kM8}, {16, kM16}, {32, kM32}, {64, kM64}};
  for (const auto& [blocks, s] : cases) {
    const Run all_memory = run(overlap(1, blocks, kLongBytes, 0, 1.0));
    CHECK(compute_time(all_memory) == std::llround(static_cast<double>(kCompute) * s));
    // A pure GEMM step is slowed as before; a step 40% memory-bound by the mix.
    const Run gemm = run(overlap(1, blocks, kLongBytes, 0, 0.0));
    CHECK(compute_time(gemm) == compute_time(run(overlap(1, blocks, kLongBytes))));
    const Run mixed = run(overlap(1, blocks, kLongBytes, 0, 0.4));
    CHECK(static_cast<double>(compute_time(mixed)) ==
          Approx(static_cast<double>(kCompute) * (0.6 * compute_slowdown(blocks, 132) + 0.4 * s))
              .margin(2));
    CHECK(compute_time(all_memory) < compute_time(mixed));
    CHECK(compute_time(mixed) < compute_time(gemm));
  }
  // Partial overlap (communication from 4 us on): 4 us at full rate, 6 us at 1/kM16.
  CHECK(compute_time(run(overlap(1, 16, kLongBytes, 4'000'000, 1.0))) ==
        4'000'000 + std::llround(6'000'000 * kM16));
}

TEST_CASE("compute slowdown: compute with no communication beside it is unchanged") {
  CHECK(compute_time(run(overlap(0, 16, kLongBytes))) == kCompute);
  // Off (the default), or on a GPU without an SM figure: today's times.
  CHECK(compute_time(run(overlap(1, 16, kLongBytes), false)) == kCompute);
  CHECK(compute_time(run(overlap(1, 16, kLongBytes), true, "B200")) == kCompute);
  // Blocks of 0 (copy-engine transfers) slow nothing.
  CHECK(compute_time(run(overlap(1, 0, kLongBytes))) == kCompute);
  // The communication itself is timed as before.
  CHECK(run(overlap(1, 16, kLongBytes)).timing.time ==
        run(overlap(1, 16, kLongBytes), false).timing.time);
}

TEST_CASE("compute slowdown: partial overlap gives the piecewise time") {
  // Communication from 4 us on (a 4 us launch step first): 4 us at full rate, the other 6 us of
  // work at 1/s16.
  const Run late = run(overlap(1, 16, kLongBytes, 4'000'000));
  CHECK(compute_time(late) == 4'000'000 + std::llround(6'000'000 * kS16));
  // Communication ending at 3 us (1 us of latency, 20 kB at 100 ps a byte): 3 us at 1/s16, then
  // the rest at full rate.
  const Run early = run(overlap(1, 16, 20'000));
  const double done_by_then = 3'000'000 / kS16;
  CHECK(compute_time(early) ==
        3'000'000 + std::llround(static_cast<double>(kCompute) - done_by_then));
  CHECK(compute_time(early) > kCompute);
  CHECK(compute_time(early) < std::llround(kCompute * kS16));
}

TEST_CASE("compute slowdown: the same schedule gives the same steps and times") {
  const Run a = run(overlap(4, 8, 300'000, 2'000'000));
  const Run b = run(overlap(4, 8, 300'000, 2'000'000));
  REQUIRE(a.timing.steps_recorded.size() == b.timing.steps_recorded.size());
  for (std::size_t i = 0; i < a.timing.steps_recorded.size(); ++i) {
    CHECK(a.timing.steps_recorded[i].start == b.timing.steps_recorded[i].start);
    CHECK(a.timing.steps_recorded[i].end == b.timing.steps_recorded[i].end);
  }
  CHECK(a.timing.time == b.timing.time);
}
