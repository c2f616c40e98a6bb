// The flow engine on compute steps (SimGrid executions of the given duration) and cross-program
// waits: the same timings as the analytic engine, to the picosecond under CM02 alpha-beta.
#include "../two_streams.hpp"
#include "../uniform_star.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;

namespace {

constexpr std::uint64_t kBytes = 1 << 20;

Picoseconds flow_time(bool send_waits) {
  const topo::Topology topology = test::star(2);
  topo::Router router(topology);
  flow::FlowOptions options;
  options.model.network_model = flow::NetworkModel::cm02;
  options.model.crosstraffic = false;
  options.model.tcp_gamma_bytes = 1e12;
  options.per_step_overhead = 123; // not charged on compute steps
  const CollectiveTiming timing = flow::simulate_flow(
      topology, router, test::two_streams_schedule(send_waits, kBytes), options);
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
