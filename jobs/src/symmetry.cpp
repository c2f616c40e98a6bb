// Twin nodes and leaves of a topology, and the exact relabelling of a group onto them
// (symmetry.hpp).
#include "ddlsim/jobs/symmetry.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <string>

namespace ddlsim::jobs {
namespace {

using Signature = std::vector<std::int64_t>;

// A link's properties (both directions: links are duplex, and each direction has its own
// buffer).
void add_link(Signature& out, const topo::Topology& t, topo::LinkId id) {
  for (const topo::Link* l : {&t.link(id), &t.link(t.link(id).reverse)}) {
    out.push_back(std::bit_cast<std::int64_t>(l->bandwidth_bytes_per_second));
    out.push_back(l->latency);
    out.push_back(static_cast<std::int64_t>(l->buffer_bytes));
    out.push_back(static_cast<std::int64_t>(l->link_class));
  }
}

void add_vertex(Signature& out, const topo::Vertex& v) {
  out.push_back(static_cast<std::int64_t>(v.kind));
  out.push_back(v.local);
  out.push_back(v.tier);
  out.push_back(v.nvls);
}

// Interns signatures: equal signatures get equal small ids.
class Interner {
public:
  int id(const Signature& s) { return ids_.emplace(s, int(ids_.size())).first->second; }

private:
  std::map<Signature, int> ids_;
};

} // namespace

FabricSymmetry::FabricSymmetry(const topo::Topology& topology, topo::Router& router,
                               const std::vector<int>& algorithm_node_of_gpu)
    : topology_(topology), router_(router) {
  const std::size_t nodes = topology.nodes().size();
  const std::vector<topo::VertexId>& gpus = topology.gpus();
  if (nodes == 0) {
    enabled_ = false;
    return;
  }
  std::vector<std::vector<topo::VertexId>> members(nodes);
  for (topo::VertexId v = 0; v < topology.vertex_count(); ++v)
    if (const int n = topology.vertex(v).node; n >= 0) members[std::size_t(n)].push_back(v);
  node_of_gpu_.assign(gpus.size(), 0);
  first_gpu_.assign(nodes, -1);
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    const int n = topology.vertex(gpus[r]).node;
    node_of_gpu_[r] = n;
    if (first_gpu_[std::size_t(n)] < 0) first_gpu_[std::size_t(n)] = int(r);
    // Ranks must be node-major, and algorithms must see nodes as the topology does.
    if (int(r) != first_gpu_[std::size_t(n)] + topology.vertex(gpus[r]).local ||
        (r < algorithm_node_of_gpu.size() && algorithm_node_of_gpu[r] != n))
      enabled_ = false;
  }
  if (algorithm_node_of_gpu.size() != gpus.size()) enabled_ = false;

  // Each node's shape (everything but the identity of the outside vertices it links to) and
  // those outside vertices, in the order its links reach them.
  Interner shapes, twins;
  std::vector<int> shape(nodes, 0);
  std::vector<std::vector<topo::VertexId>> outside(nodes);
  for (std::size_t n = 0; n < nodes; ++n) {
    const topo::Node& node = topology.nodes()[n];
    auto pos = [&](topo::VertexId v) -> std::int64_t {
      const auto it = std::lower_bound(members[n].begin(), members[n].end(), v);
      return it != members[n].end() && *it == v ? it - members[n].begin() : -1;
    };
    Signature s;
    for (topo::VertexId v : members[n]) {
      add_vertex(s, topology.vertex(v));
      for (topo::LinkId l : topology.out_links(v)) {
        const topo::VertexId dst = topology.link(l).dst;
        std::int64_t at = pos(dst);
        if (at < 0) {
          auto found = std::find(outside[n].begin(), outside[n].end(), dst);
          if (found == outside[n].end()) found = outside[n].insert(found, dst);
          at = -1 - (found - outside[n].begin());
        }
        s.push_back(at);
        add_link(s, topology, l);
      }
      s.push_back(-1'000'000); // end of the vertex's links
    }
    for (const std::vector<topo::VertexId>* list : {&node.gpus, &node.nics, &node.hosts}) {
      s.push_back(std::int64_t(list->size()));
      for (topo::VertexId v : *list) s.push_back(pos(v));
    }
    for (const std::vector<topo::VertexId>& nics : node.gpu_nics) {
      s.push_back(std::int64_t(nics.size()));
      for (topo::VertexId v : nics) s.push_back(pos(v));
    }
    s.push_back(std::int64_t(std::hash<std::string>()(node.preset + "\n" + node.gpu_model)));
    shape[n] = shapes.id(s);
    Signature twin{shape[n]};
    for (topo::VertexId v : outside[n]) twin.push_back(v);
    twin_class_.push_back(twins.id(twin));
  }
  class_nodes_.resize(std::size_t(*std::max_element(twin_class_.begin(), twin_class_.end()) + 1));
  for (std::size_t n = 0; n < nodes; ++n)
    class_nodes_[std::size_t(twin_class_[n])].push_back(int(n));

