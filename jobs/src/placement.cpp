// The placement policies of a shared cluster (placement.hpp) and the cluster view they read.
#include "ddlsim/jobs/placement.hpp"

#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace ddlsim::jobs {
namespace {

std::vector<int> free_per_node(const ClusterState& state) {
  const ClusterView& v = *state.view;
  std::vector<int> out(v.first_gpu.size(), 0);
  for (int r = 0; r < v.gpus; ++r)
    if (state.free[std::size_t(r)]) ++out[std::size_t(v.node_of_gpu[std::size_t(r)])];
  return out;
}

// The nodes of each leaf, in node order.
std::vector<std::vector<int>> nodes_of_leaves(const ClusterView& v) {
  std::vector<std::vector<int>> out(std::size_t(v.leaves));
  for (std::size_t n = 0; n < v.leaf_of_node.size(); ++n)
    out[std::size_t(v.leaf_of_node[n])].push_back(int(n));
  return out;
}

// Takes free GPUs leaf by leaf in `leaf_order`, inside a leaf the fullest nodes first (the node
// order breaks ties), until `gpus` are taken.
std::optional<std::vector<int>> take(const ClusterState& state, const std::vector<int>& leaf_order,
                                     int gpus) {
  const ClusterView& v = *state.view;
  const std::vector<int> free = free_per_node(state);
  const std::vector<std::vector<int>> leaves = nodes_of_leaves(v);
  std::vector<int> out;
  for (int leaf : leaf_order) {
    std::vector<int> nodes = leaves[std::size_t(leaf)];
    std::stable_sort(nodes.begin(), nodes.end(),
                     [&](int a, int b) { return free[std::size_t(a)] > free[std::size_t(b)]; });
    for (int n : nodes)
      for (int r = v.first_gpu[std::size_t(n)];
           r < v.first_gpu[std::size_t(n)] + v.gpus_of_node[std::size_t(n)]; ++r) {
        if (int(out.size()) == gpus) return out;
        if (state.free[std::size_t(r)]) out.push_back(r);
      }
  }
  if (int(out.size()) == gpus) return out;
  return std::nullopt;
}

std::vector<int> free_per_leaf(const ClusterState& state) {
  const std::vector<int> free = free_per_node(state);
  std::vector<int> out(std::size_t(state.view->leaves), 0);
  for (std::size_t n = 0; n < free.size(); ++n)
    out[std::size_t(state.view->leaf_of_node[n])] += free[n];
  return out;
}

// Leaves by `key` ascending, then by free GPUs descending, then by id.
template <typename Key> std::vector<int> leaves_by(const ClusterState& state, Key key) {
  const std::vector<int> free = free_per_leaf(state);
  std::vector<int> order(free.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (key(a) != key(b)) return key(a) < key(b);
    return free[std::size_t(a)] > free[std::size_t(b)];
  });
  return order;
}

// How many running jobs cross each leaf.
std::vector<int> crossers(const ClusterState& state) {
  std::vector<int> out(std::size_t(state.view->leaves), 0);
  for (const std::vector<int>& job : state.running)
    for (int leaf : crossed_leaves(*state.view, job)) ++out[std::size_t(leaf)];
  return out;
}

} // namespace

int ClusterState::free_count() const {
  return static_cast<int>(std::count(free.begin(), free.end(), char(1)));
}

