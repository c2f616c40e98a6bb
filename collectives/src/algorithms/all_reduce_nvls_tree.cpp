// all_reduce "nvls_tree": NCCL's NVLS-Tree across nodes (NCCL 2.30.7 src/device/all_reduce.h,
// RunWorkColl<ncclFuncAllReduce, ..., NCCL_ALGO_NVLS_TREE, ...>): NVLS inside each node, the
// shards exchanged across nodes by the GPUs that own them, each over its own NIC.
//
// Nodes come from node_of_rank (N nodes of L consecutive ranks, all the same size; empty = one
// rank per node). Per chunk: the node's switch reduces shard l (1/L of the chunk) to local rank
// l (switch_reduce); the N ranks with local index l ring-all-reduce that shard over their NICs;
// rank l multicasts the result in its node (switch_multicast). NCCL runs these parts in separate
// warp groups that hand chunks on through NCCL_STEPS slots; the program runs them as a software
// pipeline of 2N stages over blocks of up to 8 chunks (nvls.cpp), so the in-node reduce of later
// chunks runs while earlier ones cross the nodes, and each network hop's latency is paid once
// per round for a whole block rather than once per chunk.
//
// Across nodes NCCL runs a tree per shard (treeUp/treeDown); this generator runs a ring per
// shard instead: with every GPU a head on its own NIC both move the shard's bytes the same
// number of times per NIC for N = 2 (NCCL's own tuner doubles NVLS-Tree's inter-node bandwidth
// for N <= 2, src/graph/tuning.cc), the ring is bandwidth-optimal for any N (2m(N-1)/N per NIC
// for a shard of m bytes, against up to 2m through a tree's inner nodes), and it reuses the
// proven ring phases; its latency is 2(N-1) inter-node steps against the tree's 2·log2(N), so
// small messages on many nodes come out slower than NCCL's. Per GPU, with n bytes, intra rate
// B_i, NIC rate B_o, pipelined: about max((n + n/L)/B_i, 2(n/L)(N-1)/N / B_o) plus the fill.
// avg: each rank scales the part of its shard it finished in the ring. L = 1 has no switch
// steps; N = 1 is nvls.
#include "nvls.hpp"
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {
namespace {

class NvlsTree final : public PhasedGenerator {
public:
  NvlsTree()
      : PhasedGenerator(
            "nvls_tree", Op::all_reduce,
            "NVLS in each node (switch reduce-scatter to per-GPU shards), a ring "
            "per shard across nodes over each GPU's NIC, NVLS multicast back; "
            "(n + n/L)·β_intra and 2(N-1)α_inter + 2(n/L)(N-1)/N·β_inter per GPU; uses chunks, "
            "channels (NCCL src/device/all_reduce.h, NVLS_TREE)") {}

  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (uniform_node_size(call) == 0)
      reject("the nodes of node_of_rank differ in size; NVLS-Tree pairs the shard owners of "
             "every node, so each node needs the same number of ranks");
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const int L = uniform_node_size(call);
    return nvls_all_reduce(shape_of(call, rank, channel), L, call.ranks / L);
  }
};

} // namespace

const Algorithm& all_reduce_nvls_tree() {
  static const NvlsTree algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
