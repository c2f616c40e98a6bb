#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/calibrate/carry_over.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ddlsim::calib {

namespace {
// Format 2: relative link efficiencies and the system it was fitted on. Format 1: absolute link
// rates (still read, applied as before).
constexpr const char* kFormat = "ddlsim-calibration-2";
constexpr const char* kFormatAbsolute = "ddlsim-calibration-1";
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

namespace {
std::string intra_name(topo::IntraNode intra) {
  switch (intra) {
  case topo::IntraNode::nvlink_hybrid_cube_mesh:
    return "nvlink_hybrid_cube_mesh";
  case topo::IntraNode::nvswitch:
    return "nvswitch";
  case topo::IntraNode::nvlink_pairs:
    return "nvlink_pairs";
  case topo::IntraNode::pcie_only:
    return "pcie_only";
  case topo::IntraNode::nvlink_all_to_all:
    return "nvlink_all_to_all";
  }
  return "?";
}

std::string gpu_text(const std::string& model, int capability) {
  if (capability <= 0) return "\"" + model + "\"";
  char sm[16];
  std::snprintf(sm, sizeof sm, "sm_%d", capability);
  return "\"" + model + "\" (" + sm + ")";
}
} // namespace

FittedOn fitted_on(const topo::NodeSpec& node, int nodes) {
  FittedOn f;
  f.gpu_model = node.gpu_model;
  f.compute_capability = models::compute_capability(node.gpu_model);
  f.gpus_per_node = node.gpus;
  f.nics_per_node = node.nics;
  f.intra = intra_name(node.intra);
  f.transport = std::string(topo::transport_name(node.transport));
  f.nodes = nodes;
  return f;
}

std::vector<std::string> calibration_differences(const Calibration& calibration,
                                                 const topo::ClusterSpec& spec) {
  std::vector<std::string> lines;
  if (!calibration.relative) {
    lines.push_back("it is a format-1 calibration (\"" + std::string(kFormatAbsolute) +
                    "\"): its absolute link rates replace the scenario's and it does not record "
                    "the system it was fitted on; refit it with `ddlsim calibrate` for one whose "
                    "efficiencies scale the scenario's nominal rates");
    return lines;
  }
  if (!calibration.fitted_on) return lines;
  const FittedOn& from = *calibration.fitted_on;
  int nodes = 0;
  for (const topo::NodeGroup& group : spec.node_groups) nodes += group.count;
  for (std::size_t index = 0; index < spec.node_groups.size(); ++index) {
    if (!calibration_targets(calibration, spec, index)) continue;
    const FittedOn to = fitted_on(spec.node_groups[index].spec, nodes);
    std::vector<std::string> what;
    if (!from.gpu_model.empty() && from.gpu_model != to.gpu_model) {
      std::string line = "GPU " + gpu_text(from.gpu_model, from.compute_capability) + " fitted, " +
                         gpu_text(to.gpu_model, to.compute_capability) + " here";
      if (from.compute_capability > 0 && to.compute_capability > 0 &&
          from.compute_capability / 10 != to.compute_capability / 10)
        line += " (another GPU generation: its latencies and overheads may not carry over)";
      what.push_back(line);
    }
    auto differ = [&](const char* name, auto a, auto b) {
      if (a != b) {
        std::ostringstream text;
        text << name << " " << a << " fitted, " << b << " here";
        what.push_back(text.str());
      }
    };
    if (from.gpus_per_node > 0) differ("GPUs per node", from.gpus_per_node, to.gpus_per_node);
    if (from.nics_per_node > 0) differ("NICs per node", from.nics_per_node, to.nics_per_node);
    if (!from.intra.empty()) differ("intra-node", from.intra, to.intra);
    if (!from.transport.empty() && to.nodes > 1) differ("transport", from.transport, to.transport);
    if (from.nodes == 1 && to.nodes > 1 && !calibration.link(LinkGroup::network).set)
      what.push_back("fitted on one node, so the network keeps its nominal rate here");
    const std::string left_out = parts_left_out(carried_parts(from, to));
    if (!left_out.empty())
      what.push_back("not applied here (measured on another kind of component): " + left_out);
    if (what.empty()) continue;
    std::string line = "/topology/nodes/" + std::to_string(index) + ": ";
    for (std::size_t i = 0; i < what.size(); ++i) line += (i ? "; " : "") + what[i];
    lines.push_back(line);
  }
  return lines;
}

bool node_group_matches(const topo::ClusterSpec& spec, std::size_t index,
                        const std::string& selector) {
  const topo::NodeSpec& node = spec.node_groups.at(index).spec;
  return (node.preset != "custom" && node.preset == selector) || node.gpu_model == selector ||
         selector == "/topology/nodes/" + std::to_string(index);
}

namespace {

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
  bool network_set = false;
  for (std::size_t index = 0; index < spec.node_groups.size(); ++index) {
    if (!calibration_targets(calibration, spec, index)) continue;
    const CarriedParts parts = carried_parts(calibration, spec, index);
    topo::NodeSpec& node = spec.node_groups[index].spec;
    for (LinkGroup g : kLinkGroups) {
      const LinkCalibration& link = calibration.link(g);
      if (!link.set || !parts.link(g)) continue;
      // Relative: this node's nominal rate times the fitted efficiency (issue 17: a
      // calibration carried to a similar system scales that system's rates).
      const double base = calibration.relative ? link.efficiency * nominal_bytes_per_second(node, g)
                                               : link.bytes_per_second;
      const double rate = base * (parts.steps ? proto.bandwidth_factor : 1.0);
      switch (g) {
      case LinkGroup::nvlink:
        node.nvlink_bytes_per_second = rate;
        // The fitted efficiency is against the datasheet rate and already holds the payload
        // loss, so the generation's payload efficiency is not charged again.
        node.nvlink_payload_efficiency = 1;
        node.nvlink_latency = link.latency;
        break;
      case LinkGroup::pcie:
        node.pcie_bytes_per_second = rate;
        node.pcie_latency = link.latency;
        break;
      case LinkGroup::network:
        node.nic_bytes_per_second = rate;
        node.nic_latency = link.latency;
        network_set = true;
        break;
      }
    }
  }
  // On one switch the port rate caps every NIC link; the calibrated NIC rate is the path's.
  if (network_set && spec.fabric.type == topo::FabricType::single_switch)
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
      if (!calibration_targets(calibration, spec, g)) continue;
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
    const CarriedParts parts = carried_engine_parts(calibration, spec);
    // A synchronous collective runs at its slowest participant's pace.
    if (parts.steps)
      engine.per_step_overhead = std::max(engine.per_step_overhead, proto->per_step_overhead);
    if (parts.steps)
      engine.launch_overhead = std::max(engine.launch_overhead, calibration.launch_overhead);
    if (parts.reduce && calibration.reduce_bytes_per_second > 0 &&
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
    if (calibration.relative)
      links[std::string(to_string(g))] = {
          {"latency_ns", ps_to_ns(link.latency)},
          {"efficiency", link.efficiency},
          {"fitted_bandwidth_gbps", bytes_to_gbps(link.bytes_per_second)}};
    else
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
  Json json = {{"format", calibration.relative ? kFormat : kFormatAbsolute},
               {"links", links},
               {"engine", engine},
               {"protocols", protocols},
               {"source", calibration.source}};
  if (!calibration.node_groups.empty()) json["node_groups"] = calibration.node_groups;
  if (calibration.relative && calibration.fitted_on) {
    const FittedOn& f = *calibration.fitted_on;
    json["fitted_on"] = {{"gpu_model", f.gpu_model},
                         {"compute_capability", f.compute_capability},
                         {"gpus_per_node", f.gpus_per_node},
                         {"nics_per_node", f.nics_per_node},
                         {"intra", f.intra},
                         {"transport", f.transport},
                         {"nodes", f.nodes},
                         {"nccl_version", f.nccl_version}};
  }
  return json;
}

Calibration calibration_from_json(const Json& json, const std::string& origin) {
  Calibration calibration;
  try {
    JsonObject root(json, "");
    const JsonValue format = root.required("format");
    if (format.string() != kFormat && format.string() != kFormatAbsolute)
      format.fail_expected(std::string("\"") + kFormat + "\" or \"" + kFormatAbsolute +
                           "\" (a file written by `ddlsim calibrate`)");
    calibration.relative = format.string() == kFormat;
    if (auto links = root.optional("links")) {
      JsonObject object = links->object();
      for (LinkGroup g : kLinkGroups) {
        auto entry = object.optional(to_string(g));
        if (!entry) continue;
        JsonObject link = entry->object();
        LinkCalibration& out = calibration.link(g);
        out.set = true;
        out.latency = ns_to_ps(link.required("latency_ns").number(0, 1e9));
        if (calibration.relative) {
          out.efficiency = link.required("efficiency").positive_number(1e3);
          if (auto v = link.optional("fitted_bandwidth_gbps"))
            out.bytes_per_second = gbps_to_bytes_per_second(v->positive_number(1e6));
        } else {
          out.bytes_per_second =
              gbps_to_bytes_per_second(link.required("bandwidth_gbps").positive_number(1e6));
          if (auto e = link.optional("efficiency")) out.efficiency = e->number(0, 1e6);
        }
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
    if (auto fitted = root.optional("fitted_on")) {
      if (!calibration.relative)
        fitted->fail_expected("no \"fitted_on\" in a format-1 file (format 2 records it)");
      JsonObject object = fitted->object();
      FittedOn f;
      if (auto v = object.optional("gpu_model")) f.gpu_model = v->string();
      if (auto v = object.optional("compute_capability"))
        f.compute_capability = static_cast<int>(v->integer(0, 1000));
      if (auto v = object.optional("gpus_per_node"))
        f.gpus_per_node = static_cast<int>(v->integer(0, 100000));
      if (auto v = object.optional("nics_per_node"))
        f.nics_per_node = static_cast<int>(v->integer(0, 100000));
      if (auto v = object.optional("intra")) f.intra = v->string();
      if (auto v = object.optional("transport")) f.transport = v->string();
      if (auto v = object.optional("nodes")) f.nodes = static_cast<int>(v->integer(0, 1000000));
      if (auto v = object.optional("nccl_version")) f.nccl_version = v->string();
      object.finish();
      calibration.fitted_on = f;
    }
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
