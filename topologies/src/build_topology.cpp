// build_topology: the nodes in order, then the fabric joining their NICs, then a check that
// every pair of nodes can reach each other.
#include "fabric_common.hpp"
#include "node_builder.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/spec_parser.hpp"

#include <algorithm>
#include <numeric>

namespace ddlsim::topo {
namespace {

void check_fabric_common(const FabricSpec& fabric, const std::string& where) {
  if (fabric.link_bytes_per_second < 0 ||
      fabric.link_bytes_per_second > gbps_to_bytes_per_second(kMaxBandwidthGbps))
    throw InputError(where + "/bandwidth_gbps", "bandwidth out of range");
  if (fabric.link_latency < 0 || fabric.link_latency > ns_to_ps(kMaxLatencyNs))
    throw InputError(where + "/latency_ns", "latency out of range");
  if (fabric.oversubscription < 0) throw InputError(where + "/oversubscription", "must be > 0");
}

// Union-find over vertex ids.
struct Components {
  explicit Components(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  VertexId find(VertexId v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  }
  void join(VertexId a, VertexId b) { parent[find(a)] = find(b); }
  std::vector<VertexId> parent;
};

} // namespace

void check_cluster_spec(const ClusterSpec& spec) {
  const std::string& root = spec.json_path;
  if (spec.node_groups.empty())
    throw InputError(root + "/nodes", "a cluster needs at least one node group");
  long gpus = 0;
  for (std::size_t i = 0; i < spec.node_groups.size(); ++i) {
    const NodeGroup& group = spec.node_groups[i];
    const std::string where = root + "/nodes/" + std::to_string(i);
    if (group.count < 1 || group.count > kMaxTotalGpus)
      throw InputError(where + "/count", "expected from 1 to " + std::to_string(kMaxTotalGpus) +
                                             " nodes, found " + std::to_string(group.count));
    detail::check_node_spec(group.spec, where);
    gpus += static_cast<long>(group.count) * group.spec.gpus;
    if (gpus > kMaxTotalGpus)
      throw InputError(where + "/count", "the cluster would have " + std::to_string(gpus) +
                                             " or more GPUs; ddlsim models at most " +
                                             std::to_string(kMaxTotalGpus));
  }
  check_fabric_common(spec.fabric, root + "/fabric");
  detail::check_fabric(spec, detail::shape_of(spec), root + "/fabric");
}

Topology build_topology(const ClusterSpec& spec) {
  check_cluster_spec(spec);
  Topology topology;
  std::vector<detail::NicPort> nics;
  int domains = 0;
  for (const NodeGroup& group : spec.node_groups) {
    // Nodes sharing an NVLink domain (GB200 NVL72 trays) join one NVSwitch plane that belongs
    // to no node, so routes between them may cross it and stay on NVLink.
    const int per_domain =
        group.spec.nvlink_domain_gpus > 0 ? group.spec.nvlink_domain_gpus / group.spec.gpus : 0;
    VertexId domain = kNoVertex;
    for (int i = 0; i < group.count; ++i) {
      if (per_domain > 0 && i % per_domain == 0)
        domain = topology.add_vertex(Vertex{VertexKind::nvswitch,
                                            "nvl" + std::to_string(domains) + "/nvswitch", -1,
                                            domains++, -1, group.spec.nvls});
      detail::build_node(topology, group.spec, nics, domain);
    }
  }

  const detail::ClusterShape shape = detail::shape_of(spec);
  const std::string where = spec.json_path + "/fabric";
  detail::FabricBuilder builder(topology, spec.fabric, shape, nics, where);
  switch (spec.fabric.type) {
  case FabricType::single_switch:
    detail::build_single_switch(builder);
    break;
  case FabricType::leaf_spine:
    detail::build_leaf_spine(builder);
    break;
  case FabricType::fat_tree:
    detail::build_fat_tree(builder);
    break;
  case FabricType::torus2d:
  case FabricType::torus3d:
  case FabricType::ring:
    detail::build_torus(builder);
    break;
  case FabricType::rail_optimized:
    detail::build_rail_optimized(builder);
    break;
  case FabricType::custom:
    detail::build_custom(builder);
    break;
  }
  detail::check_nodes_connected(topology, where);
  return topology;
}

std::int64_t total_gpus(const ClusterSpec& spec) {
  std::int64_t gpus = 0;
  for (const NodeGroup& group : spec.node_groups)
    gpus += static_cast<std::int64_t>(group.count) * group.spec.gpus;
  return gpus;
}

std::vector<int> algorithm_node_of_gpu(const ClusterSpec& spec) {
  std::vector<int> nodes;
  int label = 0;
  for (const NodeGroup& group : spec.node_groups) {
    const int per_domain =
        group.spec.nvlink_domain_gpus > 0 ? group.spec.nvlink_domain_gpus / group.spec.gpus : 1;
    for (int i = 0; i < group.count; ++i) {
      if (i > 0 && i % per_domain == 0) ++label;
      nodes.insert(nodes.end(), static_cast<std::size_t>(group.spec.gpus), label);
    }
    ++label;
  }
  return nodes;
}

namespace detail {

// Two nodes can talk when one of their NICs reaches the other's through switches only, or
// when two of their NICs are cabled back to back. Switches are grouped into components of
// switch-to-switch links; a node touches the components its NICs link to.
void check_nodes_connected(const Topology& topology, const std::string& where) {
  const auto nodes = topology.nodes();
  if (nodes.size() < 2) return;
  Components components(topology.vertex_count());
  std::vector<std::vector<VertexId>> touched(nodes.size());
  std::vector<std::pair<int, int>> direct;
  for (const Link& link : topology.links()) {
    const Vertex& a = topology.vertex(link.src);
    const Vertex& b = topology.vertex(link.dst);
    const bool a_switch = a.kind == VertexKind::network_switch;
    const bool b_switch = b.kind == VertexKind::network_switch;
    if (a_switch && b_switch)
      components.join(link.src, link.dst);
    else if (a.kind == VertexKind::nic && b.kind == VertexKind::nic && a.node != b.node)
      direct.emplace_back(std::min(a.node, b.node), std::max(a.node, b.node));
  }
  for (const Link& link : topology.links()) {
    const Vertex& a = topology.vertex(link.src);
    if (a.kind == VertexKind::nic && topology.vertex(link.dst).kind == VertexKind::network_switch)
      touched[static_cast<std::size_t>(a.node)].push_back(components.find(link.dst));
  }
  for (auto& list : touched) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  std::sort(direct.begin(), direct.end());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (touched[i].empty() && nodes[i].nics.empty())
      throw InputError(where, "node " + std::to_string(i) + " (" + nodes[i].preset +
                                  ") has no NIC, so its GPUs cannot reach the other nodes");
  // Fast path: one component that every node touches.
  for (VertexId component : touched[0]) {
    const bool everyone = std::all_of(touched.begin(), touched.end(), [&](const auto& list) {
      return std::binary_search(list.begin(), list.end(), component);
    });
    if (everyone) return;
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t j = i + 1; j < nodes.size(); ++j) {
      const auto& a = touched[i];
      const auto& b = touched[j];
      std::vector<VertexId> common;
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
      if (!common.empty() ||
          std::binary_search(direct.begin(), direct.end(),
                             std::pair<int, int>(static_cast<int>(i), static_cast<int>(j))))
        continue;
      throw InputError(where, "the GPUs of node " + std::to_string(i) +
                                  " cannot reach those of node " + std::to_string(j) +
                                  ": no path joins their NICs through the fabric's switches "
                                  "(servers do not forward traffic for other servers)");
    }
}

} // namespace detail
} // namespace ddlsim::topo
