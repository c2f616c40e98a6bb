// Builds the inside of one server (host, PCIe switches, GPUs, NICs, NVLink/NVSwitch) from a
// NodeSpec. Private to the topologies library.
#pragma once

#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <string>
#include <vector>

namespace ddlsim::topo::detail {

// A NIC waiting for its fabric link, in node order then NIC order.
struct NicPort {
  VertexId vertex;
  double bytes_per_second;
  Picoseconds latency;
  int node;
};

// Throws InputError at `where` + "/<key>" (e.g. "/topology/nodes/1/gpus") when the spec
// cannot be built: counts out of range, a missing bandwidth, a mesh that is not 8 GPUs...
void check_node_spec(const NodeSpec& spec, const std::string& where);

// Adds one node (vertices "node<i>/cpu", "node<i>/pcie<j>", "node<i>/gpu<g>",
// "node<i>/nic<n>", "node<i>/nvswitch") and its links; appends its NICs to `nic_ports`.
// Returns the node index. The spec must have passed check_node_spec. `nvlink_domain`, when
// given, is the NVSwitch plane ("nvl<k>/nvswitch", node -1) the node's GPUs join instead of
// a plane of their own.
int build_node(Topology& topology, const NodeSpec& spec, std::vector<NicPort>& nic_ports,
               VertexId nvlink_domain = kNoVertex);

} // namespace ddlsim::topo::detail
