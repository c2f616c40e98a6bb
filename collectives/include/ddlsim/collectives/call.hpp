// A collective call: what is asked of the ranks, independent of how it is done.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::coll {

enum class Op : std::uint8_t {
  all_reduce,
  reduce_scatter,
  all_gather,
  broadcast,
  reduce,
  all_to_all,
  send_recv
};
enum class DataType : std::uint8_t { fp32, fp16, bf16 };
enum class Reduction : std::uint8_t { sum, avg, adasum };

std::string_view to_string(Op op);
std::string_view to_string(DataType type);
std::string_view to_string(Reduction reduction);
std::size_t element_size(DataType type);

// Parameters an algorithm may read; each generator documents which ones it uses and rejects
// values it cannot honour.
struct AlgorithmParams {
  int chunks = 1;                 // pipeline chunks per step (ring, chain, tree, pipelined bcast)
  int channels = 1;               // parallel channels: independent rings / trees over slices
  std::vector<int> group_sizes;   // hierarchical factorisation, innermost first (BlueConnect 4x2x24
                                  // is {4, 2, 24}; 2D torus {row, column}); product = ranks
  int servers = 0;                // parameter server: number of servers S
  bool dedicated_servers = false; // parameter server: S extra ranks after the workers
  double density = 0.01;          // top-k: fraction of elements kept (k = ceil(density * n))
  std::uint64_t chunk_bytes = 0;  // coarse-grained sparse: bytes per chunk

  bool operator==(const AlgorithmParams&) const = default;
};

// How the bytes of a call move, as NCCL's protocols do (src/device/prims_ll.h, prims_ll128.h,
// prims_simple.h; NCCL 2.30): what fraction of the bytes on the wire is payload (LL puts a 4-byte
// flag after every 4 bytes of data, union ncclLLFifoLine in src/include/device.h: 0.5; LL128 one
// 8-byte flag per 128-byte line, NCCL_LL128_DATAELEMS: 120/128; Simple none), a latency every
// transfer pays on top of the path's, by whether it stays inside a node or crosses the network (a
// NIC), and whether a receive-and-reduce reduces the data as it arrives (NCCL's kernels do) rather
// than after all of it arrived. Engines charge it per step (docs/engines.md#protocols); the default
// leaves every cost as it was without protocols.
//
// switch_efficiency rates the switch steps (switch_reduce, switch_multicast: NVLS's multimem
// loads and stores through an NVSwitch) against the unicast NVLink rate the links carry: NCCL's
// model rates NVLS and NVLS-Tree traffic inside a node at nvlsEfficiency of the graph's NVLink
// bandwidth (src/graph/tuning.cc, NCCL 2.30.7: 0.85 Hopper, 0.74 Blackwell). A switch step puts
// bytes / (payload_efficiency * switch_efficiency) on its links; other steps ignore it.
struct Protocol {
  std::string name = "simple";
  double payload_efficiency = 1.0; // payload bytes per wire byte, in (0, 1]
  double switch_efficiency = 1.0;  // switch steps: payload per wire byte on top of it, in (0, 1]
  std::int64_t intra_hop_ps = 0;   // per transfer inside a node
  std::int64_t inter_hop_ps = 0;   // per transfer that crosses the network
  // What one network step occupies its sending GPU's proxy thread for before its bytes may move:
  // NCCL's proxy posts every step of a network connection (src/transport/net.cc,
  // sendProxyProgress), one step at a time for all of a GPU's channels (src/proxy.cc,
  // progressOps), and NCCL's model charges it per step (src/graph/tuning.cc, getNetOverhead,
  // NCCL 2.30: 1 us on Intel x86, 2 us on AMD x86, 1 us otherwise; x3 for Simple). Only NCCL's
  // protocols set it; 0 charges nothing (sim/protocol_cost.hpp, ProxyPosts).
  std::int64_t net_post_ps = 0;
  // What one received network step occupies its receiving GPU's proxy thread for before the
  // GPU may read it: the GPUDirect RDMA flush. Where the GPU needs one, NCCL's proxy flushes every
  // received Simple step (src/transport/net.cc, recvProxyProgress: iflush after the receive,
  // the step handed to the GPU once the flush completes; src/graph/paths.cc ncclTopoNeedFlush:
  // always before Hopper, on Hopper only with NCCL_NET_FORCE_FLUSH, 1 by default before NCCL
  // 2.19.1). The flush is one more operation the proxy posts and completes, charged NCCL's
  // per-operation figure (net_post_ps). 0 charges nothing (sim/protocol_cost.hpp, ProxyPosts).
  std::int64_t net_flush_ps = 0;
  bool reduce_in_flight = false;
  // Thread blocks the call's kernel keeps resident on each GPU per program of the Schedule while
  // a step of that program is in flight: NCCL runs one block per channel, so NCCL's channels of
  // the call / the Schedule programs (lanes) it runs on; 0 for transfers that take no SMs (copy
  // engines). Engines that model compute slowed by communication kernels count them
  // (sim/compute_slowdown.hpp); nothing else reads it.
  double blocks_per_program = 1.0;

  bool operator==(const Protocol&) const = default;
};

struct CollectiveCall {
  Op op = Op::all_reduce;
  int ranks = 1; // participating ranks 0..ranks-1 (dedicated servers are extra, see Schedule)
  // The nccl-tests "size": all_reduce, broadcast, reduce: the buffer on each rank;
  // reduce_scatter: each rank's input (its output is bytes / ranks); all_gather: each rank's
  // output (its input is bytes / ranks); all_to_all: each rank's send buffer; send_recv: the
  // message. A multiple of the element size.
  std::uint64_t bytes = 0;
  DataType dtype = DataType::fp32;
  Reduction reduction = Reduction::sum;
  int root = 0; // broadcast and reduce; send_recv: rank 0 sends to `root`
  std::string algorithm = "ring";
  AlgorithmParams params;
  // Server (node) of each rank, for hierarchical algorithms; empty means one rank per node.
  std::vector<int> node_of_rank;
  // The orders in which a ring visits a node's GPUs, as NCCL's search finds them over direct
  // links (each a permutation of the local ranks 0..L-1 of a node of L ranks); a ring generator
  // that reads it (nccl_ring) runs channel c on ring c mod size in every node of L ranks. Empty:
  // the local ranks in order.
  std::vector<std::vector<int>> node_rings;
  // How its bytes move (NCCL's tuner chooses it per call); every step of the call carries it.
  Protocol protocol;

  std::uint64_t elements() const { return bytes / element_size(dtype); }
  bool operator==(const CollectiveCall&) const = default;
};

// The [begin, end) element range of part `index` when `total` elements are split into `parts`
// parts as evenly as possible (the first total % parts parts get one more element).
struct ElementRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end - begin; }
};
// Inline because generators call it for every step they emit, in the executors' inner loops.
inline ElementRange partition(std::uint64_t total, std::uint64_t parts, std::uint64_t index) {
  const std::uint64_t base = total / parts, extra = total % parts;
  const std::uint64_t begin = index * base + (index < extra ? index : extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

} // namespace ddlsim::coll
