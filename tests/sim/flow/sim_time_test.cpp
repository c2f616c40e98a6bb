// The flow engine (SimGrid, in its child process) stops with an InputError when simulated time
// would leave the range int64 picoseconds can count (sim_time.hpp): SimGrid's double clock goes
// on, but the times it reports are checked as they become picoseconds.
#include "../uniform_star.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim;

TEST_CASE("flow sim time: absurdly slow links are an InputError, not a wrapped time") {
  const coll::Schedule schedule =
      coll::Schedule::make(test::make_call(coll::Op::all_reduce, "ring", 4, 1 << 20));
  for (const double gbps : {1e-9, 1e-11}) {
    CAPTURE(gbps);
    const topo::Topology topology = test::star(4, gbps_to_bytes_per_second(gbps));
    topo::Router router(topology);
    flow::FlowOptions options;
    options.reduce_bytes_per_second = test::kReduceBytesPerSecond;
    options.copy_bytes_per_second = 1e300;
    CHECK_THROWS_WITH(flow::simulate_flow(topology, router, schedule, options),
                      Catch::Contains("simulated time"));
  }
}
