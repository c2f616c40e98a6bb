#include "ddlsim/calibrate/carry_over.hpp"

#include <algorithm>
#include <vector>

namespace ddlsim::calib {

namespace {

// The same GPU generation: the compute capability's major version where both are known, else
// the same model name (an unknown name is only the same as itself).
bool same_generation(const FittedOn& from, const FittedOn& to) {
  if (from.gpu_model.empty()) return true;
  if (from.compute_capability > 0 && to.compute_capability > 0)
    return from.compute_capability / 10 == to.compute_capability / 10;
  return from.gpu_model == to.gpu_model;
}

} // namespace

CarriedParts carried_parts(const FittedOn& from, const FittedOn& to) {
  const bool generation = same_generation(from, to);
  const bool intra = from.intra.empty() || from.intra == to.intra;
  // A one-node fit never crossed the network, and a one-node target never will.
  const bool transport =
      from.transport.empty() || from.nodes <= 1 || to.nodes <= 1 || from.transport == to.transport;
  CarriedParts parts;
  parts.network = transport;
  parts.nvlink = intra && generation;
  parts.pcie = generation && transport;
  parts.steps = generation && intra && transport;
  parts.reduce = from.gpu_model.empty() || from.gpu_model == to.gpu_model;
  return parts;
}

std::string parts_left_out(const CarriedParts& parts) {
  std::vector<std::string> out;
  if (!parts.network) out.emplace_back("the network class (NIC efficiency and latency)");
  if (!parts.nvlink) out.emplace_back("the NVLink class");
  if (!parts.pcie) out.emplace_back("the PCIe class");
  if (!parts.steps) out.emplace_back("the per-step, launch and protocol overheads");
  if (!parts.reduce) out.emplace_back("the reduction rate");
  std::string text;
  for (std::size_t i = 0; i < out.size(); ++i)
    text += (i == 0 ? "" : i + 1 == out.size() ? " and " : ", ") + out[i];
  return text;
}

bool calibration_targets(const Calibration& calibration, const topo::ClusterSpec& spec,
                         std::size_t index) {
  return calibration.node_groups.empty() ||
         std::any_of(calibration.node_groups.begin(), calibration.node_groups.end(),
                     [&](const std::string& s) { return node_group_matches(spec, index, s); });
}

CarriedParts carried_parts(const Calibration& calibration, const topo::ClusterSpec& spec,
                           std::size_t index) {
  if (!calibration.relative || !calibration.fitted_on) return {};
  int nodes = 0;
  for (const topo::NodeGroup& group : spec.node_groups) nodes += group.count;
  return carried_parts(*calibration.fitted_on, fitted_on(spec.node_groups.at(index).spec, nodes));
}

CarriedParts carried_engine_parts(const Calibration& calibration, const topo::ClusterSpec& spec) {
  CarriedParts all;
  for (std::size_t index = 0; index < spec.node_groups.size(); ++index) {
    if (!calibration_targets(calibration, spec, index)) continue;
    const CarriedParts parts = carried_parts(calibration, spec, index);
    all.steps = all.steps && parts.steps;
    all.reduce = all.reduce && parts.reduce;
  }
  return all;
}

} // namespace ddlsim::calib
