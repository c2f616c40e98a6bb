#include "ddlsim/topologies/router.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/topologies/ecmp.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace ddlsim::topo {
namespace {

constexpr std::int64_t kUnreached = std::numeric_limits<std::int64_t>::max();
constexpr double kProbeBytes = 64.0 * 1024.0;
// A link without bandwidth is usable but never preferred: 1000 s.
constexpr std::int64_t kUnusableCost = 1'000 * kPsPerSecond;

} // namespace

Router::Router(const Topology& topology, std::size_t max_paths_per_pair)
    : topology_(topology), max_paths_(std::max<std::size_t>(1, max_paths_per_pair)) {
  cost_.reserve(topology.link_count());
  for (const Link& link : topology.links()) cost_.push_back(link_cost(link));
  first_arc_.reserve(topology.vertex_count() + 1);
  arcs_.reserve(topology.link_count());
  transit_.reserve(topology.vertex_count());
  for (VertexId v = 0; v < topology.vertex_count(); ++v) {
    first_arc_.push_back(static_cast<std::uint32_t>(arcs_.size()));
    for (LinkId l : topology.out_links(v)) arcs_.push_back(Arc{topology.link(l).dst, l, cost_[l]});
    const Vertex& vertex = topology.vertex(v);
    transit_.push_back(vertex.kind == VertexKind::gpu ? -2 : vertex.node);
  }
  first_arc_.push_back(static_cast<std::uint32_t>(arcs_.size()));
  dist_.assign(topology.vertex_count(), kUnreached);
  on_path_.assign(topology.vertex_count(), 0);
}

std::int64_t Router::link_cost(const Link& link) {
  if (!(link.bandwidth_bytes_per_second > 0)) return kUnusableCost;
  const double push_ps = std::ceil(kProbeBytes * 1e12 / link.bandwidth_bytes_per_second);
  const auto push =
      static_cast<std::int64_t>(std::min(push_ps, static_cast<double>(kUnusableCost)));
  return std::max<std::int64_t>(1, link.latency + push);
}

const std::vector<Path>& Router::paths(VertexId src, VertexId dst) {
  const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_.emplace(key, compute(src, dst)).first->second;
}

VertexId Router::nic_of(VertexId gpu, std::uint16_t channel) const {
  const Vertex& vertex = topology_.vertex(gpu);
  if (vertex.node < 0) return kNoVertex;
  const Node& node = topology_.node(vertex.node);
  const auto local = static_cast<std::size_t>(vertex.local);
  if (local >= node.gpu_nics.size() || node.gpu_nics[local].empty()) return kNoVertex;
  const std::vector<VertexId>& nics = node.gpu_nics[local];
  return nics[channel % nics.size()];
}

