// parse_cluster_spec: the "topology" section and its node groups. The fabric is parsed in
// spec_parser_fabric.cpp.
//
// {"nodes": [{"preset": "dgx-a100", "count": 4, "nic_bandwidth_gbps": 100, ...}, ...],
//  "fabric": {"type": "leaf_spine", ...}}
// A group with "preset" starts from that preset and overrides what it gives; a group without
// one must give gpus, gpu_model, intra, pcie_bandwidth_gbps, nic_bandwidth_gbps (when it has
// NICs) and nvlink_bandwidth_gbps (when intra uses NVLink). Bandwidths are Gb/s (10^9 bit/s),
// NVLink and PCIe included (25 GB/s = 200 Gb/s), latencies ns.
#include "ddlsim/topologies/spec_parser.hpp"

#include "node_builder.hpp"
#include "spec_parser_detail.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <array>

namespace ddlsim::topo {
namespace {

constexpr std::size_t kMaxNodeGroups = 4096;

struct IntraName {
  const char* name;
  IntraNode value;
};
constexpr std::array kIntraNames{
    IntraName{"nvlink_hybrid_cube_mesh", IntraNode::nvlink_hybrid_cube_mesh},
    IntraName{"nvswitch", IntraNode::nvswitch},
    IntraName{"nvlink_pairs", IntraNode::nvlink_pairs},
    IntraName{"pcie_only", IntraNode::pcie_only},
    IntraName{"nvlink_all_to_all", IntraNode::nvlink_all_to_all},
};

IntraNode parse_intra(const JsonValue& value) {
  std::vector<std::string> names;
  for (const IntraName& n : kIntraNames) names.emplace_back(n.name);
  const std::string chosen = value.choice(names);
  for (const IntraName& n : kIntraNames)
    if (chosen == n.name) return n.value;
  return IntraNode::pcie_only;
}

bool uses_mesh(IntraNode intra) {
  return intra == IntraNode::nvlink_hybrid_cube_mesh || intra == IntraNode::nvlink_pairs;
}

// Reads the fields of one node group over a preset (or over NodeSpec defaults).
class GroupReader {
public:
  GroupReader(JsonObject& object, bool from_preset) : object_(object), preset_(from_preset) {}

