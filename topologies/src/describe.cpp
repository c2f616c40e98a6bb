// summarize(), print_summary() and write_dot().
#include "ddlsim/topologies/describe.hpp"

#include "bisection.hpp"
#include "ddlsim/topologies/router.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace ddlsim::topo {
namespace {

constexpr std::size_t kQueriesPerCacheFlush = 1024;

double out_bandwidth(const Topology& topology, VertexId v, LinkClass link_class) {
  double sum = 0;
  for (LinkId l : topology.out_links(v))
    if (topology.link(l).link_class == link_class)
      sum += topology.link(l).bandwidth_bytes_per_second;
  return sum;
}

// Per-GPU injection bandwidth of every node, one entry per distinct (preset, figures): a
// preset whose nodes were given different numbers gets "preset [from node i]" entries.
void injection_bandwidths(const Topology& topology, TopologySummary& summary) {
  struct Variant {
    std::string preset, key;
    double intra, inter;
  };
  std::vector<Variant> variants;
  for (std::size_t i = 0; i < topology.nodes().size(); ++i) {
    const Node& node = topology.nodes()[i];
    if (node.gpus.empty()) continue;
    double intra = out_bandwidth(topology, node.gpus.front(), LinkClass::nvlink);
    if (intra == 0) intra = out_bandwidth(topology, node.gpus.front(), LinkClass::pcie);
    double nic = 0;
    for (VertexId v : node.nics) nic += out_bandwidth(topology, v, LinkClass::nic);
    const double inter = nic / static_cast<double>(node.gpus.size());
    const auto same = std::find_if(variants.begin(), variants.end(), [&](const Variant& v) {
      return v.preset == node.preset && v.intra == intra && v.inter == inter;
    });
    if (same != variants.end()) continue;
    const bool first = std::none_of(variants.begin(), variants.end(),
                                    [&](const Variant& v) { return v.preset == node.preset; });
    variants.push_back(Variant{
        node.preset, first ? node.preset : node.preset + " [from node " + std::to_string(i) + "]",
        intra, inter});
  }
  for (const Variant& v : variants) {
    summary.gpu_intra_node_bytes_per_second[v.key] = v.intra;
    summary.gpu_inter_node_bytes_per_second[v.key] = v.inter;
  }
}

// splitmix64: a fixed, portable sequence for sampling GPU pairs.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void path_figures(const Topology& topology, TopologySummary& summary) {
  const std::vector<VertexId>& gpus = topology.gpus();
  if (gpus.size() < 2) {
    summary.ecmp_first_to_last = gpus.empty() ? 0 : 1;
    return;
  }
  Router router(topology);
  std::size_t queries = 0;
  auto visit = [&](VertexId a, VertexId b) {
    const std::vector<Path>& paths = router.paths(a, b);
    summary.ecmp_max_sampled = std::max(summary.ecmp_max_sampled, paths.size());
    for (const Path& path : paths)
      summary.diameter_hops = std::max(summary.diameter_hops, static_cast<int>(path.size()));
    ++summary.gpu_pairs_examined;
    if (++queries % kQueriesPerCacheFlush == 0) router.clear_cache();
  };
  const std::size_t n = gpus.size();
  if (n <= kExhaustivePairGpus) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) visit(gpus[i], gpus[j]);
  } else {
    summary.pairs_sampled = true;
    for (std::uint64_t p = 0; p < kSampledPairs; ++p) {
      const std::uint64_t r = mix(p);
      const std::size_t a = static_cast<std::size_t>(r % n);
      std::size_t b = static_cast<std::size_t>((r >> 32) % (n - 1));
      if (b >= a) ++b; // any GPU but a
      visit(gpus[a], gpus[b]);
    }
  }
  summary.ecmp_first_to_last = router.paths(gpus.front(), gpus.back()).size();
}

std::string dot_id(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* dot_shape(VertexKind kind) {
  switch (kind) {
  case VertexKind::gpu:
    return "box";
  case VertexKind::host:
    return "house";
  case VertexKind::nic:
    return "ellipse";
  case VertexKind::pcie_switch:
    return "diamond";
  case VertexKind::nvswitch:
    return "hexagon";
  case VertexKind::network_switch:
    return "octagon";
  }
  return "ellipse";
}

// "25 Gb/s", or "102.4 Tb/s" from 1000 Gb/s on; "300 GB/s", or "12.8 TB/s" from 1000 GB/s on.
std::string bits_rate(double bytes_per_second) {
  if (bytes_per_second * 8 < 1e12) return format_gbps(bytes_per_second);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g Tb/s", bytes_per_second * 8 / 1e12);
  return buf;
}
std::string bytes_rate(double bytes_per_second) {
  if (bytes_per_second < 1e12) return format_gigabytes_per_second(bytes_per_second);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g TB/s", bytes_per_second / 1e12);
  return buf;
}

std::string bandwidth_label(const Link& link) {
  // Networks are quoted in bits, GPU links in bytes, as their datasheets do.
  return link.link_class == LinkClass::nic || link.link_class == LinkClass::fabric
             ? format_gbps(link.bandwidth_bytes_per_second)
             : format_gigabytes_per_second(link.bandwidth_bytes_per_second);
}

} // namespace

