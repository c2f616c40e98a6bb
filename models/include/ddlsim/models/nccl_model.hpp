// NCCL's own choice model, as NCCL 2.30.7 makes it, shared by everything in ddlsim that asks
// "what would NCCL run here?" (the engine layer's "algorithm": "nccl", calibrate's point model).
//
// - describe_nccl: what NCCL's topology detection and graph search see on a cluster
//   (src/graph/topo.cc, topo.h, search.cc, connect.cc, src/transport/nvls.cc): link rates in
//   NCCL's own units, the ring, tree and NVLS graphs (channels and per-channel bandwidth inside
//   and across nodes), the channel counts a communicator launches, NVLS and LL128 support.
// - NcclTuner: the latency and bandwidth of every (collective, algorithm, protocol) exactly as
//   src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime) computes them from that
//   description, and the choice per call size with its channel count as src/enqueue.cc
//   (updateCollCostTable, topoGetAlgoInfo) makes it, honouring the scenario's equivalents of
//   NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS.
// - nccl_protocol: the chosen protocol's wire cost as the coll::Protocol every engine charges.
//
// Not modelled: CollNet/SHARP (NCCL disables it without the plugin; so do we), PAT (no ddlsim
// generator), NCCL_ALGO/NCCL_PROTO lists per collective (one forced value for the call), tuner
// plugins, MNNVL, CPU vendors other than x86 Intel (AMD changes LL's cap on several nodes and
// the net overhead), and user buffer registration.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::models {

// NCCL's algorithms and protocols in NCCL's own order (src/include/device.h, NCCL_ALGO_* and
// NCCL_PROTO_*); the choice breaks ties by this order.
enum class NcclAlgorithm : std::uint8_t {
  tree,
  ring,
  collnet_direct,
  collnet_chain,
  nvls,
  nvls_tree,
  pat
};
enum class NcclProtocol : std::uint8_t { ll, ll128, simple };
inline constexpr int kNcclAlgorithms = 7;
inline constexpr int kNcclProtocols = 3;
// NCCL_ALGO / NCCL_PROTO spellings, lower case: "tree", "ring", "collnet_direct",
// "collnet_chain", "nvls", "nvls_tree", "pat"; "ll", "ll128", "simple".
std::string_view to_string(NcclAlgorithm algorithm);
std::string_view to_string(NcclProtocol protocol);
// NCCL's log spelling: "Tree", "Ring", "NVLS", "NVLSTree", ...; "LL", "LL128", "Simple".
std::string_view display_name(NcclAlgorithm algorithm);
std::string_view display_name(NcclProtocol protocol);

// The NCCL release this models (2.30), as major * 100 + minor.
inline constexpr int kNcclModelVersion = 230;

// Whether NCCL `version` (major * 100 + minor; 0 = unknown, taken as the newest) enables LL128
// by default on compute capability `cc` (x10): the architecture part of NCCL's rule, by release
// (src/graph/tuning.cc history: none before 2.5; 2.5-2.6 Volta; 2.7-2.17 and Ampere sm_80;
// 2.18-2.24 and Hopper; 2.25-2.26 and Blackwell sm_100, sm_120; from 2.27 any sm_70+).
bool nccl_ll128_architecture(int version, int cc);

// One graph NCCL's search finds (struct ncclTopoGraph): per channel a ring or chain through a
// node's GPUs, entering and leaving through NICs on several nodes.
struct NcclGraph {
  int channels = 0;    // nChannels; 0 = none found
  double bw_intra = 0; // GB/s per channel inside a node (bwIntra)
  double bw_inter = 0; // GB/s per channel across nodes (bwInter)
  bool operator==(const NcclGraph&) const = default;
};

// How a GPU reaches the NIC its channels use (NCCL's path types, src/graph/topo.h).
enum class NcclNicPath : std::uint8_t {
  pxb, // through PCIe switches only (PATH_PIX / PATH_PXB): GPUDirect RDMA
  pxn, // through a peer GPU over NVLink to that GPU's NIC (PATH_PXN, Hopper and later)
  phb, // through the CPU (PATH_PHB or worse)
};

