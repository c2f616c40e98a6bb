// Router: all equal-cost shortest paths between two vertices, computed on first request and
// cached, in a deterministic order.
//
// Cost of a link: its latency plus the time to push 64 KiB through it, in picoseconds, so that
// fast links win (NVLink over PCIe) and symmetric fabric paths tie exactly. Transit rules: a GPU
// is never a transit vertex, and vertices inside a node are transit only for traffic that starts
// or ends in that node (servers do not forward for others).
//
// Not thread-safe (the cache is mutated on lookup): one Router per simulation.
//
// Algorithm: Dijkstra from src over the vertices the transit rules allow, stopping once dst is
// settled (link costs are positive, so every predecessor on a least-cost path is settled by
// then); a backward sweep from dst over tight links collects the links of least-cost paths,
// and a depth-first walk from src over them, in link id order, lists the paths in
// lexicographic order. Scratch arrays are sized once and only touched entries are reset.
#pragma once

#include "ddlsim/topologies/topology.hpp"

#include <cstdint>
#include <functional>
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
  // Drops every cached path set (e.g. between the phases of a long analysis).
  void clear_cache() {
    cache_.clear();
    nic_cache_.clear();
  }

  // The paths a transfer of rank src_rank to rank dst_rank on `channel` may take (ranks on the
  // topology's GPUs in order), in lexicographic order. Between GPUs of different nodes whose
  // routes cross the network and that have a NIC affinity (Node::gpu_nics), only the paths that
  // leave through the source GPU's NIC for this channel and enter through the destination GPU's
  // (gpu_nics[local][channel % size]): the least-cost paths GPU -> that NIC, NIC -> NIC and
  // NIC -> GPU, joined. NCCL binds each channel's connection to one NIC this way (a queue pair
  // lives on one HCA), and ECMP then only spreads it over the fabric. Otherwise paths(). Stable
  // reference (cached). Empty when there is no route.
  const std::vector<Path>& channel_paths(std::int32_t src_rank, std::int32_t dst_rank,
                                         std::uint16_t channel);

  // The path a transfer of rank src_rank to rank dst_rank on `channel` takes: one of
  // channel_paths(), picked by ecmp_path_index with `seed`. Throws InputError at "topology",
  // naming both GPUs, when there is no route.
  const Path& ecmp_path(std::uint64_t seed, std::int32_t src_rank, std::int32_t dst_rank,
                        std::uint16_t channel);

private:
  // One out-link in the router's flat copy of the graph.
  struct Arc {
    VertexId dst;
    LinkId link;
    std::int64_t cost;
  };
  // A link on some least-cost path of the current query.
  struct DagEdge {
    VertexId from;
    LinkId link;
    VertexId to;
    bool operator<(const DagEdge& o) const {
      return from != o.from ? from < o.from : link < o.link;
    }
  };

  std::vector<Path> compute(VertexId src, VertexId dst);
  // The NICs a GPU's channel uses (Node::gpu_nics), or kNoVertex without affinity.
  VertexId nic_of(VertexId gpu, std::uint16_t channel) const;
  // The least-cost paths src -> nic_a -> nic_b -> dst, each leg's paths joined in order.
  std::vector<Path> through_nics(VertexId src, VertexId nic_a, VertexId nic_b, VertexId dst);

  // Path sets of channel_paths that go through chosen NICs, by (src, dst, nic_a, nic_b).
  struct NicKey {
    VertexId src, dst, nic_a, nic_b;
    bool operator==(const NicKey&) const = default;
  };
  struct NicKeyHash {
    std::size_t operator()(const NicKey& k) const {
      return std::hash<std::uint64_t>()(((std::uint64_t(k.src) << 32) | k.dst) *
                                            0x9e3779b97f4a7c15ull ^
                                        ((std::uint64_t(k.nic_a) << 32) | k.nic_b));
    }
  };
  std::unordered_map<NicKey, std::vector<Path>, NicKeyHash> nic_cache_;
  void enumerate(VertexId src, VertexId dst, std::vector<Path>& out);

  const Topology& topology_;
  std::size_t max_paths_;
  std::unordered_map<std::uint64_t, std::vector<Path>> cache_;
  // The graph as arrays: out-arcs of v are arcs_[first_arc_[v] .. first_arc_[v + 1]), in link
  // id order; transit_[v] is v's node, -1 for fabric switches, -2 for GPUs (never transit).
  std::vector<std::uint32_t> first_arc_;
  std::vector<Arc> arcs_;
  std::vector<std::int32_t> transit_;
  std::vector<std::int64_t> cost_; // by link id
  // Per-query scratch sized to the vertex count; only touched entries are reset.
  std::vector<std::int64_t> dist_;    // INT64_MAX when untouched
  std::vector<std::uint8_t> on_path_; // 1 = on some least-cost src->dst path
  std::vector<VertexId> touched_;
  std::vector<std::pair<std::int64_t, VertexId>> heap_;
  std::vector<VertexId> stack_;
  std::vector<DagEdge> dag_;
};

} // namespace ddlsim::topo
