// The links of a job and the split of a group by them (job_links.hpp).
#include "job_links.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace ddlsim::jobs {

std::vector<std::int64_t> job_resources(const topo::Topology& topology, topo::Router& router,
                                        const std::vector<int>& gpus) {
  std::vector<std::int64_t> out;
  auto add = [&out](const std::vector<topo::Path>& paths) {
    for (const topo::Path& path : paths) out.insert(out.end(), path.begin(), path.end());
  };
  auto nic_count = [&topology](int rank) {
    const topo::Vertex& gpu = topology.vertex(topology.gpus()[std::size_t(rank)]);
    const topo::Node& node = topology.nodes()[std::size_t(gpu.node)];
    const auto local = std::size_t(gpu.local);
    return local < node.gpu_nics.size() ? std::max<std::size_t>(1, node.gpu_nics[local].size())
                                        : std::size_t(1);
  };
  for (int a : gpus) {
    for (int b : gpus) {
      if (a == b) continue;
      add(router.paths(topology.gpus()[std::size_t(a)], topology.gpus()[std::size_t(b)]));
      const std::size_t channels = std::lcm(nic_count(a), nic_count(b));
      for (std::size_t c = 0; c < channels; ++c) add(router.channel_paths(a, b, std::uint16_t(c)));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  if (gpus.size() > 1)
    for (int r : gpus) out.push_back(-1 - topology.vertex(topology.gpus()[std::size_t(r)]).node);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::vector<std::size_t>>
resource_components(const std::vector<const std::vector<std::int64_t>*>& resources) {
  std::vector<std::size_t> parent(resources.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&parent](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::int64_t, std::size_t> owner;
  for (std::size_t i = 0; i < resources.size(); ++i)
    for (std::int64_t resource : *resources[i]) {
      const auto [it, fresh] = owner.emplace(resource, i);
      if (!fresh) {
        const std::size_t a = find(i), b = find(it->second);
        parent[std::max(a, b)] = std::min(a, b); // the root is the set's first member
      }
    }
  std::vector<std::vector<std::size_t>> out;
  std::map<std::size_t, std::size_t> set_of_root;
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const auto [it, fresh] = set_of_root.emplace(find(i), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(i);
  }
  return out;
}

} // namespace ddlsim::jobs