struct NcclSystem {
  int ranks = 0;
  int nodes = 0;
  int local_ranks = 0; // the most ranks on one node (comm->maxLocalRanks)
  std::string gpu_model;
  int min_cc = 0; // compute capability x10 of the GPUs (comm->minCompCap, maxCompCap)
  int max_cc = 0;
  // Inside a node: "nvswitch", "nvlink" (direct NVLinks), "pcie", or "none" (one GPU).
  std::string intra;
  int nvlinks_per_gpu = 0;    // NVLink links from one GPU
  double nvlink_link_gbs = 0; // NCCL's rate per NVLink link (topo.h SMxx_NVLINK_BW)
  double nvlink_gbs = 0;      // NCCL's NVLink rate of one GPU, all its links
  double pcie_gbs = 0;        // NCCL's rate of a PCIe x16 link (topo.cc: width x GT/s / 80)
  double nic_gbs = 0;         // NCCL's rate of one NIC (speed in Mb/s / 8000)
  int nics_per_node = 0;      // fewest NICs on a node
  NcclNicPath nic_path = NcclNicPath::pxb;
  NcclGraph ring, tree, nvls;    // the search's graphs, after channel duplication
  int channels = 0;              // comm->nChannels: ring and tree channels launched
  int nvls_channels = 0;         // comm->nvlsChannels; 0 = no NVLS
  bool ll128 = false;            // LL128 on by default here
  bool single_gpu_trees = false; // one GPU per node: the simpler TREE pattern (busBw x 0.85)
  bool cpu_amd = false;          // CPU vendor (not in a ClusterSpec: assumed Intel x86)
  // The transport's vendor runs NCCL with NCCL_PROTO=Simple (GPUDirect-TCPXO: Google's FasTrak
  // profile, nccl_tcpxo_profile in nccl_system.cpp); it also sets NCCL_NVLS_ENABLE=0.
  bool simple_only = false;
  // The net plugin's time of one network step where its vendor publishes a model of it, in place
  // of NCCL's hwLatencies[NET] (0 = NCCL's figure): on EFA, aws-ofi-nccl's tuner model charges
  // net_lat = 20 us per inter-node step plus 3 us for a Simple step's completion (nccl_system.cpp).
  double net_step_us = 0;
  double net_simple_completion_us = 0;
  // Buffer and chunk sizes as the net plugin's vendor sets them in NCCL's environment (defaults:
  // NCCL 2.30's): NCCL_BUFFSIZE, Simple's buffer (a step is 1/NCCL_STEPS of it; DEFAULT_BUFFSIZE
  // 4 MiB, src/include/device.h), and NCCL_NVLS_CHUNKSIZE with NCCL_NVLSTREE_MAX_CHUNKSIZE, the
  // chunk of NVLS and NVLS-Tree (128 KiB, src/transport/nvls.cc). Set in nccl_system.cpp.
  std::uint64_t simple_buffsize = std::uint64_t{4} << 20;
  std::uint64_t nvls_chunk = std::uint64_t{128} << 10;
  // NVLS-Tree's largest chunk: in NCCL 2.30 min(NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE)
  // (src/enqueue.cc, calcCollChunking), before NCCL 2.20 one Simple step (NCCL 2.18.5
  // src/enqueue.cc, computeColl: chunkSize = stepSize for NVLS_TREE).
  std::uint64_t nvls_tree_chunk = std::uint64_t{128} << 10;
  // Every node reaches the network by GPUDirect RDMA (ib, roce, efa, cxi), and every node is on
  // EFA (NCCL runs with aws-ofi-nccl, whose environment the profiles above follow).
  bool gdr = false;
  bool aws_ofi_nccl = false;
  // NCCL's proxy flushes every received Simple network step before the GPU reads it
  // (src/graph/paths.cc, ncclTopoNeedFlush: always before Hopper; on Hopper only with
  // NCCL_NET_FORCE_FLUSH, whose default is 1 before NCCL 2.19.1 and 0 since; aws-ofi-nccl sets it
  // to 0 from v1.8.0). coll::Protocol::net_flush_ps.
  bool gdr_flush = false;
  // One line per finding, for reports and `topo describe`-style output.
  std::string summary() const;
};

// What NCCL 2.30 would find on the first `ranks` GPUs of `spec` (node-major, as Topology::gpus).
// Throws InputError naming the node group's gpu_model when it is not an NVIDIA GPU we know, or
// "/workload/ranks" when ranks exceeds the cluster's GPUs.
//
// The search is modelled, not replayed: per channel a ring (or tree chain) crosses every GPU of
// a node once and, on several nodes, enters and leaves through one NIC; the channels that fit at
// a speed are the busiest resource's rate / speed (a GPU's NVLinks or PCIe link, a NIC's path);
// NVLS heads carry twice. Speeds come from NCCL's speed arrays in NCCL's order, with NCCL's
// acceptance rules (search.cc: stop at a perfect or bandwidth-saturating solution, try slower
// speeds while above 0.49 of the best, duplicate fast channels, then raise the speed of the
// solution found). It does not model PCIe switch uplinks shared by several GPUs, the Intel P2P
// overhead, NIC/GPU affinity beyond "a NIC on the GPU's PCIe switch", crossNic, or search
// timeouts.
NcclSystem describe_nccl(const topo::ClusterSpec& spec, int ranks);

