// A call's protocol in the flow engine: with CM02, no crosstraffic and a large TCP window on one
// switch (or inside one node), it charges wire bytes, hop latencies and the reduction in flight
// exactly as the analytic engine does (tests/sim/protocols_test.cpp has the closed forms).
#include "../protocol_cases.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

flow::FlowOptions cm02_alpha_beta(double reduce_bytes_per_second) {
  flow::FlowOptions options;
  options.model.network_model = flow::NetworkModel::cm02;
  options.model.crosstraffic = false;
  options.model.tcp_gamma_bytes = 1e12;
  options.reduce_bytes_per_second = reduce_bytes_per_second;
  options.copy_bytes_per_second = 1e300;
  return options;
}

double analytic(const topo::Topology& topology, const coll::CollectiveCall& call,
                double reduce_bytes_per_second) {
  topo::Router router(topology);
  AnalyticOptions options;
  options.reduce_bytes_per_second = reduce_bytes_per_second;
  options.copy_bytes_per_second = 1e300;
  return static_cast<double>(
      simulate_analytic(topology, router, coll::Schedule::make(call), options).time);
}

double flow_time(const topo::Topology& topology, const coll::CollectiveCall& call,
                 double reduce_bytes_per_second) {
  topo::Router router(topology);
  const CollectiveTiming timing = flow::simulate_flow(topology, router, coll::Schedule::make(call),
                                                      cm02_alpha_beta(reduce_bytes_per_second));
  REQUIRE(timing.complete);
  return static_cast<double>(timing.time);
}

} // namespace

TEST_CASE("flow: protocols cost what they cost in the analytic engine") {
  const int p = 4;
  for (const coll::Protocol& protocol : test::all_protocols())
    for (const bool inside : {false, true})
      // A reduction faster than the link, and one four times slower (the in-flight overlap
      // then shows).
      for (const double reduce : {test::kReduceBytesPerSecond, test::kLinkBytesPerSecond / 4}) {
        const topo::Topology topology = inside ? test::one_node(p) : test::star(p);
        coll::CollectiveCall call = test::make_call(coll::Op::all_reduce, "ring", p, 3840 * 64);
        call.protocol = protocol;
        INFO(protocol.name << (inside ? " inside a node" : " across the network") << ", reduce "
                           << reduce << " B/s");
        const double expected = analytic(topology, call, reduce);
        const double flow = flow_time(topology, call, reduce);
        INFO("flow " << flow << " ps, analytic " << expected << " ps");
        CHECK(std::abs(flow - expected) <= 1e-6 * expected);
      }
}

TEST_CASE("flow: the reduction in flight starts with the bytes, not with the receive") {
  const double reduce = test::kLinkBytesPerSecond / 4;
  coll::Protocol in_flight;
  in_flight.reduce_in_flight = true;
  in_flight.inter_hop_ps = 700'000;
  for (const coll::Protocol& protocol : {coll::Protocol{}, in_flight}) {
    const coll::Schedule schedule = test::late_send_reduce(protocol, 10'000'000);
    const topo::Topology topology = test::star(2);
    topo::Router router(topology);
    AnalyticOptions options;
    options.reduce_bytes_per_second = reduce;
    const double expected =
        static_cast<double>(simulate_analytic(topology, router, schedule, options).time);
    const double flow = static_cast<double>(
        flow::simulate_flow(topology, router, schedule, cm02_alpha_beta(reduce)).time);
    INFO(protocol.name << (protocol.reduce_in_flight ? " in flight" : "") << ": flow " << flow
                       << " ps, analytic " << expected << " ps");
    CHECK(std::abs(flow - expected) <= 1e-6 * expected);
  }
}

TEST_CASE("flow: LL takes longer than Simple and the reduction in flight never longer") {
  const topo::Topology topology = test::star(4);
  coll::CollectiveCall call = test::make_call(coll::Op::all_reduce, "ring", 4, 1 << 20);
  // The test GPUs reduce at twice the link's rate: LL's doubled wire bytes dominate.
  const double simple = flow_time(topology, call, test::kReduceBytesPerSecond);
  call.protocol = test::ll();
  CHECK(flow_time(topology, call, test::kReduceBytesPerSecond) > 1.5 * simple);
  // A reduction four times slower than the link: overlapping it with the transfer helps.
  call.protocol = {};
  const double after = flow_time(topology, call, test::kLinkBytesPerSecond / 4);
  call.protocol.reduce_in_flight = true;
  CHECK(flow_time(topology, call, test::kLinkBytesPerSecond / 4) < after);
}
