// On one switch with uniform links and no contention the flow engine agrees with the analytic
// engine: exactly alpha-beta under CM02 with crosstraffic off and a large TCP window, and to 1e-4
// (the issue asks 2%) under LV08 once its latency factor (x13.01), bandwidth factor (x0.97) and
// crosstraffic are applied to the analytic engine's links. Crosstraffic: every flow loads its
// reverse route with 5% of its rate (TCP acks); in these schedules each link direction carries
// one flow's data and another flow's acks, so data gets 1 / 1.05 of the link.
#include "../uniform_star.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

constexpr double kLv08LatencyFactor = 13.01;
constexpr double kLv08BandwidthFactor = 0.97;
constexpr double kLv08AckShare = 1.05;

flow::FlowOptions cm02_alpha_beta() {
  flow::FlowOptions options;
  options.model.network_model = flow::NetworkModel::cm02;
  options.model.crosstraffic = false;
  options.model.tcp_gamma_bytes = 1e12;
  options.reduce_bytes_per_second = test::kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300;
  return options;
}

double analytic(const topo::Topology& topology, const coll::CollectiveCall& call) {
  topo::Router router(topology);
  AnalyticOptions options;
  options.reduce_bytes_per_second = test::kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300;
  return static_cast<double>(
      simulate_analytic(topology, router, coll::Schedule::make(call), options).time);
}

double flow_time(const topo::Topology& topology, const coll::CollectiveCall& call,
                 const flow::FlowOptions& options) {
  topo::Router router(topology);
  const CollectiveTiming timing =
      flow::simulate_flow(topology, router, coll::Schedule::make(call), options);
  REQUIRE(timing.complete);
  return static_cast<double>(timing.time);
}

// The star of uniform_star.hpp with every link scaled as LV08 sees it.
topo::Topology lv08_equivalent_star(int p) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < p; ++r)
    test::add_gpu_node(
        t, r, hub, test::kLinkBytesPerSecond * kLv08BandwidthFactor / kLv08AckShare,
        static_cast<Picoseconds>(std::llround(test::kLinkLatency * kLv08LatencyFactor)));
  return t;
}

void check_within(double flow, double expected, double tolerance) {
  INFO("flow " << flow << " ps, expected " << expected << " ps, ratio " << flow / expected);
  CHECK(std::abs(flow - expected) <= tolerance * expected);
}

} // namespace

TEST_CASE("flow CM02 without crosstraffic equals the analytic engine on one switch") {
  for (const char* algorithm : {"ring", "recursive_doubling", "rabenseifner"})
    for (int p : {4, 8}) {
      INFO(algorithm << " on " << p << " ranks");
      const coll::CollectiveCall call =
          test::make_call(coll::Op::all_reduce, algorithm, p, 1024 * 1024);
      const topo::Topology topology = test::star(p);
      check_within(flow_time(topology, call, cm02_alpha_beta()), analytic(topology, call), 1e-6);
    }
}

TEST_CASE("flow LV08 equals the analytic engine on LV08-scaled links") {
  flow::FlowOptions options;
  options.reduce_bytes_per_second = test::kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300;
  for (const char* algorithm : {"ring", "recursive_doubling", "rabenseifner"})
    for (int p : {4, 8}) {
      INFO(algorithm << " on " << p << " ranks");
      const coll::CollectiveCall call =
          test::make_call(coll::Op::all_reduce, algorithm, p, 1024 * 1024);
      check_within(flow_time(test::star(p), call, options), analytic(lv08_equivalent_star(p), call),
                   1e-4);
    }
}

// In a ring on one switch every link carries one flow at a time: a rank's next send starts at
// the instant its previous one ends (symmetry), and the report counts flows over the intervals
// between instants, so the two are never counted together, whatever order SimGrid's actors
// handle that instant in.
TEST_CASE("flow: a ring's successive flows on a link are never counted together") {
  flow::FlowOptions lv08;
  lv08.reduce_bytes_per_second = test::kReduceBytesPerSecond;
  for (const flow::FlowOptions& options : {cm02_alpha_beta(), lv08})
    for (coll::Op op : {coll::Op::all_reduce, coll::Op::all_gather}) {
      const topo::Topology topology = test::star(8);
      topo::Router router(topology);
      const CollectiveTiming timing = flow::simulate_flow(
          topology, router, coll::Schedule::make(test::make_call(op, "ring", 8, 1 << 20)), options);
      INFO(to_string(options.model.network_model) << " " << coll::to_string(op));
      REQUIRE(timing.complete);
      CHECK(timing.peak_flows_per_link == 1);
    }
}