// The scenario's "nccl" object: NCCL_ALGO, NCCL_PROTO and NCCL_MIN_NCHANNELS =
// NCCL_MAX_NCHANNELS, each optional.
struct NcclOverrides {
  std::optional<NcclAlgorithm> algorithm;
  std::optional<NcclProtocol> protocol;
  // NCCL_PROTO as a list ("LL,Simple") or an exclusion ("^LL128"): the protocols it leaves on.
  // As in NCCL (src/graph/tuning.cc, parseList), every protocol is then on or off as the list
  // says, LL128 included whatever its default rule.
  std::optional<std::array<bool, kNcclProtocols>> protocols;
  int channels = 0; // 0 = NCCL's own count
  // The releases the measured setup ran, where it says (major * 10000 + minor * 100 + patch; 0 =
  // not said: NCCL 2.30 with aws-ofi-nccl's current profile): they set the environment NCCL ran
  // with (with_release). The cost table and the search stay NCCL 2.30's.
  int version = 0;      // NCCL, e.g. 21805 for 2.18.5
  int aws_ofi_nccl = 0; // aws-ofi-nccl on EFA, e.g. 10703 for v1.7.3-aws
  bool operator==(const NcclOverrides&) const = default;
};
// "2.18.5" -> 21805 (NCCL: 2.12 to 2.30), "1.7.3" or "v1.7.3-aws" -> 10703 (aws-ofi-nccl: 1.0 to
// 1.99); InputError at `where` for anything else.
int parse_nccl_version(std::string_view text, const std::string& where);
int parse_aws_ofi_nccl_version(std::string_view text, const std::string& where);

// `system` as the releases of `setup` ran it (NcclOverrides::version, aws_ofi_nccl), from
// their sources: aws-ofi-nccl sets NCCL_NET_FORCE_FLUSH=0 and NCCL_NVLSTREE_MAX_CHUNKSIZE=524288
// from v1.8.0, NCCL_NVLS_CHUNKSIZE=524288 from v1.9.0, NCCL_BUFFSIZE=8388608 from v1.16.0
// (src/platform-aws.c[pp], platform_init / platform_data_map at those tags); NCCL before 2.19.1
// flushes GPUDirect RDMA receives on Hopper by default (NCCL_NET_FORCE_FLUSH=1,
// src/graph/paths.cc), and before 2.20 chunks NVLS-Tree by the Simple step. Throws InputError
// at "/workload/nccl/aws_ofi_nccl" when the plugin is named but the nodes are not all on EFA.
NcclSystem with_release(NcclSystem system, const NcclOverrides& setup);
// Names as NCCL_ALGO / NCCL_PROTO take them, any case ("Tree", "nvlstree", "LL128"); anything
// else throws InputError at `where` listing the valid names.
NcclAlgorithm parse_nccl_algorithm(std::string_view name, const std::string& where);
NcclProtocol parse_nccl_protocol(std::string_view name, const std::string& where);
// NCCL_PROTO's syntax into `force`: one protocol ("LL128": that one, forced), a list ("LL,Simple":
// only those) or an exclusion ("^LL128": all but those), as NCCL's parseList reads it
// (src/graph/tuning.cc). InputError at `where` for an unknown name or an empty list.
void parse_nccl_protocols(std::string_view value, const std::string& where, NcclOverrides& force);

// One cell of NCCL's cost table (comm->latencies, comm->bandwidths): the time of a call of n
// bytes is latency + n / (1000 x bandwidth) us. Bandwidth 0 = disabled.
struct NcclCost {
  double latency_us = 0;
  double bandwidth_gbs = 0;
};

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::ring;
  NcclProtocol protocol = NcclProtocol::simple;
  int channels = 1;         // channels this call launches (topoGetAlgoInfo's nMaxChannels)
  double model_seconds = 0; // NCCL's modelled time for the call
  std::string generator;    // the ddlsim generator that runs it
  // "tree/LL128, 16 channels"
  std::string describe() const;
};

class NcclTuner {
public:
  explicit NcclTuner(NcclSystem system, NcclOverrides force = {});

