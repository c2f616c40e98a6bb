// The custom fabric: explicit switches ("vertices") and links whose ends are those switches or
// node NICs named like "node0/nic0".
#include "fabric_common.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <charconv>
#include <unordered_map>

namespace ddlsim::topo::detail {
namespace {

constexpr std::size_t kMaxNicSuggestions = 4096;

// A link end: a custom switch (its index in spec.custom_vertices) or a NIC (global index).
struct Endpoint {
  bool is_nic = false;
  std::size_t index = 0;
};

class Resolver {
public:
  Resolver(const FabricSpec& spec, const ClusterShape& shape, const std::string& where)
      : spec_(spec), shape_(shape) {
    std::size_t first = 0;
    for (int nics : shape.nics_per_node) {
      first_nic_.push_back(first);
      first += static_cast<std::size_t>(nics);
    }
    for (std::size_t i = 0; i < spec.custom_vertices.size(); ++i) {
      const std::string& name = spec.custom_vertices[i].name;
      const std::string at = where + "/vertices/" + std::to_string(i) + "/name";
      if (name.empty()) throw InputError(at, "a vertex name cannot be empty");
      if (name.find('/') != std::string::npos)
        throw InputError(at, "custom vertex names cannot contain \"/\", which node vertex names "
                             "such as \"node0/nic0\" use");
      if (!index_.emplace(name, i).second)
        throw InputError(at, "duplicate vertex name \"" + name + "\"");
    }
  }

  Endpoint resolve(const std::string& name, const std::string& at) const {
    if (auto it = index_.find(name); it != index_.end()) return Endpoint{false, it->second};
    int node = -1, local = -1;
    std::string kind;
    if (parse_node_vertex(name, node, kind, local)) {
      const auto nodes = static_cast<int>(shape_.nics_per_node.size());
      if (node >= nodes)
        throw InputError(at, "\"" + name + "\": there is no node " + std::to_string(node) +
                                 " (the cluster has " + std::to_string(nodes) + " nodes)");
      if (kind != "nic" && kind_exists(kind))
        throw InputError(at, "\"" + name + "\" is a " + kind +
                                 "; a custom fabric links node NICs (\"node" +
                                 std::to_string(node) + "/nic0\"), not other node vertices");
      const int nics = shape_.nics_per_node[static_cast<std::size_t>(node)];
      if (kind == "nic" && local >= nics)
        throw InputError(at, "\"" + name + "\": node " + std::to_string(node) + " has " +
                                 std::to_string(nics) + " NIC" + (nics == 1 ? "" : "s"));
      if (kind == "nic")
        return Endpoint{true, first_nic_[static_cast<std::size_t>(node)] +
                                  static_cast<std::size_t>(local)};
    }
    throw InputError(at, "unknown vertex \"" + name + "\"" + did_you_mean(name, candidates()) +
                             "; links join the fabric's \"vertices\" and node NICs such as "
                             "\"node0/nic0\"");
  }

private:
  static bool kind_exists(const std::string& kind) {
    return kind == "gpu" || kind == "cpu" || kind == "pcie" || kind == "nvswitch";
  }

  // "node<digits>/<letters>[<digits>]"
  static bool parse_node_vertex(const std::string& name, int& node, std::string& kind, int& local) {
    if (!name.starts_with("node")) return false;
    const char* p = name.data() + 4;
    const char* end = name.data() + name.size();
    auto [after_node, ec] = std::from_chars(p, end, node);
    if (ec != std::errc() || node < 0 || after_node == end || *after_node != '/') return false;
    const char* kind_begin = after_node + 1;
    const char* q = kind_begin;
    while (q != end && *q >= 'a' && *q <= 'z') ++q;
    kind.assign(kind_begin, q);
    if (q == end) return kind == "cpu" || kind == "nvswitch";
    auto [after_local, ec2] = std::from_chars(q, end, local);
    return ec2 == std::errc() && local >= 0 && after_local == end;
  }

  std::vector<std::string> candidates() const {
    std::vector<std::string> names;
    for (const CustomVertex& v : spec_.custom_vertices) names.push_back(v.name);
    for (std::size_t node = 0; node < shape_.nics_per_node.size(); ++node)
      for (int n = 0; n < shape_.nics_per_node[node] && names.size() < kMaxNicSuggestions; ++n)
        names.push_back("node" + std::to_string(node) + "/nic" + std::to_string(n));
    return names;
  }

  const FabricSpec& spec_;
  const ClusterShape& shape_;
  std::vector<std::size_t> first_nic_;
  std::unordered_map<std::string, std::size_t> index_;
};

std::string link_path(const std::string& where, std::size_t i) {
  return where + "/links/" + std::to_string(i);
}

} // namespace

void check_custom_fabric(const FabricSpec& spec, const ClusterShape& shape,
                         const std::string& where) {
  const Resolver resolver(spec, shape, where);
  for (std::size_t i = 0; i < spec.custom_links.size(); ++i) {
    const CustomLink& link = spec.custom_links[i];
    const Endpoint from = resolver.resolve(link.from, link_path(where, i) + "/from");
    const Endpoint to = resolver.resolve(link.to, link_path(where, i) + "/to");
    if (from.is_nic == to.is_nic && from.index == to.index)
      throw InputError(link_path(where, i), "a link cannot join \"" + link.from + "\" to itself");
  }
}

void build_custom(FabricBuilder& b) {
  check_custom_fabric(b.spec, b.shape, b.where);
  const Resolver resolver(b.spec, b.shape, b.where);
  std::vector<VertexId> switches;
  for (std::size_t i = 0; i < b.spec.custom_vertices.size(); ++i) {
    const CustomVertex& v = b.spec.custom_vertices[i];
    switches.push_back(b.add_switch(v.name, v.tier, static_cast<int>(i)));
  }
  for (std::size_t i = 0; i < b.spec.custom_links.size(); ++i) {
    const CustomLink& link = b.spec.custom_links[i];
    const Endpoint ends[2] = {resolver.resolve(link.from, link_path(b.where, i) + "/from"),
                              resolver.resolve(link.to, link_path(b.where, i) + "/to")};
    const NicPort* nic = ends[0].is_nic   ? &b.nics[ends[0].index]
                         : ends[1].is_nic ? &b.nics[ends[1].index]
                                          : nullptr;
    auto vertex = [&](const Endpoint& e) {
      return e.is_nic ? b.nics[e.index].vertex : switches[e.index];
    };
    const double rate = link.bytes_per_second > 0 ? link.bytes_per_second
                        : nic                     ? nic->bytes_per_second
                                                  : b.link_rate;
    const Picoseconds latency = link.latency ? *link.latency
                                : nic        ? nic->latency
                                             : b.spec.link_latency;
    const std::uint64_t buffer = link.buffer_bytes > 0 ? link.buffer_bytes : b.spec.buffer_bytes;
    b.topology.add_duplex_link(vertex(ends[0]), vertex(ends[1]), rate, latency,
                               nic ? LinkClass::nic : LinkClass::fabric, buffer);
  }
}

} // namespace ddlsim::topo::detail
