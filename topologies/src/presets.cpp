// Node presets, with the source of every number.
//
// Bandwidths are per direction. PCIe x16 per direction: gen3 8 GT/s x 16 lanes x 128/130
// encoding / 8 = 15.75 GB/s; gen4 = 31.5 GB/s; gen5 = 63.0 GB/s (PCI-SIG base specifications).
//
// Latencies are per link, one way, and are the hardware share only (software overheads belong
// to the collective/engine models and are fitted by calibrate/). They are order-of-magnitude
// figures, chosen to agree with NCCL's own tuning model (src/graph/tuning.cc, hwLat: about
// 0.6 us per NVLink step and 1 us per PCIe step with the LL protocol):
//   NVLink direct GPU-to-GPU link            600 ns
//   NVSwitch: GPU to switch plane            300 ns  (600 ns GPU to GPU, like a direct link)
//   PCIe link (GPU/NIC to switch, switch to CPU) 250 ns  (PLX/Broadcom PEX switches quote
//                                            ~100-150 ns cut-through plus the link; 4 hops GPU
//                                            to GPU across the root complex = 1 us)
//   InfiniBand NIC to its switch             600 ns  (ConnectX-4/6/7 datasheets: "sub 600 ns"
//                                            adapter latency)
//   10 GbE NIC with a kernel TCP stack       5 us
//   public-cloud VPC NIC                     10 us   (AWS publishes no figure; ~50 us round
//                                            trips measured inside placement groups, less
//                                            the switches, split over the two NIC links)
#include "ddlsim/topologies/presets.hpp"

#include <algorithm>
#include <array>

