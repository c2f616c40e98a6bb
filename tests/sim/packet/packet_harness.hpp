// Small clusters and helpers for the packet engine's tests.
#pragma once

#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/builders.hpp"

#include "../uniform_star.hpp"

#include <string>

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

// Rank 0 sends `bytes` to rank 1.
inline coll::CollectiveCall point_to_point(std::uint64_t bytes) {
  coll::CollectiveCall call = make_call(coll::Op::send_recv, "direct", 2, bytes);
  call.root = 1;
  return call;
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
