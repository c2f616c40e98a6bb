#include "ddlsim/topologies/topology.hpp"

namespace ddlsim::topo {

std::string_view to_string(VertexKind kind) {
  switch (kind) {
  case VertexKind::gpu:
    return "gpu";
  case VertexKind::host:
    return "host";
  case VertexKind::nic:
    return "nic";
  case VertexKind::pcie_switch:
    return "pcie_switch";
  case VertexKind::nvswitch:
    return "nvswitch";
  case VertexKind::network_switch:
    return "switch";
  }
  return "?";
}

std::string_view to_string(LinkClass link_class) {
  switch (link_class) {
  case LinkClass::nvlink:
    return "nvlink";
  case LinkClass::pcie:
    return "pcie";
  case LinkClass::nic:
    return "nic";
  case LinkClass::fabric:
    return "fabric";
  }
  return "?";
}

VertexId Topology::add_vertex(Vertex vertex) {
  const auto id = static_cast<VertexId>(vertices_.size());
  vertices_.push_back(std::move(vertex));
  out_links_.emplace_back();
  boost::add_vertex(graph_);
  return id;
}

LinkId Topology::add_duplex_link(VertexId a, VertexId b, double bandwidth_bytes_per_second,
                                 Picoseconds latency, LinkClass link_class,
                                 std::uint64_t buffer_bytes) {
  const auto forward = static_cast<LinkId>(links_.size());
  const LinkId backward = forward + 1;
  links_.push_back(
      Link{a, b, bandwidth_bytes_per_second, latency, buffer_bytes, link_class, backward});
  links_.push_back(
      Link{b, a, bandwidth_bytes_per_second, latency, buffer_bytes, link_class, forward});
  out_links_[a].push_back(forward);
  out_links_[b].push_back(backward);
  boost::add_edge(a, b, forward, graph_);
  boost::add_edge(b, a, backward, graph_);
  return forward;
}

int Topology::add_node(Node node) {
  gpus_.insert(gpus_.end(), node.gpus.begin(), node.gpus.end());
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

VertexId Topology::find(std::string_view name) const {
  for (VertexId id = 0; id < vertices_.size(); ++id)
    if (vertices_[id].name == name) return id;
  return kNoVertex;
}

} // namespace ddlsim::topo
