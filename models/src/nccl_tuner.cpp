// NcclTuner: NCCL 2.30.7's cost table (src/graph/tuning.cc, ncclTopoTuneModel), its time of a
// call (ncclTopoGetAlgoTime) and its choice with the channel count (src/enqueue.cc,
// updateCollCostTable and topoGetAlgoInfo). The arithmetic is NCCL's, in NCCL's float, so that
// ties and crossovers fall where NCCL's do.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "nccl_constants.hpp"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace ddlsim::models {
namespace {

constexpr std::array<std::string_view, kNcclAlgorithms> kAlgoNames{
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
constexpr std::array<std::string_view, kNcclAlgorithms> kAlgoDisplay{
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, kNcclProtocols> kProtoNames{"ll", "ll128", "simple"};
constexpr std::array<std::string_view, kNcclProtocols> kProtoDisplay{"LL", "LL128", "Simple"};

// NCCL's functions the tuner covers, in table_ order.
constexpr std::array<coll::Op, 5> kTunedOps{coll::Op::all_reduce, coll::Op::reduce_scatter,
                                            coll::Op::all_gather, coll::Op::broadcast,
                                            coll::Op::reduce};
int op_index(coll::Op op) {
  for (std::size_t i = 0; i < kTunedOps.size(); ++i)
    if (kTunedOps[i] == op) return static_cast<int>(i);
  return -1;
}

int log2i(long long n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

int compcap_index(int cc) {
  return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}

std::string lower_compact(std::string_view name) {
  std::string out;
  for (char c : name)
    if (c != '_' && c != '-' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> names_of(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

// The search graph NCCL's algorithm runs on (tuning.cc: graphs[a]); CollNet and PAT have none
// here (CollNet is not modelled; PAT runs on the ring graph's figures).
const NcclGraph& graph_of(const NcclSystem& s, int a) {
  if (a == nccl::kTree) return s.tree;
  if (a == nccl::kNvls || a == nccl::kNvlsTree) return s.nvls;
  return s.ring;
}

// typeIntra == LINK_NVL: the NVLink row of hwLatencies; otherwise (PCIe, one GPU) the PCI row.
bool intra_nvlink(const NcclSystem& s, int a) {
  if (a == nccl::kNvls || a == nccl::kNvlsTree) return true;
  return s.intra == "nvswitch" || s.intra == "nvlink";
}

// src/include/device.h / comm.h: threads per channel and the per-thread work threshold.
int max_threads(const NcclSystem& s, int a, int p) {
  if (p == nccl::kLl) return nccl::kLlMaxNthreads;
  if (p == nccl::kLl128) return nccl::kLl128MaxNthreads;
  if (a == nccl::kRing)
    return s.ring.bw_intra * s.ring.channels <= nccl::kPciBw ? 256 : nccl::kSimpleMaxNthreads;
  if (a == nccl::kTree) return nccl::kSimpleMaxNthreads;
  return nccl::kMaxNthreads;
}
long long thread_threshold(const NcclSystem& s, int a, int p) {
  long long t = p == nccl::kLl      ? nccl::kLlThreadThreshold
                : p == nccl::kLl128 ? nccl::kLl128ThreadThreshold
                                    : nccl::kSimpleThreadThreshold;
  if (a == nccl::kRing && p == nccl::kLl) t *= s.ranks;
  return t;
}

} // namespace

std::string_view to_string(NcclAlgorithm a) {
  return kAlgoNames[static_cast<std::size_t>(a)];
}
std::string_view to_string(NcclProtocol p) {
  return kProtoNames[static_cast<std::size_t>(p)];
}
std::string_view display_name(NcclAlgorithm a) {
  return kAlgoDisplay[static_cast<std::size_t>(a)];
}
std::string_view display_name(NcclProtocol p) {
  return kProtoDisplay[static_cast<std::size_t>(p)];
}

NcclAlgorithm parse_nccl_algorithm(std::string_view name, const std::string& where) {
  for (int a = 0; a < kNcclAlgorithms; ++a)
    if (lower_compact(name) == lower_compact(kAlgoNames[static_cast<std::size_t>(a)]))
      return static_cast<NcclAlgorithm>(a);
  const std::vector<std::string> names = names_of(kAlgoNames);
  throw InputError(where, "no NCCL algorithm \"" + std::string(name) + "\"" +
                              did_you_mean(name, names) + "; expected one of " +
                              join_choices(names));
}

void parse_nccl_protocols(std::string_view value, const std::string& where, NcclOverrides& force) {
  const bool exclude = !value.empty() && value.front() == '^';
  if (exclude) value.remove_prefix(1);
  if (!exclude && value.find(',') == std::string_view::npos) {
    force.protocol = parse_nccl_protocol(value, where);
    return;
  }
  std::array<bool, kNcclProtocols> on{};
  on.fill(exclude);
  bool any = false;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view name = value.substr(0, comma);
    on[static_cast<std::size_t>(parse_nccl_protocol(name, where))] = !exclude;
    any = true;
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
  }
  if (!any)
    throw InputError(where, "an empty NCCL_PROTO list; name protocols (\"LL,Simple\") or "
                            "exclude them (\"^LL128\")");
  if (std::none_of(on.begin(), on.end(), [](bool b) { return b; }))
    throw InputError(where, "the list leaves no protocol on; keep at least one");
  force.protocols = on;
}

NcclProtocol parse_nccl_protocol(std::string_view name, const std::string& where) {
  for (int p = 0; p < kNcclProtocols; ++p)
    if (lower_compact(name) == lower_compact(kProtoNames[static_cast<std::size_t>(p)]))
      return static_cast<NcclProtocol>(p);
  const std::vector<std::string> names = names_of(kProtoNames);
  throw InputError(where, "no NCCL protocol \"" + std::string(name) + "\"" +
                              did_you_mean(name, names) + "; expected one of " +
                              join_choices(names));
}

std::string NcclChoice::describe() const {
  return std::string(to_string(algorithm)) + "/" + std::string(display_name(protocol)) + ", " +
         std::to_string(channels) + (channels == 1 ? " channel" : " channels");
}

std::string nccl_generator(coll::Op op, NcclAlgorithm algorithm) {
  std::vector<std::string_view> names;
  switch (algorithm) {
  case NcclAlgorithm::ring:
    names = {"nccl_ring"};
    if (op == coll::Op::reduce_scatter || op == coll::Op::all_gather) names.push_back("ring");
    if (op == coll::Op::broadcast) names.push_back("pipelined_chain");
    break;
  case NcclAlgorithm::tree:
    names = {"nccl_tree"};
    break;
  case NcclAlgorithm::nvls:
    names = {"nvls"};
    break;
  case NcclAlgorithm::nvls_tree:
    names = {"nvls_tree"};
    break;
  default:
    break; // CollNet and PAT: no generator
  }
  for (std::string_view name : names)
    if (coll::find_algorithm(op, name) != nullptr) return std::string(name);
  return "";
}

NcclTuner::NcclTuner(NcclSystem system, NcclOverrides force)
    : system_(with_release(std::move(system), force)), force_(force) {
  // NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS (and nvlsCTAs) set the channels launched; the cost
  // model keeps the search's graphs (connect.cc applies them after the search).
  if (force_.channels > 0) {
    if (force_.channels > nccl::kMaxChannels)
      throw InputError("/workload/nccl/channels",
                       "NCCL runs at most " + std::to_string(nccl::kMaxChannels) +
                           " channels (MAXCHANNELS), found " + std::to_string(force_.channels));
    system_.channels = force_.channels;
    if (system_.nvls_channels > 0) system_.nvls_channels = force_.channels;
  }
  const NcclSystem& s = system_;
  const int n_nodes = s.nodes, n_ranks = s.ranks;
  if (n_ranks <= 1) return;
  const int cci = compcap_index(s.min_cc);
  const int index2 = n_nodes <= 2 ? n_nodes - 1 : 2;
  // LL: on one node the GPU decides, on several the CPU (Intel 0, AMD 1).
  const int index1 = n_nodes == 1 ? cci : s.cpu_amd ? 1 : 0;
  const double ll_max_bw = nccl::kLlMaxBws[index1][index2];
  const double per_ch_max_tree_bw = nccl::kPerChMaxTreeBws[cci][index2];
  const double per_ch_max_ring_ll128_bw = nccl::kPerChMaxRingLl128Bws[cci][index2];
  const double per_ch_max_tree_ll128_bw = nccl::kPerChMaxTreeLl128Bws[cci][index2];
  const double per_ch_max_nvls_tree_bw = nccl::kPerChMaxNvlsTreeBws[cci][index2];
  const float ppn = static_cast<float>(n_ranks) / n_nodes;

  for (std::size_t f = 0; f < kTunedOps.size(); ++f) {
    const coll::Op coll = kTunedOps[f];
    const bool all_reduce = coll == coll::Op::all_reduce;
    const bool rs_ag = coll == coll::Op::reduce_scatter || coll == coll::Op::all_gather;
    const bool bcast_reduce = coll == coll::Op::broadcast || coll == coll::Op::reduce;
    const int nsteps = all_reduce ? 2 * (n_ranks - 1) : rs_ag ? n_ranks - 1 : n_ranks;
    for (int a = 0; a < kNcclAlgorithms; ++a) {
      if (bcast_reduce && a != nccl::kRing) continue;
      if (rs_ag && a != nccl::kPat && a != nccl::kRing && a != nccl::kNvls &&
          a != nccl::kCollnetDirect)
        continue;
      if (all_reduce && a == nccl::kPat) continue;
      const NcclGraph& g = graph_of(s, a);
      const int intra_hw = intra_nvlink(s, a) ? nccl::kHwNvlink : nccl::kHwPci;
      const int hw = n_nodes == 1 ? intra_hw : nccl::kHwNet;
      for (int p = 0; p < kNcclProtocols; ++p) {
        if ((a == nccl::kNvls || a == nccl::kNvlsTree) && p != nccl::kSimple) continue;
        // PAT: one GPU per node, Simple (tuning.cc ncclPatEnable).
        if (rs_ag && a == nccl::kPat && (p != nccl::kSimple || s.nodes != s.ranks)) continue;
        const bool collnet = a == nccl::kCollnetDirect || a == nccl::kCollnetChain;
        float bw = static_cast<float>(n_nodes <= 2 || collnet ? g.bw_intra : g.bw_inter);
        if (a == nccl::kNvlsTree || a == nccl::kNvls) {
          if (g.channels < 2) continue; // NVLS needs at least 2 channels
          float intra_bw = static_cast<float>(g.bw_intra) * nccl::kNvlsEfficiency[cci] *
                           (g.channels - 1) / g.channels;
          if (all_reduce)
            intra_bw *= 2.0f; // all-reduce pipelines two operations
          else
            intra_bw *= (ppn - 1) / ppn;
          const float inter_bw =
              static_cast<float>(g.bw_inter) * ((n_nodes <= 2 && a == nccl::kNvlsTree) ? 2 : 1);
          bw = std::min({intra_bw, inter_bw,
                         a == nccl::kNvlsTree ? static_cast<float>(per_ch_max_nvls_tree_bw)
                                              : std::numeric_limits<float>::max()});
        }
        float bus_bw = static_cast<float>(g.channels) * bw;
        if (a == nccl::kRing && p == nccl::kLl)
          bus_bw = static_cast<float>(std::min(ll_max_bw, bus_bw * .5));
        if (a == nccl::kRing && p == nccl::kLl128)
          bus_bw =
              static_cast<float>(std::min(bus_bw * 0.92, g.channels * per_ch_max_ring_ll128_bw));
        if (a == nccl::kTree && all_reduce)
          bus_bw = static_cast<float>(std::min(bus_bw * .92, g.channels * per_ch_max_tree_bw));
        if (a == nccl::kTree && p == nccl::kLl)
          bus_bw = static_cast<float>(std::min(bus_bw * 1.0 / 3.8, ll_max_bw));
        if (a == nccl::kTree && p == nccl::kLl128)
          bus_bw = static_cast<float>(std::min(bus_bw * (n_nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                               g.channels * per_ch_max_tree_ll128_bw));
        if (a == nccl::kTree && s.single_gpu_trees) bus_bw *= .85f;
        if (a == nccl::kPat) bus_bw *= .75f;
        if (collnet) bus_bw = 0; // CollNet is not modelled (NCCL disables it without a plugin)
        // NVLS reduce-scatter / all-gather across nodes need CollNet.
        if (a == nccl::kNvls && rs_ag && n_nodes > 1) bus_bw = 0;
        // Bus bandwidth to algorithm bandwidth.
        if (!(a != nccl::kRing && rs_ag)) {
          float ratio = 1.0f;
          if (a == nccl::kRing || a == nccl::kNvls || a == nccl::kNvlsTree)
            ratio *= (1.0f * n_ranks) / nsteps;
          else
            ratio *= .5f;
          bus_bw *= ratio;
        }
        NcclCost& cell = table_[f][static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
        float lat = nccl::kBaseLatencies[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
        float intra_lat =
            nccl::kHwLatencies[static_cast<std::size_t>(intra_hw)][static_cast<std::size_t>(a)]
                              [static_cast<std::size_t>(p)];
        // One GPU per node exposes the network latency in full: the Tree's.
        float inter_lat =
            ppn == 1 ? nccl::kHwLatencies[nccl::kHwNet][nccl::kTree][static_cast<std::size_t>(p)]
                     : nccl::kHwLatencies[nccl::kHwNet][static_cast<std::size_t>(a)]
                                         [static_cast<std::size_t>(p)];
        // graphs[a]->latencyInter: the NIC's own latency attribute, 0 for the NICs modelled.
        if (a == nccl::kRing) {
          float hw_lat = nccl::kHwLatencies[static_cast<std::size_t>(hw)][nccl::kRing]
                                           [static_cast<std::size_t>(p)];
          if (bcast_reduce) {
            lat += hw_lat; // the search found the same GPU order on every channel
          } else {
            // Inter-node rings still pay the net overhead on every step.
            float net_overhead = 0.0f;
            if (n_nodes > 1) {
              net_overhead = s.cpu_amd ? nccl::kNetOverheadAmd : nccl::kNetOverheadIntel;
              if (p == nccl::kSimple) net_overhead *= 3;
            }
            intra_lat = std::max(intra_lat, net_overhead);
            const int inter_steps = n_nodes == 1 ? 0 : all_reduce ? 2 * (n_nodes - 1) : n_nodes - 1;
            lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
          }
        } else if (a == nccl::kTree) {
          if (all_reduce)
            lat += 2 * ((n_ranks / n_nodes - 1) * intra_lat + log2i(n_nodes) * inter_lat);
        } else if (a == nccl::kNvls) {
          lat = intra_lat;
          if (n_nodes > 1) lat += inter_lat;
        } else if (a == nccl::kNvlsTree) {
          lat += intra_lat + 2 * log2i(n_nodes) * inter_lat;
        } else if (a == nccl::kPat) {
          if (rs_ag) lat += log2i(n_nodes) * (inter_lat / 3.5f) + n_ranks * 2.8f;
        }
        cell.latency_us = lat;
        cell.bandwidth_gbs = bus_bw;
      }
    }
  }

  // Enable rules (tuning.cc): NVLS Tree needs several nodes, NVLS one node (or CollNet), and
  // LL128 is on by default only where NcclSystem::ll128 says; NCCL_ALGO / NCCL_PROTO enable
  // only what they name (a named LL128 is on whatever the default).
  for (std::size_t f = 0; f < kTunedOps.size(); ++f)
    for (int a = 0; a < kNcclAlgorithms; ++a)
      for (int p = 0; p < kNcclProtocols; ++p) {
        bool on = true;
        if (n_nodes == 1 && a == nccl::kNvlsTree) on = false;
        if (n_nodes > 1 && a == nccl::kNvls) on = false;
        if (s.nvls_channels == 0 && (a == nccl::kNvls || a == nccl::kNvlsTree)) on = false;
        if (force_.algorithm && static_cast<int>(*force_.algorithm) != a) on = false;
        if (force_.protocol) {
          if (static_cast<int>(*force_.protocol) != p) on = false;
        } else if (force_.protocols) {
          if (!(*force_.protocols)[static_cast<std::size_t>(p)]) on = false;
        } else if ((p == nccl::kLl128 && !s.ll128) || (s.simple_only && p != nccl::kSimple)) {
          on = false;
        }
        if (!on)
          table_[f][static_cast<std::size_t>(a)][static_cast<std::size_t>(p)].bandwidth_gbs = 0;
      }
}

NcclCost NcclTuner::cost(coll::Op op, NcclAlgorithm algorithm, NcclProtocol protocol) const {
  const int f = op_index(op);
  if (f < 0) return {};
  return table_[static_cast<std::size_t>(f)][static_cast<std::size_t>(algorithm)]
               [static_cast<std::size_t>(protocol)];
}

double NcclTuner::model_time_us(coll::Op op, NcclAlgorithm algorithm, NcclProtocol protocol,
                                std::uint64_t bytes) const {
  const NcclCost c = cost(op, algorithm, protocol);
  float bw = static_cast<float>(c.bandwidth_gbs);
  float lat = static_cast<float>(c.latency_us);
  if (bw == 0) return -1;
  const int a = static_cast<int>(algorithm), p = static_cast<int>(protocol);
  const int log_size = log2i(static_cast<long long>(bytes >> 6));
  if (algorithm == NcclAlgorithm::tree && op == coll::Op::all_reduce && (bytes >> 6) > 0 &&
      log_size < 23)
    bw *= nccl::kTreeCorrectionFactor[static_cast<std::size_t>(p)]
                                     [static_cast<std::size_t>(log_size)];
  // The NVLS-Tree correction applies only to Blackwell on x86.
  if (algorithm == NcclAlgorithm::nvls_tree && op == coll::Op::all_reduce && (bytes >> 6) > 0 &&
      log_size < 24 && system_.min_cc >= 100)
    bw *= nccl::kTreeCorrectionFactor[static_cast<std::size_t>(p)]
                                     [static_cast<std::size_t>(log_size)];
  if (a == nccl::kRing && p == nccl::kSimple && system_.nodes > 1 && op == coll::Op::all_reduce &&
      bytes / (static_cast<std::uint64_t>(system_.channels) * system_.ranks) >= 64)
    lat *= system_.min_cc < 80 ? nccl::kRingPlateauPreAmpere : nccl::kRingPlateau;
  return lat + static_cast<float>(bytes) / (1000 * bw); // one operation, no aggregation
}

NcclChoice NcclTuner::choose(coll::Op op, std::uint64_t bytes) const {
  return choose(op, bytes, [op](NcclAlgorithm algorithm, NcclProtocol) {
    return !nccl_generator(op, algorithm).empty();
  });
}

NcclChoice
NcclTuner::choose(coll::Op op, std::uint64_t bytes,
                  const std::function<bool(NcclAlgorithm, NcclProtocol)>& offered) const {
  if (op_index(op) < 0)
    throw InputError("/workload/op",
                     "\"nccl\" models NCCL's tuner, which chooses for all_reduce, "
                     "reduce_scatter, all_gather, broadcast and reduce; NCCL runs " +
                         std::string(coll::to_string(op)) +
                         " as point-to-point: name a ddlsim algorithm instead");
  NcclChoice choice;
  if (system_.ranks <= 1) {
    choice.generator = nccl_generator(op, NcclAlgorithm::ring);
    return choice;
  }
  float min_time = FLT_MAX;
  bool found = false;
  for (int a = 0; a < kNcclAlgorithms; ++a) {
    const auto algorithm = static_cast<NcclAlgorithm>(a);
    const std::string generator = nccl_generator(op, algorithm);
    // enqueue.cc updateCollCostTable: NVLS beyond 32 local ranks only for all-reduce.
    if ((a == nccl::kNvls || a == nccl::kNvlsTree) && op != coll::Op::all_reduce &&
        system_.local_ranks > nccl::kMaxNvlsArity)
      continue;
    for (int p = 0; p < kNcclProtocols; ++p) {
      const auto protocol = static_cast<NcclProtocol>(p);
      // By default an algorithm is not offered until ddlsim has its generator.
      if (!offered(algorithm, protocol)) continue;
      const double t = model_time_us(op, algorithm, protocol, bytes);
      if (t >= 0.0 && static_cast<float>(t) < min_time) {
        min_time = static_cast<float>(t);
        choice.algorithm = algorithm;
        choice.protocol = protocol;
        choice.generator = generator;
        found = true;
      }
    }
  }
  if (!found) {
    std::string why =
        "no NCCL algorithm and protocol can run " + std::string(coll::to_string(op)) + " here";
    if (force_.algorithm) {
      why += " with algorithm \"" + std::string(to_string(*force_.algorithm)) + "\"";
      if (nccl_generator(op, *force_.algorithm).empty())
        why += " (ddlsim has no generator for NCCL's " +
               std::string(display_name(*force_.algorithm)) + " on this op yet)";
    }
    if (force_.protocol)
      why += " with protocol \"" + std::string(to_string(*force_.protocol)) + "\"";
    if (force_.protocols) why += " with the protocols the NCCL_PROTO list leaves on";
    throw InputError("/workload/nccl", why + "; remove or change the forced keys");
  }
  choice.model_seconds = min_time * 1e-6;

  // enqueue.cc topoGetAlgoInfo: fewer channels (and threads) for small calls.
  const int a = static_cast<int>(choice.algorithm), p = static_cast<int>(choice.protocol);
  int nc = system_.channels;
  if (choice.algorithm == NcclAlgorithm::nvls || choice.algorithm == NcclAlgorithm::nvls_tree) {
    nc = system_.nvls_channels;
    if (system_.nodes > 1 && choice.algorithm == NcclAlgorithm::nvls)
      nc = std::min(nc, system_.channels);
  } else {
    const long long nt = max_threads(system_, a, p);
    const long long threshold = thread_threshold(system_, a, p);
    while (static_cast<long long>(bytes) < nc * nt * threshold && nc >= 2) --nc;
  }
  choice.channels = std::max(nc, 1);
  return choice;
}

coll::Protocol nccl_protocol(const NcclSystem& system, NcclAlgorithm algorithm,
                             NcclProtocol protocol) {
  const auto a = static_cast<std::size_t>(algorithm);
  const auto p = static_cast<std::size_t>(protocol);
  coll::Protocol out;
  out.name = std::string(to_string(protocol));
  // LL: every 8-byte word carries 4 bytes of data and a 4-byte flag (src/include/device.h,
  // union ncclLLFifoLine: two data words and two flags per 16 bytes). LL128: each 128-byte line
  // carries 120 bytes of data and an 8-byte flag (NCCL_LL128_LINEELEMS, NCCL_LL128_DATAELEMS).
  out.payload_efficiency = protocol == NcclProtocol::ll      ? 0.5
                           : protocol == NcclProtocol::ll128 ? 120.0 / 128.0
                                                             : 1.0;
  const int intra_hw =
      intra_nvlink(system, static_cast<int>(algorithm)) ? nccl::kHwNvlink : nccl::kHwPci;
  float intra = nccl::kHwLatencies[static_cast<std::size_t>(intra_hw)][a][p];
  const bool one_gpu_per_node = system.ranks == system.nodes;
  float inter = one_gpu_per_node ? nccl::kHwLatencies[nccl::kHwNet][nccl::kTree][p]
                                 : nccl::kHwLatencies[nccl::kHwNet][a][p];
  // A net plugin's own model of its step replaces NCCL's (NcclSystem::net_step_us). Only the
  // engine's cost: NCCL's choice keeps its own table, as NCCL does on two nodes, where
  // aws-ofi-nccl's tuner leaves the choice to NCCL.
  if (system.net_step_us > 0)
    inter = static_cast<float>(system.net_step_us + (protocol == NcclProtocol::simple
                                                         ? system.net_simple_completion_us
                                                         : 0.0));
  if (algorithm == NcclAlgorithm::ring && system.nodes > 1) {
    float net_overhead = system.cpu_amd ? nccl::kNetOverheadAmd : nccl::kNetOverheadIntel;
    if (protocol == NcclProtocol::simple) net_overhead *= 3;
    intra = std::max(intra, net_overhead);
  }
  out.intra_hop_ps = static_cast<std::int64_t>(std::llround(static_cast<double>(intra) * 1e6));
  out.inter_hop_ps = static_cast<std::int64_t>(std::llround(static_cast<double>(inter) * 1e6));
  // Every network step is posted by the proxy thread of the GPU that sends it (src/proxy.cc,
  // progressOps; src/transport/net.cc, sendProxyProgress, NCCL 2.30.7), which NCCL's model
  // charges per step as its net overhead (src/graph/tuning.cc, getNetOverhead: "Network post
  // overhead", 1 us on Intel x86, 2 us on AMD x86, 1 us otherwise; x3 for Simple, whose GDR
  // receives are also flushed). The engines queue it on the sending rank's proxy.
  {
    float net_post = system.cpu_amd ? nccl::kNetOverheadAmd : nccl::kNetOverheadIntel;
    if (protocol == NcclProtocol::simple) net_post *= 3;
    out.net_post_ps = static_cast<std::int64_t>(std::llround(static_cast<double>(net_post) * 1e6));
    // Where the GPU needs it (NcclSystem::gdr_flush), the receiving proxy flushes every Simple
    // step it receives from the network before handing it to the GPU (src/transport/net.cc,
    // recvProxyProgress: "if (totalSize > 0 && p == NCCL_PROTO_SIMPLE && needFlush)" iflush):
    // one more network operation of that proxy, charged NCCL's figure for one (the post).
    if (system.gdr_flush && system.nodes > 1 && protocol == NcclProtocol::simple)
      out.net_flush_ps = out.net_post_ps;
  }
  out.reduce_in_flight = true; // NCCL's kernels reduce each chunk as it arrives
  // NVLS and NVLS-Tree move their in-node bytes with multimem loads (ld_reduce) and stores
  // through the NVSwitch, which the switch reduces and replicates; NCCL's model rates that
  // traffic at nvlsEfficiency of the NVLink rate its graph gives a unicast copy (tuning.cc,
  // ncclTopoTuneModel: "Convert to NVLS busBW/channel"; 0.85 Hopper, 0.74 Blackwell). It is the
  // switch steps' efficiency only: NVLS-Tree's network hops are plain transfers and keep their
  // bytes.
  if (algorithm == NcclAlgorithm::nvls || algorithm == NcclAlgorithm::nvls_tree)
    out.switch_efficiency =
        nccl::kNvlsEfficiency[static_cast<std::size_t>(compcap_index(system.min_cc))];
  return out;
}

namespace {

// NCCL's Tree/LL128 chunk for a call of `bytes` on `channels` channels (src/enqueue.cc,
// calcCollChunking, NCCL 2.30.7): starting from the full LL128 step (`full`, 576,000 data bytes),
// NCCL halves the chunk until each channel has about nstepsLL128·64/ppn chunks (not below
// 128 KiB), then about nstepsLL128·16/ppn (not below 32 KiB), nstepsLL128 = 1 + log2(nNodes) +
// 0.1·ppn, so that a mid-size call still fills the tree's pipeline: on 2 nodes of 8 GPUs (5.6
// chunks) a 1 MiB call on 16 channels runs 4 chunks of 17,280 bytes per channel instead of one.
// The chunk is then a whole number of LL128 grains (ncclProtoGrainSize, src/include/device.h:
// 32 threads x 8 / 16 x 15 x 8 bytes = 1,920). Large calls keep chunks of 128 KiB or more.
std::uint64_t nccl_tree_ll128_chunk(const NcclSystem& system, std::uint64_t channels,
                                    std::uint64_t bytes, std::uint64_t full) {
  constexpr std::uint64_t kLl128Grain = 32 * 8 / 16 * 15 * 8; // ncclProtoGrainSize(LL128)
  const int nodes = std::max(system.nodes, 1);
  const float ppn = static_cast<float>(std::max(system.ranks, 1)) / static_cast<float>(nodes);
  const float steps = 1.0f + static_cast<float>(log2i(nodes)) + 0.1f * ppn;
  std::uint64_t chunk = full;
  // NCCL compares an integer quotient with a float, as here.
  auto per_channel = [&] { return static_cast<float>(bytes / (channels * chunk)); };
  while (per_channel() < steps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (per_channel() < steps * 16 / ppn && chunk > 32768) chunk /= 2;
  return std::max(chunk / kLl128Grain, std::uint64_t{1}) * kLl128Grain;
}

} // namespace

int nccl_pipeline_chunks(const NcclSystem& system, const NcclChoice& choice, std::uint64_t bytes) {
  constexpr std::uint64_t kSteps = 8;                                      // NCCL_STEPS (device.h)
  const std::uint64_t simple_step = system.simple_buffsize / kSteps;       // NCCL_BUFFSIZE
  constexpr std::uint64_t kLlStep = 8ull * 512 * kSteps * 16 / kSteps;     // lines x threads x 16 B
  constexpr std::uint64_t kLl128Step = 120ull * 640 * kSteps * 8 / kSteps; // elems x threads x 8 B
  const bool ring = choice.algorithm == NcclAlgorithm::ring;
  std::uint64_t chunk = 0;
  switch (choice.protocol) {
  case NcclProtocol::ll:
    chunk = kLlStep / 2;
    break; // half of each line is data
  case NcclProtocol::ll128:
    chunk = kLl128Step / 128 * 120;
    break; // 120 of 128 bytes are data
  case NcclProtocol::simple:
    chunk = simple_step * (ring ? 4 : 1);
    break; // ALLREDUCE_CHUNKSTEPS
  }
  const std::uint64_t channels = std::uint64_t(std::max(choice.channels, 1));
  if (choice.algorithm == NcclAlgorithm::tree && choice.protocol == NcclProtocol::ll128)
    chunk = nccl_tree_ll128_chunk(system, channels, bytes, chunk);
  std::uint64_t share = bytes / channels;
  if (choice.algorithm == NcclAlgorithm::nvls || choice.algorithm == NcclAlgorithm::nvls_tree) {
    chunk = choice.algorithm == NcclAlgorithm::nvls
                ? system.nvls_chunk       // NCCL_NVLS_CHUNKSIZE
                : system.nvls_tree_chunk; // its largest: the cuts for small calls are not modelled
    share /= std::uint64_t(std::max(system.local_ranks, 1));
  } else if (ring) {
    share /= std::uint64_t(std::max(system.ranks, 1));
  }
  const std::uint64_t chunks = (share + chunk - 1) / chunk;
  return static_cast<int>(std::clamp<std::uint64_t>(chunks, 1, kMaxNcclChunks));
}

Picoseconds nccl_call_overhead(NcclAlgorithm algorithm, NcclProtocol protocol) {
  const auto a = static_cast<std::size_t>(algorithm);
  const auto p = static_cast<std::size_t>(protocol);
  float us = nccl::kBaseLatencies[a][p];
  // tuning.cc: latencies[NVLS] = intraLat; latencies[NVLS_TREE] = base + intraLat + the
  // inter-node hops (which the inter-node transfers charge themselves).
  if (algorithm == NcclAlgorithm::nvls || algorithm == NcclAlgorithm::nvls_tree)
    us += nccl::kHwLatencies[nccl::kHwNvlink][a][p];
  return static_cast<Picoseconds>(std::llround(static_cast<double>(us) * 1e6));
}

} // namespace ddlsim::models