  // The value of `key`; when absent, an error if the group has no preset and `needed`.
  std::optional<JsonValue> get(std::string_view key, bool needed = true) {
    auto value = object_.optional(key);
    if (!value && needed && !preset_)
      throw InputError(object_.path(), "missing required key \"" + std::string(key) +
                                           "\" (a node group without \"preset\" must give it)");
    return value;
  }
  // Rejects `key` when present: it does not apply to this group's intra-node interconnect.
  void reject(std::string_view key, const std::string& why) {
    if (auto value = object_.optional(key)) value->fail("\"" + std::string(key) + "\" " + why);
  }

private:
  JsonObject& object_;
  bool preset_;
};

NodeGroup parse_group(const JsonValue& value) {
  JsonObject object = value.object();
  NodeGroup group;
  bool from_preset = false;
  if (auto v = object.optional("preset")) {
    const std::vector<std::string> names = node_preset_names();
    group.spec = *find_node_preset(v->choice(names));
    from_preset = true;
  }
  if (auto v = object.optional("count"))
    group.count = static_cast<int>(v->integer(1, kMaxTotalGpus));
  detail::read_node_fields(object, group.spec, from_preset);
  object.finish();
  detail::check_node_spec(group.spec, value.path());
  return group;
}

// "transport" and, under "socket", NCCL's socket thread and stream counts and the per-stream
// rate. Over a preset a new transport keeps the preset's socket figures (they only apply to
// socket); socket keys under another transport are errors.
void read_transport_fields(GroupReader& read, NodeSpec& s) {
  if (auto v = read.get("transport", false))
    s.transport = transport_from_name(v->choice(transport_names()));
  if (s.transport != Transport::socket) {
    const std::string why =
        "applies only to NCCL's socket transport; this group's transport is \"" +
        std::string(transport_name(s.transport)) + "\" (set \"transport\": \"socket\")";
    read.reject("socket_nthreads", why);
    read.reject("socket_nsocks_perthread", why);
    read.reject("socket_stream_gbps", why);
    return;
  }
  if (auto v = read.get("socket_nthreads", false))
    s.socket_nthreads = static_cast<int>(v->integer(0, kSocketMaxThreads));
  if (auto v = read.get("socket_nsocks_perthread", false))
    s.socket_nsocks_perthread = static_cast<int>(v->integer(1, kSocketMaxSockets));
  if (auto v = read.get("socket_stream_gbps", false))
    s.socket_stream_bytes_per_second =
        gbps_to_bytes_per_second(v->positive_number(kMaxBandwidthGbps));
}

} // namespace

namespace detail {

void read_node_fields(JsonObject& object, NodeSpec& s, bool from_preset) {
  GroupReader read(object, from_preset);
  const double max_gbps = kMaxBandwidthGbps;
  auto bandwidth = [&](const JsonValue& v) {
    return gbps_to_bytes_per_second(v.positive_number(max_gbps));
  };
  auto latency = [&](const JsonValue& v) { return ns_to_ps(v.number(0, kMaxLatencyNs)); };

  if (auto v = read.get("gpus")) s.gpus = static_cast<int>(v->integer(1, kMaxGpusPerNode));
  if (auto v = read.get("gpu_model")) s.gpu_model = v->non_empty_string();
  if (auto v = read.get("intra")) s.intra = parse_intra(*v);
  // A preset's in-switch reduction belongs to its NVSwitch; another interconnect has none.
  if (s.intra != IntraNode::nvswitch) s.nvls = false;

  if (s.intra == IntraNode::pcie_only) {
    const std::string why = "applies only to GPUs joined by NVLink; this group's intra is "
                            "\"pcie_only\"";
    read.reject("nvlink_bandwidth_gbps", why);
    read.reject("nvlink_latency_ns", why);
    read.reject("nvlinks_per_pair", why);
    read.reject("nvls", why);
  } else {
    if (auto v = read.get("nvlink_bandwidth_gbps")) s.nvlink_bytes_per_second = bandwidth(*v);
    if (auto v = read.get("nvlink_latency_ns", false)) s.nvlink_latency = latency(*v);
    if (uses_mesh(s.intra)) {
      if (auto v = read.get("nvlinks_per_pair", false))
        s.nvlinks_per_pair = static_cast<int>(v->integer(1, kMaxNvlinksPerPair));
    } else {
      read.reject("nvlinks_per_pair", "applies only to the NVLink cube-mesh (intra "
                                      "\"nvlink_hybrid_cube_mesh\" or \"nvlink_pairs\"); with "
                                      "\"nvswitch\" give the per-GPU nvlink_bandwidth_gbps, with "
                                      "\"nvlink_all_to_all\" the per-pair one");
    }
    if (s.intra == IntraNode::nvswitch) {
      if (auto v = read.get("nvls", false)) s.nvls = v->boolean();
    } else {
      read.reject("nvls", "(in-switch reduction) needs an NVSwitch: intra \"nvswitch\"");
    }
  }
  if (s.intra == IntraNode::nvswitch) {
    if (auto v = read.get("nvlink_domain_gpus", false))
      s.nvlink_domain_gpus = static_cast<int>(v->integer(1, kMaxNvlinkDomainGpus));
  } else {
    read.reject("nvlink_domain_gpus", "applies only to GPUs on an NVSwitch plane (intra "
                                      "\"nvswitch\"): only NVSwitches join GPUs of several nodes");
    s.nvlink_domain_gpus = 0; // a preset's domain does not survive a new intra
  }
  if (auto v = read.get("pcie_switches", false))
    s.pcie_switches = static_cast<int>(v->integer(0, kMaxPcieSwitchesPerNode));
  if (auto v = read.get("pcie_bandwidth_gbps")) s.pcie_bytes_per_second = bandwidth(*v);
  if (auto v = read.get("pcie_latency_ns", false)) s.pcie_latency = latency(*v);
  if (auto v = read.get("nics", false)) s.nics = static_cast<int>(v->integer(0, kMaxNicsPerNode));
  if (auto v = read.get("nic_bandwidth_gbps", s.nics > 0)) s.nic_bytes_per_second = bandwidth(*v);
  if (auto v = read.get("nic_latency_ns", false)) s.nic_latency = latency(*v);
  read_transport_fields(read, s);
}

} // namespace detail

ClusterSpec parse_cluster_spec(const JsonValue& section) {
  JsonObject object = section.object();
  ClusterSpec spec;
  spec.json_path = section.path();
  long gpus = 0;
  for (const JsonValue& group : object.required("nodes").array(1, kMaxNodeGroups)) {
    spec.node_groups.push_back(parse_group(group));
    const NodeGroup& parsed = spec.node_groups.back();
    gpus += static_cast<long>(parsed.count) * parsed.spec.gpus;
    if (gpus > kMaxTotalGpus)
      throw InputError(group.path() + "/count", "the cluster would have " + std::to_string(gpus) +
                                                    " or more GPUs; ddlsim models at most " +
                                                    std::to_string(kMaxTotalGpus));
  }
  if (auto fabric = object.optional("fabric")) spec.fabric = detail::parse_fabric(*fabric);
  object.finish();
  check_cluster_spec(spec);
  return spec;
}

} // namespace ddlsim::topo