  // Leaves: network switches that are the only outside vertex of the nodes under them.
  std::map<topo::VertexId, int> leaf_of_vertex;
  std::vector<topo::VertexId> leaf_vertex;
  leaf_.assign(nodes, -1);
  leaf_slot_.assign(nodes, -1);
  for (std::size_t n = 0; n < nodes; ++n) {
    if (outside[n].size() != 1 ||
        topology.vertex(outside[n][0]).kind != topo::VertexKind::network_switch)
      continue;
    const auto [it, fresh] = leaf_of_vertex.emplace(outside[n][0], int(leaf_vertex.size()));
    if (fresh) {
      leaf_vertex.push_back(outside[n][0]);
      leaf_nodes_.emplace_back();
    }
    leaf_[n] = it->second;
    leaf_slot_[n] = int(leaf_nodes_[std::size_t(it->second)].size());
    leaf_nodes_[std::size_t(it->second)].push_back(int(n));
  }
  // A leaf's shape: itself, its links in order (to one of its nodes: which one and where in
  // it; elsewhere: the vertex itself) and the shapes of its nodes.
  Interner leaf_shapes;
  for (std::size_t l = 0; l < leaf_vertex.size(); ++l) {
    // Its `local` (its index in its tier) is a name, not a property.
    const topo::Vertex& leaf = topology.vertex(leaf_vertex[l]);
    Signature s{std::int64_t(leaf.kind), leaf.tier, leaf.nvls};
    for (topo::LinkId id : topology.out_links(leaf_vertex[l])) {
      const topo::VertexId dst = topology.link(id).dst;
      const int n = topology.vertex(dst).node;
      if (n >= 0 && leaf_[std::size_t(n)] == int(l)) {
        s.push_back(-1 - leaf_slot_[std::size_t(n)]);
        const auto& m = members[std::size_t(n)];
        s.push_back(std::lower_bound(m.begin(), m.end(), dst) - m.begin());
      } else {
        s.push_back(dst);
        s.push_back(0);
      }
      add_link(s, topology, id);
    }
    for (int n : leaf_nodes_[l]) s.push_back(shape[std::size_t(n)]);
    leaf_class_.push_back(leaf_shapes.id(s));
  }
  for (std::size_t l = 0; l < leaf_class_.size(); ++l) {
    if (std::size_t(leaf_class_[l]) >= class_leaves_.size())
      class_leaves_.resize(std::size_t(leaf_class_[l]) + 1);
    class_leaves_[std::size_t(leaf_class_[l])].push_back(int(l));
  }
}

