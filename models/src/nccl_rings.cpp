// NCCL's rings inside a node whose GPUs are joined directly (NVLink mesh), as its search finds
// them (NCCL 2.30.7 src/graph/search.cc, ncclTopoSearchRec / ncclTopoSearchNextGpuSort): a ring
// goes from GPU to GPU only over direct links, each ring takes its speed from every link it
// uses, the next GPU is tried in order of the bandwidth left towards it, and the search keeps the
// solution with the most rings at that speed. On the DGX-1 hybrid cube-mesh this finds the rings
// NCCL prints there (NCCL_DEBUG=INFO "Ring 00 : 0 3 2 1 5 6 7 4" and its reverse over the doubled
// NVLinks, twice each, and "0 1 3 7 5 4 6 2" and its reverse over the single ones): six rings
// that load every NVLink of every GPU evenly.
//
// What it does not model: NCCL's search over several speeds and its time limit (the speed here
// is one NVLink, the smallest direct link; the search stops at the node's bound or after
// kSearchBudget tries), PCIe-only or NVSwitch nodes (every order is as good: no rings, so the
// local ranks in order), and nodes whose local-rank order already goes over direct links only
// (all-to-all NVLink boards: kept in order, NCCL's orders there are not modelled).
#include "ddlsim/models/nccl_model.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace ddlsim::models {
namespace {

// A bound on the search's work, as NCCL bounds its own (NCCL_SEARCH_GLOBAL_TIMEOUT): far above
// what an 8-GPU mesh needs (a few dozen tries).
constexpr long kSearchBudget = 200'000;
// NCCL's channel limit (MAXCHANNELS / 2 rings before duplication, src/include/device.h).
constexpr std::size_t kMaxRings = 32;

using Capacity = std::vector<std::vector<double>>; // [from][to] direct GPU-to-GPU bytes/s

Capacity direct_capacity(const topo::Topology& topology, const topo::Node& node) {
  const std::size_t n = node.gpus.size();
  Capacity cap(n, std::vector<double>(n, 0.0));
  for (std::size_t a = 0; a < n; ++a)
    for (topo::LinkId id : topology.out_links(node.gpus[a])) {
      const topo::Link& link = topology.link(id);
      const topo::Vertex& to = topology.vertex(link.dst);
      if (to.kind != topo::VertexKind::gpu || to.node != topology.vertex(node.gpus[a]).node)
        continue;
      cap[a][static_cast<std::size_t>(to.local)] += link.bandwidth_bytes_per_second;
    }
  return cap;
}

// Every directed Hamiltonian cycle from GPU 0 over links of at least `speed`, in the order
// NCCL's search tries them (next GPU by bandwidth towards it, then index).
std::vector<std::vector<int>> cycles(const Capacity& cap, double speed, long& budget) {
  const int n = static_cast<int>(cap.size());
  std::vector<std::vector<int>> found;
  std::vector<int> path{0};
  std::vector<bool> used(static_cast<std::size_t>(n), false);
  used[0] = true;
  std::function<void()> extend = [&] {
    if (--budget < 0) return;
    const auto a = static_cast<std::size_t>(path.back());
    if (static_cast<int>(path.size()) == n) {
      if (cap[a][0] >= speed) found.push_back(path);
      return;
    }
    std::vector<int> next;
    for (int b = 0; b < n; ++b)
      if (!used[static_cast<std::size_t>(b)] && cap[a][static_cast<std::size_t>(b)] >= speed)
        next.push_back(b);
    std::stable_sort(next.begin(), next.end(), [&](int x, int y) {
      return cap[a][static_cast<std::size_t>(x)] > cap[a][static_cast<std::size_t>(y)];
    });
    for (int b : next) {
      used[static_cast<std::size_t>(b)] = true;
      path.push_back(b);
      extend();
      path.pop_back();
      used[static_cast<std::size_t>(b)] = false;
    }
  };
  extend();
  return found;
}

} // namespace

std::vector<std::vector<int>> nccl_node_rings(const topo::Topology& topology) {
  if (topology.nodes().empty()) return {};
  const topo::Node& node = topology.nodes().front();
  const std::size_t n = node.gpus.size();
  if (n < 3) return {};
  Capacity cap = direct_capacity(topology, node);
  // Keep the local order where it already goes over direct links only.
  bool in_order_direct = true;
  double speed = 0; // one link: the smallest direct connection
  for (std::size_t a = 0; a < n; ++a) {
    in_order_direct = in_order_direct && cap[a][(a + 1) % n] > 0;
    for (double c : cap[a])
      if (c > 0) speed = speed == 0 ? c : std::min(speed, c);
  }
  if (in_order_direct || speed == 0) return {};
  long budget = kSearchBudget;
  const std::vector<std::vector<int>> all = cycles(cap, speed, budget);
  if (all.empty()) return {};
  // The most rings any GPU's links can carry at this speed.
  std::size_t bound = kMaxRings;
  for (std::size_t a = 0; a < n; ++a) {
    double out = 0;
    for (double c : cap[a]) out += c;
    bound = std::min(bound, static_cast<std::size_t>(out / speed));
  }
  std::vector<std::vector<int>> best, chosen;
  auto fits = [&](const std::vector<int>& ring) {
    for (std::size_t i = 0; i < n; ++i)
      if (cap[std::size_t(ring[i])][std::size_t(ring[(i + 1) % n])] < speed) return false;
    return true;
  };
  auto take = [&](const std::vector<int>& ring, double sign) {
    for (std::size_t i = 0; i < n; ++i)
      cap[std::size_t(ring[i])][std::size_t(ring[(i + 1) % n])] -= sign * speed;
  };
  // Rings in the order found, each as often as it fits (NCCL duplicates a ring that fits
  // again); stop at the bound.
  std::function<bool(std::size_t)> choose = [&](std::size_t start) {
    if (chosen.size() > best.size()) best = chosen;
    if (best.size() >= bound || --budget < 0) return true;
    for (std::size_t i = start; i < all.size(); ++i) {
      if (!fits(all[i])) continue;
      take(all[i], 1);
      chosen.push_back(all[i]);
      if (choose(i)) return true;
      chosen.pop_back();
      take(all[i], -1);
    }
    return false;
  };
  choose(0);
  return best;
}

} // namespace ddlsim::models
