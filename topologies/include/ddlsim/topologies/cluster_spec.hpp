// ClusterSpec: what a scenario's "topology" section describes, as plain data. Parsed from JSON
// by parse_cluster_spec (spec_parser.hpp), turned into a Topology by build_topology
// (builders.hpp). Node presets (presets.hpp) are NodeSpec values.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/transport.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::topo {

// How the GPUs inside one server are connected.
enum class IntraNode : std::uint8_t {
  nvlink_hybrid_cube_mesh, // DGX-1: 8 GPUs, each with direct NVLinks to 4..6 others
  nvswitch,                // DGX-A100/H100: every GPU has one fat link to an NVSwitch plane
  nvlink_pairs,            // cloud V100 boxes without NVSwitch: same cube mesh as DGX-1 (8 GPUs)
  pcie_only,               // GPUs talk through PCIe switches and the CPU root complex
  nvlink_all_to_all,       // GH200 quad nodes: a direct NVLink bundle between every GPU pair
};

// Latencies a NodeSpec gets when neither a preset nor the scenario gives one (per link, one
// way; presets.cpp explains the figures).
inline constexpr Picoseconds kDefaultNvlinkLatency = 600 * kPsPerNs;
inline constexpr Picoseconds kDefaultPcieLatency = 250 * kPsPerNs;
inline constexpr Picoseconds kDefaultNicLatency = 1 * kPsPerUs;
inline constexpr Picoseconds kDefaultFabricLatency = 500 * kPsPerNs;

// One kind of server. All bandwidths are per direction.
struct NodeSpec {
  std::string preset = "custom";
  std::string gpu_model;
  int gpus = 1;
  IntraNode intra = IntraNode::pcie_only;
  // Mesh: per NVLink link. NVSwitch: per GPU to the switch plane (all its NVLinks together).
  // All-to-all: per GPU pair (the NVLinks joining the two).
  double nvlink_bytes_per_second = 0;
  // Mesh only: NVLinks joining each "doubled" GPU pair of the hybrid cube-mesh (the other
  // adjacent pairs always have one). 2 = DGX-1 V100 (6 NVLinks per GPU), 1 = DGX-1 P100 (4).
  // Parallel NVLinks are one link of the summed bandwidth (the hardware stripes over them).
  int nvlinks_per_pair = 1;
  // The payload rate an NVLink carries as a fraction of nvlink_bytes_per_second (the datasheet's
  // signalling rate): NVLink's packet overhead on the 128-byte writes of SM kernels in both
  // directions, by NVLink generation (models/nvlink.hpp, set from gpu_model when a scenario
  // loads). Every engine's NVLink links run at the product. 1 = the datasheet rate (a spec built
  // without the GPU catalog; a calibration's NVLink class replaces it with its fitted efficiency).
  double nvlink_payload_efficiency = 1;
  Picoseconds nvlink_latency = kDefaultNvlinkLatency;
  // NVSwitch only: the GPUs of one NVLink domain when it spans several nodes (GB200 NVL72: 72
  // GPUs over 18 trays of 4). Consecutive nodes of the group, nvlink_domain_gpus / gpus of them,
  // share one NVSwitch plane. 0 = each node is its own domain.
  int nvlink_domain_gpus = 0;
  // NVSwitch only: the switch reduces and multicasts in the fabric (NVLink SHARP, "NVLS": third-
  // generation NVSwitch and later, i.e. H100, H200, B200 systems). Switch steps of a Schedule
  // need it on their route.
  bool nvls = false;
  int pcie_switches = 1;            // GPUs and NICs are spread evenly over them; 0 = all on
                                    // the CPU root complex
  double pcie_bytes_per_second = 0; // per PCIe x16 link
  Picoseconds pcie_latency = kDefaultPcieLatency;
  int nics = 1;
  double nic_bytes_per_second = 0;              // per NIC
  Picoseconds nic_latency = kDefaultNicLatency; // NIC to its switch, incl. the NIC's pipeline
  // How NCCL drives the NICs (transport.hpp). ib = GPUDirect RDMA, the path every node had
  // before transports were modelled.
  Transport transport = Transport::ib;
  // socket only: NCCL_SOCKET_NTHREADS, NCCL_NSOCKS_PERTHREAD (NCCL's defaults unless a preset
  // names its cloud's) and the rate of one kernel-TCP stream.
  int socket_nthreads = kSocketDefaultThreads;
  int socket_nsocks_perthread = kSocketDefaultSocksPerThread;
  double socket_stream_bytes_per_second = gbps_to_bytes_per_second(kDefaultSocketStreamGbps);
};