ClusterView view_of(const topo::Topology& topology) {
  ClusterView v;
  const std::vector<topo::VertexId>& gpus = topology.gpus();
  v.gpus = static_cast<int>(gpus.size());
  std::map<topo::VertexId, int> rank_of;
  for (std::size_t r = 0; r < gpus.size(); ++r) rank_of[gpus[r]] = int(r);
  v.node_of_gpu.assign(gpus.size(), 0);
  v.local_of_gpu.assign(gpus.size(), 0);
  std::map<topo::VertexId, int> leaf_id;
  for (std::size_t n = 0; n < topology.nodes().size(); ++n) {
    const topo::Node& node = topology.nodes()[n];
    v.first_gpu.push_back(node.gpus.empty() ? 0 : rank_of.at(node.gpus.front()));
    v.gpus_of_node.push_back(int(node.gpus.size()));
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
      const int r = rank_of.at(node.gpus[g]);
      v.node_of_gpu[std::size_t(r)] = int(n);
      v.local_of_gpu[std::size_t(r)] = int(g);
    }
    std::vector<int> switches;
    for (topo::VertexId nic : node.nics)
      for (topo::LinkId l : topology.out_links(nic)) {
        const topo::VertexId dst = topology.link(l).dst;
        if (topology.vertex(dst).kind != topo::VertexKind::network_switch) continue;
        const int id = leaf_id.emplace(dst, int(leaf_id.size())).first->second;
        switches.push_back(id);
      }
    std::sort(switches.begin(), switches.end());
    switches.erase(std::unique(switches.begin(), switches.end()), switches.end());
    v.switches_of_node.push_back(switches);
  }
  v.leaves = static_cast<int>(leaf_id.size());
  for (std::size_t n = 0; n < v.switches_of_node.size(); ++n) {
    // A node without NICs (a single-node cluster) is its own group.
    int leaf = -1;
    if (!topology.nodes()[n].nics.empty()) {
      const topo::VertexId nic = topology.nodes()[n].nics.front();
      for (topo::LinkId l : topology.out_links(nic))
        if (auto it = leaf_id.find(topology.link(l).dst); it != leaf_id.end()) {
          leaf = it->second;
          break;
        }
    }
    v.leaf_of_node.push_back(leaf >= 0 ? leaf : v.leaves++);
  }
  // Oversubscription: a leaf's NIC-facing capacity against its links to higher tiers.
  v.oversubscribed.assign(std::size_t(v.leaves), 0);
  for (const auto& [vertex, id] : leaf_id) {
    double down = 0;
    double up = 0;
    const int tier = topology.vertex(vertex).tier;
    for (topo::LinkId l : topology.out_links(vertex)) {
      const topo::Link& link = topology.link(l);
      const topo::Vertex& dst = topology.vertex(link.dst);
      if (link.link_class == topo::LinkClass::nic) down += link.bandwidth_bytes_per_second;
      if (dst.kind == topo::VertexKind::network_switch && dst.tier > tier)
        up += link.bandwidth_bytes_per_second;
    }
    v.oversubscribed[std::size_t(id)] = up > 0 && down > up * (1 + 1e-9);
  }
  for (const topo::Vertex& vertex : topology.vertices())
    if (vertex.kind == topo::VertexKind::network_switch && (vertex.tier >= 2 || vertex.tier < 0))
      v.shared_upper_fabric = true;
  return v;
}

std::vector<int> crossed_leaves(const ClusterView& view, const std::vector<int>& gpus) {
  std::vector<int> leaves;
  for (int r : gpus)
    leaves.push_back(view.leaf_of_node[std::size_t(view.node_of_gpu[std::size_t(r)])]);
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  if (leaves.size() <= 1) leaves.clear();
  return leaves;
}

std::optional<std::vector<int>> PackedPlacement::place(const ClusterState& state, int gpus) const {
  const ClusterView& v = *state.view;
  // Best fit on one node: the fullest node that holds it.
  const std::vector<int> node_free = free_per_node(state);
  int best = -1;
  for (std::size_t n = 0; n < node_free.size(); ++n)
    if (node_free[n] >= gpus && (best < 0 || node_free[n] < node_free[std::size_t(best)]))
      best = int(n);
  if (best >= 0) {
    std::vector<int> out;
    for (int r = v.first_gpu[std::size_t(best)]; int(out.size()) < gpus; ++r)
      if (state.free[std::size_t(r)]) out.push_back(r);
    return out;
  }
  // Else best fit on one leaf, else the leaves with the most free GPUs first.
  const std::vector<int> leaf_free = free_per_leaf(state);
  int leaf = -1;
  for (std::size_t l = 0; l < leaf_free.size(); ++l)
    if (leaf_free[l] >= gpus && (leaf < 0 || leaf_free[l] < leaf_free[std::size_t(leaf)]))
      leaf = int(l);
  if (leaf >= 0) return take(state, {leaf}, gpus);
  return take(state, leaves_by(state, [](int) { return 0; }), gpus);
}

