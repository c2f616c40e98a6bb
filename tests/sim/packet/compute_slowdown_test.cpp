// Compute slowed by the communication kernels beside it on the packet engine
// (PacketOptions::compute_slowdown), on the analytic engine's test schedules
// (compute_overlap.hpp): a compute step that communication outlasts takes as long as on the
// analytic engine, whatever its memory-bound share (coll::Step::memory_bound_share), since the
// rule and its bookkeeping are the same.
#include "../compute_overlap.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/compute_slowdown.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

template <class Timing> Picoseconds rank0_compute(const Timing& timing) {
  for (const StepRecord& r : timing.steps_recorded)
    if (r.rank == 0 && r.channel == 0 && r.kind == coll::StepKind::compute) return r.end - r.start;
  return -1;
}

Picoseconds packet_compute(const coll::Schedule& schedule, bool slowdown = true) {
  const topo::Topology topology = pair_of("H200");
  topo::Router router(topology);
  packet::PacketOptions options;
  options.compute_slowdown = slowdown;
  options.record_steps = true;
  const packet::PacketTiming timing = packet::simulate_packet(topology, router, schedule, options);
  REQUIRE(timing.complete);
  return rank0_compute(timing);
}

Picoseconds analytic_compute(const coll::Schedule& schedule) {
  const topo::Topology topology = pair_of("H200");
  topo::Router router(topology);
  AnalyticOptions options;
  options.compute_slowdown = true;
  options.record_steps = true;
  return rank0_compute(simulate_analytic(topology, router, schedule, options));
}

} // namespace

TEST_CASE("packet compute slowdown: GEMM and memory-bound shares as on the analytic engine") {
  for (const double share : {0.0, 0.4, 1.0}) {
    // 16 blocks for the whole compute step (the sends last 100 us).
    const coll::Schedule schedule = overlap(1, 16, kLongBytes, 0, share);
    const Picoseconds packet = packet_compute(schedule);
    CHECK(packet == analytic_compute(schedule));
    CHECK(static_cast<double>(packet) ==
          Approx(static_cast<double>(kCompute) * compute_slowdown(16, 132, share)).margin(2));
  }
  CHECK(packet_compute(overlap(1, 16, kLongBytes, 0, 1.0)) ==
        std::llround(static_cast<double>(kCompute) * kM16));
  CHECK(packet_compute(overlap(1, 16, kLongBytes, 0, 1.0), false) == kCompute);
}