TopologySummary summarize(const Topology& topology) {
  TopologySummary summary;
  for (const Vertex& v : topology.vertices())
    ++summary.vertices_per_kind[std::string(to_string(v.kind))];
  for (const Link& l : topology.links())
    ++summary.links_per_class[std::string(to_string(l.link_class))];
  summary.nodes = topology.nodes().size();
  injection_bandwidths(topology, summary);
  summary.bisection_bytes_per_second = detail::bisection_bytes_per_second(topology);
  path_figures(topology, summary);
  return summary;
}

void print_summary(const TopologySummary& summary, std::ostream& out) {
  auto counts = [&](const std::map<std::string, std::size_t>& map) {
    std::size_t total = 0;
    std::string parts;
    for (const auto& [name, count] : map) {
      total += count;
      parts += (parts.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    return std::to_string(total) + " (" + parts + ")";
  };
  out << "nodes:                 " << summary.nodes << "\n";
  out << "vertices:              " << counts(summary.vertices_per_kind) << "\n";
  out << "links (directed):      " << counts(summary.links_per_class) << "\n";
  out << "per-GPU injection bandwidth, per direction:\n";
  for (const auto& [preset, intra] : summary.gpu_intra_node_bytes_per_second) {
    const auto inter = summary.gpu_inter_node_bytes_per_second.find(preset);
    out << "  " << preset << ": intra-node " << bytes_rate(intra) << ", inter-node "
        << bits_rate(inter == summary.gpu_inter_node_bytes_per_second.end() ? 0 : inter->second)
        << "\n";
  }
  out << "bisection bandwidth:   ";
  if (summary.nodes < 2)
    out << "n/a (one node)\n";
  else
    out << bits_rate(summary.bisection_bytes_per_second) << " per direction ("
        << bytes_rate(summary.bisection_bytes_per_second)
        << "), first half of the nodes to the second\n";
  const std::string over = std::to_string(summary.gpu_pairs_examined) + " GPU pair" +
                           (summary.gpu_pairs_examined == 1 ? "" : "s") +
                           (summary.pairs_sampled ? ", sampled" : ", all");
  out << "diameter:              " << summary.diameter_hops << " links (" << over << ")\n";
  out << "ECMP paths:            " << summary.ecmp_first_to_last
      << " from the first GPU to the last; at most " << summary.ecmp_max_sampled << " (" << over
      << ")\n";
}

void write_dot(const Topology& topology, std::ostream& out) {
  out << "graph topology {\n  graph [overlap=false, splines=true];\n  node [fontsize=10];\n";
  std::vector<std::vector<VertexId>> members(topology.nodes().size());
  for (VertexId v = 0; v < topology.vertex_count(); ++v)
    if (topology.vertex(v).node >= 0)
      members[static_cast<std::size_t>(topology.vertex(v).node)].push_back(v);
  auto declare = [&](VertexId v, const char* indent) {
    out << indent << dot_id(topology.vertex(v).name)
        << " [shape=" << dot_shape(topology.vertex(v).kind) << "];\n";
  };
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string label = "node" + std::to_string(i) + " (" + topology.nodes()[i].preset + ")";
    out << "  subgraph cluster_node" << i << " {\n    label=" << dot_id(label) << ";\n";
    for (VertexId v : members[i]) declare(v, "    ");
    out << "  }\n";
  }
  for (VertexId v = 0; v < topology.vertex_count(); ++v)
    if (topology.vertex(v).node < 0) declare(v, "  ");
  for (LinkId id = 0; id < topology.link_count(); ++id) {
    const Link& link = topology.link(id);
    if (link.reverse < id) continue; // one edge per duplex link
    out << "  " << dot_id(topology.vertex(link.src).name) << " -- "
        << dot_id(topology.vertex(link.dst).name) << " [label=" << dot_id(bandwidth_label(link))
        << ", class=" << to_string(link.link_class) << "];\n";
  }
  out << "}\n";
}

} // namespace ddlsim::topo
