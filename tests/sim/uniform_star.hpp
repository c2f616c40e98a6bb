// The uniform one-switch cluster on which the analytic engine must reproduce the textbook
// alpha-beta-gamma costs. Link figures make every term a whole number of picoseconds, so
// "exactly" can mean 1e-9 relative.
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"
#include "make_call.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

namespace ddlsim::sim::test {

inline constexpr double kLinkBytesPerSecond = 1e10;   // beta = 100 ps per byte per link
inline constexpr Picoseconds kLinkLatency = 500'000;  // 0.5 us per link; alpha = 2 links = 1 us
inline constexpr double kReduceBytesPerSecond = 2e10; // gamma = 50 ps per byte
inline constexpr double kAlpha = 2.0 * kLinkLatency;
inline constexpr double kBeta = 1e12 / kLinkBytesPerSecond;
inline constexpr double kGamma = 1e12 / kReduceBytesPerSecond;

// Adds GPU `r` ("node<r>/gpu0", a V100) alone in its node, with a duplex NIC link to `to`. Every
// hand-made test topology of the engines is built from these.
inline topo::VertexId add_gpu_node(topo::Topology& t, int r, topo::VertexId to,
                                   double bytes_per_second, Picoseconds latency) {
  const topo::VertexId gpu =
      t.add_vertex({topo::VertexKind::gpu, "node" + std::to_string(r) + "/gpu0", r, 0, -1});
  t.add_duplex_link(gpu, to, bytes_per_second, latency, topo::LinkClass::nic);
  topo::Node node;
  node.preset = "test";
  node.gpu_model = "V100";
  node.gpus = {gpu};
  t.add_node(node);
  return gpu;
}

// p GPUs, each alone in its node, all on one switch.
inline topo::Topology star(int p, double bytes_per_second = kLinkBytesPerSecond,
                           Picoseconds latency = kLinkLatency) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < p; ++r) add_gpu_node(t, r, hub, bytes_per_second, latency);
  return t;
}

// Simulated time of `call` on star(ranks), in picoseconds.
inline double simulate(const coll::CollectiveCall& call) {
  const coll::Schedule schedule = coll::Schedule::make(call);
  const topo::Topology topology = star(schedule.ranks());
  topo::Router router(topology);
  AnalyticOptions options;
  options.reduce_bytes_per_second = kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300; // closed forms leave local copies out
  return static_cast<double>(simulate_analytic(topology, router, schedule, options).time);
}

inline coll::CollectiveCall make_call(coll::Op op, const std::string& algorithm, int p,
                                      std::uint64_t bytes) {
  return ddlsim::test_support::make_call_bytes(op, algorithm, p, bytes);
}

inline void check_equal(double simulated, double closed_form) {
  INFO("simulated " << simulated << " ps, closed form " << closed_form << " ps");
  CHECK(std::abs(simulated - closed_form) <= 1e-9 * closed_form);
}

} // namespace ddlsim::sim::test