namespace ddlsim::topo {
namespace {

constexpr double kPcieGen3x16 = 15.75e9;
constexpr double kPcieGen4x16 = 31.5e9;
constexpr double kPcieGen5x16 = 63.0e9;
constexpr Picoseconds kNvlinkLatency = 600 * kPsPerNs;
constexpr Picoseconds kNvswitchLatency = 300 * kPsPerNs;
constexpr Picoseconds kPcieLatency = 250 * kPsPerNs;
constexpr Picoseconds kInfinibandNicLatency = 600 * kPsPerNs;
constexpr Picoseconds kTcpNicLatency = 5 * kPsPerUs;
constexpr Picoseconds kCloudNicLatency = 10 * kPsPerUs;

// NVIDIA DGX-1 with Tesla V100 (DGX-1 datasheet; "NVIDIA DGX-1 With Tesla V100 System
// Architecture" whitepaper WP-08437-002):
// - 8x Tesla V100-SXM2-32GB (256 GB of GPU memory in total).
// - NVLink 2.0 hybrid cube-mesh: each V100 has 6 NVLinks of 25 GB/s per direction (V100
//   whitepaper: 300 GB/s total bidirectional = 6 x 25 GB/s x 2). The whitepaper's "cube with
//   GPUs at its corners and all twelve edges connected through NVLink (some edges have two
//   NVLink connections), and two of the six faces having their diagonals connected": 16
//   adjacent pairs, 8 of them doubled; node_builder.cpp has the table (nvidia-smi topo -m).
// - 4 PCIe 3.0 switches (PLX), each with 2 GPUs and 1 NIC below it.
// - 4x Mellanox ConnectX-4 EDR InfiniBand, 100 Gb/s each.
NodeSpec dgx1_v100() {
  NodeSpec s;
  s.preset = "dgx1-v100";
  s.gpu_model = "V100-SXM2-32GB";
  s.gpus = 8;
  s.intra = IntraNode::nvlink_hybrid_cube_mesh;
  s.nvlink_bytes_per_second = gigabytes_to_bytes_per_second(25);
  s.nvlinks_per_pair = 2;
  s.nvlink_latency = kNvlinkLatency;
  s.pcie_switches = 4;
  s.pcie_bytes_per_second = kPcieGen3x16;
  s.pcie_latency = kPcieLatency;
  s.nics = 4;
  s.nic_bytes_per_second = gbps_to_bytes_per_second(100);
  s.nic_latency = kInfinibandNicLatency;
  return s;
}

// NVIDIA DGX A100 (DGX A100 datasheet; "NVIDIA DGX A100 System Architecture" whitepaper):
// - 8x A100-SXM4-40GB (the 320 GB model).
// - 6 NVSwitch chips; each A100 has 12 NVLink 3.0 links of 25 GB/s per direction, 2 to each
//   NVSwitch: 300 GB/s per GPU per direction (600 GB/s bidirectional, A100 datasheet). Every
//   GPU reaches every switch, so the 6 chips act as one non-blocking plane: we model them as
//   one "nvswitch" vertex with one 300 GB/s link per GPU.
// - 4 PCIe 4.0 switches, each with 2 GPUs and 2 compute NICs below it.
// - 8x single-port ConnectX-6 HDR InfiniBand, 200 Gb/s each (the 2 storage NICs are left out).
NodeSpec dgx_a100() {
  NodeSpec s;
  s.preset = "dgx-a100";
  s.gpu_model = "A100-SXM4-40GB";
  s.gpus = 8;
  s.intra = IntraNode::nvswitch;
  s.nvlink_bytes_per_second = gigabytes_to_bytes_per_second(300);
  s.nvlink_latency = kNvswitchLatency;
  s.pcie_switches = 4;
  s.pcie_bytes_per_second = kPcieGen4x16;
  s.pcie_latency = kPcieLatency;
  s.nics = 8;
  s.nic_bytes_per_second = gbps_to_bytes_per_second(200);
  s.nic_latency = kInfinibandNicLatency;
  return s;
}

// NVIDIA DGX H100 (DGX H100 datasheet; "NVIDIA DGX H100 System Architecture" / H100
// whitepaper):
// - 8x H100-SXM5-80GB.
// - 4 third-generation NVSwitch chips; 18 NVLink 4.0 links per GPU, 900 GB/s bidirectional:
//   450 GB/s per GPU per direction, modelled as one NVSwitch plane (as for the A100).
// - PCIe 5.0; we assume the DGX A100 layout of 4 switches with 2 GPUs and 2 NICs each.
// - 8x ConnectX-7, 400 Gb/s each (InfiniBand NDR or Ethernet).
NodeSpec dgx_h100() {
  NodeSpec s;
  s.preset = "dgx-h100";
  s.gpu_model = "H100-SXM5-80GB";
  s.gpus = 8;
  s.intra = IntraNode::nvswitch;
  s.nvlink_bytes_per_second = gigabytes_to_bytes_per_second(450);
  s.nvlink_latency = kNvswitchLatency;
  s.pcie_switches = 4;
  s.pcie_bytes_per_second = kPcieGen5x16;
  s.pcie_latency = kPcieLatency;
  s.nics = 8;
  s.nic_bytes_per_second = gbps_to_bytes_per_second(400);
  s.nic_latency = kInfinibandNicLatency;
  return s;
}

// The public-cloud V100 box, e.g. AWS p3.16xlarge (AWS EC2 P3 instance documentation):
// - 8x V100-SXM2-16GB joined by NVLink in the same hybrid cube-mesh as DGX-1V (nvidia-smi
//   topo -m on p3.16xlarge shows the DGX-1V NV1/NV2 pattern): 25 GB/s per link.
// - PCIe 3.0 with 4 switches, as in the HGX-1 board it is built from.
// - ONE virtual NIC (ENA) shared by all 8 GPUs: "25 Gigabit" network performance.
NodeSpec cloud_8xv100_25g() {
  NodeSpec s;
  s.preset = "cloud-8xv100-25g";
  s.gpu_model = "V100-SXM2-16GB";
  s.gpus = 8;
  s.intra = IntraNode::nvlink_pairs;
  s.nvlink_bytes_per_second = gigabytes_to_bytes_per_second(25);
  s.nvlinks_per_pair = 2;
  s.nvlink_latency = kNvlinkLatency;
  s.pcie_switches = 4;
  s.pcie_bytes_per_second = kPcieGen3x16;
  s.pcie_latency = kPcieLatency;
  s.nics = 1;
  s.nic_bytes_per_second = gbps_to_bytes_per_second(25);
  s.nic_latency = kCloudNicLatency;
  return s;
}

// A generic 8-GPU PCIe 3.0 server without NVLink (e.g. Supermicro SYS-4028GR-class boxes with
// 8x V100-PCIe-16GB): 4 PCIe 3.0 x16 switches with 2 GPUs each under the root complex, so GPU
// pairs on different switches cross the CPU; one 10 GbE NIC.
NodeSpec pcie_8gpu_10g() {
  NodeSpec s;
  s.preset = "pcie-8gpu-10g";
  s.gpu_model = "V100-PCIe-16GB";
  s.gpus = 8;
  s.intra = IntraNode::pcie_only;
  s.pcie_switches = 4;
  s.pcie_bytes_per_second = kPcieGen3x16;
  s.pcie_latency = kPcieLatency;
  s.nics = 1;
  s.nic_bytes_per_second = gbps_to_bytes_per_second(10);
  s.nic_latency = kTcpNicLatency;
  return s;
}

// One GPU and one NIC, e.g. AWS p3.2xlarge (1x V100-SXM2-16GB, "up to 10 Gigabit"): GPU and NIC
// sit directly on the CPU's PCIe 3.0 root ports (no PCIe switch).
NodeSpec single_gpu_host() {
  NodeSpec s;
  s.preset = "single-gpu-host";
  s.gpu_model = "V100-SXM2-16GB";
  s.gpus = 1;
  s.intra = IntraNode::pcie_only;
  s.pcie_switches = 0;
  s.pcie_bytes_per_second = kPcieGen3x16;
  s.pcie_latency = kPcieLatency;
  s.nics = 1;
  s.nic_bytes_per_second = gbps_to_bytes_per_second(10);
  s.nic_latency = kCloudNicLatency;
  return s;
}

struct Preset {
  std::string_view name;
  NodeSpec (*make)();
};

// Sorted by name.
constexpr std::array kPresets{
    Preset{"cloud-8xv100-25g", cloud_8xv100_25g},
    Preset{"dgx-a100", dgx_a100},
    Preset{"dgx-h100", dgx_h100},
    Preset{"dgx1-v100", dgx1_v100},
    Preset{"pcie-8gpu-10g", pcie_8gpu_10g},
    Preset{"single-gpu-host", single_gpu_host},
};

} // namespace

std::optional<NodeSpec> find_node_preset(std::string_view name) {
  for (const Preset& preset : kPresets)
    if (preset.name == name) return preset.make();
  return std::nullopt;
}

std::vector<std::string> node_preset_names() {
  std::vector<std::string> names;
  for (const Preset& preset : kPresets) names.emplace_back(preset.name);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace ddlsim::topo
