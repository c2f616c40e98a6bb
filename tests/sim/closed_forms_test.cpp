// On one switch with uniform links the analytic engine must reproduce the textbook alpha-beta-gamma
// costs (Thakur, Rabenseifner & Gropp 2005) exactly. Link figures are chosen so every term is a
// whole number of picoseconds, so "exactly" can mean 1e-9 relative.
#include "ddlsim/sim/analytic_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

constexpr double kLinkBytesPerSecond = 1e10;  // beta = 100 ps per byte per link
constexpr Picoseconds kLinkLatency = 500'000; // 0.5 us per link; alpha = 2 links = 1 us
constexpr double kReduceBytesPerSecond = 2e10; // gamma = 50 ps per byte
constexpr double kAlpha = 2.0 * kLinkLatency;
constexpr double kBeta = 1e12 / kLinkBytesPerSecond;
constexpr double kGamma = 1e12 / kReduceBytesPerSecond;

// p GPUs, each alone in its node, all on one switch.
topo::Topology star(int p) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < p; ++r) {
    const topo::VertexId gpu =
        t.add_vertex({topo::VertexKind::gpu, "node" + std::to_string(r) + "/gpu0", r, 0, -1});
    t.add_duplex_link(gpu, hub, kLinkBytesPerSecond, kLinkLatency, topo::LinkClass::nic);
    topo::Node node;
    node.preset = "test";
    node.gpu_model = "V100";
    node.gpus = {gpu};
    t.add_node(node);
  }
  return t;
}

double simulate(coll::Op op, const std::string& algorithm, int p, std::uint64_t bytes) {
  const topo::Topology topology = star(p);
  topo::Router router(topology);
  coll::CollectiveCall call;
  call.op = op;
  call.ranks = p;
  call.bytes = bytes;
  call.algorithm = algorithm;
  AnalyticOptions options;
  options.reduce_bytes_per_second = kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300;  // closed forms leave local copies out
  return static_cast<double>(
      simulate_analytic(topology, router, coll::Schedule::make(call), options).time);
}

void check_equal(double simulated, double closed_form) {
  INFO("simulated " << simulated << " ps, closed form " << closed_form << " ps");
  CHECK(std::abs(simulated - closed_form) <= 1e-9 * closed_form);
}

} // namespace

TEST_CASE("ring all-reduce: 2(p-1)a + 2n(p-1)/p b + n(p-1)/p g") {
  for (int p : {2, 3, 4, 8, 16}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::all_reduce, "ring", p, static_cast<std::uint64_t>(n)),
                2 * (p - 1) * kAlpha + 2 * n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma);
  }
}

TEST_CASE("recursive doubling all-reduce: log p (a + n b + n g)") {
  for (int p : {2, 4, 8, 16}) {
    const double n = 64 * 1024;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::all_reduce, "recursive_doubling", p, static_cast<std::uint64_t>(n)),
                std::log2(p) * (kAlpha + n * kBeta + n * kGamma));
  }
}

TEST_CASE("Rabenseifner all-reduce: 2 log p a + 2n(p-1)/p b + n(p-1)/p g") {
  for (int p : {2, 4, 8, 16}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::all_reduce, "rabenseifner", p, static_cast<std::uint64_t>(n)),
                2 * std::log2(p) * kAlpha + 2 * n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma);
  }
}

TEST_CASE("ring reduce-scatter and all-gather: (p-1)a + n(p-1)/p b (+ n(p-1)/p g)") {
  for (int p : {2, 5, 8}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::reduce_scatter, "ring", p, static_cast<std::uint64_t>(n)),
                (p - 1) * kAlpha + n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma);
    check_equal(simulate(coll::Op::all_gather, "ring", p, static_cast<std::uint64_t>(n)),
                (p - 1) * kAlpha + n * (p - 1) / p * kBeta);
  }
}

TEST_CASE("binomial broadcast: ceil(log p)(a + n b)") {
  for (int p : {2, 4, 7, 16}) {
    const double n = 256 * 1024;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::broadcast, "binomial", p, static_cast<std::uint64_t>(n)),
                std::ceil(std::log2(p)) * (kAlpha + n * kBeta));
  }
}

TEST_CASE("results respond to inputs: more bytes or less bandwidth take longer") {
  const double small = simulate(coll::Op::all_reduce, "ring", 8, 1 << 20);
  const double large = simulate(coll::Op::all_reduce, "ring", 8, 2 << 20);
  CHECK(large > 1.9 * small);
  CHECK(simulate(coll::Op::all_reduce, "ring", 16, 1 << 20) > small);
}
