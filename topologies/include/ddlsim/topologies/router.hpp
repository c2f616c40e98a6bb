// Router: all equal-cost shortest paths between two vertices, computed on first request and
// cached, in a deterministic order.
//
// Cost of a link: its latency plus the time to push 64 KiB through it, in picoseconds, so that
// fast links win (NVLink over PCIe) and symmetric fabric paths tie exactly. Transit rules: a GPU
// is never a transit vertex, and vertices inside a node are transit only for traffic that starts
// or ends in that node (servers do not forward for others).
//
// Not thread-safe (the cache is mutated on lookup): one Router per simulation.
#pragma once

#include "ddlsim/topologies/topology.hpp"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ddlsim::topo {

using Path = std::vector<LinkId>;

class Router {
public:
  // `max_paths_per_pair` caps the ECMP set (the first paths in deterministic order are kept).
  explicit Router(const Topology& topology, std::size_t max_paths_per_pair = 1024);

  // All least-cost paths from src to dst (each a list of link ids from src to dst), sorted
  // lexicographically by link ids. Empty when dst is unreachable; {{}} (one empty path) when
  // src == dst.
  const std::vector<Path>& paths(VertexId src, VertexId dst);

  // Routing cost of one link in picoseconds (see above).
  static std::int64_t link_cost(const Link& link);

  std::size_t cached_pairs() const { return cache_.size(); }

private:
  const Topology& topology_;
  std::size_t max_paths_;
  std::unordered_map<std::uint64_t, std::vector<Path>> cache_;
};

} // namespace ddlsim::topo
