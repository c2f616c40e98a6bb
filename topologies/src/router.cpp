#include "ddlsim/topologies/router.hpp"

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

bool Router::may_use(VertexId v, VertexId dst, std::int32_t src_node, std::int32_t dst_node) const {
  if (v == dst) return true;
  const Vertex& vertex = topology_.vertex(v);
  if (vertex.kind == VertexKind::gpu) return false;
  return vertex.node < 0 || vertex.node == src_node || vertex.node == dst_node;
}

std::vector<Path> Router::compute(VertexId src, VertexId dst) {
  std::vector<Path> out;
  if (src == dst) {
    out.emplace_back();
    return out;
  }
  const std::int32_t src_node = topology_.vertex(src).node;
  const std::int32_t dst_node = topology_.vertex(dst).node;

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
    for (LinkId l : topology_.out_links(u)) {
      const VertexId v = topology_.link(l).dst;
      const std::int64_t nd = d + cost_[l];
      if (nd >= dist_[v] || !may_use(v, dst, src_node, dst_node)) continue;
      if (dist_[v] == kUnreached) touched_.push_back(v);
      dist_[v] = nd;
      heap_.emplace_back(nd, v);
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  heap_.clear();

  if (dist_[dst] != kUnreached) {
    // Mark the vertices on least-cost paths: walk back from dst over tight links. Every
    // vertex with a label below dist[dst] is settled, and unsettled labels are too large to
    // be tight, so labels can be trusted as they are.
    on_path_[dst] = 1;
    stack_.push_back(dst);
    while (!stack_.empty()) {
      const VertexId v = stack_.back();
      stack_.pop_back();
      for (LinkId l : topology_.out_links(v)) {
        const Link& back = topology_.link(l); // v -> u; its reverse is the in-link u -> v
        const VertexId u = back.dst;
        if (on_path_[u] || dist_[u] == kUnreached) continue;
        if (dist_[u] + cost_[back.reverse] != dist_[v]) continue;
        on_path_[u] = 1;
        stack_.push_back(u);
      }
    }
    enumerate(src, dst, out);
  }

  for (VertexId v : touched_) {
    dist_[v] = kUnreached;
    on_path_[v] = 0;
  }
  touched_.clear();
  return out;
}

// Depth-first from src over tight links into marked vertices, out-links in id order, so the
// paths come out sorted lexicographically by link ids; stops at max_paths_.
void Router::enumerate(VertexId src, VertexId dst, std::vector<Path>& out) {
  struct Frame {
    VertexId vertex;
    std::size_t next;
  };
  std::vector<Frame> frames{{src, 0}};
  Path path;
  while (!frames.empty() && out.size() < max_paths_) {
    Frame& frame = frames.back();
    if (frame.vertex == dst) {
      out.push_back(path);
      frames.pop_back();
      path.pop_back();
      continue;
    }
    const auto links = topology_.out_links(frame.vertex);
    bool advanced = false;
    while (frame.next < links.size()) {
      const LinkId l = links[frame.next++];
      const VertexId v = topology_.link(l).dst;
      if (!on_path_[v] || dist_[frame.vertex] + cost_[l] != dist_[v]) continue;
      path.push_back(l);
      frames.push_back(Frame{v, 0}); // invalidates `frame`
      advanced = true;
      break;
    }
    if (advanced) continue;
    frames.pop_back();
    if (!path.empty()) path.pop_back();
  }
}

} // namespace ddlsim::topo
