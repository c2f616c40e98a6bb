// The protocols and small clusters the engines' protocol tests share (tests/sim/protocols_test.cpp
// and its flow and packet counterparts).
#pragma once

#include "uniform_star.hpp"

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <string>
#include <vector>

namespace ddlsim::sim::test {

// NCCL's LL: a 4-byte flag after every 4 bytes of data (src/include/device.h, NCCL 2.30).
inline coll::Protocol ll() {
  coll::Protocol protocol;
  protocol.name = "ll";
  protocol.payload_efficiency = 0.5;
  return protocol;
}

// NCCL's LL128: 120 bytes of data per 128-byte line (NCCL_LL128_DATAELEMS, NCCL 2.30).
inline coll::Protocol ll128() {
  coll::Protocol protocol;
  protocol.name = "ll128";
  protocol.payload_efficiency = 120.0 / 128.0;
  return protocol;
}

// Simple, LL and LL128 with hop latencies and the reduction in flight, in every combination the
// engines' agreement tests need.
inline std::vector<coll::Protocol> all_protocols() {
  coll::Protocol hops;
  hops.name = "simple";
  hops.intra_hop_ps = 600'000;
  hops.inter_hop_ps = 2'500'000;
  coll::Protocol ll_hops = ll();
  ll_hops.intra_hop_ps = 300'000;
  ll_hops.inter_hop_ps = 1'200'000;
  coll::Protocol ll128_in_flight = ll128();
  ll128_in_flight.reduce_in_flight = true;
  ll128_in_flight.inter_hop_ps = 1'000'000;
  return {coll::Protocol{}, hops, ll_hops, ll128_in_flight};
}

// p GPUs in one node, each with a link of the uniform star's figures to the node's NVSwitch:
// every transfer stays inside the node (the same alpha and beta as star(p)).
inline topo::Topology one_node(int p) {
  topo::Topology t;
  const topo::VertexId nvswitch =
      t.add_vertex({topo::VertexKind::nvswitch, "node0/nvswitch0", 0, 0, -1});
  topo::Node node;
  node.preset = "test";
  node.gpu_model = "V100";
  for (int r = 0; r < p; ++r) {
    const topo::VertexId gpu =
        t.add_vertex({topo::VertexKind::gpu, "node0/gpu" + std::to_string(r), 0, r, -1});
    t.add_duplex_link(gpu, nvswitch, kLinkBytesPerSecond, kLinkLatency, topo::LinkClass::nvlink);
    node.gpus.push_back(gpu);
  }
  t.add_node(node);
  return t;
}

// Two DGX-A100 servers (NVSwitch inside, eight NICs each) under one switch: a ring over the 16
// GPUs has two network transfers per round and fourteen NVLink ones.
inline topo::Topology two_dgx() {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({*topo::find_node_preset("dgx-a100"), 2});
  spec.fabric.type = topo::FabricType::single_switch;
  return topo::build_topology(spec);
}

// Rank 0 sends `bytes` to rank 1.
inline coll::CollectiveCall point_to_point(std::uint64_t bytes) {
  coll::CollectiveCall call = make_call(coll::Op::send_recv, "direct", 2, bytes);
  call.root = 1;
  return call;
}

// Rank 1 posts a recv_reduce of 4096 B from rank 0 at time zero; rank 0 computes for
// `send_after` ps and only then sends: the bytes start moving once both have started.
inline coll::Schedule late_send_reduce(const coll::Protocol& protocol, Picoseconds send_after) {
  coll::MaterializedSchedule m;
  m.call = make_call(coll::Op::all_reduce, "late_send", 2, 4096);
  m.call.protocol = protocol;
  m.algorithm = "late_send";
  m.ranks = 2;
  m.channels = 1;
  m.scratch_bytes = {0, 0};
  coll::Step compute;
  compute.kind = coll::StepKind::compute;
  compute.param = static_cast<double>(send_after);
  coll::Step send;
  send.kind = coll::StepKind::send;
  send.peer = 1;
  send.src = {coll::Buffer::input, 0, 4096};
  send.bytes = 4096;
  send.deps[send.dep_count++] = 0;
  coll::Step receive;
  receive.kind = coll::StepKind::recv_reduce;
  receive.peer = 0;
  receive.src = {coll::Buffer::input, 0, 4096};
  receive.dst = {coll::Buffer::output, 0, 4096};
  receive.bytes = 4096;
  m.programs = {{{compute, send}}, {{receive}}};
  return coll::Schedule::from_materialized(std::move(m));
}

} // namespace ddlsim::sim::test