std::optional<std::vector<int>> SpreadPlacement::place(const ClusterState& state, int gpus) const {
  const ClusterView& v = *state.view;
  if (state.free_count() < gpus) return std::nullopt;
  // Nodes leaf by leaf in turn: the first node of every leaf, then the second...
  const std::vector<std::vector<int>> leaves = nodes_of_leaves(v);
  std::vector<int> order;
  for (std::size_t i = 0; order.size() < v.first_gpu.size(); ++i)
    for (const std::vector<int>& nodes : leaves)
      if (i < nodes.size()) order.push_back(nodes[i]);
  std::vector<char> taken(std::size_t(v.gpus), 0);
  std::vector<int> out;
  while (int(out.size()) < gpus)
    for (int n : order) {
      if (int(out.size()) == gpus) break;
      for (int r = v.first_gpu[std::size_t(n)];
           r < v.first_gpu[std::size_t(n)] + v.gpus_of_node[std::size_t(n)]; ++r)
        if (state.free[std::size_t(r)] && !taken[std::size_t(r)]) {
          taken[std::size_t(r)] = 1;
          out.push_back(r);
          break;
        }
    }
  return out;
}

std::optional<std::vector<int>> RailAlignedPlacement::place(const ClusterState& state,
                                                            int gpus) const {
  const ClusterView& v = *state.view;
  const int per_node = *std::min_element(v.gpus_of_node.begin(), v.gpus_of_node.end());
  int k = std::min(gpus, per_node);
  while (gpus % k != 0) --k;
  const int nodes_needed = gpus / k;
  const std::vector<std::vector<int>> leaves = nodes_of_leaves(v);
  std::optional<std::vector<int>> best;
  std::size_t best_leaves = SIZE_MAX;
  for (int s = 0; s + k <= per_node; s += k) {
    auto fits = [&](int n) {
      for (int i = s; i < s + k; ++i)
        if (!state.free[std::size_t(v.first_gpu[std::size_t(n)] + i)]) return false;
      return true;
    };
    std::vector<std::vector<int>> eligible(leaves.size());
    for (std::size_t l = 0; l < leaves.size(); ++l)
      for (int n : leaves[l])
        if (fits(n)) eligible[l].push_back(n);
    // Best-fit leaf, else leaves with the most eligible nodes first.
    int fit = -1;
    for (std::size_t l = 0; l < leaves.size(); ++l)
      if (int(eligible[l].size()) >= nodes_needed &&
          (fit < 0 || eligible[l].size() < eligible[std::size_t(fit)].size()))
        fit = int(l);
    std::vector<int> order(leaves.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return eligible[std::size_t(a)].size() > eligible[std::size_t(b)].size();
    });
    if (fit >= 0) order = {fit};
    std::vector<int> out;
    std::vector<int> used_leaves;
    for (int l : order) {
      for (int n : eligible[std::size_t(l)]) {
        if (int(out.size()) == gpus) break;
        for (int i = s; i < s + k; ++i) out.push_back(v.first_gpu[std::size_t(n)] + i);
        if (used_leaves.empty() || used_leaves.back() != l) used_leaves.push_back(l);
      }
      if (int(out.size()) == gpus) break;
    }
    if (int(out.size()) == gpus && used_leaves.size() < best_leaves) {
      best = out;
      best_leaves = used_leaves.size();
    }
  }
  return best;
}

std::optional<std::vector<int>> NetworkAwarePlacement::place(const ClusterState& state,
                                                             int gpus) const {
  const ClusterView& v = *state.view;
  const std::vector<int> crossing = crossers(state);
  std::vector<std::optional<std::vector<int>>> candidates;
  candidates.push_back(PackedPlacement().place(state, gpus));
  candidates.push_back(RailAlignedPlacement().place(state, gpus));
  candidates.push_back(
      take(state, leaves_by(state, [&](int l) { return crossing[std::size_t(l)]; }), gpus));
  std::optional<std::vector<int>> best;
  long best_score = 0;
  for (const auto& candidate : candidates) {
    if (!candidate) continue;
    long score = 0;
    for (int leaf : crossed_leaves(v, *candidate))
      if (v.oversubscribed[std::size_t(leaf)]) score += 1 + crossing[std::size_t(leaf)];
    if (!best || score < best_score) {
      best = candidate;
      best_score = score;
    }
  }
  return best;
}

std::unique_ptr<Placement> make_placement(std::string_view name) {
  if (name == "packed") return std::make_unique<PackedPlacement>();
  if (name == "spread") return std::make_unique<SpreadPlacement>();
  if (name == "rail_aligned") return std::make_unique<RailAlignedPlacement>();
  if (name == "network_aware") return std::make_unique<NetworkAwarePlacement>();
  throw InputError("/workload/scheduler/placement",
                   "unknown placement \"" + std::string(name) +
                       "\"; use packed, spread, rail_aligned or network_aware");
}

} // namespace ddlsim::jobs
