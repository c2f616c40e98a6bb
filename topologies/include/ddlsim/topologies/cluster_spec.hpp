// ClusterSpec: what a scenario's "topology" section describes, as plain data. Parsed from JSON
// by parse_cluster_spec (spec_parser.hpp), turned into a Topology by build_topology
// (builders.hpp). Node presets (presets.hpp) are NodeSpec values.
#pragma once

#include "ddlsim/core/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::topo {

// How the GPUs inside one server are connected.
enum class IntraNode : std::uint8_t {
  nvlink_hybrid_cube_mesh,  // DGX-1: 8 GPUs, each with direct NVLinks to 4..6 others
  nvswitch,                 // DGX-A100/H100: every GPU has one fat link to an NVSwitch plane
  nvlink_pairs,             // cloud V100 boxes without NVSwitch: same cube mesh as DGX-1 (8 GPUs)
  pcie_only,                // GPUs talk through PCIe switches and the CPU root complex
};

// One kind of server. All bandwidths are per direction.
struct NodeSpec {
  std::string preset = "custom";
  std::string gpu_model;
  int gpus = 1;
  IntraNode intra = IntraNode::pcie_only;
  double nvlink_bytes_per_second = 0;  // per NVLink link (mesh) or per GPU to the NVSwitch plane
  int nvlinks_per_pair = 1;            // mesh: parallel links between an adjacent GPU pair
  Picoseconds nvlink_latency = 0;
  int pcie_switches = 1;               // GPUs and NICs are spread evenly over them
  double pcie_bytes_per_second = 0;    // per PCIe x16 link
  Picoseconds pcie_latency = 0;
  int nics = 1;
  double nic_bytes_per_second = 0;     // per NIC
  Picoseconds nic_latency = 0;         // NIC to its switch, including the NIC's own pipeline
};

struct NodeGroup {
  NodeSpec spec;
  int count = 1;
};

enum class FabricType : std::uint8_t {
  single_switch, leaf_spine, fat_tree, torus2d, torus3d, ring, rail_optimized, custom
};

struct CustomVertex {
  std::string name;
  int tier = 0;
};
struct CustomLink {
  std::string from;  // a custom vertex name or a node vertex name such as "node0/nic0"
  std::string to;
  double bytes_per_second = 0;
  Picoseconds latency = 0;
  std::uint64_t buffer_bytes = 0;
};

// How nodes are joined. Fields not used by `type` keep their defaults.
struct FabricSpec {
  FabricType type = FabricType::single_switch;
  double link_bytes_per_second = 0;  // switch-to-switch links; 0 = the fastest NIC's rate
  Picoseconds link_latency = 0;
  std::uint64_t buffer_bytes = 0;    // per switch egress port; 0 = engine default
  // leaf_spine
  int leaves = 0;                    // 0 = as few as hold all NICs at nics_per_leaf
  int spines = 0;
  int links_per_pair = 1;            // parallel links between each leaf and each spine
  int nics_per_leaf = 0;             // 0 = NICs spread evenly over the leaves
  double oversubscription = 0;       // >0: uplink bandwidth = downlink / oversubscription
  // fat_tree
  int k = 0;
  // torus2d / torus3d / ring: one switch per node position
  std::vector<int> dims;
  // rail_optimized: one rail switch per NIC index; spines join the rails (0 = isolated rails)
  int rail_spines = 0;
  // custom
  std::vector<CustomVertex> custom_vertices;
  std::vector<CustomLink> custom_links;
};

struct ClusterSpec {
  std::vector<NodeGroup> node_groups;
  FabricSpec fabric;
};

} // namespace ddlsim::topo
