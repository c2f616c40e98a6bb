// all_reduce "nvls": NCCL's NVLS all-reduce inside one NVSwitch domain (NCCL 2.30.7
// src/device/all_reduce.h, RunWorkColl<ncclFuncAllReduce, ..., NCCL_ALGO_NVLS, ...>; PTX ISA
// multimem.ld_reduce / multimem.st; NVIDIA Hopper architecture whitepaper, NVLink SHARP).
//
// Every chunk of the channel's slice is cut into p shards; rank i owns shard i. The owner's
// switch_reduce has the switch read shard i from all p GPUs (each GPU's uplink carries it once),
// add them and return the sum to the owner (its downlink carries it once); the owner's
// switch_multicast sends the sum up once and the switch writes it to all p GPUs. Two chunks
// of each shard are in the switch at a time (nvls.cpp), so the reduce of chunk j+1 overlaps the
// multicast of chunk j. Per GPU and direction: n + n/p bytes, against 2n(p-1)/p for a ring, so
// once pipelined (C chunks of one channel, link rate B, α the GPU-to-switch-to-GPU latency):
//   T ≈ (n + n/p)/B·(1 + 2/C) + the round trips (about 2α per pair of chunks) that the
//   fair-shared flows of a chunk pair do not hide;  C = 1: 4α + 2n/B (reduce, then multicast).
// No GPU reduction (the switch adds); the switch's own reduction throughput is taken to be its
// link rate (docs/algorithms.md). avg: each owner scales its shard before the multicast. Needs a
// reducing switch on the route (topology: a node with "nvls": true), which the engines check.
// node_of_rank, when given, must put every rank on one node (use nvls_tree across nodes).
#include "nvls.hpp"
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {
namespace {

class Nvls final : public PhasedGenerator {
public:
  Nvls()
      : PhasedGenerator("nvls", Op::all_reduce,
                        "NVSwitch in-switch reduction (NVLink SHARP) in one node: each rank "
                        "reduces its 1/p shard through the switch and multicasts it; "
                        "≈ (n + n/p)·β·(1 + 2/C) + about C·α for C chunks; uses chunks, "
                        "channels (NCCL src/device/all_reduce.h, NVLS)") {}

  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (!call.node_of_rank.empty() && node_count(call) > 1)
      reject("nvls reduces inside one NVSwitch domain, but node_of_rank spreads the " +
             std::to_string(call.ranks) + " ranks over " + std::to_string(node_count(call)) +
             " nodes; use \"nvls_tree\" across nodes");
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return nvls_all_reduce(shape_of(call, rank, channel), call.ranks, 1);
  }
};

} // namespace

const Algorithm& all_reduce_nvls() {
  static const Nvls algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
