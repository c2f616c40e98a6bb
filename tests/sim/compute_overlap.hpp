// The hand-made schedules every engine's compute-slowdown test runs: rank 0 computes on channel
// 0 while its channels 1..c send to rank 1, each holding its call's thread blocks on rank 0's GPU
// while its send is in flight; two GPUs of a given model, each alone in its node, on one switch.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/topologies/topology.hpp"
#include "step_builders.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::sim::test {

constexpr double kLink = 1e10;                  // bytes/s: 100 ps per byte
constexpr Picoseconds kLatency = 500'000;       // per link: 1 us between the two GPUs
constexpr Picoseconds kCompute = 10'000'000;    // 10 us of compute on rank 0
constexpr std::uint64_t kLongBytes = 1'000'000; // 100 us on the wire: outlasts the compute

// The H200's curve points (132 SMs), as sim/compute_slowdown.hpp averages the measured rows.
constexpr double kS8 = (1.148 + 1.135 + 1.223 + 1.129) / 4.0;
constexpr double kS16 = (1.224 + 1.243 + 1.215 + 1.235) / 4.0;
constexpr double kS32 = (1.328 + 1.372 + 1.328 + 1.346) / 4.0;
constexpr double kS64 = (1.859 + 1.932 + 1.854 + 1.930) / 4.0;
// The memory-bound curve's: the elementwise kernel beside copying blocks.
constexpr double kM8 = 1.010;
constexpr double kM16 = 1.022;
constexpr double kM32 = 1.055;
constexpr double kM64 = 1.114;

// Two GPUs of model `gpu`, each alone in its node, on one switch.
inline topo::Topology pair_of(const std::string& gpu) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < 2; ++r) {
    const topo::VertexId v =
        t.add_vertex({topo::VertexKind::gpu, "node" + std::to_string(r) + "/gpu0", r, 0, -1});
    t.add_duplex_link(v, hub, kLink, kLatency, topo::LinkClass::nic);
    topo::Node node;
    node.preset = "test";
    node.gpu_model = gpu;
    node.gpus = {v};
    t.add_node(node);
  }
  return t;
}

// Rank 0 computes kCompute on channel 0, `memory_bound_share` of it in memory-bound kernels;
// each of its channels 1..busy waits `delay` (a compute step there: a launch cost, never slowed
// and holding no blocks), then sends `bytes` to rank 1, its call holding `blocks` thread blocks
// per program.
inline coll::Schedule overlap(int busy, double blocks, std::uint64_t bytes, Picoseconds delay = 0,
                              double memory_bound_share = 0) {
  using namespace coll;
  MaterializedSchedule m;
  m.call.op = Op::all_to_all;
  m.call.ranks = 2;
  m.call.bytes = bytes;
  m.call.algorithm = "hand_made";
  m.call.protocol.blocks_per_program = blocks;
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = busy + 1;
  m.scratch_bytes = {0, 0};
  m.programs.resize(2);
  m.programs[0].push_back({test_support::compute_step(kCompute)});
  m.programs[0][0][0].memory_bound_share = memory_bound_share;
  m.programs[1].push_back({});
  for (int c = 1; c <= busy; ++c) {
    std::vector<Step> sends;
    if (delay > 0) sends.push_back(test_support::compute_step(delay));
    sends.push_back(test_support::transfer_step(StepKind::send, 1, bytes));
    if (delay > 0) {
      sends.back().deps[0] = 0;
      sends.back().dep_count = 1;
    }
    for (Step& s : sends) s.channel = static_cast<std::uint16_t>(c);
    m.programs[0].push_back(sends);
    Step recv = test_support::transfer_step(StepKind::recv, 0, bytes);
    recv.channel = static_cast<std::uint16_t>(c);
    m.programs[1].push_back({recv});
  }
  return Schedule::from_materialized(std::move(m));
}

} // namespace ddlsim::sim::test