// The rate a NIC link carries under the node's transport: the NIC's own rate, or for socket the
// lesser of it and NCCL's streams x the per-stream rate (one connection per NIC at a time).
double transport_nic_bytes_per_second(const NodeSpec& spec);

// The node's NICs as NCCL's network plugin presents them: `count` devices of `rails` NICs each.
// aws-ofi-nccl's RDMA protocol, its default on EFA from P5 on (src/platform-aws.cpp,
// default_protocol), makes the NICs nearest each GPU one device (src/nccl_ofi_topo.cpp: one group
// per GPU under the PCIe switch that holds the NICs) and stripes each message over its rails
// (nccl_ofi_scheduler: messages above OFI_NCCL_MIN_STRIPE_SIZE, 128 KiB, split evenly; smaller
// ones round-robin), reporting the rails' summed speed (nccl_ofi_rdma.cpp, get_properties:
// port_speed x max_group_size). So on efa a node with k NICs per GPU (k > 1) has one device of k
// rails per GPU; every other transport, and efa with a NIC per GPU or fewer, one device per NIC.
struct NicDevices {
  int count = 0;
  int rails = 1;
};
NicDevices nic_devices(const NodeSpec& spec);

struct NodeGroup {
  NodeSpec spec;
  int count = 1;
};

enum class FabricType : std::uint8_t {
  single_switch,
  leaf_spine,
  fat_tree,
  torus2d,
  torus3d,
  ring,
  rail_optimized,
  custom
};

struct CustomVertex {
  std::string name;
  int tier = 0;
};
// A link of a custom fabric. Unset values come from the NIC when one end is a NIC (then it is a
// LinkClass::nic link), else from the FabricSpec.
struct CustomLink {
  std::string from; // a custom vertex name or a node's NIC such as "node0/nic0"
  std::string to;
  double bytes_per_second = 0; // 0 = unset
  std::optional<Picoseconds> latency;
  std::uint64_t buffer_bytes = 0; // 0 = unset
};

// How nodes are joined. Fields not used by `type` keep their defaults. NIC-to-switch links
// always run at the NIC's own rate and latency.
struct FabricSpec {
  FabricType type = FabricType::single_switch;
  // Switch-to-switch links; 0 = the fastest NIC's rate (leaf_spine and rail_optimized: see
  // oversubscription). single_switch has no such links: there it is the switch's port rate,
  // and a NIC link runs at the slower of NIC and port (0 = the NIC's rate).
  double link_bytes_per_second = 0;
  // Switch-to-switch links (cable + switch traversal). single_switch has none: there half of
  // it is added to every NIC-to-switch link, so a NIC-to-NIC path pays it once.
  Picoseconds link_latency = kDefaultFabricLatency;
  std::uint64_t buffer_bytes = 0; // per switch egress port; 0 = engine default
  // leaf_spine (and rail_optimized, whose rails are its leaves)
  int leaves = 0; // 0 = as few as hold all NICs at nics_per_leaf
  int spines = 0;
  int links_per_pair = 0; // parallel links per leaf-spine pair; 0 = 1, or derived
  int nics_per_leaf = 0;  // 0 = NICs spread evenly (contiguously) over the leaves
  // Downlink bandwidth / uplink bandwidth of a leaf, where downlink = the largest sum of NIC
  // rates on one leaf. 0 = non-blocking (1) unless link_bytes_per_second is given. With only
  // oversubscription, each uplink runs at downlink / (oversubscription x spines x links);
  // with link_bytes_per_second too, the links per pair are derived instead:
  // ceil(downlink / (oversubscription x spines x link rate)), a ratio at most the one asked.
  double oversubscription = 0;
  // fat_tree
  int k = 0;
  // torus2d / torus3d / ring: one switch per node position (ring: dims = {nodes})
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
  // JSON pointer of the section this came from: build errors name paths under it, with node
  // groups, custom vertices and links by index (e.g. "/topology/fabric/links/3/to").
  std::string json_path = "/topology";
};

// The cluster's GPUs: the sum over node groups of nodes x GPUs per node. 64-bit so that a spec
// built in code and not yet checked (check_cluster_spec caps a cluster at kMaxTotalGpus) cannot
// overflow; a checked spec's total fits an int.
std::int64_t total_gpus(const ClusterSpec& spec);

// The node of every GPU (node-major, like Topology::gpus()) as collective algorithms see it:
// its node's index, except that nodes sharing an NVLink domain (nvlink_domain_gpus) count as one,
// as NCCL fuses the topology of an NVLink clique into one node (src/graph/topo.cc, "MNNVL
// clique support", NCCL 2.30.7). Labels are 0.. in order.
std::vector<int> algorithm_node_of_gpu(const ClusterSpec& spec);

} // namespace ddlsim::topo