  const NcclSystem& system() const { return system_; }
  const NcclOverrides& overrides() const { return force_; }
  // The cost table after NCCL's enable rules and the overrides; all_to_all and send_recv have
  // none (NCCL runs them as point-to-point).
  NcclCost cost(coll::Op op, NcclAlgorithm algorithm, NcclProtocol protocol) const;
  // ncclTopoGetAlgoTime for one call of `bytes` (the nccl-tests size): us, or -1 if disabled.
  double model_time_us(coll::Op op, NcclAlgorithm algorithm, NcclProtocol protocol,
                       std::uint64_t bytes) const;
  // NCCL's choice for a call of `bytes`, among the algorithms with a registered ddlsim
  // generator (nccl_generator). Throws InputError ("/workload/nccl" or "/workload/op") when
  // nothing is available: an op NCCL does not tune, or a forced algorithm or protocol that
  // cannot run.
  NcclChoice choose(coll::Op op, std::uint64_t bytes) const;
  // The same among the (algorithm, protocol) pairs `offered` accepts: every pair asks what NCCL
  // itself would run, whether or not ddlsim has its generator (the choice's generator is then
  // "" where none is registered); calibrate offers only the protocols it calibrated.
  NcclChoice choose(coll::Op op, std::uint64_t bytes,
                    const std::function<bool(NcclAlgorithm, NcclProtocol)>& offered) const;

private:
  NcclSystem system_;
  NcclOverrides force_;
  // [op][algorithm][protocol] for all_reduce, reduce_scatter, all_gather, broadcast, reduce.
  std::array<std::array<std::array<NcclCost, kNcclProtocols>, kNcclAlgorithms>, 5> table_{};
};

// The ddlsim generator that runs NCCL's `algorithm` for `op` (Ring: nccl_ring, or for ops that
// have none the op's ring; Tree: nccl_tree; NVLS: nvls; NVLS_TREE: nvls_tree), or "" when none
// is registered.
std::string nccl_generator(coll::Op op, NcclAlgorithm algorithm);

// The wire cost of running `algorithm` with `protocol` on `system`: payload efficiency (LL: 8
// bytes of data per 16 with their flags; LL128: 120 of every 128 bytes; Simple: all), NCCL's
// per-hop latencies (tuning.cc hwLatencies: inside a node NVLink or PCI, across nodes NET;
// a ring on several nodes at least the per-step net overhead), and reduction in flight.
coll::Protocol nccl_protocol(const NcclSystem& system, NcclAlgorithm algorithm,
                             NcclProtocol protocol);

// How many pipeline chunks per channel the generator of `choice` runs for a call of `bytes`
// (params.chunks): the call's per-channel share in NCCL's chunk size (src/enqueue.cc
// calcCollChunking, NCCL 2.30.7: a step is the protocol's buffer over NCCL_STEPS = 8: Simple
// 4 MiB, LL 512 KiB of lines carrying half data, LL128 4,915,200 bytes carrying 120/128; a Simple
// ring moves ALLREDUCE_CHUNKSTEPS = 4 steps per chunk; NVLS 128 KiB, NCCL_NVLS_CHUNKSIZE;
// Tree/LL128 halves its chunk for mid-size calls until the tree's pipeline has enough chunks, as
// NCCL does). A ring's chunk splits one rank's block, a tree's the channel's share, NVLS one GPU's
// shard. At most kMaxNcclChunks: a bound on the simulation's size, not a model constant (past it
// chunks grow).
inline constexpr int kMaxNcclChunks = 64;
int nccl_pipeline_chunks(const NcclSystem& system, const NcclChoice& choice, std::uint64_t bytes);

// The per-call overhead NCCL's model charges before any hop: tuning.cc baseLatencies (the
// kernel launch and NCCL's software path; the same for every GPU generation in NCCL 2.30). NVLS
// and NVLS-Tree add their NVLink latency (hwLatencies[NVLink][NVLS], 25 us): NCCL's model
// charges it once per call (one pass through the switch, ncclTopoTuneModel sets NVLS's latency
// to it), and the engines charge no per-hop latency on switch steps, so it is the call's.
Picoseconds nccl_call_overhead(NcclAlgorithm algorithm, NcclProtocol protocol);

// NCCL's rings inside a node whose GPUs are joined by direct links (the DGX-1 NVLink
// hybrid cube-mesh): the local-rank order of each ring its search finds over direct links only
// (src/graph/search.cc), for coll::CollectiveCall::node_rings; empty where the local ranks in
// order already go over direct links, or nothing joins the GPUs directly (NVSwitch, PCIe). Read
// from the first node (a cluster's nodes are alike; a node of another size keeps its order).
std::vector<std::vector<int>> nccl_node_rings(const topo::Topology& topology);

} // namespace ddlsim::models
