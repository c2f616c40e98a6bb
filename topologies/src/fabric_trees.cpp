// Switched fabrics: single_switch, leaf_spine, rail_optimized and the k-ary fat tree.
#include "fabric_common.hpp"

#include <algorithm>

namespace ddlsim::topo::detail {

FabricBuilder::FabricBuilder(Topology& topology_in, const FabricSpec& spec_in,
                             const ClusterShape& shape_in, const std::vector<NicPort>& nics_in,
                             std::string where_in)
    : topology(topology_in), spec(spec_in), shape(shape_in), nics(nics_in),
      where(std::move(where_in)), link_rate(default_link_rate(spec_in, shape_in)) {}

VertexId FabricBuilder::add_switch(std::string name, int tier, int local) {
  return topology.add_vertex(Vertex{VertexKind::network_switch, std::move(name), -1, local, tier});
}

void FabricBuilder::connect_nic(const NicPort& nic, VertexId sw, Picoseconds extra_latency,
                                double port_rate) {
  const double rate =
      port_rate > 0 ? std::min(nic.bytes_per_second, port_rate) : nic.bytes_per_second;
  topology.add_duplex_link(nic.vertex, sw, rate, nic.latency + extra_latency, LinkClass::nic,
                           spec.buffer_bytes);
}

void FabricBuilder::connect_switches(VertexId a, VertexId b, double rate) {
  topology.add_duplex_link(a, b, rate, spec.link_latency, LinkClass::fabric, spec.buffer_bytes);
}

// One switch with every NIC on it. It has no switch-to-switch links, so the fabric latency
// (the switch's own) is split over the two NIC links of every path through it, and the fabric
// bandwidth, when given, is its port rate: a NIC link runs at the slower of NIC and port.
void build_single_switch(FabricBuilder& b) {
  const VertexId sw = b.add_switch("switch0", 0, 0);
  for (const NicPort& nic : b.nics)
    b.connect_nic(nic, sw, b.spec.link_latency / 2, b.spec.link_bytes_per_second);
}

// Leaves hold the NICs (plan_leaf_spine decides which), every leaf links to every spine with
// links_per_pair parallel links.
void build_leaf_spine(FabricBuilder& b) {
  const LeafSpinePlan plan = plan_leaf_spine(b.spec, b.shape, b.where);
  std::vector<VertexId> leaves, spines;
  for (int i = 0; i < plan.leaves; ++i)
    leaves.push_back(b.add_switch("leaf" + std::to_string(i), 0, i));
  for (int j = 0; j < b.spec.spines; ++j)
    spines.push_back(b.add_switch("spine" + std::to_string(j), 1, j));
  for (std::size_t n = 0; n < b.nics.size(); ++n)
    b.connect_nic(b.nics[n], leaves[static_cast<std::size_t>(plan.leaf_of_nic[n])]);
  for (VertexId leaf : leaves)
    for (VertexId spine : spines)
      for (int l = 0; l < plan.uplinks.links_per_pair; ++l)
        b.connect_switches(leaf, spine, plan.uplinks.rate);
}

// NIC i of every node on rail switch i; optional spines join the rails like a leaf-spine.
void build_rail_optimized(FabricBuilder& b) {
  const RailPlan plan = plan_rails(b.spec, b.shape, b.where);
  std::vector<VertexId> rails, spines;
  for (int i = 0; i < plan.rails; ++i)
    rails.push_back(b.add_switch("rail" + std::to_string(i), 0, i));
  for (int j = 0; j < b.spec.rail_spines; ++j)
    spines.push_back(b.add_switch("railspine" + std::to_string(j), 1, j));
  for (std::size_t n = 0; n < b.nics.size(); ++n)
    b.connect_nic(b.nics[n], rails[static_cast<std::size_t>(b.shape.nic_local[n])]);
  for (VertexId rail : rails)
    for (VertexId spine : spines)
      for (int l = 0; l < plan.uplinks.links_per_pair; ++l)
        b.connect_switches(rail, spine, plan.uplinks.rate);
}

// The three-tier k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
// aggregation switches, (k/2)^2 core switches, k^3/4 host ports. Edge switch e of a pod links
// to every aggregation switch of its pod; aggregation switch j of every pod links to core
// switches j*k/2 .. j*k/2 + k/2 - 1. NIC n takes host port n: edge switch n / (k/2).
void build_fat_tree(FabricBuilder& b) {
  const int k = b.spec.k;
  const int half = k / 2;
  std::vector<VertexId> edges, aggs, cores;
  for (int e = 0; e < k * half; ++e)
    edges.push_back(b.add_switch("edge" + std::to_string(e), 0, e));
  for (int a = 0; a < k * half; ++a) aggs.push_back(b.add_switch("agg" + std::to_string(a), 1, a));
  for (int c = 0; c < half * half; ++c)
    cores.push_back(b.add_switch("core" + std::to_string(c), 2, c));
  for (std::size_t n = 0; n < b.nics.size(); ++n)
    b.connect_nic(b.nics[n], edges[n / static_cast<std::size_t>(half)]);
  for (int pod = 0; pod < k; ++pod)
    for (int e = 0; e < half; ++e)
      for (int a = 0; a < half; ++a)
        b.connect_switches(edges[static_cast<std::size_t>(pod * half + e)],
                           aggs[static_cast<std::size_t>(pod * half + a)], b.link_rate);
  for (int pod = 0; pod < k; ++pod)
    for (int a = 0; a < half; ++a)
      for (int c = 0; c < half; ++c)
        b.connect_switches(aggs[static_cast<std::size_t>(pod * half + a)],
                           cores[static_cast<std::size_t>(a * half + c)], b.link_rate);
}

} // namespace ddlsim::topo::detail
