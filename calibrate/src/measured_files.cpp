#include "ddlsim/calibrate/measured_files.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"

#include <fstream>
#include <sstream>

namespace ddlsim::calib {

MeasuredSet read_measured_file(const std::filesystem::path& file, const SystemHints& hints,
                               NcclColumn column, bool lenient) {
  const std::string text =
      read_input_file(file, "a measurement (nccl-tests log or real report)", kMaxLogInputBytes);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    MeasuredSet set = read_real_report(parse_json_text(text, file.string()), file.string());
    if (hints.nodes > 0) set.system.nodes = hints.nodes;
    if (hints.gpus_per_node > 0) set.system.gpus_per_node = hints.gpus_per_node;
    return set;
  }
  return to_measured_set(parse_nccl_log(text, file.string(), lenient), hints, column);
}

topo::ClusterSpec generic_cluster(const MeasuredSystem& system, std::vector<std::string>& notes) {
  int nodes = system.nodes, gpus = system.gpus_per_node;
  if (nodes == 0 && gpus > 0 && system.ranks % gpus == 0) nodes = system.ranks / gpus;
  if (gpus == 0 && nodes > 0 && system.ranks % nodes == 0) gpus = system.ranks / nodes;
  if (nodes <= 0 || gpus <= 0)
    throw InputError("--scenario", "the measurements do not say how their " +
                                       std::to_string(system.ranks) +
                                       " ranks sit on nodes; pass --scenario (the measured "
                                       "system), or --nodes and --gpus-per-node");
  topo::NodeSpec node;
  node.gpus = gpus;
  std::string model = system.gpu_name;
  for (const char* prefix : {"NVIDIA ", "Tesla "})
    if (model.starts_with(prefix)) model.erase(0, std::string(prefix).size());
  node.gpu_model = model.empty() ? "unknown" : model;
  node.intra = gpus > 1 ? topo::IntraNode::nvswitch : topo::IntraNode::pcie_only;
  node.nvlink_bytes_per_second = 100e9;
  node.pcie_bytes_per_second = 16e9;
  node.nics = 1;
  node.nic_bytes_per_second = gbps_to_bytes_per_second(100);
  topo::ClusterSpec spec;
  spec.node_groups.push_back({node, nodes});
  notes.push_back("no scenario given: assumed " + std::to_string(nodes) + " node(s) of " +
                  std::to_string(gpus) + " " + node.gpu_model + " GPU(s), " +
                  (gpus > 1 ? "uniform NVSwitch-like NVLink (nominal 100 GB/s), " : "") +
                  "PCIe 16 GB/s, one 100 Gb/s NIC per node on one switch; the fit scales these");
  return spec;
}

} // namespace ddlsim::calib