std::vector<Path> Router::through_nics(VertexId src, VertexId nic_a, VertexId nic_b, VertexId dst) {
  // Copies: each paths() call may add to the cache (its references stay valid, but keep the
  // legs independent of that).
  const std::vector<Path> up = paths(src, nic_a);
  const std::vector<Path> across = paths(nic_a, nic_b);
  const std::vector<Path> down = paths(nic_b, dst);
  std::vector<Path> out;
  for (const Path& a : up)
    for (const Path& b : across)
      for (const Path& c : down) {
        if (out.size() >= max_paths_) return out;
        Path path = a;
        path.insert(path.end(), b.begin(), b.end());
        path.insert(path.end(), c.begin(), c.end());
        out.push_back(std::move(path));
      }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<Path>& Router::channel_paths(std::int32_t src_rank, std::int32_t dst_rank,
                                               std::uint16_t channel) {
  const VertexId src = topology_.gpus()[static_cast<std::size_t>(src_rank)];
  const VertexId dst = topology_.gpus()[static_cast<std::size_t>(dst_rank)];
  const std::vector<Path>& all = paths(src, dst);
  if (topology_.vertex(src).node == topology_.vertex(dst).node || all.empty()) return all;
  const VertexId nic_a = nic_of(src, channel), nic_b = nic_of(dst, channel);
  if (nic_a == kNoVertex || nic_b == kNoVertex) return all;
  const NicKey key{src, dst, nic_a, nic_b};
  if (auto it = nic_cache_.find(key); it != nic_cache_.end()) return it->second;
  // Only routes that cross the network are bound to NICs (not an NVLink domain spanning nodes).
  const Path& first = all.front();
  const bool crosses = std::any_of(first.begin(), first.end(), [this](LinkId link) {
    return topology_.link(link).link_class == LinkClass::nic;
  });
  std::vector<Path> bound = crosses ? through_nics(src, nic_a, nic_b, dst) : all;
  if (bound.empty()) bound = all;
  return nic_cache_.emplace(key, std::move(bound)).first->second;
}

const Path& Router::ecmp_path(std::uint64_t seed, std::int32_t src_rank, std::int32_t dst_rank,
                              std::uint16_t channel) {
  const VertexId src = topology_.gpus()[static_cast<std::size_t>(src_rank)];
  const VertexId dst = topology_.gpus()[static_cast<std::size_t>(dst_rank)];
  const std::vector<Path>& all = channel_paths(src_rank, dst_rank, channel);
  if (all.empty())
    throw InputError("topology", "no route from " + topology_.vertex(src).name + " to " +
                                     topology_.vertex(dst).name);
  return all[ecmp_path_index(seed, src_rank, dst_rank, channel, all.size())];
}

std::vector<Path> Router::compute(VertexId src, VertexId dst) {
  std::vector<Path> out;
  if (src == dst) {
    out.emplace_back();
    return out;
  }
  const std::int32_t src_node = topology_.vertex(src).node;
  const std::int32_t dst_node = topology_.vertex(dst).node;
  auto allowed = [&](VertexId v) {
    const std::int32_t t = transit_[v];
    return t == -1 || (t >= 0 && (t == src_node || t == dst_node)) || v == dst;
  };

  // Dijkstra with a binary min-heap of (distance, vertex), stopping once dst is settled.
  using Entry = std::pair<std::int64_t, VertexId>;
  const auto later = std::greater<Entry>();
  dist_[src] = 0;
  touched_.push_back(src);
  heap_.emplace_back(0, src);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const auto [d, u] = heap_.back();
    heap_.pop_back();
    if (d > dist_[u]) continue;
    if (u == dst) break;
    for (std::uint32_t a = first_arc_[u]; a < first_arc_[u + 1]; ++a) {
      const Arc& arc = arcs_[a];
      const std::int64_t nd = d + arc.cost;
      if (nd >= dist_[arc.dst] || !allowed(arc.dst)) continue;
      if (dist_[arc.dst] == kUnreached) touched_.push_back(arc.dst);
      dist_[arc.dst] = nd;
      heap_.emplace_back(nd, arc.dst);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  heap_.clear();

  if (dist_[dst] != kUnreached) {
    // Walk back from dst over tight in-links (the reverses of its out-links), collecting the
    // links of least-cost paths. Every vertex labelled below dist[dst] is settled, and
    // unsettled labels are too large to be tight, so labels can be trusted as they are.
    on_path_[dst] = 1;
    stack_.push_back(dst);
    while (!stack_.empty()) {
      const VertexId v = stack_.back();
      stack_.pop_back();
      for (std::uint32_t a = first_arc_[v]; a < first_arc_[v + 1]; ++a) {
        const VertexId u = arcs_[a].dst;
        if (dist_[u] == kUnreached) continue;
        const LinkId in = topology_.link(arcs_[a].link).reverse; // u -> v
        if (dist_[u] + cost_[in] != dist_[v]) continue;
        dag_.push_back(DagEdge{u, in, v});
        if (!on_path_[u]) {
          on_path_[u] = 1;
          stack_.push_back(u);
        }
      }
    }
    std::sort(dag_.begin(), dag_.end());
    enumerate(src, dst, out);
  }

  for (VertexId v : touched_) {
    dist_[v] = kUnreached;
    on_path_[v] = 0;
  }
  touched_.clear();
  dag_.clear();
  return out;
}

// Depth-first from src over the least-cost links, each vertex's in link id order, so the
// paths come out sorted lexicographically by link ids; stops at max_paths_.
void Router::enumerate(VertexId src, VertexId dst, std::vector<Path>& out) {
  struct Frame {
    std::size_t next, end; // the vertex's out-edges: dag_[next, end)
  };
  auto frame_of = [&](VertexId u) {
    const auto [lo, hi] =
        std::equal_range(dag_.begin(), dag_.end(), DagEdge{u, 0, 0},
                         [](const DagEdge& a, const DagEdge& b) { return a.from < b.from; });
    return Frame{static_cast<std::size_t>(lo - dag_.begin()),
                 static_cast<std::size_t>(hi - dag_.begin())};
  };
  std::vector<Frame> frames{frame_of(src)};
  Path path;
  while (!frames.empty() && out.size() < max_paths_) {
    Frame& frame = frames.back();
    if (frame.next == frame.end) {
      frames.pop_back();
      if (!path.empty()) path.pop_back(); // the link into the vertex just left
      continue;
    }
    const DagEdge& edge = dag_[frame.next++];
    path.push_back(edge.link);
    if (edge.to == dst) {
      out.push_back(path);
      path.pop_back();
      continue;
    }
    frames.push_back(frame_of(edge.to)); // invalidates `frame`
  }
}

} // namespace ddlsim::topo
