// One server's vertices and links.
//
// Layout: one host vertex (the CPU root complex; dual-socket servers are one host, their
// inter-socket link is not modelled), `pcie_switches` PCIe switches below it, GPUs and NICs
// spread evenly (in contiguous blocks) over the switches, or on the host when there are none.
// GPUs talk to each other through:
// - a hybrid cube-mesh (DGX-1 and the cloud boxes built like it): one NVLink link per
//   adjacent pair, doubled pairs at nvlinks_per_pair x the per-link bandwidth;
// - an NVSwitch plane: the 6 (A100) or 4 (H100) NVSwitch chips are one "nvswitch" vertex with
//   one link per GPU at the GPU's full NVLink bandwidth. Every GPU has equal links to every
//   chip, so the plane is non-blocking and the aggregation loses nothing but the chips'
//   individual queues;
// - or only PCIe.
#include "node_builder.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/topologies/spec_parser.hpp"

#include <algorithm>
#include <array>

namespace ddlsim::topo::detail {
namespace {

// The DGX-1V NVLink matrix (nvidia-smi topo -m): NV2 pairs are "doubled", NV1 pairs single,
// the rest (SYS) have no NVLink. Each GPU has 4 NVLink neighbours and 6 NVLinks in all.
struct MeshPair {
  int a, b;
  bool doubled;
};
constexpr std::array<MeshPair, 16> kCubeMesh{{
    {0, 1, false},
    {0, 2, false},
    {0, 3, true},
    {0, 4, true},
    {1, 2, true},
    {1, 3, false},
    {1, 5, true},
    {2, 3, true},
    {2, 6, false},
    {3, 7, false},
    {4, 5, false},
    {4, 6, false},
    {4, 7, true},
    {5, 6, true},
    {5, 7, false},
    {6, 7, true},
}};
constexpr int kCubeMeshGpus = 8;
// A GPU has 18 NVLinks (H100, GH200: NVIDIA H100 datasheet), so at most 18 direct peers;
// all-to-all nodes ship with 4 (GH200 quad).
constexpr int kMaxAllToAllGpus = 18;

bool is_mesh(IntraNode intra) {
  return intra == IntraNode::nvlink_hybrid_cube_mesh || intra == IntraNode::nvlink_pairs;
}

void require_range(long value, long min, long max, const std::string& where, const char* key) {
  if (value < min || value > max)
    throw InputError(where + "/" + key, "expected an integer from " + std::to_string(min) + " to " +
                                            std::to_string(max) + ", found " +
                                            std::to_string(value));
}

void require_bandwidth(double bytes_per_second, const std::string& where, const char* key,
                       const char* why) {
  if (!(bytes_per_second > 0) || bytes_per_second > gbps_to_bytes_per_second(kMaxBandwidthGbps))
    throw InputError(where + "/" + key, std::string("needs a bandwidth greater than 0 ") + why);
}

void require_latency(Picoseconds latency, const std::string& where, const char* key) {
  if (latency < 0 || latency > ns_to_ps(kMaxLatencyNs))
    throw InputError(where + "/" + key, "latency out of range");
}

std::string name_in(int node, const char* kind, int index = -1) {
  std::string name = "node" + std::to_string(node) + "/" + kind;
  if (index >= 0) name += std::to_string(index);
  return name;
}

// NCCL's NIC choice for a GPU (src/graph/topo.cc, ncclTopoGetLocalNetType, 2.30.7): its local
// NICs are those of the best path from it: the NICs on its PCIe switch (PIX/PXB), else every NIC
// of the node (all through the CPU, PHB). The GPUs that share them are those local to the first
// of them in the same sense. Each GPU takes ceil(NICs / GPUs) of them (the default
// NCCL_NETDEVS_POLICY=AUTO), starting at its device index modulo the sharing GPUs, bit-mirrored
// when the NIC count is a power of two so that neighbouring GPUs start far apart; channel c uses
// the start + c % that count. Here the list of a GPU is those NICs in channel order.
std::vector<std::vector<VertexId>> nic_affinity(const Node& node,
                                                const std::vector<VertexId>& gpu_parent,
                                                const std::vector<VertexId>& nic_parent) {
  std::vector<std::vector<VertexId>> affinity(node.gpus.size());
  if (node.nics.empty()) return affinity;
  auto is_pow2 = [](std::size_t v) { return (v & (v - 1)) == 0; };
  auto mirror_bits = [](std::size_t value, std::size_t pow2) {
    std::size_t mirror = 0;
    for (std::size_t b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
      if (value & b) mirror |= mb;
    return mirror;
  };
  for (std::size_t g = 0; g < node.gpus.size(); ++g) {
    std::vector<std::size_t> local_nics; // indices into node.nics, in NIC order
    for (std::size_t n = 0; n < node.nics.size(); ++n)
      if (nic_parent[n] == gpu_parent[g]) local_nics.push_back(n);
    if (local_nics.empty())
      for (std::size_t n = 0; n < node.nics.size(); ++n) local_nics.push_back(n);
    std::size_t sharing = 0; // GPUs local to the first of those NICs
    for (std::size_t h = 0; h < node.gpus.size(); ++h)
      if (gpu_parent[h] == nic_parent[local_nics.front()]) ++sharing;
    if (sharing == 0) sharing = node.gpus.size();
    const std::size_t count = local_nics.size();
    const std::size_t per_gpu = (count + sharing - 1) / sharing;
    std::size_t start = g % sharing;
    if (is_pow2(count)) start = mirror_bits(start, count);
    for (std::size_t c = 0; c < per_gpu; ++c)
      affinity[g].push_back(node.nics[local_nics[(start + c) % count]]);
  }
  return affinity;
}

} // namespace

} // namespace ddlsim::topo::detail

namespace ddlsim::topo {

double transport_nic_bytes_per_second(const NodeSpec& spec) {
  if (spec.transport != Transport::socket) return spec.nic_bytes_per_second;
  // NCCL splits each message evenly over the connection's sockets (net_socket.cc: tasks of
  // max(64 KiB, size / nSocks)), so the connection runs at streams x the slowest stream's rate
  // (S. Jeaugey, NVIDIA/nccl-tests#83), and never above the NIC; with no helper thread the
  // rank's proxy thread moves both directions itself (socket_proxy_share).
  const double ceiling = socket_streams(spec.socket_nthreads, spec.socket_nsocks_perthread) *
                         spec.socket_stream_bytes_per_second *
                         socket_proxy_share(spec.socket_nthreads, spec.gpus, spec.nics);
  return std::min(spec.nic_bytes_per_second, ceiling);
}

NicDevices nic_devices(const NodeSpec& spec) {
  // NICs and GPUs are spread evenly over the PCIe switches (build_node), so with more NICs than
  // GPUs, nics / gpus of them sit beside each GPU and no other GPU is as near.
  if (spec.transport == Transport::efa && spec.gpus > 0 && spec.nics > spec.gpus &&
      spec.nics % spec.gpus == 0)
    return {spec.gpus, spec.nics / spec.gpus};
  return {spec.nics, 1};
}

} // namespace ddlsim::topo

namespace ddlsim::topo::detail {

void check_node_spec(const NodeSpec& spec, const std::string& where) {
  require_range(spec.gpus, 1, kMaxGpusPerNode, where, "gpus");
  require_range(spec.nics, 0, kMaxNicsPerNode, where, "nics");
  require_range(spec.pcie_switches, 0, kMaxPcieSwitchesPerNode, where, "pcie_switches");
  require_bandwidth(spec.pcie_bytes_per_second, where, "pcie_bandwidth_gbps",
                    "(every GPU and NIC hangs off PCIe)");
  if (spec.nics > 0)
    require_bandwidth(spec.nic_bytes_per_second, where, "nic_bandwidth_gbps",
                      "when the node has NICs");
  require_latency(spec.nvlink_latency, where, "nvlink_latency_ns");
  require_latency(spec.pcie_latency, where, "pcie_latency_ns");
  require_latency(spec.nic_latency, where, "nic_latency_ns");
  if (spec.nvls && spec.intra != IntraNode::nvswitch)
    throw InputError(where + "/nvls", "in-switch reduction (NVLS) needs an NVSwitch; set intra "
                                      "\"nvswitch\" or drop \"nvls\"");
  if (spec.intra == IntraNode::pcie_only) return;
  if (spec.intra == IntraNode::nvlink_all_to_all)
    require_range(spec.gpus, 2, kMaxAllToAllGpus, where, "gpus");
  if (spec.nvlink_domain_gpus != 0) {
    if (spec.intra != IntraNode::nvswitch)
      throw InputError(where + "/nvlink_domain_gpus",
                       "applies only to GPUs on an NVSwitch plane (intra \"nvswitch\")");
    if (spec.nvlink_domain_gpus < spec.gpus || spec.nvlink_domain_gpus % spec.gpus != 0 ||
        spec.nvlink_domain_gpus > kMaxNvlinkDomainGpus)
      throw InputError(where + "/nvlink_domain_gpus",
                       "an NVLink domain holds whole nodes: expected a multiple of the node's " +
                           std::to_string(spec.gpus) + " GPUs up to " +
                           std::to_string(kMaxNvlinkDomainGpus) + ", found " +
                           std::to_string(spec.nvlink_domain_gpus));
  }
  require_bandwidth(spec.nvlink_bytes_per_second, where, "nvlink_bandwidth_gbps",
                    "when GPUs are joined by NVLink");
  if (!(spec.nvlink_payload_efficiency > 0 && spec.nvlink_payload_efficiency <= 1))
    throw InputError(where + "/gpu_model",
                     "the NVLink payload efficiency of the GPU's NVLink generation must be in "
                     "(0, 1], found " +
                         std::to_string(spec.nvlink_payload_efficiency));
  if (is_mesh(spec.intra)) {
    if (spec.gpus != kCubeMeshGpus)
      throw InputError(where + "/gpus", "the NVLink hybrid cube-mesh joins exactly 8 GPUs (the "
                                        "DGX-1 layout), found " +
                                            std::to_string(spec.gpus) +
                                            "; use intra \"nvswitch\" or \"pcie_only\"");
    require_range(spec.nvlinks_per_pair, 1, kMaxNvlinksPerPair, where, "nvlinks_per_pair");
  }
}

int build_node(Topology& topology, const NodeSpec& spec, std::vector<NicPort>& nic_ports,
               VertexId nvlink_domain) {
  const int index = static_cast<int>(topology.nodes().size());
  Node node;
  node.preset = spec.preset;
  node.gpu_model = spec.gpu_model;

  auto add = [&](VertexKind kind, std::string name, int local) {
    return topology.add_vertex(Vertex{kind, std::move(name), index, local, -1});
  };
  const VertexId host = add(VertexKind::host, name_in(index, "cpu"), 0);
  node.hosts.push_back(host);
  std::vector<VertexId> pcie;
  for (int j = 0; j < spec.pcie_switches; ++j)
    pcie.push_back(add(VertexKind::pcie_switch, name_in(index, "pcie", j), j));
  for (int g = 0; g < spec.gpus; ++g)
    node.gpus.push_back(add(VertexKind::gpu, name_in(index, "gpu", g), g));
  // One NIC vertex per device NCCL's plugin presents: a device of several rails stripes every
  // message over them, which moves what one port of their summed rate would (nic_devices).
  const NicDevices devices = nic_devices(spec);
  for (int n = 0; n < devices.count; ++n)
    node.nics.push_back(add(VertexKind::nic, name_in(index, "nic", n), n));

  auto pcie_link = [&](VertexId a, VertexId b) {
    topology.add_duplex_link(a, b, spec.pcie_bytes_per_second, spec.pcie_latency, LinkClass::pcie);
  };
  // The switch of device i of `count`, spreading them in contiguous blocks.
  auto parent = [&](int i, int count) {
    if (pcie.empty()) return host;
    return pcie[static_cast<std::size_t>(i * spec.pcie_switches / count)];
  };
  for (VertexId sw : pcie) pcie_link(sw, host);
  for (int g = 0; g < spec.gpus; ++g) pcie_link(node.gpus[g], parent(g, spec.gpus));
  // NET/Socket hands the NIC buffers in host memory: the GPU's bytes go up its PCIe link to the
  // root complex and down to the NIC, never GPU -> NIC through the switch. Hanging the NIC on the
  // host gives every route that path (GPUDirect transports keep the NIC beside its GPUs).
  const bool bounce = bounces_through_host(spec.transport);
  for (int n = 0; n < devices.count; ++n)
    pcie_link(node.nics[n], bounce ? host : parent(n, devices.count));

  // What an NVLink carries: the datasheet's rate less the packet overhead of its generation.
  const double nvlink_rate = spec.nvlink_bytes_per_second * spec.nvlink_payload_efficiency;
  if (is_mesh(spec.intra)) {
    for (const MeshPair& pair : kCubeMesh) {
      const double links = pair.doubled ? spec.nvlinks_per_pair : 1;
      topology.add_duplex_link(node.gpus[pair.a], node.gpus[pair.b], links * nvlink_rate,
                               spec.nvlink_latency, LinkClass::nvlink);
    }
  } else if (spec.intra == IntraNode::nvlink_all_to_all) {
    for (int a = 0; a < spec.gpus; ++a)
      for (int b = a + 1; b < spec.gpus; ++b)
        topology.add_duplex_link(node.gpus[a], node.gpus[b], nvlink_rate, spec.nvlink_latency,
                                 LinkClass::nvlink);
  } else if (spec.intra == IntraNode::nvswitch) {
    // A domain that spans nodes has one plane for all of them (built by the caller).
    const VertexId plane =
        nvlink_domain != kNoVertex
            ? nvlink_domain
            : topology.add_vertex(Vertex{VertexKind::nvswitch, name_in(index, "nvswitch"), index, 0,
                                         -1, spec.nvls});
    for (VertexId gpu : node.gpus)
      topology.add_duplex_link(gpu, plane, nvlink_rate, spec.nvlink_latency, LinkClass::nvlink);
  }

  std::vector<VertexId> gpu_parent, nic_parent;
  for (int g = 0; g < spec.gpus; ++g) gpu_parent.push_back(parent(g, spec.gpus));
  for (int n = 0; n < devices.count; ++n)
    nic_parent.push_back(bounce ? host : parent(n, devices.count));
  node.gpu_nics = nic_affinity(node, gpu_parent, nic_parent);

  const double nic_rate = devices.rails * transport_nic_bytes_per_second(spec);
  for (VertexId nic : node.nics)
    nic_ports.push_back(NicPort{nic, nic_rate, spec.nic_latency, index});
  return topology.add_node(std::move(node));
}

} // namespace ddlsim::topo::detail
