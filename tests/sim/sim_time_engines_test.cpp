// Every evaluation of the analytic engine stops with an InputError when simulated time would
// leave the range int64 picoseconds can count (sim_time.hpp), instead of wrapping to a small or
// negative time: the 1 MiB all-reduce over 1e-11 Gb/s links that reported 26.78 us.
#include "uniform_star.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

AnalyticOptions options(bool dependency_order) {
  AnalyticOptions o;
  o.reduce_bytes_per_second = test::kReduceBytesPerSecond;
  o.copy_bytes_per_second = 1e300;
  o.try_dependency_order = dependency_order;
  return o;
}

CollectiveTiming ring(double gbps, bool dependency_order) {
  const coll::Schedule schedule =
      coll::Schedule::make(test::make_call(coll::Op::all_reduce, "ring", 4, 1 << 20));
  const topo::Topology topology = test::star(4, gbps_to_bytes_per_second(gbps));
  topo::Router router(topology);
  return simulate_analytic(topology, router, schedule, options(dependency_order));
}

} // namespace

TEST_CASE("sim time: absurdly slow links stop both analytic evaluations with an InputError") {
  for (const bool dependency_order : {true, false}) {
    CAPTURE(dependency_order);
    // 1e-9 Gb/s: one 256 KiB chunk takes 24 days, the ring's 6 of them 146 days (> 53).
    CHECK_THROWS_WITH(ring(1e-9, dependency_order), Catch::Contains("simulated time"));
    CHECK_THROWS_AS(ring(1e-11, dependency_order), InputError);
    CHECK_THROWS_AS(ring(1e-15, dependency_order), InputError);
  }
}

TEST_CASE("sim time: a slow but countable ring keeps its alpha-beta time") {
  // 1e-6 Gb/s: 6 chunks of 256 KiB at 125 B/s, 12,583 s in all, well inside the range.
  for (const bool dependency_order : {true, false}) {
    const CollectiveTiming timing = ring(1e-6, dependency_order);
    CHECK(ps_to_seconds(timing.time) == Approx(6.0 * 262144 / 125.0).epsilon(1e-6));
  }
}
