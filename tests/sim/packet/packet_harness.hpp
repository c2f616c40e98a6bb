// Small clusters and helpers for the packet engine's tests.
#pragma once

#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/builders.hpp"

#include "../uniform_star.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace ddlsim::sim::packet::test {

using sim::test::kLinkBytesPerSecond;
using sim::test::kLinkLatency;
using sim::test::kReduceBytesPerSecond;
using sim::test::make_call;
using sim::test::star;

// Options for the uniform star: the test GPU rates, 4 KiB payload, 64-byte headers and ACKs.
inline PacketOptions star_options() {
  PacketOptions options;
  options.reduce_bytes_per_second = kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300;
  return options;
}

// Like star(p), with rank r's link at bandwidth[r] bytes/s and latency[r] ps where given.
inline topo::Topology star_with(int p, const std::vector<double>& bandwidth,
                                const std::vector<Picoseconds>& latency) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    sim::test::add_gpu_node(t, r, hub, i < bandwidth.size() ? bandwidth[i] : kLinkBytesPerSecond,
                            i < latency.size() ? latency[i] : kLinkLatency);
  }
  return t;
}

// Rank 0 sends `bytes` to rank 1.
inline coll::CollectiveCall point_to_point(std::uint64_t bytes) {
  coll::CollectiveCall call = make_call(coll::Op::send_recv, "direct", 2, bytes);
  call.root = 1;
  return call;
}

// Point-to-point messages that all start at time zero: traffic patterns (incast, permutation)
// as a Schedule. A send reads the first `bytes` of its rank's input; receive k of a rank writes
// block k of its output. A flow with a start time waits that long (a compute step) first; the
// sender's later steps on that channel wait too.
struct Flow {
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  int channel = 0;
  Picoseconds start = 0;
};

// Incast: ranks 1..senders each send `bytes` to rank 0 on channel 0.
inline std::vector<Flow> incast(int senders, std::uint64_t bytes) {
  std::vector<Flow> flows;
  for (int s = 1; s <= senders; ++s) flows.push_back({s, 0, bytes, 0});
  return flows;
}

inline coll::Schedule traffic(int ranks, int channels, const std::vector<Flow>& flows) {
  std::uint64_t block = 0;
  for (const Flow& f : flows) block = std::max(block, f.bytes);
  block = (block + 3) / 4 * 4;
  coll::MaterializedSchedule m;
  m.call.op = coll::Op::all_to_all;
  m.call.ranks = ranks;
  m.call.bytes = block * static_cast<std::uint64_t>(ranks) * static_cast<std::uint64_t>(ranks);
  m.call.algorithm = "traffic";
  m.algorithm = "traffic";
  m.ranks = ranks;
  m.channels = channels;
  m.scratch_bytes.assign(static_cast<std::size_t>(ranks), 0);
  m.programs.assign(static_cast<std::size_t>(ranks),
                    std::vector<std::vector<coll::Step>>(static_cast<std::size_t>(channels)));
  std::vector<std::uint64_t> received(static_cast<std::size_t>(ranks), 0);
  for (const Flow& f : flows) {
    coll::Step send;
    send.kind = coll::StepKind::send;
    send.channel = static_cast<std::uint16_t>(f.channel);
    send.peer = f.dst;
    send.src = {coll::Buffer::input, 0, f.bytes};
    send.bytes = f.bytes;
    auto& program =
        m.programs[static_cast<std::size_t>(f.src)][static_cast<std::size_t>(f.channel)];
    if (f.start > 0) {
      coll::Step wait;
      wait.kind = coll::StepKind::compute;
      wait.channel = send.channel;
      wait.param = static_cast<double>(f.start);
      program.push_back(wait);
      send.deps[0] = static_cast<std::uint32_t>(program.size() - 1);
      send.dep_count = 1;
    }
    program.push_back(send);
    coll::Step recv;
    recv.kind = coll::StepKind::recv;
    recv.channel = static_cast<std::uint16_t>(f.channel);
    recv.peer = f.src;
    recv.dst = {coll::Buffer::output, received[static_cast<std::size_t>(f.dst)]++ * block, f.bytes};
    recv.bytes = f.bytes;
    m.programs[static_cast<std::size_t>(f.dst)][static_cast<std::size_t>(f.channel)].push_back(
        recv);
  }
  return coll::Schedule::from_materialized(std::move(m));
}

inline PacketTiming run_traffic(const topo::Topology& topology, int ranks, int channels,
                                const std::vector<Flow>& flows, const PacketOptions& options) {
  topo::Router router(topology);
  return simulate_packet(topology, router, traffic(ranks, channels, flows), options);
}

// When the receive of rank `dst` from rank `src` completed (needs options.record_steps).
inline Picoseconds receive_end(const PacketTiming& t, int dst, int src) {
  for (const StepRecord& r : t.steps_recorded)
    if (r.rank == dst && r.peer == src && r.kind == coll::StepKind::recv) return r.end;
  return -1;
}

// The statistics of link `id`, or zeros if it carried nothing.
inline LinkStats link_stats(const PacketTiming& t, topo::LinkId id) {
  for (const LinkStats& s : t.links)
    if (s.link == id) return s;
  return LinkStats{id, 0, 0, 0, 0};
}

inline PacketTiming run_packet(const topo::Topology& topology, const coll::CollectiveCall& call,
                               const PacketOptions& options) {
  topo::Router router(topology);
  return simulate_packet(topology, router, coll::Schedule::make(call), options);
}

// Serialization of `bytes` on a star link, rounded to picoseconds as the engine does.
inline Picoseconds star_serialization(std::uint64_t bytes) {
  return static_cast<Picoseconds>(static_cast<double>(bytes) * (1e12 / kLinkBytesPerSecond) + 0.5);
}

// A k-ary fat tree of single-GPU nodes with one NIC each, all links `gbps`.
inline topo::Topology fat_tree(int k, int nodes, double gbps) {
  topo::ClusterSpec spec;
  topo::NodeSpec node;
  node.gpu_model = "V100";
  node.gpus = 1;
  node.intra = topo::IntraNode::pcie_only;
  node.pcie_switches = 0;
  node.pcie_bytes_per_second = gbps_to_bytes_per_second(4 * gbps);
  node.nics = 1;
  node.nic_bytes_per_second = gbps_to_bytes_per_second(gbps);
  spec.node_groups.push_back({node, nodes});
  spec.fabric.type = topo::FabricType::fat_tree;
  spec.fabric.k = k;
  spec.fabric.link_bytes_per_second = gbps_to_bytes_per_second(gbps);
  return topo::build_topology(spec);
}

} // namespace ddlsim::sim::packet::test
