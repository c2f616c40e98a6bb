// Exact relabelling of a group of co-running jobs onto canonical nodes, so that the contention
// cache (shared_cluster.hpp) simulates once every mix that differs only by which of several
// interchangeable nodes or leaves it runs on.
//
// Two nodes are twins when they are built alike (the same vertices, links, link properties and
// NIC affinity, position by position) and their links leave them for the same outside vertices;
// two leaves are twins when they are built alike, hang the same sequence of node shapes and
// link up to the same switches with the same links. Swapping twin nodes, or twin leaves with
// their nodes, maps the topology onto itself (an automorphism): every link goes to a link with
// the same bandwidth, latency, buffer and class, so every route goes to a route of the same
// links' properties. The engines see a placement only through that graph, through the order of
// ranks, vertices and links (ties in the event queue break by insertion order) and through the
// ECMP hash of the global ranks (topologies/ecmp.hpp). A relabelling is therefore used only when
//  - it keeps the order of the group's nodes (so every rank, vertex and link keeps its order
//    among the group's), and
//  - every route any two GPUs of one of the group's jobs can take is the only one (every
//    channel's equal-cost set has one path), so the hash picks nothing.
// Then the simulation of the canonical placement is the simulation of the real one, step by
// step, and their times are byte-identical (tests/jobs assert it). Otherwise (e.g. a job whose
// flows cross leaves over several spines, where ECMP picks a spine per flow from its global
// ranks) there is no exact relabelling and the caller keys the group by its own GPUs.
#pragma once

#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace ddlsim::jobs {

class FabricSymmetry {
public:
  // `algorithm_node_of_gpu`: topo::algorithm_node_of_gpu of the scenario's cluster; where it
  // fuses nodes (an NVLink domain across nodes) no relabelling is used.
  FabricSymmetry(const topo::Topology& topology, topo::Router& router,
                 const std::vector<int>& algorithm_node_of_gpu);

  // The group's placements (each a job's global ranks, in rank order) moved to their canonical
  // nodes, in the same order; nothing when no exact relabelling applies.
  std::optional<std::vector<std::vector<int>>>
  canonical(const std::vector<const std::vector<int>*>& jobs);

private:
  bool single_path(int node_a, int node_b); // every route between them (a == b: inside)

  const topo::Topology& topology_;
  topo::Router& router_;
  bool enabled_ = true;
  std::vector<int> node_of_gpu_;
  std::vector<int> first_gpu_;
  std::vector<int> twin_class_;                // per node: nodes of a class are twins
  std::vector<int> leaf_;                      // per node: its leaf (index into leaves_), or -1
  std::vector<int> leaf_slot_;                 // per node: its position among its leaf's nodes
  std::vector<int> leaf_class_;                // per leaf: leaves of a class are twins
  std::vector<std::vector<int>> leaf_nodes_;   // per leaf: its nodes in node order
  std::vector<std::vector<int>> class_nodes_;  // per twin class: its nodes in node order
  std::vector<std::vector<int>> class_leaves_; // per leaf class: its leaves in order
  std::map<std::pair<int, int>, bool> single_path_;
};

} // namespace ddlsim::jobs
