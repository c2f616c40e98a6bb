// The packet engine stops with an InputError when simulated time would leave the range int64
// picoseconds can count (sim_time.hpp), instead of wrapping to a small or negative time.
#include "packet_harness.hpp"

#include "ddlsim/core/input_error.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim::packet;

TEST_CASE("packet sim time: absurdly slow links are an InputError, not a wrapped time") {
  const coll::Schedule schedule =
      coll::Schedule::make(test::make_call(coll::Op::all_reduce, "ring", 4, 1 << 20));
  for (const double gbps : {1e-9, 1e-11}) {
    CAPTURE(gbps);
    const topo::Topology topology = test::star(4, gbps_to_bytes_per_second(gbps));
    topo::Router router(topology);
    // Unreliable: with retransmission a 1 ms RTO fires every millisecond of a packet that takes
    // hours to serialise, and the run crawls through timeouts instead of reaching the bound.
    PacketOptions options = test::star_options();
    options.spec.transport.reliable = false;
    CHECK_THROWS_WITH(simulate_packet(topology, router, schedule, options),
                      Catch::Contains("simulated time"));
  }
}
