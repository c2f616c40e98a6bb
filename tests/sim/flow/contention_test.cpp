// Contention: two all-reduces whose traffic crosses one oversubscribed spine link take longer
// than one alone, by what max-min fair sharing predicts, and the analytic engine (max-min by
// progressive filling) agrees. The two all-reduces are two disjoint rank groups of one
// schedule: each group's programs are a 2-rank ring all-reduce, the second's peers renumbered.
#include "../uniform_star.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

constexpr double kNicBytesPerSecond = 1e10;
constexpr double kSpineBytesPerSecond = 5e9; // half a NIC: the spine is the bottleneck
constexpr Picoseconds kLinkLatency = 500'000;
constexpr std::uint64_t kBytes = 1 << 20;

// Two leaves under one spine; rank r sits on leaf r % 2, so every rank's ring peer is across the
// spine.
topo::Topology two_leaves(int ranks) {
  topo::Topology t;
  const topo::VertexId leaf0 = t.add_vertex({topo::VertexKind::network_switch, "leaf0", -1, 0, 0});
  const topo::VertexId leaf1 = t.add_vertex({topo::VertexKind::network_switch, "leaf1", -1, 1, 0});
  const topo::VertexId spine = t.add_vertex({topo::VertexKind::network_switch, "spine", -1, 0, 1});
  t.add_duplex_link(leaf0, spine, kSpineBytesPerSecond, kLinkLatency, topo::LinkClass::fabric);
  t.add_duplex_link(leaf1, spine, kSpineBytesPerSecond, kLinkLatency, topo::LinkClass::fabric);
  for (int r = 0; r < ranks; ++r)
    test::add_gpu_node(t, r, r % 2 == 0 ? leaf0 : leaf1, kNicBytesPerSecond, kLinkLatency);
  return t;
}

// `groups` independent 2-rank ring all-reduces of kBytes, as one schedule.
coll::Schedule all_reduces(int groups) {
  coll::CollectiveCall pair;
  pair.ranks = 2;
  pair.bytes = kBytes;
  const coll::MaterializedSchedule one = coll::materialize(coll::Schedule::make(pair));
  coll::MaterializedSchedule all = one;
  all.call.ranks = 2 * groups;
  all.ranks = 2 * groups;
  all.programs.clear();
  all.scratch_bytes.clear();
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < 2; ++r) {
      auto programs = one.programs[static_cast<std::size_t>(r)];
      for (auto& program : programs)
        for (coll::Step& step : program)
          if (step.peer >= 0) step.peer += 2 * g;
      all.programs.push_back(std::move(programs));
      all.scratch_bytes.push_back(one.scratch_bytes[static_cast<std::size_t>(r)]);
    }
  return coll::Schedule::from_materialized(std::move(all));
}

flow::FlowOptions alpha_beta() {
  flow::FlowOptions options;
  options.model.network_model = flow::NetworkModel::cm02;
  options.model.crosstraffic = false;
  options.model.tcp_gamma_bytes = 1e12;
  options.reduce_bytes_per_second = 1e300;
  options.copy_bytes_per_second = 1e300;
  return options;
}

double flow_time(int groups, const flow::FlowOptions& options) {
  const topo::Topology topology = two_leaves(2 * groups);
  topo::Router router(topology);
  return static_cast<double>(
      flow::simulate_flow(topology, router, all_reduces(groups), options).time);
}

double analytic_time(int groups) {
  const topo::Topology topology = two_leaves(2 * groups);
  topo::Router router(topology);
  AnalyticOptions options;
  options.reduce_bytes_per_second = 1e300;
  options.copy_bytes_per_second = 1e300;
  return static_cast<double>(
      simulate_analytic(topology, router, all_reduces(groups), options).time);
}

} // namespace

TEST_CASE("flow: two all-reduces across an oversubscribed spine slow down as max-min predicts") {
  const double alone = flow_time(1, alpha_beta());
  const double shared = flow_time(2, alpha_beta());
  // A 2-rank ring all-reduce moves kBytes / 2 each way twice (reduce-scatter, all-gather), in
  // both directions at once; every flow's bottleneck is its spine link. Alone a flow gets the
  // whole spine link, shared it gets half, so the two transfer phases take 2 x (kBytes / 2) /
  // (spine / 2) instead of 2 x (kBytes / 2) / spine: kBytes / spine longer.
  const double predicted_delay = static_cast<double>(kBytes) / kSpineBytesPerSecond * 1e12;
  INFO("alone " << alone << " ps, shared " << shared << " ps");
  CHECK(shared > alone);
  CHECK(std::abs((shared - alone) - predicted_delay) <= 1e-6 * predicted_delay);
  // Alone: 4 link latencies per transfer, two transfers, each at the spine's rate.
  CHECK(std::abs(alone - (2 * (4.0 * kLinkLatency + kBytes / 2.0 / kSpineBytesPerSecond * 1e12))) <=
        1e-6 * alone);
  CHECK(std::abs(shared - analytic_time(2)) <= 1e-6 * shared);
  CHECK(std::abs(alone - analytic_time(1)) <= 1e-6 * alone);
}

TEST_CASE("flow: LV08 slows the shared spine down too") {
  flow::FlowOptions lv08;
  lv08.reduce_bytes_per_second = 1e300;
  lv08.copy_bytes_per_second = 1e300;
  const double alone = flow_time(1, lv08);
  const double shared = flow_time(2, lv08);
  // Same sharing as CM02 (equal routes, so RTT weighting changes nothing), with the bandwidth
  // factor and the acks of the reverse flows: each spine direction carries two flows' data and
  // two flows' acks.
  const double predicted_delay =
      static_cast<double>(kBytes) / (kSpineBytesPerSecond * 0.97 / 1.05) * 1e12;
  INFO("alone " << alone << " ps, shared " << shared << " ps");
  CHECK(std::abs((shared - alone) - predicted_delay) <= 0.02 * predicted_delay);
}

TEST_CASE("flow: the report counts the flows that shared a link") {
  for (int groups : {1, 2}) {
    const topo::Topology topology = two_leaves(2 * groups);
    topo::Router router(topology);
    const CollectiveTiming timing =
        flow::simulate_flow(topology, router, all_reduces(groups), alpha_beta());
    INFO(groups << " all-reduces");
    // Each spine direction carries one flow per all-reduce.
    CHECK(timing.peak_flows_per_link == static_cast<std::size_t>(groups));
  }
}
