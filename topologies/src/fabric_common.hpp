// Shared pieces of the fabric builders (fabric_*.cpp). Private to the topologies library.
//
// Every fabric is planned first (counts only, so that check_cluster_spec can reject a spec
// without building it) and then built: switches are added tier by tier, then the NIC links in
// NIC order, then the switch-to-switch links.
#pragma once

#include "node_builder.hpp"

#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <string>
#include <vector>

namespace ddlsim::topo::detail {

// What the fabric planners need to know about the nodes, without building them.
struct ClusterShape {
  std::vector<int> nics_per_node;
  std::vector<double> nic_rates; // every NIC, in node order then NIC order
  std::vector<int> nic_local;    // each NIC's index within its node
  std::vector<int> nic_node;
  double fastest_nic = 0; // 0 when there are no NICs
};
ClusterShape shape_of(const ClusterSpec& spec);

// The rate of switch-to-switch links when the spec gives none: the fastest NIC's, or
// 100 Gb/s in a cluster without NICs.
double default_link_rate(const FabricSpec& spec, const ClusterShape& shape);

// Uplinks of one tier of leaves (leaf_spine leaves, rail_optimized rails) to its spines.
struct UplinkPlan {
  int links_per_pair = 1;
  double rate = 0;
};
UplinkPlan plan_uplinks(const FabricSpec& spec, const ClusterShape& shape, double downlink,
                        int spines, const std::string& where);

struct LeafSpinePlan {
  int leaves = 0;
  std::vector<int> leaf_of_nic;
  UplinkPlan uplinks;
};
LeafSpinePlan plan_leaf_spine(const FabricSpec& spec, const ClusterShape& shape,
                              const std::string& where);

struct RailPlan {
  int rails = 0;
  UplinkPlan uplinks; // meaningful when spec.rail_spines > 0
};
RailPlan plan_rails(const FabricSpec& spec, const ClusterShape& shape, const std::string& where);

// Torus/ring dimensions after defaults (ring: {nodes}); checks they hold every node.
std::vector<int> torus_dims(const FabricSpec& spec, std::size_t nodes, const std::string& where);

// Count-only checks of the fabric in `spec` (where = ".../fabric").
void check_fabric(const ClusterSpec& spec, const ClusterShape& shape, const std::string& where);
// Checks of a custom fabric that need only names: unique vertex names, known link endpoints.
void check_custom_fabric(const FabricSpec& spec, const ClusterShape& shape,
                         const std::string& where);

// Adds switches and links to a topology whose nodes are built.
class FabricBuilder {
public:
  FabricBuilder(Topology& topology, const FabricSpec& spec, const ClusterShape& shape,
                const std::vector<NicPort>& nics, std::string where);

  VertexId add_switch(std::string name, int tier, int local);
  // NIC to switch: LinkClass::nic at the NIC's rate (capped at port_rate when > 0) and
  // latency (+ extra_latency).
  void connect_nic(const NicPort& nic, VertexId sw, Picoseconds extra_latency = 0,
                   double port_rate = 0);
  // Switch to switch: LinkClass::fabric at `rate` and the fabric's latency.
  void connect_switches(VertexId a, VertexId b, double rate);

  Topology& topology;
  const FabricSpec& spec;
  const ClusterShape& shape;
  const std::vector<NicPort>& nics;
  const std::string where;
  const double link_rate; // spec.link_bytes_per_second or default_link_rate
};

void build_single_switch(FabricBuilder& b);
void build_leaf_spine(FabricBuilder& b);
void build_rail_optimized(FabricBuilder& b);
void build_fat_tree(FabricBuilder& b);
void build_torus(FabricBuilder& b); // torus2d, torus3d and ring
void build_custom(FabricBuilder& b);

// Throws InputError at `where` when some pair of nodes cannot reach each other through the
// fabric without crossing a third node (servers do not forward).
void check_nodes_connected(const Topology& topology, const std::string& where);

} // namespace ddlsim::topo::detail
