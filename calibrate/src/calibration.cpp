#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <fstream>

namespace ddlsim::calib {

namespace {
constexpr const char* kFormat = "ddlsim-calibration-1";
double bytes_to_gbps(double bytes_per_second) {
  return bytes_per_second * 8.0 / 1e9;
}
double ps_to_ns(Picoseconds ps) {
  return static_cast<double>(ps) / static_cast<double>(kPsPerNs);
}
} // namespace

std::string_view to_string(LinkGroup group) {
  switch (group) {
  case LinkGroup::nvlink:
    return "nvlink";
  case LinkGroup::pcie:
    return "pcie";
  case LinkGroup::network:
    return "network";
  }
  return "?";
}

double nominal_bytes_per_second(const topo::NodeSpec& node, LinkGroup group) {
  switch (group) {
  case LinkGroup::nvlink:
    return node.nvlink_bytes_per_second;
  case LinkGroup::pcie:
    return node.pcie_bytes_per_second;
  case LinkGroup::network:
    return node.nic_bytes_per_second;
  }
  return 0;
}

Picoseconds nominal_latency(const topo::NodeSpec& node, LinkGroup group) {
  switch (group) {
  case LinkGroup::nvlink:
    return node.nvlink_latency;
  case LinkGroup::pcie:
    return node.pcie_latency;
  case LinkGroup::network:
    return node.nic_latency;
  }
  return 0;
}

bool node_group_matches(const topo::ClusterSpec& spec, std::size_t index,
                        const std::string& selector) {
  const topo::NodeSpec& node = spec.node_groups.at(index).spec;
  return (node.preset != "custom" && node.preset == selector) || node.gpu_model == selector ||
         selector == "/topology/nodes/" + std::to_string(index);
}

namespace {

bool targets(const Calibration& calibration, const topo::ClusterSpec& spec, std::size_t index) {
  if (calibration.node_groups.empty()) return true;
  return std::any_of(
      calibration.node_groups.begin(), calibration.node_groups.end(),
      [&](const std::string& selector) { return node_group_matches(spec, index, selector); });
}

void check_selectors(const Calibration& calibration, const topo::ClusterSpec& spec) {
  for (std::size_t i = 0; i < calibration.node_groups.size(); ++i) {
    const std::string& selector = calibration.node_groups[i];
    bool found = false;
    for (std::size_t g = 0; g < spec.node_groups.size(); ++g)
      found = found || node_group_matches(spec, g, selector);
    if (found) continue;
    std::string known;
    for (std::size_t g = 0; g < spec.node_groups.size(); ++g) {
      const topo::NodeSpec& node = spec.node_groups[g].spec;
      known += std::string(known.empty() ? "" : ", ") + "/topology/nodes/" + std::to_string(g) +
               " (" + (node.preset != "custom" ? "preset \"" + node.preset + "\", " : "") +
               "GPU \"" + node.gpu_model + "\")";
    }
    throw InputError("/node_groups/" + std::to_string(i),
                     "no node group has the preset, GPU model or pointer \"" + selector +
                         "\"; the topology's groups: " + known);
  }
}

// Sets the links of the groups `calibration` targets under `proto`.
void apply_links(const Calibration& calibration, const ProtocolCalibration& proto,
                 topo::ClusterSpec& spec) {
  for (std::size_t index = 0; index < spec.node_groups.size(); ++index) {
    if (!targets(calibration, spec, index)) continue;
    topo::NodeSpec& node = spec.node_groups[index].spec;
    for (LinkGroup g : kLinkGroups) {
      const LinkCalibration& link = calibration.link(g);
      if (!link.set) continue;
      const double rate = link.bytes_per_second * proto.bandwidth_factor;
      switch (g) {
      case LinkGroup::nvlink:
        node.nvlink_bytes_per_second = rate;
        node.nvlink_latency = link.latency;
        break;
      case LinkGroup::pcie:
        node.pcie_bytes_per_second = rate;
        node.pcie_latency = link.latency;
        break;
      case LinkGroup::network:
        node.nic_bytes_per_second = rate;
        node.nic_latency = link.latency;
        break;
      }
    }
  }
  // On one switch the port rate caps every NIC link; the calibrated NIC rate is the path's.
  if (calibration.link(LinkGroup::network).set &&
      spec.fabric.type == topo::FabricType::single_switch)
    spec.fabric.link_bytes_per_second = 0;
}

} // namespace

EngineCalibration apply_calibration(const Calibration& calibration, topo::ClusterSpec& spec,
                                    std::size_t protocol) {
  return apply_calibrations(std::span<const Calibration>(&calibration, 1), spec, protocol);
}

EngineCalibration apply_calibrations(std::span<const Calibration> calibrations,
                                     topo::ClusterSpec& spec, std::size_t protocol) {
  EngineCalibration engine;
  if (calibrations.empty()) return engine;
  const std::string& name = calibrations.front().protocols.at(protocol).name;
  std::vector<int> claimed(spec.node_groups.size(), -1);
  for (std::size_t c = 0; c < calibrations.size(); ++c) {
    const Calibration& calibration = calibrations[c];
    check_selectors(calibration, spec);
    for (std::size_t g = 0; g < spec.node_groups.size(); ++g) {
      if (!targets(calibration, spec, g)) continue;
      if (claimed[g] >= 0)
        throw InputError("/node_groups",
                         "node group " + std::to_string(g) + " is targeted by calibration " +
                             std::to_string(claimed[g] + 1) + " and calibration " +
                             std::to_string(c + 1) +
                             "; give each calibration its own groups (\"node_groups\")");
      claimed[g] = static_cast<int>(c);
    }
    const ProtocolCalibration* proto = &calibration.protocols.front();
    for (const ProtocolCalibration& p : calibration.protocols)
      if (p.name == name) proto = &p;
    if (c == 0) proto = &calibration.protocols.at(protocol);
    apply_links(calibration, *proto, spec);
    // A synchronous collective runs at its slowest participant's pace.
    engine.per_step_overhead = std::max(engine.per_step_overhead, proto->per_step_overhead);
    engine.launch_overhead = std::max(engine.launch_overhead, calibration.launch_overhead);
    if (calibration.reduce_bytes_per_second > 0 &&
        (engine.reduce_bytes_per_second == 0 ||
         calibration.reduce_bytes_per_second < engine.reduce_bytes_per_second))
      engine.reduce_bytes_per_second = calibration.reduce_bytes_per_second;
  }
  return engine;
}

Json to_json(const Calibration& calibration) {
  Json links = Json::object();
  for (LinkGroup g : kLinkGroups) {
    const LinkCalibration& link = calibration.link(g);
    if (!link.set) continue;
    links[std::string(to_string(g))] = {{"latency_ns", ps_to_ns(link.latency)},
                                        {"bandwidth_gbps", bytes_to_gbps(link.bytes_per_second)},
                                        {"efficiency", link.efficiency}};
  }
  Json engine = {{"launch_overhead_ns", ps_to_ns(calibration.launch_overhead)}};
  if (calibration.reduce_bytes_per_second > 0)
    engine["reduce_bandwidth_gbps"] = bytes_to_gbps(calibration.reduce_bytes_per_second);
  Json protocols = Json::array();
  for (const ProtocolCalibration& p : calibration.protocols)
    protocols.push_back({{"name", p.name},
                         {"bandwidth_factor", p.bandwidth_factor},
                         {"per_step_overhead_ns", ps_to_ns(p.per_step_overhead)}});
  Json json = {{"format", kFormat},
               {"links", links},
               {"engine", engine},
               {"protocols", protocols},
               {"source", calibration.source}};
  if (!calibration.node_groups.empty()) json["node_groups"] = calibration.node_groups;
  return json;
}

Calibration calibration_from_json(const Json& json, const std::string& origin) {
  Calibration calibration;
  try {
    JsonObject root(json, "");
    const JsonValue format = root.required("format");
    if (format.string() != kFormat)
      format.fail_expected(std::string("\"") + kFormat +
                           "\" (a file written by `ddlsim calibrate`)");
    if (auto links = root.optional("links")) {
      JsonObject object = links->object();
      for (LinkGroup g : kLinkGroups) {
        auto entry = object.optional(to_string(g));
        if (!entry) continue;
        JsonObject link = entry->object();
        LinkCalibration& out = calibration.link(g);
        out.set = true;
        out.latency = ns_to_ps(link.required("latency_ns").number(0, 1e9));
        out.bytes_per_second =
            gbps_to_bytes_per_second(link.required("bandwidth_gbps").positive_number(1e6));
        if (auto e = link.optional("efficiency")) out.efficiency = e->number(0, 1e6);
        link.finish();
      }
      object.finish();
    }
    if (auto engine = root.optional("engine")) {
      JsonObject object = engine->object();
      if (auto v = object.optional("launch_overhead_ns"))
        calibration.launch_overhead = ns_to_ps(v->number(0, 1e9));
      if (auto v = object.optional("reduce_bandwidth_gbps"))
        calibration.reduce_bytes_per_second = gbps_to_bytes_per_second(v->positive_number(1e6));
      object.finish();
    }
    if (auto protocols = root.optional("protocols")) {
      calibration.protocols.clear();
      for (const JsonValue& value : protocols->array(1, 8)) {
        JsonObject object = value.object();
        ProtocolCalibration p;
        p.name = object.required("name").non_empty_string();
        if (auto v = object.optional("bandwidth_factor"))
          p.bandwidth_factor = v->positive_number(1e3);
        if (auto v = object.optional("per_step_overhead_ns"))
          p.per_step_overhead = ns_to_ps(v->number(0, 1e9));
        object.finish();
        calibration.protocols.push_back(p);
      }
    }
    if (auto groups = root.optional("node_groups"))
      for (const JsonValue& value : groups->array(1, 1024))
        calibration.node_groups.push_back(value.non_empty_string());
    if (auto source = root.optional("source")) {
      (void)source->object(); // free form, but an object
      calibration.source = source->raw();
    }
    root.finish();
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.where(), e.reason());
  }
  return calibration;
}

Calibration read_calibration_file(const std::filesystem::path& file) {
  return calibration_from_json(parse_json_file(file, "a calibration"), file.string());
}

void write_calibration_file(const Calibration& calibration, const std::filesystem::path& file) {
  std::ofstream out(file);
  if (!out) throw InputError(file.string(), "cannot open the output file for writing");
  out << to_json(calibration).dump(2) << "\n";
  if (!out) throw InputError(file.string(), "writing the calibration failed (disk full?)");
}

} // namespace ddlsim::calib
