// Helpers shared by the topology tests.
#pragma once

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "ddlsim/topologies/spec_parser.hpp"
#include "ddlsim/topologies/topology.hpp"

#include "error_of.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ddlsim::topo::test {

using ddlsim::test_support::error_of;

// Parses `json` as the "topology" section of a scenario.
inline ClusterSpec parse(const std::string& json) {
  const Json j = Json::parse(json);
  return parse_cluster_spec(JsonValue(j, "/topology"));
}

inline Topology build(const std::string& json) {
  return build_topology(parse(json));
}

// `count` nodes of one preset joined by `fabric`.
inline ClusterSpec cluster(const std::string& preset, int count, FabricSpec fabric = {}) {
  ClusterSpec spec;
  spec.node_groups.push_back(NodeGroup{*find_node_preset(preset), count});
  spec.fabric = std::move(fabric);
  return spec;
}

inline VertexId vertex(const Topology& t, const std::string& name) {
  const VertexId id = t.find(name);
  if (id == kNoVertex) throw std::runtime_error("no vertex " + name);
  return id;
}

// The directed links from a to b.
inline std::vector<const Link*> links_between(const Topology& t, VertexId a, VertexId b) {
  std::vector<const Link*> found;
  for (LinkId l : t.out_links(a))
    if (t.link(l).dst == b) found.push_back(&t.link(l));
  return found;
}

inline std::vector<const Link*> out_links_of_class(const Topology& t, VertexId v, LinkClass c) {
  std::vector<const Link*> found;
  for (LinkId l : t.out_links(v))
    if (t.link(l).link_class == c) found.push_back(&t.link(l));
  return found;
}

inline std::size_t count_kind(const Topology& t, VertexKind kind) {
  std::size_t n = 0;
  for (const Vertex& v : t.vertices()) n += v.kind == kind;
  return n;
}

} // namespace ddlsim::topo::test