bool FabricSymmetry::single_path(int a, int b) {
  if (a > b) std::swap(a, b); // routes are duplex: one answer serves both directions' sets
  const auto [it, fresh] = single_path_.emplace(std::make_pair(a, b), true);
  if (!fresh) return it->second;
  const topo::Node& na = topology_.nodes()[std::size_t(a)];
  const topo::Node& nb = topology_.nodes()[std::size_t(b)];
  // Channel c leaves GPU g by gpu_nics[g][c % size]: channels 0..lcm-1 meet every NIC pair.
  auto nic_count = [](const topo::Node& node, std::size_t g) {
    return g < node.gpu_nics.size() ? std::max<std::size_t>(1, node.gpu_nics[g].size()) : 1;
  };
  for (std::size_t i = 0; i < na.gpus.size() && it->second; ++i)
    for (std::size_t j = 0; j < nb.gpus.size() && it->second; ++j) {
      const int ri = first_gpu_[std::size_t(a)] + int(i), rj = first_gpu_[std::size_t(b)] + int(j);
      if (ri == rj) continue;
      const std::size_t channels = std::lcm(nic_count(na, i), nic_count(nb, j));
      for (std::size_t c = 0; c < channels && it->second; ++c)
        for (auto [s, d] : {std::pair{ri, rj}, std::pair{rj, ri}})
          if (router_.channel_paths(s, d, std::uint16_t(c)).size() != 1) it->second = false;
    }
  return it->second;
}

std::optional<std::vector<std::vector<int>>>
FabricSymmetry::canonical(const std::vector<const std::vector<int>*>& jobs) {
  if (!enabled_) return std::nullopt;
  std::vector<int> nodes;
  for (const std::vector<int>* job : jobs)
    for (int r : *job) nodes.push_back(node_of_gpu_[std::size_t(r)]);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());

  // Leaves first: the group's leaves of each leaf class, in order, onto that class's first.
  std::map<int, int> leaf_image;
  std::map<int, std::vector<int>> used_leaves; // per leaf class
  for (int n : nodes)
    if (const int l = leaf_[std::size_t(n)]; l >= 0)
      used_leaves[leaf_class_[std::size_t(l)]].push_back(l);
  for (auto& [cls, leaves] : used_leaves) {
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    std::sort(leaves.begin(), leaves.end());
    for (std::size_t k = 0; k < leaves.size(); ++k)
      leaf_image[leaves[k]] = class_leaves_[std::size_t(cls)][k];
  }
  // A node goes to the node in its place under its leaf's image; then, twin class by twin
  // class, the group's nodes in order onto the class's first nodes.
  std::map<int, int> image;
  std::map<int, std::vector<int>> by_class;
  for (int n : nodes) {
    int m = n;
    if (const int l = leaf_[std::size_t(n)]; l >= 0)
      m = leaf_nodes_[std::size_t(leaf_image[l])][std::size_t(leaf_slot_[std::size_t(n)])];
    by_class[twin_class_[std::size_t(m)]].push_back(m);
    image[n] = m;
  }
  std::map<int, int> twin_image;
  for (auto& [cls, members] : by_class) {
    std::sort(members.begin(), members.end());
    for (std::size_t k = 0; k < members.size(); ++k)
      twin_image[members[k]] = class_nodes_[std::size_t(cls)][k];
  }
  bool identity = true;
  int last = -1;
  for (int n : nodes) {
    const int m = twin_image[image[n]];
    if (m <= last) return std::nullopt; // the relabelling would reorder the group's nodes
    last = m;
    image[n] = m;
    identity &= m == n;
  }
  if (!identity)
    for (const std::vector<int>* job : jobs) {
      std::vector<int> job_nodes;
      for (int r : *job) job_nodes.push_back(node_of_gpu_[std::size_t(r)]);
      std::sort(job_nodes.begin(), job_nodes.end());
      job_nodes.erase(std::unique(job_nodes.begin(), job_nodes.end()), job_nodes.end());
      for (std::size_t i = 0; i < job_nodes.size(); ++i)
        for (std::size_t j = i; j < job_nodes.size(); ++j)
          if (!single_path(job_nodes[i], job_nodes[j])) return std::nullopt;
    }
  std::vector<std::vector<int>> out;
  for (const std::vector<int>* job : jobs) {
    std::vector<int>& placed = out.emplace_back();
    for (int r : *job) {
      const int n = node_of_gpu_[std::size_t(r)];
      placed.push_back(first_gpu_[std::size_t(image[n])] + (r - first_gpu_[std::size_t(n)]));
    }
  }
  return out;
}

} // namespace ddlsim::jobs
