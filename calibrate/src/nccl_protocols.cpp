#include "ddlsim/calibrate/nccl_protocols.hpp"
#include "ddlsim/models/nccl_model.hpp"

#include <algorithm>
#include <regex>

namespace ddlsim::calib {
namespace {

// "NCCL 2.11.4+cuda11.4" -> 211; 0 when absent or unreadable.
int nccl_version(const std::string& text) {
  static const std::regex version(R"((\d+)\.(\d+)(\.\d+)?)");
  std::smatch m;
  if (!std::regex_search(text, m, version)) return 0;
  return std::stoi(m[1].str()) * 100 + std::stoi(m[2].str());
}

std::string version_text(int version) {
  return std::to_string(version / 100) + "." + std::to_string(version % 100);
}

} // namespace

ProtocolChoice infer_nccl_protocols(const MeasuredSystem& system, const topo::ClusterSpec& spec) {
  ProtocolChoice choice;
  choice.protocols = {"simple", "ll"};
  const int version = nccl_version(system.library_version);
  const std::string version_note = version
                                       ? "NCCL " + version_text(version) + " (from the log)"
                                       : "NCCL version not in the log: assumed a current release";
  auto off = [&](const std::string& why) {
    choice.reason = "protocols simple, ll (LL128 off: " + why + "; " + version_note + ")";
    return choice;
  };

  // One architecture in the whole job: every node group's GPU (the log's name for a node
  // group whose model the scenario leaves open).
  int cc = -1;
  std::string gpu;
  int nodes = 0;
  bool nvlink_everywhere = true;
  bool nic_on_pcie_switch = true;
  for (const topo::NodeGroup& group : spec.node_groups) {
    nodes += group.count;
    std::string model = group.spec.gpu_model;
    if (compute_capability(model) == 0 && !system.gpu_name.empty()) model = system.gpu_name;
    const int group_cc = compute_capability(model);
    if (cc == -1) {
      cc = group_cc;
      gpu = model;
    } else if (cc != group_cc) {
      cc = -2;
    }
    if (group.spec.gpus > 1 && group.spec.intra == topo::IntraNode::pcie_only)
      nvlink_everywhere = false;
    // GPUs and NICs are spread evenly over the PCIe switches: with no switch, or fewer NICs
    // than switches, some GPU reaches a NIC only through the CPU (PATH_PHB or worse).
    if (group.spec.nics == 0 || group.spec.pcie_switches == 0 ||
        group.spec.nics < group.spec.pcie_switches)
      nic_on_pcie_switch = false;
  }
  // GPUDirect-TCPXO's NCCL profile sets NCCL_PROTO=Simple (models::describe_nccl).
  if (nodes > 1 && std::any_of(spec.node_groups.begin(), spec.node_groups.end(),
                               [](const topo::NodeGroup& group) {
                                 return group.spec.transport == topo::Transport::tcpxo;
                               })) {
    choice.protocols = {"simple"};
    choice.reason = "protocols simple (GPUDirect-TCPXO: its NCCL profile, nccl-env-profile.sh, "
                    "sets NCCL_PROTO=Simple)";
    return choice;
  }
  if (cc == -2) return off("GPUs of different architectures");
  if (cc <= 0) return off("GPU model \"" + gpu + "\" unknown, its architecture cannot be told");
  const std::string arch = "sm_" + std::to_string(cc);
  if (!models::nccl_ll128_architecture(version, cc))
    return off(version && version < 205
                   ? "this NCCL predates LL128 (2.5)"
                   : "not enabled by default on " + gpu + " (" + arch + ") by this NCCL");
  if (!nvlink_everywhere) return off("the GPUs of a node talk over PCIe, not NVLink");
  std::string path = "single node";
  if (nodes > 1) {
    if (system.transport.find("Socket") != std::string::npos)
      return off("the log's transport is " + system.transport +
                 ", which stages through host memory (no GPUDirect RDMA)");
    // Hopper and later also accept a NIC reached through a peer GPU over NVLink (PXN).
    if (!nic_on_pcie_switch && !(cc >= 90 && nvlink_everywhere))
      return off("the scenario puts a GPU's NIC behind the CPU, not on its PCIe switch");
    path = system.transport.empty()
               ? "GPU and NIC on one PCIe switch in the scenario (transport not in the log: "
                 "assumed GPUDirect RDMA)"
               : "GPU and NIC on one PCIe switch, transport " + system.transport;
  }
  const std::string rule =
      "NCCL's default rule: " + gpu + " " + arch + ", NVLink inside the node, " + path;
  if (version == 0) {
    // LL128's default depends on the release (none before 2.5; Ampere from 2.7, ...).
    choice.optional = "ll128";
    choice.reason = "protocols simple, ll, and ll128 if the data support it (" + rule +
                    " would enable LL128 in a current release, but the log does not say its "
                    "NCCL version: fitted with and without LL128)";
    return choice;
  }
  choice.protocols = {"simple", "ll", "ll128"};
  choice.reason = "protocols simple, ll, ll128 (" + rule + "; " + version_note + ")";
  return choice;
}

} // namespace ddlsim::calib
