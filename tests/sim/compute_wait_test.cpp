// The analytic engine on compute steps and cross-program waits: a compute step takes exactly its
// duration, a wait delays a step until the awaited step of another channel completes, and
// programs without waits overlap freely.
#include "two_streams.hpp"
#include "uniform_star.hpp"

#include "ddlsim/collectives/schedule.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

constexpr std::uint64_t kBytes = 1 << 20;

// The two-stream schedule (two_streams.hpp) on star(2).
Picoseconds simulate_two_streams(bool send_waits) {
  const Schedule schedule = two_streams_schedule(send_waits, kBytes);
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
