// describe_nccl: what NCCL 2.30.7's topology detection and graph search find on a ClusterSpec.
// Sources are NCCL files at v2.30.7 (github.com/NVIDIA/nccl), named where each rule is used.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/models/nvlink.hpp"
#include "nccl_constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <vector>

namespace ddlsim::models {
namespace {

// aws-ofi-nccl's model of a network step over EFA (describe_nccl says where from).
constexpr double kEfaNetStepUs = 20.0;
constexpr double kEfaSimpleCompletionUs = 3.0;

// NCCL's rate per NVLink link in GB/s (topo.h ncclTopoNVLinkBw; models/nvlink.hpp).
double nccl_nvlink_bw(int cc) {
  return nvlink_payload_bytes_per_link(cc) / 1e9;
}

// A GPU's links from the scenario's datasheet rate, as NCCL counts them (topo.cc: nvlBw x links).
int links_of(double bytes_per_second, int cc) {
  return std::max(1,
                  static_cast<int>(std::lround(bytes_per_second / nvlink_line_bytes_per_link(cc))));
}

// topo.cc: NCCL rates a PCIe link at width x (GT/s in 100 Mb/s units per lane) / 80 GB/s, e.g.
// Gen3 x16: 16 x 60 / 80 = 12 (PCI_BW), i.e. 3/4 of the raw GT/s x 16 lanes / 8. The scenario
// gives an x16 link's data rate after 128b/130b encoding (Gen3: 15.75 GB/s, Gen5 quoted as
// 504 Gb/s), so its transfer rate is that x 130/128 / 2 GT/s per lane, taken to a whole GT/s
// as the PCIe generations are (8, 16, 32, 64), unless it is below one.
double nccl_pci_bw(double bytes_per_second) {
  double gts = bytes_per_second * 130.0 / 128.0 * 8.0 / 16.0 / 1e9;
  if (gts >= 1) gts = std::round(gts);
  return 16.0 * gts * 0.75 / 8.0;
}

std::span<const double> speeds(int cc, bool inter) {
  if (cc >= 100)
    return inter ? std::span<const double>(nccl::kSm100SpeedInter)
                 : std::span<const double>(nccl::kSm100SpeedIntra);
  if (cc >= 90)
    return inter ? std::span<const double>(nccl::kSm90SpeedInter)
                 : std::span<const double>(nccl::kSm90SpeedIntra);
  return inter ? std::span<const double>(nccl::kSpeedInter)
               : std::span<const double>(nccl::kSpeedIntra);
}

// What the search sees on one node: its GPUs' links in NCCL's units.
struct NodeView {
  int gpus = 1;
  int cc = 0;
  topo::IntraNode intra = topo::IntraNode::pcie_only;
  std::vector<double> nvlinks; // one GPU's NVLink connections (GB/s each): mesh pairs or the switch
  double pci = 0;
  double nic_path = 0; // a GPU to its NIC: the slower of NIC and PCIe
  int nics = 0;
  bool inter = false;
  bool nvlink() const { return gpus > 1 && intra != topo::IntraNode::pcie_only; }
};

enum class Pattern { ring, tree, nvls };

// Floor of capacity / speed, with NCCL's 1e-3 rounding of what is left (search.cc SUB_ROUND).
int fits(double capacity, double speed) {
  return speed <= 0 ? 0 : static_cast<int>(std::floor(capacity / speed + 1e-6));
}

// Channels of `pattern` that fit at `intra` / `inter` GB/s each: a ring or chain crosses every
// GPU once, so each channel takes its speed from one NVLink (or the PCIe link) of every GPU in
// each direction; NVLS takes it from every GPU's NVSwitch link and twice from its head's, the
// heads being distinct GPUs; on several nodes each channel leaves and enters through one NIC.
int channels_at(const NodeView& node, Pattern pattern, double intra, double inter) {
  int n = std::numeric_limits<int>::max();
  if (node.gpus > 1) {
    if (pattern == Pattern::nvls) {
      n = std::min(node.gpus, fits(node.nvlinks.front(), intra) - 1);
    } else if (node.nvlink()) {
      int sum = 0;
      for (double link : node.nvlinks) sum += fits(link, intra);
      n = sum;
    } else {
      n = fits(node.pci, intra);
    }
  }
  if (node.inter) n = std::min(n, node.nics * fits(node.nic_path, inter));
  return std::max(n, 0);
}

// search.cc ncclTopoCompute, as the file comment of describe_nccl (nccl_model.hpp) says.
NcclGraph search(const NodeView& node, Pattern pattern, int min_channels, int max_channels) {
  const std::span<const double> speed = speeds(node.cc, node.inter);
  // search.cc ncclTopoSearchInit: the fastest path to a peer (or a NIC) bounds one channel's
  // speed; the GPU's NVLinks together (or its PCIe link) bound all channels.
  double nvlink_total = 0, nvlink_max = 0;
  for (double link : node.nvlinks) {
    nvlink_total += link;
    nvlink_max = std::max(nvlink_max, link);
  }
  double max_bw = node.inter ? node.nic_path : node.nvlink() ? nvlink_max : node.pci;
  double total_bw = std::max(node.pci, nvlink_total);
  if (!node.inter && node.gpus == 1) max_bw = total_bw = nccl::kLocBw;
  // Trees and NVLS do not close back to the first GPU.
  if (node.gpus > 1 && pattern != Pattern::ring) total_bw *= node.gpus / (node.gpus - 1.0);

  std::size_t i = 0;
  while ((speed[i] > max_bw || speed[i] * min_channels > total_bw) && i + 1 < speed.size()) ++i;
  NcclGraph best;
  auto better = [&](const NcclGraph& g) {
    if (best.channels == 0) return true;
    if (pattern == Pattern::nvls)
      return g.channels > best.channels || g.channels * g.bw_inter > best.channels * best.bw_inter;
    return g.channels * g.bw_intra > best.channels * best.bw_intra;
  };
  // Pass 1: the fastest speed with a solution, then slower ones while above 0.49 of the best.
  for (;; ++i) {
    const int n = std::min(max_channels, channels_at(node, pattern, speed[i], speed[i]));
    if (n >= min_channels && n > 0) {
      const NcclGraph found{n, speed[i], speed[i]};
      if (better(found)) best = found;
      if (n == max_channels) break; // a perfect solution
    }
    if (best.channels > 0 && best.channels * best.bw_inter >= total_bw) break;
    if (i + 1 >= speed.size()) break;
    if (best.channels > 0 && speed[i + 1] / best.bw_inter <= 0.49) break;
  }
  if (best.channels == 0) return {1, 0.1, node.inter ? 0.1 : 0}; // NCCL's simple-order fallback

  // search.cc ncclTopoDupChannels: fast channels are duplicated at half the speed each.
  if (pattern != Pattern::nvls && best.bw_intra >= 25.0 &&
      !(node.cc > 80 && best.bw_intra < 50.0 && best.channels > 4)) {
    const int dup = std::min(best.channels * 2, max_channels);
    const int div = (dup + best.channels - 1) / best.channels;
    best = {dup, best.bw_intra / div, best.bw_inter / div};
  }

  // Pass 2: the same channels at higher speeds, while they fit: both speeds for rings, the
  // speed across nodes for NVLS, the speed inside the node for trees (each up to twice the
  // other one).
  std::size_t j = 0;
  while (speed[j] > best.bw_inter && j + 1 < speed.size()) ++j;
  while (j > 0) {
    const double faster = speed[--j];
    NcclGraph next = best;
    if (pattern == Pattern::ring) {
      next.bw_intra = next.bw_inter = faster;
    } else if (pattern == Pattern::nvls) {
      if (best.bw_inter >= 2 * best.bw_intra) break;
      next.bw_inter = faster;
    } else {
      if (best.bw_intra >= 2 * best.bw_inter) break;
      next.bw_intra = faster;
    }
    if (channels_at(node, pattern, next.bw_intra, next.bw_inter) < best.channels) {
      if (pattern == Pattern::ring) continue;
      break;
    }
    best = next;
  }
  return best;
}

NodeView view_of(const topo::NodeSpec& spec, int local_ranks, int cc, bool inter) {
  NodeView v;
  v.gpus = local_ranks;
  v.cc = cc;
  v.intra = spec.intra;
  v.inter = inter;
  v.pci = nccl_pci_bw(spec.pcie_bytes_per_second);
  // NCCL sees the devices its network plugin presents (a multi-rail device at its rails' summed
  // speed: topo::nic_devices).
  const topo::NicDevices devices = topo::nic_devices(spec);
  v.nics = devices.count;
  v.nic_path = std::min(v.pci, devices.rails * spec.nic_bytes_per_second / 1e9);
  const double per_link = nccl_nvlink_bw(cc);
  if (spec.intra == topo::IntraNode::nvswitch) {
    v.nvlinks = {links_of(spec.nvlink_bytes_per_second, cc) * per_link};
  } else if (spec.intra != topo::IntraNode::pcie_only) {
    // The DGX-1 hybrid cube-mesh (topologies/src/node_builder.cpp): 4 neighbours per GPU, two of
    // them joined by nvlinks_per_pair links.
    const double single = links_of(spec.nvlink_bytes_per_second, cc) * per_link;
    v.nvlinks = {single, single, single * spec.nvlinks_per_pair, single * spec.nvlinks_per_pair};
  }
  return v;
}

NcclGraph min_graph(const NcclGraph& a, const NcclGraph& b) {
  return {std::min(a.channels, b.channels), std::min(a.bw_intra, b.bw_intra),
          std::min(a.bw_inter, b.bw_inter)};
}

std::string gbs(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

} // namespace

bool nccl_ll128_architecture(int version, int cc) {
  if (cc < 70) return false;
  if (version == 0 || version >= 227) return true; // 2.27 and later: any sm_70+
  if (version < 205) return false;                 // no LL128 before 2.5
  if (version < 207) return cc == 70;
  if (version < 218) return cc == 70 || cc == 80;
  if (version < 225) return cc == 70 || cc == 80 || cc == 90;
  return cc == 70 || cc == 80 || cc == 90 || cc == 100 || cc == 120;
}

NcclSystem describe_nccl(const topo::ClusterSpec& spec, int ranks) {
  NcclSystem s;
  const std::int64_t total = topo::total_gpus(spec);
  if (ranks < 1 || ranks > total)
    throw InputError("/workload/ranks", "NCCL's model needs 1 to " + std::to_string(total) +
                                            " ranks (the cluster's GPUs), found " +
                                            std::to_string(ranks));
  s.ranks = ranks;

  // The nodes the ranks use (node-major), and what each looks like.
  struct Used {
    const topo::NodeSpec* spec;
    int local;
    int cc;
  };
  std::vector<Used> used;
  int left = ranks;
  for (std::size_t g = 0; g < spec.node_groups.size() && left > 0; ++g) {
    const topo::NodeGroup& group = spec.node_groups[g];
    const int cc = compute_capability(group.spec.gpu_model);
    if (cc < 60)
      throw InputError(spec.json_path + "/nodes/" + std::to_string(g) + "/gpu_model",
                       "NCCL's model needs an NVIDIA GPU of compute capability 6.0 or later, "
                       "found \"" +
                           group.spec.gpu_model +
                           "\"; name a GPU model NCCL runs on (e.g. \"H100-SXM5-80GB\")");
    for (int i = 0; i < group.count && left > 0; ++i) {
      const int local = std::min(left, group.spec.gpus);
      used.push_back({&group.spec, local, cc});
      left -= local;
    }
  }
  s.nodes = static_cast<int>(used.size());
  const bool inter = s.nodes > 1;
  s.gpu_model = used.front().spec->gpu_model;
  s.min_cc = s.max_cc = used.front().cc;
  s.nics_per_node = std::numeric_limits<int>::max();
  bool nvlink = true, pcie_near = true;
  for (const Used& u : used) {
    s.local_ranks = std::max(s.local_ranks, u.local);
    s.min_cc = std::min(s.min_cc, u.cc);
    s.max_cc = std::max(s.max_cc, u.cc);
    s.nics_per_node = std::min(s.nics_per_node, topo::nic_devices(*u.spec).count);
    if (u.local > 1 && u.spec->intra == topo::IntraNode::pcie_only) nvlink = false;
    // GPUs and NICs are spread evenly over the PCIe switches: with no switch, or fewer NICs
    // than switches, some GPU reaches a NIC only through the CPU.
    if (u.spec->nics == 0 || u.spec->pcie_switches == 0 || u.spec->nics < u.spec->pcie_switches)
      pcie_near = false;
  }

  // Every rank runs the search on its own node and they keep the minimum (init.cc, AllGather3).
  bool first = true;
  for (const Used& u : used) {
    const NodeView view = view_of(*u.spec, u.local, s.min_cc, inter);
    const NcclGraph ring = search(view, Pattern::ring, 1, nccl::kMaxChannels / 2);
    // init.cc: trees are searched with exactly the ring's channel count.
    const NcclGraph tree = search(view, Pattern::tree, ring.channels, ring.channels);
    NcclGraph nvls;
    // search.cc: NVLS needs an NVSwitch and sm_90; transport/nvls.cc: two GPUs or more.
    if (u.spec->intra == topo::IntraNode::nvswitch && s.min_cc >= 90 && u.local >= 2) {
      const int heads = std::min(nccl::kMaxNvlsArity, u.local);
      nvls = search(view, Pattern::nvls, inter ? 1 : heads, heads);
      if (nvls.channels < 1 || nvls.bw_intra < 1) nvls = {};
    }
    s.ring = first ? ring : min_graph(s.ring, ring);
    s.tree = first ? tree : min_graph(s.tree, tree);
    s.nvls = first ? nvls : min_graph(s.nvls, nvls);
    if (first) {
      s.intra = u.local == 1                                  ? "none"
                : u.spec->intra == topo::IntraNode::nvswitch  ? "nvswitch"
                : u.spec->intra == topo::IntraNode::pcie_only ? "pcie"
                                                              : "nvlink";
      s.pcie_gbs = view.pci;
      s.nic_gbs = topo::nic_devices(*u.spec).rails * u.spec->nic_bytes_per_second / 1e9;
      s.nvlink_link_gbs =
          u.spec->intra == topo::IntraNode::pcie_only ? 0 : nccl_nvlink_bw(s.min_cc);
      s.nvlinks_per_gpu = 0;
      s.nvlink_gbs = 0;
      if (u.spec->intra != topo::IntraNode::pcie_only) {
        for (double link : view.nvlinks) s.nvlink_gbs += link;
        s.nvlinks_per_gpu = static_cast<int>(std::lround(s.nvlink_gbs / s.nvlink_link_gbs));
      }
    }
    first = false;
  }
  s.single_gpu_trees = s.local_ranks == 1;
  s.nic_path = pcie_near                                         ? NcclNicPath::pxb
               : (s.min_cc >= 90 && nvlink && s.local_ranks > 1) ? NcclNicPath::pxn
                                                                 : NcclNicPath::phb;

  // init.cc: the communicator runs min(ring, tree) channels; connect.cc doubles them, and on
  // Hopper and later across nodes doubles again while fewer than 16 at a fast ring speed.
  s.channels = std::min(nccl::kMaxChannels, 2 * std::min(s.ring.channels, s.tree.channels));
  if (s.min_cc >= 90 && s.nodes > 1 && s.ring.bw_intra > 45.0 && s.channels < 16) s.channels *= 2;
  // transport/nvls.cc ncclNvlsTuning (the SM100 multi-node retuning is not modelled).
  if (s.nvls.channels >= 1)
    s.nvls_channels = s.min_cc >= 100
                          ? (s.nodes > 1 ? nccl::kNvlsChannelsSm100 : nccl::kNvlsChannelsSm100Nvl)
                          : nccl::kNvlsChannelsSm90;

  // tuning.cc: LL128 by default where the architecture has it, the GPUs of a node talk over
  // NVLink (typeIntra <= PATH_NVB) and, across nodes, the NIC path is at most PXB (PXN from
  // Hopper on), with one architecture (or Hopper and later throughout).
  const bool intra_ok = nvlink || s.local_ranks == 1;
  const bool inter_ok = !inter || s.nic_path == NcclNicPath::pxb ||
                        (s.min_cc >= 90 && s.nic_path == NcclNicPath::pxn);
  s.ll128 = nccl_ll128_architecture(kNcclModelVersion, s.min_cc) && intra_ok && inter_ok &&
            (s.min_cc == s.max_cc || s.min_cc >= 90);

  // GPUDirect-TCPXO runs NCCL with its net plugin's environment profile, which Google's A3 Mega
  // guides source before every NCCL job (NCCL_LIB_DIR=/var/lib/tcpxo/lib64, source
  // nccl-env-profile.sh; HOST_VARS passes its NCCL_* variables to mpirun): among others
  // NCCL_PROTO=Simple, NCCL_NVLS_ENABLE=0 and NCCL_BUFFSIZE=8388608 (NCCL_ALGO=Ring,Tree,
  // NCCL_MIN_NCHANNELS=4 and a tuner plugin whose configuration is not public are not modelled).
  if (s.nodes > 1 && std::any_of(used.begin(), used.end(), [](const Used& u) {
        return u.spec->transport == topo::Transport::tcpxo;
      })) {
    s.simple_only = true;
    s.nvls_channels = 0;
    s.nvls = {};
    s.simple_buffsize = std::uint64_t{8} << 20;
  }

  // On EFA, NCCL runs with aws-ofi-nccl as its net plugin, which sets NCCL's environment per
  // instance type when NCCL loads it (at every communicator's init, one node or several):
  // NCCL_BUFFSIZE=8388608 on every GPU instance with EFA (p4d, p4de, p5, p5e, p5en, p6), and on
  // the NVSwitch generations with NVLS (p5 and later) NCCL_NVLS_CHUNKSIZE and
  // NCCL_NVLSTREE_MAX_CHUNKSIZE = 524288 ("a max chunk size of 512KiB recovers from the
  // regression": aws/aws-ofi-nccl src/platform-aws.cpp, platform_data_map, commit 2daf7d3).
  if (std::all_of(used.begin(), used.end(),
                  [](const Used& u) { return u.spec->transport == topo::Transport::efa; })) {
    s.simple_buffsize = std::uint64_t{8} << 20;
    s.nvls_chunk = std::uint64_t{512} << 10;
  }
  s.nvls_tree_chunk = s.nvls_chunk; // NCCL_NVLSTREE_MAX_CHUNKSIZE as large or unset
  s.aws_ofi_nccl = std::all_of(used.begin(), used.end(), [](const Used& u) {
    return u.spec->transport == topo::Transport::efa;
  });
  s.gdr = std::all_of(used.begin(), used.end(), [](const Used& u) {
    const topo::Transport t = u.spec->transport;
    return t == topo::Transport::ib || t == topo::Transport::roce || t == topo::Transport::efa ||
           t == topo::Transport::cxi;
  });
  // src/graph/paths.cc, ncclTopoNeedFlush: "Flush is required on Ampere and earlier"; on Hopper
  // and later only with NCCL_NET_FORCE_FLUSH (0 by default since NCCL 2.19.1).
  s.gdr_flush = s.nodes > 1 && s.gdr && s.min_cc < 90;

  // On EFA a network step takes what AWS's own model of its plugin says, not NCCL's hwLatencies
  // (written for InfiniBand verbs): aws-ofi-nccl's tuner (src/tuner/nccl_ofi_model.cpp,
  // nccl_ofi_tuner_compute_cost, commit 39397b3) charges every inter-node step net_lat, 20 us on
  // P5/P5e (18 on P5en; OFI_NCCL_TUNER_NET_LATENCY defaults to 20 for EFA, nccl_ofi_param.h),
  // and for Simple adds TUNER_NET_COMP_OVERHEAD, 3 us ("With EFA, we expect a ~2usec cost in the
  // device and ~1usec cost to write that completion up to the host stack"; libfabric's and the
  // proxy thread's handling of each completion). The same figure is taken for EFAv1 (p4d/p4de),
  // for which the plugin has no model of its own.
  if (s.nodes > 1 && std::all_of(used.begin(), used.end(), [](const Used& u) {
        return u.spec->transport == topo::Transport::efa;
      })) {
    s.net_step_us = kEfaNetStepUs;
    s.net_simple_completion_us = kEfaSimpleCompletionUs;
  }
  return s;
}

namespace {

// "a.b.c" (a leading "v" and a "-..." suffix allowed) -> a * 10000 + b * 100 + c, or -1.
int parse_release(std::string_view text) {
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
  if (const auto dash = text.find('-'); dash != std::string_view::npos) text = text.substr(0, dash);
  int parts[3] = {0, 0, 0};
  int count = 0;
  std::size_t i = 0;
  while (count < 3) {
    const std::size_t start = i;
    int value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 3)
      value = value * 10 + (text[i++] - '0');
    if (i == start) return -1;
    parts[count++] = value;
    if (i == text.size()) break;
    if (text[i++] != '.') return -1;
  }
  if (i != text.size() || count < 2 || parts[1] > 99 || parts[2] > 99) return -1;
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

} // namespace

int parse_nccl_version(std::string_view text, const std::string& where) {
  const int version = parse_release(text);
  if (version < 21200 || version >= 23100)
    throw InputError(where, "expected an NCCL release from 2.12 to 2.30 as \"2.18.5\", found \"" +
                                std::string(text) + "\"");
  return version;
}

int parse_aws_ofi_nccl_version(std::string_view text, const std::string& where) {
  const int version = parse_release(text);
  if (version < 10000 || version >= 20000)
    throw InputError(where, "expected an aws-ofi-nccl release as \"1.7.3\" or \"v1.7.3-aws\", "
                            "found \"" +
                                std::string(text) + "\"");
  return version;
}

NcclSystem with_release(NcclSystem s, const NcclOverrides& setup) {
  if (setup.aws_ofi_nccl > 0 && !s.aws_ofi_nccl)
    throw InputError("/workload/nccl/aws_ofi_nccl",
                     "aws-ofi-nccl is NCCL's net plugin on EFA only; every node of the run needs "
                     "\"transport\": \"efa\" (or leave the plugin's release out)");
  if (setup.version == 0 && setup.aws_ofi_nccl == 0) return s;
  constexpr std::uint64_t kDefaultBuffsize = std::uint64_t{4} << 20;    // DEFAULT_BUFFSIZE
  constexpr std::uint64_t kDefaultNvlsChunk = std::uint64_t{128} << 10; // NCCL_NVLS_CHUNKSIZE
  constexpr std::uint64_t kPluginChunk = std::uint64_t{512} << 10;
  // What the plugin puts in NCCL's environment (aws/aws-ofi-nccl src/platform-aws.c, -.cpp at
  // the release tags): NCCL_NET_FORCE_FLUSH=0 and NCCL_NVLSTREE_MAX_CHUNKSIZE=524288 from
  // v1.8.0-aws, NCCL_NVLS_CHUNKSIZE=524288 from v1.9.0-aws, NCCL_BUFFSIZE=8388608 from v1.16.0;
  // v1.7.3-aws sets none of them. Unnamed: the current profile (describe_nccl).
  const int plugin = s.aws_ofi_nccl ? (setup.aws_ofi_nccl > 0 ? setup.aws_ofi_nccl : 999999) : 0;
  const bool plugin_no_flush = plugin >= 10800;
  bool tree_max_set = false;
  if (s.aws_ofi_nccl) {
    s.simple_buffsize = plugin >= 11600 ? std::uint64_t{8} << 20 : kDefaultBuffsize;
    s.nvls_chunk = plugin >= 10900 ? kPluginChunk : kDefaultNvlsChunk;
    tree_max_set = plugin >= 10800;
  }
  const int version = setup.version > 0 ? setup.version : kNcclModelVersion * 100 + 7;
  // NVLS-Tree's chunk (src/enqueue.cc): before NCCL 2.21 one Simple step (2.18.5 computeColl,
  // 2.20.3 calcCollChunking), from 2.21 NCCL_NVLS_CHUNKSIZE; capped from 2.20 by
  // NCCL_NVLSTREE_MAX_CHUNKSIZE where set (the parameter is new in 2.20.3).
  std::uint64_t tree_chunk = version < 22100 ? s.simple_buffsize / 8 : s.nvls_chunk;
  if (tree_max_set && version >= 22000) tree_chunk = std::min(tree_chunk, kPluginChunk);
  s.nvls_tree_chunk = tree_chunk;
  // NCCL_NET_FORCE_FLUSH's default is 1 before 2.19.1 (src/graph/paths.cc, NCCL 2.18.5; 0 from
  // 2.19.1); Ampere and earlier flush whatever it says.
  const bool hopper_flush = version < 21901 && !plugin_no_flush;
  s.gdr_flush = s.nodes > 1 && s.gdr && (s.min_cc < 90 || hopper_flush);
  return s;
}

std::string NcclSystem::summary() const {
  std::string out = "NCCL 2.30 model: " + std::to_string(ranks) + " ranks on " +
                    std::to_string(nodes) + " node(s), up to " + std::to_string(local_ranks) +
                    " per node, " + gpu_model + " sm_" + std::to_string(min_cc) + "\n";
  out += "  links: intra " + intra;
  if (nvlink_gbs > 0)
    out += " (" + std::to_string(nvlinks_per_gpu) + " NVLinks x " + gbs(nvlink_link_gbs) + " = " +
           gbs(nvlink_gbs) + " GB/s per GPU)";
  out += ", PCIe " + gbs(pcie_gbs) + " GB/s";
  if (nodes > 1)
    out += ", " + std::to_string(nics_per_node) + " NICs x " + gbs(nic_gbs) + " GB/s, NIC path " +
           (nic_path == NcclNicPath::pxb   ? "PXB"
            : nic_path == NcclNicPath::pxn ? "PXN"
                                           : "PHB");
  out += "\n";
  auto graph = [](const char* name, const NcclGraph& g) {
    return std::string(name) + " " + std::to_string(g.channels) + " x " + gbs(g.bw_intra) + "/" +
           gbs(g.bw_inter) + " GB/s";
  };
  out += "  graphs (channels x intra/inter): " + graph("ring", ring) + ", " + graph("tree", tree);
  if (nvls.channels > 0) out += ", " + graph("nvls", nvls);
  out += "\n  launch: " + std::to_string(channels) + " channels";
  if (nvls_channels > 0) out += ", " + std::to_string(nvls_channels) + " NVLS channels";
  out += std::string(", LL128 ") + (ll128 ? "on" : "off");
  if (simple_only) out += ", Simple only and NVLS off (the transport's NCCL profile)";
  if (simple_buffsize != (std::uint64_t{4} << 20))
    out += ", NCCL_BUFFSIZE " + std::to_string(simple_buffsize) + " (the net plugin's profile)";
  if (nvls_channels > 0 && nvls_chunk != (std::uint64_t{128} << 10))
    out += ", NVLS chunk " + std::to_string(nvls_chunk) + " (the net plugin's profile)";
  if (nodes > 1 && nvls_channels > 0 && nvls_tree_chunk != nvls_chunk)
    out += ", NVLS-Tree chunk " + std::to_string(nvls_tree_chunk);
  if (gdr_flush) out += ", GPUDirect RDMA flush of every Simple receive";
  if (net_step_us > 0)
    out += ", network step " + gbs(net_step_us) + " us (+" + gbs(net_simple_completion_us) +
           " us Simple) by the net plugin's model";
  out += "\n";
  return out;
}

} // namespace ddlsim::models
