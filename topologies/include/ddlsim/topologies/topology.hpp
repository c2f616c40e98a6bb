// The cluster graph: GPUs, hosts, NICs, PCIe switches, NVSwitches and network switches joined by
// directed links. Every engine reads the same Topology; builders (builders.hpp) make it from a
// ClusterSpec, and Router (router.hpp) finds equal-cost paths through it.
//
// Storage is a Boost.Graph adjacency_list whose edges carry our LinkId, plus flat vectors of
// Vertex and Link records indexed by id, so that engines look a link up in O(1).
#pragma once

#include "ddlsim/core/units.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::topo {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr VertexId kNoVertex = UINT32_MAX;

enum class VertexKind : std::uint8_t { gpu, host, nic, pcie_switch, nvswitch, network_switch };
std::string_view to_string(VertexKind kind);

// What hardware a link is; calibration fits latency and bandwidth per class.
enum class LinkClass : std::uint8_t {
  nvlink, // GPU to GPU or GPU to NVSwitch
  pcie,   // GPU, NIC or CPU to a PCIe switch / root complex
  nic,    // NIC to its first network switch (the host's injection link)
  fabric, // network switch to network switch
};
std::string_view to_string(LinkClass link_class);

struct Vertex {
  VertexKind kind;
  std::string name;       // unique, e.g. "node3/gpu5", "leaf2", "core0"
  std::int32_t node = -1; // index of the server it belongs to; -1 for fabric switches
  std::int32_t local = 0; // index among vertices of its kind in its node (GPU 0..7), or in its tier
  std::int32_t tier = -1; // network switches: 0 edge/leaf/rail, 1 aggregation/spine, 2 core
  bool nvls = false;      // an NVSwitch that reduces and multicasts (NodeSpec::nvls)
};

// One direction of a link. Full-duplex links are two Links, each naming the other as reverse.
struct Link {
  VertexId src;
  VertexId dst;
  double bandwidth_bytes_per_second;
  Picoseconds latency;
  std::uint64_t buffer_bytes = 0; // egress buffer at src for this port; 0 = engine default
  LinkClass link_class;
  LinkId reverse;
};

// One server: its preset and the ids of its vertices.
struct Node {
  std::string preset;         // e.g. "dgx-a100", or "custom"
  std::string gpu_model;      // e.g. "A100-SXM4-40GB"
  std::vector<VertexId> gpus; // in local order; global rank order is node-major
  std::vector<VertexId> nics;
  std::vector<VertexId> hosts;
  // NIC affinity: for each local GPU, the NICs its inter-node traffic leaves and enters by, as
  // NCCL picks them (the NICs nearest the GPU on PCIe, shared out rail by rail; see
  // node_builder.cpp). Channel c of a GPU uses gpu_nics[gpu][c % size]. Empty (for the node or
  // a GPU) = no affinity: routes take any least-cost NIC (Router::channel_paths).
  std::vector<std::vector<VertexId>> gpu_nics;
};

class Topology {
public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                      boost::no_property, LinkId>;

  // --- building (builders use these; engines treat a built Topology as immutable) ---
  VertexId add_vertex(Vertex vertex);
  // Adds a full-duplex link as two directed Links a->b and b->a; returns the id of a->b (the
  // reverse is that id + 1).
  LinkId add_duplex_link(VertexId a, VertexId b, double bandwidth_bytes_per_second,
                         Picoseconds latency, LinkClass link_class, std::uint64_t buffer_bytes = 0);
  int add_node(Node node); // returns the node index
  Node& node(int index) { return nodes_[static_cast<std::size_t>(index)]; }

  // --- reading ---
  std::size_t vertex_count() const { return vertices_.size(); }
  std::size_t link_count() const { return links_.size(); }
  const Vertex& vertex(VertexId id) const { return vertices_[id]; }
  const Link& link(LinkId id) const { return links_[id]; }
  std::span<const Vertex> vertices() const { return vertices_; }
  std::span<const Link> links() const { return links_; }
  std::span<const Node> nodes() const { return nodes_; }
  const Node& node(int index) const { return nodes_[static_cast<std::size_t>(index)]; }
  // Outgoing links of a vertex, in insertion order.
  std::span<const LinkId> out_links(VertexId id) const { return out_links_[id]; }
  // All GPUs in global rank order (node-major, then local index): rank r runs on gpus()[r].
  const std::vector<VertexId>& gpus() const { return gpus_; }
  const Graph& graph() const { return graph_; }
  // The vertex with this name, or kNoVertex.
  VertexId find(std::string_view name) const;

private:
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  std::vector<Node> nodes_;
  std::vector<std::vector<LinkId>> out_links_;
  std::vector<VertexId> gpus_;
  Graph graph_;
};

} // namespace ddlsim::topo
